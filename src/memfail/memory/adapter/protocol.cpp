// SPDX-License-Identifier: MIT
// The adapter protocol's JSON codec, error objects, server-side dispatcher and in-process
// transport.
#include <memfail/memory/adapter/protocol.hpp>

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

namespace memfail::memory::adapter {

using nlohmann::json;

namespace {

// k is capped so a request cannot make a system rank and serialise its whole store at once.
constexpr int k_max_k = 1000;

std::string type_name(const json& j) {
    switch (j.type()) {
    case json::value_t::null:
        return "null";
    case json::value_t::object:
        return "an object";
    case json::value_t::array:
        return "an array";
    case json::value_t::string:
        return "a string";
    case json::value_t::boolean:
        return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
        return "an integer";
    case json::value_t::number_float:
        return "a number";
    default:
        return "a " + std::string(j.type_name());
    }
}

std::string field_path(const std::string& where, const std::string& field) {
    return where.empty() ? field : where + "." + field;
}

Error type_error(ErrorKind kind, const std::string& path, const char* expected, const json& got) {
    return make_error(kind, std::string("expected ") + expected + ", got " + type_name(got), path);
}

Result<void> require_object(const json& j, ErrorKind kind, const std::string& where) {
    if (!j.is_object())
        return type_error(kind, where.empty() ? "(top level)" : where, "an object", j);
    return {};
}

// A required string field. Null counts as missing: it is how Python's None and JS's null arrive.
Result<std::string> required_string(const json& j, const char* field, ErrorKind kind,
                                    const std::string& where) {
    const std::string path = field_path(where, field);
    const auto it = j.find(field);
    if (it == j.end() || it->is_null())
        return make_error(kind, "required field is missing", path);
    if (!it->is_string())
        return type_error(kind, path, "a string", *it);
    return it->get<std::string>();
}

// An optional string field: missing or null give "".
Result<std::string> optional_string(const json& j, const char* field, ErrorKind kind,
                                    const std::string& where) {
    const auto it = j.find(field);
    if (it == j.end() || it->is_null())
        return std::string();
    if (!it->is_string())
        return type_error(kind, field_path(where, field), "a string", *it);
    return it->get<std::string>();
}

Result<std::vector<std::string>> optional_strings(const json& j, const char* field, ErrorKind kind,
                                                  const std::string& where) {
    std::vector<std::string> out;
    const auto it = j.find(field);
    if (it == j.end() || it->is_null())
        return out;
    const std::string path = field_path(where, field);
    if (!it->is_array())
        return type_error(kind, path, "an array of strings", *it);
    for (std::size_t i = 0; i < it->size(); ++i) {
        const json& item = (*it)[i];
        if (!item.is_string())
            return type_error(kind, path + "[" + std::to_string(i) + "]", "a string", item);
        out.push_back(item.get<std::string>());
    }
    return out;
}

template <class T, class Parse>
Result<std::vector<T>> array_of(const json& j, const char* field, bool required, ErrorKind kind,
                                const std::string& where, Parse parse) {
    std::vector<T> out;
    const std::string path = field_path(where, field);
    const auto it = j.find(field);
    if (it == j.end() || it->is_null()) {
        if (required)
            return make_error(kind, "required field is missing", path);
        return out;
    }
    if (!it->is_array())
        return type_error(kind, path, "an array", *it);
    out.reserve(it->size());
    for (std::size_t i = 0; i < it->size(); ++i) {
        MF_TRY_ASSIGN(T item, parse((*it)[i], kind, path + "[" + std::to_string(i) + "]"));
        out.push_back(std::move(item));
    }
    return out;
}

json memories_json(const std::vector<Memory>& memories) {
    json out = json::array();
    for (const Memory& m : memories)
        out.push_back(to_json(m));
    return json{{"memories", std::move(out)}};
}

const char* protocol_kind_name(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::invalid_input:
        return "invalid_request";
    case ErrorKind::unsupported:
        return "unsupported";
    case ErrorKind::not_found:
        return "not_found";
    case ErrorKind::auth:
        return "unauthorized";
    default:
        return "internal";
    }
}

// The error object a server answers: the message carries `where` too, since the client sees only
// the message (e.g. "session.messages[2].content: expected a string, got an integer").
json answer_error(ErrorKind kind, const std::string& message, const std::string& where = {}) {
    return error_json(make_error(kind, where.empty() ? message : where + ": " + message));
}
json answer_error(const Error& error) {
    return answer_error(error.kind, error.message, error.where);
}

const std::vector<std::string>& operation_names() {
    static const std::vector<std::string> names = {
        "hello",   "store_conversation", "retrieve_memories", "all_memories", "reset",
        "history", "state_as_of",        "provenance",        "answer"};
    return names;
}

json dispatch(MemorySystem& system, std::string_view op, const json& given) {
    constexpr ErrorKind bad = ErrorKind::invalid_input;
    // Operations without parameters may be sent with none at all.
    const json params = given.is_null() ? json::object() : given;
    if (std::find(operation_names().begin(), operation_names().end(), op) ==
        operation_names().end()) {
        std::string list;
        for (const std::string& name : operation_names())
            list += (list.empty() ? "" : ", ") + name;
        return answer_error(ErrorKind::unsupported,
                            "unknown operation '" + std::string(op) + "'; operations: " + list);
    }
    if (!params.is_object())
        return answer_error(type_error(bad, "params", "an object", params));
    const Capabilities caps = system.capabilities();

    if (op == "hello") {
        const auto it = params.find("protocol");
        if (it == params.end() || it->is_null())
            return answer_error(bad, "required field is missing", "protocol");
        if (!it->is_number_integer())
            return answer_error(type_error(bad, "protocol", "an integer", *it));
        // The server answers the version it speaks; a client speaking another one refuses it.
        const std::string spec = system.spec();
        const std::string name = spec.substr(0, spec.find_first_of(": \t"));
        return json{
            {"protocol", k_protocol_version}, {"system", name}, {"capabilities", to_json(caps)}};
    }
    if (op == "store_conversation") {
        const auto it = params.find("session");
        if (it == params.end() || it->is_null())
            return answer_error(bad, "required field is missing", "session");
        const auto session = session_from_json(*it, bad, "session");
        if (!session)
            return answer_error(session.error());
        if (auto stored = system.store_conversation(*session); !stored)
            return answer_error(stored.error());
        return json::object();
    }
    if (op == "retrieve_memories") {
        const auto query = required_string(params, "query", bad, "");
        if (!query)
            return answer_error(query.error());
        const auto history =
            array_of<data::Message>(params, "history", false, bad, "", message_from_json);
        if (!history)
            return answer_error(history.error());
        const auto k_it = params.find("k");
        if (k_it == params.end() || k_it->is_null())
            return answer_error(bad, "required field is missing", "k");
        if (!k_it->is_number_integer())
            return answer_error(type_error(bad, "k", "an integer", *k_it));
        // Clamped rather than refused: k=0 or a huge k are answerable, and the answer says how
        // many. (An unsigned value above INT64_MAX is clamped before the signed read could wrap
        // it.)
        const std::int64_t asked =
            k_it->is_number_unsigned() && k_it->get<std::uint64_t>() > k_max_k
                ? std::int64_t{k_max_k}
                : k_it->get<std::int64_t>();
        const int k = static_cast<int>(std::clamp<std::int64_t>(asked, 1, k_max_k));
        auto hits = system.retrieve_memories(*query, *history, k);
        if (!hits)
            return answer_error(hits.error());
        json out = json::array();
        for (std::size_t i = 0; i < hits->size() && i < static_cast<std::size_t>(k); ++i)
            out.push_back(to_json((*hits)[i]));
        return json{{"memories", std::move(out)}};
    }
    if (op == "all_memories") {
        auto memories = system.all_memories();
        if (!memories)
            return answer_error(memories.error());
        return memories_json(*memories);
    }
    if (op == "reset") {
        if (auto done = system.reset(); !done)
            return answer_error(done.error());
        return json::object();
    }
    if (op == "history") {
        if (!caps.history)
            return answer_error(ErrorKind::unsupported,
                                "history is not supported by " + system.spec());
        const auto id = required_string(params, "memory_id", bad, "");
        if (!id)
            return answer_error(id.error());
        auto events = system.history(*id);
        if (!events)
            return answer_error(events.error());
        json out = json::array();
        for (const MemoryEvent& e : *events)
            out.push_back(to_json(e));
        return json{{"events", std::move(out)}};
    }
    if (op == "state_as_of") {
        if (!caps.as_of)
            return answer_error(ErrorKind::unsupported,
                                "state_as_of is not supported by " + system.spec());
        const auto timestamp = required_string(params, "timestamp", bad, "");
        if (!timestamp)
            return answer_error(timestamp.error());
        auto memories = system.state_as_of(*timestamp);
        if (!memories)
            return answer_error(memories.error());
        return memories_json(*memories);
    }
    if (op == "answer") {
        if (!caps.answers)
            return answer_error(ErrorKind::unsupported,
                                "answer is not supported by " + system.spec());
        const auto query = required_string(params, "query", bad, "");
        if (!query)
            return answer_error(query.error());
        const auto history =
            array_of<data::Message>(params, "history", false, bad, "", message_from_json);
        if (!history)
            return answer_error(history.error());
        auto answered = system.answer(*query, *history);
        if (!answered)
            return answer_error(answered.error());
        return to_json(*answered);
    }
    // "provenance": a MemorySystem reports sources on its memories, so it has no such operation.
    return answer_error(ErrorKind::unsupported, "provenance is not supported by " + system.spec() +
                                                    " (its memories carry their sources)");
}

class LocalTransport final : public Transport {
  public:
    explicit LocalTransport(std::unique_ptr<MemorySystem> system) : m_system(std::move(system)) {}

