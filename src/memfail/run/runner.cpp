// SPDX-License-Identifier: MIT
// The resumable run loop.
#include <memfail/core/hash.hpp>
#include <memfail/core/spec.hpp>
#include <memfail/core/text.hpp>
#include <memfail/store/leaky_sql.hpp>
#include <memfail/core/version.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/grade/memory_grader.hpp>
#include <memfail/run/call_recorder.hpp>
#include <memfail/run/pipeline.hpp>
#include <memfail/run/row_writer.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>

#include <memfail/core/thread_pool.hpp>
#include <memfail/grade/answer_rules.hpp>
#include <memfail/grade/llm_judge.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/run/test_taker.hpp>
#include <memfail/grade/rubric.hpp>
#include <memfail/suites/suite.hpp>
#include <memfail/text/tokenizer.hpp>

#include <algorithm>
#include <any>
#include <atomic>
#include <deque>
#include <future>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <condition_variable>
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
    if (!config.modes.empty()) j["modes"] = config.modes;
    // Absent for memfail's own protocol, so the runs made before protocols existed still resume.
    if (config.protocol != "memfail") j["protocol"] = config.protocol;
    if (!config.settings.empty()) j["settings"] = config.settings;
    return content_hash(j.dump());
}

// The grading settings of --set: each key SUITE.NAME, each known to its suite with a valid value
// (nothing is run otherwise).
Result<void> check_settings(const RunConfig& config) {
    for (const auto& setting : config.settings) {
        const std::string& key = setting.first;
        const std::string& value = setting.second;
        std::vector<std::string> known;
        for (const suites::Suite* suite : suites::all_suites())
            for (const auto& name : suite->setting_names()) known.push_back(suite->name() + "." + name);
        const auto dot = key.find('.');
        const suites::Suite* suite = dot == std::string::npos ? nullptr : suites::find_suite(key.substr(0, dot));
        const auto unknown = [&] {
            return make_error(ErrorKind::invalid_input,
                              "unknown setting '" + key + "'" + did_you_mean(key, known) +
                                  (known.empty() ? std::string() : " (known: " + text::join(known, ", ") + ")"),
                              "--set");
        };
        if (!suite) return unknown();
        const std::string name = key.substr(dot + 1);
        const auto names = suite->setting_names();
        if (std::find(names.begin(), names.end(), name) == names.end()) return unknown();
        if (auto ok = suite->check_setting(name, value); !ok) return ok.error().with_context(key);
    }
    return {};
}

// --protocol: memfail's, the paper's, or one a suite defines (Suite::protocols), which then holds
// every dataset of the run (LoCoMo's prompts for LoCoMo questions only).
Result<void> check_protocol(const std::string& protocol, const std::vector<LoadedDataset>& datasets) {
    if (protocol == "memfail" || protocol == "paper") return {};
    const std::vector<std::string> known = suites::protocol_names();
    const suites::Suite* owner = nullptr;
    for (const suites::Suite* suite : suites::all_suites()) {
        const auto own = suite->protocols();
        if (std::find(own.begin(), own.end(), protocol) != own.end()) owner = suite;
    }
    if (!owner)
        return make_error(ErrorKind::invalid_input,
                          "unknown protocol '" + protocol + "'" + did_you_mean(protocol, known) + " (known: " +
                              text::join(known, ", ") + ")",
                          "--protocol");
    for (const auto& d : datasets) {
        // The suite's protocol names its dataset ("locomo" for LoCoMo): only that dataset follows it.
        if (suites::find_suite(d.scenario.suite) != owner ||
            (d.scenario.dataset != protocol && d.scenario.dataset.rfind(protocol + "@", 0) != 0))
            return make_error(ErrorKind::invalid_input,
                              "--protocol " + protocol + " is the " + protocol + " benchmark's own protocol; dataset '" +
                                  d.scenario.dataset + "' (scenario " + d.scenario.id + ") is not " + protocol +
                                  ": run it in a separate run",
                              "--protocol");
    }
    return {};
}

// How many times one scenario may bring a restarted adapter back by storing its sessions again,
// and how many times a failed adapter call is sent again (docs/ADAPTERS.md).
constexpr int k_max_restores = 3;
constexpr int k_call_retries = 1;

class ScenarioRun {
public:
    ScenarioRun(store::ResultsDb& db, std::int64_t run_id, const RunConfig& config,
                const LoadedDataset& dataset, const ProgressSink& progress, RunOutcome& outcome, RunServices& roles,
                RowWriter& writer)
        : m_db(db), m_run_id(run_id), m_config(config), m_dataset(dataset), m_progress(progress),
          m_outcome(outcome), m_roles(roles), m_writer(writer), m_evidence(dataset.scenario),
          m_task(roles.paper ? llm::prompts::paper_task_of(dataset.scenario.dataset) : std::nullopt),
          m_judge_all(m_task.has_value() && roles.judge.has_value()),
          m_probe_grader(dataset.scenario, roles, m_task, m_judge_all) {}

