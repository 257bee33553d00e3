// SPDX-License-Identifier: MIT
// The benchmarks' own metric from the recorded answers.
#include <memfail/report/benchmark.hpp>

#include <memfail/report/sources.hpp>
#include <memfail/suites/benchmarks/metric.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

namespace memfail::report {

namespace {

namespace bm = suites::benchmarks;
using nlohmann::json;

struct Sum {
    std::int64_t probes = 0, answered = 0, scored = 0;
    double total = 0;
};

// Where a slice sorts: LoCoMo's categories in number order, LongMemEval's types in its authors'
// order (others after, by name), then the summary rows.
std::tuple<int, std::string> slice_rank(const std::string& slice) {
    const auto& types = bm::longmemeval_question_types();
    if (const auto it = std::find(types.begin(), types.end(), slice); it != types.end())
        return {static_cast<int>(it - types.begin()), ""};
    if (slice == "abstention") return {100, ""};
    if (slice == "task-averaged") return {101, ""};
    if (slice == "all" || slice == "overall") return {102, ""};
    return {50, slice};  // "1 multi-hop" ... sort by name; other types too
}

// Python's round(v, 3): the exact binary value rounded half to even, as printf rounds it.
double round3(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return std::strtod(buf, nullptr);
}

}  // namespace

std::string benchmark_share(double v, bool machine) {
    char buf[32];
    std::snprintf(buf, sizeof buf, machine ? "%.4f" : "%.1f", machine ? v : 100.0 * v);
    return buf;
}

std::string benchmark_slice(const std::string& dataset, const json& meta) {
    if (dataset == "locomo") {
        const int c = meta.value("category", json()).is_number_integer() ? meta["category"].get<int>() : 0;
        return c >= 1 && c <= 5 ? std::to_string(c) + " " + bm::locomo_category_name(c) : "unknown";
    }
    const auto t = meta.value("question_type", json());
    return t.is_string() ? t.get<std::string>() : "unknown";
}

Result<std::vector<BenchmarkCell>> benchmark_cells(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(store::Statement s, db.database().prepare(
        "SELECT p.dataset, p.k, p.answer, p.answer_correct, p.stage, t.probe_json, b.passed "
        "FROM probe_results p JOIN run_scenarios sc ON sc.run_id = p.run_id AND sc.scenario_id = p.scenario_id "
        "LEFT JOIN probe_texts t ON t.run_id = p.run_id AND t.scenario_id = p.scenario_id AND t.probe_id = p.probe_id "
        // The verdict on an answer the taxonomy stopped before (Suite::scores_every_answer).
        "LEFT JOIN stage_checks b ON b.run_id = p.run_id AND b.scenario_id = p.scenario_id AND b.probe_id = p.probe_id "
        "AND b.k = p.k AND b.fact_id = '' AND b.stage = 'benchmark' "
        "WHERE p.run_id = ? AND p.dataset IN ('locomo', 'longmemeval') " + db.leaky_filter("p", "sc") +
        " ORDER BY sc.rowid, p.k"));
    // (run position, dataset, k, slice rank) -> sums.
    using Key = std::tuple<std::size_t, std::string, int, std::tuple<int, std::string>>;
    std::map<Key, std::pair<std::string, Sum>> sums;
    for (std::size_t run = 0; run < run_ids.size(); ++run) {
        s.reset();
        s.bind(1, run_ids[run]);
        MF_TRY(s.for_each_row([&] {
            const std::string dataset = s.column_text(0);
            const int k = static_cast<int>(s.column_int(1));
            const bool answered = !s.column_is_null(2) && s.column_text(4) != "error";
            const std::string answer = s.column_is_null(2) ? std::string() : s.column_text(2);
            const json probe = s.column_is_null(5) ? json() : json::parse(s.column_text(5), nullptr, false);
            const json meta = probe.is_object() ? probe.value("meta", json::object()) : json::object();
            auto add = [&](const std::string& slice, std::optional<double> score) {
                auto& [name, sum] = sums[{run, dataset, k, slice_rank(slice)}];
                name = slice;
                ++sum.probes;
                sum.answered += answered;
                if (score) {
                    ++sum.scored;
                    sum.total += *score;
                }
            };
            if (dataset == "locomo") {
                const int category = meta.value("category", json()).is_number_integer() ? meta["category"].get<int>() : 0;
                if (category < 1 || category > 5) return;  // outside the per-category figures
                const std::string reference = probe.is_object() && probe.value("answer", json()).is_string()
                                                  ? probe["answer"].get<std::string>() : std::string();
                std::optional<double> score = answered ? bm::locomo_score(category, answer, reference) : std::nullopt;
                // The authors store each question's F1 rounded to 3 decimals and average those.
                if (score) score = round3(*score);
                add(benchmark_slice(dataset, meta), score);
                add("all", score);
                return;
            }
            std::optional<double> right;
            if (answered && !s.column_is_null(3)) right = s.column_int(3) != 0 ? 1.0 : 0.0;
            else if (answered && !s.column_is_null(6)) right = s.column_int(6) != 0 ? 1.0 : 0.0;
            add(benchmark_slice(dataset, meta), right);
            if (meta.value("abstention", false)) add("abstention", right);
            add("overall", right);
        }));
    }
    std::vector<BenchmarkCell> out;
    for (const auto& [key, entry] : sums) {
        const auto& [name, sum] = entry;
        BenchmarkCell c;
        c.run_id = run_ids[std::get<0>(key)];
        c.dataset = std::get<1>(key);
        c.k = std::get<2>(key);
        c.slice = name;
        c.metric = c.dataset == "locomo" ? "token F1" : "accuracy";
        c.probes = sum.probes;
        c.answered = sum.answered;
        c.scored = sum.scored;
        // LongMemEval's accuracy is over every answered question: a slice where some answer has no
        // verdict (the rules decide only what they can prove; a judge call failed) has no score
        // comparable with the authors', so none is shown.
        const bool complete = c.dataset == "locomo" || sum.scored == sum.answered;
        if (sum.scored > 0 && complete) c.score = sum.total / static_cast<double>(sum.scored);
        out.push_back(std::move(c));
    }
    // LongMemEval's task-averaged accuracy: the mean of its question types' accuracies, before "overall".
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (out[i].dataset != "longmemeval" || out[i].slice != "overall") continue;
        BenchmarkCell avg = out[i];
        avg.slice = "task-averaged";
        avg.probes = avg.answered = avg.scored = 0;
        double total = 0;
        int types = 0;
        bool every_type_scored = true;
        const auto& known = bm::longmemeval_question_types();
        for (const auto& c : out)
            if (c.run_id == out[i].run_id && c.dataset == "longmemeval" && c.k == out[i].k &&
                std::find(known.begin(), known.end(), c.slice) != known.end()) {
                avg.probes += c.probes;
                avg.answered += c.answered;
                avg.scored += c.scored;
                if (c.score) {
                    total += *c.score;
                    ++types;
                } else if (c.answered > 0) {
                    every_type_scored = false;
                }
            }
        avg.score = types > 0 && every_type_scored ? std::optional<double>(total / types) : std::nullopt;
        out.insert(out.begin() + static_cast<std::ptrdiff_t>(i), std::move(avg));
        ++i;
    }
    return out;
}