    Result<json> call(std::string_view op, const json& params) override {
        json answer = handle_operation(*m_system, op, params);
        if (answer.is_object() && answer.contains("error"))
            return error_from_json(answer, describe());
        return answer;
    }
    std::uint64_t restarts() const override { return m_system->generation(); }
    std::string describe() const override { return "local:" + m_system->spec(); }

  private:
    std::unique_ptr<MemorySystem> m_system;
};

} // namespace

// --- Data model -> JSON
// -------------------------------------------------------------------------------

json to_json(const data::Message& message) {
    json out{{"id", message.id}, {"role", message.role}, {"content", message.content}};
    // An app's log (the dynamic suite) as the app emitted it, so an adapter can store it natively:
    // when it was logged, the app, the API, the request and the response. Never the grading aids
    // (AppLog::details: the surface strings its evidence is matched by).
    if (message.app_log) {
        const data::AppLog& log = *message.app_log;
        out["timestamp"] = log.timestamp;
        out["app_log"] = json{{"timestamp", log.timestamp},
                              {"app", log.app},
                              {"api", log.api},
                              {"request", log.request},
                              {"response", log.response}};
    }
    return out;
}

json to_json(const data::Session& session) {
    json messages = json::array();
    for (const data::Message& m : session.messages)
        messages.push_back(to_json(m));
    return json{
        {"id", session.id}, {"timestamp", session.timestamp}, {"messages", std::move(messages)}};
}

