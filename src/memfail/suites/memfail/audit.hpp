// SPDX-License-Identifier: MIT
// Auditing generated MemFail datasets for tells: strategies that use no memory at all (the question
// alone, the options alone, the essays' own shapes) and how well they do, per dataset and per input
// (one seed's generation), beside a reference (the paper's release). `memfail datasets audit`;
// docs/DATASETS.md, "Auditing generated data".
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>

#include <nlohmann/json.hpp>

namespace memfail::suites::memfail_suite {

// One scenario with where it was read, so an error can name the file and line.
struct AuditScenario {
    data::Scenario scenario;
    std::string file;
    std::size_t line = 0;
};

// One input: one seed's generation (typically a folder of dataset files), or the reference. Its
// scenarios are grouped by dataset; several scenarios of one dataset count as one file.
struct AuditInput {
    std::string name;  // as given on the command line
    std::vector<AuditScenario> scenarios;
};

// The memory-free strategies, in the order they are printed.
enum class AuditStrategy {
    question_only_cross,   // naive Bayes over the question's words, trained on the other inputs
    question_only_within,  // the same, leave-one-out within the file
    names_cross,           // naive Bayes over the names a Persona question holds, trained on the other inputs
    elimination_cross,     // options never seen as a wrong option in the other inputs
    elimination_within,    // options never seen as a wrong option in the file's other rows
    question_overlap,      // the option sharing most content words with the question
    longest_option,        // the longest option, by characters
    recurring_frames,      // sentences opening on a frame (five words) shared by many essays
    shared_answers,        // direct Persona answers found in two essays or more
    easy_rule_named,       // Easy rule sentences naming their person
};
// "question_only_cross", ...: the name in JSON.
const char* audit_strategy_name(AuditStrategy strategy);
// What people read: "question-only words (other inputs)", ...
const char* audit_strategy_label(AuditStrategy strategy);

// A frame and the number of essays holding a sentence that opens on it.
struct FrameCount {
    std::string frame;
    std::int64_t essays = 0;
};

// One strategy's figure on one file. `value` is a fraction: the expected accuracy of a strategy
// that answers, or the share a descriptive strategy counts (recurring frames, shared answers, named
// rules). `chance` is what guessing gets (the majority class's share for a yes/no or direct/misleading
// guess, the mean of 1/options for a multiple choice); empty for the descriptive strategies.
struct AuditFigure {
    double value = 0;
    std::optional<double> chance;
    std::int64_t n = 0;        // probes (or sentences, for frames) the figure is over
    std::string detail;        // how it was reached: "unigrams", "unigrams+bigrams" for the word model
    std::int64_t unknown = 0;  // probes left out because the needed field is missing (named rules)
    std::vector<FrameCount> top_frames;  // recurring_frames: the five most shared, most first
};

struct AuditInputFigure {
    std::string input;
    AuditFigure figure;
};

struct AuditStrategyResult {
    AuditStrategy strategy = AuditStrategy::question_only_cross;
    std::vector<AuditInputFigure> inputs;  // audited inputs holding the dataset, in input order
    std::optional<AuditFigure> reference;  // the same strategy on the reference, when it applies
};

struct AuditDataset {
    std::string dataset;
    std::vector<AuditStrategyResult> strategies;  // those that apply, in AuditStrategy order
};

// One threshold applied to every audited figure of its strategies (never to the reference).
struct AuditVerdict {
    std::string name;                  // "question_only", "option_elimination", ...
    std::string label;                 // "question-only words", ...
    std::vector<AuditStrategy> strategies;
    bool at_most = true;               // pass when value <= limit (false: when value >= limit)
    double limit = 0;                  // a fraction
    std::vector<std::string> datasets;  // the datasets it applies to
    std::int64_t checked = 0;          // figures checked
    struct Miss {
        std::string dataset;
        std::string input;
        AuditStrategy strategy;
        double value = 0;
    };
    std::vector<Miss> misses;
    bool passed() const { return misses.empty(); }
};

struct AuditReport {
    std::vector<std::string> inputs;           // audited inputs, in order
    std::optional<std::string> reference;      // the reference's name
    std::vector<AuditDataset> datasets;        // in the order of the five datasets
    std::vector<AuditVerdict> verdicts;
    std::vector<std::string> notes;            // what was left out and why
    bool passed() const;
};

// Lower-cased words of `text` with names masked: a word that opens with a capital letter and does
// not open a sentence ("I" and its contractions aside), and any capitalised word of one of `names`
// wherever it stands, becomes the token "NAME" (a run of them one token; possessives included).
// Apostrophes and hyphens stay inside words ("can't", "Hye-jin"), curly apostrophes straightened;
// everything else separates words.
std::vector<std::string> audit_words(std::string_view text, const std::vector<std::string>& names);

// A sentence's frame: its first five audit_words (fewer when it is shorter), space-separated.
std::string sentence_frame(std::string_view sentence, const std::vector<std::string>& names);

// True for the five MemFail datasets, the ones the strategies read; a caller may keep only the name
// of another dataset's scenario (audit_datasets notes it and reads nothing else of it).
bool audit_applies(const std::string& dataset);

// Runs every strategy that applies on every dataset of `inputs` (and of `reference`, beside them)
// and applies the thresholds. The cross-input variants need a dataset in two inputs or more; on the
// reference they are trained on all the audited inputs. Datasets other than the five MemFail ones
// are left out with a note. Fails (invalid_input, `where` naming file:line and the probe's field)
// when a probe lacks what its dataset's strategies read: a yes/no probe whose answer opens on
// neither yes nor no and whose meta.condition_met says neither, or a multiple-choice probe whose
// correct_choice names no choice.
Result<AuditReport> audit_datasets(const std::vector<AuditInput>& inputs,
                                   const std::optional<AuditInput>& reference = std::nullopt);

// The report for people: a table per dataset (strategy | input | accuracy % | chance % | n |
// reference), the most shared frames under it, then a verdict line per threshold.
std::string audit_text(const AuditReport& report);

// The same as JSON: {"inputs", "reference", "datasets": [{"dataset", "strategies": [{"strategy",
// "label", "inputs": [{"input", "value", "chance", "n", ...}], "reference"}]}], "verdicts": [{"name",
// "label", "at_most"|"at_least", "limit", "checked", "passed", "misses": [...]}], "notes", "passed"}.
// Values are percentages with full precision.
nlohmann::ordered_json audit_json(const AuditReport& report);

}  // namespace memfail::suites::memfail_suite
