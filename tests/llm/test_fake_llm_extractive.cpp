// SPDX-License-Identifier: MIT
// The extractive stand-in (tools/fake-llm/extractive.hpp): for each memory-system prompt, built by
// the real prompt functions, the reply validates against the request's own schema and holds the
// facts, decisions, notes, entities and relations the rules promise; replies are deterministic; and
// the server answers with it when a script says "extractive": true and no rule matches.
#include "extractive.hpp"
#include "fake_llm.hpp"

#include <memfail/llm/openai_client.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/llm/schema_check.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using memfail::fake_llm::extractive_reply;
using nlohmann::json;
namespace prompts = memfail::llm::prompts;
using memfail::llm::ChatMessage;
using memfail::llm::ChatRequest;

json messages_of(const ChatRequest& request) {
    json out = json::array();
    for (const auto& m : request.messages)
        out.push_back({{"role", m.role}, {"content", m.content}});
    return out;
}

// The stand-in's reply to a request, checked against the request's schema.
json reply_to(const ChatRequest& request) {
    EXPECT_TRUE(request.schema.has_value());
    const auto reply = extractive_reply(request.schema->name, messages_of(request));
    if (!reply) {
        ADD_FAILURE() << "no reply for " << request.schema->name;
        return json::object();
    }
    const auto problem = memfail::llm::validate(*reply, request.schema->schema);
    EXPECT_FALSE(problem.has_value())
        << request.schema->name << ": " << problem.value_or("") << "\n"
        << reply->dump(2);
    return *reply;
}

std::vector<std::string> fact_texts(const json& reply) {
    std::vector<std::string> out;
    for (const auto& f : reply["facts"])
        out.push_back(f["text"].get<std::string>());
    return out;
}

bool has(const std::vector<std::string>& items, const std::string& item) {
    return std::find(items.begin(), items.end(), item) != items.end();
}

TEST(Extractive, FactsExtractKeepsStatementsOfTheUserAndCitesTheirMessages) {
    const std::vector<ChatMessage> conversation = {
        {"user", "Hi there! I'm allergic to peanuts. My sister Priya lives in Lisbon. What should "
                 "I cook tonight?"},
        {"assistant", "Something without peanuts sounds wise."},
        {"user", "Thanks! If it rains, I take the bus to work.\nMy sister Priya lives in Lisbon."}};
    const json reply = reply_to(prompts::facts_extract("m", conversation));
    const auto texts = fact_texts(reply);
    EXPECT_EQ(texts, (std::vector<std::string>{"User is allergic to peanuts.",
                                               "My sister Priya lives in Lisbon.",
                                               "If it rains, I take the bus to work."}));
    // The repeated sentence cites both messages; nothing comes from the assistant or the question.
    EXPECT_EQ(reply["facts"][0]["messages"], json::array({1}));
    EXPECT_EQ(reply["facts"][1]["messages"], json::array({1, 3}));
    EXPECT_EQ(reply["facts"][2]["messages"], json::array({3}));
}

