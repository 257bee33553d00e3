// SPDX-License-Identifier: MIT
// The deterministic memory-side grader: for each evidence fact of a probe, is it stored, stored
// faithfully and retrieved in the top k? The first failing stage is the verdict (docs/TAXONOMY.md).
// The rules decide only what they can decide exactly and say `unverified` otherwise; provenance
// narrows which memories are examined, it never changes a verdict.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <memfail/data/model.hpp>
#include <memfail/grade/evidence.hpp>
#include <memfail/grade/stage.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::grade {

inline constexpr const char* k_memory_grader_version = "rules/3";

// Which memories were examined for a fact: those citing its messages (the system reports
// provenance: a cheaper look, never a different verdict) or every memory (it does not).
enum class Match { provenance, content };
const char* match_name(Match match);

// The check a fact's verdict could not be decided at, when the rules were unsure. `retrieval`: the
// store is faithful but what was served for the query differs from it (a negated or otherwise
// different text served under a memory's id), so what the reader saw needs a judge.
enum class Unsure { none, storage, summary, retrieval };
const char* unsure_name(Unsure unsure);

struct FactVerdict {
    std::string fact_id;
    // The rules' verdict: not_stored, summary_error, unverified (see `unsure`), not_retrieved or
    // retrieved. Definitions in docs/TAXONOMY.md; they do not depend on provenance.
    Stage stage = Stage::not_stored;
    Unsure unsure = Unsure::none;
    Match method = Match::provenance;
    // How the summary check was decided when it was: the memories hold the fact's statements
    // verbatim (`copy`), or lack a detail (`summary_error`).
    bool verbatim_copy = false;
    std::vector<std::string> stored_ids;       // memories holding the fact (its holders)
    std::vector<std::string> retrieved_ids;    // of those, the ones in the top k
    std::vector<std::string> missing_details;  // key details absent at the failing stage
    std::string explanation;                   // one sentence a person can read
    // The retrieval check over the holders, made whenever the fact has holders (also when its
    // summary is unsure, so a judge's "faithful" can be completed without asking again).
    bool retrieval_checked = false;
    bool retrieved = false;
    std::string retrieval_explanation;
    // The fact is placed only among several messages (an imported item its source does not pin to
    // one): a memory citing one of them is no proof it holds the fact, so once a judge finds the
    // fact stored, the judge (not provenance) decides whether it was retrieved.
    bool placed_only = false;
};

struct ProbeVerdict {
    // The probe's memory-side stage: a decided failure (not_stored, summary_error) of any fact
    // wins; otherwise `unverified` when any fact's storage or summary is unsure; otherwise the
    // earliest retrieval stage. Empty for probes with no evidence (abstain): those need the answer
    // stage and never count toward memory-side success.
    std::optional<Stage> stage;
    std::vector<FactVerdict> facts;
    bool needs_answer_stage() const { return !stage.has_value(); }
    bool memory_side_success() const { return stage == Stage::retrieved; }
};

// Combines fact stages into the probe's stage by the rule above.
Stage combine_fact_stages(const std::vector<Stage>& stages);

// What the grader knows of a scenario beyond one probe (docs/TAXONOMY.md, "The evidence contract"):
// every entity its facts are about, to tell whom a sentence is attached to (the nearest sentence
// before it that names someone); every detail phrase by name, to recognise a condition swapped for
// another; and each unit of its messages with its attachment, so a memory sentence that copies a
// message as the message has it is never taken for a contradicting copy of another fact.
class ScenarioEvidence {
public:
    explicit ScenarioEvidence(const data::Scenario& scenario);
    // From the probes alone, with no messages (tests, a probe graded on its own).
    explicit ScenarioEvidence(const std::vector<const data::Probe*>& probes);

