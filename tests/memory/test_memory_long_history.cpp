// SPDX-License-Identifier: MIT
// facts, graph and notes after a long history: retired facts and invalidated edges stay in their
// vector and BM25 indexes, and retrieval must look past however many of them rank first without
// asking the index for all of them; fact ids stay unique across rollbacks and reopening; a note
// linked to many others contributes its lowest-numbered links, read through the derived link table,
// which a reopened store rebuilds. The model is an in-process rule client, so hundreds of sessions
// take milliseconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include <memfail/core/text.hpp>
#include <memfail/store/database.hpp>
#include <memfail/memory/builtin/system_store.hpp>
#include <memfail/memory/memory_system.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using nlohmann::json;
using test::ok;

// Answers each schema with a rule over the request's last message; embeddings are a fixed vector
// per text (by hash). `embeddings_left`, when not negative, is how many embedding calls succeed
// before the rest fail.
class RuleModel final : public llm::LlmClient {
public:
    std::map<std::string, std::function<json(const std::string&)>> rules;
    int embeddings_left = -1;

    Result<llm::ChatReply> chat(const llm::ChatRequest& request) override {
        const auto rule = rules.find(request.schema ? request.schema->name : "");
        if (rule == rules.end()) return make_error(ErrorKind::protocol, "no rule for this schema");
        llm::ChatReply reply;
        reply.json = rule->second(request.messages.back().content);
        reply.content = reply.json->dump();
        return reply;
    }
    Result<llm::EmbeddingReply> embed(const llm::EmbeddingRequest& request) override {
        if (embeddings_left == 0) return make_error(ErrorKind::network, "embeddings are down");
        if (embeddings_left > 0) --embeddings_left;
        llm::EmbeddingReply reply;
        for (const auto& text : request.inputs) {
            std::vector<float> v(16, 0.0f);
            v[std::hash<std::string>{}(text) % 16] = 1.0f;
            reply.vectors.push_back(std::move(v));
        }
        return reply;
    }
    std::string identity() const override { return "rules://test"; }
};

SystemContext context_of(RuleModel& model, const std::string& dir = "", const std::string& embed_model = "") {
    SystemContext c;
    c.storage_dir = dir;
    c.services.client = &model;
    c.services.model = "rules";
    c.services.embed_model = embed_model;
    return c;
}

// "[1] (user) text" -> "text": the one message of a one-message conversation.
std::string said_in(const std::string& rendered) {
    const auto at = rendered.find("(user) ");
    return at == std::string::npos ? "" : std::string(text::trim(rendered.substr(at + 7)));
}

data::Session one_message(int n, const std::string& text) {
    return test::session("s" + std::to_string(n), "2026-03-01T09:00:00Z",
                         {test::user("m" + std::to_string(n), text)});
}

// facts whose model extracts the message as one fact, and updates the first memory shown when both
// are about Priya's salary (adding otherwise).
RuleModel salary_model() {
    RuleModel model;
    model.rules["memfail_facts_extract"] = [](const std::string& user) {
        return json{{"facts", json::array({json{{"text", said_in(user)}, {"messages", json::array({1})}}})}};
    };
    model.rules["memfail_facts_decide"] = [](const std::string& user) {
        const auto fact_at = user.find("NEW FACTS:");
        const bool salary = user.find("salary", fact_at) != std::string::npos;
        const std::string label = "EXISTING MEMORIES:\n0. ";
        const auto first = user.find(label);
        const bool shown_salary =
            first != std::string::npos && first < fact_at &&
            user.substr(first, user.find('\n', first + label.size()) - first).find("salary") != std::string::npos;
        if (salary && shown_salary)
            return json{{"decisions", json::array({json{{"fact", 1}, {"event", "UPDATE"}, {"memory", 0}, {"text", ""}}})}};
        return json{{"decisions", json::array({json{{"fact", 1}, {"event", "ADD"}, {"memory", -1}, {"text", ""}}})}};
    };
    return model;
}

