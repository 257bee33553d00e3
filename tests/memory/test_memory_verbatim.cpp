// SPDX-License-Identifier: MIT
// The verbatim memory system: chunking, provenance, idempotence, persistence, reset and k.
#include <gtest/gtest.h>

#include <memfail/memory/builtin/system_store.hpp>
#include <memfail/memory/memory_system.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::ids_of;
using test::ok;

data::Session first_session() {
    return test::session(
        "s1", "2026-03-01T09:00:00Z",
        {test::user("m1", "My sister Priya moved to Lisbon. She works at the aquarium there!"),
         test::assistant("m2", "That sounds like a big change. Does she like the city?"),
         test::user("m3", "She loves it, although she misses the rain in Glasgow.")});
}

data::Session second_session() {
    return test::session(
        "s2", "2026-03-08T18:30:00Z",
        {test::user("m4", "Our dog Biscuit hides under the bed during thunderstorms."),
         test::assistant("m5", "   "),  // nothing to store
         test::assistant("m6", "Poor Biscuit. A snug crate can help him feel safe.")});
}

std::unique_ptr<MemorySystem> make(const std::string& spec, const SystemContext& context = {}) {
    return ok(make_memory_system(spec, context));
}

TEST(Verbatim, TurnChunkingStoresOneMemoryPerMessage) {
    auto system = make("verbatim");
    ok(system->store_conversation(first_session()));
    ok(system->store_conversation(second_session()));
    const auto memories = ok(system->all_memories());
    EXPECT_EQ(ids_of(memories), (std::vector<std::string>{"m1#0", "m2#0", "m3#0", "m4#0", "m6#0"}));
    EXPECT_EQ(memories[0].text, "My sister Priya moved to Lisbon. She works at the aquarium there!");
    EXPECT_EQ(memories[0].sources, (std::vector<std::string>{"m1"}));
    EXPECT_EQ(memories[0].created_at, "2026-03-01T09:00:00Z");
    EXPECT_EQ(memories[0].updated_at, "2026-03-01T09:00:00Z");
    EXPECT_EQ(memories[3].created_at, "2026-03-08T18:30:00Z");
    EXPECT_TRUE(system->capabilities().provenance);
    EXPECT_TRUE(system->capabilities().idempotent_store);
    EXPECT_FALSE(system->capabilities().uses_ground_truth);
}

TEST(Verbatim, SentenceChunkingStoresOneMemoryPerSentence) {
    auto system = make("verbatim:chunk=sentence");
    ok(system->store_conversation(first_session()));
    const auto memories = ok(system->all_memories());
    EXPECT_EQ(ids_of(memories), (std::vector<std::string>{"m1#0", "m1#1", "m2#0", "m2#1", "m3#0"}));
    EXPECT_EQ(memories[0].text, "My sister Priya moved to Lisbon.");
    EXPECT_EQ(memories[1].text, "She works at the aquarium there!");
    EXPECT_EQ(memories[1].sources, (std::vector<std::string>{"m1"}));
    EXPECT_EQ(memories[3].sources, (std::vector<std::string>{"m2"}));
}

TEST(Verbatim, UserRolesSkipAssistantMessages) {
    auto system = make("verbatim:roles=user");
    ok(system->store_conversation(first_session()));
    ok(system->store_conversation(second_session()));
    EXPECT_EQ(ids_of(ok(system->all_memories())), (std::vector<std::string>{"m1#0", "m3#0", "m4#0"}));
}

TEST(Verbatim, StoringTwiceKeepsOneCopy) {
    for (const char* spec : {"verbatim", "verbatim:chunk=sentence,retriever=hashed,dim=64"}) {
        auto system = make(spec);
        ok(system->store_conversation(first_session()));
        const auto once = ok(system->all_memories());
        const auto hits_once = ok(system->retrieve_memories("Where does Priya live?", {}, 10));
        ok(system->store_conversation(first_session()));
        EXPECT_EQ(ids_of(ok(system->all_memories())), ids_of(once)) << spec;
        // The retriever index did not grow duplicates either.
        EXPECT_EQ(ids_of(ok(system->retrieve_memories("Where does Priya live?", {}, 10))),
                  ids_of(hits_once))
            << spec;
    }
}

TEST(Verbatim, Bm25RetrievesTheRelevantTurnAndRespectsK) {
    auto system = make("verbatim");
    ok(system->store_conversation(first_session()));
    ok(system->store_conversation(second_session()));
    const auto hits = ok(system->retrieve_memories("Why does Biscuit hide during thunderstorms?", {}, 1));
    ASSERT_EQ(hits.size(), 1U);
    EXPECT_EQ(hits[0].memory.id, "m4#0");
    EXPECT_EQ(hits[0].memory.sources, (std::vector<std::string>{"m4"}));
    EXPECT_EQ(hits[0].memory.created_at, "2026-03-08T18:30:00Z");

    EXPECT_EQ(ok(system->retrieve_memories("Biscuit Priya Lisbon rain", {}, 2)).size(), 2U);
    EXPECT_EQ(ok(system->retrieve_memories("Biscuit Priya Lisbon rain", {}, 50)).size(), 4U);
    EXPECT_TRUE(ok(system->retrieve_memories("Biscuit", {}, 0)).empty());
    EXPECT_TRUE(ok(system->retrieve_memories("", {}, 5)).empty());
    EXPECT_TRUE(ok(system->retrieve_memories("what is it?", {}, 5)).empty());
}

