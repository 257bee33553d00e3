// SPDX-License-Identifier: MIT
// One HTTP exchange over libcurl.
#include <memfail/llm/http_exchange.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

#include <memfail/core/text.hpp>

namespace memfail::llm {

namespace {

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    static_cast<std::string*>(user)->append(data, size * count);
    return size * count;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    const std::string_view line(data, size * count);
    constexpr std::string_view k_name = "retry-after:";
    if (line.size() > k_name.size() && text::to_lower(line.substr(0, k_name.size())) == k_name)
        static_cast<HttpReply*>(user)->retry_after = std::string(text::trim(line.substr(k_name.size())));
    return size * count;
}

// Counts the requests libcurl writes (one header block per request sent, resends included).
int on_debug(CURL*, curl_infotype type, char*, std::size_t, void* user) {
    if (type == CURLINFO_HEADER_OUT) ++static_cast<HttpReply*>(user)->sends;
    return 0;
}

}  // namespace

HttpReply perform_http(CURL* curl, const HttpExchange& exchange) {
    HttpReply reply;
    if (!curl) {
        reply.code = CURLE_FAILED_INIT;
        reply.curl_error = "cannot initialise libcurl";
        return reply;
    }
    const bool get = exchange.method == "GET";
    static const std::string k_empty;
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Accept: application/json");
    if (!get) headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip for large bodies
    std::string auth;
    if (exchange.bearer_token && !exchange.bearer_token->empty()) {
        auth = "Authorization: Bearer " + *exchange.bearer_token;
        headers = curl_slist_append(headers, auth.c_str());
    }
    char error_buffer[CURL_ERROR_SIZE] = {};
    const long timeout_ms = std::max(1L, std::lround(exchange.timeout_seconds * 1000));
    curl_easy_setopt(curl, CURLOPT_URL, exchange.url->c_str());
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    if (get) {
        curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    } else {
        const std::string& payload = exchange.body ? *exchange.body : k_empty;
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload.data());
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
    }
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeout_ms, 10000L));
    // gzip only: it shrinks large embedding replies cheaply, whereas offering brotli lets some
    // servers (cpp-httplib among them) spend milliseconds of CPU compressing every small reply.
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "gzip");
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "memfail");
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &reply);
    // The debug callback (called only in verbose mode, and then instead of printing) sees every
    // request header block libcurl sends, including its own resend after a connection reset.
    curl_easy_setopt(curl, CURLOPT_DEBUGFUNCTION, on_debug);
    curl_easy_setopt(curl, CURLOPT_DEBUGDATA, &reply);
    curl_easy_setopt(curl, CURLOPT_VERBOSE, 1L);
    reply.code = curl_easy_perform(curl);
    if (reply.code == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
    else reply.curl_error = error_buffer[0] ? error_buffer : curl_easy_strerror(reply.code);
    // The handle outlives this frame: drop pointers into it before returning.
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, nullptr);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, nullptr);
    curl_easy_setopt(curl, CURLOPT_VERBOSE, 0L);
    curl_easy_setopt(curl, CURLOPT_DEBUGDATA, nullptr);
    curl_slist_free_all(headers);
    std::fill(auth.begin(), auth.end(), '\0');  // the token does not linger in freed memory
    return reply;
}

bool transport_retryable(CURLcode code) {
    switch (code) {
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM: return true;
        default: return false;
    }
}

}  // namespace memfail::llm
