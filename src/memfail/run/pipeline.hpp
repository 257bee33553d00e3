// SPDX-License-Identifier: MIT
// Internal to the runner (run/runner.cpp): what a checkpoint's probes carry through the LLM pipeline,
// and the grading of one probe at one k from its memory verdicts, its answer and the judge's
// verdicts (ProbeGrader). Suite-agnostic: a suite grades its own probes' answers (Suite::grade_answer).
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <memfail/core/thread_pool.hpp>
#include <memfail/data/model.hpp>
#include <memfail/grade/llm_judge.hpp>
#include <memfail/grade/memory_grader.hpp>
#include <memfail/memory/memory_system.hpp>
#include <memfail/run/call_recorder.hpp>
#include <memfail/run/test_taker.hpp>
#include <memfail/store/results_db.hpp>
#include <memfail/suites/suite.hpp>
#include <memfail/text/tokenizer.hpp>

namespace memfail::run {

// What the run can call on: the recorder over the client, the test-taker and the judge (each absent
// when its model is not configured), and the tokenizer for token figures (absent without rank files).
struct RunServices {
    std::shared_ptr<const text::Tokenizer> tokenizer;
    CallRecorder* recorder = nullptr;
    std::optional<TestTaker> taker;
    std::optional<grade::LlmJudge> judge;
    std::string grader = "rules";
    ThreadPool* pool = nullptr;
    bool paper = false;  // --protocol paper (docs/PROTOCOLS.md)
    std::string protocol = "memfail";  // --protocol, as given
    // The system is `none`, which stores nothing: its answers are graded even where the memory
    // failed first (the stage stays the memory's), so the report can flag the probes a model gets
    // right without memory (report/leaky.hpp).
    bool no_memory = false;
    // run --set SUITE.NAME=VALUE, each checked by its suite (Suite::check_setting).
    std::map<std::string, std::string> settings;
};

// A fact's storage and summary verdict, which do not depend on k.
struct FactMemory {
    bool stored = false;
    bool faithful = false;
    std::string reason;  // the decisive check's reason when it failed
    std::vector<store::StageCheckRow> checks;
    std::string error;   // a judge call failed
    // The judge decided storage (the rules were unsure), so the rules have no holders to check
    // retrieval against: provenance decides it, or the judge.
    bool storage_judged = false;
};

// One probe at one k on its way through the stages. Its row is graded by whichever task finishes
// the last thing it waits for (its answer, the judge's verdicts on its facts) and handed to the
// writer through `row`.
struct PendingProbe {
    const data::Probe* probe = nullptr;
    int k = 0;
    std::vector<memory::Hit> hits;
    std::string retrieve_error;
    std::int64_t micros = 0;
    grade::ProbeVerdict rules;
    std::vector<store::MemoryCheckRow> memory_checks;  // the suite's, applicable ones only
    std::optional<suites::ProbeAnalysis> analysis;     // the suite's own (profile tasks)
    std::optional<std::string> answer;
    std::string answer_error;
    bool system_answered = false;  // the system answered for itself (Capabilities::answers)
    std::optional<double> system_confidence;  // what the system said of its own answer, when it did
    std::atomic<int> waiting{1};  // what the probe still waits for, plus the main thread's hold
    std::promise<store::ProbeRow> row;
};

// A fact's memory verdict on its way through the judge: storage (batched with other facts), then
// summary; its probes are graded once it is final.
struct FactState {
    const data::EvidenceFact* fact = nullptr;
    const grade::FactVerdict* rules = nullptr;  // the rules' verdict, in the first probe that lists it
    FactMemory memory;
    std::optional<grade::JudgeVerdict> judged_storage;
    std::vector<std::size_t> dependents;  // the pending probes that list the fact
};

// One checkpoint's probes x k, shared by the tasks working on them: they outlive the main thread's
// pass over the checkpoint, which goes on storing and retrieving while the model calls finish.
struct Batch {
    std::optional<grade::MemorySnapshot> snapshot;
    std::vector<PendingProbe> pending;
    std::map<std::string, FactState> facts;  // built before any task starts, then only read or
                                             // written entry by entry by the one task working on it
    std::deque<grade::ProbeVerdict> verdicts;  // verdicts of probes not retrieved here, for facts' `rules`
    std::size_t store_chars = 0;
    // The snapshot's first memories are what the system holds now; any after them are what it gave
    // as of the dates of probes about the past.
    std::size_t current_memories = 0;
};

// One check of one stage by one grader, as recorded.
store::StageCheckRow check(const std::string& fact_id, const char* stage, const char* grader, bool passed,
                           bool decisive, std::string reason);

// The grader name of a check the rules could not decide: recorded so a reader sees why the judge
// was asked, and kept out of the rules-versus-judge agreement figures.
inline constexpr const char* k_rules_unsure = "rules_unsure";

// The rules' storage and summary verdicts, read off the rules' fact verdict (they do not depend on
// k). An unsure check is recorded as such and is never decisive.
void add_rules_memory_checks(const grade::FactVerdict& fv, bool decisive, std::vector<store::StageCheckRow>& out);

// A misleading probe whose named person is described elsewhere in the store (`meta.ambiguous`).
bool is_ambiguous(const data::Probe& probe);

// The row of a probe at k with its memory-side verdict and what was retrieved; the probe as the
// dataset states it (with its targets' ledger events, for write-integrity probes).
store::ProbeRow probe_row(const data::Scenario& scenario, const data::Probe& probe, int k,
                          const grade::ProbeVerdict& verdict, const std::vector<memory::Hit>& hits,
                          std::int64_t micros);

// Grades a probe at a k once everything it waits for is in; called from pool tasks (each probe by
// one task), so it only reads what it is given and the scenario (and the scenario's message index,
// built once under m_messages_once).
class ProbeGrader {
public:
    ProbeGrader(const data::Scenario& scenario, RunServices& roles, grade::LlmJudge::Task task, bool judge_all)
        : m_scenario(scenario), m_roles(roles), m_task(task), m_judge_all(judge_all),
          m_suite(suites::find_suite(scenario.suite)),
          m_scores_every_answer(m_suite && m_suite->scores_every_answer(scenario)) {}

