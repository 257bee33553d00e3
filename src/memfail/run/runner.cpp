// SPDX-License-Identifier: MIT
// The resumable run loop.
#include <memfail/core/hash.hpp>
#include <memfail/core/version.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/grade/memory_grader.hpp>
#include <memfail/run/call_recorder.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>

#include <memfail/core/thread_pool.hpp>
#include <memfail/grade/answer_rules.hpp>
#include <memfail/grade/llm_judge.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/run/test_taker.hpp>
#include <memfail/suites/memfail/protocol.hpp>
#include <memfail/text/tokenizer.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace memfail::run {

using nlohmann::json;

SystemFactory factory_for_spec(const std::string& spec) {
    return [spec](const memory::SystemContext& context) { return memory::make_memory_system(spec, context); };
}

std::string memory_dir_for(const std::string& results_path, std::int64_t run_id) {
    return results_path + ".memory/run-" + std::to_string(run_id);
}

namespace {

std::int64_t micros_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
        .count();
}

// A misleading probe whose named person is described elsewhere in the store (`meta.ambiguous`).
bool is_ambiguous(const data::Probe& probe) {
    const auto it = probe.meta.find("ambiguous");
    return probe.kind == data::ProbeKind::abstain && it != probe.meta.end() && it->is_boolean() && it->get<bool>();
}

json hits_to_json(const std::vector<memory::Hit>& hits) {
    json out = json::array();
    for (const auto& h : hits)
        out.push_back({{"id", h.memory.id}, {"text", h.memory.text}, {"sources", h.memory.sources},
                       {"score", h.score}});
    return out;
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
    row.probe_json = data::to_json(probe).dump(-1, ' ', false, json::error_handler_t::replace);
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

std::string config_hash(const RunConfig& config, const std::vector<LoadedDataset>& datasets,
                        const std::string& grader) {
    json j = {{"system", config.system_spec}, {"ks", config.ks}, {"code_version", code_version()}};
    json hashes = json::array();
    for (const auto& d : datasets) hashes.push_back(d.hash);
    j["datasets"] = hashes;
    // Only what changes results: limits, concurrency and cache mode do not.
    if (config.llm.uses_llm() || grader != "rules") {
        j["grader"] = grader;
        j["answer_model"] = config.llm.answer_model;
        j["judge_model"] = config.llm.judge_model;
        j["system_model"] = config.llm.system_model;
        j["embed_model"] = config.llm.embed_model;
        j["base_url"] = config.llm.base_url;
        if (config.llm.temperature) j["temperature"] = *config.llm.temperature;
        if (config.llm.seed) j["seed"] = *config.llm.seed;
        j["prompts"] = llm::prompts::k_prompt_version;
        j["judge"] = grade::k_judge_version;
        j["store_replies"] = config.store_replies;
    }
    if (config.limit > 0) j["limit"] = config.limit;
    // Absent for memfail's own protocol, so the runs made before protocols existed still resume.
    if (config.protocol != "memfail") j["protocol"] = config.protocol;
    return content_hash(j.dump());
}

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

// One probe at one k on its way through the stages.
struct PendingProbe {
    const data::Probe* probe = nullptr;
    int k = 0;
    std::vector<memory::Hit> hits;
    std::string retrieve_error;
    std::int64_t micros = 0;
    grade::ProbeVerdict rules;
    std::optional<std::string> answer;
    std::string answer_error;
};

store::StageCheckRow check(const std::string& fact_id, const char* stage, const char* grader, bool passed,
                           bool decisive, std::string reason) {
    return {fact_id, stage, grader, passed, decisive, std::move(reason)};
}

// The grader name of a check the rules could not decide: recorded so a reader sees why the judge
// was asked, and kept out of the rules-versus-judge agreement figures.
constexpr const char* k_rules_unsure = "rules_unsure";

// The rules' storage and summary verdicts, read off the rules' fact verdict (they do not depend on
// k). An unsure check is recorded as such and is never decisive.
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
    const bool faithful = fv.stage != grade::Stage::summary_error;
    out.push_back(check(fv.fact_id, "summary", "rules", faithful, decisive,
                        faithful ? "the fact's statements are held verbatim" : fv.explanation));
}

class ScenarioRun {
public:
    ScenarioRun(store::ResultsDb& db, std::int64_t run_id, const RunConfig& config,
                const LoadedDataset& dataset, const ProgressSink& progress, const AfterProbeHook& hook,
                RunOutcome& outcome, RunServices& roles)
        : m_db(db), m_run_id(run_id), m_config(config), m_dataset(dataset), m_progress(progress),
          m_hook(hook), m_outcome(outcome), m_roles(roles), m_messages(dataset.scenario),
          m_task(roles.paper ? llm::prompts::paper_task_of(dataset.scenario.dataset) : std::nullopt),
          m_judge_all(m_task.has_value() && roles.judge.has_value()) {}

