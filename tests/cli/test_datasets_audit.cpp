// SPDX-License-Identifier: MIT
// `memfail datasets audit` through the real binary: exit 1 on data over a threshold and 0 under,
// the same report as JSON, exit 2 naming the file and line of bad input, and the release-shaped
// fixture imported and audited, alone and as the reference. The strategies' figures are checked in
// tests/suites/test_dataset_audit.cpp.
#include "../suites/audit_test_data.hpp"
#include "cli_test_util.hpp"

#include <memfail/data/jsonl.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace memfail {
namespace {

namespace fs = std::filesystem;
namespace t = memfail::testing::audit;

using testing::Ran;
using testing::slurp;

class DatasetsAudit : public testing::CliTest {
protected:
    DatasetsAudit() : CliTest("memfail-cli-audit") {}
    // A folder holding `scenarios`, one <dataset>.jsonl each, as `datasets generate` writes them.
    std::string folder(const std::string& name, const std::vector<data::Scenario>& scenarios) {
        const fs::path dir = m_dir / name;
        fs::create_directories(dir);
        for (const auto& s : scenarios)
            EXPECT_TRUE(data::write_jsonl((dir / (s.dataset + ".jsonl")).string(), {s}).has_value());
        return dir.string();
    }
};

TEST_F(DatasetsAudit, ExitsOneOverAThresholdAndZeroUnder) {
    // Two seeds' worth of yes/no questions that say "just" exactly when the answer is yes.
    const std::string a = folder("tell-a", {t::just_tell("conditional_facts_easy", 5)});
    const std::string b = folder("tell-b", {t::just_tell("conditional_facts_easy", 5, "Ulla")});
    const Ran over = memfail("datasets audit " + a + " " + b);
    EXPECT_EQ(over.code, 1) << over.out << over.err;
    EXPECT_NE(over.out.find("question-only words (other inputs)"), std::string::npos) << over.out;
    EXPECT_NE(over.out.find("FAIL  question-only words <= 60.0%"), std::string::npos) << over.out;
    EXPECT_NE(over.out.find("audit: FAIL (1 of 5 thresholds missed)"), std::string::npos) << over.out;

    const std::string clean = folder("clean", {t::no_tell("conditional_facts_hard", 5)});
    const Ran under = memfail("datasets audit " + clean);
    EXPECT_EQ(under.code, 0) << under.out << under.err;
    EXPECT_NE(under.out.find("PASS  question-only words <= 60.0%"), std::string::npos) << under.out;
    EXPECT_NE(under.out.find("audit: PASS"), std::string::npos) << under.out;

    // A file given alone is an input too.
    const Ran file = memfail("datasets audit " + a + "/conditional_facts_easy.jsonl");
    EXPECT_EQ(file.code, 1) << file.out << file.err;
}

TEST_F(DatasetsAudit, JsonSaysTheSame) {
    const std::string a = folder("tell", {t::just_tell("conditional_facts_easy", 5)});
    const Ran ran = memfail("datasets audit " + a + " --format json");
    ASSERT_EQ(ran.code, 1) << ran.err;
    const auto j = nlohmann::json::parse(ran.out);
    EXPECT_FALSE(j["passed"].get<bool>());
    ASSERT_EQ(j["datasets"].size(), 1u);
    const auto& strategies = j["datasets"][0]["strategies"];
    ASSERT_FALSE(strategies.empty());
    EXPECT_EQ(strategies[0]["strategy"], "question_only_within");
    EXPECT_DOUBLE_EQ(strategies[0]["inputs"][0]["value"].get<double>(), 100.0);
    EXPECT_DOUBLE_EQ(strategies[0]["inputs"][0]["chance"].get<double>(), 50.0);
    EXPECT_EQ(strategies[0]["inputs"][0]["n"], 10);
    EXPECT_FALSE(j["verdicts"][0]["passed"].get<bool>());
}

TEST_F(DatasetsAudit, BadInputExitsTwoNamingTheFileAndLine) {
    const std::string dir = folder("bad", {t::no_tell("conditional_facts_hard", 2)});
    {
        std::ofstream out(dir + "/conditional_facts_hard.jsonl", std::ios::app);
        out << "{not json\n";
    }
    const Ran broken = memfail("datasets audit " + dir);
    EXPECT_EQ(broken.code, 2) << broken.out;
    EXPECT_NE(broken.err.find(dir + "/conditional_facts_hard.jsonl:2"), std::string::npos) << broken.err;

    data::Scenario s = t::no_tell("conditional_facts_easy", 2);
    s.probes[3].answer = "Perhaps.";
    s.probes[3].meta.erase("condition_met");
    const std::string unreadable = folder("unreadable", {s});
    const Ran probe = memfail("datasets audit " + unreadable);
    EXPECT_EQ(probe.code, 2) << probe.out;
    EXPECT_NE(probe.err.find(unreadable + "/conditional_facts_easy.jsonl:1: probes[3].answer (cf-0004)"), std::string::npos)
        << probe.err;

    const Ran missing = memfail("datasets audit " + (m_dir / "nowhere").string());
    EXPECT_EQ(missing.code, 2);
    EXPECT_NE(missing.err.find("no such dataset file or folder"), std::string::npos) << missing.err;
    fs::create_directories(m_dir / "empty");
    const Ran empty = memfail("datasets audit " + (m_dir / "empty").string());
    EXPECT_EQ(empty.code, 2);
    EXPECT_NE(empty.err.find("no *.jsonl dataset file in this folder"), std::string::npos) << empty.err;
    const Ran no_files = memfail("datasets audit");
    EXPECT_EQ(no_files.code, 2);
}

TEST_F(DatasetsAudit, TheImportedReleaseShapedFixtureIsAuditedAndServesAsTheReference) {
    const fs::path release = m_dir / "release";
    const Ran imported = memfail("datasets import --from memfail-csv " + std::string(MEMFAIL_TEST_FIXTURES) +
                                 "/memfail-csv-release --out " + release.string());
    ASSERT_EQ(imported.code, 0) << imported.err;

    // Alone: every dataset gets its table; its Easy rules say "he" (1 of 6 names the person).
    const Ran alone = memfail("datasets audit " + release.string() + " --format json");
    EXPECT_EQ(alone.code, 1) << alone.err;
    const auto j = nlohmann::json::parse(alone.out);
    std::vector<std::string> datasets;
    for (const auto& d : j["datasets"]) datasets.push_back(d["dataset"]);
    EXPECT_EQ(datasets, (std::vector<std::string>{"conditional_facts_easy", "conditional_facts_hard", "persona_retrieval",
                                                  "long_hop", "coexisting_facts"}));
    for (const auto& v : j["verdicts"]) EXPECT_EQ(v["passed"].get<bool>(), v["name"] != "easy_rules_named") << v.dump();

    // As the reference, beside clean data: printed, never judged.
    const std::string clean = folder("clean", {t::no_tell("conditional_facts_hard", 5)});
    const Ran beside = memfail("datasets audit " + clean + " --against " + release.string());
    EXPECT_EQ(beside.code, 0) << beside.out << beside.err;
    EXPECT_NE(beside.out.find("reference: " + release.string()), std::string::npos) << beside.out;
    EXPECT_NE(beside.out.find("50.0 (chance 50.0, n 4)"), std::string::npos) << beside.out;  // Hard, leave-one-out
    EXPECT_NE(beside.out.find("conditional_facts_easy is in the reference only"), std::string::npos) << beside.out;
    // The reference given file by file reads the same.
    const Ran files = memfail("datasets audit " + clean + " --against " + (release / "conditional_facts_hard.jsonl").string() +
                              " --against " + (release / "long_hop.jsonl").string());
    EXPECT_EQ(files.code, 0) << files.err;
    EXPECT_NE(files.out.find("50.0 (chance 50.0, n 4)"), std::string::npos) << files.out;
}

}  // namespace
}  // namespace memfail
