// SPDX-License-Identifier: MIT
// The write-integrity scorecard tables.
#include <memfail/suites/writ/checks.hpp>
#include <memfail/suites/writ/report.hpp>

#include <memfail/figures/stats.hpp>
#include <memfail/store/leaky_sql.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace memfail::suites::writ {

using namespace memfail::report;

namespace {

std::size_t check_order(const std::string& name) {
    const auto& k = check_names();
    const auto it = std::find(k.begin(), k.end(), name);
    return it == k.end() ? k.size() : static_cast<std::size_t>(it - k.begin());
}

const std::vector<std::string>& mode_order() {
    static const std::vector<std::string> modes = {"native", "no_memory", "oracle", "oracle_retrieval"};
    return modes;
}

std::size_t mode_rank(const std::string& mode) {
    const auto& m = mode_order();
    const auto it = std::find(m.begin(), m.end(), mode);
    return it == m.end() ? m.size() : static_cast<std::size_t>(it - m.begin());
}

struct Count {
    std::int64_t applicable = 0, decided = 0, passed = 0;
};

std::string rate_cell(const Count& c) {
    if (c.decided == 0) return "-";
    return percent(static_cast<double>(c.passed) / static_cast<double>(c.decided)) + " (" + std::to_string(c.decided) +
           ")";
}

// passed / decided of a count that decided something.
double rate_of(const Count& c) { return static_cast<double>(c.passed) / static_cast<double>(c.decided); }

// A difference of two rates in percentage points, signed: "+12.5", "-3.0".
std::string signed_points(double difference) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f", difference * 100.0);
    return buf;
}

Result<std::map<std::int64_t, std::string>> names_of(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    std::map<std::int64_t, std::string> out;
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto run, db.run(id));
        out[id] = run ? run->label() : std::to_string(id);
    }
    return out;
}

void add_rate(std::vector<std::string>& row, const Count& c, bool machine) {
    const Interval ci = wilson_interval(c.passed, c.decided);
    const double rate = c.decided > 0 ? static_cast<double>(c.passed) / static_cast<double>(c.decided) : 0.0;
    if (c.decided == 0) {
        row.insert(row.end(), {machine ? "" : "-", machine ? "" : "-", machine ? "" : ""});
        if (!machine) row.pop_back();
        return;
    }
    if (machine) row.insert(row.end(), {fraction(rate), fraction(ci.low), fraction(ci.high)});
    else row.insert(row.end(), {percent(rate), "[" + percent(ci.low) + ", " + percent(ci.high) + "]"});
}

// Answer-side metric membership of one probe, from its recorded JSON and dataset.
struct ProbeTraits {
    bool v2 = false;
    bool should_abstain = false;
    bool past = false;
    std::string rubric;
    bool updates = false;
    bool has_targets = false;
    std::optional<bool> interfered;  // the scenario has WRIT interference (meta.interference); empty: not said
    bool dedup = false;      // requires deduplication (WRIT's dedup_accuracy)
    bool lifecycle = false;  // requires lifecycle awareness (WRIT's lifecycle_accuracy)
};

