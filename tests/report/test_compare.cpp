// SPDX-License-Identifier: MIT
// Run comparison: the tests' p-values against hand computations, Holm, "too few", pairing errors.
#include <memfail/report/compare.hpp>

#include <cmath>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "results_fixture.hpp"

namespace memfail::report {
namespace {

using testing::add_run;
using testing::CellSpec;
using testing::TempResults;

// Binomial coefficient by the multiplicative formula (exact for the small tables used here).
double choose(int n, int k) {
    double out = 1;
    for (int i = 1; i <= k; ++i) out = out * (n - k + i) / i;
    return out;
}

// Two-sided Fisher p by enumerating every table with the observed margins, written independently of
// the implementation (plain probabilities, no logarithms).
double fisher_by_hand(int a, int b, int c, int d) {
    const int row1 = a + b, row2 = c + d, col1 = a + c, n = row1 + row2;
    auto prob = [&](int x) { return choose(row1, x) * choose(row2, col1 - x) / choose(n, col1); };
    const double observed = prob(a);
    double p = 0;
    for (int x = std::max(0, col1 - row2); x <= std::min(row1, col1); ++x)
        if (prob(x) <= observed * (1 + 1e-9)) p += prob(x);
    return p;
}

TEST(CompareStats, TwoProportionZMatchesFormula) {
    // 40/100 vs 60/100: pooled p = 0.5, se = sqrt(0.5 * 0.5 * (1/100 + 1/100)).
    const double se = std::sqrt(0.25 * 0.02);
    const double z = 0.2 / se;
    EXPECT_NEAR(two_proportion_z(40, 100, 60, 100), z, 1e-12);
    EXPECT_NEAR(z, 2.8284, 1e-4);
    // Two-sided normal tail: 2 * (1 - Phi(|z|)), Phi by its erf identity.
    const double phi = 0.5 * (1 + std::erf(z / std::sqrt(2.0)));
    EXPECT_NEAR(two_proportion_p(40, 100, 60, 100), 2 * (1 - phi), 1e-9);
    EXPECT_NEAR(two_proportion_p(40, 100, 60, 100), 0.00468, 1e-5);
    // Symmetric: the order of the sides flips z, not p.
    EXPECT_NEAR(two_proportion_z(60, 100, 40, 100), -z, 1e-12);
    EXPECT_NEAR(two_proportion_p(60, 100, 40, 100), two_proportion_p(40, 100, 60, 100), 1e-12);
    // No variation (everyone failed on both sides): nothing to test.
    EXPECT_EQ(two_proportion_p(0, 50, 0, 50), 1.0);
}

TEST(CompareStats, FisherEqualsHypergeometricSum) {
    // [[3, 1], [1, 3]]: margins 4/4, P(x) = C(4,x)^2 / 70; tables no likelier than x=3 are 0, 1, 3, 4.
    EXPECT_NEAR(fisher_exact_p(3, 1, 1, 3), (1 + 16 + 16 + 1) / 70.0, 1e-12);
    EXPECT_NEAR(fisher_exact_p(3, 1, 1, 3), fisher_by_hand(3, 1, 1, 3), 1e-12);
    // Asymmetric margins and a one-sided tail.
    EXPECT_NEAR(fisher_exact_p(1, 9, 11, 3), fisher_by_hand(1, 9, 11, 3), 1e-10);
    EXPECT_NEAR(fisher_exact_p(2, 18, 9, 11), fisher_by_hand(2, 18, 9, 11), 1e-10);
    EXPECT_LT(fisher_exact_p(0, 20, 6, 14), 0.05);
    EXPECT_NEAR(fisher_exact_p(0, 20, 0, 20), 1.0, 1e-12);
}

TEST(CompareStats, ExactTestChosenForSmallExpectedCounts) {
    EXPECT_FALSE(needs_exact_test(40, 100, 60, 100));
    // 2 and 3 successes of 40 each: expected successes 2.5 per side.
    EXPECT_TRUE(needs_exact_test(2, 40, 3, 40));
    EXPECT_TRUE(needs_exact_test(0, 30, 0, 30));
}

TEST(CompareStats, HolmAdjustsStepDown) {
    // Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> kept monotone at 0.06.
    const auto adjusted = holm_adjust({0.01, 0.04, 0.03, 0.005});
    ASSERT_EQ(adjusted.size(), 4u);
    EXPECT_NEAR(adjusted[0], 0.03, 1e-12);
    EXPECT_NEAR(adjusted[1], 0.06, 1e-12);
    EXPECT_NEAR(adjusted[2], 0.06, 1e-12);
    EXPECT_NEAR(adjusted[3], 0.02, 1e-12);
    EXPECT_NEAR(holm_adjust({0.6, 0.9})[1], 1.0, 1e-12);  // capped at 1
    EXPECT_TRUE(holm_adjust({}).empty());
}

const CompareCell* find_cell(const Comparison& cmp, const std::string& dataset, const std::string& outcome) {
    for (const auto& c : cmp.cells)
        if (c.dataset == dataset && c.outcome == outcome) return &c;
    return nullptr;
}

TEST(Compare, KnownCountsGiveKnownVerdicts) {
    TempResults file("compare-known");
    auto db = store::ResultsDb::open(file.path()).value();
    // big: 40/100 vs 60/100 (p 0.0047). edge: 50/100 vs 64/100 (p about 0.047, below 0.05 on its own
    // but not once Holm has counted every tested row). tiny: 0/5 vs 5/5, too few probes to test.
    const auto a = add_run(db, "facts", {{"big", 5, {{"retrieved", 40}, {"not_retrieved", 60}}},
                                         {"edge", 5, {{"retrieved", 50}, {"not_stored", 50}}},
                                         {"tiny", 5, {{"not_stored", 5}}}});
    const auto b = add_run(db, "mem0", {{"big", 5, {{"retrieved", 60}, {"not_retrieved", 40}}},
                                        {"edge", 5, {{"retrieved", 64}, {"not_stored", 36}}},
                                        {"tiny", 5, {{"retrieved", 5}}}});
    auto result = compare_runs(db, {a}, db, {b});
    ASSERT_TRUE(result.has_value()) << result.error().describe();
    const Comparison& cmp = *result;
    EXPECT_FALSE(cmp.end_to_end);
    EXPECT_TRUE(cmp.same_datasets);
    EXPECT_EQ(cmp.a.system, "facts");
    EXPECT_EQ(cmp.b.system, "mem0");

    const auto* big = find_cell(cmp, "big", "success");
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(big->a_count, 40);
    EXPECT_EQ(big->b_probes, 100);
    EXPECT_NEAR(big->diff_points, 20.0, 1e-9);
    EXPECT_EQ(big->test, CompareTest::z_test);
    ASSERT_TRUE(big->p_value.has_value());
    EXPECT_NEAR(*big->p_value, std::erfc(0.2 / std::sqrt(0.005) / std::sqrt(2.0)), 1e-9);
    EXPECT_TRUE(big->significant);
    EXPECT_EQ(big->verdict(), 1);
    // Fewer probes failing retrieval is better for B.
    const auto* big_retrieval = find_cell(cmp, "big", "not_retrieved");
    ASSERT_NE(big_retrieval, nullptr);
    EXPECT_NEAR(big_retrieval->diff_points, -20.0, 1e-9);
    EXPECT_EQ(big_retrieval->verdict(), 1);
    // No probe not stored on either side: nothing to test, and not counted in Holm's family.
    const auto* big_storage = find_cell(cmp, "big", "not_stored");
    ASSERT_NE(big_storage, nullptr);
    EXPECT_EQ(big_storage->test, CompareTest::constant);
    EXPECT_FALSE(big_storage->p_value.has_value());

    const auto* edge = find_cell(cmp, "edge", "success");
    ASSERT_NE(edge, nullptr);
    ASSERT_TRUE(edge->p_value.has_value());
    EXPECT_LT(*edge->p_value, 0.05);
    EXPECT_GE(*edge->holm_p, 0.05);
    EXPECT_FALSE(edge->significant);
    EXPECT_EQ(edge->verdict(), 0);

    for (const auto& c : cmp.cells) {
        if (c.dataset != "tiny") continue;
        EXPECT_EQ(c.test, CompareTest::too_few);
        EXPECT_FALSE(c.p_value.has_value());
        EXPECT_FALSE(c.significant);
    }
    EXPECT_EQ(cmp.too_few(), 5u);  // tiny: success and the four failure stages
    EXPECT_EQ(cmp.tested(), 4u);  // big and edge: success and the one stage that moved
    // Holm over 4: edge's p (about 0.0455) is second largest, so it is scaled by 2.
    EXPECT_NEAR(*edge->holm_p, 2 * *edge->p_value, 1e-12);

    // Every tested row's Holm p is at least its own p, and a verdict exactly when Holm p < alpha.
    for (const auto& c : cmp.cells) {
        if (!c.p_value) continue;
        EXPECT_GE(*c.holm_p, *c.p_value);
        EXPECT_EQ(c.significant, *c.holm_p < 0.05);
    }

    const std::string summary = comparison_summary(cmp);
    EXPECT_NE(summary.find("B is better on big k=5 (success +20.0 points, not_retrieved -20.0 points)"),
              std::string::npos) << summary;
    EXPECT_EQ(summary.find("worse"), std::string::npos) << summary;
    EXPECT_NE(summary.find("no supported difference elsewhere"), std::string::npos) << summary;
    EXPECT_NE(summary.find("tiny k=5 has fewer than 20 probes on a side and was not tested"), std::string::npos)
        << summary;

    // Stage rows no probe reached on either side are left out of the table: 12 cells, 6 rows.
    const Table t = comparison_table(cmp);
    ASSERT_EQ(t.rows.size(), 6u);
    int better = 0, too_few = 0;
    for (const auto& row : t.rows) {
        better += row.back() == "B better";
        too_few += row.back() == "too few";
    }
    EXPECT_EQ(better, 2);
    EXPECT_EQ(too_few, 2);
}

TEST(Compare, SmallCountsUseFisherAndConstantsAreNotTested) {
    TempResults file("compare-fisher");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto a = add_run(db, "facts", {{"d", 5, {{"retrieved", 29}, {"not_stored", 1}}},
                                         {"e", 5, {{"retrieved", 30}}}});
    const auto b = add_run(db, "mem0", {{"d", 5, {{"retrieved", 22}, {"not_stored", 8}}},
                                        {"e", 5, {{"retrieved", 30}}}});
    const auto cmp = compare_runs(db, {a}, db, {b}).value();
    const auto* storage = find_cell(cmp, "d", "not_stored");
    ASSERT_NE(storage, nullptr);
    EXPECT_EQ(storage->test, CompareTest::fisher);  // expected not_stored per side: 4.5
    EXPECT_NEAR(*storage->p_value, fisher_by_hand(1, 29, 8, 22), 1e-10);
    const auto* perfect = find_cell(cmp, "e", "success");
    ASSERT_NE(perfect, nullptr);
    EXPECT_EQ(perfect->test, CompareTest::constant);  // 100% on both sides
    EXPECT_FALSE(perfect->significant);
    EXPECT_EQ(cmp.tested(), 2u);  // d: success and not_stored
}

TEST(Compare, MinProbesAndAlphaAreHonoured) {
    TempResults file("compare-options");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto a = add_run(db, "facts", {{"d", 5, {{"retrieved", 40}, {"not_retrieved", 60}}}});
    const auto b = add_run(db, "mem0", {{"d", 5, {{"retrieved", 60}, {"not_retrieved", 40}}}});
    CompareOptions strict;
    strict.alpha = 0.001;  // p 0.0047 does not survive
    auto cmp = compare_runs(db, {a}, db, {b}, strict).value();
    EXPECT_EQ(find_cell(cmp, "d", "success")->verdict(), 0);
    EXPECT_NE(comparison_summary(cmp).find("no difference is supported"), std::string::npos);
    CompareOptions large;
    large.min_probes = 101;
    cmp = compare_runs(db, {a}, db, {b}, large).value();
    EXPECT_EQ(cmp.tested(), 0u);
    EXPECT_NE(comparison_summary(cmp).find("no cell had the 101 probes"), std::string::npos);
    CompareOptions bad;
    bad.alpha = 1.5;
    EXPECT_FALSE(compare_runs(db, {a}, db, {b}, bad).has_value());
}

TEST(Compare, EndToEndWhenBothSidesGradedAnswers) {
    TempResults file("compare-e2e");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto a = add_run(db, "facts", {{"d", 1, {{"correct", 30}, {"reasoning_error", 10}, {"not_stored", 10}}}});
    const auto b = add_run(db, "mem0", {{"d", 1, {{"correct", 45}, {"reasoning_error", 5}}}});
    const auto m = add_run(db, "graph", {{"d", 1, {{"retrieved", 45}, {"not_stored", 5}}}});
    auto both = compare_runs(db, {a}, db, {b}).value();
    EXPECT_TRUE(both.end_to_end);
    ASSERT_NE(find_cell(both, "d", "reasoning_error"), nullptr);
    EXPECT_EQ(find_cell(both, "d", "success")->a_count, 30);
    EXPECT_EQ(find_cell(both, "d", "success")->a_probes, 50);
    // Answers graded on one side only: both compared on the memory side, with a warning.
    auto mixed = compare_runs(db, {a}, db, {m}).value();
    EXPECT_FALSE(mixed.end_to_end);
    EXPECT_EQ(find_cell(mixed, "d", "reasoning_error"), nullptr);
    EXPECT_EQ(find_cell(mixed, "d", "success")->a_count, 40);  // correct + reasoning_error passed memory
    ASSERT_FALSE(mixed.warnings.empty());
    EXPECT_NE(mixed.warnings[0].find("graded on side A only"), std::string::npos);
}

TEST(Compare, DifferentDatasetHashesWarn) {
    TempResults file("compare-hash");
    auto db = store::ResultsDb::open(file.path()).value();
    CellSpec first{"d", 5, {{"retrieved", 30}}};
    CellSpec second = first;
    second.hash = "another-hash-entirely";
    const auto a = add_run(db, "facts", {first});
    const auto b = add_run(db, "facts", {second});
    auto cmp = compare_runs(db, {a}, db, {b}).value();
    EXPECT_FALSE(cmp.same_datasets);
    ASSERT_EQ(cmp.warnings.size(), 1u);
    EXPECT_NE(cmp.warnings[0].find("dataset d differs"), std::string::npos) << cmp.warnings[0];
    EXPECT_NE(comparison_summary(cmp).find("datasets differ"), std::string::npos);
    const auto same = add_run(db, "facts", {first});
    EXPECT_TRUE(compare_runs(db, {a}, db, {same}).value().same_datasets);
}

TEST(Compare, RefusesASideMixingSystems) {
    TempResults file("compare-mixed");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto a1 = add_run(db, "facts", {{"d", 5, {{"retrieved", 30}}}});
    const auto a2 = add_run(db, "graph", {{"e", 5, {{"retrieved", 30}}}});
    const auto b = add_run(db, "mem0", {{"d", 5, {{"retrieved", 30}}}});
    auto result = compare_runs(db, {a1, a2}, db, {b});
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().kind, ErrorKind::invalid_input);
    const std::string message = result.error().message;
    EXPECT_NE(message.find("side A"), std::string::npos) << message;
    EXPECT_NE(message.find("facts (run " + std::to_string(a1) + ")"), std::string::npos) << message;
    EXPECT_NE(message.find("graph (run " + std::to_string(a2) + ")"), std::string::npos) << message;
}

TEST(Compare, SameSystemRunsJoinUnlessTheyOverlap) {
    TempResults file("compare-join");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto a1 = add_run(db, "facts", {{"d", 5, {{"retrieved", 30}}}});
    const auto a2 = add_run(db, "facts", {{"e", 5, {{"retrieved", 30}}}});
    const auto a3 = add_run(db, "facts", {{"d", 5, {{"retrieved", 20}}}});
    const auto b = add_run(db, "mem0", {{"d", 5, {{"retrieved", 30}}}, {"f", 1, {{"retrieved", 3}}}});
    auto joined = compare_runs(db, {a1, a2}, db, {b}).value();
    EXPECT_EQ(joined.only_in_a, std::vector<std::string>{"e k=5"});
    EXPECT_EQ(joined.only_in_b, std::vector<std::string>{"f k=1"});
    EXPECT_NE(find_cell(joined, "d", "success"), nullptr);
    auto overlap = compare_runs(db, {a1, a3}, db, {b});
    ASSERT_FALSE(overlap.has_value());
    EXPECT_NE(overlap.error().message.find("dataset d at k=5 in both run"), std::string::npos);
}

TEST(Compare, JsonHasNumbers) {
    TempResults file("compare-json");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto a = add_run(db, "facts", {{"d", 5, {{"retrieved", 40}, {"not_retrieved", 60}}}});
    const auto b = add_run(db, "mem0", {{"d", 5, {{"retrieved", 60}, {"not_retrieved", 40}}}}, false);
    const auto cmp = compare_runs(db, {a}, db, {b}).value();
    EXPECT_NE(cmp.warnings.at(0).find("not finished"), std::string::npos);
    const auto doc = nlohmann::json::parse(comparison_json(cmp));
    EXPECT_EQ(doc["b"]["system"], "mem0");
    const auto& cells = doc["cells"];
    ASSERT_EQ(cells.size(), cmp.cells.size());
    EXPECT_TRUE(cells[0]["p_value"].is_number());
    EXPECT_TRUE(cells[0]["a"]["rate"].is_number_float());
    EXPECT_EQ(cells[0]["outcome"], "success");
    EXPECT_EQ(cells[0]["verdict"], "better");
    EXPECT_NEAR(cells[0]["diff_points"].get<double>(), 20.0, 1e-9);
}

}  // namespace
}  // namespace memfail::report