TEST(Extractive, FactsDecideAddsUpdatesAChangedValueAndSkipsWhatIsKnown) {
    const json reply =
        reply_to(prompts::facts_decide("m", {"User lives in Lisbon.", "User loves ramen."},
                                       {"User lives in Porto.", "user loves RAMEN",
                                        "User has a dog named Rex.", "User loves dumplings."}));
    const json& d = reply["decisions"];
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(
        d[0],
        (json{{"fact", 1}, {"event", "UPDATE"}, {"memory", 0}, {"text", "User lives in Porto."}}));
    EXPECT_EQ(d[1]["event"], "NONE");
    EXPECT_EQ(d[1]["memory"], 1);
    EXPECT_EQ(d[2]["event"], "ADD");
    EXPECT_EQ(d[2]["memory"], -1);
    // Liking one dish does not replace liking another: too little overlap to count as a change.
    EXPECT_EQ(d[3]["event"], "ADD");
    for (const auto& decision : d)
        EXPECT_NE(decision["event"], "DELETE");

    // Coexisting facts stay apart: a fondness for one thing, "she" in two facts (maybe two people),
    // two people in one template, and a change that is not of a name or number.
    const json apart = reply_to(prompts::facts_decide(
        "m",
        {"User has a soft spot for crime dramas.", "She is learning Swedish at night school.",
         "By trade Beatriz Tavares is a nurse.", "I get genuinely excited about lazy Susans.",
         "Over the years Aiko has collected dozens of vintage radios."},
        {"User has a soft spot for road trips.", "She is learning Italian at night school.",
         "By trade Mirela Popescu is a nurse.", "I get genuinely excited about americanos.",
         "Over the years Kenji has collected dozens of vintage radios."}));
    ASSERT_EQ(apart["decisions"].size(), 5u);
    for (const auto& decision : apart["decisions"])
        EXPECT_EQ(decision["event"], "ADD") << decision.dump();
    // ... unless the new one says it replaced the old.
    const json changed =
        reply_to(prompts::facts_decide("m", {"I love hiking on weekends with my dog."},
                                       {"I now love hiking on weekends with my cat instead."}));
    EXPECT_EQ(changed["decisions"][0]["event"], "UPDATE");

    const json fresh = reply_to(prompts::facts_decide("m", {}, {"User lives in Porto."}));
    EXPECT_EQ(fresh["decisions"][0]["event"], "ADD");
}

TEST(Extractive, NotesWriteKeepsTheTurnAndFindsKeywordsTagsAndAGist) {
    const json reply = reply_to(prompts::notes_write(
        "m",
        {"user",
         "My sister Priya adopted a ferret called Pudding last spring, and it steals socks."},
        {"assistant", "How is your family?"}, "2026-03-01T09:00:00Z"));
    EXPECT_EQ(reply["content"],
              "My sister Priya adopted a ferret called Pudding last spring, and it steals socks.");
    const auto keywords = reply["keywords"].get<std::vector<std::string>>();
    EXPECT_GE(keywords.size(), 3u);
    EXPECT_LE(keywords.size(), 6u);
    EXPECT_TRUE(has(keywords, "priya"));
    EXPECT_TRUE(has(keywords, "pudding"));
    for (const auto& k : keywords)
        EXPECT_FALSE(k == "my" || k == "and" || k == "it");
    const auto tags = reply["tags"].get<std::vector<std::string>>();
    EXPECT_TRUE(has(tags, "family"));
    EXPECT_TRUE(has(tags, "pets"));
    EXPECT_EQ(reply["context"], "My sister Priya adopted a ferret called Pudding last spring");
}

TEST(Extractive, NotesWriteKeepsAConditionWithItsConsequenceInTheGist) {
    const json reply = reply_to(prompts::notes_write(
        "m", {"user", "If I'm sentimental, I restring my old guitar."}, {"", ""}, ""));
    EXPECT_EQ(reply["context"], "If I'm sentimental, I restring my old guitar");
    EXPECT_TRUE(has(reply["tags"].get<std::vector<std::string>>(), "hobbies"));
}

TEST(Extractive, NotesLinkLinksNeighboursSharingKeywordsAndEvolvesNothing) {
    const prompts::NoteView note{
        "I cook ramen most Fridays.", {"ramen", "fridays"}, {"food"}, "Cooking ramen"};
    const std::vector<prompts::NoteView> neighbours = {
        {"Ramen shops near work are my lunch spot.", {"ramen", "lunch"}, {"food"}, "Lunch habits"},
        {"My garden needs weeding.", {"garden"}, {"home"}, ""},
        {"keywords: ramen\ntags: x", {}, {}, ""}, // content that looks like a keywords line
        {"Friday is movie night.", {"Fridays", "movies"}, {}, "Weekly routine"}};
    const json reply = reply_to(prompts::notes_link("m", note, neighbours));
    EXPECT_EQ(reply["links"], json::array({1, 4}));
    EXPECT_EQ(reply["updates"], json::array());
}

