import CoinWatchStore
import CoinWatchTestSupport
import Foundation
import Testing

@Suite("Repair")
struct DatabaseRepairTests {
    enum Damage: String, CaseIterable, Sendable {
        /// CURRENT names a MANIFEST that no longer exists.
        case deleteManifest
        /// CURRENT holds garbage instead of a MANIFEST name.
        case garbleCurrent
    }

    /// Writes keys that end up in a table file (compacted) and keys that stay in the log, then closes.
    private func writeStore(at path: String) throws {
        let database = try Database(path: path)
        defer { database.close() }
        for index in 0..<100 {
            try database.put(bytes("table/\(index)"), bytes("t\(index)"))
        }
        try database.compactRange()
        for index in 0..<100 {
            try database.put(bytes("log/\(index)"), bytes("l\(index)"))
        }
    }

    private func damage(_ damage: Damage, at path: String) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: path)
        try #require(files.contains { $0.hasSuffix(".ldb") }, "expected a table file in \(files)")
        try #require(files.contains { $0.hasSuffix(".log") }, "expected a log file in \(files)")
        switch damage {
        case .deleteManifest:
            let manifests = files.filter { $0.hasPrefix("MANIFEST-") }
            try #require(!manifests.isEmpty)
            for manifest in manifests {
                try FileManager.default.removeItem(atPath: "\(path)/\(manifest)")
            }
        case .garbleCurrent:
            try Data("not a manifest name".utf8).write(to: URL(fileURLWithPath: "\(path)/CURRENT"))
        }
    }

    @Test("A store with damaged metadata fails to open with .corruption and is recovered by repair",
          arguments: Damage.allCases)
    func repairRecoversData(damage kind: Damage) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            try writeStore(at: path)
            try damage(kind, at: path)

            let error = #expect(throws: StoreError.self) { try Database(path: path) }
            #expect(error?.code == .corruption)
            #expect(error?.message.contains(path) == true)

            try Database.repair(path: path)

            let database = try Database(path: path)
            defer { database.close() }
            for index in 0..<100 {
                #expect(try database.get(bytes("table/\(index)")) == bytes("t\(index)"))
                #expect(try database.get(bytes("log/\(index)")) == bytes("l\(index)"))
            }
            #expect(try database.scan().count == 200)
            // The repaired store accepts writes.
            try database.put(bytes("after"), bytes("repair"))
            #expect(try database.get(bytes("after")) == bytes("repair"))
        }
    }

    @Test("Repairing a directory that does not exist fails with .notFound")
    func repairMissingDirectory() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("absent").path
            let error = #expect(throws: StoreError.self) { try Database.repair(path: path) }
            #expect(error?.code == .notFound)
            #expect(error?.message.contains(path) == true)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("Repairing a healthy store keeps its data")
    func repairHealthyStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            try writeStore(at: path)
            try Database.repair(path: path)
            let database = try Database(path: path)
            defer { database.close() }
            #expect(try database.scan().count == 200)
        }
    }
}
