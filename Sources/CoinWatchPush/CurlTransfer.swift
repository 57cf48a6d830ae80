import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// One libcurl easy handle, reused for one notification after another (a handle keeps its TLS session cache and
/// its place in the connection pool between transfers).
///
/// Owned by the provider's thread, like the multi handle it is added to.
final class CurlTransfer {
    /// What every transfer of one provider shares.
    struct Settings {
        /// CURL_HTTP_VERSION_2TLS for https (HTTP/2 negotiated by ALPN), prior knowledge for plain http.
        var plainHTTP: Bool
        var caFile: String?
        var connectTimeoutMilliseconds: Int
    }

    /// The largest response body kept: APNs' error bodies are a few dozen bytes of JSON.
    static let maxBody = 4096

    let easy: UnsafeMutableRawPointer
    /// The notification on its way, and the token generation its `authorization` header carries.
    var request: APNsRequest?
    var tokenGeneration = 0
    private(set) var body: [UInt8] = []
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init(settings: Settings) throws(PushError) {
        // curl_easy_init: NULL on failure (out of memory).
        guard let easy = curl_easy_init() else {
            throw PushError(code: .libraryFailure, message: "curl_easy_init failed")
        }
        self.easy = easy
        errorBuffer = .allocate(capacity: Int(cw_curl_error_size))
        errorBuffer.initialize(repeating: 0, count: Int(cw_curl_error_size))
        // Every option below is copied or kept by libcurl as documented: strings are copied (CURLOPT_CAINFO), the
        // error buffer and WRITEDATA pointers must stay valid for the handle's life, which they do (freed in deinit).
        let context = Unmanaged.passUnretained(self).toOpaque()
        var ok = true
        ok = ok && cw_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1) == CURLE_OK
        ok = ok && cw_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer) == CURLE_OK
        ok = ok && cw_curl_easy_setopt_callback(easy, CURLOPT_WRITEFUNCTION, { data, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            if let data, transfer.body.count < CurlTransfer.maxBody {
                let kept = min(length, CurlTransfer.maxBody - transfer.body.count)
                data.withMemoryRebound(to: UInt8.self, capacity: kept) {
                    transfer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: kept))
                }
            }
            // Returning less than `length` would abort the transfer; the rest is simply not kept.
            return length
        }) == CURLE_OK
        ok = ok && cw_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context) == CURLE_OK
        let version = settings.plainHTTP ? cw_curl_http_version_2_prior_knowledge : cw_curl_http_version_2tls
        ok = ok && cw_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, version) == CURLE_OK
        // Wait for the pool's connection to confirm multiplexing rather than open another one per transfer.
        ok = ok && cw_curl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1) == CURLE_OK
        ok = ok && cw_curl_easy_setopt_long(easy, CURLOPT_POST, 1) == CURLE_OK
        ok = ok && cw_curl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1) == CURLE_OK
        ok = ok && cw_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, settings.connectTimeoutMilliseconds) == CURLE_OK
        if let caFile = settings.caFile {
            // CURLOPT_CAINFO replaces the default bundle file; Debian's libcurl keeps CURLOPT_CAPATH at
            // /etc/ssl/certs, so the system's CAs stay trusted beside these.
            ok = ok && cw_curl_easy_setopt_string(easy, CURLOPT_CAINFO, caFile) == CURLE_OK
        }
        guard ok else {
            curl_easy_cleanup(easy)
            errorBuffer.deallocate()
            throw PushError(code: .libraryFailure, message: "libcurl refused an option of the APNs transfers")
        }
    }

    deinit {
        // The handle must already be out of the multi handle (the owner removes it first).
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// Sets up `request` for sending to `url` with the token header `authorization`, to be answered within
    /// `timeoutMilliseconds` (after which libcurl abandons it, sent or not). False if libcurl refused an option.
    func prepare(_ request: APNsRequest, url: String, authorization: String, tokenGeneration: Int,
                 timeoutMilliseconds: Int) -> Bool {
        curl_slist_free_all(headerList)
        headerList = nil
        // curl_slist_append copies each string; NULL on failure, in which case the list so far is still ours.
        for line in [authorization] + request.headers {
            guard let extended = curl_slist_append(headerList, line) else { return false }
            headerList = extended
        }
        // Without an empty `Expect:` libcurl may add one; APNs (HTTP/2) has no use for it.
        if let extended = curl_slist_append(headerList, "Expect:") { headerList = extended }
        body.removeAll(keepingCapacity: true)
        errorBuffer[0] = 0
        self.request = request
        self.tokenGeneration = tokenGeneration
        var ok = cw_curl_easy_setopt_string(easy, CURLOPT_URL, url) == CURLE_OK
        ok = ok && cw_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList) == CURLE_OK
        ok = ok && cw_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeoutMilliseconds) == CURLE_OK
        // CURLOPT_POSTFIELDSIZE first, so CURLOPT_COPYPOSTFIELDS copies exactly that many bytes (no strlen).
        ok = ok && cw_curl_easy_setopt_long(easy, CURLOPT_POSTFIELDSIZE, request.payload.count) == CURLE_OK
        ok = ok && request.payload.withUnsafeBytes { bytes in
            cw_curl_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
        } == CURLE_OK
        return ok
    }

    /// The HTTP status of the finished transfer; 0 when no response arrived.
    var status: Int {
        var code = 0
        return cw_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK ? code : 0
    }

    /// Why the transfer failed, in libcurl's words: its error buffer when filled, else the result code's text.
    func failure(_ result: CurlResult) -> String {
        let detail = String(cString: errorBuffer)
        return detail.isEmpty ? result.message : detail
    }

    /// Forgets the finished notification (the handle is kept for the next one).
    func clear() {
        request = nil
        curl_slist_free_all(headerList)
        headerList = nil
    }
}
