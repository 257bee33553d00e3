// SPDX-License-Identifier: MIT
// `datasets generate --set KEY=VALUE` for the MemFail datasets: each setting is read and range
// checked, an unknown key gets a did-you-mean, and the settings reach the generated file.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/suite.hpp>

namespace mf = memfail::suites::memfail_suite;

namespace {

memfail::Result<void> apply(const std::map<std::string, std::string>& params, mf::GenerateOptions& options) {
    return mf::apply_settings(params, options);
}

TEST(GenerateSettings, ReadsEveryPersonaSetting) {
    mf::GenerateOptions o;
    ASSERT_TRUE(apply({{"persona.name_pool", "120"},
                       {"persona.distinct_names", "true"},
                       {"persona.pronoun_share", "0.25"},
                       {"persona.multi_sentence_share", "0"},
                       {"persona.context_share", "1"}},
                      o));
    EXPECT_EQ(o.persona.name_pool, 120U);
    EXPECT_TRUE(o.persona.distinct_names);
    EXPECT_DOUBLE_EQ(o.persona.pronoun_share, 0.25);
    EXPECT_DOUBLE_EQ(o.persona.multi_sentence_share, 0.0);
    EXPECT_DOUBLE_EQ(o.persona.context_share, 1.0);
    mf::GenerateOptions untouched;
    ASSERT_TRUE(apply({}, untouched));
    EXPECT_EQ(untouched.persona.name_pool, mf::PersonaSettings{}.name_pool);
}

TEST(GenerateSettings, ReadsTheLongHopSettings) {
    mf::GenerateOptions o;
    EXPECT_DOUBLE_EQ(o.long_hop.named_share, 0.4);  // the release's share of named chains
    ASSERT_TRUE(apply({{"long_hop.named_share", "0.75"}}, o));
    EXPECT_DOUBLE_EQ(o.long_hop.named_share, 0.75);
    for (const char* bad : {"1.2", "-0.1", "", "half", "nan"}) {
        mf::GenerateOptions b;
        const auto r = apply({{"long_hop.named_share", bad}}, b);
        ASSERT_FALSE(r) << bad;
        EXPECT_NE(r.error().message.find("long_hop.named_share"), std::string::npos) << r.error().message;
    }
    const auto typo = apply({{"long_hop.named_shar", "0.5"}}, o);
    ASSERT_FALSE(typo);
    EXPECT_NE(typo.error().message.find("did you mean 'long_hop.named_share'"), std::string::npos)
        << typo.error().message;
}

TEST(GenerateSettings, RefusesBadValuesNamingTheKey) {
    const std::map<std::string, std::string> bad[] = {
        {{"persona.name_pool", "0"}},        {{"persona.name_pool", "-3"}},
        {{"persona.name_pool", "30x"}},      {{"persona.distinct_names", "yes"}},
        {{"persona.pronoun_share", "1.5"}},  {{"persona.pronoun_share", "nan"}},
        {{"persona.context_share", ""}},     {{"persona.multi_sentence_share", "-0.1"}},
        {{"persona.distinct_names", "true"}},  // the default pool of 30 cannot give 100 distinct names
    };
    for (const auto& params : bad) {
        mf::GenerateOptions o;
        const auto r = apply(params, o);
        ASSERT_FALSE(r) << params.begin()->first << "=" << params.begin()->second;
        EXPECT_NE(r.error().message.find(params.begin()->first), std::string::npos) << r.error().message;
    }
    mf::GenerateOptions o;
    const auto unknown = apply({{"persona.name_pol", "3"}}, o);
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("did you mean 'persona.name_pool'"), std::string::npos)
        << unknown.error().message;
}

TEST(GenerateSettings, TheSuiteAppliesThemAndTheFileRecordsThem) {
    const memfail::suites::Suite* suite = memfail::suites::suite_for_dataset("persona_retrieval");
    ASSERT_NE(suite, nullptr);
    memfail::suites::GenerateOptions options{7, {{"persona.name_pool", "100"}, {"persona.distinct_names", "true"}}};
    auto scenarios = suite->generate("persona_retrieval", options);
    ASSERT_TRUE(scenarios) << scenarios.error().describe();
    const auto& meta = scenarios->at(0).meta;
    ASSERT_TRUE(meta.contains("settings"));
    EXPECT_EQ(meta["settings"]["persona.name_pool"], 100);
    EXPECT_EQ(meta["settings"]["persona.distinct_names"], true);
    // Every other MemFail dataset accepts the Persona settings (so `generate all --set` works).
    EXPECT_TRUE(suite->generate("long_hop", options));
    EXPECT_FALSE(suite->generate("long_hop", {7, {{"long_hop.hops", "2"}}}));
    auto hop = suite->generate("long_hop", {7, {{"long_hop.named_share", "0.25"}}});
    ASSERT_TRUE(hop) << hop.error().describe();
    EXPECT_DOUBLE_EQ(hop->at(0).meta["settings"]["long_hop.named_share"].get<double>(), 0.25);
}

}  // namespace
