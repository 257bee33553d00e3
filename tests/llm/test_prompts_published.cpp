// SPDX-License-Identifier: MIT
// The reference memory systems' prompts (src/memfail/llm/prompts.cpp): by default they follow the
// published designs (Mem0, A-MEM, Graphiti/StructMem) and carry none of the instructions that were
// tuned to this benchmark's traps; PromptStyle::careful brings those tuned texts back, changing only
// the system text, so the schema and the conversation layout (what the extractive stand-in parses)
// stay the same and the stand-in answers both alike.
#include "extractive.hpp"

#include <memfail/core/text.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/llm/schema_check.hpp>

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
namespace prompts = memfail::llm::prompts;
using memfail::llm::ChatMessage;
using memfail::llm::ChatRequest;
using prompts::PromptStyle;

// Words and phrases (ECMAScript regexes, case-insensitive) that steer a model towards this
// benchmark's datasets: keep conditions and exceptions (Conditional-Facts), compatible preferences do
// not conflict (Coexisting-Facts), attribute facts to the right person (Persona-Retrieval), follow
// chains (Long-Hop). "persona" as a word: Mem0's "personal details" is its own category.
const std::vector<std::string> k_primed = {
    "condition", "exception", "qualif", "cancel", "unless", "every detail", "specific detail",
    "coexist", "at once", "same time", "liking one", "instead of pronouns", "on its own",
    "\\bpersonas?\\b", "multi-hop", "chain", "\\bhops?\\b"};

const std::vector<ChatMessage> k_conversation = {
    {"user", "My sister Priya walks Biscuit, but only when it is dry."},
    {"assistant", "That sounds sensible."},
    {"user", "I love ramen."}};

std::string system_text(const ChatRequest& r) {
    EXPECT_FALSE(r.messages.empty());
    EXPECT_EQ(r.messages.at(0).role, "system");
    return r.messages.at(0).content;
}

std::string user_text(const ChatRequest& r) {
    EXPECT_GE(r.messages.size(), 2u);
    return r.messages.back().content;
}

std::vector<std::string> primed_in(const std::string& text) {
    std::vector<std::string> found;
    for (const auto& p : k_primed)
        if (std::regex_search(text, std::regex(p, std::regex::ECMAScript | std::regex::icase))) found.push_back(p);
    return found;
}

json messages_of(const ChatRequest& request) {
    json out = json::array();
    for (const auto& m : request.messages) out.push_back({{"role", m.role}, {"content", m.content}});
    return out;
}

// Every default prompt of a reference system, by name.
std::vector<std::pair<std::string, ChatRequest>> published_prompts() {
    const prompts::NoteView note{"Priya walks Biscuit.", {"Priya", "Biscuit"}, {"pets"}, "A walk."};
    const prompts::GraphEntityView entity{"Priya", "person", {"Priya walks Biscuit."}};
    return {
        {"facts_extract", prompts::facts_extract("m", k_conversation)},
        {"facts_decide", prompts::facts_decide("m", {"User likes sushi."}, {"User loves ramen."})},
        {"notes_write", prompts::notes_write("m", k_conversation[2], k_conversation[1], "2026-03-01T09:00:00Z")},
        {"notes_link", prompts::notes_link("m", note, {note})},
        {"graph_extract", prompts::graph_extract("m", k_conversation)},
        {"graph_resolve", prompts::graph_resolve("m", entity, {entity})},
        {"graph_invalidate",
         prompts::graph_invalidate("m", {"User loves ramen.", "2026-03-02"}, {{"User likes sushi.", "2026-03-01"}})},
    };
}

TEST(PublishedPrompts, TheDefaultsCarryNoInstructionAimedAtTheBenchmark) {
    for (const auto& [name, request] : published_prompts()) {
        EXPECT_EQ(primed_in(system_text(request)), std::vector<std::string>{}) << name << ": " << system_text(request);
    }
    // The mixture's router must name its "conditional" kind (the schema's enum), but nothing more.
    const std::string router = system_text(prompts::mixture_route("m", k_conversation, 60));
    for (const std::string word : {"exception", "unless", "qualif", "cancel", "persona", "chain"})
        EXPECT_EQ(memfail::text::to_lower(router).find(word), std::string::npos) << word << ": " << router;
}

TEST(PublishedPrompts, TheDefaultsDescribeThePublishedDesigns) {
    const auto has = [](const ChatRequest& r, const std::string& phrase) {
        return system_text(r).find(phrase) != std::string::npos;
    };
    // Mem0: categories of personal information; the four update operations.
    const ChatRequest extract = prompts::facts_extract("m", k_conversation);
    EXPECT_TRUE(has(extract, "like and dislike") && has(extract, "plans and intentions")) << system_text(extract);
    const ChatRequest decide = prompts::facts_decide("m", {}, {"x"});
    for (const char* op : {"ADD:", "UPDATE:", "DELETE:", "NONE:"}) EXPECT_TRUE(has(decide, op)) << op;
    EXPECT_TRUE(has(decide, "contradicts")) << system_text(decide);
    // A-MEM: note attributes, links, evolution of neighbours.
    const ChatRequest write = prompts::notes_write("m", k_conversation[0], {}, "");
    for (const char* field : {"content:", "keywords:", "tags:", "context:"}) EXPECT_TRUE(has(write, field)) << field;
    const prompts::NoteView note{"n", {}, {}, ""};
    EXPECT_TRUE(has(prompts::notes_link("m", note, {note}), "evolves"));
    // Graphiti: the speaker is an entity; contradicted edges are closed.
    EXPECT_TRUE(has(prompts::graph_extract("m", k_conversation), "speaker"));
    EXPECT_TRUE(has(prompts::graph_invalidate("m", {"a", "t"}, {{"b", "t"}}), "contradicts"));
}