    // Stores the scenario and grades its checkpoints; the rows are written by the writer, possibly
    // after this returns. Returns false when the after-probe hook or keep_going asked to stop.
    Result<bool> execute(memory::MemorySystem& system) {
        const data::Scenario& s = m_dataset.scenario;
        MF_TRY(m_db.upsert_scenario({m_run_id, s.id, s.dataset, m_dataset.hash,
                                     static_cast<std::int64_t>(s.sessions.size()),
                                     static_cast<std::int64_t>(s.probes.size()), "storing"}));
        MF_TRY_ASSIGN(auto already_stored, m_db.stored_sessions(m_run_id, s.id));
        MF_TRY_ASSIGN(m_graded, m_db.graded_probes(m_run_id, s.id));
        MF_TRY_ASSIGN(m_checked_sessions, m_db.checked_sessions(m_run_id, s.id));
        m_rows_total = s.probes.size() * m_config.ks.size();
        m_rows_done = m_graded.size();
        const memory::Capabilities caps = system.capabilities();
        std::map<std::string, std::vector<const data::Probe*>> by_checkpoint;
        for (const auto& p : s.probes) by_checkpoint[p.after_session].push_back(&p);
        // A scenario starts from an empty store: an outside system keeps one store for every dataset,
        // so what an earlier dataset left must not leak in. Resuming, a system whose store is not
        // idempotent starts again too, so sessions recorded before the crash are not stored twice;
        // an idempotent one simply re-stores, unless its store is ahead of the first checkpoint still
        // to grade (rows are written after the sessions that follow are stored): a checkpoint's
        // probes must see exactly the sessions up to it, so that store starts again as well.
        if (already_stored.empty() || !caps.idempotent_store || store_ahead(already_stored, by_checkpoint)) {
            auto emptied = system.reset();
            if (!emptied) {
                if (!caps.external) return emptied.error();
                return lose_scenario(s.dataset + ": the system could not be reset: " + emptied.error().describe());
            }
        }
        if (caps.uses_ground_truth) system.observe_ground_truth(s);
        m_external = caps.external;
        m_generation = system.generation();

        // Storage-phase replies are generated for every session up front and concurrently (each
        // reply sees only its own session, so sessions are independent); the cache makes a resumed
        // or repeated run replay them for free.
        // Under the paper's protocol the test-taker answers each storage turn with the memories
        // retrieved for it shown, so the replies depend on what was stored before: made in order.
        m_paper_replies = m_roles.paper && m_roles.taker.has_value();
        const int k = *std::min_element(m_config.ks.begin(), m_config.ks.end());
        if (m_config.store_replies && !m_paper_replies) {
            MF_TRY_ASSIGN(m_with_replies, replies_for_all(s.sessions));
        }

        const std::size_t total = s.sessions.size();
        std::size_t next_report = 0;
        for (std::size_t i = 0; i < total; ++i) {
            if (memory_was_lost(system) && !restore(system, i)) return lose_scenario(m_restore_failure);
            if (m_paper_replies) {
                // The paper's storage turn: each user message's reply sees the memories the system
                // retrieves for it, at the run's smallest k.
                auto r = guarded(system, i, [&] {
                    return m_roles.taker->with_replies(
                        s.sessions[i], [&](const data::Message& turn, const std::vector<data::Message>& before) {
                            return system.retrieve_memories(turn.content, before, k);
                        });
                });
                if (m_restore_failed) return lose_scenario(m_restore_failure);
                if (!r) {
                    if (m_external)
                        return lose_scenario(s.dataset + ": answering storage session '" + s.sessions[i].id +
                                             "' failed: " + r.error().describe());
                    return r.error().with_context(s.dataset + ": answering storage session '" + s.sessions[i].id + "'");
                }
                m_replied.push_back(std::move(*r));
            }
            const data::Session& session = session_at(i);
            const auto start = std::chrono::steady_clock::now();
            auto stored = guarded(system, i, [&] { return system.store_conversation(session); });
            if (m_restore_failed) return lose_scenario(m_restore_failure);
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
            MF_TRY(check_session(system, i));
            if (m_lost) return true;
            auto it = by_checkpoint.find(session.id);
            if (it != by_checkpoint.end()) {
                MF_TRY_ASSIGN(bool go_on, grade_checkpoint(system, it->second, i + 1));
                if (!go_on) return false;
                if (m_lost) return true;
            }
            MF_TRY_ASSIGN(bool go_on, m_writer.write(/*block=*/false));
            if (!go_on) return false;
        }
        MF_TRY(m_writer.flush_calls());
        m_writer.push_action([this] { return m_db.set_scenario_status(m_run_id, m_dataset.scenario.id, "graded"); });
        return true;
    }

private:
    // True when a session stored before a resume comes after the first place still to grade: a
    // checkpoint with a probe x k not recorded, or a session whose suite checks are not (for those
    // the session itself must not be stored yet: what it adds is measured from the one before).
    bool store_ahead(const std::set<std::string>& stored,
                     const std::map<std::string, std::vector<const data::Probe*>>& by_checkpoint) const {
        const data::Scenario& s = m_dataset.scenario;
        const suites::Suite* suite = suites::find_suite(s.suite);
        for (std::size_t i = 0; i < s.sessions.size(); ++i) {
            const std::string& id = s.sessions[i].id;
            bool pending_here = false;
            if (suite && suite->checks_session(s, i) && !m_checked_sessions.count(id)) {
                if (stored.count(id)) return true;
                pending_here = true;
            }
            if (const auto it = by_checkpoint.find(id); it != by_checkpoint.end())
                for (const auto* p : it->second)
                    for (int k : m_config.ks) pending_here = pending_here || !m_graded.count({p->id, k});
            if (!pending_here) continue;
            for (std::size_t j = i + 1; j < s.sessions.size(); ++j)
                if (stored.count(s.sessions[j].id)) return true;
            return false;
        }
        return false;
    }

    // The session as it was stored: with the assistant's replies when the run stores them.
    const data::Session& session_at(std::size_t i) const {
        if (m_paper_replies) return m_replied[i];
        if (m_config.store_replies) return m_with_replies[i];
        return m_dataset.scenario.sessions[i];
    }

    // An outside system that restarted (its generation moved) has lost what it held since this
    // scenario began.
    bool memory_was_lost(const memory::MemorySystem& system) const {
        return m_external && system.generation() != m_generation;
    }

    // Brings a restarted adapter back to what it held: empties it and stores the scenario's first
    // `count` sessions again, as they were stored. False after k_max_restores (m_restore_failure
    // says why): the rest of the scenario is then recorded as lost.
    bool restore(memory::MemorySystem& system, std::size_t count, const std::string& cause = {}) {
        const data::Scenario& s = m_dataset.scenario;
        if (!cause.empty()) m_restore_failure = cause;
        while (m_restores < k_max_restores) {
            ++m_restores;
            if (m_progress)
                m_progress("warning: " + s.dataset + ": the adapter restarted and lost its memory; storing its " +
                           std::to_string(count) + (count == 1 ? " session" : " sessions") + " again (restore " + std::to_string(m_restores) + " of " +
                           std::to_string(k_max_restores) + ")");
            auto emptied = system.reset();  // a restart still pending happens here
            const std::uint64_t generation = system.generation();
            std::string failure = emptied ? std::string() : "reset: " + emptied.error().describe();
            for (std::size_t j = 0; j < count && failure.empty(); ++j)
                if (auto r = system.store_conversation(session_at(j)); !r)
                    failure = "storing session '" + session_at(j).id + "': " + r.error().describe();
            if (failure.empty() && system.generation() == generation) {
                m_generation = generation;
                return true;
            }
            m_restore_failure = "restoring its memory failed: " + (failure.empty() ? std::string("it restarted again") : failure);
        }
        m_restore_failed = true;
        m_restore_failure = s.dataset + ": the adapter lost its memory more than " + std::to_string(k_max_restores) +
                            " times in this scenario (last: " +
                            (m_restore_failure.empty() ? std::string("it restarted") : m_restore_failure) +
                            "); the rest of the scenario is not graded";
        return false;
    }