ProbeTraits traits_of(const std::string& probe_json) {
    ProbeTraits t;
    const auto j = nlohmann::json::parse(probe_json, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return t;
    t.should_abstain = j.value("should_abstain", false) || j.value("kind", "") == "abstain";
    if (auto it = j.find("temporal"); it != j.end() && it->is_object())
        t.past = !it->value("expect_current", true) && it->contains("as_of");
    if (auto it = j.find("rubric"); it != j.end() && it->is_object()) t.rubric = it->value("kind", "");
    if (auto it = j.find("capabilities"); it != j.end() && it->is_array())
        for (const auto& c : *it)
            if (c.is_string()) {
                const std::string& name = c.get_ref<const std::string&>();
                if (name == "update_tracking" || name == "update_handling") t.updates = true;
                if (name == "deduplication") t.dedup = true;
                if (name == "lifecycle_awareness") t.lifecycle = true;
            }
    if (auto it = j.find("targets"); it != j.end() && it->is_array()) t.has_targets = !it->empty();
    if (auto m = j.find("meta"); m != j.end() && m->is_object())
        if (auto it = m->find("interference"); it != m->end() && it->is_array()) t.interfered = !it->empty();
    t.v2 = j.contains("rubric") || j.contains("targets") || j.contains("should_abstain") || j.contains("capabilities") ||
           j.contains("expected");
    return t;
}

std::string category_of(const std::string& dataset) {
    return dataset.rfind("writ_", 0) == 0 ? dataset.substr(5) : dataset;
}

struct AnswerCounts {
    std::map<std::string, Count> metrics;  // metric -> counts
};

// metric -> (run, mode) counts, at each run's largest k.
// `largest_k` (when given) receives each run's largest k.
// Keyed (run, mode, dataset, metric); dataset is empty unless `by_dataset`.
using AnswerKey = std::tuple<std::int64_t, std::string, std::string, std::string>;
Result<std::map<AnswerKey, Count>> answer_counts(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                                 std::map<std::int64_t, int>* largest_k = nullptr,
                                                 bool by_dataset = false) {
    std::map<AnswerKey, Count> out;
    for (std::int64_t run : run_ids) {
        MF_TRY_ASSIGN(auto rows, db.probe_rows(run));
        int kmax = 0;
        for (const auto& r : rows) kmax = std::max(kmax, r.k);
        if (largest_k) (*largest_k)[run] = kmax;
        // Abstention precision and recall: predicted = the answer declined (the runner's "declines"
        // check), actual = the probe should be abstained on.
        using Cell = std::pair<std::string, std::string>;  // (mode, dataset)
        std::map<Cell, std::int64_t> tp, fp, fn;
        for (const auto& r : rows) {
            if (r.k != kmax || r.stage == "error" || !r.answer) continue;
            const ProbeTraits t = traits_of(r.probe_json);
            if (!t.v2) continue;
            const std::string mode = split_mode(r.scenario_id).second;
            const std::string dataset = by_dataset ? split_mode(r.dataset).first : std::string();
            const Cell cell{mode, dataset};
            auto add = [&](const std::string& metric) {
                Count& c = out[{run, mode, dataset, metric}];
                ++c.applicable;
                if (r.answer_correct) {
                    ++c.decided;
                    c.passed += *r.answer_correct ? 1 : 0;
                }
            };
            const std::string category = category_of(split_mode(r.dataset).first);
            if (!t.should_abstain && !t.past) add("recall_accuracy");
            // WRIT's distractor sensitivity: recall with interference in the scenario against without.
            if (!t.should_abstain && t.interfered)
                add(*t.interfered ? "recall_with_interference" : "recall_without_interference");
            if (t.updates || category == "update" || category == "drift") add("update_fidelity");
            if (t.past || category == "temporal") add("temporal_accuracy");
            if (t.rubric == "constraint" || category == "constraint") add("constraint_consistency");
            if (t.rubric == "entity_count" || category == "entity" || t.dedup) add("dedup_accuracy");
            if (category == "lifecycle" || t.lifecycle) add("lifecycle_accuracy");
            // Pre-delivery detection: the probes whose system answered for itself where the dataset
            // says whether it should flag (the runner's "integrity_flag" check).
            for (const auto& c : r.checks)
                if (c.stage == "integrity_flag") {
                    Count& d = out[{run, mode, dataset, "pre_delivery_detection"}];
                    ++d.applicable;
                    ++d.decided;
                    d.passed += c.passed ? 1 : 0;
                }
            if (category == "trust_hierarchy") add("authority_integrity");
            // Hallucination rate: answerable probes with a decided answer, hallucinated when the
            // runner's "hallucination" check says the wrong answer names no value ever held.
            if (!t.should_abstain && r.answer_correct && t.has_targets) {
                Count& h = out[{run, mode, dataset, "hallucination_rate"}];
                ++h.applicable;
                ++h.decided;
                for (const auto& c : r.checks)
                    if (c.stage == "hallucination" && !c.passed) ++h.passed;  // counted: hallucinated
            }
            bool declined = false, known = false;
            for (const auto& c : r.checks)
                if (c.stage == "declines") {
                    known = true;
                    declined = c.passed;
                }
            if (!known) continue;
            if (declined && t.should_abstain) ++tp[cell];
            else if (declined) ++fp[cell];
            else if (t.should_abstain) ++fn[cell];
        }
        std::set<Cell> cells;
        for (const auto& [c, n] : tp) cells.insert(c);
        for (const auto& [c, n] : fp) cells.insert(c);
        for (const auto& [c, n] : fn) cells.insert(c);
        for (const auto& c : cells) {
            Count& precision = out[{run, c.first, c.second, "abstention_precision"}];
            precision.applicable = precision.decided = tp[c] + fp[c];
            precision.passed = tp[c];
            Count& recall = out[{run, c.first, c.second, "abstention_recall"}];
            recall.applicable = recall.decided = tp[c] + fn[c];
            recall.passed = tp[c];
        }
    }
    return out;
}

const std::vector<std::string>& answer_metric_order() {
    static const std::vector<std::string> m = {"recall_accuracy",        "recall_with_interference",
                                               "recall_without_interference", "update_fidelity", "temporal_accuracy",
                                               "constraint_consistency", "dedup_accuracy",     "lifecycle_accuracy",
                                               "authority_integrity",    "pre_delivery_detection",
                                               "abstention_precision",   "abstention_recall",  "hallucination_rate"};
    return m;
}

std::size_t answer_rank(const std::string& metric) {
    const auto& m = answer_metric_order();
    const auto it = std::find(m.begin(), m.end(), metric);
    return it == m.end() ? m.size() : static_cast<std::size_t>(it - m.begin());
}

}  // namespace