TEST(PublishedPrompts, CarefulBringsBackTheTunedTextsAndChangesNothingElse) {
    const std::vector<std::tuple<std::string, ChatRequest, ChatRequest, std::string>> pairs = {
        {"facts_extract", prompts::facts_extract("m", k_conversation),
         prompts::facts_extract("m", k_conversation, PromptStyle::careful), "Keep every qualifying detail"},
        {"facts_decide", prompts::facts_decide("m", {"User likes sushi."}, {"User loves ramen."}),
         prompts::facts_decide("m", {"User likes sushi."}, {"User loves ramen."}, PromptStyle::careful),
         "liking one thing does not cancel liking another"},
        {"graph_extract", prompts::graph_extract("m", k_conversation),
         prompts::graph_extract("m", k_conversation, PromptStyle::careful), "every condition, exception"},
        {"graph_invalidate", prompts::graph_invalidate("m", {"a", "t2"}, {{"b", "t1"}}),
         prompts::graph_invalidate("m", {"a", "t2"}, {{"b", "t1"}}, PromptStyle::careful),
         "does not cancel liking another"},
    };
    for (const auto& [name, published, careful, phrase] : pairs) {
        EXPECT_NE(system_text(careful).find(phrase), std::string::npos) << name << ": " << system_text(careful);
        EXPECT_EQ(system_text(published).find(phrase), std::string::npos) << name;
        EXPECT_NE(primed_in(system_text(careful)), std::vector<std::string>{}) << name;
        // Only the system text differs: same schema, stage, role and conversation.
        ASSERT_TRUE(published.schema && careful.schema) << name;
        EXPECT_EQ(published.schema->name, careful.schema->name) << name;
        EXPECT_EQ(published.schema->schema, careful.schema->schema) << name;
        EXPECT_EQ(published.stage, careful.stage) << name;
        EXPECT_EQ(published.role, careful.role) << name;
        EXPECT_EQ(user_text(published), user_text(careful)) << name;
        // The stand-in reads only the conversation, so it answers both styles alike and validly.
        const auto a = memfail::fake_llm::extractive_reply(published.schema->name, messages_of(published));
        const auto b = memfail::fake_llm::extractive_reply(careful.schema->name, messages_of(careful));
        ASSERT_TRUE(a && b) << name;
        EXPECT_EQ(*a, *b) << name;
        EXPECT_FALSE(memfail::llm::validate(*a, published.schema->schema).has_value()) << name;
    }
    EXPECT_STREQ(prompts::prompt_style_name(PromptStyle::published), "published");
    EXPECT_STREQ(prompts::prompt_style_name(PromptStyle::careful), "careful");
}

TEST(PublishedPrompts, TheStandInStillFindsWhatItParses) {
    // The extractive stand-in parses these markers of the conversation layout; a published prompt
    // that lost one would leave the offline systems with nothing stored.
    EXPECT_NE(user_text(prompts::facts_extract("m", k_conversation)).find("CONVERSATION:\n[1] (user) "), std::string::npos);
    const std::string decide = user_text(prompts::facts_decide("m", {"a"}, {"b"}));
    EXPECT_NE(decide.find("EXISTING MEMORIES:\n0. a\n"), std::string::npos) << decide;
    EXPECT_NE(decide.find("\nNEW FACTS:\n(1) b\n"), std::string::npos) << decide;
    const auto facts = memfail::fake_llm::extractive_reply(
        prompts::k_facts_extract_schema, messages_of(prompts::facts_extract("m", k_conversation)));
    ASSERT_TRUE(facts.has_value());
    EXPECT_FALSE((*facts)["facts"].empty()) << facts->dump();
    const auto graph = memfail::fake_llm::extractive_reply(
        prompts::k_graph_extract_schema, messages_of(prompts::graph_extract("m", k_conversation)));
    ASSERT_TRUE(graph.has_value());
    EXPECT_FALSE((*graph)["relations"].empty()) << graph->dump();
}

TEST(PublishedPrompts, TheVersionMovedWithTheTexts) {
    // prompts/1 held the tuned texts as the defaults; prompts/3 dates the test-taker's memories and
    // questions. Runs and the call cache record the version.
    EXPECT_STREQ(prompts::k_prompt_version, "prompts/3");
}

}  // namespace
