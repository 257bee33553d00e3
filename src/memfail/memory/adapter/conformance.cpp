// SPDX-License-Identifier: MIT
// The conformance battery: each rule of docs/ADAPTERS.md checked against a live adapter.
#include <memfail/memory/adapter/conformance.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <memfail/core/text.hpp>

namespace memfail::memory::adapter {

using nlohmann::json;

namespace {

// Every check, in the order the battery runs them. When `hello` fails the rest are reported as
// skipped under these names, so a report always lists the whole battery.
constexpr const char* k_hello = "hello";
constexpr const char* k_reset_start = "reset empties (start)";
constexpr const char* k_store = "store sessions";
constexpr const char* k_round_trip = "round trip (k=3)";
constexpr const char* k_best_first = "best first";
constexpr const char* k_k1 = "k=1 respected";
constexpr const char* k_k2 = "k=2 respected";
constexpr const char* k_stable_all = "stable ids: all_memories";
constexpr const char* k_stable_retrieve = "stable ids: retrieve";
constexpr const char* k_sources = "sources echo message ids";
constexpr const char* k_op_history = "optional op: history";
constexpr const char* k_op_as_of = "optional op: state_as_of";
constexpr const char* k_op_provenance = "optional op: provenance";
constexpr const char* k_op_answer = "optional op: answer";
constexpr const char* k_idempotent = "idempotent store";
constexpr const char* k_bad_session = "malformed: store without session";
constexpr const char* k_bad_k = "malformed: k is not a number";
constexpr const char* k_bad_op = "malformed: unknown op";
constexpr const char* k_reset_end = "reset empties (end)";

constexpr const char* k_all_checks[] = {
    k_hello,         k_reset_start,    k_store,          k_round_trip,  k_best_first,   k_k1,
    k_k2,            k_stable_all,     k_stable_retrieve, k_sources,    k_op_history,   k_op_as_of,
    k_op_provenance, k_op_answer,      k_idempotent,     k_bad_session, k_bad_k,        k_bad_op,
    k_reset_end,
};

// The fixed conversation every adapter stores: two sessions a week apart, facts with words no
// other message shares, so a word-matching system and an embedding system can both find them.
data::Session first_session() {
    return {"conf-s1",
            "2026-03-01T09:00:00Z",
            {{"conf-m1", "user", "My sister Priya moved to Lisbon last spring and now teaches violin there."},
             {"conf-m2", "assistant", "That is a big change. Is she enjoying life by the coast?"},
             {"conf-m3", "user", "I am allergic to peanuts, so I always read the labels on granola bars."},
             {"conf-m4", "assistant", "A good habit: plenty of granola brands are made on lines shared with nuts."}}};
}
data::Session second_session() {
    return {"conf-s2",
            "2026-03-08T18:30:00Z",
            {{"conf-m5", "user", "Our team moved the weekly planning meeting from Monday to Thursday afternoon."},
             {"conf-m6", "user", "I keep my bicycle in the basement because the garage floods every winter."}}};
}
// Between the two sessions: state_as_of() here must not show the second one.
constexpr const char* k_between_sessions = "2026-03-05T00:00:00Z";
const std::set<std::string> k_second_session_ids = {"conf-m5", "conf-m6"};

// A fact counts as found when a retrieved memory came from its message (by sources) or still says
// its detail (for systems that rewrite text or cannot tell sources).
struct Probe {
    std::string query;
    std::string message_id;
    std::vector<std::string> details;  // any of these, matched on normalised words
};
const std::vector<Probe>& round_trip_probes() {
    static const std::vector<Probe> probes = {
        {"Which city does my sister Priya live in now?", "conf-m1", {"lisbon"}},
        {"What am I allergic to?", "conf-m3", {"peanut", "peanuts"}},
        {"On which day is the weekly planning meeting now?", "conf-m5", {"thursday"}},
        {"Where do I keep my bicycle?", "conf-m6", {"basement"}},
    };
    return probes;
}
// Shares words with most stored messages, so a system holding them has more than k to offer.
constexpr const char* k_broad_query = "sister Priya peanuts granola planning meeting bicycle basement";

bool is_structured(const Error& e) {
    // error_from_json() maps an adapter's {"error"} object to one of these; anything else is the
    // transport failing (crash, timeout, garbage), which is what a malformed request must not cause.
    return e.kind == ErrorKind::invalid_input || e.kind == ErrorKind::unsupported ||
           e.kind == ErrorKind::not_found || e.kind == ErrorKind::internal;
}

// The protocol's name for an error kind, as an adapter would have written it.
std::string protocol_kind(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::invalid_input: return "invalid_request";
        case ErrorKind::unsupported: return "unsupported";
        case ErrorKind::not_found: return "not_found";
        case ErrorKind::internal: return "internal";
        default: return std::string("transport failure (") + error_kind_name(kind) + ")";
    }
}

std::string quote_ids(const std::vector<std::string>& ids) {
    std::vector<std::string> quoted;
    for (const auto& id : ids) quoted.push_back("'" + id + "'");
    return "[" + text::join(quoted, ", ") + "]";
}

bool mentions(const Memory& m, const Probe& probe) {
    if (std::find(m.sources.begin(), m.sources.end(), probe.message_id) != m.sources.end()) return true;
    const std::string normalized = text::normalize(m.text);
    for (const auto& d : probe.details)
        if (text::normalized_contains(normalized, text::normalize(d))) return true;
    return false;
}

class Battery {
public:
    explicit Battery(Transport& transport) : m_transport(transport) { m_report.target = transport.describe(); }

