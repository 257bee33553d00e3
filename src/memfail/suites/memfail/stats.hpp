// SPDX-License-Identifier: MIT
// The MemFail paper's Table 2 figures for any dataset in memfail's format (generated or imported):
// entries, graded probes, mean tokens per entry, and each dataset's own split (yes/no and condition
// types, rows per N, chains per K, share of misleading questions). `memfail datasets stats`.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <memfail/data/model.hpp>

#include <nlohmann/json.hpp>

namespace memfail::suites::memfail_suite {

// Counts the tokens of a text (the CLI passes cl100k_base's count). Empty: tokens are not counted.
using TokenCounter = std::function<std::size_t(std::string_view)>;

// One group of a dataset's split: Coexisting rows with the same N, Long-Hop chains with the same K.
struct GroupStats {
    std::int64_t rows = 0;   // probes (rows or chains) in the group
    std::int64_t facts = 0;  // evidence facts of those probes
    std::optional<double> mean_fact_tokens;      // per row: tokens of the sentences stating its facts
    std::optional<double> mean_question_tokens;  // per row: tokens of its question
};

struct DatasetStats {
    std::string dataset;
    std::string scenario_id;
    std::int64_t sessions = 0;  // entries: what is stored, one conversation each
    std::int64_t messages = 0;
    std::optional<double> mean_entry_tokens;  // per session: tokens of its messages' contents
    std::int64_t probes = 0;
    std::int64_t graded = 0;     // probes less the ambiguous ones (meta.ambiguous), which no rate counts
    std::int64_t abstain = 0;    // kind abstain (misleading questions)
    std::int64_t ambiguous = 0;
    std::int64_t facts = 0;      // evidence facts of all probes

    // Conditional-Facts (yes_no probes): the reference answers' polarity, how many probes'
    // meta.condition_met disagrees with it, and the distinct condition types used.
    std::int64_t yes = 0;
    std::int64_t no = 0;
    std::int64_t unreadable = 0;          // a yes_no reference opening on neither yes nor no
    std::int64_t condition_met_mismatch = 0;
    std::map<std::string, std::int64_t> condition_types;  // meta.condition_type -> probes

    std::map<std::int64_t, GroupStats> by_n;     // Coexisting: meta.n (else the number of facts)
    std::map<std::int64_t, GroupStats> by_hops;  // Long-Hop: meta.hops (else facts - 1)
    std::map<std::string, std::int64_t> voices;  // Long-Hop: meta.voice -> chains
    std::int64_t misleading = 0;                 // Persona: meta.is_misleading or kind abstain
};

// The figures of one scenario. The dataset's own split is filled by its name's family
// (conditional_facts_*, coexisting_facts, long_hop, persona_retrieval); other datasets get the
// common figures only. Never fails: a label a probe lacks is derived or left out.
DatasetStats dataset_stats(const data::Scenario& scenario, const TokenCounter& count_tokens = {});

// As JSON: {"dataset", "scenario", "entries": {"sessions", "messages", "mean_tokens"}, "probes",
// "graded", "abstain", "ambiguous", "facts", and by family "yes_no", "condition_types",
// "by_n", "by_hops", "voices", "misleading"}. Token fields are null when not counted.
nlohmann::ordered_json stats_json(const DatasetStats& stats);

// As text for people: a block of lines per scenario, groups as an aligned table; `encoding` names
// the tokenizer in the heading ("" when tokens were not counted).
std::string stats_text(const DatasetStats& stats, const std::string& encoding);

}  // namespace memfail::suites::memfail_suite