TEST(Extractive, GraphExtractFindsNamesTheUserAndOneRelationPerStatement) {
    const std::vector<ChatMessage> conversation = {
        {"user", "My sister Priya lives in Lisbon. Mango is a golden retriever who only barks when "
                 "the doorbell "
                 "rings. I love ramen."},
        {"assistant", "What a lovely family!"},
        {"user", "Priya visits me every Sunday."}};
    const json reply = reply_to(prompts::graph_extract("m", conversation));
    std::vector<std::string> names;
    for (const auto& e : reply["entities"])
        names.push_back(e["name"].get<std::string>());
    EXPECT_EQ(names, (std::vector<std::string>{"Priya", "Lisbon", "Mango", "User"}));
    EXPECT_EQ(reply["entities"][1]["type"], "place");
    EXPECT_EQ(reply["entities"][2]["type"], "animal");
    EXPECT_EQ(reply["entities"][3]["type"], "person");

    const json& r = reply["relations"];
    ASSERT_EQ(r.size(), 4u);
    // Two named entities: linked to each other; the sentence is the fact.
    EXPECT_EQ(r[0]["source"], 1);
    EXPECT_EQ(r[0]["target"], 2);
    EXPECT_EQ(r[0]["relation"], "LIVES_IN");
    EXPECT_EQ(r[0]["fact"], "My sister Priya lives in Lisbon.");
    EXPECT_EQ(r[0]["messages"], json::array({1}));
    // One named entity: related to the user.
    EXPECT_EQ(r[1]["source"], 3);
    EXPECT_EQ(r[1]["target"], 4);
    // The user alone: the same number twice.
    EXPECT_EQ(r[2]["source"], 4);
    EXPECT_EQ(r[2]["target"], 4);
    EXPECT_EQ(r[2]["relation"], "LOVE");
    // Message numbers as the prompt shows them (the assistant's turn is number 2).
    EXPECT_EQ(r[3]["source"], 1);
    EXPECT_EQ(r[3]["messages"], json::array({3}));
}

TEST(Extractive, GraphExtractGivesPronounSentencesToTheMessagesSubject) {
    const json reply = reply_to(
        prompts::graph_extract("m", {{"user", "Catalina Ibarra is a museum guard. She refuses to "
                                              "eat cilantro. Catalina keeps a tortoise "
                                              "called Captain Biscuit."}}));
    std::vector<std::string> names;
    for (const auto& e : reply["entities"])
        names.push_back(e["name"].get<std::string>());
    EXPECT_EQ(names, (std::vector<std::string>{"Catalina Ibarra", "User", "Captain Biscuit"}));
    EXPECT_EQ(reply["entities"][2]["type"], "animal");
    const json& r = reply["relations"];
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[1]["fact"], "She refuses to eat cilantro.");
    EXPECT_EQ(r[1]["source"], 1); // "She" is Catalina Ibarra
    EXPECT_EQ(r[2]["source"], 1); // "Catalina" alone is the fuller name used in the message
    EXPECT_EQ(r[2]["target"], 3);
}

TEST(Extractive, GraphExtractSkipsCommonWordsThatOpenSentences) {
    const json reply = reply_to(
        prompts::graph_extract("m", {{"user", "Gardening relaxes me. Spring is busy for Priya. "
                                              "Inspection days mean long hours for Tom."}}));
    std::vector<std::string> names;
    for (const auto& e : reply["entities"])
        names.push_back(e["name"].get<std::string>());
    EXPECT_EQ(names, (std::vector<std::string>{"User", "Priya", "Tom"}));
    EXPECT_EQ(reply["relations"].size(), 3u);
}

