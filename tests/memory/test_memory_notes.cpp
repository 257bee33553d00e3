// SPDX-License-Identifier: MIT
// notes (A-MEM) against scripted model replies over real HTTP: a note per turn with its provenance,
// links both ways, evolution of a neighbour's context and tags (never its content) with history,
// rejection of numbers that were not shown, one-hop retrieval cut back to k, rollback of a session
// whose reply is malformed, and idempotent storage.
#include <gtest/gtest.h>

#include <set>

#include <memfail/llm/openai_client.hpp>
#include <memfail/memory/builtin/notes.hpp>
#include <memfail/memory/memory_system.hpp>

#include <fake_llm.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using nlohmann::json;
using test::ok;
using test::script_of;

constexpr const char* k_write = "memfail_notes_write";
constexpr const char* k_link = "memfail_notes_link";


json written(const std::string& content, const std::string& context = "", std::vector<std::string> tags = {},
             std::vector<std::string> keywords = {}) {
    return json{{"content", content}, {"keywords", keywords}, {"tags", tags}, {"context", context}};
}

struct Update {
    int note;
    std::string context;
    std::vector<std::string> tags;
};

json linked(std::vector<int> links, std::vector<Update> updates = {}) {
    json list = json::array();
    for (const auto& u : updates) list.push_back(json{{"note", u.note}, {"context", u.context}, {"tags", u.tags}});
    return json{{"links", links}, {"updates", list}};
}

struct Harness : test::ScriptedModel {
    std::unique_ptr<MemorySystem> system;

    explicit Harness(json script, const std::string& spec = "notes") : ScriptedModel(std::move(script)) {
        system = ok(NotesSystem::create(ok(Spec::parse(spec)), context()));
    }
    NotesSystem& notes() { return dynamic_cast<NotesSystem&>(*system); }
    Note note(const std::string& id) {
        auto found = ok(notes().note(id));
        if (!found) throw std::runtime_error("no note " + id);
        return *found;
    }
    std::int64_t asked(const std::string& schema) {
        const json by_schema = server->stats()["by_schema"];
        return by_schema.contains(schema) ? by_schema[schema].get<std::int64_t>() : 0;
    }
};

data::Session said(const std::string& session, const std::string& message, const std::string& text) {
    return test::session(session, "2026-03-0" + session.substr(1) + "T09:00:00Z", {test::user(message, text)});
}

TEST(Notes, NeedsASystemModel) {
    auto made = NotesSystem::create(ok(Spec::parse("notes")), SystemContext{});
    ASSERT_FALSE(made.has_value());
    EXPECT_NE(made.error().message.find("--system-model"), std::string::npos);
    SystemContext context;
    context.services.model = "m";
    EXPECT_FALSE(NotesSystem::create(ok(Spec::parse("notes:neighbours=0")), context).has_value());
    EXPECT_FALSE(NotesSystem::create(ok(Spec::parse("notes:roles=assistant")), context).has_value());
    EXPECT_FALSE(NotesSystem::create(ok(Spec::parse("notes:neigbours=3")), context).has_value());
}

TEST(Notes, ANotePerTurnWithItsProvenance) {
    Harness h(script_of({
        {k_write, written("Dana's beagle Biscuit is six years old.", "Dana describes her dog.", {"pets"}, {"Biscuit"})},
        {k_write, written("", "The assistant reacts to the dog.")},  // no content: the turn itself is kept
        {k_link, linked({})},
    }));
    ok(h.system->store_conversation(test::session(
        "s1", "2026-03-01T09:00:00Z",
        {test::user("m1", "My beagle Biscuit turned six."), test::assistant("m2", "  "),
         test::assistant("m3", "Happy birthday to Biscuit!")})));

    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 2u);  // the blank turn gets no note
    EXPECT_EQ(memories[0].text, "Dana's beagle Biscuit is six years old.\nDana describes her dog.");
    EXPECT_EQ(memories[0].sources, std::vector<std::string>{"m1"});
    EXPECT_EQ(memories[0].created_at, "2026-03-01T09:00:00Z");
    EXPECT_EQ(memories[1].text, "Happy birthday to Biscuit!\nThe assistant reacts to the dog.");
    EXPECT_EQ(memories[1].sources, std::vector<std::string>{"m3"});

    const Note first = h.note(memories[0].id);
    EXPECT_EQ(first.keywords, std::vector<std::string>{"Biscuit"});
    EXPECT_EQ(first.tags, std::vector<std::string>{"pets"});
    const auto events = ok(h.system->history(memories[0].id));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].event, "add");
    EXPECT_EQ(events[0].sources, std::vector<std::string>{"m1"});
    EXPECT_FALSE(h.system->history("note-99").has_value());
    // The first note had no neighbours, so only the second asked about links.
    EXPECT_EQ(h.asked(k_write), 2);
    EXPECT_EQ(h.asked(k_link), 1);
}