TEST(LongHistory, FactsRetrievalLooksPastManyRetiredRows) {
    RuleModel model = salary_model();
    auto system = ok(make_memory_system("facts", context_of(model)));
    int n = 0;
    const std::vector<std::string> others = {"Marco keeps bees on his roof.", "Lena plays the cello.",
                                             "Omar runs a bakery in Ghent.", "Hana is learning Korean.",
                                             "Felix owns a red kayak."};
    for (const auto& other : others) ok(system->store_conversation(one_message(++n, other)));
    // 60 raises: each retires the row before it, so 59 retired rows are the nearest to the query.
    for (int euros = 2000; euros < 2600; euros += 10)
        ok(system->store_conversation(one_message(++n, "Priya's salary is " + std::to_string(euros) + " euros.")));
    ASSERT_EQ(ok(system->all_memories()).size(), others.size() + 1);

    const auto hits = ok(system->retrieve_memories("What is Priya's salary?", {}, 5));
    ASSERT_EQ(hits.size(), 5u);  // five live memories, found past the retired rows
    EXPECT_EQ(hits[0].memory.text, "Priya's salary is 2590 euros.");
    for (const auto& hit : hits) EXPECT_EQ(std::count_if(hits.begin(), hits.end(), [&](const Hit& h) {
                                              return h.memory.id == hit.memory.id;
                                          }), 1);
    for (const auto& hit : hits) EXPECT_TRUE(hit.memory.text.find("salary") == std::string::npos ||
                                             hit.memory.text == "Priya's salary is 2590 euros.");
    // Asking for more than is live returns every live memory once.
    EXPECT_EQ(ok(system->retrieve_memories("What is Priya's salary?", {}, 50)).size(), others.size() + 1);
}

TEST(LongHistory, FactIdsStayUniqueAcrossARollbackAndReopening) {
    test::TempDir dir;
    RuleModel model = salary_model();
    {
        auto system = ok(make_memory_system("facts", context_of(model, dir.path(), "rule-embed")));
        ok(system->store_conversation(one_message(1, "Marco keeps bees on his roof.")));
        // This session's similar-memory search works, its fact is decided and added, and then
        // embedding it for the index fails: the session is rolled back whole, and the id it took
        // is free again.
        model.embeddings_left = 1;
        EXPECT_FALSE(system->store_conversation(one_message(2, "Lena plays the cello.")).has_value());
        EXPECT_EQ(model.embeddings_left, 0);
        model.embeddings_left = -1;
        ok(system->store_conversation(one_message(3, "Omar runs a bakery in Ghent.")));
        EXPECT_EQ(test::ids_of(ok(system->all_memories())), (std::vector<std::string>{"fact-1", "fact-2"}));
    }
    auto reopened = ok(make_memory_system("facts", context_of(model, dir.path(), "rule-embed")));
    ok(reopened->store_conversation(one_message(4, "Hana is learning Korean.")));
    EXPECT_EQ(test::ids_of(ok(reopened->all_memories())),
              (std::vector<std::string>{"fact-1", "fact-2", "fact-3"}));
}

TEST(LongHistory, GraphRetrievalLooksPastManyInvalidatedEdges) {
    RuleModel model;
    // Every message is one fact linking Priya and Northwind; a newer one closes every older one.
    model.rules["memfail_graph_extract"] = [](const std::string& user) {
        return json{{"entities", json::array({json{{"name", "Priya"}, {"type", "person"}},
                                              json{{"name", "Northwind"}, {"type", "organisation"}}})},
                    {"relations", json::array({json{{"source", 1},
                                                    {"target", 2},
                                                    {"relation", "EARNS_AT"},
                                                    {"fact", said_in(user)},
                                                    {"messages", json::array({1})}}})}};
    };
    model.rules["memfail_graph_invalidate"] = [](const std::string& user) {
        json numbers = json::array();
        // (Appended piecewise: GCC 12 warns falsely on "[" + std::to_string(n) + ...)
        for (int n = 1;; ++n) {
            std::string label(1, '[');
            label += std::to_string(n);
            label += "] (";
            if (user.find(label) == std::string::npos) break;
            numbers.push_back(n);
        }
        return json{{"invalidated", numbers}};
    };
    model.rules["memfail_graph_resolve"] = [](const std::string&) { return json{{"match", -1}}; };
    auto system = ok(make_memory_system("graph", context_of(model)));
    int n = 0;
    // 120 raises: more invalidated edges match the query than the depth the ranking looks at.
    for (int euros = 2000; euros < 3200; euros += 10)
        ok(system->store_conversation(
            one_message(++n, "Priya earns " + std::to_string(euros) + " euros a month at Northwind.")));
    const auto memories = ok(system->all_memories());
    ASSERT_EQ(memories.size(), 1u);

    const auto hits = ok(system->retrieve_memories("How much does Priya earn at Northwind?", {}, 5));
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].memory.id, memories[0].id);
    EXPECT_EQ(hits[0].memory.text, "Priya earns 3190 euros a month at Northwind.");
    // It was ranked by the indexes (a fused score), not only reached by the walk from Priya.
    EXPECT_GT(hits[0].score, 0.0);
}

