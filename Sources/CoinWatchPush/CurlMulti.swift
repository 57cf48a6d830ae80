import CCurl

/// One libcurl multi handle: the connection pool and every transfer on it, driven by one thread.
///
/// libcurl's contract: a multi handle and its easy handles may be used by one thread at a time, except
/// `curl_multi_wakeup`, which any thread may call. The provider's thread owns this object; other threads only
/// wake it.
final class CurlMulti {
    /// `curl_global_init` must run once before any other libcurl call and is not safe to race with them; Swift
    /// initialises a global `let` exactly once, on first use, under a lock.
    static let globalInit: Bool = curl_global_init(cw_curl_global_default) == CURLE_OK

    let handle: UnsafeMutableRawPointer
    private var closed = false

    /// - Parameters:
    ///   - connections: the pool: at most this many connections to the host, and kept open between transfers.
    ///   - streams: streams per connection at most; libcurl also keeps under the server's
    ///     SETTINGS_MAX_CONCURRENT_STREAMS, and opens a further connection only when every one is full.
    init(connections: Int, streams: Int) throws(PushError) {
        guard Self.globalInit else {
            throw PushError(code: .libraryFailure, message: "libcurl failed to initialise")
        }
        guard cw_curl_has_http2() != 0 else {
            throw PushError(code: .libraryFailure, message: "this libcurl was built without HTTP/2 (nghttp2)")
        }
        // curl_multi_init: NULL on failure (out of memory).
        guard let multi = curl_multi_init() else {
            throw PushError(code: .libraryFailure, message: "curl_multi_init failed")
        }
        handle = multi
        let options: [(CURLMoption, Int, String)] = [
            // Many transfers share one HTTP/2 connection instead of each opening its own.
            (CURLMOPT_PIPELINING, cw_curlpipe_multiplex, "HTTP/2 multiplexing"),
            (CURLMOPT_MAX_HOST_CONNECTIONS, connections, "the connection pool size"),
            (CURLMOPT_MAX_TOTAL_CONNECTIONS, connections, "the connection limit"),
            (CURLMOPT_MAXCONNECTS, connections, "the connection cache size"),
            (CURLMOPT_MAX_CONCURRENT_STREAMS, streams, "the stream limit"),
        ]
        for (option, value, what) in options where cw_curl_multi_setopt_long(multi, option, value) != CURLM_OK {
            curl_multi_cleanup(multi)
            throw PushError(code: .libraryFailure, message: "libcurl refused \(what)")
        }
    }

    deinit {
        close()
    }

    /// Closes every connection and frees the handle; nothing may use it afterwards, `wakeup` included.
    /// curl_multi_cleanup: every easy handle must have been removed first (the owner does that); they may be
    /// cleaned up after it.
    func close() {
        guard !closed else { return }
        closed = true
        curl_multi_cleanup(handle)
    }

    /// Starts `transfer` (libcurl queues it until a connection and a stream are free).
    func add(_ transfer: CurlTransfer) -> Bool {
        curl_multi_add_handle(handle, transfer.easy) == CURLM_OK
    }

    /// Takes `transfer` out of the multi handle, finished or not; a transfer in progress is abandoned.
    func remove(_ transfer: CurlTransfer) {
        curl_multi_remove_handle(handle, transfer.easy)
    }

    /// Does whatever work is ready (connects, TLS, reading, writing), without blocking.
    func perform() {
        var running: Int32 = 0
        curl_multi_perform(handle, &running)
    }

    /// The next finished transfer's easy handle and result; nil when none is waiting.
    func nextFinished() -> (easy: UnsafeMutableRawPointer, result: CurlResult)? {
        var remaining: Int32 = 0
        // curl_multi_info_read: a pointer into libcurl's own storage, valid until the next call on this handle;
        // copied out at once.
        while let message = curl_multi_info_read(handle, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = cw_curl_msg_result(message)
            return (easy, CurlResult(succeeded: code == CURLE_OK, message: Self.describe(code)))
        }
        return nil
    }

    /// Sleeps until a socket is ready, libcurl's next timer, `timeoutMilliseconds`, or `wakeup()`.
    func poll(timeoutMilliseconds: Int32) {
        var ready: Int32 = 0
        curl_multi_poll(handle, nil, 0, timeoutMilliseconds, &ready)
    }

    /// Ends a `poll` early. The one call here that any thread may make.
    func wakeup() {
        curl_multi_wakeup(handle)
    }

    /// libcurl's text for a transfer's result code.
    static func describe(_ result: CURLcode) -> String {
        String(cString: curl_easy_strerror(result))
    }
}

/// How a transfer ended, without libcurl's types.
struct CurlResult {
    /// A response arrived (of any status).
    var succeeded: Bool
    /// libcurl's text for the result code.
    var message: String
}