    // Returns false when the after-probe hook asked to stop.
    Result<bool> execute(memory::MemorySystem& system) {
        const data::Scenario& s = m_dataset.scenario;
        MF_TRY(m_db.upsert_scenario({m_run_id, s.id, s.dataset, m_dataset.hash,
                                     static_cast<std::int64_t>(s.sessions.size()),
                                     static_cast<std::int64_t>(s.probes.size()), "storing"}));
        MF_TRY_ASSIGN(auto already_stored, m_db.stored_sessions(m_run_id, s.id));
        MF_TRY_ASSIGN(m_graded, m_db.graded_probes(m_run_id, s.id));
        const memory::Capabilities caps = system.capabilities();
        // A scenario starts from an empty store: an outside system keeps one store for every dataset,
        // so what an earlier dataset left must not leak in. Resuming, a system whose store is not
        // idempotent starts again too, so sessions recorded before the crash are not stored twice;
        // an idempotent one simply re-stores.
        if (already_stored.empty() || !caps.idempotent_store) {
            auto emptied = system.reset();
            if (!emptied) {
                if (!caps.external) return emptied.error();
                return lose_scenario(s.dataset + ": the system could not be reset: " + emptied.error().describe());
            }
        }
        if (caps.uses_ground_truth) system.observe_ground_truth(s);
        m_external = caps.external;
        m_generation = system.generation();

        std::map<std::string, std::vector<const data::Probe*>> by_checkpoint;
        for (const auto& p : s.probes) by_checkpoint[p.after_session].push_back(&p);

        // Storage-phase replies are generated for every session up front and concurrently (each
        // reply sees only its own session, so sessions are independent); the cache makes a resumed
        // or repeated run replay them for free.
        // Under the paper's protocol the test-taker answers each storage turn with the memories
        // retrieved for it shown, so the replies depend on what was stored before: made in order.
        const bool paper_replies = m_roles.paper && m_roles.taker.has_value();
        const int k = *std::min_element(m_config.ks.begin(), m_config.ks.end());
        std::vector<data::Session> with_replies;
        if (m_config.store_replies && !paper_replies) {
            MF_TRY_ASSIGN(with_replies, replies_for_all(s.sessions));
        }

        const std::size_t total = s.sessions.size();
        std::size_t next_report = 0;
        for (std::size_t i = 0; i < total; ++i) {
            if (memory_was_lost(system))
                return lose_scenario(s.dataset + ": " + lost_memory_reason(s.sessions[i].id));
            data::Session replied;
            if (paper_replies) {
                // The paper's storage turn: each user message's reply sees the memories the system
                // retrieves for it, at the run's smallest k.
                auto r = m_roles.taker->with_replies(
                    s.sessions[i], [&](const data::Message& turn, const std::vector<data::Message>& before) {
                        return system.retrieve_memories(turn.content, before, k);
                    });
                if (!r) {
                    if (m_external)
                        return lose_scenario(s.dataset + ": answering storage session '" + s.sessions[i].id +
                                             "' failed: " + r.error().describe());
                    return r.error().with_context(s.dataset + ": answering storage session '" + s.sessions[i].id + "'");
                }
                replied = std::move(*r);
            }
            const data::Session& session =
                paper_replies ? replied : m_config.store_replies ? with_replies[i] : s.sessions[i];
            const auto start = std::chrono::steady_clock::now();
            auto stored = system.store_conversation(session);
            if (!stored) {
                if (m_external)
                    return lose_scenario(s.dataset + ": storing session '" + session.id +
                                         "' failed: " + stored.error().describe());
                return stored.error().with_context(s.dataset + ": storing session '" + session.id + "'");
            }
            MF_TRY(m_db.record_store(m_run_id, s.id, session.id, micros_since(start)));
            if (m_config.keep_going && !m_config.keep_going()) return false;
            if (m_progress && (i + 1 >= next_report || i + 1 == total)) {
                m_progress(s.dataset + ": stored " + std::to_string(i + 1) + "/" + std::to_string(total) +
                           " sessions");
                next_report = i + 1 + std::max<std::size_t>(1, total / 10);
            }
            auto it = by_checkpoint.find(session.id);
            if (it == by_checkpoint.end()) continue;
            MF_TRY_ASSIGN(bool go_on, grade_checkpoint(system, it->second));
            if (!go_on) return false;
            if (m_lost) return true;
        }
        MF_TRY(flush_calls());
        MF_TRY(m_db.set_scenario_status(m_run_id, s.id, "graded"));
        return true;
    }

private:
    // An outside system that restarted (its generation moved) has lost what it held since this
    // scenario began, so nothing after that can be graded against it.
    bool memory_was_lost(const memory::MemorySystem& system) const {
        return m_external && system.generation() != m_generation;
    }
    static std::string lost_memory_reason(const std::string& before) {
        return "the adapter failed earlier in this scenario and is restarted empty before '" + before +
               "', so what it held is gone; not graded";
    }

