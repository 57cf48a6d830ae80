import CoinWatchAuth
import CoinWatchCommandLine
import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import Foundation

/// `coinwatchd keys …` and `coinwatchd devices reset`: managing credentials in a data directory while no server
/// runs on it (a running server holds the directory's lock; the `Admin` RPCs do the same while it runs).
///
/// A token or secret is printed once, alone on standard output so a script can capture it; everything else goes to
/// standard error.
enum CredentialCommands {
    static let options: [OptionSpec] = [
        OptionSpec("data", .value(placeholder: "DIR"), environment: "COINWATCH_DATA", default: "./coinwatch-data",
                   help: "LevelDB data directory."),
        OptionSpec("scope", .value(placeholder: "SCOPE[,SCOPE…]"),
                   help: "keys create: a scope for the key (repeat or list with commas): "
                       + Scope.allCases.map(\.rawValue).joined(separator: ", ") + "."),
        OptionSpec("name", .value(placeholder: "NAME"), help: "keys create: a label for listings."),
        OptionSpec("all", .flag, help: "keys list: include revoked keys."),
        OptionSpec("issue-secret", .flag, help: "devices reset: issue a new secret now (printed) instead of leaving the "
                       + "device to be claimed again by its next RegisterDevice or first SaveSettings."),
        OptionSpec("help", short: "h", .flag, help: "Show this help."),
    ]

    static let usage = """
        coinwatchd keys create --scope SCOPE [--scope SCOPE…] [--name NAME] --data DIR
               coinwatchd keys list [--all] --data DIR
               coinwatchd keys revoke ID --data DIR
               coinwatchd devices reset DEVICE [--issue-secret] --data DIR
        """

    static let help = HelpText.render(
        usage: usage,
        summary: """
            Manage service keys and device secrets in a data directory while coinwatchd is stopped (while it runs,
            use the coinwatch.v1.Admin RPCs with a key holding the admin scope). A key's token is printed once; the
            store keeps only its SHA-256 hash. See docs/SECURITY.md.
            """,
        options: options, sections: [])

    /// Runs the command in `arguments` (its first positional is `keys` or `devices`); a usage error is answered
    /// with these commands' usage and exit status 64.
    static func run(_ arguments: [String], environment: [String: String]) -> Int32 {
        do {
            return try execute(arguments, environment: environment)
        } catch {
            CommandRunner.printError("error: \(error.message)")
            CommandRunner.printError("USAGE: \(usage)\nRun 'coinwatchd keys --help' for the options.")
            return UsageError.exitCode
        }
    }

    static func execute(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments.parse(arguments, options: options, environment: environment)
        if parsed.has("help") {
            print(help, terminator: "")
            return 0
        }
        let words = parsed.positionals
        let directory = parsed["data"]!
        switch (words.first, words.dropFirst().first) {
        case ("keys", "create"):
            guard words.count == 2 else { throw UsageError("keys create takes no arguments; give --scope and --name") }
            let scopes: ScopeSet
            do {
                scopes = try ScopeSet(names: parsed.all("scope"))
            } catch {
                throw UsageError("--scope: \(error.message)")
            }
            let name = parsed["name"] ?? ""
            return withStore(directory, create: true) { store throws(AuthError) in
                let (key, token) = try store.createKey(name: name, scopes: scopes)
                print(token)
                CommandRunner.printError(
                    "created key \(key.id)\(name.isEmpty ? "" : " (\(name))") with \(scopes); the token above is shown "
                        + "only now: the store keeps its hash, not the token")
            }
        case ("keys", "list"):
            guard words.count == 2 else { throw UsageError("keys list takes no arguments") }
            return withStore(directory, create: false) { store throws(AuthError) in
                let keys = store.listKeys(includeRevoked: parsed.has("all"))
                print(table(keys))
            }
        case ("keys", "revoke"):
            guard words.count == 3 else { throw UsageError("keys revoke takes one key id") }
            return withStore(directory, create: false) { store throws(AuthError) in
                let key = try store.revokeKey(words[2])
                CommandRunner.printError("revoked key \(key.id)")
            }
        case ("devices", "reset"):
            guard words.count == 3 else { throw UsageError("devices reset takes one device id") }
            let device: DeviceID
            do {
                device = try DeviceID(validating: words[2], field: "device")
            } catch {
                throw UsageError(error.description)
            }
            let issue = parsed.has("issue-secret")
            return withStore(directory, create: false) { store throws(AuthError) in
                let (hadSecret, token) = try store.resetDevice(device, issueSecret: issue)
                if let token { print(token) }
                let before = hadSecret ? "its secret was forgotten" : "it had no secret"
                let after = token != nil ? "; the new secret above is shown only now"
                    : "; its next RegisterDevice or first SaveSettings claims it again"
                CommandRunner.printError("device \(device): \(before)\(after)")
            }
        default:
            throw UsageError("unknown command '\(words.prefix(2).joined(separator: " "))'; see 'coinwatchd keys --help'")
        }
    }

    /// Opens the store in `directory`, runs `body` over its credentials, closes it; 1 with a message on failure.
    static func withStore(_ directory: String, create: Bool, _ body: (CredentialStore) throws(AuthError) -> Void) -> Int32 {
        let store: OpenedStore
        // LevelDB keeps the name of its current manifest in CURRENT: without it there is no store to open.
        if !create && !FileManager.default.fileExists(atPath: directory + "/CURRENT") {
            CommandRunner.printError("coinwatchd: there is no store in \(directory)")
            return 1
        }
        do {
            if create {
                store = try Daemon.openStore(directory)
            } else {
                var options = Database.Options()
                options.createIfMissing = false
                options.paranoidChecks = true
                store = try OpenedStore(Database(path: directory, options: options))
            }
        } catch {
            let reason: String
            switch error.code {
            case .alreadyInUse:
                reason = "coinwatchd is running on \(directory) (it holds the directory's lock); stop it, or use the "
                    + "coinwatch.v1.Admin RPCs while it runs"
            default:
                reason = Daemon.explain(error, dataDirectory: directory)
            }
            CommandRunner.printError("coinwatchd: \(reason)")
            return 1
        }
        defer { store.close() }
        do {
            try body(try CredentialStore(database: store.database, journal: store.journal))
            return 0
        } catch {
            CommandRunner.printError("coinwatchd: \(error.message)")
            return 1
        }
    }

    /// The keys as a text table: id, name, scopes, created, revoked.
    static func table(_ keys: [V1.ServiceKey]) -> String {
        var rows = [["ID", "NAME", "SCOPES", "CREATED", "REVOKED"]]
        for key in keys {
            rows.append([key.id, key.name.isEmpty ? "-" : key.name, key.scopes.joined(separator: ","),
                         timestamp(key.createdAtMs), key.revoked ? timestamp(key.revokedAtMs) : "-"])
        }
        var widths = [Int](repeating: 0, count: 5)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    static func timestamp(_ ms: Int64) -> String {
        WallClock.iso8601(milliseconds: ms)
    }
}