TEST(Notes, RolesUserWritesNotesForUserTurnsOnly) {
    Harness h(script_of({{k_write, written("Dana's beagle Biscuit is six years old.")}}), "notes:roles=user");
    ok(h.system->store_conversation(test::session(
        "s1", "2026-03-01T09:00:00Z",
        {test::user("m1", "My beagle Biscuit turned six."), test::assistant("m2", "Happy birthday to Biscuit!")})));
    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 1u);
    EXPECT_EQ(memories[0].sources, std::vector<std::string>{"m1"});
    EXPECT_EQ(h.asked(k_write), 1);
}

TEST(Notes, RelatedNotesAreLinkedBothWays) {
    Harness h(script_of({
        {k_write, written("Biscuit is Dana's beagle.")},
        {k_write, written("Biscuit hides under the bed during thunderstorms.")},
        {k_link, linked({1})},
    }));
    ok(h.system->store_conversation(said("s1", "m1", "Biscuit is my beagle.")));
    ok(h.system->store_conversation(said("s2", "m2", "Biscuit hides under the bed when it storms.")));
    EXPECT_EQ(ok(h.notes().links("note-1")), std::vector<std::string>{"note-2"});
    EXPECT_EQ(ok(h.notes().links("note-2")), std::vector<std::string>{"note-1"});
    EXPECT_EQ(ok(h.notes().rejected_decisions()), 0);
}

TEST(Notes, EvolutionRewritesANeighboursContextAndTagsButNeverItsContent) {
    Harness h(script_of({
        {k_write, written("Biscuit is Dana's beagle.", "Dana's pet.", {"pets"})},
        {k_write, written("Biscuit hides under the bed during thunderstorms.", "The dog fears storms.")},
        {k_link, linked({1}, {{1, "Dana's anxious beagle, scared of storms.", {"pets", "zoology"}}})},
    }));
    ok(h.system->store_conversation(said("s1", "m1", "Biscuit is my beagle.")));
    ok(h.system->store_conversation(said("s2", "m2", "Biscuit hides under the bed when it storms.")));

    const Note evolved = h.note("note-1");
    EXPECT_EQ(evolved.content, "Biscuit is Dana's beagle.");  // unchanged
    EXPECT_EQ(evolved.context, "Dana's anxious beagle, scared of storms.");
    EXPECT_EQ(evolved.tags, (std::vector<std::string>{"pets", "zoology"}));
    EXPECT_EQ(evolved.sources, std::vector<std::string>{"m1"});
    EXPECT_EQ(evolved.created_at, "2026-03-01T09:00:00Z");
    EXPECT_EQ(evolved.updated_at, "2026-03-02T09:00:00Z");
    EXPECT_EQ(ok(h.system->all_memories())[0].text, "Biscuit is Dana's beagle.\nDana's anxious beagle, scared of storms.");

    const auto events = ok(h.system->history("note-1"));
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].event, "add");
    EXPECT_EQ(events[1].event, "evolve");
    EXPECT_NE(events[1].old_text.find("Dana's pet."), std::string::npos);
    EXPECT_NE(events[1].new_text.find("scared of storms"), std::string::npos);
    EXPECT_NE(events[1].new_text.find("zoology"), std::string::npos);
    EXPECT_EQ(events[1].at, "2026-03-02T09:00:00Z");
    EXPECT_EQ(events[1].sources, std::vector<std::string>{"m2"});  // the turn that caused it

    // The index follows the evolution: the new tag finds the note, and superseded index entries
    // never surface as duplicates.
    const auto top = ok(h.system->retrieve_memories("zoology", {}, 1));
    ASSERT_EQ(top.size(), 1u);
    EXPECT_EQ(top[0].memory.id, "note-1");
    const auto all = test::ids_of(ok(h.system->retrieve_memories("Biscuit beagle storms", {}, 10)));
    EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size());
    EXPECT_EQ(all.size(), 2u);
}

