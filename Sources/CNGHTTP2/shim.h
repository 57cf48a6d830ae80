// CNGHTTP2: libnghttp2's C API (Debian's libnghttp2-dev, 1.52) for Swift.
// Only Sources/CoinWatchHTTP/HTTP2/NGHTTP2Session*.swift import this module.
#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>
#endif
