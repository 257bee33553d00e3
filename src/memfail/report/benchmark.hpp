// SPDX-License-Identifier: MIT
// The published benchmarks' own metric beside memfail's stages (the benchmarks suite): LoCoMo's
// token F1 per category as its authors score it, LongMemEval's accuracy per question type (memfail's
// answer judge standing in for theirs), both computed from the answers a results file recorded.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/figures/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

// One cell: a run at k over one slice of a benchmark dataset ("1 multi-hop", "all"; a question
// type, "abstention", "task-averaged", "overall").
struct BenchmarkCell {
    std::int64_t run_id = 0;
    std::string dataset;  // "locomo", "longmemeval"
    int k = 0;
    std::string slice;
    std::string metric;         // "token F1", "accuracy"
    std::int64_t probes = 0;    // probes of the slice (for task-averaged: of the types averaged)
    std::int64_t answered = 0;  // with a recorded answer
    std::int64_t scored = 0;    // scored: LoCoMo every answer of a category 1..5; LongMemEval the judged ones
    std::optional<double> score;  // mean in [0, 1]; empty when nothing was scored
};

// The slice a benchmark question counts in: LoCoMo's "<category> <name>" ("unknown" outside 1..5),
// LongMemEval's question type ("unknown" when it has none). `meta` is the probe's.
std::string benchmark_slice(const std::string& dataset, const nlohmann::json& meta);
// A share as the benchmark tables print it: "42.1" for people, "0.4213" for machines.
std::string benchmark_share(double v, bool machine);

// Every cell of the given runs, in run, dataset, k and slice order. Empty when no run covers
// locomo or longmemeval.
Result<std::vector<BenchmarkCell>> benchmark_cells(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// "Benchmark metric": one row per cell; a run x dataset x k without any recorded answer reads
// "needs an answer model" in place of its scores. No rows when no run covers a benchmark dataset.
Result<Table> benchmark_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                              TableStyle style = TableStyle::human);

}  // namespace memfail::report
