// SPDX-License-Identifier: MIT
// The oracle reference system on a small hand-built scenario, one test per stage.
#include <algorithm>

#include <gtest/gtest.h>

#include <memfail/memory/memory_system.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::ids_of;
using test::ok;

data::EvidenceFact fact(std::string id, std::string text, std::vector<std::string> message_ids) {
    return {std::move(id), std::move(text), std::move(message_ids), {}, {}, true};
}

data::Probe probe(std::string id, std::string after, std::string question,
                  std::vector<data::EvidenceFact> evidence) {
    data::Probe p;
    p.id = std::move(id);
    p.after_session = std::move(after);
    p.question = std::move(question);
    p.evidence = std::move(evidence);
    p.kind = p.evidence.empty() ? data::ProbeKind::abstain : data::ProbeKind::open;
    return p;
}

// Two sessions; facts f1 and f4 share message m1, fact f2 is split over m3 and m7 (two sessions).
data::Scenario scenario() {
    data::Scenario s;
    s.id = "oracle-test";
    s.suite = "memfail";
    s.dataset = "hand_written";
    s.sessions = {
        test::session("s1", "2026-03-01T09:00:00Z",
                      {test::user("m1", "My sister Priya moved to Lisbon last spring. These days she "
                                        "works as a marine biologist at the aquarium."),
                       test::assistant("m2", "What an exciting change for her!"),
                       test::user("m3", "I only drink coffee when it is raining.")}),
        test::session("s2", "2026-03-08T18:30:00Z",
                      {test::user("m4", "Priya adopted a grey cat called Miso."),
                       test::assistant("m5", "Miso is a lovely name for a cat."),
                       test::user("m7", "Otherwise I stick to green tea.")}),
    };
    const auto f1 = fact("f1", "The user's sister Priya lives in Lisbon.", {"m1"});
    const auto f2 = fact("f2", "The user drinks coffee only on rainy days and green tea otherwise",
                         {"m3", "m7"});
    const auto f3 = fact("f3", "Priya's cat is called Miso.", {"m4"});
    const auto f4 = fact("f4", "Priya works as a marine biologist.", {"m1"});
    s.probes = {
        probe("p1", "s1", "Where does my sister live?", {f1}),
        probe("p2", "s2", "What do I drink when it is sunny?", {f2}),
        probe("p3", "s2", "What is Priya's cat called, and what is her job?", {f3, f4}),
        probe("p4", "s2", "What is my brother's name?", {}),
        // The same question asked at two checkpoints with different evidence.
        probe("p5", "s1", "What do I know about Priya?", {f1}),
        probe("p6", "s2", "What do I know about Priya?", {f1, f3, f4}),
    };
    return s;
}

std::unique_ptr<MemorySystem> make_oracle(const std::string& spec, const data::Scenario& truth) {
    auto system = ok(make_memory_system(spec, {}));
    EXPECT_TRUE(system->capabilities().uses_ground_truth);
    system->observe_ground_truth(truth);
    return system;
}

void store_all(MemorySystem& system, const data::Scenario& s) {
    for (const data::Session& session : s.sessions) ok(system.store_conversation(session));
}

TEST(Oracle, StageAllServesGoldFactsWhateverK) {
    const data::Scenario truth = scenario();
    auto oracle = make_oracle("oracle", truth);
    EXPECT_TRUE(oracle->capabilities().provenance);

    const auto memories = ok(oracle->all_memories());
    EXPECT_EQ(ids_of(memories),
              (std::vector<std::string>{"oracle:f1", "oracle:f2", "oracle:f3", "oracle:f4"}));
    EXPECT_EQ(memories[1].text, "The user drinks coffee only on rainy days and green tea otherwise");
    EXPECT_EQ(memories[1].sources, (std::vector<std::string>{"m3", "m7"}));
    EXPECT_EQ(memories[2].created_at, "2026-03-08T18:30:00Z");

    store_all(*oracle, truth);  // stores nothing from the conversation
    EXPECT_EQ(ids_of(ok(oracle->all_memories())), ids_of(memories));

    const auto hits = ok(oracle->retrieve_memories("What is Priya's cat called, and what is her job?", {}, 1));
    EXPECT_EQ(ids_of(hits), (std::vector<std::string>{"oracle:f3", "oracle:f4"}));
    EXPECT_TRUE(ok(oracle->retrieve_memories("What is my brother's name?", {}, 5)).empty());
    EXPECT_TRUE(ok(oracle->retrieve_memories("Where does my sister work?", {}, 5)).empty());
}

TEST(Oracle, RespectKCutsToTopK) {
    const data::Scenario truth = scenario();
    auto oracle = make_oracle("oracle:respect_k=true", truth);
    EXPECT_EQ(ids_of(ok(oracle->retrieve_memories("What is Priya's cat called, and what is her job?", {}, 1))),
              (std::vector<std::string>{"oracle:f3"}));
}

TEST(Oracle, RepeatedQuestionFollowsTheLatestCheckpoint) {
    const data::Scenario truth = scenario();
    auto oracle = make_oracle("oracle", truth);
    ok(oracle->store_conversation(truth.sessions[0]));
    EXPECT_EQ(ids_of(ok(oracle->retrieve_memories("What do I know about Priya?", {}, 5))),
              (std::vector<std::string>{"oracle:f1"}));
    ok(oracle->store_conversation(truth.sessions[1]));
    EXPECT_EQ(ids_of(ok(oracle->retrieve_memories("What do I know about Priya?", {}, 5))),
              (std::vector<std::string>{"oracle:f1", "oracle:f3", "oracle:f4"}));
}

