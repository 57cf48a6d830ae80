extension JSONReader {
    /// The rules a reader reads by: how strict it is, and how deep values may nest.
    ///
    /// There is one tokenizer for every JSON reader of the project; its callers differ only in these rules.
    /// Requests decoded with the proto3 JSON mapping are read `.strict` (RFC 8259 to the letter, since the text is
    /// stored and answered back); exchange messages are read `.lenient` (see `Strictness`).
    public struct Options: Sendable, Hashable {
        public var strictness: Strictness

        /// A value standing inside more than this many arrays and objects is refused (code `tooDeep`),
        /// whether it is read or skipped. An empty array or object holds no value, so it may stand one level
        /// deeper.
        public var maxDepth: Int

        @inlinable
        init(strictness: Strictness, maxDepth: Int) { (self.strictness, self.maxDepth) = (strictness, maxDepth) }

        @inlinable
        public static func strict(maxDepth: Int) -> Options { Options(strictness: .strict, maxDepth: maxDepth) }

        @inlinable
        public static func lenient(maxDepth: Int) -> Options { Options(strictness: .lenient, maxDepth: maxDepth) }
    }

    /// What the reader refuses beyond the grammar every mode shares (structure, literals, escapes, control
    /// characters in strings).
    public enum Strictness: Sendable, Hashable {
        /// RFC 8259: strings must be valid UTF-8 (checked with `UTF8Check`, as the binary decoder checks them), a
        /// `\u` escape of a lone surrogate is refused (it names no character), and a number may not start with
        /// `0` followed by digits.
        case strict
        /// For bytes whose UTF-8 the caller has checked already (the WebSocket client, the replay's line reader)
        /// and producers that are not ours: UTF-8 is not checked again, a lone-surrogate escape reads as U+FFFD,
        /// and leading zeros are taken (numbers are read by value).
        case lenient
    }
}
