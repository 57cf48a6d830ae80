import CoinWatchCLI
import CoinWatchCommandLine

#if canImport(Glibc)
import Glibc
#endif

// Everything lives in CoinWatchCLI so it can be tested; this is only the process's entry and exit.
exit(CoinWatchCLI.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current))