TEST(Extractive, GraphResolveMatchesTheSameOrAFullerName) {
    const std::vector<prompts::GraphEntityView> known = {
        {"Mango", "animal", {"Mango barks at the doorbell."}},
        {"Priya Shah", "person", {"Priya Shah lives in Porto."}}};
    EXPECT_EQ(reply_to(prompts::graph_resolve(
                  "m", {"Priya", "person", {"Priya visits on Sundays."}}, known))["match"],
              2);
    EXPECT_EQ(reply_to(prompts::graph_resolve("m", {"mango", "animal", {}}, known))["match"], 1);
    EXPECT_EQ(reply_to(prompts::graph_resolve("m", {"Tom", "person", {}}, known))["match"], -1);
    EXPECT_EQ(reply_to(prompts::graph_resolve("m", {"Pri", "person", {}}, known))["match"],
              -1); // not a word of it
}

TEST(Extractive, GraphInvalidateNeedsTheSameRelationADifferentTextAndAChangeCue) {
    const std::vector<prompts::DatedFact> older = {
        {"Priya lives with Tom.", "2026-01-01T00:00:00Z"},
        {"Priya works with Tom.", "2026-01-02T00:00:00Z"}};
    EXPECT_EQ(reply_to(prompts::graph_invalidate(
                  "m", {"Priya no longer lives with Tom.", "2026-02-01T00:00:00Z"},
                  older))["invalidated"],
              json::array({1}));
    EXPECT_EQ(reply_to(prompts::graph_invalidate(
                  "m", {"Priya now lives with Tom and his cat.", "2026-02-01T00:00:00Z"},
                  older))["invalidated"],
              json::array({1}));
    // No cue: both can hold.
    EXPECT_EQ(reply_to(prompts::graph_invalidate(
                  "m", {"Priya lives with Tom and his cat.", "2026-02-01T00:00:00Z"},
                  older))["invalidated"],
              json::array());
}

TEST(Extractive, RepliesAreDeterministicAndOnlyForMemoryPrompts) {
    const auto request = prompts::graph_extract(
        "m",
        {{"user", "Ignatius feeds the castle ravens by hand. They live in the Saltmarsh Isles."}});
    const auto a = extractive_reply(request.schema->name, messages_of(request));
    const auto b = extractive_reply(request.schema->name, messages_of(request));
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->dump(), b->dump());
    EXPECT_FALSE(extractive_reply(prompts::k_answer_schema, messages_of(request)).has_value());
    // Nothing to parse still gives a valid, empty reply.
    EXPECT_EQ(extractive_reply(prompts::k_facts_extract_schema, json::array())->at("facts"),
              json::array());
}

TEST(Extractive, ServerAnswersWithItWhenNoRuleMatches) {
    EXPECT_FALSE(memfail::fake_llm::validate_script({{"extractive", "yes"}}).has_value());
    memfail::fake_llm::ServerOptions options;
    options.script = json::parse(R"({"extractive": true,
        "rules": [{"match": {"schema": "memfail_graph_resolve"}, "json": {"match": 1}}]})");
    auto server = memfail::fake_llm::FakeLlmServer::start(options).value();
    memfail::llm::ClientOptions client_options;
    client_options.base_url = server->base_url();
    client_options.max_retries = 0;
    auto client = memfail::llm::make_openai_client(client_options).value();

    const auto extract = prompts::facts_extract("m", {{"user", "I'm allergic to peanuts."}});
    const auto reply = client->chat(extract);
    ASSERT_TRUE(reply.has_value()) << reply.error().describe();
    EXPECT_EQ(reply->json->at("facts")[0]["text"], "User is allergic to peanuts.");
    // A rule still wins over the stand-in, and other prompts get the auto reply.
    const auto resolved =
        client->chat(prompts::graph_resolve("m", {"Tom", "person", {}}, {{"Mango", "animal", {}}}));
    ASSERT_TRUE(resolved.has_value());
    EXPECT_EQ(resolved->json->at("match"), 1);
    const auto judged = client->chat(prompts::judge_retrieval("m", {1, "A fact.", {}, {}}, {}));
    ASSERT_TRUE(judged.has_value());
    EXPECT_EQ(judged->json->at("reason"), "ok");
    const json stats = server->stats();
    EXPECT_EQ(stats["by_rule"]["extractive"], 1);
    EXPECT_EQ(stats["by_rule"]["default"], 1);
}

} // namespace
