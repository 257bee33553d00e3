// SPDX-License-Identifier: MIT
// Comparing two sets of runs (A and B) cell by cell, flagging only the differences the sample sizes support.
//
// A cell is one dataset x k x outcome, where the outcome is success or one failure stage's share of
// the probes. Each cell gets the difference B - A in percentage points and a two-sided p-value.
// When both sides graded the same probes (the dataset's hashes are the same on both sides) the
// probes are paired by (scenario, probe, k) and the test is the exact McNemar test: a two-sided
// binomial test with p = 1/2 on the discordant pairs (A yes/B no against A no/B yes). Only when the
// sides graded different probes (the hashes differ) are the samples treated as independent: the
// pooled two-proportion z-test, or Fisher's exact test when an expected count is below 5.
// Cells with fewer than `min_probes` probes (pairs) on either side are "too few": not tested and
// never flagged. A stage row that mirrors success (every probe that did not succeed failed at that
// stage, on both sides) is the success row read backwards: shown, not tested again. The tested cells
// form one family corrected with Holm-Bonferroni, so running many cells does not manufacture
// significant differences.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/figures/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

struct CompareOptions {
    double alpha = 0.05;           // family-wise error rate after Holm-Bonferroni
    std::int64_t min_probes = 20;  // per side; smaller cells are reported but not tested
    // Compare runs of different protocols (memfail vs paper) anyway, with a warning: their stages
    // are graded by different rules, so a difference mixes the systems with the grading.
    bool force = false;
};

enum class CompareTest { mcnemar, z_test, fisher, too_few, constant, mirror };
// "mcnemar", "z", "fisher", "too few", "none", "mirror"
const char* compare_test_name(CompareTest test);

struct CompareCell {
    std::string dataset;
    int k = 0;
    std::string outcome;  // "success" or a failure stage name
    bool higher_is_better = false;
    std::int64_t a_count = 0, a_probes = 0;
    std::int64_t b_count = 0, b_probes = 0;
    double a_rate = 0, b_rate = 0;
    double diff_points = 0;  // 100 * (b_rate - a_rate)
    // Paired: both sides graded the same probes and the counts above are over the probes graded on
    // both sides (a_probes == b_probes == the pairs). a_only counts the pairs where the outcome held
    // on A and not on B, b_only the reverse: McNemar's discordant pairs b and c.
    bool paired = false;
    std::int64_t a_only = 0, b_only = 0;
    CompareTest test = CompareTest::too_few;
    std::optional<double> p_value;  // unadjusted; absent when too few, constant or a mirror
    std::optional<double> holm_p;   // Holm-adjusted over every tested cell
    bool significant = false;       // holm_p < alpha
    // +1 when B is significantly better, -1 when significantly worse, 0 otherwise.
    int verdict() const;
};

struct CompareSideInfo {
    std::vector<std::int64_t> runs;
    std::string system;
    bool end_to_end = false;  // the answer stage was graded in this side's runs
    std::string protocol = "memfail";  // the evaluation protocol of this side's runs
};

struct Comparison {
    CompareOptions options;
    CompareSideInfo a, b;
    // True when both sides graded answers: success means a correct answer. Otherwise success is the
    // memory side only (every evidence fact stored, faithful and retrieved), on both sides alike.
    bool end_to_end = false;
    bool same_datasets = true;  // every compared dataset has the same hash(es) on both sides
    bool paired = false;        // some cell was compared probe by probe (McNemar)
    std::vector<std::string> warnings;
    std::vector<CompareCell> cells;  // by dataset (A's order), k, then outcome
    std::vector<std::string> only_in_a, only_in_b;  // "dataset k=5" cells with no partner
    std::size_t tested() const;
    std::size_t too_few() const;  // cells with fewer than min_probes probes on a side
};

// Compares `runs_a` of `a` with `runs_b` of `b` (a and b may be the same database). Each side's runs
// must be of one system and hold each dataset x k once; otherwise an invalid_input error names the
// runs so the caller can pick one. Unfinished runs are compared as they are (with a warning).
Result<Comparison> compare_runs(store::ResultsDb& a, const std::vector<std::int64_t>& runs_a,
                                store::ResultsDb& b, const std::vector<std::int64_t>& runs_b,
                                const CompareOptions& options = {});

// One row per cell (dataset, k, outcome, both sides' counts and rates, B-A, test, p, Holm p, verdict),
// leaving out failure stages that no probe reached on either side; notes say how to read it. Renders as text, Markdown, CSV or JSON like every report table.
Table comparison_table(const Comparison& comparison);
// One paragraph: where B is better, where worse, and that nothing else is supported.
std::string comparison_summary(const Comparison& comparison);
// The whole comparison as one JSON document with numbers as numbers.
std::string comparison_json(const Comparison& comparison);

// --- the statistics, exposed for tests ---

// Pooled two-proportion z statistic for x2/n2 against x1/n1 (positive when the second is higher);
// 0 when the pooled proportion is 0 or 1 (no variation to test).
double two_proportion_z(std::int64_t x1, std::int64_t n1, std::int64_t x2, std::int64_t n2);
// Two-sided p-value of that z statistic (1 when there is no variation).
double two_proportion_p(std::int64_t x1, std::int64_t n1, std::int64_t x2, std::int64_t n2);
// Two-sided Fisher exact p-value of the 2x2 table [[a, b], [c, d]]: the total probability of the
// tables with the same margins that are no more likely than the observed one.
double fisher_exact_p(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d);
// True when a 2x2 table of x1/n1 and x2/n2 has an expected cell count below 5.
bool needs_exact_test(std::int64_t x1, std::int64_t n1, std::int64_t x2, std::int64_t n2);
// Two-sided exact McNemar p-value for `a_only` pairs where only A had the outcome and `b_only` where
// only B had it: the binomial probability, with n = a_only + b_only and p = 1/2, of a split no more
// even than the observed one, i.e. min(1, 2 * P(X <= min(a_only, b_only))). 1 when n = 0.
double mcnemar_exact_p(std::int64_t a_only, std::int64_t b_only);
// Holm-Bonferroni adjusted p-values, in the input's order (monotone, capped at 1).
std::vector<double> holm_adjust(const std::vector<double>& p_values);

}  // namespace memfail::report