// notes whose model writes each message as it is and links the new note to every note shown.
RuleModel linking_model() {
    RuleModel model;
    model.rules["memfail_notes_write"] = [](const std::string& user) {
        const std::string marker = "THE MESSAGE TO TAKE A NOTE ON:\n(user) ";
        const auto at = user.find(marker);
        const std::string content = at == std::string::npos ? "" : std::string(text::trim(user.substr(at + marker.size())));
        return json{{"content", content}, {"keywords", json::array()}, {"tags", json::array()}, {"context", ""}};
    };
    model.rules["memfail_notes_link"] = [](const std::string& user) {
        json numbers = json::array();
        for (int n = 1;; ++n) {
            std::string label = "\n[";
            label += std::to_string(n);
            label += "] ";
            if (user.find(label) == std::string::npos) break;
            numbers.push_back(n);
        }
        return json{{"links", numbers}, {"updates", json::array()}};
    };
    return model;
}

const std::vector<std::string> k_topics = {
    "Priya keeps bees on the roof of her flat in Ghent.", "Marco repairs old bicycles on weekends.",
    "Lena plays the cello in a string quartet.",          "Omar bakes sourdough every Sunday morning.",
    "Hana is learning Korean from television dramas.",    "Felix paddles his red kayak along the canal."};

TEST(LongHistory, ABusyNoteContributesItsLowestNumberedLinks) {
    RuleModel model = linking_model();
    // Every note is shown all earlier ones and links to each: a complete graph of 30 notes, one of
    // them (the 12th) about bees.
    auto system = ok(make_memory_system("notes:neighbours=50", context_of(model)));
    for (int n = 1; n <= 30; ++n)
        ok(system->store_conversation(one_message(
            n, n == 12 ? k_topics[0] : "The weather on day " + std::to_string(n) + " was mild and grey.")));

    // The bee note is the best hit by far; its 29 links all score 0.9 of it, above the weak direct
    // hits, and tie, so the two lowest-numbered linked notes follow it.
    const auto hits = ok(system->retrieve_memories("Who keeps bees on a roof in Ghent?", {}, 3));
    ASSERT_EQ(hits.size(), 3u);
    EXPECT_EQ(hits[0].memory.id, "note-12");
    EXPECT_EQ(hits[1].memory.id, "note-1");
    EXPECT_EQ(hits[2].memory.id, "note-2");
    EXPECT_DOUBLE_EQ(hits[1].score, hits[2].score);
    EXPECT_LT(hits[1].score, hits[0].score);
}

TEST(LongHistory, AReopenedNotesStoreRebuildsItsLinksBySeq) {
    test::TempDir dir;
    RuleModel model = linking_model();
    std::vector<std::string> before;
    {
        auto system = ok(make_memory_system("notes", context_of(model, dir.path())));
        int n = 0;
        for (const auto& topic : k_topics) ok(system->store_conversation(one_message(++n, topic)));
        before = test::ids_of(ok(system->retrieve_memories("Who keeps bees on a roof in Ghent?", {}, 4)));
    }
    {
        // A store written before the derived table existed has none of its rows.
        auto db = ok(store::Database::open(memory::store_file_path(dir.path(), "memory")));
        ok(db.exec("DELETE FROM notes_link_seqs;"));
    }
    auto reopened = ok(make_memory_system("notes", context_of(model, dir.path())));
    EXPECT_EQ(test::ids_of(ok(reopened->retrieve_memories("Who keeps bees on a roof in Ghent?", {}, 4))), before);
    EXPECT_EQ(before.size(), 4u);
}

}  // namespace
}  // namespace memfail::memory