std::pair<std::string, std::string> split_mode(const std::string& scenario_id) {
    const auto at = scenario_id.rfind('@');
    if (at == std::string::npos) return {scenario_id, "native"};
    return {scenario_id.substr(0, at), scenario_id.substr(at + 1)};
}

std::optional<double> IntegrityCount::rate() const {
    if (decided <= 0) return std::nullopt;
    return static_cast<double>(passed) / static_cast<double>(decided);
}

Interval IntegrityCount::interval() const { return wilson_interval(passed, decided); }

Result<std::vector<IntegrityCount>> integrity_counts(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                                     bool by_dataset) {
    // (run position, mode rank, mode, dataset, check order, check, k) -> counts
    std::map<std::tuple<std::size_t, std::size_t, std::string, std::string, std::size_t, std::string, int>, Count> counts;
    for (std::size_t ri = 0; ri < run_ids.size(); ++ri) {
        MF_TRY_ASSIGN(auto checks, db.memory_checks(run_ids[ri]));
        for (const auto& c : checks) {
            const std::string mode = split_mode(c.scenario_id).second;
            const std::string dataset = by_dataset ? split_mode(c.dataset).first : std::string();
            Count& n = counts[{ri, mode_rank(mode), mode, dataset, check_order(c.row.check), c.row.check, c.k}];
            ++n.applicable;
            if (c.row.passed) {
                ++n.decided;
                n.passed += *c.row.passed ? 1 : 0;
            }
        }
    }
    std::vector<IntegrityCount> out;
    for (const auto& [key, c] : counts) {
        const auto& [ri, rank, mode, dataset, order, check, k] = key;
        out.push_back({run_ids[ri], mode, check, k, c.applicable, c.decided, c.passed, dataset});
    }
    return out;
}

Result<std::vector<IntegrityCount>> integrity_answer_counts(store::ResultsDb& db,
                                                           const std::vector<std::int64_t>& run_ids, bool by_dataset) {
    std::map<std::int64_t, int> largest_k;
    MF_TRY_ASSIGN(auto counts, answer_counts(db, run_ids, &largest_k, by_dataset));
    std::map<std::int64_t, std::size_t> position;
    for (std::size_t i = 0; i < run_ids.size(); ++i) position.emplace(run_ids[i], i);
    // (run position, mode rank, mode, dataset, metric order, metric) -> counts
    std::map<std::tuple<std::size_t, std::size_t, std::string, std::string, std::size_t, std::string>,
             std::pair<std::int64_t, Count>>
        ordered;
    for (const auto& [key, c] : counts) {
        const auto& [run, mode, dataset, metric] = key;
        ordered[{position[run], mode_rank(mode), mode, dataset, answer_rank(metric), metric}] = {run, c};
    }
    std::vector<IntegrityCount> out;
    for (const auto& [key, value] : ordered) {
        const auto& [ri, rank, mode, dataset, order, metric] = key;
        const auto& [run, c] = value;
        out.push_back({run, mode, metric, largest_k[run], c.applicable, c.decided, c.passed, dataset});
    }
    return out;
}