json to_json(const Memory& memory) {
    json out{{"id", memory.id}, {"text", memory.text}};
    if (!memory.created_at.empty())
        out["created_at"] = memory.created_at;
    if (!memory.updated_at.empty())
        out["updated_at"] = memory.updated_at;
    if (!memory.valid_at.empty())
        out["valid_at"] = memory.valid_at;
    out["sources"] = memory.sources;
    return out;
}

json to_json(const Hit& hit) {
    json out = to_json(hit.memory);
    out["score"] = hit.score;
    return out;
}

json to_json(const MemoryEvent& event) {
    json out{{"memory_id", event.memory_id}, {"event", event.event}};
    if (!event.old_text.empty())
        out["old_text"] = event.old_text;
    if (!event.new_text.empty())
        out["new_text"] = event.new_text;
    if (!event.at.empty())
        out["at"] = event.at;
    out["sources"] = event.sources;
    return out;
}

json to_json(const Capabilities& capabilities) {
    // uses_ground_truth stays inside memfail: an outside system never sees the answers. A
    // MemorySystem has no provenance operation (its memories carry sources), hence false.
    return json{{"provenance", capabilities.provenance},
                {"history", capabilities.history},
                {"as_of", capabilities.as_of},
                {"provenance_op", false},
                {"idempotent_store", capabilities.idempotent_store},
                {"answer", capabilities.answers}};
}

