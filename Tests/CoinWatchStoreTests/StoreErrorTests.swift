@testable import CoinWatchStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("StoreError")
struct StoreErrorTests {
    @Test(
        "LevelDB's status text is classified by its prefix",
        arguments: [
            ("IO error: lock /d/LOCK: already held by process", StoreError.Code.alreadyInUse),
            ("IO error: lock /d/LOCK: Resource temporarily unavailable", .alreadyInUse),
            ("IO error: lock /d/LOCK: Permission denied", .alreadyInUse),
            ("IO error: /d/LOCK: Permission denied", .ioError),
            ("IO error: /d/000005.log: No space left on device", .ioError),
            ("Corruption: CURRENT file does not end with newline", .corruption),
            ("Corruption: checksum mismatch", .corruption),
            ("NotFound: /d/000007.ldb: No such file or directory", .notFound),
            ("Invalid argument: /d: does not exist (create_if_missing is false)", .notFound),
            ("Invalid argument: /d: exists (error_if_exists is true)", .invalidArgument),
            ("Not implemented: reuse", .notSupported),
            ("Something new", .unknown),
            ("", .unknown),
        ] as [(String, StoreError.Code)]
    )
    func classification(text: String, code: StoreError.Code) {
        let error = StoreError(levelDBStatus: text, operation: "open", path: "/d")
        #expect(error.code == code)
        #expect(error.message.hasSuffix(text) || error.message.hasSuffix("(LevelDB: \(text))"))
        #expect(error.message.contains("/d"))
    }

    @Test(
        "A full disk or quota is flagged, whatever the operation; other failures are not",
        arguments: [
            ("IO error: /d/000005.log: No space left on device", true),
            ("IO error: /d/MANIFEST-000004: Disk quota exceeded", true),
            ("IO error: /d/LOCK: Permission denied", false),
            ("Invalid argument: /d: exists (error_if_exists is true)", false),
        ] as [(String, Bool)]
    )
    func diskFull(text: String, isDiskFull: Bool) {
        #expect(StoreError(levelDBStatus: text, operation: "write", path: "/d").isDiskFull == isDiskFull)
    }

    @Test("The journal flags ENOSPC and EDQUOT as a full disk")
    func journalDiskFull() {
        #expect(WriteAheadJournal.ioError("fdatasync", "/d/j", errno: ENOSPC).isDiskFull)
        #expect(WriteAheadJournal.ioError("write", "/d/j", errno: EDQUOT).isDiskFull)
        #expect(!WriteAheadJournal.ioError("open", "/d/j", errno: EACCES).isDiskFull)
    }

    @Test("A lock conflict's message names the directory and says it is in use")
    func lockMessage() {
        let error = StoreError(
            levelDBStatus: "IO error: lock /var/lib/coinwatch/LOCK: already held by process",
            operation: "open",
            path: "/var/lib/coinwatch"
        )
        #expect(error.message.hasPrefix("database directory /var/lib/coinwatch is already in use"))
        #expect(error.description.hasPrefix("alreadyInUse: "))
    }

    @Test("Codes compare by identity and print their name")
    func codes() {
        #expect(StoreError.Code.closed == .closed)
        #expect(StoreError.Code.closed != .corruption)
        #expect("\(StoreError.Code.corruption)" == "corruption")
        let error = StoreError(code: .closed, message: "database at /x is closed")
        #expect(error.description == "closed: database at /x is closed")
        #expect(error == StoreError(code: .closed, message: "database at /x is closed"))
    }
}