    // One call to the system. For an adapter, a call that found the adapter restarted (its memory
    // gone) is made again once the memory is restored, and a failed call is sent again up to
    // k_call_retries times (the next call restarts an adapter that died). `stored` sessions are
    // what a restore stores again. When restores are exhausted m_restore_failed is set.
    template <class F>
    auto guarded(memory::MemorySystem& system, std::size_t stored, F&& call) -> decltype(call()) {
        if (!m_external) return call();
        int failures = 0;
        std::string cause;  // the last failed call: why the adapter restarted, when it did
        while (true) {
            auto r = call();
            if (!r) cause = r.error().describe();
            if (memory_was_lost(system)) {
                if (!restore(system, stored, cause)) return make_error(ErrorKind::io, m_restore_failure);
                continue;
            }
            if (r || ++failures > k_call_retries) return r;
        }
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
                std::promise<store::ProbeRow> ready;
                ready.set_value(std::move(row));
                m_writer.push_row(ready.get_future().share(), probe.id, k, [this] { row_written(); });
                m_graded.insert({probe.id, k});
            }
        MF_TRY(m_writer.flush_calls());
        m_writer.push_action([this] { return m_db.set_scenario_status(m_run_id, m_dataset.scenario.id, "graded"); });
        m_lost = true;
        return true;
    }

    void row_written() {
        ++m_rows_done;
        if (m_progress && (m_rows_done >= m_next_row_report || m_rows_done == m_rows_total)) {
            m_progress(m_dataset.scenario.dataset + ": graded " + std::to_string(m_rows_done) + "/" +
                       std::to_string(m_rows_total) + " probe x k");
            m_next_row_report = m_rows_done + std::max<std::size_t>(1, m_rows_total / 5);
        }
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
        MF_TRY(m_writer.flush_calls());
        if (first_error) return first_error->with_context("storage-phase reply");
        return out;
    }

    // Retrieves every probe x k of a checkpoint (in order, on this thread: memory systems need not
    // be thread-safe), queues their rows with the writer in order, and starts their model calls.
    // Returns without waiting for them.
    Result<bool> grade_checkpoint(memory::MemorySystem& system, const std::vector<const data::Probe*>& probes,
                                  std::size_t stored) {
        const data::Scenario& s = m_dataset.scenario;
        std::vector<std::pair<const data::Probe*, int>> todo;
        for (const auto* p : probes)
            for (int k : m_config.ks) {
                if (m_graded.count({p->id, k})) ++m_outcome.probes_skipped;
                else todo.emplace_back(p, k);
            }
        if (todo.empty()) return true;
        // The main thread runs ahead of the model calls by a bounded number of rows, not without limit.
        const std::size_t in_flight =
            std::max<std::size_t>(64, 4 * static_cast<std::size_t>(std::max(1, m_config.llm.concurrency)));
        MF_TRY_ASSIGN(bool go_on, m_writer.write(/*block=*/true, in_flight));
        if (!go_on) return false;

        auto batch = std::make_shared<Batch>();
        batch->pending = std::vector<PendingProbe>(todo.size());
        for (std::size_t i = 0; i < todo.size(); ++i) {
            batch->pending[i].probe = todo[i].first;
            batch->pending[i].k = todo[i].second;
        }
        // Retrieval, against a snapshot of the store. When an adapter's memory is restored mid-way
        // the snapshot is taken again and the probes retrieved before are graded against it: the
        // checkpoint goes on from the probe it was on.
        int snapshot_restores = -1;
        std::optional<std::string> lost;
        // What the system's read operations answered at this checkpoint, shared by the snapshot and
        // the suite's checks so each is asked once (emptied when a restored adapter is asked again).
        suites::ReadCache reads;
        auto take_snapshot = [&](std::size_t retrieved) -> Result<void> {
            while (snapshot_restores != m_restores) {
                snapshot_restores = m_restores;
                reads = {};
                reads.scenario_cache = &m_suite_cache;
                auto all = guarded(system, stored, [&] { return system.all_memories(); });
                if (!all) {
                    if (!m_external) return all.error();
                    lost = m_restore_failed ? m_restore_failure
                                            : s.dataset + ": listing the memories at '" + probes.front()->after_session +
                                                  "' failed: " + all.error().describe();
                    return {};
                }
                // A probe about the past (memfail/2 temporal query) finds its value in what the
                // system gives as of that date, beside what it holds now: a bi-temporal store keeps
                // the past there, not among its current memories.
                batch->current_memories = all->size();
                if (system.capabilities().as_of) {
                    std::set<std::string> dates;
                    for (const auto* probe : probes)
                        if (probe->temporal && !probe->temporal->expect_current && !probe->temporal->as_of.empty())
                            dates.insert(probe->temporal->as_of);
                    for (const auto& date : dates) {
                        auto past = guarded(system, stored, [&] { return system.state_as_of(date); });
                        if (!past) continue;  // the as_of check asks again and records why
                        reads.as_of.insert_or_assign(date, *past);
                        for (auto& m : *past) {
                            m.id += "@" + date;
                            all->push_back(std::move(m));
                        }
                    }
                }
                batch->snapshot.emplace(std::move(*all), system.capabilities().provenance);
            }
            for (std::size_t j = 0; j < retrieved; ++j) {
                PendingProbe& p = batch->pending[j];
                if (p.retrieve_error.empty())
                    p.rules = grade::grade_memory_side(*p.probe, *batch->snapshot, p.hits, &m_evidence);
            }
            return {};
        };
        MF_TRY(take_snapshot(0));
        if (lost) {
            MF_TRY(lose_scenario(*lost));
            return true;
        }
        std::optional<std::size_t> cut;
        for (std::size_t i = 0; i < batch->pending.size(); ++i) {
            PendingProbe& p = batch->pending[i];
            // Asked to stop: nothing of this checkpoint is queued yet, so it is simply redone.
            if (m_config.keep_going && !m_config.keep_going()) return false;
            const auto start = std::chrono::steady_clock::now();
            auto hits = guarded(system, stored, [&] { return system.retrieve_memories(p.probe->question, {}, p.k); });
            p.micros = micros_since(start);
            if (!m_restore_failed && snapshot_restores != m_restores) MF_TRY(take_snapshot(i));
            if (m_restore_failed || lost) {
                // The probes retrieved before are graded; this one and the rest are lost.
                cut = i;
                break;
            }
            if (hits) {
                p.hits = std::move(*hits);
                p.rules = grade::grade_memory_side(*p.probe, *batch->snapshot, p.hits, &m_evidence);
            } else {
                // An adapter failing one probe (after a retry) must not stop the run: record it, go on.
                p.retrieve_error = hits.error().describe();
            }
        }
        const grade::MemorySnapshot& snapshot = *batch->snapshot;
        // The suite's own memory checks (write integrity), on the main thread like every call to the
        // system; its read operations are asked once per checkpoint and argument.
        if (const suites::Suite* suite = suites::find_suite(s.suite)) {
            const auto& snapshot_memories = snapshot.memories();
            const std::vector<memory::Memory> held_now(
                snapshot_memories.begin(),
                snapshot_memories.begin() + static_cast<std::ptrdiff_t>(
                                                std::min(batch->current_memories, snapshot_memories.size())));
            const std::size_t retrieved = cut ? *cut : batch->pending.size();
            for (std::size_t i = 0; i < retrieved; ++i) {
                PendingProbe& p = batch->pending[i];
                if (!p.retrieve_error.empty()) continue;
                const suites::CheckContext context{s, *p.probe, held_now, p.hits, system, reads, p.k, m_evidence.messages()};
                for (auto& c : suite->check_memory(context))
                    if (c.applicable) p.memory_checks.push_back({c.name, c.passed, std::move(c.detail)});
                // A profile task's stage comes from its fields' gold evidence, not evidence facts.
                if (auto analysis = suite->analyse_memory(context)) {
                    p.rules.stage = analysis->stage ? *analysis->stage : grade::Stage::unverified;
                    p.analysis = std::move(analysis);
                }
            }
        }
        // A system that answers for itself (an agent with memory) answers the probes its suite
        // grades that way (Suite::takes_system_answer); memfail grades its answer instead of the
        // test-taker's. Asked once per probe, on the main thread like every call to the system.
        if (const suites::Suite* suite = suites::find_suite(s.suite); system.capabilities().answers) {
            struct Answered {
                std::optional<std::string> text;
                std::string error;
                std::optional<double> confidence;
            };
            std::map<const data::Probe*, Answered> answered;
            const std::size_t retrieved = cut ? *cut : batch->pending.size();
            for (std::size_t i = 0; i < retrieved; ++i) {
                PendingProbe& p = batch->pending[i];
                if (!p.retrieve_error.empty() || !suite || !suite->takes_system_answer(*p.probe)) continue;
                auto [it, fresh] = answered.try_emplace(p.probe);
                if (fresh) {
                    auto a = guarded(system, stored, [&] { return system.answer(p.probe->question, {}); });
                    if (a) {
                        it->second.text = a->text;
                        it->second.confidence = a->confidence;
                    } else {
                        it->second.error = "the system's own answer failed: " + a.error().describe();
                    }
                }
                p.answer = it->second.text;
                p.answer_error = it->second.error;
                p.system_confidence = it->second.confidence;
                p.system_answered = true;
            }
        }
        MF_TRY(record_memory_stats(snapshot, batch->current_memories, probes.front()->after_session));
        // Which index served these retrievals, with the settings that decide its recall.
        if (const std::string serving = system.serving(); !serving.empty())
            MF_TRY(m_db.record_serving(m_run_id, s.id, probes.front()->after_session, serving));
        for (std::size_t m = 0; m < batch->current_memories && m < snapshot.memories().size(); ++m)
            batch->store_chars += snapshot.memories()[m].text.size();

        // The rows, in order, and what each waits for.
        std::vector<PendingProbe>& pending = batch->pending;
        const std::size_t n = cut ? *cut : pending.size();
        for (std::size_t i = 0; i < n; ++i) {
            PendingProbe& p = pending[i];
            m_graded.insert({p.probe->id, p.k});
            m_writer.push_row(p.row.get_future().share(), p.probe->id, p.k, [this] { row_written(); });
        }
        const bool judge_facts = m_roles.grader != "rules";
        if (judge_facts) {
            // Every fact of the checkpoint, whether or not its probes are still to grade: the storage
            // judge's batches (and so its prompts) are then the same in a resumed run as in one that
            // never stopped. The rules' storage and summary verdicts do not depend on what was
            // retrieved: a probe retrieved here lends its verdict, the others are graded without hits.
            std::map<const data::Probe*, const grade::ProbeVerdict*> retrieved;
            for (std::size_t i = 0; i < n; ++i)
                if (pending[i].retrieve_error.empty()) retrieved.emplace(pending[i].probe, &pending[i].rules);
            for (const auto* probe : probes) {
                const grade::ProbeVerdict* verdict = nullptr;
                for (std::size_t f = 0; f < probe->evidence.size(); ++f) {
                    const auto& fact = probe->evidence[f];
                    auto [it, inserted] = batch->facts.try_emplace(fact.id);
                    if (!inserted) continue;
                    if (!verdict) {
                        const auto lent = retrieved.find(probe);
                        verdict = lent != retrieved.end() ? lent->second
                                                          : &batch->verdicts.emplace_back(grade::grade_memory_side(
                                                                *probe, snapshot, {}, &m_evidence));
                    }
                    it->second.fact = &fact;
                    it->second.rules = &verdict->facts[f];
                }
            }
            bool needed = false;
            for (std::size_t i = 0; i < n; ++i) {
                PendingProbe& p = pending[i];
                if (!p.retrieve_error.empty()) continue;
                for (const auto& fact : p.probe->evidence) {
                    auto& st = batch->facts.at(fact.id);
                    if (st.dependents.empty() || st.dependents.back() != i) {
                        st.dependents.push_back(i);
                        p.waiting.fetch_add(1, std::memory_order_relaxed);
                        needed = true;
                    }
                }
            }
            if (!needed) batch->facts.clear();
        }
        if (m_roles.taker) {
            std::size_t answers = 0;
            for (std::size_t i = 0; i < n; ++i)
                if (PendingProbe& p = pending[i]; p.retrieve_error.empty() && !p.system_answered) {
                    p.waiting.fetch_add(1, std::memory_order_relaxed);
                    ++answers;
                }
            if (m_progress && answers > 0)
                m_progress(s.dataset + ": the test-taker answers " + std::to_string(answers) + " probe x k");
            for (std::size_t i = 0; i < n; ++i)
                if (pending[i].retrieve_error.empty() && !pending[i].system_answered)
                    spawn([this, batch, i] {
                        PendingProbe& p = batch->pending[i];
                        const CallRecorder::Work work(work_of(p));
                        try {
                            auto reply = m_roles.taker->answer(m_dataset.scenario, *p.probe, p.hits, m_evidence.messages());
                            if (reply) p.answer = std::move(*reply);
                            else p.answer_error = reply.error().describe();
                        } catch (const std::exception& e) {
                            p.answer_error = std::string("internal error: ") + e.what();
                        }
                        release(batch, i);
                    });
        }
        if (judge_facts && !batch->facts.empty()) start_fact_judging(batch);
        for (std::size_t i = 0; i < n; ++i) release(batch, i);  // the main thread's hold
        if (cut) MF_TRY(lose_scenario(lost ? *lost : m_restore_failure));
        return true;
    }

    // The suite's checks of the memory once session i is stored (Suite::checks_session: HaluMem's
    // extraction and updating): by rule here, on the main thread like every call to the system;
    // the undecided ones asked of the judge on the pool. Recorded in their place among the rows,
    // once their judge calls are done. Sessions recorded before a resume are not checked again,
    // but the store is still read, so what the next session adds is measured from this one.
    Result<void> check_session(memory::MemorySystem& system, std::size_t i) {
        const data::Scenario& s = m_dataset.scenario;
        const suites::Suite* suite = suites::find_suite(s.suite);
        if (!suite || !suite->checks_session(s, i)) return {};
        auto all = guarded(system, i + 1, [&] { return system.all_memories(); });
        const auto lose = [this](const std::string& reason) -> Result<void> {
            MF_TRY(lose_scenario(reason));
            return {};
        };
        if (m_restore_failed) return lose(m_restore_failure);
        if (!all) {
            if (!m_external) return all.error();
            return lose(s.dataset + ": listing the memories after '" + s.sessions[i].id + "' failed: " + all.error().describe());
        }
        std::vector<std::size_t> added;
        std::set<std::string> now;
        for (std::size_t m = 0; m < all->size(); ++m) {
            std::string key = (*all)[m].id + '\x1f' + (*all)[m].text;
            if (!m_held_before.count(key)) added.push_back(m);
            now.insert(std::move(key));
        }
        m_held_before = std::move(now);
        const std::string session_id = s.sessions[i].id;
        if (m_checked_sessions.count(session_id)) return {};
        const suites::SessionCheckContext context{
            s, i, *all, added, [&](const std::string& query, int k) {
                return guarded(system, i + 1, [&] { return system.retrieve_memories(query, {}, k); });
            }};
        auto checks = std::make_shared<std::vector<suites::SessionCheck>>(suite->check_session(context));
        if (m_restore_failed) return lose(m_restore_failure);
        std::vector<std::size_t> ask;
        if (m_roles.judge && m_roles.grader != "rules")
            for (std::size_t c = 0; c < checks->size(); ++c)
                if (!(*checks)[c].score && (*checks)[c].label.empty() && !(*checks)[c].judge_input.is_null()) ask.push_back(c);
        auto done = std::make_shared<std::promise<void>>();
        std::shared_future<void> ready = done->get_future().share();
        auto judge_one = [this, suite, checks, session_id](std::size_t c) {
            suites::SessionCheck& check = (*checks)[c];
            const CallRecorder::Work work(m_dataset.scenario.id + "/" + session_id + "/" + check.name + "/" + check.item);
            Result<void> judged = make_error(ErrorKind::internal, "not judged");
            try {
                judged = suite->judge_session_check(m_dataset.scenario, check, *m_roles.judge);
            } catch (const std::exception& e) {
                judged = make_error(ErrorKind::internal, std::string("internal error: ") + e.what());
            }
            if (!judged) {
                check.score.reset();
                check.label = "error";
                check.grader = "llm";
                check.detail = "the judge failed: " + judged.error().describe();
            }
        };
        if (ask.empty()) {
            done->set_value();
        } else if (!m_roles.pool) {
            for (std::size_t c : ask) judge_one(c);
            done->set_value();
        } else {
            auto remaining = std::make_shared<std::atomic<std::size_t>>(ask.size());
            for (std::size_t c : ask)
                spawn([judge_one, c, remaining, done] {
                    judge_one(c);
                    if (remaining->fetch_sub(1, std::memory_order_acq_rel) == 1) done->set_value();
                });
        }
        m_checked_sessions.insert(session_id);
        m_writer.push_action(
            [this, checks, session_id]() -> Result<void> {
                std::vector<store::SessionCheckRow> rows;
                rows.reserve(checks->size());
                for (const auto& c : *checks)
                    rows.push_back({c.name, c.item, c.score, c.label, c.weight, c.grader, c.detail});
                return m_db.record_session_checks(m_run_id, m_dataset.scenario.id, session_id, rows);
            },
            ready);
        return {};
    }

    // Runs `task` on the pool, counted by the writer (which waits for it before the run goes away).
    template <class F>
    void spawn(F&& task) {
        m_writer.task_started();
        RowWriter* writer = &m_writer;
        m_roles.pool->submit([writer, task = std::forward<F>(task)]() mutable {
            task();
            writer->task_finished();
        });
    }

    // One thing probe i waited for is done; the last one grades it (on a worker, or here without one).
    void release(const std::shared_ptr<Batch>& batch, std::size_t i) {
        if (batch->pending[i].waiting.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        if (m_roles.pool) spawn([this, batch, i] { finish(batch, i); });
        else finish(batch, i);
    }

    // What a probe's calls are for, in the run's accounting (CallRecorder::Work).
    std::string work_of(const PendingProbe& p) const {
        return m_dataset.scenario.id + "/" + p.probe->id + "@" + std::to_string(p.k);
    }

    void finish(const std::shared_ptr<Batch>& batch, std::size_t i) {
        PendingProbe& p = batch->pending[i];
        const CallRecorder::Work work(work_of(p));
        try {
            p.row.set_value(m_probe_grader.grade(p, *batch->snapshot, batch->facts));
        } catch (const std::exception& e) {
            store::ProbeRow row = probe_row(m_dataset.scenario, *p.probe, p.k, {}, {}, 0);
            row.grader = m_roles.grader;
            row.stage = "error";
            row.memory_success = false;
            row.error = std::string("internal error while grading: ") + e.what();
            p.row.set_value(std::move(row));
        }
    }

    // The store's size at this checkpoint, in memories and tokens (the paper's tokens per memory).
    // `held`: the snapshot's first memories, the ones held now (see Batch::current_memories).
    Result<void> record_memory_stats(const grade::MemorySnapshot& snapshot, std::size_t held,
                                     const std::string& checkpoint) {
        held = std::min(held, snapshot.memories().size());
        std::optional<std::int64_t> tokens;
        if (m_roles.tokenizer) {
            std::int64_t total = 0;
            for (std::size_t i = 0; i < held; ++i)
                total += static_cast<std::int64_t>(m_roles.tokenizer->count(snapshot.memories()[i].text));
            tokens = total;
        }
        return m_db.record_memory_stats(m_run_id, m_dataset.scenario.id, checkpoint,
                                        static_cast<std::int64_t>(held), tokens,
                                        m_roles.tokenizer ? m_roles.tokenizer->encoding() : std::string());
    }

    // Storage (batched) and summary verdicts for every fact of the checkpoint's probes. The rules
    // decide what they can decide exactly (docs/TAXONOMY.md); the judge decides what they are
    // unsure of, and with --grader both is asked about everything, for comparison only. Each fact
    // goes on to its summary as soon as its storage verdict is in, and its probes are released as
    // soon as it is final.
    void start_fact_judging(const std::shared_ptr<Batch>& batch) {
        const bool compare = m_roles.grader == "both";
        std::vector<FactState*> to_judge, decided;
        for (auto& [id, st] : batch->facts) {
            add_rules_memory_checks(*st.rules, /*decisive=*/false, st.memory.checks);
            if (compare || m_judge_all || st.rules->unsure == grade::Unsure::storage) to_judge.push_back(&st);
            else decided.push_back(&st);
        }
        if (!to_judge.empty()) {
            if (m_progress)
                m_progress(m_dataset.scenario.dataset + ": the judge checks the storage of " +
                           std::to_string(to_judge.size()) + " facts");
            const std::size_t size = std::max<std::size_t>(1, m_roles.judge->options().storage_batch);
            for (std::size_t i = 0; i < to_judge.size(); i += size) {
                std::vector<FactState*> part(to_judge.begin() + static_cast<std::ptrdiff_t>(i),
                                             to_judge.begin() + static_cast<std::ptrdiff_t>(std::min(to_judge.size(), i + size)));
                spawn([this, batch, part] {
                    std::vector<const data::EvidenceFact*> facts;
                    for (const auto* st : part) facts.push_back(st->fact);
                    Result<std::vector<grade::JudgeVerdict>> verdicts =
                        make_error(ErrorKind::internal, "the storage judge did not run");
                    try {
                        verdicts = m_roles.judge->storage(*batch->snapshot, facts, m_task);
                    } catch (const std::exception& e) {
                        verdicts = make_error(ErrorKind::internal, std::string("internal error: ") + e.what());
                    }
                    for (std::size_t j = 0; j < part.size(); ++j) {
                        if (verdicts) part[j]->judged_storage = (*verdicts)[j];
                        else part[j]->memory.error = verdicts.error().describe();
                        decide_storage(*part[j]);
                        summarize(batch, *part[j]);
                    }
                });
            }
        }
        for (auto* st : decided) {
            decide_storage(*st);
            summarize(batch, *st);
        }
    }

    // A fact's storage verdict: the rules' when they can decide it, else the judge's.
    void decide_storage(FactState& st) const {
        FactMemory& fm = st.memory;
        const grade::FactVerdict& rules = *st.rules;
        if (!fm.error.empty()) return;
        const bool rules_decide = !m_judge_all && rules.unsure != grade::Unsure::storage;
        if (rules_decide) {
            fm.stored = rules.stage != grade::Stage::not_stored;
            fm.checks.front().decisive = true;  // the rules' storage check
            if (!fm.stored) fm.reason = rules.explanation;
        }
        if (st.judged_storage) {
            fm.checks.push_back(check(st.fact->id, "storage", "llm", st.judged_storage->passed, !rules_decide,
                                      st.judged_storage->reason));
            if (!rules_decide) {
                fm.stored = st.judged_storage->passed;
                fm.storage_judged = true;
                if (!fm.stored) fm.reason = st.judged_storage->reason;
            }
        }
    }

    // A stored fact's summary verdict: the rules decide a verbatim copy and a lost detail; the judge
    // decides the rest (a paraphrase that keeps every listed phrase may still be negated, hedged or
    // merged), on the memories holding the fact. Releases the fact's probes when final.
    void summarize(const std::shared_ptr<Batch>& batch, FactState& st) {
        FactMemory& fm = st.memory;
        // A fact no probe waits for (its probes were graded before a resume) needs no summary.
        if (st.dependents.empty()) return;
        if (!fm.error.empty() || !fm.stored) return fact_done(batch, st);
        const grade::FactVerdict& rules = *st.rules;
        const bool rules_decide = !m_judge_all && rules.unsure == grade::Unsure::none && !fm.storage_judged;
        if (rules_decide) {
            fm.faithful = rules.stage != grade::Stage::summary_error;
            if (!fm.faithful) fm.reason = rules.explanation;
            for (auto& c : fm.checks)
                if (c.stage == "summary" && c.grader == std::string("rules")) c.decisive = true;
            if (m_roles.grader != "both") return fact_done(batch, st);
        }
        const grade::MemorySnapshot& snapshot = *batch->snapshot;
        const std::vector<std::string> no_ids;
        const std::vector<std::string>& judged_ids = st.judged_storage ? st.judged_storage->memory_ids : no_ids;
        std::vector<std::string> ids = rules.stored_ids;
        if (m_judge_all) {
            // The paper's judge reads the whole store; a large one is narrowed to the memories the
            // storage judge and the rules found the fact in.
            if (batch->store_chars <= m_roles.judge->options().whole_store_chars) {
                ids.clear();
                for (const auto& m : snapshot.memories()) ids.push_back(m.id);
            } else {
                ids.insert(ids.end(), judged_ids.begin(), judged_ids.end());
            }
        }
        if (ids.empty()) ids = judged_ids;
        if (ids.empty() && snapshot.provenance())
            for (const auto& message_id : st.fact->message_ids)
                for (std::size_t i : snapshot.by_source(message_id)) ids.push_back(snapshot.memories()[i].id);
        std::vector<const memory::Memory*> memories;
        std::set<std::string> seen;
        for (const auto& id : ids)
            if (seen.insert(id).second)
                if (auto index = snapshot.index_of(id)) memories.push_back(&snapshot.memories()[*index]);
        FactState* state = &st;
        spawn([this, batch, state, memories, rules_decide] {
            FactMemory& memory = state->memory;
            try {
                auto v = m_roles.judge->summary(*state->fact, memories, m_task);
                if (!v) {
                    memory.error = v.error().describe();
                } else {
                    memory.checks.push_back(check(state->fact->id, "summary", "llm", v->passed, !rules_decide, v->reason));
                    if (!rules_decide) {
                        memory.faithful = v->passed;
                        if (!memory.faithful) memory.reason = v->reason;
                    }
                }
            } catch (const std::exception& e) {
                memory.error = std::string("internal error: ") + e.what();
            }
            fact_done(batch, *state);
        });
    }

    void fact_done(const std::shared_ptr<Batch>& batch, const FactState& st) {
        for (std::size_t i : st.dependents) release(batch, i);
    }

    store::ResultsDb& m_db;
    std::int64_t m_run_id;
    const RunConfig& m_config;
    const LoadedDataset& m_dataset;
    const ProgressSink& m_progress;
    RunOutcome& m_outcome;
    RunServices& m_roles;
    RowWriter& m_writer;
    std::set<std::pair<std::string, int>> m_graded;  // recorded, or queued with the writer
    // The scenario's entities, detail phrases and messages, for the evidence matcher (and facts
    // without listed statements).
    const grade::ScenarioEvidence m_evidence;
    std::any m_suite_cache;  // suites::ReadCache::scenario_cache, for every checkpoint of the scenario
    std::set<std::string> m_checked_sessions;  // sessions whose suite checks are recorded or queued
    std::set<std::string> m_held_before;       // "id\x1ftext" of the store after the last checked session
    // The paper's protocol on a MemFail dataset: its per-dataset judge prompts, and the judge (when
    // there is one) decides every stage, as in the paper; the rules' checks are kept beside it.
    const grade::LlmJudge::Task m_task;
    const bool m_judge_all;
    ProbeGrader m_probe_grader;
    bool m_paper_replies = false;                // storage turns answered with retrieved memories shown
    std::vector<data::Session> m_with_replies;   // --store-replies: the sessions as stored
    std::vector<data::Session> m_replied;        // the paper's storage turns, as stored so far
    bool m_external = false;         // the system is an adapter: its failures do not stop the run
    std::uint64_t m_generation = 0;  // the system's generation since its memory was last complete
    int m_restores = 0;              // restores of a restarted adapter in this scenario
    bool m_restore_failed = false;   // restores exhausted: the rest of the scenario is lost
    std::string m_restore_failure;
    bool m_lost = false;             // lose_scenario() ran: the rest of the scenario is recorded
    std::size_t m_rows_total = 0, m_rows_done = 0, m_next_row_report = 0;  // progress
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
    const std::vector<LoadedDataset>& chosen = config.limit > 0 ? limited : given;
    // --modes: every scenario once per mode, the ones other than native under "<id>@<mode>".
    std::vector<LoadedDataset> by_mode;
    std::vector<std::string> modes_of;  // per entry of `datasets`: its mode
    for (const auto& mode : config.modes)
        if (mode != "native" && mode != "no_memory" && mode != "oracle" && mode != "oracle_retrieval")
            return make_error(ErrorKind::invalid_input,
                              "unknown mode '" + mode + "': use native, no_memory, oracle or oracle_retrieval" +
                                  [&] {
                                      const std::string hint =
                                          did_you_mean(mode, {"native", "no_memory", "oracle", "oracle_retrieval"});
                                      return hint.empty() ? std::string() : " (" + hint + ")";
                                  }(),
                              "--modes");
    for (std::size_t i = 1; i < config.modes.size(); ++i)
        if (std::find(config.modes.begin(), config.modes.begin() + static_cast<std::ptrdiff_t>(i), config.modes[i]) !=
            config.modes.begin() + static_cast<std::ptrdiff_t>(i))
            return make_error(ErrorKind::invalid_input, "mode '" + config.modes[i] + "' is listed twice", "--modes");
    if (!config.modes.empty()) {
        for (const auto& d : chosen)
            for (const auto& mode : config.modes) {
                by_mode.push_back(d);
                // The mode rides on the scenario id (unique rows) and the dataset name (every table
                // splits by it); '@' is never part of either in a dataset file.
                if (mode != "native") {
                    by_mode.back().scenario.id = mode_unit_id(d.scenario.id, mode);
                    by_mode.back().scenario.dataset += "@" + mode;
                }
                modes_of.push_back(mode);
            }
    }
    const std::vector<LoadedDataset>& datasets = config.modes.empty() ? chosen : by_mode;
    MF_TRY_ASSIGN(const std::string grader, resolve_grader(config));
    const bool wants_llm = config.llm.uses_llm() || grader != "rules";
    if (wants_llm && !client)
        return make_error(ErrorKind::invalid_input, "models are configured but no LLM client was given");
    if (config.store_replies && config.llm.answer_model.empty())
        return make_error(ErrorKind::invalid_input, "--store-replies needs an answer model (--answer-model)");
    if (config.ks.empty()) return make_error(ErrorKind::invalid_input, "no k given");
    MF_TRY(check_protocol(config.protocol, datasets));
    MF_TRY(check_settings(config));
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

    // --shard: this process runs only its part of the scenarios; the parts share the unsharded
    // configuration's hash (which merge checks) and each has its own (which --resume finds).
    std::vector<bool> mine;
    if (config.shard.active()) {
        std::vector<std::string> ids;
        std::vector<std::uint64_t> weights;
        for (const auto& d : datasets) {
            ids.push_back(d.scenario.id);
            weights.push_back(d.weight ? d.weight : scenario_weight(d.scenario));
        }
        std::set<std::string> seen;
        for (const auto& id : ids)
            if (!seen.insert(id).second)
                return make_error(ErrorKind::invalid_input,
                                  "scenario '" + id + "' is named twice: --shard splits by scenario id", "--shard");
        const std::vector<int> part = assign_shards(ids, weights, config.shard.count);
        for (int p : part) mine.push_back(p == config.shard.index - 1);
    }
    // A skeleton (load_datasets_for_shard) stands for a scenario another part runs; running one
    // would grade an empty scenario, so a mismatch between how the data was loaded and this run's
    // split (another --shard, --limit or --modes) stops here.
    for (std::size_t i = 0; i < datasets.size(); ++i)
        if (datasets[i].skeleton && (mine.empty() || mine[i]))
            return make_error(ErrorKind::invalid_input,
                              "scenario '" + datasets[i].scenario.id +
                                  "' was loaded for another part of the run than this one runs (load it with the "
                                  "same --shard, --limit and --modes)");
    RunOutcome outcome;
    const std::string unsharded_hash = config_hash(config, datasets, grader);
    const std::string hash =
        config.shard.active() ? content_hash(unsharded_hash + " shard " + config.shard.text()) : unsharded_hash;
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
    if (!config.settings.empty()) config_json["settings"] = config.settings;
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
    if (config.shard.active()) {
        // Each scenario with its place in the whole run, so merge writes them in a single run's order.
        json part = json::array(), positions = json::array();
        for (std::size_t i = 0; i < datasets.size(); ++i)
            if (mine[i]) {
                part.push_back(datasets[i].scenario.id);
                positions.push_back(i);
            }
        config_json["shard"] = {{"index", config.shard.index}, {"count", config.shard.count}, {"scenarios", part},
                                {"positions", positions}};
        config_json["unsharded_hash"] = unsharded_hash;
    }
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
    roles.protocol = config.protocol;
    roles.no_memory = store::is_no_memory_spec(config.system_spec);
    roles.settings = config.settings;
    // Token figures use cl100k_base, the encoding the MemFail paper reports them in.
    if (auto tokenizer = text::shared_tokenizer("cl100k_base", config.llm.tokenizer_dir)) {
        roles.tokenizer = *tokenizer;
    } else if (progress) {
        progress("note: token figures skipped (" + tokenizer.error().describe() + ")");
    }
    if (wants_llm) {
        recorder.emplace(*client, config.llm.max_consecutive_failures);
        pool.emplace(static_cast<std::size_t>(std::max(1, config.llm.concurrency)));
        roles.recorder = &*recorder;
        roles.pool = &*pool;
        if (!config.llm.answer_model.empty())
            roles.taker.emplace(*recorder, TestTakerOptions{config.llm.answer_model, config.llm.temperature,
                                                            config.llm.seed, roles.paper, config.protocol});
        if (grader != "rules") {
            grade::JudgeOptions options;
            options.model = config.llm.judge_model;
            options.temperature = config.llm.temperature;
            options.seed = config.llm.seed;
            roles.judge.emplace(*recorder, options);
        }
    }

    const std::string memory_dir = memory_dir_for(config.results_path, outcome.run_id);
    // Declared after the pool and the roles, so it is destroyed first: its destructor waits for the
    // rows still being graded, whose tasks use the scenario runs and the datasets below.
    std::deque<LoadedDataset> paper_datasets;
    std::vector<std::unique_ptr<ScenarioRun>> scenario_runs;
    RowWriter writer(db, outcome.run_id, config, after_probe, outcome, roles.recorder);
    auto fail = [&](const Error& error) -> Error {
        (void)db.finish_run(outcome.run_id, "error", error.describe());
        return error;
    };
    for (const auto& dataset : datasets) {
        if (!mine.empty() && !mine[static_cast<std::size_t>(&dataset - datasets.data())]) continue;
        memory::SystemContext context{memory_dir, dataset.scenario.id, {}};
        // The system's own model calls go through the run's recorder: cached, and accounted under
        // the roles `system` and `embed`.
        context.services.client = roles.recorder;
        context.services.model = config.llm.system_model;
        context.services.embed_model = config.llm.embed_model;
        context.services.temperature = config.llm.temperature;
        context.services.seed = config.llm.seed;
        const std::string mode = modes_of.empty() ? std::string("native") : modes_of[&dataset - datasets.data()];
        // oracle: WRIT's, the gold current state handed to the answerer whole (no retrieval);
        // oracle_retrieval: the gold events as a memory that still retrieves the top k.
        auto system = mode == "native"      ? factory(context)
                      : mode == "no_memory" ? memory::make_memory_system("none", context)
                      : mode == "oracle"    ? memory::make_memory_system("ledger:extract=oracle,serve=state", context)
                                            : memory::make_memory_system("ledger:extract=oracle", context);
        if (!system) return fail(system.error());
        // The paper grades misleading Persona probes through their essay's stages first.
        const LoadedDataset* run_dataset = &dataset;
        if (roles.paper) {
            paper_datasets.push_back(dataset);
            if (const suites::Suite* suite = suites::find_suite(dataset.scenario.suite))
                paper_datasets.back().scenario = suite->for_protocol(dataset.scenario, config.protocol);
            run_dataset = &paper_datasets.back();
        }
        scenario_runs.push_back(
            std::make_unique<ScenarioRun>(db, outcome.run_id, config, *run_dataset, progress, outcome, roles, writer));
        // The scenario's model calls may still be running when this returns: the next dataset's
        // storage and retrieval go on beside them (the system itself is only used here).
        auto finished = scenario_runs.back()->execute(**system);
        if (!finished) return fail(finished.error());
        if (!*finished) {  // stopped by the hook or keep_going: left unfinished for --resume
            outcome.stopped = true;
            return outcome;
        }
    }
    auto written = writer.write(/*block=*/true, 0);
    if (!written) return fail(written.error());
    if (!*written) {
        outcome.stopped = true;
        return outcome;
    }
    // Judge calls no row waited for (facts of probes graded before a resume) are accounted too.
    writer.wait_tasks();
    if (auto flushed = writer.flush_calls(); !flushed) return fail(flushed.error());
    MF_TRY(db.finish_run(outcome.run_id, "finished"));
    return outcome;
}

}  // namespace memfail::run