Table integrity_table(const std::vector<IntegrityCount>& counts, const std::map<std::int64_t, std::string>& run_names,
                      TableStyle style) {
    const bool machine = style == TableStyle::machine;
    Table t;
    t.title = "Write integrity, memory side (exact checks of what the system holds, retrieves and can recall of the past)";
    t.columns = {{"run", Align::right}, {"mode", Align::left}, {"check", Align::left}, {"k", Align::right},
                 {"probes", Align::right}, {"passed", Align::right}};
    add_rate_columns(t, machine);
    t.columns.push_back({"unverified", Align::right});
    for (const auto& c : counts) {
        const auto name = run_names.find(c.run_id);
        std::vector<std::string> row = {name != run_names.end() ? name->second : std::to_string(c.run_id), c.mode, c.name,
                                        std::to_string(c.k), std::to_string(c.decided), std::to_string(c.passed)};
        add_rate(row, {c.applicable, c.decided, c.passed}, machine);
        row.push_back(std::to_string(c.unverified()));
        t.rows.push_back(std::move(row));
    }
    if (!t.rows.empty()) {
        t.notes.push_back(
            "Each check counts the probes it applies to; rate = passed / decided, CI = 95% Wilson score interval; "
            "unverified: the check could not be decided exactly (a read operation of the system failed, or a value "
            "no message states, inferred by the dataset, is not in the memories' words), never a pass.");
        t.notes.push_back(
            "current_held / current_retrieved: the value valid at the probe is in some memory / in the top k. "
            "stale_exposure: no superseded value ranks above the current one. retraction: no withdrawn value is held "
            "or retrieved. over_retention: nothing that should not persist is held. authority: no assistant summary "
            "that contradicts the user outranks the user's value. drift_detectable: a memory holding a changed value "
            "shows an earlier one in history() (WRIT's detectability). history_complete: every past value is recoverable "
            "(memories or history()). as_of: state_as_of() gives the value valid then. provenance: a memory holding "
            "the value names the message that stated it. docs/WRIT.md defines each exactly.");
    }
    return t;
}

Result<Table> integrity_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, TableStyle style) {
    MF_TRY_ASSIGN(auto names, names_of(db, run_ids));
    MF_TRY_ASSIGN(auto cells, integrity_counts(db, run_ids));
    // Rows by run id, then mode, check and k.
    std::stable_sort(cells.begin(), cells.end(), [](const IntegrityCount& a, const IntegrityCount& b) {
        return std::make_tuple(a.run_id, mode_rank(a.mode), a.mode, check_order(a.name), a.name, a.k) <
               std::make_tuple(b.run_id, mode_rank(b.mode), b.mode, check_order(b.name), b.name, b.k);
    });
    return integrity_table(cells, names, style);
}

