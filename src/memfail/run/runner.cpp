// SPDX-License-Identifier: MIT
// The resumable run loop.
#include <memfail/core/hash.hpp>
#include <memfail/core/version.hpp>
#include <memfail/grade/memory_grader.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>

#include <chrono>
#include <filesystem>
#include <map>

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
    row.retrieved_json = hits_to_json(hits).dump();
    row.retrieve_micros = micros;
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

std::string config_hash(const RunConfig& config, const std::vector<LoadedDataset>& datasets) {
    json j = {{"system", config.system_spec}, {"ks", config.ks}, {"code_version", code_version()}};
    json hashes = json::array();
    for (const auto& d : datasets) hashes.push_back(d.hash);
    j["datasets"] = hashes;
    return content_hash(j.dump());
}

class ScenarioRun {
public:
    ScenarioRun(store::ResultsDb& db, std::int64_t run_id, const RunConfig& config,
                const LoadedDataset& dataset, const ProgressSink& progress, const AfterProbeHook& hook,
                RunOutcome& outcome)
        : m_db(db), m_run_id(run_id), m_config(config), m_dataset(dataset), m_progress(progress),
          m_hook(hook), m_outcome(outcome) {}

    // Returns false when the after-probe hook asked to stop.
    Result<bool> execute(memory::MemorySystem& system) {
        const data::Scenario& s = m_dataset.scenario;
        MF_TRY(m_db.upsert_scenario({m_run_id, s.id, s.dataset, m_dataset.hash,
                                     static_cast<std::int64_t>(s.sessions.size()),
                                     static_cast<std::int64_t>(s.probes.size()), "storing"}));
        MF_TRY_ASSIGN(auto already_stored, m_db.stored_sessions(m_run_id, s.id));
        MF_TRY_ASSIGN(m_graded, m_db.graded_probes(m_run_id, s.id));
        if (system.capabilities().uses_ground_truth) system.observe_ground_truth(s);
        // Resuming: a system whose store is not idempotent starts again from empty, so sessions
        // recorded before the crash are not stored twice; an idempotent one simply re-stores.
        if (!already_stored.empty() && !system.capabilities().idempotent_store) MF_TRY(system.reset());

        std::map<std::string, std::vector<const data::Probe*>> by_checkpoint;
        for (const auto& p : s.probes) by_checkpoint[p.after_session].push_back(&p);

        const std::size_t total = s.sessions.size();
        std::size_t next_report = 0;
        for (std::size_t i = 0; i < total; ++i) {
            const data::Session& session = s.sessions[i];
            const auto start = std::chrono::steady_clock::now();
            auto stored = system.store_conversation(session);
            if (!stored)
                return stored.error().with_context(s.dataset + ": storing session '" + session.id + "'");
            MF_TRY(m_db.record_store(m_run_id, s.id, session.id, micros_since(start)));
            if (m_progress && (i + 1 >= next_report || i + 1 == total)) {
                m_progress(s.dataset + ": stored " + std::to_string(i + 1) + "/" + std::to_string(total) +
                           " sessions");
                next_report = i + 1 + std::max<std::size_t>(1, total / 10);
            }
            auto it = by_checkpoint.find(session.id);
            if (it == by_checkpoint.end()) continue;
            MF_TRY_ASSIGN(bool go_on, grade_checkpoint(system, it->second));
            if (!go_on) return false;
        }
        MF_TRY(m_db.set_scenario_status(m_run_id, s.id, "graded"));
        return true;
    }

private:
    Result<bool> grade_checkpoint(memory::MemorySystem& system, const std::vector<const data::Probe*>& probes) {
        const data::Scenario& s = m_dataset.scenario;
        bool pending = false;
        for (const auto* p : probes)
            for (int k : m_config.ks)
                if (!m_graded.count({p->id, k})) pending = true;
        if (!pending) {
            m_outcome.probes_skipped += probes.size() * m_config.ks.size();
            return true;
        }
        MF_TRY_ASSIGN(auto all, system.all_memories());
        const grade::MemorySnapshot snapshot(std::move(all), system.capabilities().provenance);
        std::size_t done = 0;
        const std::size_t total = probes.size() * m_config.ks.size();
        std::size_t next_report = 0;
        for (const auto* probe : probes) {
            for (int k : m_config.ks) {
                ++done;
                if (m_graded.count({probe->id, k})) {
                    ++m_outcome.probes_skipped;
                    continue;
                }
                const auto start = std::chrono::steady_clock::now();
                auto hits = system.retrieve_memories(probe->question, {}, k);
                const std::int64_t micros = micros_since(start);
                store::ProbeRow row;
                if (hits) {
                    const auto verdict = grade::grade_memory_side(*probe, snapshot, *hits);
                    row = probe_row(s, *probe, k, verdict, *hits, micros);
                } else {
                    // An adapter failing one probe must not stop the run: record it and go on.
                    row = probe_row(s, *probe, k, grade::ProbeVerdict{}, {}, micros);
                    row.stage = "error";
                    row.error = hits.error().describe();
                }
                MF_TRY(m_db.record_probe(m_run_id, row));
                ++m_outcome.probes_graded;
                if (m_progress && (done >= next_report || done == total)) {
                    m_progress(s.dataset + ": graded " + std::to_string(done) + "/" + std::to_string(total) +
                               " probe x k");
                    next_report = done + std::max<std::size_t>(1, total / 5);
                }
                if (m_hook && !m_hook(probe->id, k)) return false;
            }
        }
        return true;
    }

