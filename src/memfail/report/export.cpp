// SPDX-License-Identifier: MIT
// The results JSON and samples JSONL exports.
#include <memfail/report/export.hpp>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <tuple>

#include <memfail/core/hash.hpp>
#include <memfail/core/version.hpp>
#include <memfail/report/benchmark.hpp>
#include <memfail/suites/suite.hpp>
#include <memfail/report/slices.hpp>
#include <memfail/report/sources.hpp>
#include <memfail/figures/stats.hpp>

#include <nlohmann/json.hpp>

namespace memfail::report {

namespace {

// Ordered: keys stay in the documented order, which reads better than alphabetical.
using json = nlohmann::ordered_json;

// Dataset text can hold anything; invalid UTF-8 is replaced rather than failing the whole export.
std::string dump(const json& value, int indent = -1) {
    return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

// A JSON column as a value; a column that does not parse (it should) is kept as its text.
json parsed(const std::string& text, json fallback = json::array()) {
    if (text.empty()) return fallback;
    json value = json::parse(text, nullptr, false);
    if (value.is_discarded()) return json(text);
    return value;
}

json nullable(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

json latency_json(const store::LatencySummary& l) {
    return {{"count", l.count}, {"p50_ms", l.p50_ms}, {"p99_ms", l.p99_ms}};
}

// One dataset of a run: its scenarios with their hashes, the store's size and the latencies.
Result<json> dataset_json(store::ResultsDb& db, std::int64_t run_id, const std::string& name,
                          const std::vector<store::ScenarioRecord>& scenarios) {
    json list = json::array();
    std::set<std::string> hashes;
    std::int64_t sessions = 0, probes = 0;
    for (const auto& s : scenarios) {
        list.push_back({{"id", s.scenario_id}, {"hash", s.dataset_hash}, {"sessions", s.sessions},
                        {"probes", s.probes}, {"status", s.status}});
        hashes.insert(s.dataset_hash);
        sessions += s.sessions;
        probes += s.probes;
    }
    // One value to compare two runs' data by: the scenario's hash, or the hash of the sorted set.
    std::string hash = hashes.size() == 1 ? *hashes.begin() : std::string();
    if (hashes.size() > 1) {
        std::string joined;
        for (const auto& h : hashes) joined += h + "\n";
        hash = content_hash(joined);
    }
    MF_TRY_ASSIGN(auto store_latency, db.store_latency(run_id, name));
    MF_TRY_ASSIGN(auto retrieve_latency, db.retrieve_latency(run_id, name));
    MF_TRY_ASSIGN(auto stats, db.memory_stats(run_id, name));
    json memories = nullptr, tokens_per_memory = nullptr, encoding = nullptr;
    if (stats) {
        memories = stats->memories;
        if (stats->tokens && stats->memories > 0) {
            tokens_per_memory = static_cast<double>(*stats->tokens) / static_cast<double>(stats->memories);
            encoding = stats->encoding;
        }
    }
    return json{{"name", name},
                {"hash", hash},
                {"scenarios", list},
                {"sessions", sessions},
                {"probes", probes},
                {"memories", memories},
                {"tokens_per_memory", tokens_per_memory},
                {"token_encoding", encoding},
                {"latency", {{"store", latency_json(store_latency)}, {"retrieve", latency_json(retrieve_latency)}}}};
}

// How many probes ended at each stage (and apart from them).
json stages_json(const store::SummaryRow& r) {
    return {{"not_stored", r.not_stored},
            {"summary_error", r.summary_error},
            {"unverified", r.unverified},
            {"not_retrieved", r.not_retrieved},
            {"retrieved", r.retrieved()},
            {"reasoning_error", r.reasoning_error},
            {"correct", r.correct},
            {"needs_answer_stage", r.needs_answer_stage},
            {"ambiguous", r.ambiguous},
            {"error", r.errors}};
}

// One dataset x k, counted as the success table counts it (errors leave the denominator).
json result_json(const store::SummaryRow& r, bool end_to_end, const json& tokens_per_memory) {
    const std::int64_t probes = r.graded - r.errors;
    const std::int64_t success = end_to_end ? r.correct : r.success;
    const Interval ci = wilson_interval(success, probes);
    return {{"dataset", r.dataset},
            {"k", r.k},
            {"probes", probes},
            {"success", success},
            {"rate", probes > 0 ? static_cast<double>(success) / static_cast<double>(probes) : 0.0},
            {"ci95", {ci.low, ci.high}},
            {"memory_success", r.success},
            {"with_evidence", probes - r.abstain_graded},
            {"stages", stages_json(r)},
            {"tokens_per_probe", r.retrieved_tokens ? json(*r.retrieved_tokens) : json(nullptr)},
            {"tokens_per_memory", tokens_per_memory}};
}

// One slice of a dataset x k (report/slices.hpp), counted as result_json counts the dataset.
json slice_json(const Slice& s, bool end_to_end) {
    const SliceRate rate = slice_rate(s, end_to_end);
    const Interval ci = wilson_interval(rate.success, rate.probes);
    const auto& r = s.counts;
    return {{"dataset", r.dataset},
            {"k", r.k},
            {"slice", slice_key(s.dimension)},
            {"label", s.label},
            {"probes", rate.probes},
            {"success", rate.success},
            {"rate", rate.probes > 0 ? json(rate.rate) : json(nullptr)},
            {"ci95", {ci.low, ci.high}},
            {"memory_success", r.success},
            {"stages", stages_json(r)},
            {"answers", {{"read", s.answers_read}, {"right", s.answers_right}}}};
}

json usage_json(const store::LlmUsageRow& u) {
    return {{"role", u.role},
            {"calls", u.calls},
            {"cache_hits", u.cache_hits},
            {"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"counted_locally", u.counted_locally},
            {"errors", u.errors},
            {"retries", u.retries},
            {"p50_ms", u.p50_ms},
            {"p95_ms", u.p95_ms}};
}

using MemoryKey = std::tuple<std::string, std::string, std::string>;  // scenario, checkpoint, memory id
using CheckKey = std::pair<std::string, int>;                          // probe id, k

// The suite's memory checks of one scenario's probes (memory_checks; none in files that predate it).
Result<std::map<CheckKey, std::vector<store::MemoryCheckRow>>> scenario_memory_checks(store::ResultsDb& db,
                                                                                       std::int64_t run_id,
                                                                                       const std::string& scenario) {
    MF_TRY_ASSIGN(store::Statement s, db.database().prepare(
        "SELECT probe_id, k, name, passed, detail FROM memory_checks WHERE run_id = ? AND scenario_id = ? "
        "ORDER BY probe_id, k, rowid"));
    s.bind(1, run_id).bind(2, scenario);
    std::map<CheckKey, std::vector<store::MemoryCheckRow>> out;
    MF_TRY(s.for_each_row([&] {
        store::MemoryCheckRow row;
        row.check = s.column_text(2);
        if (!s.column_is_null(3)) row.passed = s.column_int(3) != 0;
        row.detail = s.column_text(4);
        out[{s.column_text(0), static_cast<int>(s.column_int(1))}].push_back(std::move(row));
    }));
    return out;
}

// The probe as the dataset states it (schema 3 runs); nulls when the run predates probe_texts.
void add_probe_fields(json& record, const std::string& probe_json) {
    record["question"] = nullptr;
    record["reference_answer"] = nullptr;
    if (probe_json.empty()) return;
    const json probe = json::parse(probe_json, nullptr, false);
    if (!probe.is_object()) return;
    if (auto q = probe.find("question"); q != probe.end()) record["question"] = *q;
    if (auto a = probe.find("answer"); a != probe.end()) record["reference_answer"] = *a;
    if (auto c = probe.find("choices"); c != probe.end()) record["choices"] = *c;
    if (auto c = probe.find("correct_choice"); c != probe.end()) record["correct_choice"] = *c;
    json evidence = json::array();
    if (auto e = probe.find("evidence"); e != probe.end() && e->is_array())
        for (const auto& fact : *e)
            if (fact.is_object())
                evidence.push_back({{"id", fact.value("id", "")}, {"text", fact.value("text", "")}});
    record["evidence"] = evidence;
}

json sample_json(const store::RunRecord& run, const RunOrigin* origin, const store::ProbeRow& p,
                 const std::map<MemoryKey, const store::MemoryTextRow*>& memories,
                 const std::vector<store::MemoryCheckRow>* memory_checks) {
    json record = json::object();
    if (origin) record["file"] = origin->file;
    record.update(json{{"run_id", origin ? origin->id : run.id},
                   {"system", run.system_spec},
                   {"dataset", p.dataset},
                   {"scenario_id", p.scenario_id},
                   {"probe_id", p.probe_id},
                   {"k", p.k},
                   {"kind", p.kind},
                   {"checkpoint", nullable(p.checkpoint)}});
    add_probe_fields(record, p.probe_json);
    json labels = json::object();
    for (const auto& l : probe_slices(p.dataset, label_fields(p.kind, p.stage, p.probe_json)))
        labels[slice_key(l.dimension)] = l.label;
    record["slices"] = std::move(labels);
    record["stage"] = p.stage;
    record["memory_success"] = p.memory_success;
    record["answer"] = p.answer ? json(*p.answer) : json(nullptr);
    record["answer_correct"] = p.answer_correct ? json(*p.answer_correct) : json(nullptr);
    record["reasoning"] = p.reasoning;
    record["grader"] = p.grader;
    record["error"] = nullable(p.error);
    record["retrieved"] = parsed(p.retrieved_json);
    json facts = json::array();
    std::vector<std::string> stored_ids;  // every memory a fact was found in, first mention first
    for (const auto& f : p.facts) {
        json stored = parsed(f.stored_json);
        if (stored.is_array()) {
            for (const auto& id : stored) {
                if (!id.is_string()) continue;
                const std::string text = id.get<std::string>();
                if (std::find(stored_ids.begin(), stored_ids.end(), text) == stored_ids.end()) stored_ids.push_back(text);
            }
        }
        facts.push_back({{"fact_id", f.fact_id},
                         {"stage", f.stage},
                         {"method", f.method},
                         {"stored", std::move(stored)},
                         {"retrieved", parsed(f.retrieved_json)},
                         {"missing", parsed(f.missing_json)},
                         {"explanation", f.explanation}});
    }
    record["facts"] = std::move(facts);
    json checks = json::array();
    for (const auto& c : p.checks)
        checks.push_back({{"fact_id", nullable(c.fact_id)},
                          {"stage", c.stage},
                          {"grader", c.grader},
                          {"passed", c.passed},
                          {"decisive", c.decisive},
                          {"reason", c.reason}});
    record["checks"] = std::move(checks);
    json suite_checks = json::array();
    if (memory_checks)
        for (const auto& c : *memory_checks)
            suite_checks.push_back(
                {{"check", c.check}, {"passed", c.passed ? json(*c.passed) : json(nullptr)}, {"detail", c.detail}});
    record["memory_checks"] = std::move(suite_checks);
    json stored_memories = json::array();
    for (const auto& id : stored_ids) {
        const auto it = memories.find({p.scenario_id, p.checkpoint, id});
        if (it == memories.end()) continue;
        stored_memories.push_back(
            {{"id", id}, {"text", it->second->text}, {"sources", parsed(it->second->sources_json)}});
    }
    record["stored_memories"] = std::move(stored_memories);
    record["retrieve_ms"] = static_cast<double>(p.retrieve_micros) / 1000.0;
    record["retrieved_tokens"] = p.retrieved_tokens ? json(*p.retrieved_tokens) : json(nullptr);
    return record;
}

}  // namespace

Result<std::string> results_json(store::ResultsDb& db, const std::vector<std::int64_t>& runs) {
    MF_TRY_ASSIGN(auto all_rows, db.summary(runs));
    MF_TRY_ASSIGN(auto all_slices, slices(db, runs));
    // As in success_table: one meaning of "success" for the whole document.
    bool end_to_end = false;
    for (const auto& r : all_rows) end_to_end |= r.answered > 0;
    MF_TRY_ASSIGN(auto origins, run_origins(db));
    json out_runs = json::array();
    for (std::int64_t id : runs) {
        MF_TRY_ASSIGN(auto run, db.run(id));
        if (!run) return make_error(ErrorKind::not_found, "no run " + std::to_string(id), db.database().path());
        MF_TRY_ASSIGN(auto scenarios, db.scenarios(id));
        std::vector<std::string> names;
        std::map<std::string, std::vector<store::ScenarioRecord>> by_dataset;
        for (const auto& s : scenarios) {
            if (!by_dataset.count(s.dataset)) names.push_back(s.dataset);
            by_dataset[s.dataset].push_back(s);
        }
        json datasets = json::array();
        std::map<std::string, json> tokens_per_memory;
        for (const auto& name : names) {
            MF_TRY_ASSIGN(json d, dataset_json(db, id, name, by_dataset[name]));
            tokens_per_memory[name] = d["tokens_per_memory"];
            datasets.push_back(std::move(d));
        }
        json results = json::array();
        for (const auto& r : all_rows)
            if (r.run_id == id)
                results.push_back(result_json(r, end_to_end, tokens_per_memory.count(r.dataset)
                                                                 ? tokens_per_memory[r.dataset]
                                                                 : json(nullptr)));
        json run_slices = json::array();
        for (const auto& sl : all_slices)
            if (sl.counts.run_id == id) run_slices.push_back(slice_json(sl, end_to_end));
        MF_TRY_ASSIGN(auto usage, db.llm_usage(id));
        json llm_usage = json::array();
        for (const auto& u : usage) llm_usage.push_back(usage_json(u));
        const auto origin = origins.find(id);
        json entry = {{"id", origin != origins.end() ? origin->second.id : run->id},
                            {"system", run->system_spec},
                            {"status", run->status},
                            {"error", nullable(run->error)},
                            {"config", parsed(run->config_json, json::object())},
                            {"config_hash", run->config_hash},
                            {"protocol", run->protocol()},
                            {"name", run->label()},
                            {"code_version", run->code_version},
                            {"started_at", run->started_at},
                            {"finished_at", nullable(run->finished_at)},
                            {"datasets", std::move(datasets)},
                            {"results", std::move(results)},
                            {"slices", std::move(run_slices)},
                            {"llm_usage", std::move(llm_usage)}};
        // Each suite's own block (its scorecard: write integrity, the long-horizon profile).
        for (const suites::Suite* suite : suites::all_suites())
            if (const report::SuiteReport* section = suite->report()) {
                MF_TRY_ASSIGN(json block, section->run_json(db, id));
                if (!block.is_null()) entry[section->json_key()] = std::move(block);
            }
        // Which index served retrieval (MemorySystem::serving()), every distinct one of the run.
        MF_TRY_ASSIGN(auto servings, db.servings(id));
        if (!servings.empty()) entry["retrieval_serving"] = servings;
        // The published benchmarks' own metric (LoCoMo token F1, LongMemEval accuracy); score null offline.
        MF_TRY_ASSIGN(auto benchmark, benchmark_cells(db, {id}));
        if (!benchmark.empty()) {
            json cells = json::array();
            for (const auto& c : benchmark)
                cells.push_back({{"dataset", c.dataset}, {"k", c.k}, {"slice", c.slice}, {"metric", c.metric},
                                 {"probes", c.probes}, {"answered", c.answered}, {"scored", c.scored},
                                 {"score", c.score ? json(*c.score) : json(nullptr)}});
            entry["benchmark"] = std::move(cells);
        }
        // A report over several results files says which file each run is from (its id is its id there).
        if (origin != origins.end()) {
            json with_file = {{"file", origin->second.file}, {"path", origin->second.path}};
            with_file.update(entry);
            entry = std::move(with_file);
        }
        out_runs.push_back(std::move(entry));
    }
    const json doc = {{"memfail_results", k_export_version},
                      {"generated_by", "memfail " + std::string(code_version())},
                      {"measure", end_to_end ? "end_to_end" : "memory"},
                      {"runs", std::move(out_runs)}};
    return dump(doc, 2) + "\n";
}

Result<std::size_t> write_samples_jsonl(store::ResultsDb& db, const std::vector<std::int64_t>& runs,
                                        std::ostream& out) {
    std::size_t lines = 0;
    MF_TRY_ASSIGN(auto origins, run_origins(db));
    for (std::int64_t id : runs) {
        MF_TRY_ASSIGN(auto run, db.run(id));
        const auto origin = origins.find(id);
        if (!run) return make_error(ErrorKind::not_found, "no run " + std::to_string(id), db.database().path());
        // One scenario at a time, in the order probe_rows() gives for a whole run, so memory stays
        // bounded by the largest scenario however big the run.
        MF_TRY_ASSIGN(auto scenarios, db.scenarios(id));
        std::sort(scenarios.begin(), scenarios.end(), [](const store::ScenarioRecord& a, const store::ScenarioRecord& b) {
            return std::tie(a.dataset, a.scenario_id) < std::tie(b.dataset, b.scenario_id);
        });
        for (const auto& scenario : scenarios) {
            MF_TRY_ASSIGN(auto recorded, db.recorded_memories(id, scenario.scenario_id));
            std::map<MemoryKey, const store::MemoryTextRow*> memories;
            for (const auto& m : recorded)
                memories.emplace(MemoryKey{m.scenario_id, m.checkpoint, m.memory.id}, &m.memory);
            MF_TRY_ASSIGN(auto checks, scenario_memory_checks(db, id, scenario.scenario_id));
            MF_TRY_ASSIGN(auto rows, db.probe_rows(id, scenario.scenario_id));
            for (const auto& p : rows) {
                const auto own = checks.find({p.probe_id, p.k});
                out << dump(sample_json(*run, origin != origins.end() ? &origin->second : nullptr, p, memories,
                                        own == checks.end() ? nullptr : &own->second))
                    << '\n';
                if (!out) return make_error(ErrorKind::io, "could not write the samples file");
                ++lines;
            }
        }
    }
    out.flush();
    if (!out) return make_error(ErrorKind::io, "could not write the samples file");
    return lines;
}

}  // namespace memfail::report