json to_json(const SystemAnswer& answer) {
    json out{{"answer", answer.text}};
    if (answer.confidence)
        out["confidence"] = *answer.confidence;
    out["sources"] = answer.sources;
    return out;
}

// --- JSON -> data model
// ---------------------------------------------------------------------------------

Result<data::Message> message_from_json(const json& j, ErrorKind kind, const std::string& where) {
    MF_TRY(require_object(j, kind, where));
    data::Message m;
    MF_TRY_ASSIGN(m.id, required_string(j, "id", kind, where));
    MF_TRY_ASSIGN(m.role, required_string(j, "role", kind, where));
    MF_TRY_ASSIGN(m.content, required_string(j, "content", kind, where));
    // An app log sent with its message (to_json above); anything unreadable in it is ignored, as
    // unknown fields are.
    if (const auto al = j.find("app_log"); al != j.end() && al->is_object()) {
        data::AppLog log;
        const auto text = [&](const char* key) {
            const auto it = al->find(key);
            return it != al->end() && it->is_string() ? it->get<std::string>() : std::string();
        };
        log.timestamp = text("timestamp");
        log.app = text("app");
        log.api = text("api");
        if (const auto r = al->find("request"); r != al->end()) log.request = *r;
        if (const auto r = al->find("response"); r != al->end()) log.response = *r;
        m.app_log = std::move(log);
    }
    return m;
}

Result<data::Session> session_from_json(const json& j, ErrorKind kind, const std::string& where) {
    MF_TRY(require_object(j, kind, where));
    data::Session s;
    MF_TRY_ASSIGN(s.id, required_string(j, "id", kind, where));
    MF_TRY_ASSIGN(s.timestamp, required_string(j, "timestamp", kind, where));
    MF_TRY_ASSIGN(s.messages,
                  array_of<data::Message>(j, "messages", true, kind, where, message_from_json));
    return s;
}

Result<Memory> memory_from_json(const json& j, ErrorKind kind, const std::string& where) {
    MF_TRY(require_object(j, kind, where));
    Memory m;
    MF_TRY_ASSIGN(m.id, required_string(j, "id", kind, where));
    if (m.id.empty())
        return make_error(kind, "a memory id must not be empty", field_path(where, "id"));
    MF_TRY_ASSIGN(m.text, required_string(j, "text", kind, where));
    MF_TRY_ASSIGN(m.created_at, optional_string(j, "created_at", kind, where));
    MF_TRY_ASSIGN(m.updated_at, optional_string(j, "updated_at", kind, where));
    MF_TRY_ASSIGN(m.valid_at, optional_string(j, "valid_at", kind, where));
    MF_TRY_ASSIGN(m.sources, optional_strings(j, "sources", kind, where));
    return m;
}

Result<Hit> hit_from_json(const json& j, ErrorKind kind, const std::string& where) {
    Hit hit;
    MF_TRY_ASSIGN(hit.memory, memory_from_json(j, kind, where));
    const auto it = j.find("score");
    if (it != j.end() && !it->is_null()) {
        if (!it->is_number())
            return type_error(kind, field_path(where, "score"), "a number", *it);
        hit.score = it->get<double>();
    }
    return hit;
}

