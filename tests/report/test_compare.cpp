// SPDX-License-Identifier: MIT
// Run comparison: the tests' p-values against hand computations, paired (McNemar) against unpaired
// (z, Fisher) rows, mirror rows kept out of Holm's family, "too few", pairing errors.
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
    // Side B ran other versions of the datasets (other hashes): different probes, so the sides are
    // independent samples and the unpaired tests apply.
    // big: 40/100 vs 60/100 (p 0.0047). edge: 50/100 vs 64/100 (p about 0.047, below 0.05 on its own
    // but not once Holm has counted every tested row), its failures split over two stages so neither
    // mirrors success. tiny: 0/5 vs 5/5, too few probes to test.
    const auto a = add_run(db, "facts", {{"big", 5, {{"retrieved", 40}, {"not_retrieved", 60}}},
                                         {"edge", 5, {{"retrieved", 50}, {"not_stored", 25}, {"not_retrieved", 25}}},
                                         {"tiny", 5, {{"not_stored", 5}}}});
    const auto b = add_run(db, "mem0", {{"big", 5, {{"retrieved", 60}, {"not_retrieved", 40}}, "big-v2"},
                                        {"edge", 5, {{"retrieved", 64}, {"not_stored", 18}, {"not_retrieved", 18}},
                                         "edge-v2"},
                                        {"tiny", 5, {{"retrieved", 5}}, "tiny-v2"}});
    auto result = compare_runs(db, {a}, db, {b});
    ASSERT_TRUE(result.has_value()) << result.error().describe();
    const Comparison& cmp = *result;
    EXPECT_FALSE(cmp.end_to_end);
    EXPECT_FALSE(cmp.same_datasets);
    EXPECT_FALSE(cmp.paired);
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
    EXPECT_FALSE(big->paired);
    // Every big probe that did not succeed failed retrieval, on both sides: that row is success read
    // backwards, shown but not tested a second time.
    const auto* big_retrieval = find_cell(cmp, "big", "not_retrieved");
    ASSERT_NE(big_retrieval, nullptr);
    EXPECT_NEAR(big_retrieval->diff_points, -20.0, 1e-9);
    EXPECT_EQ(big_retrieval->test, CompareTest::mirror);
    EXPECT_FALSE(big_retrieval->p_value.has_value());
    EXPECT_EQ(big_retrieval->verdict(), 0);
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
    // big: success (its not_retrieved row mirrors it); edge: success and its two failure stages.
    EXPECT_EQ(cmp.tested(), 4u);
    EXPECT_EQ(find_cell(cmp, "edge", "not_stored")->test, CompareTest::z_test);
    EXPECT_EQ(find_cell(cmp, "edge", "not_retrieved")->test, CompareTest::z_test);
    // Holm over 4: edge's p (about 0.0455) is third smallest, so it is scaled by 3.
    EXPECT_NEAR(*edge->holm_p, 3 * *edge->p_value, 1e-12);

    // Every tested row's Holm p is at least its own p, and a verdict exactly when Holm p < alpha.
    for (const auto& c : cmp.cells) {
        if (!c.p_value) continue;
        EXPECT_GE(*c.holm_p, *c.p_value);
        EXPECT_EQ(c.significant, *c.holm_p < 0.05);
    }

    const std::string summary = comparison_summary(cmp);
    EXPECT_NE(summary.find("B is better on big k=5 (success +20.0 points)"), std::string::npos) << summary;
    EXPECT_EQ(summary.find("worse"), std::string::npos) << summary;
    EXPECT_NE(summary.find("no supported difference elsewhere"), std::string::npos) << summary;
    EXPECT_NE(summary.find("tiny k=5 has fewer than 20 probes on a side and was not tested"), std::string::npos)
        << summary;

    // Stage rows no probe reached on either side are left out of the table: 15 cells, 7 rows.
    const Table t = comparison_table(cmp);
    ASSERT_EQ(t.rows.size(), 7u);
    int better = 0, too_few = 0, mirrors = 0;
    for (const auto& row : t.rows) {
        better += row.back() == "B better";
        too_few += row.back() == "too few";
        mirrors += row.back() == "mirrors success";
    }
    EXPECT_EQ(better, 1);
    EXPECT_EQ(too_few, 2);
    EXPECT_EQ(mirrors, 1);
}

