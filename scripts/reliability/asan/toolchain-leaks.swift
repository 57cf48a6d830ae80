// Two leaks inside the toolchain's Foundation, reached by correct code in the test suite (Protoc.swift runs protoc
// with Process and reads its output with Data(contentsOf:)): Data(contentsOf:) of an empty file leaks a 4 KiB
// buffer in FoundationEssentials.readBytesFromFile, and Process.run leaks a weak-reference side table.
// scripts/sanitize expects LeakSanitizer to report them without scripts/sanitize-address.supp and not with it.
import Foundation

let url = FileManager.default.temporaryDirectory.appendingPathComponent("toolchain-leaks-\(getpid())")
_ = FileManager.default.createFile(atPath: url.path, contents: nil)
defer { try? FileManager.default.removeItem(at: url) }
_ = try Data(contentsOf: url)
let process = Process()
process.executableURL = URL(fileURLWithPath: "/bin/true")
try process.run()
process.waitUntilExit()
print("ran /bin/true")
