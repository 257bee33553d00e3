// SPDX-License-Identifier: MIT
// A suite: one folder under suites/ that supplies its datasets (generator, importers), its
// validation rules and its memory-side checks through this one small interface. The runner, the
// `datasets` command and the report stay suite-agnostic: they find a suite by name or by a
// scenario's `suite` field and call it.
#pragma once
#include <any>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/figures/section.hpp>
#include <memfail/grade/llm_judge.hpp>
#include <memfail/grade/stage.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::suites {

struct GenerateOptions {
    std::uint64_t seed = 42;
    // Suite-specific knobs as given on the command line ("scenarios=25"); a suite refuses names it
    // does not know, with a did-you-mean hint.
    std::map<std::string, std::string> params;
};

// Something an importer could not map as it stands, and what it did instead. Never silent: the
// `datasets import` command prints every note and writes them beside the output.
struct ImportNote {
    std::string file;       // the source file
    std::string json_path;  // where in it: "probe.eval_rubric.method"
    std::string message;    // what was found and what was done with it
};

struct ImportResult {
    std::vector<data::Scenario> scenarios;
    std::vector<ImportNote> notes;
    std::size_t files_read = 0;
    std::size_t files_refused = 0;  // each with a note saying why; the other files are still imported
    // Elements of a file (a LoCoMo sample, a LongMemEval instance, a HaluMem user) not imported,
    // each with a note saying why; the others are. The import still exits non-zero.
    std::size_t elements_skipped = 0;
};

// One memory-side check of a probe beyond the staged grade (write-integrity checks: stale
// exposure, retraction, over-retention, authority, history, as-of, provenance).
struct CheckResult {
    std::string name;         // "stale_exposure", ...
    bool applicable = true;   // false: the probe does not exercise it (not counted)
    std::optional<bool> passed;  // empty: cannot be decided exactly here (unverified, never a pass)
    std::string detail;       // why, in a sentence: which memory, which value
};

// Answers of the system's read operations at one checkpoint, so a probe asked at several k (and
// the probes sharing a checkpoint) call history() and state_as_of() once per argument. Owned by the
// runner, one per checkpoint.
struct ReadCache {
    std::map<std::string, Result<std::vector<memory::MemoryEvent>>> history;  // by memory id
    std::map<std::string, Result<std::vector<memory::Memory>>> as_of;         // by timestamp
    // The held memories' texts in the evidence matcher's canonical form (the checkpoint's one `held`
    // list), made by the first probe's checks and read by the others.
    std::optional<std::vector<std::string>> held_texts;
    // Whatever else a suite builds once per checkpoint from the held memories (the dynamic suite's
    // index of which memory holds which app log), made by the first probe and read by the others.
    std::any suite_index;
    // What a suite keeps across one scenario's checkpoints (the dynamic suite's canonical texts of
    // memories already read), owned by the runner for the scenario's run; null when none is kept.
    std::any* scenario_cache = nullptr;
};

// What a suite's memory checks may look at for one probe at one k. The system is called only for
// its optional read operations (history, state_as_of), never to write.
struct CheckContext {
    const data::Scenario& scenario;
    const data::Probe& probe;
    const std::vector<memory::Memory>& held;  // all_memories() at the probe's checkpoint
    const std::vector<memory::Hit>& hits;     // retrieve_memories(question, k)
    memory::MemorySystem& system;
    ReadCache& reads;
    int k = 0;
    // The scenario's messages by id, when the caller has built them once for the whole scenario
    // (the runner does); null: a suite that needs them builds its own.
    const data::MessageIndex* messages = nullptr;
};

// One graded leaf field of a profile task at one k (the dynamic suite): how much of its gold
// evidence the memory holds and the top k brings back.
struct FieldEvidenceRow {
    std::string path;
    std::size_t gold = 0;       // gold evidence logs
    std::size_t stored = 0;     // of those, held by some memory
    std::size_t retrieved = 0;  // of those, held by a retrieved memory
    std::size_t unsure = 0;     // of those, undecidable (no provenance and no details to match)
    nlohmann::json logs = nlohmann::json::array();  // [{"id","app","stored","retrieved"}]
};

