// SPDX-License-Identifier: MIT
// Error helpers: names, descriptions and exit codes.
#include <memfail/core/error.hpp>

namespace memfail {

const char* error_kind_name(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::invalid_input: return "invalid_input";
        case ErrorKind::not_found: return "not_found";
        case ErrorKind::unsupported: return "unsupported";
        case ErrorKind::io: return "io";
        case ErrorKind::database: return "database";
        case ErrorKind::network: return "network";
        case ErrorKind::timeout: return "timeout";
        case ErrorKind::rate_limited: return "rate_limited";
        case ErrorKind::auth: return "auth";
        case ErrorKind::protocol: return "protocol";
        case ErrorKind::invalid_output: return "invalid_output";
        case ErrorKind::internal: return "internal";
    }
    return "internal";
}

bool Error::retryable() const {
    return kind == ErrorKind::network || kind == ErrorKind::timeout ||
           kind == ErrorKind::rate_limited;
}

std::string Error::describe() const { return where.empty() ? message : where + ": " + message; }

Error Error::with_context(const std::string& context) const {
    Error copy = *this;
    if (context.empty()) return copy;
    copy.where = where.empty() ? context : context + ": " + where;
    return copy;
}

Error make_error(ErrorKind kind, std::string message, std::string where) {
    return Error{kind, std::move(message), std::move(where)};
}

int exit_code_for(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::invalid_input:
        case ErrorKind::not_found:
        case ErrorKind::unsupported: return 2;
        case ErrorKind::network:
        case ErrorKind::timeout:
        case ErrorKind::rate_limited:
        case ErrorKind::auth:
        case ErrorKind::protocol:
        case ErrorKind::invalid_output: return 3;
        default: return 1;
    }
}

void assert_fail(const char* condition, const char* why, const char* file, int line) {
    std::fprintf(stderr, "memfail: internal error at %s:%d: assertion `%s` failed: %s\n", file, line,
                 condition, why);
    std::abort();
}

}  // namespace memfail
