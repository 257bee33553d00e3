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
    // Per row as the paper's Table 2 counts an entry: its facts and its graded question, the
    // options appended for a multiple-choice one (as the release's graded_question holds them).
    std::optional<double> mean_entry_tokens;
};

// ---- Difficulty traits: what makes one dataset harder than another of the same family -------------
// Computed from the stored text and the probes' structured labels, so a generated dataset can be set
// beside the imported release. A field a scenario lacks never fails: it is counted as unknown.

// Words per stored message: whitespace-separated runs of characters (as `wc -w` counts them) in the
// content of every message of every session (Conditional and Persona: one essay per message).
struct WordsPerMessage {
    std::int64_t messages = 0;
    std::optional<double> mean;    // empty when there is no message
    std::optional<double> median;  // the middle count; the mean of the two middle ones when even
};

// Name reuse over the entries (sessions) of Conditional and Persona. An entry's person is the
// meta.entity of the probes whose evidence cites one of its messages, or, for a probe without
// evidence, whose meta.row is the entry's 1-based position and whose entity the entry's text names
// (the most frequent name when they differ: method "meta"). An entry no probe links is named by the
// leading capitalised words of its first message's first sentence ("Yuki Tanaka is ..." -> "Yuki
// Tanaka"), or, when the sentence opens with a stopword or a common opener ("By", "Most", "Since"),
// by the first capitalised run after it (method "text"); unknown when there is none. Names are
// compared after text::normalize; the first name is the normalised name's first word.
struct NameReuse {
    std::int64_t entries = 0;       // sessions
    std::int64_t from_meta = 0;     // entries named by meta.entity
    std::int64_t from_text = 0;     // entries named by their first sentence
    std::int64_t unknown = 0;       // entries with no name either way
    std::int64_t distinct = 0;      // distinct names over the named entries
    std::int64_t max_per_name = 0;  // the most entries sharing one name
    std::string most_shared;        // that name (the first in order when tied); empty when none is shared
    std::int64_t distinct_first = 0;      // distinct first names
    std::int64_t max_per_first_name = 0;  // the most entries sharing one first name
};

// Where the evidence facts of Conditional and Persona sit. A fact's person is its probe's
// meta.entity, else its entry's name (NameReuse). A sentence names the person when it holds the
// full name or one of its capitalised words ("Yuki", "Tanaka", possessives too; titles such as "Dr."
// do not count), matched as text::contains_phrase does. A fact's detail sentences, per key detail
// other than "entity" and other than a one-word qualifier ("only", "never"): the sentences (text::split_sentences) of its cited messages holding one of
// the detail's variants; a detail is named when one of its sentences names the person. When no such
// detail is found in the messages, each of the fact's statements found among the sentences counts as
// one detail instead.
struct PronounFacts {
    std::int64_t facts = 0;    // evidence facts of all probes
    std::int64_t pronoun = 0;  // no detail is named: every sentence stating the fact leaves the person
                               // to an earlier sentence ("she", "he", "they")
    std::int64_t mixed = 0;    // some details named, some not (a rule split over several sentences)
    std::int64_t named = 0;    // every detail named
    std::int64_t unknown = 0;  // no person, no cited message found, or no detail found in them
};

// Long-Hop chains (probes) by voice, from their facts' text: a fact's text is its statements (else
// its canonical text, else its cited messages). A chain is first person when a fact holds a
// first-person word: i, me, my, mine, myself, im, ive (normalised, so "I'm" is im). Otherwise its
// person is meta.chain's head when it is capitalised and meta.voice is "named" (method "meta"); else,
// from the text, the capitalised word found in most facts among those capitalised inside a sentence,
// or capitalised at the start of at least two facts and no stopword, months and weekdays excepted
// (method "text").
struct ChainVoices {
    std::int64_t chains = 0;
    std::int64_t first_person = 0;  // a fact speaks in the first person
    std::int64_t named = 0;         // not first person; a person, and every fact names them
    std::int64_t partly_named = 0;  // not first person; the person is named in some facts only
    std::int64_t other = 0;         // not first person, and no fact names a person
    std::int64_t unknown = 0;       // no fact text
    std::int64_t person_from_meta = 0;
    std::int64_t person_from_text = 0;
};

