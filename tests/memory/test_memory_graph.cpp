// SPDX-License-Identifier: MIT
// graph (StructMem / Graphiti) against scripted model replies over real HTTP: entities merge by
// normalised name without asking, an ambiguous one is resolved by the model, a contradicting edge
// closes the older one (kept, in history, out of retrieval), every edge carries its sources, numbers
// the model made up are rejected without corrupting the store, a malformed reply rolls the session
// back, storing twice asks nothing, retrieval walks the neighbourhood up to the hop limit, and
// extract=careful sends the tuned extraction and invalidation prompts (the default the published ones).
#include <gtest/gtest.h>

#include <algorithm>

#include <memfail/llm/openai_client.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/memory/builtin/graph.hpp>
#include <memfail/memory/memory_system.hpp>

#include <fake_llm.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using nlohmann::json;
using test::ok;
using test::script_of;

constexpr const char* k_extract = "memfail_graph_extract";
constexpr const char* k_resolve = "memfail_graph_resolve";
constexpr const char* k_invalidate = "memfail_graph_invalidate";


struct Rel {
    int source;
    int target;
    std::string fact;
    std::vector<int> messages = {1};
};

json extract(const std::vector<std::pair<std::string, std::string>>& entities, const std::vector<Rel>& relations) {
    json e = json::array(), r = json::array();
    for (const auto& [name, type] : entities) e.push_back(json{{"name", name}, {"type", type}});
    for (const auto& rel : relations)
        r.push_back(json{{"source", rel.source}, {"target", rel.target}, {"relation", "RELATED_TO"},
                         {"fact", rel.fact}, {"messages", rel.messages}});
    return json{{"entities", e}, {"relations", r}};
}

json match(int n) { return json{{"match", n}}; }
json invalidated(std::vector<int> numbers) { return json{{"invalidated", numbers}}; }

struct Harness : test::ScriptedModel {
    std::unique_ptr<MemorySystem> system;

    explicit Harness(json script, const std::string& spec = "graph", const std::string& storage_dir = "")
        : ScriptedModel(std::move(script)) {
        system = ok(GraphSystem::create(ok(Spec::parse(spec)), context(storage_dir)));
    }
    GraphSystem& graph() { return dynamic_cast<GraphSystem&>(*system); }
    std::int64_t calls(const std::string& schema) {
        const json by_schema = server->stats()["by_schema"];
        return by_schema.contains(schema) ? by_schema[schema].get<std::int64_t>() : 0;
    }
};

data::Session said(int day, const std::string& message, const std::string& text) {
    return test::session("s" + std::to_string(day), "2026-03-0" + std::to_string(day) + "T09:00:00Z",
                         {test::user(message, text)});
}

bool has_id(const std::vector<Hit>& hits, const std::string& id) {
    const auto ids = test::ids_of(hits);
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(Graph, NeedsASystemModel) {
    auto made = GraphSystem::create(ok(Spec::parse("graph")), SystemContext{});
    ASSERT_FALSE(made.has_value());
    EXPECT_NE(made.error().message.find("--system-model"), std::string::npos);
    SystemContext context;
    context.services.model = "m";
    EXPECT_FALSE(GraphSystem::create(ok(Spec::parse("graph:hops=0")), context).has_value());
    EXPECT_FALSE(GraphSystem::create(ok(Spec::parse("graph:hop=2")), context).has_value());
}

TEST(Graph, EntitiesMergeByNormalisedNameWithoutAsking) {
    Harness h(script_of({
        {k_extract, extract({{"User", "person"}, {"Priya", "person"}}, {{1, 2, "Priya is the user's sister."}})},
        {k_extract, extract({{"priya", "Person"}, {"Lisbon", "place"}}, {{1, 2, "Priya lives in Lisbon."}})},
    }));
    ok(h.system->store_conversation(said(1, "m1", "My sister Priya is visiting.")));
    ok(h.system->store_conversation(said(2, "m2", "Priya lives in Lisbon now.")));
    EXPECT_EQ(h.calls(k_resolve), 0);
    const auto entities = ok(h.graph().entities());
    ASSERT_EQ(entities.size(), 3u);
    EXPECT_EQ(entities[1].name, "Priya");
    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 2u);
    // Both facts hang off the one Priya node.
    EXPECT_EQ(ok(h.graph().edge_endpoints(memories[0].id)).second, entities[1].id);
    EXPECT_EQ(ok(h.graph().edge_endpoints(memories[1].id)).first, entities[1].id);
    EXPECT_EQ(memories[1].created_at, "2026-03-02T09:00:00Z");
}