    ConformanceReport run() {
        if (!hello()) {
            for (const char* name : k_all_checks)
                if (m_report.find(name) == nullptr) skip(name, "hello failed, so nothing else can be trusted");
            return std::move(m_report);
        }
        expect_empty(k_reset_start, /*also_retrieve=*/false);
        store();
        round_trip();
        best_first();
        k_respected(k_k1, 1);
        k_respected(k_k2, 2);
        stable_all();
        stable_retrieve();
        sources();
        optional_history();
        optional_as_of();
        optional_provenance();
        optional_answer();
        idempotent();
        malformed(k_bad_session, "store_conversation", json::object(), {ErrorKind::invalid_input});
        malformed(k_bad_k, "retrieve_memories",
                  json{{"query", "Where do I keep my bicycle?"}, {"history", json::array()}, {"k", "x"}},
                  {ErrorKind::invalid_input});
        malformed(k_bad_op, "conformance_no_such_op", json::object(),
                  {ErrorKind::unsupported, ErrorKind::invalid_input});
        expect_empty(k_reset_end, /*also_retrieve=*/true);
        return std::move(m_report);
    }

private:
    void add(const char* name, CheckStatus status, std::string detail) {
        m_report.checks.push_back({name, status, std::move(detail)});
    }
    void pass(const char* name, std::string detail) { add(name, CheckStatus::pass, std::move(detail)); }
    void fail(const char* name, std::string detail) { add(name, CheckStatus::fail, std::move(detail)); }
    void skip(const char* name, std::string detail) { add(name, CheckStatus::skip, std::move(detail)); }

    Result<json> call(std::string_view op, const json& params) { return m_transport.call(op, params); }

    // The memories of an all_memories / retrieve / state_as_of answer, shape-checked.
    Result<std::vector<Memory>> memories_of(const json& result, std::string_view op) {
        const std::string where = std::string(op);
        if (!result.is_object() || !result.contains("memories") || !result["memories"].is_array())
            return make_error(ErrorKind::protocol, "the answer has no \"memories\" array", where);
        std::vector<Memory> out;
        const json& list = result["memories"];
        for (std::size_t i = 0; i < list.size(); ++i) {
            MF_TRY_ASSIGN(Memory m, memory_from_json(list[i], ErrorKind::protocol,
                                                     where + ".memories[" + std::to_string(i) + "]"));
            out.push_back(std::move(m));
        }
        return out;
    }
    Result<std::vector<Memory>> all_memories() {
        MF_TRY_ASSIGN(json result, call("all_memories", json::object()));
        return memories_of(result, "all_memories");
    }
    // Raw retrieval answer: memories plus their scores when every one carries a number.
    struct Retrieved {
        std::vector<Memory> memories;
        std::vector<double> scores;  // empty unless every memory had a numeric score
    };
    Result<Retrieved> retrieve(const std::string& query, int k) {
        MF_TRY_ASSIGN(json result, call("retrieve_memories",
                                        json{{"query", query}, {"history", json::array()}, {"k", k}}));
        Retrieved out;
        MF_TRY_ASSIGN(out.memories, memories_of(result, "retrieve_memories"));
        bool all_scored = true;
        for (const json& m : result["memories"]) {
            if (m.is_object() && m.contains("score") && m["score"].is_number()) out.scores.push_back(m["score"].get<double>());
            else all_scored = false;
        }
        if (!all_scored) out.scores.clear();
        return out;
    }

