#if canImport(Glibc)
import Glibc
#endif

/// The process environment as a dictionary, read from `environ` (no Foundation needed): what both executables
/// hand to `ParsedArguments.parse` for the options' `COINWATCH_…` fallbacks, and the CLI to its commands.
public enum ProcessEnvironment {
    public static var current: [String: String] {
        var result = [String: String]()
        // environ: the C library's NULL-terminated array of "NAME=value" strings; owned by libc, only read here.
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