Result<Table> benchmark_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, TableStyle style) {
    const bool machine = style == TableStyle::machine;
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    MF_TRY_ASSIGN(auto cells, benchmark_cells(db, run_ids));
    Table t;
    t.title = "Benchmark metric: the published benchmarks' own scores (LoCoMo token F1 per category, LongMemEval "
              "accuracy per question type) beside memfail's stages";
    std::map<std::int64_t, std::string> protocols;
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto run, db.run(id));
        protocols[id] = run ? run->protocol() : std::string("memfail");
    }
    t.columns = {{"run", Align::left},    {"protocol", Align::left}, {"dataset", Align::left},  {"k", Align::right},
                 {"slice", Align::left},  {"probes", Align::right},  {"answered", Align::right},
                 {"scored", Align::right}, {"metric", Align::left},   {machine ? "score" : "score %", Align::right}};
    // A run x dataset x k with no answer at all was run offline.
    std::map<std::tuple<std::int64_t, std::string, int>, std::int64_t> answered;
    for (const auto& c : cells) answered[{c.run_id, c.dataset, c.k}] += c.answered;
    bool any_offline = false;
    for (const auto& c : cells) {
        const bool offline = answered[{c.run_id, c.dataset, c.k}] == 0;
        any_offline = any_offline || offline;
        std::string score = offline ? "needs an answer model" : c.score ? benchmark_share(*c.score, machine) : (machine ? "" : "-");
        t.rows.push_back({names[c.run_id], protocols[c.run_id], c.dataset, std::to_string(c.k), c.slice, std::to_string(c.probes),
                          std::to_string(c.answered), std::to_string(c.scored), c.metric, score});
    }
    if (!t.rows.empty()) {
        t.notes.push_back("LoCoMo: token F1 of every recorded answer as the authors' task_eval/evaluation.py scores it "
                          "(normalised, Porter-stemmed; multi-hop split on commas, open-domain the answer's first ';' "
                          "alternative, adversarial 1 when the answer says 'no information available' or 'not "
                          "mentioned'), each question's F1 rounded to 3 decimals as they store it; all: the mean over "
                          "categories 1-5.");
        t.notes.push_back("protocol: the answer prompt the run used. locomo and longmemeval are the benchmarks' own "
                          "(their authors' prompts; LongMemEval's answers judged by its per-question-type prompts): "
                          "their figures compare with published ones. memfail and paper ask memfail's prompts, so "
                          "their figures do not.");
        t.notes.push_back("LongMemEval: the share of every answered question judged right: under --protocol "
                          "longmemeval by the authors' per-type judge prompts, else by memfail's answer judge (the "
                          "authors use GPT-4o; without a judge, the answer rules), the questions whose memory side "
                          "failed included, as the authors score every question (their verdict is kept for this table "
                          "only: the stages stop at the first failing one); scored: the answers with a verdict (a judge "
                          "call that failed leaves one out, and so does an answer the rules cannot decide); a slice with fewer "
                          "scored than answered shows no score, since the authors' accuracy is over every question "
                          "(run with --judge-model); task-averaged: the mean of the question types' accuracies, "
                          "shown when every type has one.");
        if (any_offline)
            t.notes.push_back("needs an answer model: the run recorded no answers (run it with --answer-model).");
    }
    return t;
}

}  // namespace memfail::report