    bool hello() {
        auto answer = call("hello", json{{"protocol", k_protocol_version}});
        if (!answer) {
            fail(k_hello, answer.error().describe());
            return false;
        }
        const json& r = *answer;
        if (!r.is_object() || !r.contains("protocol") || !r["protocol"].is_number_integer()) {
            fail(k_hello, "the answer has no integer \"protocol\"");
            return false;
        }
        if (r["protocol"].get<long long>() != k_protocol_version) {
            fail(k_hello, "the adapter speaks protocol " + r["protocol"].dump() + "; memfail speaks " +
                              std::to_string(k_protocol_version));
            return false;
        }
        if (!r.contains("capabilities") || !r["capabilities"].is_object()) {
            fail(k_hello, "the answer has no \"capabilities\" object");
            return false;
        }
        auto caps = capabilities_from_json(r["capabilities"], ErrorKind::protocol, "hello.capabilities");
        if (!caps) {
            fail(k_hello, caps.error().describe());
            return false;
        }
        m_caps = *caps;
        m_provenance_op = has_provenance_op(r["capabilities"]);
        m_report.capabilities = r["capabilities"];
        if (r.contains("system") && r["system"].is_string()) m_report.system = r["system"].get<std::string>();
        std::vector<std::string> claimed;
        for (auto it = r["capabilities"].begin(); it != r["capabilities"].end(); ++it)
            if (it.value().is_boolean() && it.value().get<bool>()) claimed.push_back(it.key());
        // A missing name is a fault of its own, not a reason to distrust the rest.
        if (m_report.system.empty()) {
            fail(k_hello, "the answer has no \"system\" name");
            return true;
        }
        pass(k_hello, "protocol " + std::to_string(k_protocol_version) + ", '" + m_report.system + "', capabilities: " +
                          (claimed.empty() ? "none" : text::join(claimed, ", ")));
        return true;
    }

    void expect_empty(const char* name, bool also_retrieve) {
        auto reset = call("reset", json::object());
        if (!reset) return fail(name, "reset failed: " + reset.error().describe());
        if (!reset->is_object()) return fail(name, "reset answered " + reset->dump() + ", not an object");
        auto all = all_memories();
        if (!all) return fail(name, "all_memories after reset failed: " + all.error().describe());
        if (!all->empty())
            return fail(name, "all_memories holds " + std::to_string(all->size()) + " memories after reset");
        if (also_retrieve) {
            auto hits = retrieve(round_trip_probes().back().query, 3);
            if (!hits) return fail(name, "retrieve_memories after reset failed: " + hits.error().describe());
            if (!hits->memories.empty())
                return fail(name, "retrieve_memories returned " + std::to_string(hits->memories.size()) +
                                      " memories after reset");
            return pass(name, "all_memories and retrieve_memories answer nothing after reset");
        }
        pass(name, "all_memories answers [] after reset");
    }

    void store() {
        for (const auto& session : {first_session(), second_session()}) {
            for (const auto& m : session.messages) m_stored_ids.insert(m.id);
            auto r = call("store_conversation", json{{"session", to_json(session)}});
            if (!r) return fail(k_store, "storing session " + session.id + " failed: " + r.error().describe());
        }
        auto all = all_memories();
        if (!all) return fail(k_store, "all_memories after storing failed: " + all.error().describe());
        if (all->empty()) return fail(k_store, "2 sessions (6 messages) stored, but all_memories is empty");
        m_memories = *all;
        pass(k_store, "2 sessions (6 messages) stored; all_memories holds " + std::to_string(all->size()));
    }

