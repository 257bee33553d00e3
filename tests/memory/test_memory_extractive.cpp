// SPDX-License-Identifier: MIT
// The model-backed systems (facts, notes, graph, mixture) end to end against the extractive
// stand-in model (fake-llm with "extractive": true and no rules): each stores what the user said
// with the right source message ids and retrieves the conditional fact for a question about it,
// and every one of their model calls is answered by the stand-in, none by the auto reply.
#include "memory_test_util.hpp"

#include <memfail/core/text.hpp>
#include <memfail/llm/openai_client.hpp>
#include <memfail/memory/memory_system.hpp>

#include <gtest/gtest.h>

#include <cctype>

#include <fake_llm.hpp>

namespace memfail::memory {
namespace {

using nlohmann::json;
using test::ok;

constexpr const char* k_conditional =
    "Mango only barks at the doorbell when she is in the back garden.";

using test::StandIn;

data::Session first_session() {
    return test::session("s1", "2026-03-01T09:00:00Z",
                         {test::user("m1", "Hello! I absolutely love ramen."),
                          test::assistant("m2", "Ramen is a great choice."),
                          test::user("m3", k_conditional)});
}

// The memories holding `phrase`, by their text.
std::vector<Memory> holding(const std::vector<Memory>& memories, const std::string& phrase) {
    std::vector<Memory> out;
    for (const auto& m : memories)
        if (text::contains_phrase(m.text, phrase))
            out.push_back(m);
    return out;
}

class Extractive : public ::testing::TestWithParam<std::string> {};

TEST_P(Extractive, StoresWithProvenanceAndRetrievesTheConditionalFact) {
    StandIn model;
    auto system = ok(make_memory_system(GetParam(), model.context()));
    ok(system->store_conversation(first_session()));

    const auto memories = ok(system->all_memories());
    const auto conditional = holding(memories, "back garden");
    ASSERT_FALSE(conditional.empty()) << GetParam() << " lost the conditional fact";
    for (const auto& m : conditional)
        EXPECT_EQ(m.sources, std::vector<std::string>{"m3"}) << m.id;
    const auto preference = holding(memories, "love ramen");
    ASSERT_FALSE(preference.empty()) << GetParam() << " lost the preference";
    for (const auto& m : preference)
        EXPECT_EQ(m.sources, std::vector<std::string>{"m1"}) << m.id;
    // Every stored memory came from this session's messages.
    for (const auto& m : memories) {
        EXPECT_FALSE(m.sources.empty()) << m.id;
        for (const auto& s : m.sources)
            EXPECT_TRUE(s == "m1" || s == "m2" || s == "m3") << m.id << " cites " << s;
    }

    const auto hits = ok(system->retrieve_memories("When does Mango bark at the doorbell?", {}, 3));
    ASSERT_FALSE(hits.empty());
    bool found = false;
    for (const auto& h : hits)
        found = found || (text::contains_phrase(h.memory.text, "back garden") &&
                          h.memory.sources == std::vector<std::string>{"m3"});
    EXPECT_TRUE(found) << GetParam() << ": top hit was " << hits.front().memory.text;

    // Every model call the system made was answered by the stand-in.
    const json stats = model.server->stats();
    EXPECT_GT(stats["by_rule"].value("extractive", 0), 0);
    EXPECT_FALSE(stats["by_rule"].contains("default")) << stats.dump();
}

// The tuned variants (extract=careful) send other system texts over the same conversation layout,
// so the stand-in answers them too.
INSTANTIATE_TEST_SUITE_P(Systems, Extractive,
                         ::testing::Values("facts", "notes", "graph", "mixture", "facts:extract=careful",
                                           "graph:extract=careful"),
                         [](const auto& info) {
                             std::string name = info.param;
                             for (char& c : name)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return name;
                         });

TEST(ExtractiveFacts, ARepeatedStatementCreditsTheKnownMemoryAndAChangedValueUpdatesIt) {
    StandIn model;
    auto system = ok(make_memory_system("facts", model.context()));
    ok(system->store_conversation(
        test::session("s1", "2026-03-01T09:00:00Z",
                      {test::user("m1", "I absolutely love ramen."),
                       test::user("m2", "I live in Lisbon with my sister.")})));
    ok(system->store_conversation(
        test::session("s2", "2026-03-02T09:00:00Z",
                      {test::user("m3", "I absolutely love ramen."),
                       test::user("m4", "I live in Porto with my sister.")})));
    const auto memories = ok(system->all_memories());
    ASSERT_EQ(memories.size(), 2u);
    EXPECT_EQ(memories[0].text, "I absolutely love ramen.");
    EXPECT_EQ(memories[0].sources, (std::vector<std::string>{"m1", "m3"})); // NONE: also cites m3
    EXPECT_EQ(memories[1].text, "I live in Porto with my sister."); // UPDATE: the newer value
    EXPECT_EQ(memories[1].sources, (std::vector<std::string>{"m2", "m4"}));
    const auto history = ok(system->history(memories[1].id));
    ASSERT_EQ(history.size(), 2u);
    EXPECT_EQ(history[1].event, "update");
    EXPECT_EQ(history[1].old_text, "I live in Lisbon with my sister.");
}

TEST(ExtractiveGraph, AChangedFactInvalidatesTheOlderEdgeBetweenTheSameEntities) {
    StandIn model;
    auto system = ok(make_memory_system("graph", model.context()));
    ok(system->store_conversation(test::session(
        "s1", "2026-03-01T09:00:00Z", {test::user("m1", "Priya works with Tom at the bakery.")})));
    ok(system->store_conversation(test::session(
        "s2", "2026-03-02T09:00:00Z", {test::user("m2", "Priya no longer works with Tom.")})));
    const auto memories = ok(system->all_memories());
    ASSERT_EQ(memories.size(), 1u); // the older edge is invalidated, so not listed
    EXPECT_EQ(memories[0].text, "Priya no longer works with Tom.");
    EXPECT_EQ(memories[0].sources, std::vector<std::string>{"m2"});
}

} // namespace
} // namespace memfail::memory