    // The scenario's messages; null when built from probes alone.
    const data::MessageIndex* messages() const { return m_messages ? &*m_messages : nullptr; }
    // Entities a unit names (ids), sorted.
    std::vector<int> named(const evidence::Tokens& unit) const;
    // The id of a fact's entity detail, or -1.
    int entity_id(const data::KeyDetail& entity) const;
    // Per unit: the entities the nearest unit at or before it that names someone names (empty: none).
    std::vector<std::vector<int>> scopes(const std::vector<const evidence::Tokens*>& units) const;
    // True when some message holds this unit with this attachment (or the unit is attached to no one
    // and some message holds it).
    bool explained(const std::string& canon, const std::vector<int>& scope) const;
    // True when some message holds this unit with exactly this attachment (no one included).
    bool stated_with_scope(const std::string& canon, const std::vector<int>& scope) const;
    // Every phrase of a detail name across the scenario ("condition" -> every condition).
    bool is_detail_phrase(const std::string& name, const std::string& canon) const;
    bool is_entity_phrase(const std::string& canon) const { return m_entity_canon.count(canon) > 0; }

private:
    void add_probe(const data::Probe& probe);
    std::optional<data::MessageIndex> m_messages;
    std::map<std::string, int> m_entity_ids;  // canonical first variant -> id
    std::map<std::string, std::vector<std::pair<evidence::Tokens, int>>> m_by_first_token;
    // The same names by their last word with an "s" glued on (a possessive without its apostrophe).
    std::map<std::string, std::vector<std::pair<evidence::Tokens, int>>> m_by_possessive;
    std::set<std::string> m_entity_canon;
    std::map<std::string, std::set<std::string>> m_detail_phrases;
    std::unordered_map<std::string, std::vector<std::vector<int>>> m_message_units;
};

// A snapshot of everything a system holds, indexed once and shared by every probe graded against
// it: each memory's units (evidence::units) in a table of distinct units with token postings, the
// memories holding each word stem, and a message-id -> memories map, so grading a probe never
// rescans the store.
class MemorySnapshot {
public:
    MemorySnapshot(std::vector<memory::Memory> memories, bool provenance);

    const std::vector<memory::Memory>& memories() const { return m_memories; }
    bool provenance() const { return m_provenance; }
    // Indices of memories whose sources include `message_id`.
    const std::vector<std::size_t>& by_source(const std::string& message_id) const;
    const std::string& normalized_text(std::size_t index) const { return m_normalized[index]; }
    // Index of the memory with `id`, if held.
    std::optional<std::size_t> index_of(const std::string& id) const;

    // The distinct units of the store. The text analysis behind these is built on first use (once,
    // thread-safe): a checkpoint whose probes the MemFail rules never read (a suite's own checks)
    // pays nothing for it.
    const evidence::Unit& unit(std::uint32_t id) const { return analysis().units[id]; }
    std::optional<std::uint32_t> find_unit(const std::string& canon) const;
    // Units of a memory, in order (ids into the distinct table).
    const std::vector<std::uint32_t>& units_of(std::size_t memory) const { return analysis().memory_units[memory]; }
    // (memory, position) of each occurrence of a unit.
    const std::vector<std::pair<std::uint32_t, std::uint32_t>>& occurrences(std::uint32_t unit) const {
        return analysis().occurrences[unit];
    }
    // Distinct units holding a token; memories holding a word stem.
    const std::vector<std::uint32_t>& units_with(const std::string& token) const;
    const std::vector<std::uint32_t>& memories_with_stem(const std::string& stem) const;

private:
    struct Analysis {
        std::vector<evidence::Unit> units;
        std::unordered_map<std::string, std::uint32_t> unit_ids;
        std::vector<std::vector<std::uint32_t>> memory_units;
        std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> occurrences;
        std::unordered_map<std::string, std::vector<std::uint32_t>> token_units;
        std::unordered_map<std::string, std::vector<std::uint32_t>> stem_memories;
    };
    const Analysis& analysis() const;

    std::vector<memory::Memory> m_memories;
    std::vector<std::string> m_normalized;
    std::unordered_map<std::string, std::vector<std::size_t>> m_by_source;
    std::unordered_map<std::string, std::size_t> m_by_id;
    bool m_provenance;
    // Behind pointers so the snapshot stays movable.
    std::unique_ptr<std::once_flag> m_analysed = std::make_unique<std::once_flag>();
    mutable std::unique_ptr<Analysis> m_analysis;
};

// Grades one probe. `retrieved` is what the system returned for the probe's question at some k:
// judged by the text it served (a served text that differs from the snapshot's copy of the same
// id is examined on its own). `scenario` gives the entities, detail phrases and messages of the
// whole scenario (null: built from this probe alone, with no messages).
ProbeVerdict grade_memory_side(const data::Probe& probe, const MemorySnapshot& snapshot,
                               const std::vector<memory::Hit>& retrieved, const ScenarioEvidence* scenario = nullptr);

// True when a memory with these sources came from one of the fact's messages.
bool cites_fact(const std::vector<std::string>& sources, const data::EvidenceFact& fact);

// True when the key detail (any variant) occurs in `text` on token boundaries, in the matcher's
// canonical tokens.
bool detail_present(const data::KeyDetail& detail, std::string_view text);

}  // namespace memfail::grade