    void round_trip() {
        std::vector<std::string> missed;
        for (const auto& probe : round_trip_probes()) {
            auto hits = retrieve(probe.query, 3);
            if (!hits) return fail(k_round_trip, "\"" + probe.query + "\": " + hits.error().describe());
            // Only the first 3 count: returning more than k is the k checks' fault to name, not this one's.
            const auto top = std::min<std::size_t>(hits->memories.size(), 3);
            const bool found = std::any_of(hits->memories.begin(), hits->memories.begin() + static_cast<std::ptrdiff_t>(top),
                                           [&](const Memory& m) { return mentions(m, probe); });
            if (!found) missed.push_back("\"" + probe.query + "\" did not bring back " + probe.message_id);
            if (!hits->scores.empty()) m_scored.push_back(hits->scores);
            for (const auto& m : hits->memories) m_retrieved.push_back(m);
        }
        if (!missed.empty()) return fail(k_round_trip, text::join(missed, "; "));
        pass(k_round_trip, std::to_string(round_trip_probes().size()) + " facts each found in the top 3 by a query from their words");
    }

    // Judged on the round trip's answers; a row of its own so a mis-sorted list is named as such.
    void best_first() {
        if (m_scored.empty()) return skip(k_best_first, "no scores returned (score is optional)");
        for (const auto& scores : m_scored)
            for (std::size_t i = 1; i < scores.size(); ++i)
                if (scores[i] > scores[i - 1] + 1e-12)
                    return fail(k_best_first, "scores rise within one answer: " + std::to_string(scores[i - 1]) +
                                                  " then " + std::to_string(scores[i]));
        pass(k_best_first, "scores never rise within an answer");
    }

    void k_respected(const char* name, int k) {
        auto hits = retrieve(k_broad_query, k);
        if (!hits) return fail(name, hits.error().describe());
        const auto n = hits->memories.size();
        if (n > static_cast<std::size_t>(k))
            return fail(name, "asked for " + std::to_string(k) + ", got " + std::to_string(n));
        pass(name, "asked for " + std::to_string(k) + ", got " + std::to_string(n) +
                       (m_memories.size() > static_cast<std::size_t>(k) ? " (more were held)" : ""));
    }

    void stable_all() {
        if (m_memories.empty()) return skip(k_stable_all, "nothing stored to compare");
        std::set<std::string> ids;
        for (const auto& m : m_memories) {
            if (m.id.empty()) return fail(k_stable_all, "a memory has an empty id");
            if (!ids.insert(m.id).second) return fail(k_stable_all, "id '" + m.id + "' is given to two memories");
        }
        auto again = all_memories();
        if (!again) return fail(k_stable_all, "the second all_memories failed: " + again.error().describe());
        std::map<std::string, std::string> before, after;
        for (const auto& m : m_memories) before[m.id] = m.text;
        for (const auto& m : *again) after[m.id] = m.text;
        if (before != after) {
            std::vector<std::string> changed;
            for (const auto& [id, text] : before)
                if (!after.count(id)) changed.push_back(id);
            return fail(k_stable_all, "two calls in a row gave different ids or texts" +
                                          (changed.empty() ? std::string() : "; gone the second time: " + quote_ids(changed)));
        }
        pass(k_stable_all, std::to_string(before.size()) + " unique ids, the same in two calls");
    }

    void stable_retrieve() {
        const std::string query = round_trip_probes().front().query;
        auto first = retrieve(query, 3);
        auto second = retrieve(query, 3);
        if (!first || !second)
            return fail(k_stable_retrieve, (!first ? first.error() : second.error()).describe());
        std::vector<std::string> a, b;
        for (const auto& m : first->memories) a.push_back(m.id);
        for (const auto& m : second->memories) b.push_back(m.id);
        if (a.empty() && b.empty() && m_retrieved.empty())
            return skip(k_stable_retrieve, "retrieve_memories returned nothing to compare");
        if (a != b)
            return fail(k_stable_retrieve, "the same query gave " + quote_ids(a) + " then " + quote_ids(b));
        std::set<std::string> known;
        for (const auto& m : m_memories) known.insert(m.id);
        for (const auto& m : m_retrieved)
            if (!known.count(m.id))
                return fail(k_stable_retrieve, "retrieve_memories returned id '" + m.id + "', which all_memories does not list");
        pass(k_stable_retrieve, "the same query gave the same ids twice, all of them listed by all_memories");
    }