TEST(Notes, NumbersThatWereNotShownAreRejectedAndTheStoreStaysConsistent) {
    Harness h(script_of({
        {k_write, written("Biscuit is Dana's beagle.", "Dana's pet.", {"pets"})},
        {k_write, written("Biscuit hides under the bed during thunderstorms.")},
        {k_link, linked({0, 1, 4}, {{3, "rewritten", {"junk"}}, {1, "", {}}})},
    }));
    ok(h.system->store_conversation(said("s1", "m1", "Biscuit is my beagle.")));
    ok(h.system->store_conversation(said("s2", "m2", "Biscuit hides under the bed when it storms.")));
    EXPECT_EQ(ok(h.notes().rejected_decisions()), 3);  // links 0 and 4, the update of note 3
    EXPECT_EQ(ok(h.notes().links("note-1")), std::vector<std::string>{"note-2"});  // the shown one is kept
    EXPECT_EQ(ok(h.notes().links("note-2")), std::vector<std::string>{"note-1"});
    const Note first = h.note("note-1");
    EXPECT_EQ(first.context, "Dana's pet.");  // the empty update keeps what was there
    EXPECT_EQ(first.tags, std::vector<std::string>{"pets"});
    EXPECT_EQ(ok(h.system->history("note-1")).size(), 1u);
    EXPECT_EQ(ok(h.system->all_memories()).size(), 2u);
}

TEST(Notes, RetrievalFollowsOneLinkAndNeverReturnsMoreThanK) {
    Harness h(script_of({
        {k_write, written("Biscuit hides under the bed during thunderstorms.")},
        {k_write, written("The vet appointment is on Friday at noon.")},
        {k_link, linked({1})},
        {k_write, written("More thunderstorms are forecast for the weekend.")},
        {k_link, linked({})},
    }));
    ok(h.system->store_conversation(said("s1", "m1", "Biscuit hides under the bed when it storms.")));
    ok(h.system->store_conversation(said("s2", "m2", "The vet appointment for Biscuit is Friday at noon.")));
    ok(h.system->store_conversation(said("s3", "m3", "More storms are coming this weekend.")));

    const std::string query = "Where does Biscuit hide during thunderstorms?";
    const auto two = ok(h.system->retrieve_memories(query, {}, 2));
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[0].memory.id, "note-1");
    // The vet note shares no word with the query; it comes through its link to the best hit, ahead
    // of the weaker direct hit, and scores below the note that links to it.
    EXPECT_EQ(two[1].memory.id, "note-2");
    EXPECT_LT(two[1].score, two[0].score);
    EXPECT_EQ(two[1].memory.sources, std::vector<std::string>{"m2"});

    const auto one = ok(h.system->retrieve_memories(query, {}, 1));
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].memory.id, "note-1");
    EXPECT_EQ(ok(h.system->retrieve_memories(query, {}, 10)).size(), 3u);
    EXPECT_TRUE(ok(h.system->retrieve_memories(query, {}, 0)).empty());
}

TEST(Notes, AMalformedReplyRollsTheWholeSessionBack) {
    Harness h(script_of({
        {k_write, written("Biscuit is Dana's beagle.", "Dana's pet.", {"pets"})},
        {k_write, written("Biscuit hides under the bed during thunderstorms.")},
        {k_link, linked({1}, {{1, "Dana's anxious beagle.", {"pets", "storms"}}})},
        {k_write, json("schema_violation")},
        // The same session again, this time answered properly.
        {k_write, written("Biscuit hides under the bed during thunderstorms.")},
        {k_link, linked({1})},
        {k_write, written("Dana bought Biscuit a calming vest.")},
        {k_link, linked({})},
    }));
    ok(h.system->store_conversation(said("s1", "m1", "Biscuit is my beagle.")));
    const data::Session second = test::session(
        "s2", "2026-03-02T09:00:00Z",
        {test::user("m2", "Biscuit hides under the bed when it storms."), test::user("m3", "I got him a calming vest.")});
    EXPECT_FALSE(h.system->store_conversation(second).has_value());

    // Nothing of the session survived: no note, no link, no evolution, no index entry.
    ASSERT_EQ(ok(h.system->all_memories()).size(), 1u);
    const Note first = h.note("note-1");
    EXPECT_EQ(first.context, "Dana's pet.");
    EXPECT_EQ(first.tags, std::vector<std::string>{"pets"});
    EXPECT_TRUE(ok(h.notes().links("note-1")).empty());
    EXPECT_EQ(ok(h.system->history("note-1")).size(), 1u);
    EXPECT_EQ(ok(h.system->retrieve_memories("Biscuit thunderstorms", {}, 5)).size(), 1u);

    // The session was not marked as stored, so it can be stored again from scratch.
    ok(h.system->store_conversation(second));
    EXPECT_EQ(ok(h.system->all_memories()).size(), 3u);
    EXPECT_EQ(ok(h.notes().links("note-1")), std::vector<std::string>{"note-2"});
    EXPECT_EQ(h.note("note-2").sources, std::vector<std::string>{"m2"});
}

