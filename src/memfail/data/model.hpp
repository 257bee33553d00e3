// SPDX-License-Identifier: MIT
// The one data model every suite uses: scenarios of sessions and probes with structured evidence.
// Its JSONL form ("format": "memfail/1") is specified in docs/DATASETS.md; keep the two in step.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace memfail::data {

inline constexpr const char* k_format = "memfail/1";

struct Message {
    std::string id;       // stable and unique across the whole scenario: the provenance handle
    std::string role;     // "user" or "assistant"
    std::string content;
};

struct Session {
    std::string id;
    std::string timestamp;  // ISO 8601, e.g. "2026-03-01T09:00:00Z"
    std::vector<Message> messages;
};

// What a key detail is to its fact (docs/TAXONOMY.md). Identity details say who or what the fact
// is about and the thing stated (entity, behaviour, preference, a chain's anchors): a memory that
// holds none of the fact's content holds nothing of it. Qualifier details say how the thing holds
// (condition, exclusivity, polarity, time, quantity): losing one is a summary error.
enum class DetailRole { identity, qualifier };
const char* detail_role_name(DetailRole role);
std::optional<DetailRole> parse_detail_role(const std::string& name);
// The role a detail has when its file does not say: "entity", "behaviour", "preference", "detail"
// and "anchor_*" are identity; everything else ("condition", "link", "exclusivity", ...) qualifier.
DetailRole default_detail_role(const std::string& name);

// One literal detail a memory must keep for a fact to count as faithfully stored, e.g. the
// condition of a conditional rule. `variants` are accepted phrasings; the first is canonical.
// Matching is on normalised text at word boundaries (text::normalize).
struct KeyDetail {
    KeyDetail() = default;
    KeyDetail(std::string name_, std::vector<std::string> variants_, std::optional<DetailRole> role_ = std::nullopt)
        : name(std::move(name_)), variants(std::move(variants_)), role(role_) {}

    std::string name;  // "entity", "behaviour", "condition", "preference", "anchor_1", ...
    std::vector<std::string> variants;
    std::optional<DetailRole> role;  // absent: default_detail_role(name)
    DetailRole effective_role() const { return role ? *role : default_detail_role(name); }
};

// One fact a probe needs, with where it was stated and what must survive summarisation.
struct EvidenceFact {
    std::string id;
    std::string text;                      // the fact stated canonically, holding every key detail
    std::vector<std::string> message_ids;  // messages that state it (several for a split rule)
    std::vector<KeyDetail> key_details;
    // The sentences of the cited messages that state the fact, verbatim. A set of memories that
    // holds every one of them (after normalisation) kept the fact faithfully, whatever its details.
    // Optional: without them only the key details are checked.
    std::vector<std::string> statements;
    // False when the fact's key details could not all be derived (an imported row whose condition
    // is not a separable phrase): the listed details are still checked, but keeping them all does
    // not show the fact was kept, and the report says the summary stage is incomplete.
    bool details_complete = true;
};

enum class ProbeKind { yes_no, list, open, mcq, abstain };
const char* probe_kind_name(ProbeKind kind);
std::optional<ProbeKind> parse_probe_kind(const std::string& name);

struct Probe {
    std::string id;
    std::string after_session;  // the checkpoint: asked once this session is stored
    std::string question;
    ProbeKind kind = ProbeKind::open;
    std::vector<std::string> choices;  // mcq only: option texts in letter order A, B, ...
    std::string correct_choice;        // mcq only: "A".."E"
    std::string answer;                // reference answer
    std::vector<EvidenceFact> evidence;  // empty for abstain probes: nothing to find
    nlohmann::json meta = nlohmann::json::object();  // dataset-specific labels (condition_met, hops)
};

struct Scenario {
    std::string format = k_format;
    std::string id;
    std::string suite;    // "memfail", "writ", "dynamic"
    std::string dataset;  // "conditional_facts_easy", ...
    std::vector<Session> sessions;
    std::vector<Probe> probes;
    nlohmann::json meta = nlohmann::json::object();  // generator, seed, version, dedup report
};

// Maps message ids to their messages (and sessions) for one scenario. Pointers stay valid while the
// scenario is neither modified nor moved.
class MessageIndex {
public:
    explicit MessageIndex(const Scenario& scenario);
    const Message* message(const std::string& id) const;
    const Session* session_of(const std::string& message_id) const;
    // Position of a session in scenario order, or npos.
    std::size_t session_position(const std::string& session_id) const;

private:
    std::map<std::string, std::pair<const Message*, const Session*>> m_messages;
    std::map<std::string, std::size_t> m_session_positions;
};

// All messages of a scenario in order.
std::size_t message_count(const Scenario& scenario);

}  // namespace memfail::data