Result<MemoryEvent> event_from_json(const json& j, ErrorKind kind, const std::string& where) {
    MF_TRY(require_object(j, kind, where));
    MemoryEvent e;
    MF_TRY_ASSIGN(e.memory_id, required_string(j, "memory_id", kind, where));
    MF_TRY_ASSIGN(e.event, required_string(j, "event", kind, where));
    if (e.event != "add" && e.event != "update" && e.event != "delete")
        return make_error(kind,
                          "expected \"add\", \"update\" or \"delete\", got \"" + e.event + "\"",
                          field_path(where, "event"));
    MF_TRY_ASSIGN(e.old_text, optional_string(j, "old_text", kind, where));
    MF_TRY_ASSIGN(e.new_text, optional_string(j, "new_text", kind, where));
    MF_TRY_ASSIGN(e.at, optional_string(j, "at", kind, where));
    MF_TRY_ASSIGN(e.sources, optional_strings(j, "sources", kind, where));
    return e;
}

Result<SystemAnswer> answer_from_json(const json& j, ErrorKind kind, const std::string& where) {
    MF_TRY(require_object(j, kind, where));
    SystemAnswer a;
    MF_TRY_ASSIGN(a.text, required_string(j, "answer", kind, where));
    if (a.text.size() > k_max_answer_bytes)
        return make_error(kind,
                          "the answer is " + std::to_string(a.text.size()) + " bytes; at most " +
                              std::to_string(k_max_answer_bytes) + " are read",
                          field_path(where, "answer"));
    const auto confidence = j.find("confidence");
    if (confidence != j.end() && !confidence->is_null()) {
        const std::string path = field_path(where, "confidence");
        if (!confidence->is_number())
            return type_error(kind, path, "a number from 0 to 1", *confidence);
        const double value = confidence->get<double>();
        if (!(value >= 0 && value <= 1)) // NaN fails too
            return make_error(kind, "expected a number from 0 to 1, got " + confidence->dump(),
                              path);
        a.confidence = value;
    }
    if (const auto sources = j.find("sources");
        sources != j.end() && sources->is_array() && sources->size() > k_max_answer_sources)
        return make_error(kind,
                          std::to_string(sources->size()) + " sources; at most " +
                              std::to_string(k_max_answer_sources) + " are read",
                          field_path(where, "sources"));
    MF_TRY_ASSIGN(a.sources, optional_strings(j, "sources", kind, where));
    return a;
}

Result<Capabilities> capabilities_from_json(const json& j, ErrorKind kind,
                                            const std::string& where) {
    MF_TRY(require_object(j, kind, where));
    Capabilities caps;
    const std::pair<const char*, bool*> flags[] = {{"provenance", &caps.provenance},
                                                   {"history", &caps.history},
                                                   {"as_of", &caps.as_of},
                                                   {"idempotent_store", &caps.idempotent_store},
                                                   {"answer", &caps.answers}};
    for (const auto& [name, flag] : flags) {
        const auto it = j.find(name);
        if (it == j.end() || it->is_null())
            continue;
        if (!it->is_boolean())
            return type_error(kind, field_path(where, name), "true or false", *it);
        *flag = it->get<bool>();
    }
    const auto op = j.find("provenance_op");
    if (op != j.end() && !op->is_null() && !op->is_boolean())
        return type_error(kind, field_path(where, "provenance_op"), "true or false", *op);
    return caps;
}

bool has_provenance_op(const json& capabilities) {
    if (!capabilities.is_object())
        return false;
    const auto it = capabilities.find("provenance_op");
    return it != capabilities.end() && it->is_boolean() && it->get<bool>();
}

// --- Reading an adapter's reply
// ---------------------------------------------------------------------------

namespace {

// The length of the well-formed UTF-8 sequence starting at text[i] (Unicode's table 3-7: no
// overlong forms, no surrogates, nothing above U+10FFFF), or 0 when the byte there starts none.
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
    const auto cont = [&](std::size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
        return i + k < text.size() && byte(k) >= lo && byte(k) <= hi;
    };
    const unsigned char c = byte(0);
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return cont(1) ? 2 : 0;
    if (c == 0xE0)
        return cont(1, 0xA0) && cont(2) ? 3 : 0;
    if (c == 0xED)
        return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
    if (c >= 0xE1 && c <= 0xEF)
        return cont(1) && cont(2) ? 3 : 0;
    if (c == 0xF0)
        return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    if (c >= 0xF1 && c <= 0xF3)
        return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (c == 0xF4)
        return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    return 0;
}

