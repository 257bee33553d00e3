// SPDX-License-Identifier: MIT
// The adapter protocol (docs/ADAPTERS.md, version 1): JSON shapes of the data model, the error
// object, the Transport interface that carries one operation to an outside system, and the
// dispatcher that answers an operation from any MemorySystem (used by `memfail serve`).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::memory::adapter {

inline constexpr int k_protocol_version = 1;

// --- Data model <-> JSON ---------------------------------------------------------------------------
nlohmann::json to_json(const data::Message& message);
nlohmann::json to_json(const data::Session& session);
nlohmann::json to_json(const Memory& memory);
nlohmann::json to_json(const Hit& hit);  // a Memory object with "score"
nlohmann::json to_json(const MemoryEvent& event);
nlohmann::json to_json(const Capabilities& capabilities);  // answers -> "answer"
// The result of the `answer` operation: {"answer", "confidence" (when known), "sources"}.
nlohmann::json to_json(const SystemAnswer& answer);

// Bounds on an `answer` reply, beyond which it is a protocol error: the text is graded (an LLM
// judge reads it), so a runaway agent must not hand memfail megabytes of it.
inline constexpr std::size_t k_max_answer_bytes = std::size_t{1} << 20;
inline constexpr std::size_t k_max_answer_sources = 1000;

// Parsers check types and required fields; errors are ErrorKind::protocol (an adapter's reply) or
// ErrorKind::invalid_input (a request to the server) as chosen by `kind`, and name the field
// (where = "memories[3].sources[0]"). Unknown fields are ignored.
Result<data::Message> message_from_json(const nlohmann::json& j, ErrorKind kind, const std::string& where);
Result<data::Session> session_from_json(const nlohmann::json& j, ErrorKind kind, const std::string& where);
Result<Memory> memory_from_json(const nlohmann::json& j, ErrorKind kind, const std::string& where);
Result<Hit> hit_from_json(const nlohmann::json& j, ErrorKind kind, const std::string& where);
Result<MemoryEvent> event_from_json(const nlohmann::json& j, ErrorKind kind, const std::string& where);
// The result of `answer`: "answer" a string (required), "confidence" a number in [0, 1] (optional;
// null reads as absent), "sources" an array of strings (optional); over the bounds above is an
// error naming the field.
Result<SystemAnswer> answer_from_json(const nlohmann::json& j, ErrorKind kind, const std::string& where);
// Missing flags are false. The capability of the `answer` operation is the flag "answer".
Result<Capabilities> capabilities_from_json(const nlohmann::json& j, ErrorKind kind, const std::string& where);
// The optional "provenance" operation is announced in capabilities as "provenance_op".
bool has_provenance_op(const nlohmann::json& capabilities);

// --- Reading an adapter's reply ------------------------------------------------------------------------
// An adapter's reply text (an exec: JSON line, an http: body) parsed as JSON. A string holding
// text that is not UTF-8 (a raw byte such as Latin-1's 0xe9, an overlong or surrogate encoding, or
// an escaped lone surrogate such as Python's "\udce9") does not make the whole reply unreadable:
// the reply parses, with each bad sequence marked, so invalid_utf8() can name the field. Text that
// is not JSON apart from that leaves `value` discarded.
class ReplyJson {
  public:
    static ReplyJson parse(std::string_view text);

    nlohmann::json value; // is_discarded() when the text is not JSON
    // The first string (or key) within `part` (`value` or a member of it) that was not valid UTF-8,
    // as an Error of kind protocol: where = `where` + ": " + the field path ("memories[2].text",
    // relative to `part`), message = "not valid UTF-8 (byte 0xff at offset 17)", offset counting
    // the string's bytes. Nothing when every string in `part` was valid.
    // `path` is put in front of the field path ("error" for an error object).
    std::optional<Error> invalid_utf8(const nlohmann::json& part, const std::string& where,
                                      const std::string& path = {}) const;

  private:
    std::string m_open, m_close; // the markers around a bad sequence; empty when there was none
};

// --- Errors ------------------------------------------------------------------------------------------
// Protocol error kinds: invalid_request, unsupported, not_found, internal.
// {"error": {"kind": <protocol kind of error.kind()>, "message": error.message()}}
nlohmann::json error_json(const Error& error);
// The Error an {"error": {...}} object stands for (unsupported -> ErrorKind::unsupported,
// invalid_request -> invalid_input, not_found -> not_found, anything else -> internal), with
// `where` naming the adapter; a malformed error object is ErrorKind::protocol.
Error error_from_json(const nlohmann::json& j, const std::string& where);

// --- Transport ---------------------------------------------------------------------------------------
// Carries one operation to an adapter and brings back its result object. Implementations:
// exec_transport.cpp (JSON lines over a child process) and http_transport.cpp (POST <url>/v1/<op>).
// Not thread-safe: memfail calls a memory system from one thread.
class Transport {
public:
    virtual ~Transport() = default;
    // The result object. An {"error"} answer becomes error_from_json(); a transport failure is
    // ErrorKind::io / timeout / network / protocol with a message saying what happened.
    virtual Result<nlohmann::json> call(std::string_view op, const nlohmann::json& params) = 0;
    // Times the adapter lost what it held without reset() (an exec child that was restarted).
    virtual std::uint64_t restarts() const { return 0; }
    // For messages: "exec:python3 adapter.py" or "http://127.0.0.1:8420" (never a token).
    virtual std::string describe() const = 0;
};

// --- Dispatcher (server side) --------------------------------------------------------------------------
// Answers one protocol operation from `system`: the result object, or an {"error"} object for a bad
// request, an unknown operation, or a failure of the system. Never throws.
nlohmann::json handle_operation(MemorySystem& system, std::string_view op, const nlohmann::json& params);

// A Transport that answers through handle_operation() in-process: conformance checks of built-in
// systems, and tests of the dispatcher, without a process or socket in between.
std::unique_ptr<Transport> make_local_transport(std::unique_ptr<MemorySystem> system);

}  // namespace memfail::memory::adapter