TEST(Compare, SmallCountsUseFisherAndConstantsAreNotTested) {
    TempResults file("compare-fisher");
    auto db = store::ResultsDb::open(file.path()).value();
    // d differs between the sides (other hash): unpaired. e is the same dataset: paired.
    const auto a = add_run(db, "facts", {{"d", 5, {{"retrieved", 29}, {"not_stored", 1}}},
                                         {"e", 5, {{"retrieved", 30}}}});
    const auto b = add_run(db, "mem0", {{"d", 5, {{"retrieved", 22}, {"not_stored", 8}}, "d-v2"},
                                        {"e", 5, {{"retrieved", 30}}}});
    const auto cmp = compare_runs(db, {a}, db, {b}).value();
    const auto* success = find_cell(cmp, "d", "success");
    ASSERT_NE(success, nullptr);
    EXPECT_EQ(success->test, CompareTest::fisher);  // expected failures per side: 4.5
    EXPECT_NEAR(*success->p_value, fisher_by_hand(29, 1, 22, 8), 1e-10);
    // not_stored is every failure on both sides: the mirror of success, not tested again.
    const auto* storage = find_cell(cmp, "d", "not_stored");
    ASSERT_NE(storage, nullptr);
    EXPECT_EQ(storage->test, CompareTest::mirror);
    EXPECT_FALSE(storage->p_value.has_value());
    const auto* perfect = find_cell(cmp, "e", "success");
    ASSERT_NE(perfect, nullptr);
    EXPECT_TRUE(perfect->paired);
    EXPECT_EQ(perfect->test, CompareTest::constant);  // 100% on both sides: no probe differs
    EXPECT_FALSE(perfect->significant);
    EXPECT_EQ(cmp.tested(), 1u);  // d: success only
}

