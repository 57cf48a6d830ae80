// COpenSSL: OpenSSL 3's libssl and libcrypto (Debian's libssl-dev) for Swift.
// Only the two OpenSSL bridge files of Sources/CoinWatchTLS import this module.
//
// Swift imports functions and constant macros but not function-like macros, so each macro the
// bridge needs is wrapped below as a static inline function with the macro's own contract.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/opensslv.h>
#if OPENSSL_VERSION_MAJOR < 3
#error "CoinWatch needs OpenSSL 3 (Debian 12: libssl-dev)"
/// SSL_OP_* option bits are defined through a cast (SSL_OP_BIT), which Swift does not import.
static inline uint64_t cw_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline uint64_t cw_SSL_OP_CIPHER_SERVER_PREFERENCE(void) { return SSL_OP_CIPHER_SERVER_PREFERENCE; }
static inline uint64_t cw_SSL_OP_NO_TICKET(void) { return SSL_OP_NO_TICKET; }

/// X509_NAME_print_ex with XN_FLAG_RFC2253 (a macro of macros Swift does not import): writes `name` as
/// `CN=…,O=…` to `bio`; negative on failure.
static inline int cw_X509_NAME_print_rfc2253(BIO *bio, const X509_NAME *name) {
    return X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
}

#endif

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

/// BIO_get_mem_data: points *data at a memory BIO's readable bytes (not copied) and returns their count.
static inline long cw_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

/// BIO_set_mem_eof_return: what BIO_read returns on an empty memory BIO. -1 with the retry flag set makes
/// an empty input BIO read as "would block" (SSL_ERROR_WANT_READ), not as end of file.
static inline long cw_BIO_set_mem_eof_return(BIO *bio, int value) {
    return BIO_set_mem_eof_return(bio, value);
}

/// OPENSSL_free: frees memory OpenSSL allocated and handed to the caller (a macro over CRYPTO_free that
/// adds the caller's file and line).
static inline void cw_OPENSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

/// SSL_CTX_set_mode: adds mode bits (SSL_MODE_*) to a context; returns the new mode.
static inline long cw_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

/// SSL_CTX_set_min_proto_version / SSL_CTX_set_max_proto_version: 1 on success, 0 on failure.
static inline int cw_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline int cw_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

/// SSL_CTX_set_session_cache_mode: sets SSL_SESS_CACHE_* bits; returns the previous mode.
static inline long cw_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

/// SSL_CTX_sess_set_cache_size: bounds the server's internal session cache; returns the previous size.
static inline long cw_SSL_CTX_sess_set_cache_size(SSL_CTX *ctx, long size) {
    return SSL_CTX_sess_set_cache_size(ctx, size);
}

/// SSL_CTX_sess_hits: sessions the server resumed from its cache or a ticket.
static inline long cw_SSL_CTX_sess_hits(SSL_CTX *ctx) {
    return SSL_CTX_sess_hits(ctx);
}

/// SSL_set_tlsext_host_name: sets the SNI name a client sends; 1 on success.
static inline int cw_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// SSL_OP_* option bits are defined through a cast (SSL_OP_BIT), which Swift does not import.
static inline uint64_t cw_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline uint64_t cw_SSL_OP_CIPHER_SERVER_PREFERENCE(void) { return SSL_OP_CIPHER_SERVER_PREFERENCE; }
static inline uint64_t cw_SSL_OP_NO_TICKET(void) { return SSL_OP_NO_TICKET; }

/// X509_NAME_print_ex with XN_FLAG_RFC2253 (a macro of macros Swift does not import): writes `name` as
/// `CN=…,O=…` to `bio`; negative on failure.
static inline int cw_X509_NAME_print_rfc2253(BIO *bio, const X509_NAME *name) {
    return X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
}

#endif