TEST(Verbatim, HashedRetrievesTheRelevantSentence) {
    auto system = make("verbatim:chunk=sentence,retriever=hashed,dim=256");
    ok(system->store_conversation(first_session()));
    ok(system->store_conversation(second_session()));
    EXPECT_EQ(ok(system->retrieve_memories("Is the dog scared of thunder?", {}, 3)).at(0).memory.id,
              "m4#0");
    EXPECT_EQ(ok(system->retrieve_memories("What is Priya's job at the aquarium?", {}, 3)).at(0).memory.id,
              "m1#1");
    EXPECT_EQ(ok(system->retrieve_memories("Biscuit", {}, 2)).size(), 2U);
}

TEST(Verbatim, ResetEmptiesMemoriesAndIndex) {
    for (const char* spec : {"verbatim", "verbatim:retriever=hashed"}) {
        auto system = make(spec);
        ok(system->store_conversation(first_session()));
        ok(system->reset());
        EXPECT_TRUE(ok(system->all_memories()).empty()) << spec;
        EXPECT_TRUE(ok(system->retrieve_memories("Priya Lisbon", {}, 5)).empty()) << spec;
        // Usable again afterwards.
        ok(system->store_conversation(second_session()));
        EXPECT_EQ(ok(system->retrieve_memories("Biscuit thunderstorms", {}, 5)).at(0).memory.id, "m4#0")
            << spec;
    }
}

TEST(Verbatim, PersistsAcrossReopening) {
    for (const char* spec : {"verbatim:chunk=sentence", "verbatim:chunk=sentence,retriever=hashed,dim=128"}) {
        test::TempDir dir;
        const SystemContext context{dir.path() + "/nested/store", "alice"};
        std::vector<std::string> stored;
        std::vector<std::string> retrieved;
        {
            auto system = make(spec, context);
            ok(system->store_conversation(first_session()));
            ok(system->store_conversation(second_session()));
            stored = ids_of(ok(system->all_memories()));
            retrieved = ids_of(ok(system->retrieve_memories("Biscuit hides from thunderstorms", {}, 3)));
        }
        EXPECT_TRUE(std::filesystem::exists(memory::store_file_path(dir.path() + "/nested/store", "alice"))) << spec;
        auto reopened = make(spec, context);
        EXPECT_EQ(ids_of(ok(reopened->all_memories())), stored) << spec;
        EXPECT_EQ(ids_of(ok(reopened->retrieve_memories("Biscuit hides from thunderstorms", {}, 3))),
                  retrieved)
            << spec;
        EXPECT_EQ(retrieved.at(0), "m4#0") << spec;

        // Another store name in the same folder is a separate, empty store.
        auto other = make(spec, SystemContext{context.storage_dir, "bob"});
        EXPECT_TRUE(ok(other->all_memories()).empty()) << spec;
    }
}

TEST(Verbatim, ReopeningWithAnotherRetrieverReindexes) {
    test::TempDir dir;
    const SystemContext context{dir.path(), "memory"};
    {
        auto system = make("verbatim", context);
        ok(system->store_conversation(first_session()));
    }
    {
        auto hashed = make("verbatim:retriever=hashed,dim=64", context);
        EXPECT_EQ(ok(hashed->retrieve_memories("Priya aquarium Lisbon", {}, 1)).at(0).memory.id, "m1#0");
        ok(hashed->store_conversation(second_session()));
    }
    // Back to BM25: the rows stored meanwhile must be found too.
    auto bm25 = make("verbatim", context);
    EXPECT_EQ(ok(bm25->retrieve_memories("Biscuit thunderstorms", {}, 1)).at(0).memory.id, "m4#0");
}

TEST(Verbatim, ReopeningWithOtherChunkingIsRefused) {
    test::TempDir dir;
    const SystemContext context{dir.path(), "memory"};
    {
        auto system = make("verbatim", context);
        ok(system->store_conversation(first_session()));
    }
    auto refused = make_memory_system("verbatim:chunk=sentence", context);
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().kind, ErrorKind::invalid_input);
    EXPECT_NE(refused.error().message.find("chunk=turn"), std::string::npos) << refused.error().message;
    EXPECT_FALSE(make_memory_system("verbatim:roles=user", context).has_value());
}

TEST(Verbatim, RetrieveNeverWrites) {
    test::TempDir dir;
    auto system = make("verbatim:retriever=hashed", SystemContext{dir.path(), "memory"});
    ok(system->store_conversation(first_session()));
    const auto before = ok(system->all_memories());
    for (int i = 0; i < 3; ++i) (void)ok(system->retrieve_memories("Priya", first_session().messages, 5));
    EXPECT_EQ(ids_of(ok(system->all_memories())), ids_of(before));
}

}  // namespace
}  // namespace memfail::memory