    void sources() {
        if (!m_caps.provenance) return skip(k_sources, "capabilities.provenance is false");
        if (m_memories.empty()) return skip(k_sources, "nothing stored to check");
        auto check = [&](const Memory& m, const std::string& op) -> std::string {
            if (m.sources.empty()) return op + ": memory '" + m.id + "' has no sources";
            for (const auto& s : m.sources)
                if (!m_stored_ids.count(s))
                    return op + ": memory '" + m.id + "' names source '" + s + "', which was never stored";
            return {};
        };
        for (const auto& m : m_memories)
            if (auto problem = check(m, "all_memories"); !problem.empty()) return fail(k_sources, problem);
        for (const auto& m : m_retrieved)
            if (auto problem = check(m, "retrieve_memories"); !problem.empty()) return fail(k_sources, problem);
        pass(k_sources, "every memory names stored message ids");
    }

    // An optional op: claimed -> must answer (shape checked by `shape`); not claimed -> must say
    // unsupported. Either way the adapter's answer must match what hello announced.
    template <class Shape>
    void optional_op(const char* name, const std::string& op, bool claimed, const std::string& flag,
                     const json& params, Shape shape) {
        auto r = call(op, params);
        if (!claimed) {
            if (r) return fail(name, op + " answered although capabilities." + flag + " is false; announce it");
            if (r.error().kind == ErrorKind::unsupported)
                return pass(name, "answers unsupported, as capabilities." + flag + " = false says");
            return fail(name, "capabilities." + flag + " is false, so " + op + " must answer the kind unsupported; got " +
                                  protocol_kind(r.error().kind) + ": " + r.error().message);
        }
        if (!r) return fail(name, "capabilities." + flag + " is true, but " + op + " failed: " + r.error().describe());
        const std::string problem = shape(*r);
        if (!problem.empty()) return fail(name, problem);
        pass(name, "works, as capabilities." + flag + " = true says");
    }

    const Memory* some_memory() const {
        for (const auto& m : m_memories)
            if (mentions(m, round_trip_probes().front())) return &m;
        return m_memories.empty() ? nullptr : &m_memories.front();
    }

    void optional_history() {
        const Memory* m = some_memory();
        if (m_caps.history && m == nullptr) return skip(k_op_history, "no memory to ask about");
        optional_op(k_op_history, "history", m_caps.history, "history",
                    json{{"memory_id", m ? m->id : std::string("conf-no-memory")}}, [](const json& r) -> std::string {
                        if (!r.is_object() || !r.contains("events") || !r["events"].is_array())
                            return "the answer has no \"events\" array";
                        for (std::size_t i = 0; i < r["events"].size(); ++i)
                            if (auto e = event_from_json(r["events"][i], ErrorKind::protocol,
                                                         "history.events[" + std::to_string(i) + "]");
                                !e)
                                return e.error().describe();
                        return {};
                    });
    }

    void optional_as_of() {
        optional_op(k_op_as_of, "state_as_of", m_caps.as_of, "as_of", json{{"timestamp", k_between_sessions}},
                    [this](const json& r) -> std::string {
                        auto memories = memories_of(r, "state_as_of");
                        if (!memories) return memories.error().describe();
                        // A state before the second session cannot hold what only that session said.
                        for (const auto& m : *memories)
                            for (const auto& s : m.sources)
                                if (k_second_session_ids.count(s))
                                    return "the state as of " + std::string(k_between_sessions) + " holds memory '" + m.id +
                                           "' from message " + s + ", stored a week later";
                        return {};
                    });
    }

    void optional_provenance() {
        const Memory* m = some_memory();
        if (m_provenance_op && m == nullptr) return skip(k_op_provenance, "no memory to ask about");
        optional_op(k_op_provenance, "provenance", m_provenance_op, "provenance_op",
                    json{{"memory_id", m ? m->id : std::string("conf-no-memory")}}, [this](const json& r) -> std::string {
                        if (!r.is_object() || !r.contains("sources") || !r["sources"].is_array())
                            return "the answer has no \"sources\" array";
                        for (const json& s : r["sources"]) {
                            if (!s.is_string()) return "a source is not a string: " + s.dump();
                            if (!m_stored_ids.count(s.get<std::string>()))
                                return "source '" + s.get<std::string>() + "' was never stored";
                        }
                        return {};
                    });
    }