// A suite's memory-side analysis of one probe at one k, beyond the staged grade of its evidence
// facts: the dynamic suite's evidence recall and attribution label. `stage` replaces the staged
// grader's stage (a profile task has fields, not evidence facts).
struct ProbeAnalysis {
    std::optional<grade::Stage> stage;  // empty: undecidable here (unverified)
    double recall = 0;                  // gold evidence logs retrieved / gold evidence logs
    std::string label;                  // memory-side attribution; empty when undecidable
    std::string reason;
    std::vector<FieldEvidenceRow> fields;
};

// One check of a probe's answer as a suite grades it (recorded as the results file's answer-stage
// checks).
struct AnswerCheck {
    std::string field;   // a profile field's path; empty for the whole answer
    std::string stage;   // answer, abstention, answer_field, declines, hallucination, integrity_flag, ...
    std::string grader;  // rules, rules_unsure (the rules could not decide), llm, system
    bool passed = false;
    bool decisive = false;  // the check that decides the answer stage
    std::string reason;
};

// What a suite's answer grading may look at for one probe at one k. Called from pool threads, one
// probe per call: a suite reads what it is given and never calls the memory system.
struct AnswerContext {
    const data::Scenario& scenario;
    const data::Probe& probe;
    const std::string& answer;
    const std::vector<memory::Hit>& hits;
    bool system_answered = false;             // the system answered for itself (Capabilities::answers)
    std::optional<double> system_confidence{};  // what it said of its own answer
    grade::LlmJudge* judge = nullptr;         // null: no judge configured (the rules alone)
    grade::LlmJudge::Task task{};
    std::string grader = "rules";             // --grader: rules, llm, both
    std::string protocol = "memfail";         // --protocol: memfail, paper or one a suite defines
    // run --set: this suite's settings, by their name without the suite's prefix
    // ("structured_threshold"), each accepted by check_setting before the run started.
    std::map<std::string, std::string> settings{};
    const ProbeAnalysis* analysis = nullptr;  // the suite's analyse_memory of this probe at this k
    // The scenario's messages by id, built once per scenario on first use.
    std::function<const data::MessageIndex&()> messages{};
};

// What the test-taker is shown for one probe under a protocol a suite defines (--protocol locomo):
// the retrieved memories with their dates (run/test_taker.hpp, memory_date) and the question's date.
struct AnswerPromptContext {
    const data::Scenario& scenario;
    const data::Probe& probe;
    const std::vector<llm::prompts::DatedMemory>& memories;
    std::string asked_on;  // the date the question is asked on, as shown; empty when unknown
    std::string protocol;
    std::string model;     // the test-taker's
};

// A suite's grade of one answer. `correct` empty: nobody could decide (unverified, never a pass);
// `error` set: a judge call failed and the row is an error row (in no numerator).
struct AnswerGrade {
    std::vector<AnswerCheck> checks;
    std::optional<bool> correct;
    std::string error;
    // A profile task's per-field grades, [{"path", "grade": {...}}], merged into its profile row.
    nlohmann::json fields = nlohmann::json::array();
    std::optional<double> item_score;
};

// What a suite's check of the memory after one session may look at (HaluMem's operations: what
// the session added, the whole store, and retrievals it asks for). Called on the main thread, like
// every call to the system.
struct SessionCheckContext {
    const data::Scenario& scenario;
    std::size_t session = 0;                  // position of the session just stored
    const std::vector<memory::Memory>& held;  // all_memories() now
    // held[i] for each i here was not held (same id and text) after the previous session: what this
    // session added or changed.
    const std::vector<std::size_t>& added;
    // retrieve_memories(query, k) on the system.
    std::function<Result<std::vector<memory::Hit>>(const std::string& query, int k)> retrieve;
};