TEST(Graph, AnAmbiguousEntityIsResolvedByTheModelAndRemembered) {
    Harness h(script_of({
        {k_extract, extract({{"User", "person"}, {"Priya Shah", "person"}}, {{1, 2, "Priya Shah is the user's sister."}})},
        {k_extract, extract({{"my sister", "person"}, {"Porto", "place"}}, {{1, 2, "The user's sister moved to Porto."}})},
        {k_resolve, match(2)},  // candidates: User, Priya Shah (both people, in creation order)
        {k_extract, extract({{"My Sister", "person"}, {"Porto", "place"}}, {{1, 2, "The user's sister likes Porto."}})},
        {k_invalidate, invalidated({})},  // liking a city does not undo moving there
    }));
    ok(h.system->store_conversation(said(1, "m1", "My sister Priya Shah is visiting.")));
    ok(h.system->store_conversation(said(2, "m2", "My sister moved to Porto.")));
    EXPECT_EQ(h.calls(k_resolve), 1);
    const auto entities = ok(h.graph().entities());
    ASSERT_EQ(entities.size(), 3u);  // User, Priya Shah, Porto
    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 2u);
    EXPECT_EQ(ok(h.graph().edge_endpoints(memories[1].id)).first, entities[1].id);
    // The alias the model resolved merges by name from now on.
    ok(h.system->store_conversation(said(3, "m3", "My sister loves Porto.")));
    EXPECT_EQ(h.calls(k_resolve), 1);
    EXPECT_EQ(ok(h.graph().entities()).size(), 3u);
    // A query naming the alias finds Priya's facts.
    const auto hits = ok(h.system->retrieve_memories("Where did my sister move?", {}, 1));
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].memory.id, memories[1].id);
}

json dating_script() {
    return script_of({
        {k_extract, extract({{"Priya", "person"}, {"Tom", "person"}}, {{1, 2, "Priya is dating Tom."}})},
        {k_extract, extract({{"Priya", "person"}, {"Tom", "person"}}, {{1, 2, "Priya and Tom broke up."}})},
        {k_invalidate, invalidated({1})},
    });
}

TEST(Graph, AContradictingEdgeClosesTheOlderOneWhichIsKept) {
    Harness h(dating_script());
    ok(h.system->store_conversation(said(1, "m1", "Priya is dating Tom.")));
    const std::string old_id = ok(h.system->all_memories()).at(0).id;
    ok(h.system->store_conversation(said(2, "m2", "Priya and Tom broke up.")));

    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 1u);
    EXPECT_EQ(memories[0].text, "Priya and Tom broke up.");
    EXPECT_FALSE(has_id(ok(h.system->retrieve_memories("Who is Priya dating?", {}, 5)), old_id));

    const auto events = ok(h.system->history(old_id));
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].event, "add");
    EXPECT_EQ(events[1].event, "invalidate");
    EXPECT_EQ(events[1].old_text, "Priya is dating Tom.");
    EXPECT_EQ(events[1].new_text, "Priya and Tom broke up.");
    EXPECT_EQ(events[1].at, "2026-03-02T09:00:00Z");
    EXPECT_EQ(events[1].sources, std::vector<std::string>{"m2"});

    // Valid on day 1, closed on day 2.
    const auto then = ok(h.system->state_as_of("2026-03-01T12:00:00Z"));
    ASSERT_EQ(then.size(), 1u);
    EXPECT_EQ(then[0].id, old_id);
    EXPECT_EQ(then[0].text, "Priya is dating Tom.");
    EXPECT_EQ(test::ids_of(ok(h.system->state_as_of("2026-03-02T12:00:00Z"))), test::ids_of(memories));
}

TEST(Graph, IncludeInvalidShowsTheClosedEdgeMarkedAsStale) {
    Harness h(dating_script(), "graph:include_invalid=true");
    ok(h.system->store_conversation(said(1, "m1", "Priya is dating Tom.")));
    ok(h.system->store_conversation(said(2, "m2", "Priya and Tom broke up.")));
    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 2u);
    EXPECT_NE(memories[0].text.find("no longer true as of 2026-03-02"), std::string::npos);
    EXPECT_EQ(memories[0].updated_at, "2026-03-02T09:00:00Z");
    EXPECT_TRUE(has_id(ok(h.system->retrieve_memories("Who is Priya dating?", {}, 5)), memories[0].id));
}