// Lexical overlap of question and evidence, over the graded probes with evidence. A probe's content
// words: the distinct words (text::words, after dropping a possessive 's) of its question that are no
// stopword (text::is_stopword); no stemming. Its share: how many of them occur among the words of
// the messages its evidence facts cite, divided by how many there are.
struct LexicalOverlap {
    std::int64_t probes = 0;            // graded probes with evidence whose share was measured
    std::int64_t no_content_words = 0;  // graded probes with evidence but no content word
    std::int64_t no_messages = 0;       // graded probes whose evidence cites no message found
    std::optional<double> mean;         // mean share over `probes`; empty when none
};

struct DatasetTraits {
    WordsPerMessage words;
    std::optional<NameReuse> names;            // Conditional and Persona
    std::optional<PronounFacts> pronoun_facts; // Conditional and Persona
    std::optional<ChainVoices> chains;         // Long-Hop
    LexicalOverlap overlap;                    // every dataset
};

// The traits of one scenario; which are filled depends on its dataset's family (as dataset_stats).
DatasetTraits dataset_traits(const data::Scenario& scenario);

struct DatasetStats {
    std::string dataset;
    std::string scenario_id;
    std::int64_t sessions = 0;  // entries: what is stored, one conversation each
    std::int64_t messages = 0;
    std::optional<double> mean_entry_tokens;  // per session: tokens of its messages' contents
    // Per session as the paper's Table 2 counts an entry ("mean tokens per dataset entry"): its
    // messages and the graded questions asked of it (Conditional: one, Persona: three).
    std::optional<double> table2_entry_tokens;
    std::int64_t probes = 0;
    std::int64_t graded = 0;     // probes less the ambiguous ones (meta.ambiguous), which no rate counts
    std::int64_t abstain = 0;    // kind abstain (misleading questions)
    std::int64_t ambiguous = 0;
    std::int64_t facts = 0;      // evidence facts of all probes
    // Profile tasks (the dynamic suite), graded by their fields' gold app logs, not by facts.
    std::int64_t profile_tasks = 0;
    std::int64_t evidence_logs = 0;  // distinct app logs the tasks' fields cite

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

    DatasetTraits traits;  // difficulty traits (dataset_traits)
};

// The figures of one scenario. The dataset's own split is filled by its name's family
// (conditional_facts_*, coexisting_facts, long_hop, persona_retrieval); other datasets get the
// common figures only. Never fails: a label a probe lacks is derived or left out.
DatasetStats dataset_stats(const data::Scenario& scenario, const TokenCounter& count_tokens = {});

// As JSON: {"dataset", "scenario", "entries": {"sessions", "messages", "mean_tokens"}, "probes",
// "graded", "abstain", "ambiguous", "facts", and by family "yes_no", "condition_types",
// "by_n", "by_hops", "voices", "misleading"}, then "traits": {"words_per_message": {"messages", "mean",
// "median"}, "overlap": {"probes", "mean", "no_content_words", "no_messages"}, and by family "names"
// {"entries", "distinct", "max_entries_per_name", "most_shared", "distinct_first_names",
// "max_entries_per_first_name", "method": {"meta", "text", "unknown"}}, "pronoun_facts" {"facts",
// "pronoun", "mixed", "named", "unknown"}, "chains" {"chains", "named", "first_person",
// "partly_named", "other", "unknown", "person_method": {"meta", "text"}}}. Token fields and
// means are null when not counted.
nlohmann::ordered_json stats_json(const DatasetStats& stats);

// As text for people: a block of lines per scenario, groups as an aligned table; `encoding` names
// the tokenizer in the heading ("" when tokens were not counted).
std::string stats_text(const DatasetStats& stats, const std::string& encoding);

}  // namespace memfail::suites::memfail_suite