// The value of the 4 hex digits at text[i], if they are hex digits.
std::optional<unsigned> hex4(std::string_view text, std::size_t i) {
    if (i + 4 > text.size())
        return std::nullopt;
    unsigned value = 0;
    for (std::size_t k = i; k < i + 4; ++k) {
        const char c = text[k];
        unsigned digit = 0;
        if (c >= '0' && c <= '9')
            digit = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f')
            digit = static_cast<unsigned>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            digit = static_cast<unsigned>(c - 'A' + 10);
        else
            return std::nullopt;
        value = value * 16 + digit;
    }
    return value;
}

std::string utf8_of(unsigned code_point) { // a BMP code point that is not a surrogate
    std::string out;
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
    return out;
}

// Whether `code_point` occurs in `text`, raw or as a \u escape (either case of hex digit).
bool occurs(std::string_view text, unsigned code_point) {
    if (text.find(utf8_of(code_point)) != std::string_view::npos)
        return true;
    for (std::size_t at = text.find("\\u"); at != std::string_view::npos; at = text.find("\\u", at + 2))
        if (hex4(text, at + 2) == code_point)
            return true;
    return false;
}

std::string hex_byte(unsigned char byte) {
    constexpr char digits[] = "0123456789abcdef";
    return {digits[byte >> 4], digits[byte & 0xF]};
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

} // namespace

ReplyJson ReplyJson::parse(std::string_view text) {
    ReplyJson reply;
    // Copies the text, replacing each sequence inside a string that is not UTF-8 by open + what it
    // was ("ff", or "udce9" for an escaped lone surrogate) + close. Outside strings nothing is
    // touched: a stray byte there leaves the text unparseable, as it should.
    std::string open, close;
    std::string out;
    bool changed = false;
    bool in_string = false;
    const auto mark = [&](const std::string& what) {
        if (open.empty()) {
            // The markers are a pair of Unicode noncharacters the text does not contain, so every
            // one found after parsing is ours. Sixteen pairs to choose from; a reply holding all of
            // them stays unparsed ("not JSON").
            for (unsigned cp = 0xFDD0; cp < 0xFDF0 && open.empty(); cp += 2)
                if (!occurs(text, cp) && !occurs(text, cp + 1)) {
                    open = utf8_of(cp);
                    close = utf8_of(cp + 1);
                }
            if (open.empty())
                return false;
        }
        out += open + what + close;
        changed = true;
        return true;
    };
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (!in_string || c == '"') {
            in_string = in_string ? false : c == '"';
            out += c;
            ++i;
            continue;
        }
        if (c == '\\') {
            if (i + 1 < text.size() && text[i + 1] == 'u') {
                const auto unit = hex4(text, i + 2);
                if (unit && *unit >= 0xD800 && *unit <= 0xDFFF) {
                    const bool paired = *unit <= 0xDBFF && i + 12 <= text.size() &&
                                        text[i + 6] == '\\' && text[i + 7] == 'u' &&
                                        hex4(text, i + 8) >= 0xDC00u && hex4(text, i + 8) <= 0xDFFFu;
                    if (paired) {
                        out.append(text.substr(i, 12));
                        i += 12;
                        continue;
                    }
                    if (!mark(lower(text.substr(i + 1, 5))))
                        return reply;
                    i += 6;
                    continue;
                }
            }
            out.append(text.substr(i, std::min<std::size_t>(2, text.size() - i)));
            i += 2;
            continue;
        }
        const std::size_t length = utf8_sequence(text, i);
        if (length == 0) {
            if (!mark(hex_byte(static_cast<unsigned char>(c))))
                return reply;
            ++i;
            continue;
        }
        out.append(text.substr(i, length));
        i += length;
    }
    reply.value = changed ? json::parse(out, nullptr, false) : json::parse(text, nullptr, false);
    if (changed) {
        reply.m_open = std::move(open);
        reply.m_close = std::move(close);
    }
    return reply;
}