// One item a suite checks after a session (store::SessionCheckRow once recorded). `score` in
// [0, 1]; empty: the rules could not decide, and `judge_input` says what a judge needs (null: no
// judge can help).
struct SessionCheck {
    std::string name;   // "extraction", "false_memory", "accuracy", "update"
    std::string item;   // a memory point's id, or a memory's id
    std::optional<double> score;
    std::string label;  // a verdict's name where it has one (an update's "correct", ...)
    double weight = 1;
    std::string grader = "rules";  // rules, rules_unsure, llm
    std::string detail;
    nlohmann::json judge_input;
};

class Suite {
public:
    virtual ~Suite() = default;
    virtual std::string name() const = 0;  // "memfail", "writ": what scenarios carry in `suite`
    // Dataset names `--datasets` and `datasets generate` accept, and what a bare suite name
    // ("writ") expands to.
    virtual std::vector<std::string> dataset_names() const = 0;
    // One dataset, generated deterministically from the options. A dataset may be many scenarios.
    virtual Result<std::vector<data::Scenario>> generate(const std::string& dataset,
                                                         const GenerateOptions& options) const = 0;
    // The same, handing each scenario to `sink` as soon as it is made, so a caller that writes them
    // out holds one at a time (the dynamic suite's users are ~2M tokens each). The default
    // generates them all, then hands them over.
    virtual Result<void> generate_each(const std::string& dataset, const GenerateOptions& options,
                                       const std::function<Result<void>(data::Scenario&&)>& sink) const {
        MF_TRY_ASSIGN(std::vector<data::Scenario> all, generate(dataset, options));
        for (auto& s : all) MF_TRY(sink(std::move(s)));
        return {};
    }
    // Formats `datasets import --from F` accepts for this suite ("writ").
    virtual std::vector<std::string> import_formats() const { return {}; }
    virtual Result<ImportResult> import(const std::string& format, const std::string& path) const {
        return make_error(ErrorKind::unsupported, "suite '" + name() + "' imports nothing", format);
    }
    // The same, handing each scenario to `sink` as soon as it is made, so a caller that writes them
    // out holds one at a time (LongMemEval-M is 2.8 GB): the result's `scenarios` stays empty; its
    // notes and file counts are filled. A sink's error stops the import and is returned. The default
    // imports them all, then hands them over.
    virtual Result<ImportResult> import_each(const std::string& format, const std::string& path,
                                             const std::function<Result<void>(data::Scenario&&)>& sink) const {
        MF_TRY_ASSIGN(ImportResult all, import(format, path));
        for (auto& s : all.scenarios) MF_TRY(sink(std::move(s)));
        all.scenarios.clear();
        return all;
    }
    // The suite's own rules beyond data::validate_structure, as violations of the same kind.
    virtual void validate(const data::Scenario& scenario, std::size_t line,
                          std::vector<data::Violation>& out) const {}
    // The scenario as a protocol other than memfail's grades it (--protocol paper: the MemFail
    // paper's evaluation); unchanged by default.
    virtual data::Scenario for_protocol(const data::Scenario& scenario, const std::string& protocol) const {
        (void)protocol;
        return scenario;
    }
    // True when the dataset's own metric (its authors' figure, report/benchmark.cpp) scores every
    // question's answer whatever the memory did. The answer of a probe whose memory failed first is
    // then judged too, recorded as a non-decisive `benchmark` check for that figure only: the
    // taxonomy still stops at the memory's stage.
    virtual bool scores_every_answer(const data::Scenario& scenario) const {
        (void)scenario;
        return false;
    }
    // Memory-side checks for one probe at one k (empty: the staged grade is all there is).
    virtual std::vector<CheckResult> check_memory(const CheckContext& context) const { return {}; }
    // The suite's own memory-side analysis of a probe (empty: none; the staged grade stands).
    virtual std::optional<ProbeAnalysis> analyse_memory(const CheckContext& context) const { return std::nullopt; }
    // The suite's grade of a probe's answer, asked for every answered probe whatever its memory
    // stage (the suite compares answers across modes; the row's stage stays the memory's when the
    // memory failed first). Empty: the probe is graded as every suite's is (the answer rules, then
    // the judge; only when its memory stages were reached).
    virtual std::optional<AnswerGrade> grade_answer(const AnswerContext& context) const { return std::nullopt; }
    // Protocols this suite defines beyond memfail's and the paper's (`--protocol locomo`): its
    // authors' answer prompts and grading. A run under one holds only this suite's datasets.
    virtual std::vector<std::string> protocols() const { return {}; }
    // The test-taker's request for a probe under one of protocols(); empty: memfail's prompt.
    virtual std::optional<llm::ChatRequest> answer_request(const AnswerPromptContext& context) const {
        (void)context;
        return std::nullopt;
    }
    // The answer as the protocol reads the test-taker's reply (LoCoMo maps an adversarial option
    // letter to the option's text); the reply itself by default.
    virtual std::string read_answer(const AnswerPromptContext& context, std::string reply) const {
        (void)context;
        return reply;
    }
    // The suite's part of every report (its scorecard; figures/section.hpp); null: the staged grade
    // is all the report shows of it.
    virtual const report::SuiteReport* report() const { return nullptr; }
    // True when a system that answers for itself (Capabilities::answers) answers this probe and its
    // answer is graded instead of the test-taker's.
    virtual bool takes_system_answer(const data::Probe& probe) const {
        (void)probe;
        return false;
    }
    // `run --set SUITE.NAME=VALUE`: an error saying why when this suite has no such setting or the
    // value is out of range. Accepted settings are recorded in the run's config and reach
    // grade_answer through AnswerContext::settings.
    virtual Result<void> check_setting(const std::string& name, const std::string& value) const {
        (void)value;
        return make_error(ErrorKind::invalid_input, "suite '" + this->name() + "' has no setting '" + name + "'",
                          "--set");
    }
    // The names check_setting accepts, for help and did-you-mean hints.
    virtual std::vector<std::string> setting_names() const { return {}; }
    // True when the memory is to be checked once the session at `session` is stored (HaluMem's
    // extraction and updating), whether or not a probe is asked there.
    virtual bool checks_session(const data::Scenario& scenario, std::size_t session) const {
        (void)scenario, (void)session;
        return false;
    }
    // Those checks, by rule; the undecided ones carry judge_input.
    virtual std::vector<SessionCheck> check_session(const SessionCheckContext& context) const {
        (void)context;
        return {};
    }
    // One undecided check asked of the judge (on a pool thread): fills score, label, grader and
    // detail, or returns why the judge could not be read (the check stays undecided).
    virtual Result<void> judge_session_check(const data::Scenario& scenario, SessionCheck& check,
                                             grade::LlmJudge& judge) const {
        (void)scenario, (void)check, (void)judge;
        return make_error(ErrorKind::unsupported, "suite '" + name() + "' judges no session check");
    }
};

// Every suite, in a fixed order; find by name (nullptr when unknown).
const std::vector<const Suite*>& all_suites();
const Suite* find_suite(std::string_view name);
// The suite whose dataset_names() holds `dataset`, or nullptr.
const Suite* suite_for_dataset(std::string_view dataset);

// What a user may name where datasets are asked for, expanded: "all" -> the five MemFail datasets,
// a suite's name ("writ") -> its datasets, anything else (a dataset name or a file) as given.
std::vector<std::string> expand_dataset_names(const std::vector<std::string>& names);
// Every protocol `run --protocol` takes: memfail's, the paper's, then each suite's own
// (Suite::protocols), in suite order.
std::vector<std::string> protocol_names();
// Every name expand_dataset_names knows ("all", the suites, their datasets), for error messages
// and did-you-mean hints.
std::vector<std::string> known_dataset_names();

}  // namespace memfail::suites