Result<Table> integrity_by_dataset_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto names, names_of(db, run_ids));
    MF_TRY_ASSIGN(auto counts, integrity_counts(db, run_ids, /*by_dataset=*/true));
    std::map<std::int64_t, int> kmax;
    for (const auto& c : counts) kmax[c.run_id] = std::max(kmax[c.run_id], c.k);
    std::set<std::pair<std::size_t, std::string>> checks;
    // (run, mode rank, mode, dataset) -> check -> counts, at each run's largest k
    std::map<std::tuple<std::int64_t, std::size_t, std::string, std::string>, std::map<std::string, Count>> cells;
    for (const auto& c : counts) {
        if (c.k != kmax[c.run_id]) continue;
        checks.insert({check_order(c.name), c.name});
        cells[{c.run_id, mode_rank(c.mode), c.mode, c.dataset}][c.name] = {c.applicable, c.decided, c.passed};
    }
    Table t;
    t.title = "Write integrity by dataset at each run's largest k: rate (probes decided)";
    t.columns = {{"run", Align::right}, {"mode", Align::left}, {"dataset", Align::left}};
    for (const auto& [order, name] : checks) t.columns.push_back({name, Align::right});
    for (const auto& [key, by_check] : cells) {
        const auto& [run, rank, mode, dataset] = key;
        std::vector<std::string> row = {names[run], mode, dataset};
        for (const auto& [order, name] : checks) {
            const auto it = by_check.find(name);
            row.push_back(it == by_check.end() ? "" : rate_cell(it->second));
        }
        t.rows.push_back(std::move(row));
    }
    if (!t.rows.empty()) t.notes.push_back("An empty cell: the check does not apply to that dataset's probes.");
    return t;
}

Result<Table> integrity_answer_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, TableStyle style) {
    const bool machine = style == TableStyle::machine;
    MF_TRY_ASSIGN(auto names, names_of(db, run_ids));
    MF_TRY_ASSIGN(auto counts, answer_counts(db, run_ids));
    std::map<std::tuple<std::int64_t, std::size_t, std::string, std::size_t, std::string>, Count> ordered;
    for (const auto& [key, c] : counts) {
        const auto& [run, mode, dataset, metric] = key;
        ordered[{run, mode_rank(mode), mode, answer_rank(metric), metric}] = c;
    }
    Table t;
    t.title = "Write integrity, answer side (the test-taker's answers graded by each probe's rubric, at the largest k)";
    t.columns = {{"run", Align::right}, {"mode", Align::left}, {"metric", Align::left}, {"probes", Align::right},
                 {"passed", Align::right}};
    add_rate_columns(t, machine);
    t.columns.push_back({"unverified", Align::right});
    for (const auto& [key, c] : ordered) {
        const auto& [run, rank, mode, order, metric] = key;
        std::vector<std::string> row = {names[run], mode, metric, std::to_string(c.decided), std::to_string(c.passed)};
        add_rate(row, c, machine);
        row.push_back(std::to_string(c.applicable - c.decided));
        t.rows.push_back(std::move(row));
    }
    if (!t.rows.empty())
        t.notes.push_back(
            "Answers are graded by the probe's rubric where it decides exactly, by the judge otherwise; without a "
            "judge those are unverified (never a pass). abstention_precision = declined and should have / declined; "
            "abstention_recall = declined and should have / should have. hallucination_rate (lower is better): answerable "
            "probes answered wrongly, without declining, with no value their facts ever had (current, past or "
            "distractor) / answerable probes with a decided answer; its `passed` column counts the hallucinations. "
            "pre_delivery_detection (WRIT's): probes carrying an expected integrity flag that the system answered for "
            "itself, right when it flagged its answer (confidence below 1) exactly where a flag was expected. "
            "recall_with_interference / recall_without_interference: answerable probes of scenarios that carry WRIT "
            "interference (distractors, near-duplicates, noise) and of those that carry none; WRIT's distractor "
            "sensitivity is the second minus the first (the distractor table).");
    return t;
}