TEST(Graph, EveryEdgeCarriesItsSources) {
    Harness h(script_of({
        {k_extract, extract({{"Biscuit", "animal"}, {"Storms", "event"}, {"Park", "place"}},
                            {{1, 2, "Biscuit hides during storms.", {2}},
                             {1, 3, "Biscuit runs in the park every morning.", {1, 3}},
                             {1, 1, "Biscuit is a beagle.", {}},
                             {1, 1, "Biscuit is six years old.", {99}}})},
        {k_extract, extract({{"biscuit", "animal"}, {"storms", "event"}}, {{1, 2, "Biscuit hides during storms."}})},
    }));
    ok(h.system->store_conversation(test::session(
        "s1", "2026-03-01T09:00:00Z",
        {test::user("m1", "Our beagle Biscuit is six."), test::assistant("m2", "Lovely!"),
         test::user("m3", "He runs in the park every morning and hides during storms.")})));
    auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 4u);
    const auto checks = h.calls(k_invalidate);  // the two facts about Biscuit alone were compared
    EXPECT_EQ(memories[0].sources, std::vector<std::string>{"m2"});
    EXPECT_EQ(memories[1].sources, (std::vector<std::string>{"m1", "m3"}));
    // Citing nothing, or nothing that exists: the whole conversation.
    EXPECT_EQ(memories[2].sources, (std::vector<std::string>{"m1", "m2", "m3"}));
    EXPECT_EQ(memories[3].sources, (std::vector<std::string>{"m1", "m2", "m3"}));

    // Said again: the same edge now cites both places, with no new edge and nothing to decide.
    ok(h.system->store_conversation(said(2, "m9", "Biscuit still hides when it storms.")));
    memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 4u);
    EXPECT_EQ(memories[0].sources, (std::vector<std::string>{"m2", "m9"}));
    EXPECT_EQ(h.calls(k_invalidate), checks);
    for (const Hit& hit : ok(h.system->retrieve_memories("Biscuit", {}, 10))) EXPECT_FALSE(hit.memory.sources.empty());
}

TEST(Graph, NumbersTheModelMadeUpAreRejectedWithoutCorruptingTheStore) {
    Harness h(script_of({
        {k_extract, extract({{"Priya", "person"}, {"Tom", "person"}}, {{1, 2, "Priya is dating Tom."}})},
        {k_extract, extract({{"Priya", "person"}, {"Tom", "person"}, {"Tommy", "person"}},
                            {{1, 2, "Priya and Tom got engaged."},
                             {1, 7, "Priya adopted a cat."},
                             {3, 1, "Tommy is Priya's cousin."}})},
        {k_resolve, match(9)},          // Tommy: only two candidates were shown
        {k_invalidate, invalidated({5})},  // only one older edge was shown
    }));
    ok(h.system->store_conversation(said(1, "m1", "Priya is dating Tom.")));
    const std::string first = ok(h.system->all_memories()).at(0).id;
    ok(h.system->store_conversation(said(2, "m2", "Priya and Tom got engaged; her cousin Tommy cried.")));

    EXPECT_EQ(ok(h.graph().rejected_decisions()), 3);
    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 3u);  // dating, engaged, cousin: nothing closed, the cat fact dropped
    EXPECT_EQ(memories[0].id, first);
    EXPECT_EQ(ok(h.system->history(first)).size(), 1u);
    const auto entities = ok(h.graph().entities());
    ASSERT_EQ(entities.size(), 3u);  // Tommy became a new entity
    EXPECT_EQ(entities[2].name, "Tommy");
}

