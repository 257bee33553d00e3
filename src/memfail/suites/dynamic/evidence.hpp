// SPDX-License-Identifier: MIT
// The dynamic suite's memory-side diagnosis, by rule: which gold app logs a system stored and
// retrieved for a probe (evidence recall@k per field), and where the evidence went wrong, as
// DynamicMem's attribution labels (irrelevant evidence, identity miss, detail miss, conflated, all
// clear; its project page's order and sense). A memory holds a log when its
// text holds every one of the log's surface details (normalised, at word boundaries), whether or not
// it cites the log: provenance only tells where to look first, so wherever logs carry details the
// diagnosis is the same with or without it (a summary that keeps the details holds the evidence).
// A log without details cannot be found in a system without provenance: it is `unsure`, and a label
// that hinges on it is left empty, never guessed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <memfail/data/model.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::suites::dynamic {

// Which app logs a set of memories holds; `unsure`: could not be decided (no provenance, no details).
struct Coverage {
    std::set<std::string> held;
    std::set<std::string> unsure;
};

// Whether a set of memories holds one log.
enum class LogStatus { held, absent, unsure };

// The memories a system holds (or returned), indexed once so that many probes can ask which logs they
// hold without rescanning them. Build one per checkpoint for the whole store, and one per probe for
// its top-k hits (cheap: k memories).
//
// Cost: building normalises every text once and indexes it: O(total text) time and memory (a word ->
// memories posting list, and with provenance a log id -> citing memories map). Asking about one log:
// first a phrase check of its details on each memory citing it (with provenance: typically one or
// two, and usually decisive); otherwise an intersection of the posting lists of the details' words (rarest first) and a phrase
// check on the survivors only. So a checkpoint of ~100 probes over 30k+ memories costs one pass over
// the store plus work proportional to the candidates, not 100 scans of the store. The index keeps
// no cache: its const methods may be called from several threads at once.
// Canonical texts of memories already read, by memory id, kept across checkpoints: a store that
// grows between checkpoints is read once per memory, not once per checkpoint. An entry is used only
// while the memory's text is unchanged (its hash matches).
struct CanonicalCache {
    std::unordered_map<std::string, std::pair<std::size_t, std::string>> by_id;  // id -> (text hash, canonical)
};

class HeldIndex {
public:
    HeldIndex(const std::vector<const memory::Memory*>& memories, bool provenance, CanonicalCache* cache = nullptr);

    bool provenance() const { return m_provenance; }
    std::size_t size() const { return m_texts.size(); }

    LogStatus status(const std::string& log_id, const data::MessageIndex& messages) const;
    Coverage covered(const std::vector<std::string>& log_ids, const data::MessageIndex& messages) const;

private:
    std::vector<std::uint32_t> candidates(const std::vector<std::string>& details) const;
    bool holds_all(std::uint32_t memory, const std::vector<std::string>& details) const;

    bool m_provenance = false;
    std::vector<std::string> m_texts;  // normalised
    std::unordered_map<std::string, std::vector<std::uint32_t>> m_citing;  // log id -> memories (sorted)
    std::unordered_map<std::string, std::vector<std::uint32_t>> m_words;   // word -> memories (sorted)
};

// The normalised details of a log (empty for a message that is no app log or carries none).
std::vector<std::string> log_details(const std::string& log_id, const data::MessageIndex& messages);

// Which of `log_ids` the memories hold: a memory holds log L when its text holds every one of L's
// details (normalised, at word boundaries), citing L or not; a log without details is held by a
// memory citing it (with provenance) and undecidable without provenance (a log
// without details cannot be decided: unsure). Builds a HeldIndex: for many calls over the same
// memories, build one and use HeldIndex::covered.
Coverage covered_logs(const std::vector<std::string>& log_ids, const std::vector<const memory::Memory*>& memories,
                      bool provenance, const data::MessageIndex& messages);

enum class Attribution { irrelevant_evidence, identity_miss, detail_miss, conflated, all_clear };
const char* attribution_name(Attribution attribution);
std::optional<Attribution> parse_attribution(const std::string& name);

struct FieldEvidenceResult {
    std::string path;
    std::size_t gold = 0;       // distinct gold logs of the field
    std::size_t retrieved = 0;  // of them, held by the top-k hits
    std::size_t stored = 0;     // of them, held by the system at the checkpoint
    std::size_t unsure = 0;     // of them, undecidable in the hits (not counted as retrieved)
    double recall = 0;          // retrieved / gold; 1 when the field has no gold log (nothing to miss)
};

struct ProbeEvidence {
    std::vector<FieldEvidenceResult> fields;
    double recall = 0;  // micro over the fields' gold logs: sum retrieved / sum gold (1 when none)
    std::optional<Attribution> label;  // the memory-side label; empty when unsure coverage decides it
    std::string reason;
    bool complete = false;  // every gold log of every field retrieved
};

// Labels a probe's evidence, the first that applies:
//   irrelevant_evidence  no hit holds any gold log of the probe, nor a conflicting log of the same key;
//   identity_miss        the probe has identity fields and no hit holds any of their gold logs (one
//                        entry that establishes the entity or routine suffices);
//   detail_miss          a non-identity field's gold logs are not all retrieved;
//   conflated            every gold log retrieved, and a conflicting log (a superseded value, a
//                        competing key) beside them: complete but ambiguous;
//   all_clear            everything retrieved, nothing conflicting: a wrong answer is then the
//                        answer model's fault.
// `state` (optional) is the probe's key in the profile: with it, only conflicting logs that evidence
// one of its snapshots are the same key's (the others are a competing key's, and retrieving only
// those is irrelevant evidence); without it every conflicting log counts as the same key's.
ProbeEvidence attribute(const data::Probe& probe, const HeldIndex& hits, const HeldIndex& held,
                        const data::MessageIndex& messages, const data::ProfileState* state = nullptr);

// The same, indexing `hits` and `held` on the spot (for one probe; per checkpoint, index `held` once).
ProbeEvidence attribute(const data::Probe& probe, const std::vector<const memory::Memory*>& hits,
                        const std::vector<const memory::Memory*>& held, bool provenance,
                        const data::MessageIndex& messages, const data::ProfileState* state = nullptr);

}  // namespace memfail::suites::dynamic