Result<Table> mode_gap_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto names, names_of(db, run_ids));
    MF_TRY_ASSIGN(auto counts, answer_counts(db, run_ids));
    std::map<std::tuple<std::int64_t, std::size_t, std::string>, std::map<std::string, Count>> by_metric;
    for (const auto& [key, c] : counts) {
        const auto& [run, mode, dataset, metric] = key;
        by_metric[{run, answer_rank(metric), metric}][mode] = c;
    }
    Table t;
    t.title = "Mode gaps (WRIT): native below oracle is the memory's fault; native below no_memory is memory that hurts";
    t.columns = {{"run", Align::right}, {"metric", Align::left},         {"native", Align::right},
                 {"no_memory", Align::right}, {"oracle", Align::right}, {"native - oracle", Align::right},
                 {"native - no_memory", Align::right}};
    for (const auto& entry : by_metric) {
        // entry, not a structured binding: clang 14 cannot capture one in the lambda below.
        const auto& modes = entry.second;
        const auto& [run, order, metric] = entry.first;
        auto get = [&modes](const char* m) -> const Count* {
            const auto it = modes.find(m);
            return it == modes.end() || it->second.decided == 0 ? nullptr : &it->second;
        };
        const Count* native = get("native");
        const Count* none = get("no_memory");
        const Count* oracle = get("oracle");
        if (!native || (!none && !oracle)) continue;
        t.rows.push_back({names[run], metric, rate_cell(*native), none ? rate_cell(*none) : "",
                          oracle ? rate_cell(*oracle) : "", oracle ? signed_points(rate_of(*native) - rate_of(*oracle)) : "",
                          none ? signed_points(rate_of(*native) - rate_of(*none)) : ""});
    }
    if (!t.rows.empty())
        t.notes.push_back("Rates over the probes each mode decided; gaps in percentage points.");
    return t;
}

Result<Table> layer_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto names, names_of(db, run_ids));
    static const std::set<std::string> state = {"current_held",     "stale_exposure", "retraction", "over_retention",
                                                "authority",        "history_complete", "drift_detectable", "as_of"};
    static const std::set<std::string> retrieval = {"current_retrieved"};
    struct Layers {
        std::int64_t wrong = 0, state = 0, retrieval = 0, answer = 0, undecided = 0;
        bool no_memory = false;  // nothing was remembered: no layer to put a wrong answer on
    };
    std::map<std::tuple<std::int64_t, std::size_t, std::string>, Layers> by_mode;
    MF_TRY_ASSIGN(const auto runs, db.runs());
    std::set<std::int64_t> memoryless;
    for (const auto& r : runs)
        if (store::is_no_memory_spec(r.system_spec)) memoryless.insert(r.id);
    for (std::int64_t run : run_ids) {
        MF_TRY_ASSIGN(auto rows, db.probe_rows(run));
        MF_TRY_ASSIGN(auto checks, db.memory_checks(run));
        int kmax = 0;
        for (const auto& r : rows) kmax = std::max(kmax, r.k);
        // (scenario, probe) -> the checks at kmax that failed, and those left undecided
        std::map<std::pair<std::string, std::string>, std::pair<std::set<std::string>, std::set<std::string>>> verdicts;
        for (const auto& c : checks) {
            if (c.k != kmax) continue;
            auto& v = verdicts[{c.scenario_id, c.probe_id}];
            if (!c.row.passed) v.second.insert(c.row.check);
            else if (!*c.row.passed) v.first.insert(c.row.check);
        }
        for (const auto& r : rows) {
            if (r.k != kmax || r.stage == "error" || !r.answer_correct || *r.answer_correct) continue;
            if (!traits_of(r.probe_json).v2) continue;
            const std::string mode = split_mode(r.scenario_id).second;
            Layers& l = by_mode[{run, mode_rank(mode), mode}];
            ++l.wrong;
            // As WRIT's attributeFailure: a run without memory (no_memory mode, the `none` system)
            // has no state or retrieval layer to blame.
            if (mode == "no_memory" || memoryless.count(run)) {
                l.no_memory = true;
                continue;
            }
            const auto it = verdicts.find({r.scenario_id, r.probe_id});
            const std::set<std::string> none;
            const auto& failed = it == verdicts.end() ? none : it->second.first;
            const auto& open = it == verdicts.end() ? none : it->second.second;
            auto any_in = [](const std::set<std::string>& names, const std::set<std::string>& layer) {
                return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return layer.count(n) > 0; });
            };
            if (any_in(failed, state)) ++l.state;
            else if (any_in(failed, retrieval)) ++l.retrieval;
            // A check of either layer left undecided may hide the cause: not put on the answer.
            else if (any_in(open, state) || any_in(open, retrieval)) ++l.undecided;
            else ++l.answer;
        }
    }
    Table t;
    t.title = "Where wrong answers fail (WRIT's layers, at each run's largest k)";
    t.columns = {{"run", Align::right},       {"mode", Align::left},   {"wrong answers", Align::right},
                 {"state", Align::right},     {"retrieval", Align::right}, {"answer", Align::right},
                 {"undecided", Align::right}};
    auto share = [](std::int64_t n, std::int64_t of) {
        return std::to_string(n) + (of > 0 ? " (" + percent(static_cast<double>(n) / static_cast<double>(of)) + "%)" : "");
    };
    for (const auto& [key, l] : by_mode) {
        const auto& [run, rank, mode] = key;
        if (l.no_memory)
            t.rows.push_back({names[run], mode, std::to_string(l.wrong), "-", "-", "-", "-"});
        else
            t.rows.push_back({names[run], mode, std::to_string(l.wrong), share(l.state, l.wrong),
                              share(l.retrieval, l.wrong), share(l.answer, l.wrong), share(l.undecided, l.wrong)});
    }
    if (!t.rows.empty())
        t.notes.push_back(
            "state: a check of what the system wrote failed for the probe (current_held, stale_exposure: a superseded "
            "value still served over the current one, retraction, over_retention, authority, history_complete, "
            "as_of); retrieval: none of those, but current_retrieved failed; answer: every memory check passed and "
            "the answer was still wrong (the agent's policy); undecided: no check failed but one of them could not be "
            "decided (unverified), so the cause is not known. Unverified answers are not counted. Without memory "
            "(no_memory mode, the none system) a wrong answer has no layer: '-', as in WRIT.");
    return t;
}