TEST(Graph, AMalformedReplyRollsTheSessionBack) {
    Harness h(script_of({
        {k_extract, extract({{"Priya", "person"}, {"Tom", "person"}}, {{1, 2, "Priya is dating Tom."}})},
        {k_extract, extract({{"Priya", "person"}, {"Tom", "person"}, {"Lisbon", "place"}},
                            {{2, 3, "Tom lives in Lisbon."}, {1, 2, "Priya and Tom broke up."}})},
        {k_invalidate, json("schema_violation")},
        {k_extract, extract({{"Priya", "person"}, {"Tom", "person"}}, {{1, 2, "Priya and Tom broke up."}})},
        {k_invalidate, invalidated({1})},
    }));
    ok(h.system->store_conversation(said(1, "m1", "Priya is dating Tom.")));
    EXPECT_FALSE(h.system->store_conversation(said(2, "m2", "Tom moved to Lisbon and they broke up.")).has_value());
    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 1u);
    EXPECT_EQ(memories[0].text, "Priya is dating Tom.");
    EXPECT_EQ(ok(h.graph().entities()).size(), 2u);  // Lisbon is gone again
    for (const Hit& hit : ok(h.system->retrieve_memories("Where does Tom live? Lisbon", {}, 5)))
        EXPECT_EQ(hit.memory.id, memories[0].id);

    // The session was not marked stored: storing it again works.
    ok(h.system->store_conversation(said(2, "m2", "Tom moved to Lisbon and they broke up.")));
    const auto after = ok(h.system->all_memories());
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0].text, "Priya and Tom broke up.");
    EXPECT_EQ(after[0].id, "edge-2");  // no id burnt by the rolled-back attempt
}

TEST(Graph, StoringASessionTwiceAsksNothingTheSecondTime) {
    Harness h(script_of({
        {k_extract, extract({{"Biscuit", "animal"}, {"Beagle", "animal"}}, {{1, 2, "Biscuit is a beagle."}})},
    }));
    ok(h.system->store_conversation(said(1, "m1", "Our dog Biscuit is a beagle.")));
    const auto requests = h.server->stats()["requests"].get<int>();
    ok(h.system->store_conversation(said(1, "m1", "Our dog Biscuit is a beagle.")));
    EXPECT_EQ(h.server->stats()["requests"].get<int>(), requests);
    EXPECT_EQ(ok(h.system->all_memories()).size(), 1u);
}

json neighbourhood_script() {
    return script_of({
        {k_extract, extract({{"User", "person"}, {"Priya", "person"}, {"Lisbon", "place"}, {"Fado Festival", "event"},
                             {"Marco", "person"}, {"Ana", "person"}, {"Bakery", "organisation"}},
                            {{1, 2, "Priya is the user's sister."},
                             {2, 3, "Priya lives in Lisbon."},
                             {3, 4, "Lisbon hosts the Fado Festival every July."},
                             {5, 4, "Marco sings at the Fado Festival."},
                             {6, 7, "Ana owns a bakery."}})},
    });
}

TEST(Graph, RetrievalWalksTheNeighbourhoodUpToTheHopLimit) {
    for (const int hops : {1, 2}) {
        SCOPED_TRACE(hops);
        Harness h(neighbourhood_script(), "graph:hops=" + std::to_string(hops));
        ok(h.system->store_conversation(said(1, "m1", "Lots to tell about my family.")));
        const auto memories = ok(h.system->all_memories());
        ASSERT_EQ(memories.size(), 5u);
        // The walk starts at Priya (named) and at the entities of the facts the query clearly
        // matches (User and Lisbon, from the two facts about Priya).
        const auto hits = ok(h.system->retrieve_memories("Tell me about Priya", {}, 10));
        EXPECT_TRUE(has_id(hits, memories[0].id));
        EXPECT_TRUE(has_id(hits, memories[1].id));
        EXPECT_TRUE(has_id(hits, memories[2].id));            // one step from Lisbon
        EXPECT_EQ(has_id(hits, memories[3].id), hops == 2);  // two steps from Lisbon
        EXPECT_FALSE(has_id(hits, memories[4].id));          // not connected at all
        // The fused ranking puts the fact that shares the query's words first.
        const auto top = ok(h.system->retrieve_memories("Where does Priya live?", {}, 1));
        ASSERT_EQ(top.size(), 1u);
        EXPECT_EQ(top[0].memory.id, memories[1].id);
    }
}