    // The decisive stage of one probe at one k, with every check made.
    store::ProbeRow grade(const PendingProbe& p, const grade::MemorySnapshot& snapshot,
                          const std::map<std::string, FactState>& facts);

private:
    std::optional<bool> judge_answer(const PendingProbe& p, store::ProbeRow& row, const char* stage_label,
                                     const std::string& essay);
    Result<grade::JudgeVerdict> ask_answer_judge(const PendingProbe& p, const std::string& essay);
    void benchmark_verdict(const PendingProbe& p, store::ProbeRow& row);
    store::ProbeRow suite_answer(const PendingProbe& p, store::ProbeRow row, bool reached, suites::AnswerGrade grade);
    store::ProfileRow profile_row(const data::Probe& probe, const suites::ProbeAnalysis& analysis) const;
    static std::vector<store::MemoryTextRow> stored_memory_texts(const grade::ProbeVerdict& verdict,
                                                                 const grade::MemorySnapshot& snapshot);
    const data::MessageIndex& messages();

    const data::Scenario& m_scenario;
    RunServices& m_roles;
    const grade::LlmJudge::Task m_task;
    const bool m_judge_all;
    const suites::Suite* const m_suite;  // the scenario's suite; null when it names none
    const bool m_scores_every_answer;  // the suite's scores_every_answer for this scenario
    // The scenario's messages by id (--grader both's attribution judge): made by the first task that
    // needs them, read by the rest; a dynamic-suite user has ~32k, too many to index per item.
    std::once_flag m_messages_once;
    std::optional<data::MessageIndex> m_messages;
};

}  // namespace memfail::run
