// CLevelDB: LevelDB's C API (Debian's libleveldb-dev) for Swift.
// Only Sources/CoinWatchStore imports this module.
#ifndef CLEVELDB_SHIM_H
#define CLEVELDB_SHIM_H
#include <leveldb/c.h>
#endif