TEST(Graph, ReopensFromDiskWithItsIndexesAndAliases) {
    test::TempDir dir;
    std::vector<std::string> ids;
    {
        Harness h(dating_script(), "graph", dir.path());
        ok(h.system->store_conversation(said(1, "m1", "Priya is dating Tom.")));
        ok(h.system->store_conversation(said(2, "m2", "Priya and Tom broke up.")));
        ids = test::ids_of(ok(h.system->all_memories()));
    }
    Harness h(script_of({}), "graph", dir.path());
    EXPECT_EQ(test::ids_of(ok(h.system->all_memories())), ids);
    EXPECT_EQ(ok(h.graph().entities()).size(), 2u);
    EXPECT_EQ(test::ids_of(ok(h.system->retrieve_memories("Did Priya and Tom break up?", {}, 5))), ids);
    ok(h.system->store_conversation(said(2, "m2", "Priya and Tom broke up.")));
    EXPECT_EQ(h.server->stats()["requests"].get<int>(), 0);
}

TEST(Graph, ResetForgetsEverything) {
    Harness h(neighbourhood_script());
    ok(h.system->store_conversation(said(1, "m1", "Lots to tell about my family.")));
    ok(h.system->reset());
    EXPECT_TRUE(ok(h.system->all_memories()).empty());
    EXPECT_TRUE(ok(h.graph().entities()).empty());
    EXPECT_TRUE(ok(h.system->retrieve_memories("Priya", {}, 5)).empty());
}

// Answers graph extraction and invalidation by which style's system text the request carries (the
// whole text must match): the published style closes the older edge, the careful one keeps it.
json style_script() {
    namespace prompts = llm::prompts;
    const std::vector<llm::ChatMessage> conversation = {{"user", "x"}};
    json rules = json::array();
    for (const auto style : {prompts::PromptStyle::published, prompts::PromptStyle::careful}) {
        const std::string name = prompts::prompt_style_name(style);
        const std::string extract_text = prompts::graph_extract("m", conversation, style).messages.at(0).content;
        const std::string invalidate_text =
            prompts::graph_invalidate("m", {"x", "t"}, {{"y", "t"}}, style).messages.at(0).content;
        const std::pair<const char*, const char*> facts[] = {{"1", "Priya cooks with Tom."},
                                                             {"2", "Priya bakes with Tom."}};
        for (const auto& [n, fact] : facts)
            rules.push_back(json{{"name", name + " extract " + n},
                                 {"match", {{"schema", k_extract}, {"contains", extract_text}}},
                                 {"times", 1},
                                 {"json", extract({{"Priya", "person"}, {"Tom", "person"}}, {{1, 2, fact}})}});
        rules.push_back(json{{"name", name + " invalidate"},
                             {"match", {{"schema", k_invalidate}, {"contains", invalidate_text}}},
                             {"json", invalidated(style == prompts::PromptStyle::careful ? std::vector<int>{}
                                                                                          : std::vector<int>{1})}});
    }
    return json{{"rules", rules}};
}

TEST(Graph, ExtractCarefulSendsTheTunedPromptsAndIsInTheSpec) {
    for (const std::string style : {"published", "careful"}) {
        const std::string other = style == "published" ? "careful" : "published";
        Harness h(style_script(), style == "published" ? "graph" : "graph:extract=careful");
        EXPECT_NE(h.system->spec().find("extract=" + style), std::string::npos) << h.system->spec();
        ok(h.system->store_conversation(said(1, "m1", "Priya cooks with Tom.")));
        ok(h.system->store_conversation(said(2, "m2", "Priya bakes with Tom.")));
        const json by_rule = h.server->stats()["by_rule"];
        EXPECT_EQ(by_rule.value(style + " extract 1", 0), 1) << by_rule.dump();
        EXPECT_EQ(by_rule.value(style + " extract 2", 0), 1) << by_rule.dump();
        EXPECT_EQ(by_rule.value(style + " invalidate", 0), 1) << by_rule.dump();
        for (const char* rule : {" extract 1", " extract 2", " invalidate"})
            EXPECT_FALSE(by_rule.contains(other + rule)) << style << ": " << by_rule.dump();
        // The published reply closed the older edge; the careful one kept both.
        EXPECT_EQ(ok(h.system->all_memories()).size(), style == "published" ? 1u : 2u) << style;
    }
    SystemContext context;
    context.services.model = "m";
    auto bad = GraphSystem::create(ok(Spec::parse("graph:extract=tuned")), context);
    ASSERT_FALSE(bad.has_value());
    EXPECT_NE(bad.error().message.find("published, careful"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace memfail::memory
