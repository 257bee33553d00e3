// SPDX-License-Identifier: MIT
// The deterministic memory-side grader: for each evidence fact of a probe, is it stored, stored
// faithfully and retrieved in the top k? The first failing stage is the verdict (docs/TAXONOMY.md).
// The rules decide only what they can decide exactly and say `unverified` otherwise; provenance
// narrows which memories are examined, it never changes a verdict.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <memfail/data/model.hpp>
#include <memfail/grade/stage.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::grade {

inline constexpr const char* k_memory_grader_version = "rules/2";

// Which memories were examined for a fact: those citing its messages (the system reports
// provenance: a cheaper look, never a different verdict) or every memory (it does not).
enum class Match { provenance, content };
const char* match_name(Match match);

// The check a fact's verdict could not be decided at, when the rules were unsure.
enum class Unsure { none, storage, summary };
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

// A snapshot of everything a system holds, indexed once and shared by every probe graded against
// it: normalised texts and a message-id -> memories map, so grading a probe never rescans text.
class MemorySnapshot {
public:
    MemorySnapshot(std::vector<memory::Memory> memories, bool provenance);

    const std::vector<memory::Memory>& memories() const { return m_memories; }
    bool provenance() const { return m_provenance; }
    // Indices of memories whose sources include `message_id`.
    const std::vector<std::size_t>& by_source(const std::string& message_id) const;
    const std::string& normalized_text(std::size_t index) const { return m_normalized[index]; }
    // The same text as whole sentences: see sentence_bounded().
    const std::string& bounded_text(std::size_t index) const { return m_bounded[index]; }
    // Index of the memory with `id`, if held.
    std::optional<std::size_t> index_of(const std::string& id) const;

private:
    std::vector<memory::Memory> m_memories;
    std::vector<std::string> m_normalized;
    std::vector<std::string> m_bounded;
    std::unordered_map<std::string, std::vector<std::size_t>> m_by_source;
    std::unordered_map<std::string, std::size_t> m_by_id;
    bool m_provenance;
};

// Grades one probe. `retrieved` is what the system returned for the probe's question at some k.
// Retrieved memories are matched to the snapshot by id; a retrieved memory unknown to the
// snapshot is still examined by its own text and sources. `messages` (optional) lets a fact
// without listed statements count as copied when its memories hold its whole cited messages.
ProbeVerdict grade_memory_side(const data::Probe& probe, const MemorySnapshot& snapshot,
                               const std::vector<memory::Hit>& retrieved,
                               const data::MessageIndex* messages = nullptr);

// Text as its normalised sentences (text::split_sentences, then text::normalize), each enclosed in
// a unit separator: "\x1fmira hums\x1fshe sings\x1f". A statement is held verbatim when its bounded
// form occurs in a memory's: whole sentences, so "Not only when the kettle boils does Mira hum"
// does not hold "Only when the kettle boils does Mira hum".
std::string sentence_bounded(std::string_view text);

// True when a memory with these sources came from one of the fact's messages.
bool cites_fact(const std::vector<std::string>& sources, const data::EvidenceFact& fact);

// True when the key detail (any variant) occurs in `normalized_text` on word boundaries.
bool detail_present(const data::KeyDetail& detail, const std::string& normalized_text);

}  // namespace memfail::grade
