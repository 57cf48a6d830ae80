// CCurl: libcurl's C API (Debian's libcurl4-openssl-dev, built with nghttp2) for Swift.
// Only Sources/CoinWatchPush imports this module.
//
// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot call; each
// wrapper below passes exactly one argument of the type the option documents (long, pointer, string,
// callback), as curl's own type-checking macros require.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

typedef size_t (*cw_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode cw_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cw_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cw_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cw_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cw_curl_easy_setopt_callback(CURL *handle, CURLoption option, cw_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cw_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode cw_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode cw_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// The transfer a CURLMSG_DONE message is about and its result; `data` is a union in C.
static inline CURLcode cw_curl_msg_result(const CURLMsg *message) {
    return message->data.result;
}

/// Whether this libcurl was built with HTTP/2 (nghttp2).
static inline int cw_curl_has_http2(void) {
    const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return info != NULL && (info->features & CURL_VERSION_HTTP2) != 0;
}

static const long cw_curl_global_default = CURL_GLOBAL_DEFAULT;
static const long cw_curlpipe_multiplex = CURLPIPE_MULTIPLEX;
static const long cw_curl_http_version_2tls = CURL_HTTP_VERSION_2TLS;
static const long cw_curl_http_version_2_prior_knowledge = CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
static const int cw_curl_error_size = CURL_ERROR_SIZE;

#endif
