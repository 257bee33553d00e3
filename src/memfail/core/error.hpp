// SPDX-License-Identifier: MIT
// Error, Result<T> and the one Fatal exception: memfail's written error policy (docs/ARCHITECTURE.md).
//
// - Anything that can fail for outside reasons (files, SQLite, HTTP, adapters, user input) returns
//   Result<T>. Callers propagate with MF_TRY / MF_TRY_ASSIGN.
// - Only the CLI edge turns an Error into a message and an exit code (via Fatal).
// - Programmer errors trip MF_ASSERT, which aborts with file, line and a reason.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace memfail {

enum class ErrorKind {
    invalid_input,  // bad file, line or field supplied by the user
    not_found,
    unsupported,  // optional capability not offered by this implementation
    io,
    database,
    network,
    timeout,
    rate_limited,
    auth,
    protocol,  // an outside peer broke the protocol
    invalid_output,  // a model's reply never satisfied the JSON schema it was asked for
    internal,
};

// Stable lower-case name of `kind`, used in messages and JSON ("invalid_input").
const char* error_kind_name(ErrorKind kind);

struct Error {
    ErrorKind kind = ErrorKind::internal;
    std::string message;  // a full sentence, no trailing period
    std::string where;    // "data/x.jsonl:42: probes[3].answer" when known, else empty
    // For a failed LLM call: the HTTP requests it sent before giving up (resends after a
    // connection reset included); 0 when nothing was sent. Accounting only (llm_calls.attempts).
    int attempts = 0;

    // True for failures worth retrying (network, timeout, rate_limited).
    bool retryable() const;
    // "where: message" or just the message.
    std::string describe() const;
    // Returns a copy with `context` prepended to `where` ("file.jsonl:3" + "probes[2]").
    Error with_context(const std::string& context) const;
};

Error make_error(ErrorKind kind, std::string message, std::string where = {});

// Shaped like std::expected<T, Error> so it can become an alias when the toolchain has it.
template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : m_state(std::in_place_index<1>, std::move(error)) {}

    bool has_value() const { return m_state.index() == 0; }
    explicit operator bool() const { return has_value(); }

    T& value() & { return checked(); }
    const T& value() const& { return const_cast<Result*>(this)->checked(); }
    // By value, so `for (auto& x : f().value())` cannot dangle on the temporary Result.
    T value() && { return std::move(checked()); }
    T& operator*() & { return checked(); }
    const T& operator*() const& { return const_cast<Result*>(this)->checked(); }
    T* operator->() { return &checked(); }
    const T* operator->() const { return &const_cast<Result*>(this)->checked(); }

    const Error& error() const {
        if (has_value()) {
            std::fprintf(stderr, "memfail: internal: error() called on a Result holding a value\n");
            std::abort();
        }
        return std::get<1>(m_state);
    }

private:
    T& checked() {
        if (!has_value()) {
            std::fprintf(stderr, "memfail: internal: value() called on a failed Result: %s\n",
                         std::get<1>(m_state).describe().c_str());
            std::abort();
        }
        return std::get<0>(m_state);
    }
    std::variant<T, Error> m_state;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)) {}
    bool has_value() const { return !m_error.has_value(); }
    explicit operator bool() const { return has_value(); }
    void value() const {
        if (m_error) {
            std::fprintf(stderr, "memfail: internal: value() called on a failed Result: %s\n",
                         m_error->describe().c_str());
            std::abort();
        }
    }
    const Error& error() const {
        if (!m_error) {
            std::fprintf(stderr, "memfail: internal: error() called on a successful Result\n");
            std::abort();
        }
        return *m_error;
    }

private:
    std::optional<Error> m_error;
};

// Thrown only by tools/ and run/ to end a command; caught in main, which prints it and exits with
// exit_code_for(kind): 2 for usage or bad input, 3 for outside services, 1 otherwise.
class Fatal : public std::runtime_error {
public:
    explicit Fatal(Error error) : std::runtime_error(error.describe()), m_error(std::move(error)) {}
    const Error& error() const { return m_error; }

private:
    Error m_error;
};

int exit_code_for(ErrorKind kind);

// Unwraps a Result or throws Fatal: for the CLI edge only.
template <class T>
T value_or_fatal(Result<T> result) {
    if (!result) throw Fatal(result.error());
    return std::move(result).value();
}
inline void value_or_fatal(Result<void> result) {
    if (!result) throw Fatal(result.error());
}

[[noreturn]] void assert_fail(const char* condition, const char* why, const char* file, int line);

}  // namespace memfail

#define MF_ASSERT(cond, why) \
    ((cond) ? (void)0 : ::memfail::assert_fail(#cond, (why), __FILE__, __LINE__))

#define MF_CONCAT_INNER(a, b) a##b
#define MF_CONCAT(a, b) MF_CONCAT_INNER(a, b)

// Propagates the error of a Result<void> (or any Result whose value is unused).
#define MF_TRY(expr)                                       \
    do {                                                   \
        auto&& mf_try_result_ = (expr);                    \
        if (!mf_try_result_) return mf_try_result_.error(); \
    } while (0)

// Declares `decl` (e.g. `auto x`) from a Result's value, or propagates its error.
#define MF_TRY_ASSIGN(decl, expr)                                                \
    auto MF_CONCAT(mf_try_tmp_, __LINE__) = (expr);                              \
    if (!MF_CONCAT(mf_try_tmp_, __LINE__)) return MF_CONCAT(mf_try_tmp_, __LINE__).error(); \
    decl = std::move(MF_CONCAT(mf_try_tmp_, __LINE__)).value()