TEST(Notes, StoringASessionTwiceAsksNothingTheSecondTime) {
    Harness h(script_of({{k_write, written("Biscuit is Dana's beagle.")}}));
    ok(h.system->store_conversation(said("s1", "m1", "Biscuit is my beagle.")));
    const auto requests = h.server->stats()["requests"].get<int>();
    ok(h.system->store_conversation(said("s1", "m1", "Biscuit is my beagle.")));
    EXPECT_EQ(h.server->stats()["requests"].get<int>(), requests);
    EXPECT_EQ(ok(h.system->all_memories()).size(), 1u);
}

TEST(Notes, AReopenedStoreKeepsNotesLinksAndIndex) {
    test::TempDir dir;
    auto open = [&](fake_llm::FakeLlmServer& server, std::unique_ptr<llm::LlmClient>& client,
                    const std::string& spec = "notes") {
        llm::ClientOptions client_options;
        client_options.base_url = server.base_url();
        client_options.max_schema_retries = 0;
        client_options.max_retries = 0;
        client = ok(llm::make_openai_client(client_options));
        SystemContext context;
        context.storage_dir = dir.path();
        context.services.client = client.get();
        context.services.model = "scripted";
        return ok(NotesSystem::create(ok(Spec::parse(spec)), context));
    };
    fake_llm::ServerOptions options;
    options.script = script_of({
        {k_write, written("Biscuit is Dana's beagle.", "Dana's pet.")},
        {k_write, written("Biscuit hides under the bed during thunderstorms.")},
        {k_link, linked({1}, {{1, "Dana's beagle who fears storms.", {}}})},
    });
    auto server = ok(fake_llm::FakeLlmServer::start(std::move(options)));
    std::unique_ptr<llm::LlmClient> client;
    {
        auto system = open(*server, client);
        ok(system->store_conversation(said("s1", "m1", "Biscuit is my beagle.")));
        ok(system->store_conversation(said("s2", "m2", "Biscuit hides under the bed when it storms.")));
    }
    {
        auto system = open(*server, client);
        auto& notes = dynamic_cast<NotesSystem&>(*system);
        EXPECT_EQ(ok(notes.links("note-1")), std::vector<std::string>{"note-2"});
        const auto hits = test::ids_of(ok(system->retrieve_memories("Biscuit storms", {}, 10)));
        EXPECT_EQ(hits.size(), 2u);
        EXPECT_EQ(std::set<std::string>(hits.begin(), hits.end()).size(), 2u);
    }
    // Another embedding size cannot reuse the stored vectors: the index is rebuilt from the notes as
    // they are now (the evolved context included), one entry per note.
    auto system = open(*server, client, "notes:dim=64");
    const auto top = ok(system->retrieve_memories("fears", {}, 1));
    ASSERT_EQ(top.size(), 1u);
    EXPECT_EQ(top[0].memory.id, "note-1");
    EXPECT_EQ(ok(system->retrieve_memories("Biscuit storms", {}, 10)).size(), 2u);
    ok(system->reset());
    EXPECT_TRUE(ok(system->all_memories()).empty());
    EXPECT_TRUE(ok(system->retrieve_memories("Biscuit", {}, 5)).empty());
}

}  // namespace
}  // namespace memfail::memory