TEST(Compare, MinProbesAndAlphaAreHonoured) {
    TempResults file("compare-options");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto a = add_run(db, "facts", {{"d", 5, {{"retrieved", 40}, {"not_retrieved", 60}}}});
    const auto b = add_run(db, "mem0", {{"d", 5, {{"retrieved", 60}, {"not_retrieved", 40}}}});
    CompareOptions strict;
    // The same probes on both sides and B wins 20 of them, A none: McNemar p = 2 * 0.5^20, about
    // 1.9e-6 (the only tested row: not_retrieved mirrors success), which does not survive 1e-6.
    strict.alpha = 1e-6;
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

TEST(CompareStats, McNemarIsTheExactBinomialTail) {
    // 9 discordant pairs, all won by one side: 2 * 0.5^9, whichever side won them.
    EXPECT_NEAR(mcnemar_exact_p(0, 9), 0.00390625, 1e-12);
    EXPECT_NEAR(mcnemar_exact_p(9, 0), 0.00390625, 1e-12);
    // 2 against 8: 2 * (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 2 * 56 / 1024.
    EXPECT_NEAR(mcnemar_exact_p(2, 8), 112.0 / 1024.0, 1e-12);
    EXPECT_NEAR(mcnemar_exact_p(8, 2), mcnemar_exact_p(2, 8), 1e-15);
    // 3 against 5: 2 * (1 + 8 + 28 + 56) / 256.
    EXPECT_NEAR(mcnemar_exact_p(3, 5), 2 * 93.0 / 256.0, 1e-12);
    EXPECT_EQ(mcnemar_exact_p(4, 4), 1.0);  // an even split, capped at 1
    EXPECT_EQ(mcnemar_exact_p(0, 0), 1.0);  // no discordant pair
    // Beyond 1000 pairs the tail is summed in logarithms; it must still agree with the normal
    // approximation with continuity correction to a few percent there.
    const double z = (std::fabs(1100.0 - 1000.0) - 1) / std::sqrt(2100.0);
    const double normal = std::erfc(z / std::sqrt(2.0));
    EXPECT_NEAR(mcnemar_exact_p(1000, 1100) / normal, 1.0, 0.05);
    EXPECT_NEAR(mcnemar_exact_p(1100, 1000), mcnemar_exact_p(1000, 1100), 1e-15);
    // And the two paths meet: 1000 pairs (direct) and 1002 (logarithms) differ only a little.
    EXPECT_NEAR(mcnemar_exact_p(450, 550) / mcnemar_exact_p(451, 551), 1.0, 0.05);
}

// Long-Hop at k=5 and 10, 60 probes each: the sides agree on every probe but 9, and B won all 9
// (A: 40 retrieved, B: 49; every other probe failed retrieval on both sides).
std::vector<CellSpec> long_hop(int retrieved, const std::string& hash = "hash-of-long_hop") {
    return {{"long_hop", 5, {{"retrieved", retrieved}, {"not_retrieved", 60 - retrieved}}, hash},
            {"long_hop", 10, {{"retrieved", retrieved}, {"not_retrieved", 60 - retrieved}}, hash}};
}

const CompareCell* find_cell_k(const Comparison& cmp, int k, const std::string& outcome) {
    for (const auto& c : cmp.cells)
        if (c.k == k && c.outcome == outcome) return &c;
    return nullptr;
}

TEST(Compare, SameProbesArePairedAndTestedWithMcNemar) {
    TempResults file("compare-paired");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto a = add_run(db, "facts", long_hop(40));
    const auto b = add_run(db, "mem0", long_hop(49));
    const auto cmp = compare_runs(db, {a}, db, {b}).value();
    EXPECT_TRUE(cmp.same_datasets);
    EXPECT_TRUE(cmp.paired);
    EXPECT_TRUE(cmp.warnings.empty());
    // The family: the two success rows; the not_retrieved rows mirror them and are not tested.
    EXPECT_EQ(cmp.tested(), 2u);
    for (int k : {5, 10}) {
        const auto* success = find_cell_k(cmp, k, "success");
        ASSERT_NE(success, nullptr);
        EXPECT_TRUE(success->paired);
        EXPECT_EQ(success->test, CompareTest::mcnemar);
        EXPECT_EQ(success->a_count, 40);
        EXPECT_EQ(success->b_count, 49);
        EXPECT_EQ(success->a_probes, 60);
        EXPECT_EQ(success->a_only, 0);
        EXPECT_EQ(success->b_only, 9);
        ASSERT_TRUE(success->p_value.has_value());
        EXPECT_NEAR(*success->p_value, 2 * std::pow(0.5, 9), 1e-12);
        EXPECT_NEAR(*success->p_value, 0.00390625, 1e-12);
        // Holm over 2 equal p-values: both scaled by 2, well below 0.05.
        EXPECT_NEAR(*success->holm_p, 0.0078125, 1e-12);
        EXPECT_TRUE(success->significant);
        EXPECT_EQ(success->verdict(), 1);
        const auto* retrieval = find_cell_k(cmp, k, "not_retrieved");
        ASSERT_NE(retrieval, nullptr);
        EXPECT_EQ(retrieval->test, CompareTest::mirror);
        EXPECT_EQ(retrieval->a_only, 9);  // failed retrieval on A only
        EXPECT_EQ(retrieval->b_only, 0);
        EXPECT_FALSE(retrieval->p_value.has_value());
        EXPECT_FALSE(retrieval->holm_p.has_value());
        EXPECT_FALSE(retrieval->significant);
    }
    const std::string summary = comparison_summary(cmp);
    EXPECT_NE(summary.find("B is better on long_hop k=5 (success +15.0 points) and long_hop k=10 (success +15.0 "
                           "points)"),
              std::string::npos)
        << summary;

    const Table t = comparison_table(cmp);
    ASSERT_EQ(t.rows.size(), 4u);  // success and not_retrieved at each k
    EXPECT_EQ(t.rows[0][2], "success");
    EXPECT_EQ(t.rows[0][8], "0/9");
    EXPECT_EQ(t.rows[0][9], "mcnemar");
    EXPECT_EQ(t.rows[0].back(), "B better");
    EXPECT_EQ(t.rows[1][2], "not_retrieved");
    EXPECT_EQ(t.rows[1][8], "9/0");
    EXPECT_EQ(t.rows[1][9], "mirror");
    EXPECT_EQ(t.rows[1].back(), "mirrors success");

    const auto doc = nlohmann::json::parse(comparison_json(cmp));
    EXPECT_EQ(doc["paired"], true);
    const auto& cells = doc["cells"];
    EXPECT_EQ(cells[0]["test"], "mcnemar");
    EXPECT_EQ(cells[0]["paired"], true);
    EXPECT_EQ(cells[0]["discordant"]["a_only"], 0);
    EXPECT_EQ(cells[0]["discordant"]["b_only"], 9);
    EXPECT_EQ(cells[0]["verdict"], "better");
    bool saw_mirror = false;
    for (const auto& c : cells)
        if (c["outcome"] == "not_retrieved") {
            saw_mirror = true;
            EXPECT_EQ(c["test"], "mirror");
            EXPECT_EQ(c["verdict"], "mirror");
            EXPECT_TRUE(c["p_value"].is_null());
        }
    EXPECT_TRUE(saw_mirror);
}

TEST(Compare, DifferentProbesStayUnpaired) {
    TempResults file("compare-unpaired");
    auto db = store::ResultsDb::open(file.path()).value();
    // The same counts, but B ran another version of Long-Hop: independent samples, z-test.
    // 40/60 against 49/60: z about 1.88, p about 0.06, not a supported difference.
    const auto a = add_run(db, "facts", long_hop(40));
    const auto b = add_run(db, "mem0", long_hop(49, "another-long-hop"));
    const auto cmp = compare_runs(db, {a}, db, {b}).value();
    EXPECT_FALSE(cmp.same_datasets);
    EXPECT_FALSE(cmp.paired);
    EXPECT_EQ(cmp.tested(), 2u);  // still only success: the mirror rule holds for unpaired rows too
    for (int k : {5, 10}) {
        const auto* success = find_cell_k(cmp, k, "success");
        ASSERT_NE(success, nullptr);
        EXPECT_FALSE(success->paired);
        EXPECT_EQ(success->test, CompareTest::z_test);
        EXPECT_NEAR(*success->p_value, two_proportion_p(40, 60, 49, 60), 1e-12);
        EXPECT_GT(*success->p_value, 0.05);
        EXPECT_EQ(success->verdict(), 0);
        EXPECT_EQ(find_cell_k(cmp, k, "not_retrieved")->test, CompareTest::mirror);
    }
    const auto doc = nlohmann::json::parse(comparison_json(cmp));
    EXPECT_EQ(doc["cells"][0]["test"], "z");
    EXPECT_TRUE(doc["cells"][0]["discordant"].is_null());
    EXPECT_EQ(comparison_table(cmp).rows[0][8], "-");
}

TEST(Compare, StagesThatDoNotMirrorSuccessAreTestedOnce) {
    TempResults file("compare-stages");
    auto db = store::ResultsDb::open(file.path()).value();
    // Failures split over two stages: neither is the complement of success, so each is tested.
    const auto a = add_run(db, "facts", {{"d", 5, {{"retrieved", 30}, {"not_stored", 10}, {"not_retrieved", 10}}}});
    const auto b = add_run(db, "mem0", {{"d", 5, {{"retrieved", 30}, {"not_stored", 5}, {"not_retrieved", 15}}}});
    const auto cmp = compare_runs(db, {a}, db, {b}).value();
    ASSERT_TRUE(cmp.paired);
    // Fixture order (not_retrieved, not_stored, retrieved): A p0-9 not_retrieved, p10-19 not_stored;
    // B p0-14 not_retrieved, p15-19 not_stored; p20-49 retrieved on both. Success agrees everywhere.
    const auto* success = find_cell(cmp, "d", "success");
    EXPECT_EQ(success->test, CompareTest::constant);
    const auto* storage = find_cell(cmp, "d", "not_stored");
    EXPECT_EQ(storage->test, CompareTest::mcnemar);
    EXPECT_EQ(storage->a_only, 5);  // p10-14
    EXPECT_EQ(storage->b_only, 0);
    EXPECT_NEAR(*storage->p_value, 2 * std::pow(0.5, 5), 1e-12);
    const auto* retrieval = find_cell(cmp, "d", "not_retrieved");
    EXPECT_EQ(retrieval->test, CompareTest::mcnemar);
    EXPECT_EQ(retrieval->b_only, 5);
    EXPECT_EQ(cmp.tested(), 2u);
}

TEST(Compare, ProbesGradedOnOneSideOnlyAreLeftOutOfThePairs) {
    TempResults file("compare-unmatched");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto a = add_run(db, "facts", {{"d", 5, {{"retrieved", 30}}}});
    // p0 ended in error on B: it is no pair, and the 29 others are.
    const auto b = add_run(db, "mem0", {{"d", 5, {{"error", 1}, {"retrieved", 29}}}});
    const auto cmp = compare_runs(db, {a}, db, {b}).value();
    const auto* success = find_cell(cmp, "d", "success");
    ASSERT_NE(success, nullptr);
    EXPECT_TRUE(success->paired);
    EXPECT_EQ(success->a_probes, 29);
    EXPECT_EQ(success->b_probes, 29);
    ASSERT_EQ(cmp.warnings.size(), 1u);
    EXPECT_NE(cmp.warnings[0].find("d k=5: 1 probe graded on one side only"), std::string::npos) << cmp.warnings[0];
}

}  // namespace
}  // namespace memfail::report