    // Records every probe of the scenario not graded yet as an error with `reason`, marks the
    // scenario done, and lets the run go on with the next one.
    Result<bool> lose_scenario(const std::string& reason) {
        const data::Scenario& s = m_dataset.scenario;
        if (m_progress) m_progress("warning: " + reason);
        for (const auto& probe : s.probes)
            for (int k : m_config.ks) {
                if (m_graded.count({probe.id, k})) continue;
                store::ProbeRow row = probe_row(s, probe, k, {}, {}, 0);
                row.grader = m_roles.grader;
                row.stage = "error";
                row.memory_success = false;
                row.error = reason;
                MF_TRY(m_db.record_probe(m_run_id, row));
                m_graded.insert({probe.id, k});
                ++m_outcome.probes_graded;
            }
        MF_TRY(flush_calls());
        MF_TRY(m_db.set_scenario_status(m_run_id, s.id, "graded"));
        m_lost = true;
        return true;
    }

    Result<std::vector<data::Session>> replies_for_all(const std::vector<data::Session>& sessions) {
        if (!m_roles.taker)
            return make_error(ErrorKind::invalid_input, "storing the assistant's replies needs --answer-model");
        if (m_progress) m_progress(m_dataset.scenario.dataset + ": writing the assistant's storage-phase replies");
        std::vector<std::future<Result<data::Session>>> futures;
        for (const auto& session : sessions)
            futures.push_back(m_roles.pool->submit([this, &session] { return m_roles.taker->with_replies(session); }));
        std::vector<data::Session> out;
        std::optional<Error> first_error;
        for (auto& f : futures) {
            auto r = f.get();
            if (!r && !first_error) first_error = r.error();
            if (r) out.push_back(std::move(*r));
        }
        MF_TRY(flush_calls());
        if (first_error) return first_error->with_context("storage-phase reply");
        return out;
    }

    Result<void> flush_calls() {
        if (!m_roles.recorder) return {};
        return m_db.record_llm_calls(m_run_id, m_roles.recorder->drain());
    }

    Result<bool> grade_checkpoint(memory::MemorySystem& system, const std::vector<const data::Probe*>& probes) {
        const data::Scenario& s = m_dataset.scenario;
        std::vector<PendingProbe> pending;
        for (const auto* p : probes)
            for (int k : m_config.ks) {
                if (m_graded.count({p->id, k})) ++m_outcome.probes_skipped;
                else pending.push_back(PendingProbe{p, k, {}, {}, 0, {}, {}, {}});
            }
        if (pending.empty()) return true;

        auto all = system.all_memories();
        if (!all) {
            if (!m_external) return all.error();
            MF_TRY(lose_scenario(s.dataset + ": listing the memories at '" + probes.front()->after_session +
                                 "' failed: " + all.error().describe()));
            return true;
        }
        const grade::MemorySnapshot snapshot(std::move(*all), system.capabilities().provenance);
        MF_TRY(record_memory_stats(snapshot, probes.front()->after_session));

        // 1. Retrieval, in order: memory systems need not be thread-safe, and retrieval is local.
        for (auto& p : pending) {
            // Asked to stop: nothing of this checkpoint is recorded yet, so it is simply redone.
            if (m_config.keep_going && !m_config.keep_going()) return false;
            if (memory_was_lost(system)) {
                p.retrieve_error = lost_memory_reason(p.probe->id);
                if (!m_warned_lost && m_progress)
                    m_progress("warning: " + s.dataset + ": the adapter failed and lost its memory; the remaining "
                               "probes of this dataset are recorded as errors");
                m_warned_lost = true;
                continue;
            }
            const auto start = std::chrono::steady_clock::now();
            auto hits = system.retrieve_memories(p.probe->question, {}, p.k);
            p.micros = micros_since(start);
            if (hits) {
                p.hits = std::move(*hits);
                p.rules = grade::grade_memory_side(*p.probe, snapshot, p.hits, &m_messages);
            } else {
                // An adapter failing one probe must not stop the run: record it and go on.
                p.retrieve_error = hits.error().describe();
            }
        }

        // 2. Answers and the k-independent judge stages, concurrently.
        std::vector<std::future<void>> answer_jobs;
        if (m_roles.taker)
            for (auto& p : pending)
                if (p.retrieve_error.empty())
                    answer_jobs.push_back(m_roles.pool->submit([this, &p] {
                        auto reply = m_roles.taker->answer(*p.probe, p.hits);
                        if (reply) p.answer = std::move(*reply);
                        else p.answer_error = reply.error().describe();
                    }));
        if (m_progress && !answer_jobs.empty())
            m_progress(s.dataset + ": the test-taker answers " + std::to_string(answer_jobs.size()) + " probe x k");
        std::map<std::string, FactMemory> facts;
        if (m_roles.grader != "rules") judge_fact_memory(pending, snapshot, facts);
        std::size_t answered = 0, next_answer_report = 0;
        for (auto& job : answer_jobs) {
            job.get();
            ++answered;
            if (m_progress && (answered >= next_answer_report || answered == answer_jobs.size())) {
                m_progress(s.dataset + ": answered " + std::to_string(answered) + "/" + std::to_string(answer_jobs.size()));
                next_answer_report = answered + std::max<std::size_t>(1, answer_jobs.size() / 5);
            }
        }
        if (m_roles.recorder)
            if (auto refused = m_roles.recorder->refused_outright()) {
                MF_TRY(flush_calls());
                return *refused;
            }

        // 3. Per probe x k: retrieval and answer stages, then record in order.
        std::vector<std::future<store::ProbeRow>> rows;
        rows.reserve(pending.size());
        for (auto& p : pending)
            rows.push_back(m_roles.pool
                               ? m_roles.pool->submit([this, &p, &snapshot, &facts] { return grade_probe(p, snapshot, facts); })
                               : ready(grade_probe(p, snapshot, facts)));
        const std::size_t total = pending.size();
        std::size_t next_report = 0;
        for (std::size_t i = 0; i < total; ++i) {
            store::ProbeRow row = rows[i].get();
            MF_TRY(m_db.record_probe(m_run_id, row));
            MF_TRY(flush_calls());
            ++m_outcome.probes_graded;
            if (m_progress && (i + 1 >= next_report || i + 1 == total)) {
                m_progress(s.dataset + ": graded " + std::to_string(i + 1) + "/" + std::to_string(total) +
                           " probe x k");
                next_report = i + 1 + std::max<std::size_t>(1, total / 5);
            }
            if ((m_hook && !m_hook(pending[i].probe->id, pending[i].k)) ||
                (m_config.keep_going && !m_config.keep_going())) {
                // Let the queued work finish before the references it holds go away.
                for (std::size_t j = i + 1; j < total; ++j) rows[j].wait();
                return false;
            }
        }
        return true;
    }

