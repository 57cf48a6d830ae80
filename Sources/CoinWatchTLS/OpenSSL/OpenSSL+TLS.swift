import COpenSSL
import Synchronization

/// Every libssl call of the TLS engine, so `TLSContext` and `TLSSession` deal in Swift values and opaque handles.
/// As in `OpenSSLCrypto`, each call starts with an empty error queue and leaves one behind.
enum OpenSSLTLS {
    // MARK: Contexts

    /// A configured `SSL_CTX` and the memory its callbacks read, both owned by a `TLSContext`.
    struct ContextHandles {
        var context: OpaquePointer
        /// The server's ALPN preference list (a 4-byte length, then the wire form), read by `selectProtocol`
        /// during every handshake; nil without ALPN.
        var protocols: UnsafeMutableRawPointer?
    }

    /// A new `SSL_CTX` configured as `configuration` says.
    ///
    /// Contract of the calls: `SSL_CTX_new(TLS_server_method() / TLS_client_method())` returns NULL on failure;
    /// the `set_*_proto_version`, `use_certificate_chain_file`, `use_PrivateKey_file`, `check_private_key`,
    /// `load_verify_file`, `set_default_verify_paths` and `set_session_id_context` calls return 1 on success;
    /// `SSL_CTX_set_alpn_protos` returns **0** on success.
    static func makeContext(_ configuration: TLSConfiguration) throws(TLSError) -> ContextHandles {
        clearErrors()
        let server = configuration.role == .server
        guard let context = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
            throw failure(.cryptoFailed, "cannot make a TLS context")
        }
        var handles = ContextHandles(context: context, protocols: nil)
        do {
            try configure(&handles, configuration)
        } catch {
            freeContext(handles)
            throw error
        }
        return handles
    }

    private static func configure(_ handles: inout ContextHandles, _ configuration: TLSConfiguration) throws(TLSError) {
        let context = handles.context
        let server = configuration.role == .server
        // A passphrase callback that refuses: without one OpenSSL prompts on the terminal for an encrypted key.
        SSL_CTX_set_default_passwd_cb(context) { _, _, _, _ in -1 }
        let minimum = configuration.minimumVersion == .tls13 ? TLS1_3_VERSION : TLS1_2_VERSION
        guard cw_SSL_CTX_set_min_proto_version(context, minimum) == 1,
            cw_SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION) == 1
        else { throw failure(.cryptoFailed, "cannot limit the protocol versions to TLS 1.2 and 1.3") }
        // Renegotiation (TLS 1.2) lets a peer make the server redo expensive handshakes on one connection.
        var options = cw_SSL_OP_NO_RENEGOTIATION()
        if server { options |= cw_SSL_OP_CIPHER_SERVER_PREFERENCE() }
        if !configuration.sessionResumption { options |= cw_SSL_OP_NO_TICKET() }
        SSL_CTX_set_options(context, options)
        // Idle sessions give their 16 KiB read and write buffers back (many idle connections are the norm).
        _ = cw_SSL_CTX_set_mode(context, Int(SSL_MODE_RELEASE_BUFFERS))

        if let chain = configuration.certificateChainFile {
            guard SSL_CTX_use_certificate_chain_file(context, chain) == 1 else {
                throw fileFailure(.invalidCertificate, "cannot use the certificate chain in \(chain)")
            }
            guard let key = configuration.privateKeyFile else {
                throw TLSError(code: .invalidArgument, message: "a certificate chain needs its private key file")
            }
            guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
                // X509_check_private_key runs inside it and queues X509_R_KEY_VALUES_MISMATCH.
                if ERR_GET_REASON(ERR_peek_error()) == X509_R_KEY_VALUES_MISMATCH {
                    throw failure(.invalidKey, "the private key in \(key) does not match the certificate in \(chain)")
                }
                throw fileFailure(.invalidKey, "cannot use the private key in \(key) (PEM, unencrypted)")
            }
            guard SSL_CTX_check_private_key(context) == 1 else {
                throw failure(.invalidKey, "the private key in \(key) does not match the certificate in \(chain)")
            }
        } else if server {
            throw TLSError(code: .invalidArgument, message: "a TLS server needs a certificate chain and its key")
        }

        if server {
            try configureServer(&handles, configuration)
        } else {
            try configureClient(context, configuration)
        }
    }

    private static func configureServer(_ handles: inout ContextHandles, _ configuration: TLSConfiguration)
        throws(TLSError)
    {
        let context = handles.context
        // Sessions resume only in the context that made them; the id names that context.
        let id = Array("coinwatch".utf8)
        guard SSL_CTX_set_session_id_context(context, id, UInt32(id.count)) == 1 else {
            throw failure(.cryptoFailed, "cannot set the session id context")
        }
        if configuration.sessionResumption {
            _ = cw_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_SERVER))
            _ = cw_SSL_CTX_sess_set_cache_size(context, configuration.sessionCacheSize)
            // One TLS 1.3 ticket per handshake (OpenSSL's default is two): a client reuses the latest anyway.
            SSL_CTX_set_num_tickets(context, 1)
        } else {
            _ = cw_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
            SSL_CTX_set_num_tickets(context, 0)
        }
        if configuration.clientCertificates != .none {
            guard let caFile = configuration.caFile else {
                throw TLSError(code: .invalidArgument, message: "asking for client certificates needs a CA file")
            }
            try loadVerifyFile(context, caFile)
            // SSL_load_client_CA_file: the subject names of the file's certificates (NULL on failure), which the
            // server sends so a client can pick a certificate; SSL_CTX_set_client_CA_list takes ownership.
            guard let names = SSL_load_client_CA_file(caFile) else {
                throw failure(.invalidCertificate, "no CA certificate in \(caFile)")
            }
            SSL_CTX_set_client_CA_list(context, names)
            let required = configuration.clientCertificates == .required ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | required, nil)
        }
        if !configuration.applicationProtocols.isEmpty {
            let wire = try configuration.applicationProtocolsWire()
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4 + wire.count, alignment: 4)
            buffer.storeBytes(of: UInt32(wire.count), as: UInt32.self)
            wire.withUnsafeBytes { (buffer + 4).copyMemory(from: $0.baseAddress!, byteCount: wire.count) }
            handles.protocols = buffer
            SSL_CTX_set_alpn_select_cb(context, selectProtocol, buffer)
        }
    }

    /// The server's ALPN choice: the first name of its own preference list that the client offered.
    ///
    /// Contract (`SSL_CTX_set_alpn_select_cb`): `in` holds the client's list in wire form; set `*out`/`*outlen`
    /// to a name in memory that outlives the handshake (the server's list, which the context keeps) and return
    /// `SSL_TLSEXT_ERR_OK`, or return `SSL_TLSEXT_ERR_NOACK` to go on without ALPN. `SSL_select_next_proto`
    /// returns `OPENSSL_NPN_NEGOTIATED` when the lists share a name, pointing `out` into the server's list.
    ///
    /// No common name is not fatal: the connection goes on without ALPN and its first bytes decide the protocol,
    /// as on a plaintext connection.
    private static let selectProtocol:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt8>?,
            UnsafePointer<UInt8>?, UInt32, UnsafeMutableRawPointer?
        ) -> Int32 = { _, out, outLength, offered, offeredLength, argument in
            guard let out, let outLength, let offered, offeredLength > 0, let argument else {
                return SSL_TLSEXT_ERR_NOACK
            }
            let count = argument.load(as: UInt32.self)
            let preferred = (argument + 4).assumingMemoryBound(to: UInt8.self)
            var selected: UnsafeMutablePointer<UInt8>?
            var selectedLength: UInt8 = 0
            let result = SSL_select_next_proto(
                &selected, &selectedLength, preferred, count, offered, offeredLength)
            guard result == OPENSSL_NPN_NEGOTIATED, let selected else { return SSL_TLSEXT_ERR_NOACK }
            out.pointee = UnsafePointer(selected)
            outLength.pointee = selectedLength
            return SSL_TLSEXT_ERR_OK
        }

    private static func configureClient(_ context: OpaquePointer, _ configuration: TLSConfiguration) throws(TLSError) {
        if configuration.verifiesPeer {
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            if configuration.usesSystemTrustStore {
                guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                    throw failure(.invalidCertificate, "cannot use the system's CA certificates")
                }
            }
            if let caFile = configuration.caFile { try loadVerifyFile(context, caFile) }
        } else {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        }
        if !configuration.applicationProtocols.isEmpty {
            let wire = try configuration.applicationProtocolsWire()
            guard SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count)) == 0 else {
                throw failure(.cryptoFailed, "cannot set the ALPN offer")
            }
        }
        if configuration.sessionResumption {
            // The client keeps sessions itself, by server (`ClientSessionCache`), from the new-session callback:
            // in TLS 1.3 a session exists only once the server's ticket arrives after the handshake.
            _ = cw_SSL_CTX_set_session_cache_mode(
                context, Int(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
            SSL_CTX_sess_set_new_cb(context, newClientSession)
        } else {
            _ = cw_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
        }
    }

    /// `SSL_CTX_load_verify_file(ctx, file)`: adds the file's CA certificates to the trust store; 1 on success.
    private static func loadVerifyFile(_ context: OpaquePointer, _ file: String) throws(TLSError) {
        guard SSL_CTX_load_verify_file(context, file) == 1 else {
            throw fileFailure(.invalidCertificate, "cannot read CA certificates from \(file)")
        }
    }

    /// A client session OpenSSL made resumable (TLS 1.2: at the end of the handshake; TLS 1.3: when a ticket
    /// arrives): kept under the `TLSSession`'s resumption key. Returning 1 tells OpenSSL the callback keeps the
    /// reference it was given.
    private static let newClientSession: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
        guard let ssl, let session, let owner = SSL_get_ex_data(ssl, 0) else { return 0 }
        let tlsSession = Unmanaged<TLSSession>.fromOpaque(owner).takeUnretainedValue()
        guard let key = tlsSession.resumptionKey, let cache = tlsSession.context.clientSessions,
            SSL_SESSION_is_resumable(session) == 1
        else { return 0 }
        cache.store(session, for: key)
        return 1
    }

    /// `SSL_CTX_free` (the context stays alive while sessions made from it hold references) and the ALPN list.
    static func freeContext(_ handles: ContextHandles) {
        SSL_CTX_free(handles.context)
        handles.protocols?.deallocate()
    }

    /// Sessions the server resumed (from its cache or a ticket) since the context was made.
    static func resumedSessions(_ context: OpaquePointer) -> Int {
        cw_SSL_CTX_sess_hits(context)
    }

    /// `SSL_SESSION_free`: drops one reference to a kept client session.
    static func freeSession(_ session: OpaquePointer) {
        SSL_SESSION_free(session)
    }

    // MARK: Sessions

    /// An `SSL` and its two memory BIOs, owned by a `TLSSession`.
    struct SessionHandles {
        var ssl: OpaquePointer
        /// Ciphertext from the peer, waiting for OpenSSL to read it.
        var input: OpaquePointer
        /// Ciphertext OpenSSL wrote, waiting to be sent.
        var output: OpaquePointer
    }

    /// A new `SSL` over two memory BIOs, in the context's role, with `owner` (the `TLSSession`, unretained) as its
    /// application data.
    ///
    /// `SSL_new(ctx)` returns NULL on failure; `BIO_new(BIO_s_mem())` likewise; `SSL_set_bio(ssl, rbio, wbio)`
    /// hands both BIOs to the `SSL`, which frees them. An empty input BIO must read as "no data yet", not as
    /// end of file: `BIO_set_mem_eof_return(rbio, -1)`.
    ///
    /// A client that verifies its peer checks the server's name: `SSL_set1_host` (or, for an IP address,
    /// `X509_VERIFY_PARAM_set1_ip_asc` on `SSL_get0_param`) makes certificate verification fail with
    /// `X509_V_ERR_HOSTNAME_MISMATCH` unless the certificate names it, and `SSL_set_tlsext_host_name` sends it
    /// as SNI (never for an IP address: RFC 6066 §3). Each returns 1 on success.
    static func makeSession(
        _ context: OpaquePointer, role: TLSConfiguration.Role, serverName: String?, verifiesHost: Bool,
        owner: UnsafeMutableRawPointer
    ) throws(TLSError) -> SessionHandles {
        clearErrors()
        guard let ssl = SSL_new(context) else { throw failure(.cryptoFailed, "cannot make a TLS session") }
        guard let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw failure(.cryptoFailed, "cannot make the session's buffers")
        }
        _ = cw_BIO_set_mem_eof_return(input, -1)
        SSL_set_bio(ssl, input, output)
        SSL_set_ex_data(ssl, 0, owner)
        let handles = SessionHandles(ssl: ssl, input: input, output: output)
        if role == .server {
            SSL_set_accept_state(ssl)
            return handles
        }
        SSL_set_connect_state(ssl)
        if let serverName {
            let isAddress = isIPAddress(serverName)
            var ok = true
            if verifiesHost {
                if isAddress {
                    ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1
                } else {
                    X509_VERIFY_PARAM_set_hostflags(SSL_get0_param(ssl), UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
                    ok = SSL_set1_host(ssl, serverName) == 1
                }
            }
            if ok && !isAddress { ok = cw_SSL_set_tlsext_host_name(ssl, serverName) == 1 }
            guard ok else {
                SSL_free(ssl)
                throw failure(.invalidArgument, "cannot use \(serverName.debugDescription) as the server's name")
            }
        }
        return handles
    }

    /// Whether `name` is an IPv4 or IPv6 address literal: `a2i_IPADDRESS` parses one (NULL if it is not).
    private static func isIPAddress(_ name: String) -> Bool {
        guard let address = a2i_IPADDRESS(name) else {
            clearErrors()
            return false
        }
        ASN1_OCTET_STRING_free(address)
        return true
    }

    /// `SSL_free`: frees the session and its BIOs.
    ///
    /// `SSL_free` marks the session not resumable unless a shutdown was recorded (a TLS 1.2-era defence against
    /// truncation, which RFC 8446 §6.1 dropped). A session that ends without failing — the usual end of a
    /// connection that is just dropped — is kept resumable by recording a quiet shutdown first
    /// (`SSL_set_quiet_shutdown(ssl, 1)` then `SSL_shutdown`, which sets the flags and sends nothing); a
    /// session that failed is freed as is and cannot be resumed.
    static func freeSession(_ handles: SessionHandles, resumable: Bool) {
        if resumable {
            SSL_set_quiet_shutdown(handles.ssl, 1)
            _ = SSL_shutdown(handles.ssl)
        }
        SSL_free(handles.ssl)
        clearErrors()
    }

    /// Offers a kept client session for resumption: `SSL_set_session(ssl, session)` takes its own reference;
    /// 1 on success. A session the server no longer knows just makes a full handshake.
    static func offer(_ session: OpaquePointer, to handles: SessionHandles) {
        _ = SSL_set_session(handles.ssl, session)
        clearErrors()
    }

    /// A fresh input BIO in place of an empty one that grew: `SSL_set0_rbio(ssl, rbio)` frees the old one.
    /// Returns false (keeping the old one) if no BIO can be made.
    @discardableResult
    static func replaceInput(_ handles: inout SessionHandles) -> Bool {
        guard let input = BIO_new(BIO_s_mem()) else { return false }
        _ = cw_BIO_set_mem_eof_return(input, -1)
        SSL_set0_rbio(handles.ssl, input)
        handles.input = input
        return true
    }

    /// A fresh output BIO in place of an empty one that grew: `SSL_set0_wbio(ssl, wbio)` frees the old one.
    @discardableResult
    static func replaceOutput(_ handles: inout SessionHandles) -> Bool {
        guard let output = BIO_new(BIO_s_mem()) else { return false }
        SSL_set0_wbio(handles.ssl, output)
        handles.output = output
        return true
    }

    /// `BIO_write(rbio, data, len)`: appends to the memory BIO (which grows), returning `len` or ≤ 0 on failure.
    static func feed(_ handles: SessionHandles, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
        return BIO_write(handles.input, base, Int32(bytes.count)) == Int32(bytes.count)
    }

    /// Bytes waiting in a memory BIO: `BIO_ctrl_pending`.
    static func bufferedInput(_ handles: SessionHandles) -> Int { Int(BIO_ctrl_pending(handles.input)) }
    static func bufferedOutput(_ handles: SessionHandles) -> Int { Int(BIO_ctrl_pending(handles.output)) }

    /// `BIO_read(wbio, buf, len)`: moves up to `len` bytes out of the output BIO; ≤ 0 when it is empty.
    static func drainOutput(_ handles: SessionHandles, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let count = BIO_read(handles.output, base, Int32(min(buffer.count, Int(Int32.max))))
        return max(0, Int(count))
    }

    /// What an `SSL_do_handshake`, `SSL_read_ex` or `SSL_write_ex` came to.
    enum Step {
        /// It finished (`count` bytes read or written, 0 for a handshake).
        case done(Int)
        /// It needs more input from the peer.
        case needsInput
        /// The peer sent close_notify.
        case closed
        case failed(TLSError)
    }

    /// `SSL_do_handshake(ssl)`: 1 when the handshake is complete, ≤ 0 otherwise (then `SSL_get_error` says why).
    static func handshake(_ handles: SessionHandles, role: TLSConfiguration.Role) -> Step {
        clearErrors()
        let result = SSL_do_handshake(handles.ssl)
        return result == 1 ? .done(0) : step(handles, result: result, duringHandshake: true, role: role)
    }

    /// `SSL_read_ex(ssl, buf, num, &readbytes)`: 1 with `readbytes` > 0 on success, 0 otherwise.
    static func read(
        _ handles: SessionHandles, into buffer: UnsafeMutableRawBufferPointer, role: TLSConfiguration.Role
    ) -> Step {
        clearErrors()
        var count = 0
        let result = SSL_read_ex(handles.ssl, buffer.baseAddress, buffer.count, &count)
        return result == 1 ? .done(count) : step(handles, result: result, duringHandshake: false, role: role)
    }

    /// `SSL_write_ex(ssl, buf, num, &written)`: 1 on success with all of `num` written (partial writes are off,
    /// and a memory BIO is never full), 0 otherwise.
    static func write(_ handles: SessionHandles, _ bytes: UnsafeRawBufferPointer, role: TLSConfiguration.Role) -> Step {
        clearErrors()
        var count = 0
        let result = SSL_write_ex(handles.ssl, bytes.baseAddress, bytes.count, &count)
        return result == 1 ? .done(count) : step(handles, result: result, duringHandshake: false, role: role)
    }

    /// `SSL_shutdown(ssl)`: writes close_notify (0: sent, the peer's not seen yet; 1: both sent; < 0: failed —
    /// a session that already failed cannot send one, and needs none).
    static func shutdown(_ handles: SessionHandles) {
        clearErrors()
        _ = SSL_shutdown(handles.ssl)
        clearErrors()
    }

    /// The result of a failed call, from `SSL_get_error(ssl, ret)`, which must be asked right after the call
    /// on the same thread.
    private static func step(
        _ handles: SessionHandles, result: Int32, duringHandshake: Bool, role: TLSConfiguration.Role
    ) -> Step {
        switch SSL_get_error(handles.ssl, result) {
        case SSL_ERROR_WANT_READ:
            return .needsInput
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        case SSL_ERROR_SSL:
            return .failed(classify(handles, duringHandshake: duringHandshake, role: role))
        default:
            // SSL_ERROR_SYSCALL and anything else cannot come from memory BIOs unless OpenSSL itself failed.
            return .failed(failure(.protocolError, "the TLS session failed"))
        }
    }

    /// The kind of a fatal TLS failure, from the first reason on the error queue and the verification result.
    private static func classify(
        _ handles: SessionHandles, duringHandshake: Bool, role: TLSConfiguration.Role
    ) -> TLSError {
        let reason = ERR_GET_REASON(ERR_peek_error())
        let verification = SSL_get_verify_result(handles.ssl)
        let side = role == .server ? "client" : "server"
        if reason == SSL_R_CERTIFICATE_VERIFY_FAILED, verification != X509_V_OK {
            let text = String(cString: X509_verify_cert_error_string(verification))
            var error = failure(.certificateVerificationFailed, "the \(side)'s certificate was refused: \(text)")
            error.certificateProblem = TLSError.CertificateProblem(rawValue: Int32(verification), description: text)
            return error
        }
        if reason >= SSL_AD_REASON_OFFSET {
            // An alert the peer sent: its reason is SSL_AD_REASON_OFFSET + the alert number.
            let alert = reason - SSL_AD_REASON_OFFSET
            let handshakeAlerts: Set<Int32> = [
                SSL_AD_HANDSHAKE_FAILURE, SSL_AD_BAD_CERTIFICATE, SSL_AD_UNSUPPORTED_CERTIFICATE,
                SSL_AD_CERTIFICATE_REVOKED, SSL_AD_CERTIFICATE_EXPIRED, SSL_AD_CERTIFICATE_UNKNOWN,
                SSL_AD_UNKNOWN_CA, SSL_AD_ACCESS_DENIED, SSL_AD_PROTOCOL_VERSION, SSL_AD_INSUFFICIENT_SECURITY,
                SSL_AD_NO_APPLICATION_PROTOCOL, SSL_AD_CERTIFICATE_REQUIRED,
            ]
            let refused = duringHandshake || handshakeAlerts.contains(alert)
            return failure(refused ? .handshakeFailed : .protocolError, "the \(side) ended the session with an alert")
        }
        let notTLS: Set<Int32> = [
            SSL_R_WRONG_VERSION_NUMBER, SSL_R_HTTP_REQUEST, SSL_R_HTTPS_PROXY_REQUEST, SSL_R_PACKET_LENGTH_TOO_LONG,
            SSL_R_RECORD_LENGTH_MISMATCH, SSL_R_UNEXPECTED_MESSAGE, SSL_R_UNEXPECTED_RECORD, SSL_R_LENGTH_MISMATCH,
            SSL_R_BAD_PACKET_LENGTH, SSL_R_LENGTH_TOO_SHORT, SSL_R_BAD_LENGTH, SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC,
            SSL_R_ENCRYPTED_LENGTH_TOO_LONG, SSL_R_RECORD_TOO_SMALL, SSL_R_BAD_RECORD_TYPE, SSL_R_UNKNOWN_PROTOCOL,
            SSL_R_EXCESSIVE_MESSAGE_SIZE, SSL_R_BAD_HANDSHAKE_LENGTH, SSL_R_UNKNOWN_ALERT_TYPE,
        ]
        if notTLS.contains(reason) || !duringHandshake {
            return failure(.protocolError, "the \(side) sent bytes that are not valid TLS")
        }
        return failure(.handshakeFailed, "the TLS handshake with the \(side) failed")
    }

    // MARK: What was negotiated

    /// The ALPN name the server chose (`SSL_get0_alpn_selected`: a pointer into the session and a length, 0
    /// when none was).
    static func selectedProtocol(_ handles: SessionHandles) -> String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(handles.ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// `SSL_get_version`: "TLSv1.2" or "TLSv1.3" (a static string).
    static func protocolVersion(_ handles: SessionHandles) -> String {
        String(cString: SSL_get_version(handles.ssl))
    }

    /// `SSL_session_reused`: 1 when the handshake resumed a session.
    static func isResumed(_ handles: SessionHandles) -> Bool {
        SSL_session_reused(handles.ssl) == 1
    }

    /// The subject of the peer's certificate in RFC 2253 form (`CN=device-42,O=Example`), nil without one.
    ///
    /// `SSL_get1_peer_certificate` returns a new reference (or NULL); `X509_get_subject_name` borrows from the
    /// certificate; `X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253)` writes it, returning a negative value on
    /// failure. With verification on, a certificate that did not verify has already failed the handshake.
    static func peerSubject(_ handles: SessionHandles) -> String? {
        guard let certificate = SSL_get1_peer_certificate(handles.ssl) else { return nil }
        defer { X509_free(certificate) }
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard cw_X509_NAME_print_rfc2253(bio, X509_get_subject_name(certificate)) >= 0 else {
            clearErrors()
            return nil
        }
        var data: UnsafeMutablePointer<CChar>?
        let count = cw_BIO_get_mem_data(bio, &data)
        guard let data, count > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
    }

    // MARK: Errors

    private static func clearErrors() {
        OpenSSLCrypto.clearErrors()
    }

    private static func failure(_ code: TLSError.Code, _ message: String) -> TLSError {
        OpenSSLCrypto.error(code, message)
    }

    /// A failure to use a file: `.fileUnreadable` when the system refused it (the first queued error is from
    /// the system library: no such file, permission denied), `code` when its content is wrong.
    private static func fileFailure(_ code: TLSError.Code, _ message: String) -> TLSError {
        let system = ERR_GET_LIB(ERR_peek_error()) == ERR_LIB_SYS
        return failure(system ? .fileUnreadable : code, message)
    }
}

extension TLSError.CertificateProblem {
    /// The certificate's notAfter has passed.
    public static let expired = Self(rawValue: X509_V_ERR_CERT_HAS_EXPIRED, description: "certificate has expired")
    /// The certificate's notBefore is still to come.
    public static let notYetValid = Self(rawValue: X509_V_ERR_CERT_NOT_YET_VALID, description: "certificate is not yet valid")
    /// No trusted CA issued the certificate's chain.
    public static let unknownIssuer = Self(
        rawValue: X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, description: "unable to get local issuer certificate")
    /// A self-signed certificate that is not trusted.
    public static let selfSigned = Self(
        rawValue: X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, description: "self-signed certificate")
    /// The certificate does not name the host that was connected to.
    public static let hostnameMismatch = Self(rawValue: X509_V_ERR_HOSTNAME_MISMATCH, description: "hostname mismatch")
    /// The certificate does not name the IP address that was connected to.
    public static let ipAddressMismatch = Self(rawValue: X509_V_ERR_IP_ADDRESS_MISMATCH, description: "IP address mismatch")
}