Result<Table> integrity_dataset_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, TableStyle style) {
    const bool machine = style == TableStyle::machine;
    MF_TRY_ASSIGN(auto names, names_of(db, run_ids));
    MF_TRY_ASSIGN(auto memory, integrity_counts(db, run_ids, /*by_dataset=*/true));
    MF_TRY_ASSIGN(auto answers, integrity_answer_counts(db, run_ids, /*by_dataset=*/true));
    Table t;
    t.title = "Write integrity per dataset (category): every memory check at every k, every answer metric at the largest k";
    t.columns = {{"run", Align::right},  {"mode", Align::left},  {"dataset", Align::left}, {"side", Align::left},
                 {"metric", Align::left}, {"k", Align::right},   {"probes", Align::right}, {"passed", Align::right}};
    add_rate_columns(t, machine);
    t.columns.push_back({"unverified", Align::right});
    auto add = [&](const IntegrityCount& c, const char* side) {
        std::vector<std::string> row = {names[c.run_id],     c.mode, c.dataset, side, c.name, std::to_string(c.k),
                                        std::to_string(c.decided), std::to_string(c.passed)};
        add_rate(row, {c.applicable, c.decided, c.passed}, machine);
        row.push_back(std::to_string(c.unverified()));
        t.rows.push_back(std::move(row));
    };
    for (const auto& c : memory) add(c, "memory");
    for (const auto& c : answers) add(c, "answer");
    if (!t.rows.empty())
        t.notes.push_back("The same counts as the memory-side and answer-side tables, split by dataset; rates over the "
                          "decided probes with their 95% Wilson interval.");
    return t;
}

Result<Table> distractor_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto names, names_of(db, run_ids));
    MF_TRY_ASSIGN(auto counts, answer_counts(db, run_ids));
    std::map<std::tuple<std::int64_t, std::size_t, std::string>, std::pair<Count, Count>> cells;  // (with, without)
    for (const auto& [key, c] : counts) {
        const auto& [run, mode, dataset, metric] = key;
        if (metric == "recall_with_interference") cells[{run, mode_rank(mode), mode}].first = c;
        if (metric == "recall_without_interference") cells[{run, mode_rank(mode), mode}].second = c;
    }
    Table t;
    t.title = "Distractor sensitivity (WRIT): recall without interference minus recall with it, at each run's largest k";
    t.columns = {{"run", Align::right},           {"mode", Align::left},
                 {"with interference", Align::right}, {"without", Align::right},
                 {"sensitivity (points)", Align::right}};
    for (const auto& [key, both] : cells) {
        const auto& [run, rank, mode] = key;
        const auto& [with, without] = both;
        if (with.decided == 0 || without.decided == 0) continue;
        t.rows.push_back({names[run], mode, rate_cell(with), rate_cell(without),
                          signed_points(rate_of(without) - rate_of(with))});
    }
    if (!t.rows.empty())
        t.notes.push_back("Rates over the decided answers of answerable probes (n in parentheses); positive: the "
                          "system answers worse where the scenario carries distractors, near-duplicates or noise. "
                          "Few scenarios of WRIT's release carry none (9 of 77), so the interval is wide.");
    return t;
}

