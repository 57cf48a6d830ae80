import CoinWatchCommandLine

/// Tab completion for shell lines: command words, their options, and symbols the server knows.
///
/// Pure: given the text before the cursor and the known symbols it returns the word being completed
/// and the candidates, so the rules are tested without a terminal or a server.
enum Completer {
    /// Words the shell understands besides the commands.
    static let shellWords = ["exit", "quit", "clear"]

    struct Completion: Sendable, Hashable {
        /// Where the word being completed starts (a character offset in the line).
        var start: Int
        /// The word typed so far.
        var word: String
        /// Matching candidates, sorted.
        var candidates: [String]

        /// The text to put in place of `word`: the single candidate followed by a space, or the longest
        /// prefix all candidates share; nil when that would not add anything.
        var replacement: String? {
            guard let first = candidates.first else { return nil }
            if candidates.count == 1 { return first + " " }
            var prefix = Array(first)
            for candidate in candidates.dropFirst() {
                let other = Array(candidate)
                var length = 0
                while length < min(prefix.count, other.count) && prefix[length] == other[length] { length += 1 }
                prefix = Array(prefix[..<length])
            }
            return prefix.count > word.count ? String(prefix) : nil
        }
    }

    /// What completes the word ending at the end of `line` (the text before the cursor).
    static func complete(_ line: String, symbols: [String]) -> Completion {
        let characters = Array(line)
        var start = characters.count
        while start > 0 && characters[start - 1] != " " { start -= 1 }
        let word = String(characters[start...])
        let before = (try? ShellWords.split(String(characters[..<start]))) ?? []
        let candidates = self.candidates(before: before, word: word, symbols: symbols)
        return Completion(start: start, word: word, candidates: candidates)
    }

    /// What may be typed at a word position.
    enum Slot: Sendable, Hashable {
        /// One of these words (commands, subcommands, options).
        case words([String])
        /// A symbol the server knows.
        case symbol
        /// Something free-form (a device id, a price, an option's value).
        case free
    }

    static func candidates(before: [String], word: String, symbols: [String]) -> [String] {
        switch slot(before: before, word: word) {
        case .words(let names): Array(Set(names.filter { $0.hasPrefix(word) })).sorted()
        // Symbols match case-insensitively (people type `btc`) and complete to the server's spelling.
        case .symbol: Array(Set(symbols.filter { $0.hasPrefix(word.uppercased()) })).sorted()
        case .free: []
        }
    }

    /// What goes at the end of `line` (the text before the cursor).
    static func slot(_ line: String) -> Slot {
        let characters = Array(line)
        var start = characters.count
        while start > 0 && characters[start - 1] != " " { start -= 1 }
        let before = (try? ShellWords.split(String(characters[..<start]))) ?? []
        return slot(before: before, word: String(characters[start...]))
    }

    static func slot(before: [String], word: String) -> Slot {
        let commandWords = CommandCatalog.topLevelWords + shellWords
        guard let first = before.first else { return .words(commandWords) }
        if first == "help" {
            if before.count == 1 { return .words(CommandCatalog.topLevelWords) }
            if before.count == 2 {
                return .words(CommandCatalog.commands(startingWith: before[1]).compactMap { $0.words.dropFirst().first })
            }
            return .free
        }
        let members = CommandCatalog.commands(startingWith: first)
        guard !members.isEmpty else { return .free }
        var command = members[0]
        var positionals = Array(before.dropFirst())
        if members.count > 1 || command.words.count > 1 {
            guard let sub = positionals.first(where: { !$0.hasPrefix("-") }) else {
                return word.hasPrefix("-") ? .words(optionNames(GlobalOptions.specs)) : .words(members.map { $0.words[1] })
            }
            guard let member = members.first(where: { $0.words[1] == sub }) else { return .free }
            command = member
            positionals.remove(at: positionals.firstIndex(of: sub)!)
        }
        let options = GlobalOptions.specs + command.options
        if word.hasPrefix("-") { return .words(optionNames(options)) }
        // After an option that takes a value, the word is that value.
        if let last = positionals.last, takesValue(last, options) { return .free }
        let index = positionalIndex(positionals, options)
        switch operand(at: index, of: command) {
        case .symbol, .symbols: return .symbol
        case .symbolPricePairs: return index % 2 == 0 ? .symbol : .free
        case .command: return .words(CommandCatalog.topLevelWords)
        case .device, nil: return .free
        }
    }

    /// How many positionals precede the word, skipping options and the values they take.
    static func positionalIndex(_ words: [String], _ options: [OptionSpec]) -> Int {
        var count = 0
        var skipNext = false
        for word in words {
            if skipNext {
                skipNext = false
            } else if word.hasPrefix("-") && Double(word) == nil {
                skipNext = takesValue(word, options)
            } else {
                count += 1
            }
        }
        return count
    }

    static func takesValue(_ word: String, _ options: [OptionSpec]) -> Bool {
        guard word.hasPrefix("--"), !word.contains("=") else { return false }
        let name = word.dropFirst(2)
        guard let spec = options.first(where: { $0.name == name }), case .value = spec.kind else { return false }
        return true
    }

    static func operand(at index: Int, of command: CommandSpec) -> CommandSpec.Operand? {
        if index < command.operands.count { return command.operands[index] }
        guard let last = command.operands.last else { return nil }
        switch last {
        case .symbols, .symbolPricePairs, .command: return last
        case .device, .symbol: return nil
        }
    }

    static func optionNames(_ options: [OptionSpec]) -> [String] {
        options.map { "--\($0.name)" }
    }
}
