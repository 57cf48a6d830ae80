import CoinWatchStore
import CoinWatchTestSupport
import Foundation
import Testing

@Suite("Directory lock")
struct DatabaseLockTests {
    @Test("A second open in the same process fails with .alreadyInUse naming the directory")
    func secondOpenInProcess() throws {
        try withDatabase { database, path in
            try database.put(bytes("k"), bytes("v"))
            let error = #expect(throws: StoreError.self) { try Database(path: path) }
            #expect(error?.code == .alreadyInUse)
            #expect(error?.message.contains("already in use") == true)
            #expect(error?.message.contains("database directory \(path) ") == true)
            #expect(error?.message.contains("already held by process") == true)
            // The failed open did not disturb the open handle.
            #expect(try database.get(bytes("k")) == bytes("v"))

            let repairError = #expect(throws: StoreError.self) { try Database.repair(path: path) }
            #expect(repairError?.code == .alreadyInUse)
        }
    }

    @Test("Closing releases the lock so the directory can be opened again")
    func closeReleasesLock() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            for round in 0..<3 {
                let database = try Database(path: path)
                try database.put(bytes("round"), bytes("\(round)"))
                database.close()
            }
            let database = try Database(path: path)
            defer { database.close() }
            #expect(try database.get(bytes("round")) == bytes("2"))
        }
    }

    /// Opens the database with LevelDB itself (through ctypes) in a child process, reports "ready", and keeps it
    /// open until its standard input is closed. `alarm` bounds its life if the test goes wrong.
    static let holderScript = """
        import ctypes, signal, sys
        signal.alarm(60)
        lib = ctypes.CDLL("libleveldb.so.1d")
        lib.leveldb_options_create.restype = ctypes.c_void_p
        lib.leveldb_options_set_create_if_missing.argtypes = [ctypes.c_void_p, ctypes.c_ubyte]
        lib.leveldb_open.restype = ctypes.c_void_p
        lib.leveldb_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
        lib.leveldb_close.argtypes = [ctypes.c_void_p]
        options = lib.leveldb_options_create()
        lib.leveldb_options_set_create_if_missing(options, 1)
        error = ctypes.c_char_p()
        db = lib.leveldb_open(options, sys.argv[1].encode(), ctypes.byref(error))
        if error.value:
            print("error " + error.value.decode(), flush=True)
            sys.exit(1)
        print("ready", flush=True)
        sys.stdin.read()
        lib.leveldb_close(db)
        """

    static var canSpawnHolder: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    }

    @Test(
        "An open while another process holds the database fails with .alreadyInUse naming the directory",
        .enabled(if: canSpawnHolder, "needs /usr/bin/python3 to hold the database open with LevelDB")
    )
    func secondOpenAcrossProcesses() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            let holder = try ChildProcess("/usr/bin/python3", ["-c", Self.holderScript, path])
            defer { holder.closeInput() }

            let announcement = firstLine(of: holder)
            try #require(announcement == "ready", "holder process said \(announcement.debugDescription)")

            let error = #expect(throws: StoreError.self) { try Database(path: path) }
            #expect(error?.code == .alreadyInUse)
            #expect(error?.message.contains("already in use") == true)
            #expect(error?.message.contains("database directory \(path) ") == true)
            let repairError = #expect(throws: StoreError.self) { try Database.repair(path: path) }
            #expect(repairError?.code == .alreadyInUse)

            holder.closeInput()
            #expect(holder.wait(timeout: .seconds(30)) == 0, "holder: \(holder.stderr)")

            // Once the other process is gone the directory opens normally.
            let database = try Database(path: path)
            database.close()
        }
    }

    /// The first line the holder prints, waiting (bounded) until it has printed one.
    private func firstLine(of holder: ChildProcess) -> String {
        let deadline = ContinuousClock.now + .seconds(30)
        while !holder.stdout.contains("\n") && holder.exitStatus == nil && ContinuousClock.now < deadline {
            usleep(5_000)
        }
        return String(holder.stdout.prefix { $0 != "\n" })
    }
}