TEST(Oracle, StageRetrievalReturnsExactlyTheSourcedMemories) {
    const data::Scenario truth = scenario();
    auto oracle = make_oracle("oracle:stage=retrieval,over.chunk=sentence", truth);
    EXPECT_EQ(oracle->spec(),
              "oracle:over=verbatim,over.chunk=sentence,over.retriever=bm25,over.roles=all,"
              "respect_k=false,stage=retrieval");
    store_all(*oracle, truth);

    // Real storage: the inner system holds every sentence of the conversation.
    const auto memories = ok(oracle->all_memories());
    EXPECT_EQ(memories.size(), 7U);
    EXPECT_EQ(memories[0].text, "My sister Priya moved to Lisbon last spring.");

    const std::string question = "What is Priya's cat called, and what is her job?";
    const auto hits = ok(oracle->retrieve_memories(question, {}, 1));
    EXPECT_EQ(ids_of(hits), (std::vector<std::string>{"m1#0", "m1#1", "m4#0"}));
    // Exactly the memories whose sources meet the evidence messages, in all_memories order.
    std::vector<std::string> expected;
    for (const Memory& m : memories)
        if (m.sources.at(0) == "m1" || m.sources.at(0) == "m4") expected.push_back(m.id);
    EXPECT_EQ(ids_of(hits), expected);

    // A fact split over two sessions brings both halves.
    EXPECT_EQ(ids_of(ok(oracle->retrieve_memories("What do I drink when it is sunny?", {}, 1))),
              (std::vector<std::string>{"m3#0", "m7#0"}));
    EXPECT_TRUE(ok(oracle->retrieve_memories("What is my brother's name?", {}, 5)).empty());

    auto capped = make_oracle("oracle:stage=retrieval,over.chunk=sentence,respect_k=true", truth);
    store_all(*capped, truth);
    EXPECT_EQ(ids_of(ok(capped->retrieve_memories(question, {}, 2))),
              (std::vector<std::string>{"m1#0", "m1#1"}));

    ok(oracle->reset());
    EXPECT_TRUE(ok(oracle->all_memories()).empty());
    EXPECT_TRUE(ok(oracle->retrieve_memories(question, {}, 5)).empty());
}

TEST(Oracle, StageSummaryFeedsTheInnerSystemGoldFacts) {
    const data::Scenario truth = scenario();
    auto oracle = make_oracle("oracle:stage=summary,over.chunk=sentence", truth);
    ok(oracle->store_conversation(truth.sessions[0]));

    auto texts = [&] {
        std::vector<std::string> out;
        for (const Memory& m : ok(oracle->all_memories())) out.push_back(m.text);
        return out;
    };
    // Session 1 states f1 and f4 (both at m1) and the first half of f2 (m3).
    EXPECT_EQ(texts(), (std::vector<std::string>{
                           "The user's sister Priya lives in Lisbon.",
                           "Priya works as a marine biologist.",
                           "The user drinks coffee only on rainy days and green tea otherwise"}));
    auto memories = ok(oracle->all_memories());
    EXPECT_EQ(ids_of(memories), (std::vector<std::string>{"m1#0", "m1#1", "m3#0"}));
    EXPECT_EQ(memories[0].sources, (std::vector<std::string>{"m1"}));
    EXPECT_EQ(memories[0].created_at, "2026-03-01T09:00:00Z");

    ok(oracle->store_conversation(truth.sessions[1]));
    memories = ok(oracle->all_memories());
    EXPECT_EQ(ids_of(memories), (std::vector<std::string>{"m1#0", "m1#1", "m3#0", "m4#0", "m7#0"}));
    for (const Memory& m : memories) EXPECT_EQ(m.text.find("exciting"), std::string::npos) << m.text;

    // Retrieval stays real: BM25 over the stored facts, cut to k.
    const auto hits = ok(oracle->retrieve_memories("What is Priya's cat called?", {}, 1));
    ASSERT_EQ(hits.size(), 1U);
    EXPECT_EQ(hits[0].memory.text, "Priya's cat is called Miso.");
}

TEST(Oracle, StageSummaryJoinsFactsOfOneMessage) {
    const data::Scenario truth = scenario();
    auto oracle = make_oracle("oracle:stage=summary", truth);  // inner chunk=turn
    ok(oracle->store_conversation(truth.sessions[0]));
    const auto memories = ok(oracle->all_memories());
    ASSERT_EQ(memories.size(), 2U);
    EXPECT_EQ(memories[0].id, "m1#0");
    EXPECT_EQ(memories[0].text,
              "The user's sister Priya lives in Lisbon. Priya works as a marine biologist.");
}

TEST(Oracle, RequiresProvenanceAndPassesInnerOptions) {
    const data::Scenario truth = scenario();
    auto oracle = make_oracle("oracle:stage=summary,over=verbatim,over.roles=user", truth);
    EXPECT_EQ(oracle->spec(),
              "oracle:over=verbatim,over.chunk=turn,over.retriever=bm25,over.roles=user,"
              "respect_k=false,stage=summary");
    store_all(*oracle, truth);
    // The facts all sit in user messages here, so roles=user keeps them all.
    EXPECT_EQ(ok(oracle->all_memories()).size(), 4U);
}

}  // namespace
}  // namespace memfail::memory
