// SPDX-License-Identifier: MIT
// The deterministic memory-side grader: for each evidence fact of a probe, is it stored, stored
// faithfully (every key detail kept) and retrieved in the top k? The first failing stage is the
// verdict (docs/TAXONOMY.md). Exact wherever the system reports provenance.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <memfail/data/model.hpp>
#include <memfail/grade/stage.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::grade {

inline constexpr const char* k_memory_grader_version = "rules/1";

// How a fact's memories were found: by the system's reported sources, or (systems without
// provenance) by memories containing at least one of the fact's key details.
enum class Match { provenance, key_details };
const char* match_name(Match match);

struct FactVerdict {
    std::string fact_id;
    Stage stage = Stage::not_stored;
    Match method = Match::provenance;
    std::vector<std::string> stored_ids;       // memories holding (part of) the fact
    std::vector<std::string> retrieved_ids;    // of those, the ones in the top k
    std::vector<std::string> missing_details;  // key details absent at the failing stage
    std::string explanation;                   // one sentence a person can read
};

struct ProbeVerdict {
    // The probe's memory-side stage: the earliest stage any of its facts failed at, or
    // Stage::retrieved when all passed. Empty for probes with no evidence (abstain): those need the
    // answer stage and never count toward memory-side success.
    std::optional<Stage> stage;
    std::vector<FactVerdict> facts;
    bool needs_answer_stage() const { return !stage.has_value(); }
    bool memory_side_success() const { return stage == Stage::retrieved; }
};

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
    // Index of the memory with `id`, if held.
    std::optional<std::size_t> index_of(const std::string& id) const;

private:
    std::vector<memory::Memory> m_memories;
    std::vector<std::string> m_normalized;
    std::unordered_map<std::string, std::vector<std::size_t>> m_by_source;
    std::unordered_map<std::string, std::size_t> m_by_id;
    bool m_provenance;
};

// Grades one probe. `retrieved` is what the system returned for the probe's question at some k.
// Retrieved memories are matched to the snapshot by id; a retrieved memory unknown to the
// snapshot is still examined by its own text and sources.
ProbeVerdict grade_memory_side(const data::Probe& probe, const MemorySnapshot& snapshot,
                               const std::vector<memory::Hit>& retrieved);

// True when the key detail (any variant) occurs in `normalized_text` on word boundaries.
bool detail_present(const data::KeyDetail& detail, const std::string& normalized_text);

}  // namespace memfail::grade
