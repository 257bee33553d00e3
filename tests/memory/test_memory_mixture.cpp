// SPDX-License-Identifier: MIT
// mixture: units are classified by the documented rules, each goes to its substore with its
// provenance, ids stay unique across substores, and retrieval fuses the substores' rankings.
#include <gtest/gtest.h>

#include <memfail/llm/openai_client.hpp>
#include <memfail/memory/builtin/mixture.hpp>

#include <set>

#include <fake_llm.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using nlohmann::json;
using test::ok;

TEST(MixtureRouting, ClassifiesUnitsByTheDocumentedRules) {
    EXPECT_EQ(classify_unit("Whenever I feel restless I call my sister.", 60), UnitKind::conditional);
    EXPECT_EQ(classify_unit("Mango only chews shoelaces if she is in the garden.", 60), UnitKind::conditional);
    EXPECT_EQ(classify_unit("I absolutely love ramen.", 60), UnitKind::preference);
    EXPECT_EQ(classify_unit("My sister lives in Lisbon.", 60), UnitKind::other);
    std::string essay;
    for (int i = 0; i < 20; ++i) essay += "Catalina paints small landscapes when it rains. ";
    EXPECT_EQ(classify_unit(essay, 60), UnitKind::long_text);  // long wins over the "when" inside
    EXPECT_EQ(classify_unit(essay, 1000), UnitKind::conditional);
}

TEST(Mixture, RoutesEachUnitAndFusesRetrieval) {
    fake_llm::ServerOptions server_options;
    server_options.script = json::parse(R"({"rules": [
        {"match": {"schema": "memfail_facts_extract"}, "times": 1,
         "json": {"facts": [{"text": "The user loves ramen.", "messages": [1]}]}},
        {"match": {"schema": "memfail_facts_decide"}, "times": 1,
         "json": {"decisions": [{"fact": 1, "event": "ADD", "memory": -1, "text": ""}]}}]})");
    auto server = ok(fake_llm::FakeLlmServer::start(std::move(server_options)));
    llm::ClientOptions client_options;
    client_options.base_url = server->base_url();
    auto client = ok(llm::make_openai_client(client_options));
    SystemContext context;
    context.services.client = client.get();
    context.services.model = "scripted";
    auto system = ok(make_memory_system("mixture:conditional=verbatim", context));

    ok(system->store_conversation(test::session("s1", "2026-03-01T09:00:00Z",
                                                {test::user("m1", "I absolutely love ramen."),
                                                 test::user("m2", "Whenever it rains I make ramen at home."),
                                                 test::user("m3", "My sister lives in Lisbon.")})));
    const auto memories = ok(system->all_memories());
    std::map<std::string, std::vector<std::string>> sources_by_id;
    for (const auto& m : memories) sources_by_id[m.id] = m.sources;
    // The preference went to facts (as an extracted fact), the rest to verbatim, word for word.
    ASSERT_EQ(memories.size(), 3u);
    EXPECT_EQ(sources_by_id.at("facts/fact-1"), std::vector<std::string>{"m1"});
    EXPECT_EQ(sources_by_id.at("verbatim/m2#0"), std::vector<std::string>{"m2"});
    EXPECT_EQ(sources_by_id.at("verbatim/m3#0"), std::vector<std::string>{"m3"});

    const auto hits = ok(system->retrieve_memories("ramen", {}, 2));
    ASSERT_EQ(hits.size(), 2u);
    std::set<std::string> ids;
    for (const auto& h : hits) ids.insert(h.memory.id);
    // Each substore's best hit is first in its own ranking, so fusion keeps one from each.
    EXPECT_TRUE(ids.count("facts/fact-1"));
    EXPECT_TRUE(ids.count("verbatim/m2#0"));
}

TEST(Mixture, OptionsAreChecked) {
    EXPECT_FALSE(make_memory_system("mixture:conditional=sqlite", SystemContext{}).has_value());
    // The model router needs a model; without one it says which flag is missing.
    auto llm_router = make_memory_system("mixture:router=llm", SystemContext{});
    ASSERT_FALSE(llm_router.has_value());
    EXPECT_EQ(llm_router.error().kind, ErrorKind::invalid_input);
    EXPECT_NE(llm_router.error().message.find("--system-model"), std::string::npos);
}

TEST(Mixture, ModelRouterOverridesTheRulesAndFallsBackForMessagesItSkips) {
    // m1 reads as a preference to the rules, but the model calls it conditional (-> verbatim here);
    // m2 is numbered out of range and m3 is left out, so the rules route both (m2 conditional,
    // m3 other: both verbatim). Message 2 of the shown numbering is m3 because the empty m-empty is
    // not shown to the model.
    test::ScriptedModel model(test::script_of({{"memfail_mixture_route",
                                                json{{"units", json::array({json{{"message", 1}, {"kind", "conditional"}},
                                                                            json{{"message", 9}, {"kind", "other"}}})}}}}));
    auto system = ok(make_memory_system("mixture:router=llm,conditional=verbatim,other=verbatim", model.context()));
    EXPECT_NE(system->spec().find("router=llm"), std::string::npos);
    ok(system->store_conversation(test::session("s1", "2026-03-01T09:00:00Z",
                                                {test::user("m1", "I absolutely love ramen."),
                                                 test::user("m-empty", "  "),
                                                 test::user("m2", "My sister lives in Lisbon.")})));
    std::set<std::string> ids;
    for (const auto& m : ok(system->all_memories())) ids.insert(m.id);
    // Had the rules routed m1 it would have gone to facts, whose extraction is not scripted (the
    // store would have failed); the model's route kept it verbatim.
    EXPECT_TRUE(ids.count("verbatim/m1#0"));
    EXPECT_TRUE(ids.count("verbatim/m2#0"));
    EXPECT_EQ(model.server->stats()["by_schema"]["memfail_mixture_route"], 1);
}

TEST(Mixture, AMalformedRoutingReplyStoresNothing) {
    test::ScriptedModel model(test::script_of({{"memfail_mixture_route", "schema_violation"}}));
    auto system = ok(make_memory_system("mixture:router=llm,conditional=verbatim,other=verbatim", model.context()));
    auto stored = system->store_conversation(
        test::session("s1", "2026-03-01T09:00:00Z", {test::user("m1", "My sister lives in Lisbon.")}));
    EXPECT_FALSE(stored.has_value());
    EXPECT_TRUE(ok(system->all_memories()).empty());
}

}  // namespace
}  // namespace memfail::memory