    // The store's size at this checkpoint, in memories and tokens (the paper's tokens per memory).
    Result<void> record_memory_stats(const grade::MemorySnapshot& snapshot, const std::string& checkpoint) {
        std::optional<std::int64_t> tokens;
        if (m_roles.tokenizer) {
            std::int64_t total = 0;
            for (const auto& m : snapshot.memories()) total += static_cast<std::int64_t>(m_roles.tokenizer->count(m.text));
            tokens = total;
        }
        return m_db.record_memory_stats(m_run_id, m_dataset.scenario.id, checkpoint,
                                        static_cast<std::int64_t>(snapshot.memories().size()), tokens,
                                        m_roles.tokenizer ? m_roles.tokenizer->encoding() : std::string());
    }

    // The memories the probe's facts were found stored in, for the report's probe browser. A fact
    // a system copied into many memories is shown by its first few.
    static std::vector<store::MemoryTextRow> stored_memory_texts(const grade::ProbeVerdict& verdict,
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

    static std::future<store::ProbeRow> ready(store::ProbeRow row) {
        std::promise<store::ProbeRow> promise;
        promise.set_value(std::move(row));
        return promise.get_future();
    }

    // Storage (batched) and summary verdicts for every fact of the pending probes. The rules decide
    // what they can decide exactly (docs/TAXONOMY.md); the judge decides what they are unsure of,
    // and with --grader both is asked about everything, for comparison only.
    void judge_fact_memory(const std::vector<PendingProbe>& pending, const grade::MemorySnapshot& snapshot,
                           std::map<std::string, FactMemory>& facts) {
        const bool provenance = snapshot.provenance();
        const bool compare = m_roles.grader == "both";
        std::vector<const data::EvidenceFact*> unique;
        std::map<std::string, const grade::FactVerdict*> rules_of;
        for (const auto& p : pending) {
            if (!p.retrieve_error.empty()) continue;
            for (std::size_t f = 0; f < p.probe->evidence.size(); ++f) {
                const auto& fact = p.probe->evidence[f];
                if (facts.count(fact.id)) continue;
                facts[fact.id];
                unique.push_back(&fact);
                rules_of[fact.id] = &p.rules.facts[f];
            }
        }
        if (unique.empty()) return;

        // Storage: the judge sees the facts the rules were unsure of (all of them with --grader both).
        std::vector<const data::EvidenceFact*> to_judge;
        for (const auto* fact : unique)
            if (compare || m_judge_all || rules_of[fact->id]->unsure == grade::Unsure::storage) to_judge.push_back(fact);
        std::map<std::string, grade::JudgeVerdict> judged_storage;
        if (!to_judge.empty()) {
            if (m_progress)
                m_progress(m_dataset.scenario.dataset + ": the judge checks the storage of " +
                           std::to_string(to_judge.size()) + " facts");
            const std::size_t batch = std::max<std::size_t>(1, m_roles.judge->options().storage_batch);
            std::vector<std::pair<std::vector<const data::EvidenceFact*>,
                                  std::future<Result<std::vector<grade::JudgeVerdict>>>>> jobs;
            for (std::size_t i = 0; i < to_judge.size(); i += batch) {
                std::vector<const data::EvidenceFact*> part(to_judge.begin() + static_cast<std::ptrdiff_t>(i),
                                                            to_judge.begin() + static_cast<std::ptrdiff_t>(std::min(to_judge.size(), i + batch)));
                auto future = m_roles.pool->submit([this, part, &snapshot] { return m_roles.judge->storage(snapshot, part, m_task); });
                jobs.emplace_back(std::move(part), std::move(future));
            }
            for (auto& [part, future] : jobs) {
                auto verdicts = future.get();
                for (std::size_t i = 0; i < part.size(); ++i) {
                    if (verdicts) judged_storage[part[i]->id] = (*verdicts)[i];
                    else facts[part[i]->id].error = verdicts.error().describe();
                }
            }
        }
        for (const auto* fact : unique) {
            FactMemory& fm = facts[fact->id];
            const grade::FactVerdict& rules = *rules_of[fact->id];
            const bool rules_decide = !m_judge_all && rules.unsure != grade::Unsure::storage;
            add_rules_memory_checks(rules, /*decisive=*/false, fm.checks);
            if (!fm.error.empty()) continue;
            if (rules_decide) {
                fm.stored = rules.stage != grade::Stage::not_stored;
                fm.checks.front().decisive = true;  // the rules' storage check
                if (!fm.stored) fm.reason = rules.explanation;
            }
            if (auto it = judged_storage.find(fact->id); it != judged_storage.end()) {
                fm.checks.push_back(check(fact->id, "storage", "llm", it->second.passed, !rules_decide, it->second.reason));
                if (!rules_decide) {
                    fm.stored = it->second.passed;
                    fm.storage_judged = true;
                    if (!fm.stored) fm.reason = it->second.reason;
                }
            }
        }

        std::size_t store_chars = 0;
        for (const auto& m : snapshot.memories()) store_chars += m.text.size();
        // Summary, for the facts that were stored, on the memories holding them: the rules decide a
        // verbatim copy and a lost detail; the judge decides the rest (a paraphrase that keeps every
        // listed phrase may still be negated, hedged or merged).
        std::vector<std::pair<const data::EvidenceFact*, std::future<Result<grade::JudgeVerdict>>>> jobs;
        for (const auto* fact : unique) {
            FactMemory& fm = facts[fact->id];
            if (!fm.error.empty() || !fm.stored) continue;
            const grade::FactVerdict& rules = *rules_of[fact->id];
            const bool rules_decide = !m_judge_all && rules.unsure == grade::Unsure::none && !fm.storage_judged;
            if (rules_decide) {
                fm.faithful = rules.stage != grade::Stage::summary_error;
                if (!fm.faithful) fm.reason = rules.explanation;
                for (auto& c : fm.checks)
                    if (c.stage == "summary" && c.grader == std::string("rules")) c.decisive = true;
                if (!compare) continue;
            }
            std::vector<std::string> ids = rules.stored_ids;
            if (m_judge_all) {
                // The paper's judge reads the whole store; a large one is narrowed to the memories the
                // storage judge and the rules found the fact in.
                if (store_chars <= m_roles.judge->options().whole_store_chars) {
                    ids.clear();
                    for (const auto& m : snapshot.memories()) ids.push_back(m.id);
                } else {
                    const auto& named = judged_storage[fact->id].memory_ids;
                    ids.insert(ids.end(), named.begin(), named.end());
                }
            }
            if (ids.empty()) ids = judged_storage[fact->id].memory_ids;
            if (ids.empty() && provenance)
                for (const auto& message_id : fact->message_ids)
                    for (std::size_t i : snapshot.by_source(message_id)) ids.push_back(snapshot.memories()[i].id);
            std::vector<const memory::Memory*> memories;
            std::set<std::string> seen;
            for (const auto& id : ids)
                if (seen.insert(id).second)
                    if (auto index = snapshot.index_of(id)) memories.push_back(&snapshot.memories()[*index]);
            jobs.emplace_back(fact, m_roles.pool->submit([this, fact, memories] { return m_roles.judge->summary(*fact, memories, m_task); }));
        }
        if (m_progress && !jobs.empty())
            m_progress(m_dataset.scenario.dataset + ": the judge checks how faithfully " + std::to_string(jobs.size()) +
                       " facts were kept");
        for (auto& [fact, future] : jobs) {
            FactMemory& fm = facts[fact->id];
            const grade::FactVerdict& rules = *rules_of[fact->id];
            const bool rules_decide = !m_judge_all && rules.unsure == grade::Unsure::none && !fm.storage_judged;
            auto v = future.get();
            if (!v) {
                fm.error = v.error().describe();
                continue;
            }
            fm.checks.push_back(check(fact->id, "summary", "llm", v->passed, !rules_decide, v->reason));
            if (rules_decide) continue;
            fm.faithful = v->passed;
            if (!fm.faithful) fm.reason = v->reason;
        }
    }

    // The decisive stage of one probe at one k, with every check made.
    store::ProbeRow grade_probe(const PendingProbe& p, const grade::MemorySnapshot& snapshot,
                                const std::map<std::string, FactMemory>& facts) {
        const data::Scenario& s = m_dataset.scenario;
        store::ProbeRow row = probe_row(s, *p.probe, p.k, p.rules, p.hits, p.micros);
        row.grader = m_roles.grader;
        row.stored_memories = stored_memory_texts(p.rules, snapshot);
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
                const FactMemory& fm = facts.at(fact.id);
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
                    if (m_judge_all) {
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
        if (!m_roles.taker) return row;
        if (!p.answer_error.empty()) {
            row.stage = "error";
            row.error = p.answer_error;
            row.memory_success = false;  // an error row is in no numerator (docs/TAXONOMY.md)
            return row;
        }
        if (!reached) {
            row.reasoning = "not reached";
            return row;
        }
        const bool abstain = p.probe->kind == data::ProbeKind::abstain;
        const char* stage_label = abstain ? "abstention" : "answer";
        const auto by_rules = grade::grade_answer_by_rules(*p.probe, *p.answer);
        // Multiple choice is read exactly; other kinds need meaning and go to the judge when there is one.
        const bool judge_decides = use_judge && p.probe->kind != data::ProbeKind::mcq;
        row.checks.push_back(check("", stage_label, "rules", by_rules.correct, !judge_decides, by_rules.reason));
        bool correct = by_rules.correct;
        if (judge_decides) {
            // Under the paper's protocol the abstention judge also reads the essay the question was made from.
            const std::string essay = p.probe->evidence.empty() ? std::string() : p.probe->evidence.front().text;
            auto v = abstain ? m_roles.judge->abstention(*p.probe, *p.answer, m_task, essay)
                             : m_roles.judge->answer(*p.probe, *p.answer, m_task);
            if (!v) {
                row.stage = "error";
                row.error = v.error().describe();
                row.memory_success = false;
                return row;
            }
            row.checks.push_back(check("", stage_label, "llm", v->passed, true, v->reason));
            correct = v->passed;
        }
        row.answer_correct = correct;
        row.reasoning = correct ? "correct" : "reasoning_error";
        row.stage = correct ? "correct" : "reasoning_error";
        return row;
    }

    store::ResultsDb& m_db;
    std::int64_t m_run_id;
    const RunConfig& m_config;
    const LoadedDataset& m_dataset;
    const ProgressSink& m_progress;
    const AfterProbeHook& m_hook;
    RunOutcome& m_outcome;
    RunServices& m_roles;
    std::set<std::pair<std::string, int>> m_graded;
    const data::MessageIndex m_messages;  // the scenario's messages, for facts without listed statements
    // The paper's protocol on a MemFail dataset: its per-dataset judge prompts, and the judge (when
    // there is one) decides every stage, as in the paper; the rules' checks are kept beside it.
    const grade::LlmJudge::Task m_task;
    const bool m_judge_all;
    bool m_external = false;         // the system is an adapter: its failures do not stop the run
    std::uint64_t m_generation = 0;  // the system's generation when this scenario began
    bool m_lost = false;             // lose_scenario() ran: the rest of the scenario is recorded
    bool m_warned_lost = false;      // the loss was announced on the progress stream
};

}  // namespace

Result<std::string> resolve_grader(const RunConfig& config) {
    std::string grader = config.grader;
    if (grader.empty() || grader == "auto") grader = config.llm.judge_model.empty() ? "rules" : "llm";
    if (grader != "rules" && grader != "llm" && grader != "both")
        return make_error(ErrorKind::invalid_input,
                          "unknown grader '" + config.grader + "': use auto, rules, llm or both", "--grader");
    if (grader != "rules" && config.llm.judge_model.empty())
        return make_error(ErrorKind::invalid_input, "--grader " + grader + " needs a judge model (--judge-model)",
                          "--grader");
    return grader;
}

Result<RunOutcome> run_datasets(const RunConfig& config, const std::vector<LoadedDataset>& given,
                                const SystemFactory& factory, const ProgressSink& progress,
                                const AfterProbeHook& after_probe, llm::LlmClient* client) {
    // --limit: the first N probes of each dataset (every session kept), hashed as asked, so the
    // run's record and `compare` name exactly the probes that were graded.
    std::vector<LoadedDataset> limited;
    if (config.limit > 0) {
        limited = given;
        for (auto& d : limited)
            if (d.scenario.probes.size() > config.limit) {
                d.scenario.probes.resize(config.limit);
                d.hash = data::scenario_hash(d.scenario);
            }
    }
    const std::vector<LoadedDataset>& datasets = config.limit > 0 ? limited : given;
    MF_TRY_ASSIGN(const std::string grader, resolve_grader(config));
    const bool wants_llm = config.llm.uses_llm() || grader != "rules";
    if (wants_llm && !client)
        return make_error(ErrorKind::invalid_input, "models are configured but no LLM client was given");
    if (config.store_replies && config.llm.answer_model.empty())
        return make_error(ErrorKind::invalid_input, "--store-replies needs an answer model (--answer-model)");
    if (config.ks.empty()) return make_error(ErrorKind::invalid_input, "no k given");
    if (config.protocol != "memfail" && config.protocol != "paper")
        return make_error(ErrorKind::invalid_input, "unknown protocol '" + config.protocol + "': use memfail or paper",
                          "--protocol");
    for (int k : config.ks)
        if (k < 1) return make_error(ErrorKind::invalid_input, "k must be at least 1, got " + std::to_string(k));
    for (std::size_t i = 1; i < config.ks.size(); ++i)
        if (std::find(config.ks.begin(), config.ks.begin() + static_cast<std::ptrdiff_t>(i), config.ks[i]) !=
            config.ks.begin() + static_cast<std::ptrdiff_t>(i))
            return make_error(ErrorKind::invalid_input, "k " + std::to_string(config.ks[i]) + " is listed twice");
    if (const auto parent = std::filesystem::path(config.results_path).parent_path(); !parent.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(parent, ec);
        if (ec)
            return make_error(ErrorKind::io, "cannot create the results folder: " + ec.message(), parent.string());
    }
    MF_TRY_ASSIGN(store::ResultsDb db, store::ResultsDb::open(config.results_path));

    RunOutcome outcome;
    const std::string hash = config_hash(config, datasets, grader);
    // The claim on the run is given up however this returns (finished, failed, or stopped by the
    // test hook); a killed process leaves it behind for the next writer to take over.
    struct ReleaseClaim {
        ReleaseClaim(store::ResultsDb& db_, std::int64_t run_id_) : db(db_), run_id(run_id_) {}
        ReleaseClaim(const ReleaseClaim&) = delete;
        ReleaseClaim& operator=(const ReleaseClaim&) = delete;
        ~ReleaseClaim() { (void)db.release_run(run_id); }
        store::ResultsDb& db;
        std::int64_t run_id;
    };
    std::optional<ReleaseClaim> claim;
    if (config.resume) {
        if (config.resume_run_id) {
            MF_TRY_ASSIGN(auto existing, db.run(config.resume_run_id));
            if (!existing)
                return make_error(ErrorKind::not_found,
                                  "no run " + std::to_string(config.resume_run_id) + " to resume", config.results_path);
            if (existing->config_hash != hash)
                return make_error(ErrorKind::invalid_input,
                                  "run " + std::to_string(existing->id) +
                                      " was made with another system, datasets, k list or code version; "
                                      "resume it with the same command, or start a new run",
                                  config.results_path);
            outcome.run_id = existing->id;
            if (existing->status == "finished" && !config.retry_errors) {
                outcome.already_finished = true;
                return outcome;
            }
        } else {
            MF_TRY_ASSIGN(auto existing, db.find_resumable(hash));
            if (existing) {
                outcome.run_id = existing->id;
            } else if (config.retry_errors) {
                MF_TRY_ASSIGN(auto done, db.find_finished(hash));
                if (done) outcome.run_id = done->id;
            } else {
                // Resuming what already finished does nothing: a second full run would double every
                // report's rows.
                MF_TRY_ASSIGN(auto done, db.find_finished(hash));
                if (done) {
                    outcome.run_id = done->id;
                    outcome.already_finished = true;
                    return outcome;
                }
            }
        }
        outcome.resumed = outcome.run_id != 0;
        // One run, one writer: a second process resuming a run another live process is writing is
        // refused before it touches anything.
        if (outcome.resumed) {
            MF_TRY(db.claim_run(outcome.run_id));
            claim.emplace(db, outcome.run_id);
        }
        if (config.retry_errors) {
            if (!outcome.resumed)
                return make_error(ErrorKind::not_found,
                                  "no run with this configuration to retry: --retry-errors re-grades the probes "
                                  "in error of an existing run (name it with --run-id)",
                                  config.results_path);
            MF_TRY_ASSIGN(outcome.retried, db.clear_error_probes(outcome.run_id));
            if (progress)
                progress("run " + std::to_string(outcome.run_id) + ": grading again the " +
                         std::to_string(outcome.retried) + " probe x k rows that ended in error");
        }
        if (!outcome.resumed && progress) progress("nothing to resume with this configuration: starting a new run");
    } else if (progress) {
        MF_TRY_ASSIGN(auto unfinished, db.find_resumable(hash));
        if (unfinished)
            progress("note: run " + std::to_string(unfinished->id) +
                     " with this configuration is unfinished; --resume would continue it. Starting a new run.");
    }
    json config_json = {{"system", config.system_spec}, {"ks", config.ks}, {"seed", config.seed},
                        {"grader", grader}, {"grader_version", grade::k_memory_grader_version},
                        {"protocol", config.protocol}};
    if (!config.name.empty()) config_json["name"] = config.name;
    if (config.limit > 0) config_json["limit"] = config.limit;
    if (wants_llm) {
        config_json["llm"] = config.llm.to_json();
        config_json["prompt_version"] = llm::prompts::k_prompt_version;
        config_json["judge_version"] = grade::k_judge_version;
        config_json["store_replies"] = config.store_replies;
    }
    json ds = json::array();
    for (const auto& d : datasets)
        ds.push_back({{"scenario", d.scenario.id}, {"dataset", d.scenario.dataset}, {"origin", d.origin},
                      {"hash", d.hash}});
    config_json["datasets"] = ds;
    if (!outcome.resumed) {
        store::RunRecord record;
        record.system_spec = config.system_spec;
        record.config_json = config_json.dump();
        record.config_hash = hash;
        record.code_version = std::string(code_version());
        MF_TRY_ASSIGN(outcome.run_id, db.create_run(record));
        MF_TRY(db.claim_run(outcome.run_id));
        claim.emplace(db, outcome.run_id);
    } else {
        MF_TRY(db.reopen_run(outcome.run_id));
    }

    // The LLM roles: one pool of workers shared by every scenario; the client bounds requests in flight.
    std::optional<CallRecorder> recorder;
    std::optional<ThreadPool> pool;
    RunServices roles;
    roles.grader = grader;
    roles.paper = config.protocol == "paper";
    // Token figures use cl100k_base, the encoding the MemFail paper reports them in.
    if (auto tokenizer = text::shared_tokenizer("cl100k_base", config.llm.tokenizer_dir)) {
        roles.tokenizer = *tokenizer;
    } else if (progress) {
        progress("note: token figures skipped (" + tokenizer.error().describe() + ")");
    }
    if (wants_llm) {
        recorder.emplace(*client);
        pool.emplace(static_cast<std::size_t>(std::max(1, config.llm.concurrency)));
        roles.recorder = &*recorder;
        roles.pool = &*pool;
        if (!config.llm.answer_model.empty())
            roles.taker.emplace(*recorder, TestTakerOptions{config.llm.answer_model, config.llm.temperature,
                                                            config.llm.seed, roles.paper});
        if (grader != "rules") {
            grade::JudgeOptions options;
            options.model = config.llm.judge_model;
            options.temperature = config.llm.temperature;
            options.seed = config.llm.seed;
            roles.judge.emplace(*recorder, options);
        }
    }

    const std::string memory_dir = memory_dir_for(config.results_path, outcome.run_id);
    for (const auto& dataset : datasets) {
        memory::SystemContext context{memory_dir, dataset.scenario.id, {}};
        // The system's own model calls go through the run's recorder: cached, and accounted under
        // the roles `system` and `embed`.
        context.services.client = roles.recorder;
        context.services.model = config.llm.system_model;
        context.services.embed_model = config.llm.embed_model;
        context.services.temperature = config.llm.temperature;
        context.services.seed = config.llm.seed;
        auto system = factory(context);
        if (!system) {
            (void)db.finish_run(outcome.run_id, "error", system.error().describe());
            return system.error();
        }
        // The paper grades misleading Persona probes through their essay's stages first.
        std::optional<LoadedDataset> paper_dataset;
        if (roles.paper) {
            paper_dataset = dataset;
            paper_dataset->scenario = suites::memfail_suite::paper_protocol_scenario(dataset.scenario);
        }
        ScenarioRun scenario_run(db, outcome.run_id, config, paper_dataset ? *paper_dataset : dataset, progress,
                                 after_probe, outcome, roles);
        auto finished = scenario_run.execute(**system);
        if (!finished) {
            (void)db.finish_run(outcome.run_id, "error", finished.error().describe());
            return finished.error();
        }
        if (!*finished) {  // stopped by the hook or keep_going: left unfinished for --resume
            outcome.stopped = true;
            return outcome;
        }
    }
    MF_TRY(db.finish_run(outcome.run_id, "finished"));
    return outcome;
}

}  // namespace memfail::run