Result<Table> integrity_scorecard_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto names, names_of(db, run_ids));
    MF_TRY_ASSIGN(auto memory, integrity_counts(db, run_ids, /*by_dataset=*/true));
    // (run, mode rank, mode, dataset) -> memory checks pooled at the run's largest k, answers.
    using Key = std::tuple<std::int64_t, std::size_t, std::string, std::string>;
    std::map<Key, std::pair<Count, Count>> cells;
    std::map<std::int64_t, int> kmax;
    for (const auto& c : memory) kmax[c.run_id] = std::max(kmax[c.run_id], c.k);
    for (const auto& c : memory) {
        if (c.k != kmax[c.run_id] || c.dataset.empty()) continue;
        Count& m = cells[{c.run_id, mode_rank(c.mode), c.mode, c.dataset}].first;
        m.applicable += c.applicable;
        m.decided += c.decided;
        m.passed += c.passed;
    }
    for (std::int64_t run : run_ids) {
        MF_TRY_ASSIGN(auto rows, db.probe_rows(run));
        int largest = 0;
        for (const auto& r : rows) largest = std::max(largest, r.k);
        for (const auto& r : rows) {
            if (r.k != largest || r.stage == "error" || !r.answer || !traits_of(r.probe_json).v2) continue;
            const std::string mode = split_mode(r.scenario_id).second;
            Count& a = cells[{run, mode_rank(mode), mode, split_mode(r.dataset).first}].second;
            ++a.applicable;
            if (r.answer_correct) {
                ++a.decided;
                if (*r.answer_correct) ++a.passed;
            }
        }
    }
    Table t;
    t.title = "Write integrity scorecard per dataset (category), at each run's largest k: memory checks passed and "
              "answers right, each over what was decided";
    t.columns = {{"run", Align::right},        {"mode", Align::left},          {"dataset", Align::left},
                 {"checks passed", Align::right}, {"checks %", Align::right},  {"checks 95% CI", Align::left},
                 {"answers right", Align::right}, {"answers %", Align::right}, {"answers 95% CI", Align::left},
                 {"unverified", Align::right}};
    auto cellsof = [](const Count& c) -> std::vector<std::string> {
        if (c.applicable == 0) return {"", "", ""};
        const std::string n = std::to_string(c.passed) + "/" + std::to_string(c.decided);
        if (c.decided == 0) return {n, "-", "-"};
        const Interval ci = wilson_interval(c.passed, c.decided);
        return {n, percent(static_cast<double>(c.passed) / static_cast<double>(c.decided)),
                "[" + percent(ci.low) + ", " + percent(ci.high) + "]"};
    };
    for (const auto& [key, both] : cells) {
        const auto& [run, rank, mode, dataset] = key;
        std::vector<std::string> row = {names[run], mode, dataset};
        for (auto& x : cellsof(both.first)) row.push_back(std::move(x));
        for (auto& x : cellsof(both.second)) row.push_back(std::move(x));
        const std::int64_t open = (both.first.applicable - both.first.decided) + (both.second.applicable - both.second.decided);
        row.push_back(std::to_string(open));
        t.rows.push_back(std::move(row));
    }
    if (!t.rows.empty())
        t.notes.push_back(
            "checks passed: every memory check's verdicts on the dataset's probes pooled (passed/decided); answers "
            "right: probes whose answer the rubric (or the judge) decided correct / decided, blank when no answer "
            "was graded; unverified: check verdicts and answers left to a judge, in no rate. The tables below give "
            "each check and answer metric.");
    return t;
}

}  // namespace memfail::suites::writ
