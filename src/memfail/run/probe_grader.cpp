// SPDX-License-Identifier: MIT
// Grading one probe at one k (run/pipeline.hpp).
#include <memfail/data/jsonl.hpp>
#include <memfail/grade/answer_rules.hpp>
#include <memfail/run/pipeline.hpp>

#include <algorithm>
#include <set>

namespace memfail::run {

using nlohmann::json;

namespace {

json hits_to_json(const std::vector<memory::Hit>& hits) {
    json out = json::array();
    for (const auto& h : hits)
        out.push_back({{"id", h.memory.id}, {"text", h.memory.text}, {"sources", h.memory.sources},
                       {"score", h.score}});
    return out;
}

}  // namespace

// A misleading probe whose named person is described elsewhere in the store (`meta.ambiguous`).
bool is_ambiguous(const data::Probe& probe) {
    const auto it = probe.meta.find("ambiguous");
    return probe.kind == data::ProbeKind::abstain && it != probe.meta.end() && it->is_boolean() && it->get<bool>();
}

store::ProbeRow probe_row(const data::Scenario& scenario, const data::Probe& probe, int k,
                          const grade::ProbeVerdict& verdict, const std::vector<memory::Hit>& hits,
                          std::int64_t micros) {
    store::ProbeRow row;
    row.scenario_id = scenario.id;
    row.dataset = scenario.dataset;
    row.probe_id = probe.id;
    row.k = k;
    row.kind = data::probe_kind_name(probe.kind);
    row.stage = verdict.stage ? grade::stage_name(*verdict.stage) : "needs_answer_stage";
    row.memory_success = verdict.memory_side_success();
    row.retrieved_json = hits_to_json(hits).dump(-1, ' ', false, json::error_handler_t::replace);
    row.retrieve_micros = micros;
    row.checkpoint = probe.after_session;
    // Replacement, not an exception, for bytes that are not UTF-8: the record must be written.
    json pj = data::to_json(probe);
    // A write-integrity probe carries its targets' ledger events, so a results file shows each
    // value's history without the dataset (the report's probe browser).
    if (!probe.targets.empty()) {
        json ledger = json::array();
        for (const auto& id : probe.targets)
            if (const data::LedgerEvent* e = scenario.event(id)) ledger.push_back(data::to_json(*e));
        pj["ledger"] = std::move(ledger);
    }
    row.probe_json = pj.dump(-1, ' ', false, json::error_handler_t::replace);
    for (const auto& f : verdict.facts) {
        store::FactRow fr;
        fr.fact_id = f.fact_id;
        fr.stage = grade::stage_name(f.stage);
        fr.method = grade::match_name(f.method);
        fr.stored_json = json(f.stored_ids).dump();
        fr.retrieved_json = json(f.retrieved_ids).dump();
        fr.missing_json = json(f.missing_details).dump();
        fr.explanation = f.explanation;
        row.facts.push_back(std::move(fr));
    }
    return row;
}

store::StageCheckRow check(const std::string& fact_id, const char* stage, const char* grader, bool passed,
                           bool decisive, std::string reason) {
    return {fact_id, stage, grader, passed, decisive, std::move(reason)};
}

void add_rules_memory_checks(const grade::FactVerdict& fv, bool decisive, std::vector<store::StageCheckRow>& out) {
    if (fv.unsure == grade::Unsure::storage) {
        out.push_back(check(fv.fact_id, "storage", k_rules_unsure, false, false, fv.explanation));
        return;
    }
    const bool stored = fv.stage != grade::Stage::not_stored;
    const std::size_t copies = fv.stored_ids.size();
    out.push_back(check(fv.fact_id, "storage", "rules", stored, decisive,
                        stored ? "held by " + std::to_string(copies) + (copies == 1 ? " memory" : " memories")
                               : fv.explanation));
    if (!stored) return;
    if (fv.unsure == grade::Unsure::summary) {
        out.push_back(check(fv.fact_id, "summary", k_rules_unsure, false, false, fv.explanation));
        return;
    }
    if (fv.unsure == grade::Unsure::retrieval) {
        out.push_back(check(fv.fact_id, "summary", "rules", true, decisive, "the fact's statements are held verbatim"));
        out.push_back(check(fv.fact_id, "retrieval", k_rules_unsure, false, false, fv.explanation));
        return;
    }
    const bool faithful = fv.stage != grade::Stage::summary_error;
    out.push_back(check(fv.fact_id, "summary", "rules", faithful, decisive,
                        faithful ? "the fact's statements are held verbatim" : fv.explanation));
}

// The memories the probe's facts were found stored in, for the report's probe browser. A fact
// a system copied into many memories is shown by its first few.
std::vector<store::MemoryTextRow> ProbeGrader::stored_memory_texts(const grade::ProbeVerdict& verdict,
                                                                const grade::MemorySnapshot& snapshot) {
    constexpr std::size_t k_max_memories = 32;
    std::vector<store::MemoryTextRow> out;
    std::set<std::string> seen;
    for (const auto& fact : verdict.facts)
        for (const auto& id : fact.stored_ids) {
            if (out.size() >= k_max_memories) return out;
            if (!seen.insert(id).second) continue;
            const auto index = snapshot.index_of(id);
            if (!index) continue;
            const memory::Memory& m = snapshot.memories()[*index];
            out.push_back({m.id, m.text, json(m.sources).dump(-1, ' ', false, json::error_handler_t::replace)});
        }
    return out;
}

// Built on first use, not up front: only --grader both's failed profile items read it.
const data::MessageIndex& ProbeGrader::messages() {
    std::call_once(m_messages_once, [this] { m_messages.emplace(m_scenario); });
    return *m_messages;
}

// A profile task's row from the suite's analysis; the answer's grade is added when there is one.
store::ProfileRow ProbeGrader::profile_row(const data::Probe& probe, const suites::ProbeAnalysis& analysis) const {
    store::ProfileRow r;
    r.task = probe.task;
    r.state_key = probe.state_key;
    r.profile_checkpoint = probe.checkpoint;
    r.state_change = probe.state_change;
    for (const auto& st : m_scenario.profile)
        if (st.key == probe.state_key) r.family = data::state_family_name(st.family);
    if (r.family.empty() && probe.meta.contains("family") && probe.meta["family"].is_string())
        r.family = probe.meta["family"].get<std::string>();
    r.recall = analysis.recall;
    r.label = analysis.label;
    r.reason = analysis.reason;
    json fields = json::array();
    for (const auto& f : analysis.fields)
        fields.push_back({{"path", f.path}, {"gold", f.gold}, {"stored", f.stored}, {"retrieved", f.retrieved},
                          {"unsure", f.unsure}, {"logs", f.logs}});
    r.fields_json = fields.dump(-1, ' ', false, json::error_handler_t::replace);
    return r;
}

// The decisive stage of one probe at one k, with every check made.
// The text the question was made from (its first evidence fact), for the abstention judge.
static std::string source_essay(const data::Probe& probe) {
    return probe.evidence.empty() ? std::string() : probe.evidence.front().text;
}

store::ProbeRow ProbeGrader::grade(const PendingProbe& p, const grade::MemorySnapshot& snapshot,
                            const std::map<std::string, FactState>& facts) {
    const data::Scenario& s = m_scenario;
    store::ProbeRow row = probe_row(s, *p.probe, p.k, p.rules, p.hits, p.micros);
    row.grader = m_roles.grader;
    row.stored_memories = stored_memory_texts(p.rules, snapshot);
    row.memory_checks = p.memory_checks;
    if (p.analysis) row.profile = profile_row(*p.probe, *p.analysis);
    if (m_roles.tokenizer) {
        std::int64_t tokens = 0;
        for (const auto& hit : p.hits) tokens += static_cast<std::int64_t>(m_roles.tokenizer->count(hit.memory.text));
        row.retrieved_tokens = tokens;
    }
    if (!p.retrieve_error.empty()) {
        row.stage = "error";
        row.memory_success = false;
        row.error = p.retrieve_error;
        return row;
    }
    if (p.answer) row.answer = *p.answer;
    const bool use_judge = m_roles.grader != "rules";

    // Memory side.
    std::optional<grade::Stage> memory_stage = p.rules.stage;  // empty: no evidence (abstain)
    if (!use_judge) {
        for (const auto& fv : p.rules.facts) {
            add_rules_memory_checks(fv, true, row.checks);
            if (fv.stage == grade::Stage::not_retrieved || fv.stage == grade::Stage::retrieved)
                row.checks.push_back(check(fv.fact_id, "retrieval", "rules", fv.stage == grade::Stage::retrieved,
                                           true, fv.explanation));
        }
    } else if (!p.probe->evidence.empty()) {
        std::vector<grade::Stage> stages;
        for (std::size_t f = 0; f < p.probe->evidence.size(); ++f) {
            const auto& fact = p.probe->evidence[f];
            const grade::FactVerdict& rules = p.rules.facts[f];
            const FactMemory& fm = facts.at(fact.id).memory;
            for (const auto& c : fm.checks) row.checks.push_back(c);
            auto& fact_row = row.facts[f];
            if (!fm.error.empty()) {
                row.stage = "error";
                row.error = fm.error;
                row.memory_success = false;
                return row;
            }
            grade::Stage stage;
            std::string reason;
            if (!fm.stored) {
                stage = grade::Stage::not_stored;
                reason = fm.reason;
            } else if (!fm.faithful) {
                stage = grade::Stage::summary_error;
                reason = fm.reason;
            } else {
                // Retrieval. With holders the rules' check is exact; when the judge decided
                // storage, provenance decides (a memory from the fact's messages is in the top
                // k), else the judge. With --grader both the judge is asked too, for comparison.
                bool retrieved = false;
                bool judge_decides = false;
                if (m_judge_all || rules.unsure == grade::Unsure::retrieval || rules.placed_only) {
                    // The paper's judge decides every stage; what was served differs from the store
                    // in a way the rules cannot read: the judge reads what was served; and a fact
                    // placed only among several messages, which provenance cannot pin.
                    judge_decides = true;
                    if (rules.retrieval_checked)  // kept beside the judge's, for the agreement figures
                        row.checks.push_back(check(fact.id, "retrieval", "rules", rules.retrieved, false,
                                                   rules.retrieval_explanation));
                } else if (!fm.storage_judged && rules.retrieval_checked) {
                    retrieved = rules.retrieved;
                    reason = rules.retrieval_explanation;
                    row.checks.push_back(check(fact.id, "retrieval", "rules", retrieved, true, reason));
                } else if (snapshot.provenance()) {
                    retrieved = std::any_of(p.hits.begin(), p.hits.end(), [&](const memory::Hit& hit) {
                        return grade::cites_fact(hit.memory.sources, fact);
                    });
                    reason = retrieved ? "a memory from the fact's messages is in the top k"
                                       : "no memory from the fact's messages is in the top k";
                    row.checks.push_back(check(fact.id, "retrieval", "provenance", retrieved, true, reason));
                } else {
                    judge_decides = true;
                }
                if (judge_decides || m_roles.grader == "both") {
                    auto v = m_roles.judge->retrieval(fact, p.hits, m_task, p.probe->question);
                    if (!v) {
                        row.stage = "error";
                        row.error = v.error().describe();
                        row.memory_success = false;
                        return row;
                    }
                    row.checks.push_back(check(fact.id, "retrieval", "llm", v->passed, judge_decides, v->reason));
                    if (judge_decides) {
                        retrieved = v->passed;
                        reason = v->reason;
                    }
                }
                stage = retrieved ? grade::Stage::retrieved : grade::Stage::not_retrieved;
                if (retrieved && reason.empty()) reason = "stored faithfully and retrieved";
            }
            fact_row.stage = grade::stage_name(stage);
            fact_row.explanation = reason;
            stages.push_back(stage);
        }
        memory_stage = grade::combine_fact_stages(stages);
    }
    row.memory_success = memory_stage == grade::Stage::retrieved;
    row.stage = memory_stage ? grade::stage_name(*memory_stage) : "needs_answer_stage";
    // A misleading question that names a person whose essay is stored (the paper's release reuses
    // names) has no single right answer: abstaining and answering from that essay both defend
    // themselves. It is reported apart, never graded as must-abstain (docs/TAXONOMY.md).
    if (!memory_stage && is_ambiguous(*p.probe)) {
        row.stage = "ambiguous";
        row.reasoning = "not graded";
        return row;
    }

    // Answer stage: reached when every fact was retrieved, or at once for abstain probes.
    const bool reached = !memory_stage || *memory_stage == grade::Stage::retrieved;
    if (!m_roles.taker && !p.system_answered) return row;
    if (!p.answer_error.empty()) {
        row.stage = "error";
        row.error = p.answer_error;
        row.memory_success = false;  // an error row is in no numerator (docs/TAXONOMY.md)
        return row;
    }
    // A suite that grades its own probes' answers (write integrity, profile tasks) grades them
    // whatever the memory stage: it compares answers across modes (no memory, native, oracle). The
    // stage stays the memory's when the memory failed first.
    if (m_suite && p.answer) {
        suites::AnswerContext context{m_scenario, *p.probe, *p.answer, p.hits};
        context.system_answered = p.system_answered;
        context.system_confidence = p.system_confidence;
        context.judge = m_roles.judge ? &*m_roles.judge : nullptr;
        context.task = m_task;
        context.grader = m_roles.grader;
        context.protocol = m_roles.protocol;
        const std::string prefix = m_suite->name() + ".";
        for (const auto& [key, value] : m_roles.settings)
            if (key.rfind(prefix, 0) == 0) context.settings[key.substr(prefix.size())] = value;
        context.analysis = p.analysis ? &*p.analysis : nullptr;
        context.messages = [this]() -> const data::MessageIndex& { return messages(); };
        if (auto graded = m_suite->grade_answer(context))
            return suite_answer(p, std::move(row), reached, std::move(*graded));
    }
    // Without memory (`none`) the answer is graded all the same, to show which probes need no
    // memory; the stage stays the memory's (not_stored), so no rate counts it as correct.
    const bool without_memory = !reached && m_roles.no_memory;
    if (!reached && !without_memory) {
        row.reasoning = "not reached";
        if (m_scores_every_answer) benchmark_verdict(p, row);
        return row;
    }
    const bool abstain = p.probe->kind == data::ProbeKind::abstain;
    const char* stage_label = abstain ? "abstention" : "answer";
    const auto by_rules = grade::grade_answer_by_rules(*p.probe, *p.answer);
    // Multiple choice is read exactly; other kinds need meaning and go to the judge when there is one.
    const bool judge_decides = use_judge && p.probe->kind != data::ProbeKind::mcq;
    row.checks.push_back(check("", stage_label, by_rules.decided ? "rules" : "rules_unsure", by_rules.correct,
                               !judge_decides && by_rules.decided, by_rules.reason));
    bool correct = by_rules.correct;
    if (judge_decides) {
        // Under the paper's protocol the abstention judge also reads the essay the question was made from.
        const auto v = judge_answer(p, row, stage_label, source_essay(*p.probe));
        if (!v) return row;
        correct = *v;
    } else if (!by_rules.decided) {
        // The rules cannot prove the answer right or wrong and no judge is there: unverified, never
        // correct and never a reasoning error (docs/TAXONOMY.md).
        if (without_memory) {
            row.reasoning = "unverified without memory";
            return row;
        }
        row.reasoning = "unverified";
        row.stage = "unverified";
        return row;
    }
    row.answer_correct = correct;
    if (without_memory) {
        row.reasoning = correct ? "correct without memory" : "wrong without memory";
        return row;
    }
    row.reasoning = correct ? "correct" : "reasoning_error";
    row.stage = correct ? "correct" : "reasoning_error";
    return row;
}

// The judge's call on the probe's answer, or on its abstention for an abstain probe.
Result<grade::JudgeVerdict> ProbeGrader::ask_answer_judge(const PendingProbe& p, const std::string& essay) {
    return p.probe->kind == data::ProbeKind::abstain ? m_roles.judge->abstention(*p.probe, *p.answer, m_task, essay)
                                                     : m_roles.judge->answer(*p.probe, *p.answer, m_task);
}

// The judge's verdict on the probe's answer (or abstention), recorded as the decisive check;
// empty when the call failed, with `row` made an error row saying why.
std::optional<bool> ProbeGrader::judge_answer(const PendingProbe& p, store::ProbeRow& row, const char* stage_label,
                                 const std::string& essay) {
    auto v = ask_answer_judge(p, essay);
    if (!v) {
        row.stage = "error";
        row.error = v.error().describe();
        row.memory_success = false;
        return std::nullopt;
    }
    row.checks.push_back(check("", stage_label, "llm", v->passed, true, v->reason));
    return v->passed;
}

// For a dataset whose own metric scores every answer: the verdict on the answer of a probe the
// taxonomy stopped before the answer stage, as the answer stage would reach it (the judge where one
// decides, else the answer rules), kept as a non-decisive `benchmark` check. The row's stage, rates
// and answer_correct are untouched. A judge call that fails leaves no check, and the question is
// then not scored (report/benchmark.cpp counts it out of `scored`).
void ProbeGrader::benchmark_verdict(const PendingProbe& p, store::ProbeRow& row) {
    if (!p.answer) return;
    if (m_roles.grader != "rules" && p.probe->kind != data::ProbeKind::mcq) {
        const auto v = ask_answer_judge(p, source_essay(*p.probe));
        if (v) row.checks.push_back(check("", "benchmark", "llm", v->passed, false, v->reason));
        return;
    }
    // Only a verdict the rules can prove is kept: an undecided answer is not scored.
    const auto by_rules = grade::grade_answer_by_rules(*p.probe, *p.answer);
    if (by_rules.decided) row.checks.push_back(check("", "benchmark", "rules", by_rules.correct, false, by_rules.reason));
}

// The row's answer-stage outcome once its answer is graded: the memory's stage stands when the
// memory failed first; an answer nobody could decide is unverified, never a pass.
static store::ProbeRow with_answer_verdict(store::ProbeRow row, std::optional<bool> correct, bool reached) {
    if (!reached) {
        row.reasoning = "not reached";
        return row;
    }
    if (!correct) {
        row.reasoning = "unverified";
        row.stage = "unverified";
        return row;
    }
    row.reasoning = *correct ? "correct" : "reasoning_error";
    row.stage = *correct ? "correct" : "reasoning_error";
    return row;
}

// The row once its suite graded the answer: the suite's checks recorded, a profile task's field
// grades merged into its profile row; the memory's stage stands when the memory failed first and an
// answer nobody could decide is unverified, never a pass.
store::ProbeRow ProbeGrader::suite_answer(const PendingProbe& p, store::ProbeRow row, bool reached,
                                          suites::AnswerGrade grade) {
    for (auto& c : grade.checks)
        row.checks.push_back(check(c.field, c.stage.c_str(), c.grader.c_str(), c.passed, c.decisive, std::move(c.reason)));
    if (p.system_answered)
        row.checks.push_back(check("", "answer_source", "system", true, false,
                                   "the system answered for itself (the adapter's answer operation)"));
    if (!grade.error.empty()) {
        row.stage = "error";
        row.error = std::move(grade.error);
        row.memory_success = false;  // an error row is in no numerator (docs/TAXONOMY.md)
        return row;
    }
    if (row.profile) {
        row.profile->item_score = grade.item_score;
        json fields = json::parse(row.profile->fields_json, nullptr, false);
        if (!fields.is_array()) fields = json::array();
        for (auto& graded : grade.fields) {
            const std::string path = graded.value("path", "");
            bool placed = false;
            for (auto& f : fields)
                if (f.value("path", "") == path) {
                    f["grade"] = graded["grade"];
                    placed = true;
                }
            if (!placed) fields.push_back(std::move(graded));
        }
        row.profile->fields_json = fields.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    row.answer_correct = grade.correct;
    return with_answer_verdict(std::move(row), grade.correct, reached);
}

}  // namespace memfail::run