    store::ResultsDb& m_db;
    std::int64_t m_run_id;
    const RunConfig& m_config;
    const LoadedDataset& m_dataset;
    const ProgressSink& m_progress;
    const AfterProbeHook& m_hook;
    RunOutcome& m_outcome;
    std::set<std::pair<std::string, int>> m_graded;
};

}  // namespace

Result<RunOutcome> run_datasets(const RunConfig& config, const std::vector<LoadedDataset>& datasets,
                                const SystemFactory& factory, const ProgressSink& progress,
                                const AfterProbeHook& after_probe) {
    if (config.ks.empty()) return make_error(ErrorKind::invalid_input, "no k given");
    for (int k : config.ks)
        if (k < 1) return make_error(ErrorKind::invalid_input, "k must be at least 1, got " + std::to_string(k));
    if (const auto parent = std::filesystem::path(config.results_path).parent_path(); !parent.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(parent, ec);
        if (ec)
            return make_error(ErrorKind::io, "cannot create the results folder: " + ec.message(), parent.string());
    }
    MF_TRY_ASSIGN(store::ResultsDb db, store::ResultsDb::open(config.results_path));

    RunOutcome outcome;
    const std::string hash = config_hash(config, datasets);
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
        } else {
            MF_TRY_ASSIGN(auto existing, db.find_resumable(hash));
            if (existing) outcome.run_id = existing->id;
        }
        outcome.resumed = outcome.run_id != 0;
        if (!outcome.resumed && progress) progress("nothing to resume with this configuration: starting a new run");
    } else if (progress) {
        MF_TRY_ASSIGN(auto unfinished, db.find_resumable(hash));
        if (unfinished)
            progress("note: run " + std::to_string(unfinished->id) +
                     " with this configuration is unfinished; --resume would continue it. Starting a new run.");
    }
    json config_json = {{"system", config.system_spec}, {"ks", config.ks}, {"seed", config.seed}};
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
    } else {
        MF_TRY(db.reopen_run(outcome.run_id));
    }

    const std::string memory_dir = memory_dir_for(config.results_path, outcome.run_id);
    for (const auto& dataset : datasets) {
        memory::SystemContext context{memory_dir, dataset.scenario.id};
        auto system = factory(context);
        if (!system) {
            (void)db.finish_run(outcome.run_id, "error", system.error().describe());
            return system.error();
        }
        ScenarioRun scenario_run(db, outcome.run_id, config, dataset, progress, after_probe, outcome);
        auto finished = scenario_run.execute(**system);
        if (!finished) {
            (void)db.finish_run(outcome.run_id, "error", finished.error().describe());
            return finished.error();
        }
        if (!*finished) return outcome;  // stopped by the hook: left 'running' for --resume
    }
    MF_TRY(db.finish_run(outcome.run_id, "finished"));
    return outcome;
}

}  // namespace memfail::run