    // The system's own answer to a question about a stored fact: its shape only (what it says is
    // for the suites to grade). The earlier conversation it is given is one message of its own.
    void optional_answer() {
        const data::Message earlier{"conf-h1", "user", "I have a question about my family."};
        optional_op(k_op_answer, "answer", m_caps.answers, "answer",
                    json{{"query", round_trip_probes().front().query}, {"history", json::array({to_json(earlier)})}},
                    [this, &earlier](const json& r) -> std::string {
                        auto answer = answer_from_json(r, ErrorKind::protocol, "answer");
                        if (!answer) return answer.error().describe();
                        for (const auto& s : answer->sources)
                            if (!m_stored_ids.count(s) && s != earlier.id)
                                return "source '" + s + "' is not the id of a message it was given";
                        return {};
                    });
    }

    void idempotent() {
        if (!m_caps.idempotent_store) return skip(k_idempotent, "capabilities.idempotent_store is false");
        if (m_memories.empty()) return skip(k_idempotent, "nothing stored to compare");
        auto r = call("store_conversation", json{{"session", to_json(first_session())}});
        if (!r) return fail(k_idempotent, "storing session conf-s1 again failed: " + r.error().describe());
        auto all = all_memories();
        if (!all) return fail(k_idempotent, "all_memories failed: " + all.error().describe());
        if (all->size() != m_memories.size())
            return fail(k_idempotent, "storing session conf-s1 again took all_memories from " +
                                          std::to_string(m_memories.size()) + " to " + std::to_string(all->size()));
        pass(k_idempotent, "storing session conf-s1 again kept " + std::to_string(all->size()) + " memories");
    }

    void malformed(const char* name, const std::string& op, const json& params, const std::vector<ErrorKind>& expected) {
        const auto restarts = m_transport.restarts();
        auto r = call(op, params);
        if (r) return fail(name, op + " " + params.dump() + " was accepted; it must answer an error");
        const Error& e = r.error();
        std::vector<std::string> wanted;
        for (ErrorKind k : expected) wanted.push_back(protocol_kind(k));
        if (!is_structured(e)) return fail(name, "not a structured error: " + e.describe());
        // The adapter must still be the same process, holding the same memories.
        auto next = all_memories();
        if (!next) return fail(name, "the next request failed: " + next.error().describe());
        if (m_transport.restarts() != restarts) return fail(name, "the adapter had to be restarted afterwards");
        if (std::find(expected.begin(), expected.end(), e.kind) == expected.end())
            return fail(name, "answered " + protocol_kind(e.kind) + " (" + e.message + "); expected " +
                                  text::join(wanted, " or "));
        pass(name, protocol_kind(e.kind) + ": " + e.message);
    }

    Transport& m_transport;
    ConformanceReport m_report;
    Capabilities m_caps;
    bool m_provenance_op = false;
    std::set<std::string> m_stored_ids;
    std::vector<Memory> m_memories;   // all_memories right after storing
    std::vector<Memory> m_retrieved;  // every memory the round trip brought back
    std::vector<std::vector<double>> m_scored;
};

}  // namespace

const char* check_status_name(CheckStatus status) {
    switch (status) {
        case CheckStatus::pass: return "pass";
        case CheckStatus::fail: return "fail";
        case CheckStatus::skip: return "skip";
    }
    return "fail";
}

bool ConformanceReport::passed() const { return count(CheckStatus::fail) == 0; }

std::size_t ConformanceReport::count(CheckStatus status) const {
    return static_cast<std::size_t>(
        std::count_if(checks.begin(), checks.end(), [&](const Check& c) { return c.status == status; }));
}

const Check* ConformanceReport::find(const std::string& name) const {
    for (const auto& c : checks)
        if (c.name == name) return &c;
    return nullptr;
}

ConformanceReport run_conformance(Transport& transport) { return Battery(transport).run(); }

Result<ConformanceReport> run_conformance_builtin(const Spec& spec, const SystemContext& context) {
    MF_TRY_ASSIGN(auto system, make_memory_system(spec, context));
    auto transport = make_local_transport(std::move(system));
    return run_conformance(*transport);
}

json to_json(const ConformanceReport& report) {
    json checks = json::array();
    for (const auto& c : report.checks)
        checks.push_back({{"name", c.name}, {"status", check_status_name(c.status)}, {"detail", c.detail}});
    return {{"target", report.target},
            {"system", report.system},
            {"capabilities", report.capabilities},
            {"passed", report.passed()},
            {"checks", std::move(checks)}};
}

}  // namespace memfail::memory::adapter