std::optional<Error> ReplyJson::invalid_utf8(const json& part, const std::string& where,
                                             const std::string& path) const {
    if (m_open.empty())
        return std::nullopt;
    const auto bad = [&](const std::string& text, const std::string& field) -> std::optional<Error> {
        const std::size_t at = text.find(m_open);
        if (at == std::string::npos)
            return std::nullopt;
        const std::size_t from = at + m_open.size();
        const std::string what = text.substr(from, text.find(m_close, from) - from);
        const std::string detail = what.size() == 2 ? "byte 0x" + what : "lone surrogate \\" + what;
        return make_error(ErrorKind::protocol,
                          "not valid UTF-8 (" + detail + " at offset " + std::to_string(at) + ")",
                          where + ": " + (field.empty() ? "(top level)" : field));
    };
    if (part.is_string())
        return bad(part.get_ref<const std::string&>(), path);
    if (part.is_array()) {
        for (std::size_t i = 0; i < part.size(); ++i)
            if (auto found = invalid_utf8(part[i], where, path + "[" + std::to_string(i) + "]"))
                return found;
    } else if (part.is_object()) {
        for (const auto& [key, item] : part.items()) {
            if (auto found = bad(key, field_path(path, "(a key)")))
                return found;
            if (auto found = invalid_utf8(item, where, field_path(path, key)))
                return found;
        }
    }
    return std::nullopt;
}

// --- Errors
// ----------------------------------------------------------------------------------------------

json error_json(const Error& error) {
    return json{{"error", {{"kind", protocol_kind_name(error.kind)}, {"message", error.message}}}};
}

Error error_from_json(const json& j, const std::string& where) {
    const auto malformed = [&](const std::string& what) {
        return make_error(ErrorKind::protocol, "answered a malformed error object: " + what, where);
    };
    if (!j.is_object() || !j.contains("error"))
        return malformed("no \"error\" field");
    const json& e = j["error"];
    if (!e.is_object())
        return malformed("\"error\" is " + type_name(e) + ", not an object");
    const auto kind = e.find("kind");
    if (kind == e.end() || !kind->is_string())
        return malformed("\"error.kind\" is not a string");
    const auto message = e.find("message");
    if (message != e.end() && !message->is_null() && !message->is_string())
        return malformed("\"error.message\" is not a string");
    const std::string name = kind->get<std::string>();
    std::string text =
        message != e.end() && message->is_string() ? message->get<std::string>() : "";
    ErrorKind mapped = ErrorKind::internal;
    if (name == "unsupported")
        mapped = ErrorKind::unsupported;
    else if (name == "invalid_request")
        mapped = ErrorKind::invalid_input;
    else if (name == "not_found")
        mapped = ErrorKind::not_found;
    else if (name == "unauthorized")
        mapped = ErrorKind::auth;
    else if (name != "internal")
        text = "(error kind '" + name + "') " + text;
    if (text.empty())
        text = "the adapter reported an error of kind '" + name + "' without a message";
    return make_error(mapped, std::move(text), where);
}

// --- Dispatcher
// ------------------------------------------------------------------------------------------

json handle_operation(MemorySystem& system, std::string_view op, const json& params) {
    try {
        return dispatch(system, op, params);
    } catch (const std::exception& e) {
        // A throwing system (or a JSON type error we missed) must not take a server down.
        return answer_error(ErrorKind::internal, std::string("the operation failed: ") + e.what());
    } catch (...) {
        return answer_error(ErrorKind::internal, "the operation failed with an unknown exception");
    }
}

std::unique_ptr<Transport> make_local_transport(std::unique_ptr<MemorySystem> system) {
    MF_ASSERT(system != nullptr, "make_local_transport needs a system");
    return std::make_unique<LocalTransport>(std::move(system));
}

} // namespace memfail::memory::adapter
