import CoinWatchCommandLine
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("ProcessEnvironment")
struct ProcessEnvironmentTests {
    @Test("reads the process's variables, values with '=' included")
    func reads() {
        let name = "COINWATCH_ENVIRONMENT_TEST_\(UInt32.random(in: 0...UInt32.max))"
        #expect(ProcessEnvironment.current[name] == nil)
        setenv(name, "a=b c", 1)
        defer { unsetenv(name) }
        #expect(ProcessEnvironment.current[name] == "a=b c")
    }
}
