// SPDX-License-Identifier: MIT
// ledger (the bi-temporal fact ledger, the write-integrity suite's reference system). With
// extract=oracle on a small hand-written memfail/2 scenario (an employer that changes twice, an
// address retracted, a one-off instruction that should not persist, an assistant's contradicting
// summary as a distractor): only current values are held, with their sources; the history lists
// every value in order; state_as_of gives the value valid at a date; a retracted value is neither
// held nor retrieved by any retriever; the one-off is gone after its session; history=off
// overwrites and refuses history and as-of; the store survives reopening; re-storing changes
// nothing. With extract=model against the extractive stand-in (fake-llm in-process): records are
// extracted with their sources, an update closes the old record, an assistant's summary does not
// replace what the user stated, a retraction closes a record; without a system model it refuses.
// The stand-in's rules for the ledger prompt are checked on their own too.
#include <gtest/gtest.h>

#include <algorithm>

#include <memfail/llm/openai_client.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/llm/schema_check.hpp>
#include <memfail/memory/memory_system.hpp>

#include <extractive.hpp>
#include <fake_llm.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using nlohmann::json;
using test::ok;

constexpr const char* k_t1 = "2026-01-10T09:00:00Z";
constexpr const char* k_t2 = "2026-02-10T09:00:00Z";
constexpr const char* k_t3 = "2026-03-10T09:00:00Z";

data::ValueRecord value(json v, const char* as_of, std::string message,
                        data::Authority authority = data::Authority::user_stated,
                        std::vector<std::string> mentions = {}) {
    data::ValueRecord r;
    r.value = std::move(v);
    r.as_of = as_of;
    r.message_id = std::move(message);
    r.authority = authority;
    r.mentions = std::move(mentions);
    return r;
}

// Three sessions: the employer changes in each, the address is retracted in the third, a one-off
// reply language holds until the end of the second, the budget (a number) never changes, and the
// assistant's wrong summary of the employer is a distractor.
data::Scenario scenario() {
    data::Scenario s;
    s.format = data::k_format_v2;
    s.id = "ledger-test";
    s.suite = "writ";
    s.dataset = "ledger_unit";
    s.sessions = {
        test::session("s1", k_t1,
                      {test::user("m1", "I work at Acme Corp."), test::assistant("m2", "Noted."),
                       test::user("m3", "I live at 12 Oak Street."),
                       test::user("m4", "Until tomorrow, please answer me in French."),
                       test::user("m5", "My budget is 5000 dollars.")}),
        test::session("s2", k_t2,
                      {test::user("m6", "I now work at Globex."),
                       test::assistant("m7", "So your employer is Initech now.")}),
        test::session("s3", k_t3,
                      {test::user("m8", "Please forget my address."),
                       test::user("m9", "Another change: I work at Umbrella Labs.")}),
    };
    data::LedgerEvent employer;
    employer.id = "employer";
    employer.type = data::MemoryType::mutable_fact;
    employer.history = {value("Acme Corp", k_t1, "m1"), value("Globex", k_t2, "m6"),
                        value("Umbrella Labs", k_t3, "m9")};
    employer.value = employer.history.back().value;
    employer.introduced_in = "s1";
    employer.updated_in = "s3";
    employer.distractors = {value("Initech", k_t2, "m7", data::Authority::ai_summarized)};

    data::LedgerEvent address;
    address.id = "home_address";
    address.history = {value(json{{"street", "12 Oak Street"}, {"city", "Springfield"}}, k_t1, "m3",
                             data::Authority::user_stated, {"12 Oak Street"})};
    address.value = address.history.back().value;
    address.introduced_in = "s1";
    address.retracted_in = "s3";
    address.retracted_by = "m8";

    data::LedgerEvent language;
    language.id = "reply_language";
    language.type = data::MemoryType::work_state;
    language.history = {value("French", k_t1, "m4")};
    language.value = "French";
    language.introduced_in = "s1";
    language.should_persist = false;
    language.expires_after = "s2";

    data::LedgerEvent budget;
    budget.id = "budget";
    budget.history = {value(5000, k_t1, "m5")};
    budget.value = 5000;
    budget.introduced_in = "s1";

    s.ledger = {employer, address, language, budget};
    return s;
}

// An oracle ledger that has observed the scenario (the scenario must outlive it).
std::unique_ptr<MemorySystem> oracle_ledger(const data::Scenario& truth, const std::string& options = "",
                                            const std::string& storage_dir = "") {
    SystemContext context;
    context.storage_dir = storage_dir;
    auto system = ok(make_memory_system("ledger:extract=oracle" + options, context));
    system->observe_ground_truth(truth);
    return system;
}

void store_all(MemorySystem& system, const data::Scenario& truth) {
    for (const auto& session : truth.sessions) ok(system.store_conversation(session));
}

std::vector<std::string> texts_of(const std::vector<Memory>& memories) {
    std::vector<std::string> out;
    for (const auto& m : memories) out.push_back(m.text);
    return out;
}

const Memory* find_text(const std::vector<Memory>& memories, const std::string& text) {
    for (const auto& m : memories)
        if (m.text == text) return &m;
    return nullptr;
}

bool mentions(const std::vector<Memory>& memories, const std::string& phrase) {
    return std::any_of(memories.begin(), memories.end(),
                       [&](const Memory& m) { return m.text.find(phrase) != std::string::npos; });
}

TEST(Ledger, SpecCapabilitiesAndOptions) {
    const data::Scenario truth = scenario();
    auto system = oracle_ledger(truth);
    EXPECT_EQ(system->spec(), "ledger:extract=oracle,history=on,retriever=hybrid");
    const Capabilities caps = system->capabilities();
    EXPECT_TRUE(caps.provenance);
    EXPECT_TRUE(caps.history);
    EXPECT_TRUE(caps.as_of);
    EXPECT_TRUE(caps.idempotent_store);
    EXPECT_TRUE(caps.uses_ground_truth);
    EXPECT_EQ(ok(make_memory_system("ledger:extract=oracle,history=off,retriever=bm25", {}))->spec(),
              "ledger:extract=oracle,history=off,retriever=bm25");
    EXPECT_FALSE(make_memory_system("ledger:extract=oracle,retriever=embed", {}).has_value());
    EXPECT_FALSE(make_memory_system("ledger:extract=oracle,histroy=on", {}).has_value());
    bool listed = false;
    for (const SystemInfo& info : list_memory_systems()) {
        if (info.name != "ledger") continue;
        listed = true;
        std::vector<std::string> options;
        for (const OptionInfo& o : info.options) {
            options.push_back(o.name + "=" + o.default_value);
            EXPECT_FALSE(o.help.empty()) << o.name;
        }
        EXPECT_EQ(options, (std::vector<std::string>{"extract=model", "history=on", "retriever=hybrid", "serve=topk"}));
    }
    EXPECT_TRUE(listed);
}

TEST(Ledger, ExtractModelNeedsASystemModel) {
    auto made = make_memory_system("ledger", SystemContext{});
    ASSERT_FALSE(made.has_value());
    EXPECT_EQ(made.error().kind, ErrorKind::invalid_input);
    EXPECT_NE(made.error().message.find("--system-model"), std::string::npos);
    // The oracle needs no model, but it does need the ground truth before storage.
    auto blind = ok(make_memory_system("ledger:extract=oracle", {}));
    const auto stored = blind->store_conversation(scenario().sessions[0]);
    ASSERT_FALSE(stored.has_value());
    EXPECT_EQ(stored.error().kind, ErrorKind::invalid_input);
}

TEST(Ledger, HoldsOnlyCurrentValuesWithTheirSources) {
    const data::Scenario truth = scenario();
    auto system = oracle_ledger(truth);
    store_all(*system, truth);
    const auto memories = ok(system->all_memories());
    EXPECT_EQ(texts_of(memories), (std::vector<std::string>{"user employer: Umbrella Labs", "user budget: 5000"}));
    EXPECT_EQ(memories[0].sources, std::vector<std::string>{"m9"});
    EXPECT_EQ(memories[0].created_at, k_t3);
    EXPECT_EQ(memories[1].sources, std::vector<std::string>{"m5"});
    EXPECT_EQ(memories[1].created_at, k_t1);
    // Neither the distractor, the retracted address nor the expired one-off is held.
    EXPECT_FALSE(mentions(memories, "Initech"));
    EXPECT_FALSE(mentions(memories, "Oak Street"));
    EXPECT_FALSE(mentions(memories, "French"));
    // The same memory id throughout the employer's changes, so its history can be asked for.
    ok(system->reset());
    EXPECT_TRUE(ok(system->all_memories()).empty());
    ok(system->store_conversation(truth.sessions[0]));
    const std::string employer_id = ok(system->all_memories())[0].id;
    ok(system->store_conversation(truth.sessions[1]));
    const auto after_update = ok(system->all_memories());
    ASSERT_NE(find_text(after_update, "user employer: Globex"), nullptr);
    EXPECT_EQ(find_text(after_update, "user employer: Globex")->id, employer_id);
    // Ground-truth values are rendered from their mentions first, objects field by field otherwise.
    EXPECT_NE(find_text(after_update, "user home address: 12 Oak Street"), nullptr);
}

TEST(Ledger, ServeStateHandsBackTheWholeCurrentStateWhateverK) {
    // WRIT's oracle mode: the answerer gets every currently valid record, no retrieval cut.
    const data::Scenario truth = scenario();
    auto state = oracle_ledger(truth, ",serve=state");
    store_all(*state, truth);
    EXPECT_EQ(state->spec(), "ledger:extract=oracle,history=on,retriever=hybrid,serve=state");
    const auto all = ok(state->all_memories());
    for (int k : {1, 2, 10}) {
        const auto hits = ok(state->retrieve_memories("Where do I work?", {}, k));
        std::vector<Memory> served;
        for (const auto& h : hits) served.push_back(h.memory);
        EXPECT_EQ(texts_of(served), texts_of(all)) << "k=" << k;
    }
    // The default still cuts at k.
    auto topk = oracle_ledger(truth);
    store_all(*topk, truth);
    EXPECT_EQ(ok(topk->retrieve_memories("Where do I work?", {}, 1)).size(), 1u);
    EXPECT_FALSE(make_memory_system("ledger:extract=oracle,serve=everything", {}).has_value());
}

TEST(Ledger, HistoryListsEveryValueInOrder) {
    const data::Scenario truth = scenario();
    auto system = oracle_ledger(truth);
    ok(system->store_conversation(truth.sessions[0]));
    const auto first = ok(system->all_memories());
    const Memory* employer = find_text(first, "user employer: Acme Corp");
    const Memory* address = find_text(first, "user home address: 12 Oak Street");
    const Memory* language = find_text(first, "user reply language: French");
    ASSERT_TRUE(employer && address && language);
    const std::string employer_id = employer->id, address_id = address->id, language_id = language->id;
    for (std::size_t i = 1; i < truth.sessions.size(); ++i) ok(system->store_conversation(truth.sessions[i]));

    const auto changes = ok(system->history(employer_id));
    ASSERT_EQ(changes.size(), 3u);
    EXPECT_EQ(changes[0].event, "add");
    EXPECT_EQ(changes[0].new_text, "user employer: Acme Corp");
    EXPECT_EQ(changes[0].at, k_t1);
    EXPECT_EQ(changes[0].sources, std::vector<std::string>{"m1"});
    EXPECT_EQ(changes[1].event, "update");
    EXPECT_EQ(changes[1].old_text, "user employer: Acme Corp");
    EXPECT_EQ(changes[1].new_text, "user employer: Globex");
    EXPECT_EQ(changes[1].at, k_t2);
    EXPECT_EQ(changes[1].sources, std::vector<std::string>{"m6"});
    EXPECT_EQ(changes[2].event, "update");
    EXPECT_EQ(changes[2].old_text, "user employer: Globex");
    EXPECT_EQ(changes[2].new_text, "user employer: Umbrella Labs");
    EXPECT_EQ(changes[2].at, k_t3);
    for (const auto& c : changes) EXPECT_EQ(c.memory_id, employer_id);

    const auto withdrawn = ok(system->history(address_id));
    ASSERT_EQ(withdrawn.size(), 2u);
    EXPECT_EQ(withdrawn[0].event, "add");
    EXPECT_EQ(withdrawn[1].event, "delete");
    EXPECT_EQ(withdrawn[1].old_text, "user home address: 12 Oak Street");
    EXPECT_EQ(withdrawn[1].at, k_t3);
    EXPECT_EQ(withdrawn[1].sources, std::vector<std::string>{"m8"});

    const auto expired = ok(system->history(language_id));
    ASSERT_EQ(expired.size(), 2u);
    EXPECT_EQ(expired[1].event, "delete");
    EXPECT_EQ(expired[1].at, k_t2);  // closed at the end of the session it expires after

    const auto unknown = system->history("ledger-999");
    ASSERT_FALSE(unknown.has_value());
    EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
    EXPECT_FALSE(system->history("fact-1").has_value());
}

TEST(Ledger, StateAsOfGivesTheValueValidThen) {
    const data::Scenario truth = scenario();
    auto system = oracle_ledger(truth);
    store_all(*system, truth);
    EXPECT_TRUE(ok(system->state_as_of("2026-01-01T00:00:00Z")).empty());
    EXPECT_EQ(texts_of(ok(system->state_as_of("2026-01-20T00:00:00Z"))),
              (std::vector<std::string>{"user employer: Acme Corp", "user home address: 12 Oak Street",
                                        "user reply language: French", "user budget: 5000"}));
    EXPECT_EQ(texts_of(ok(system->state_as_of("2026-02-20T00:00:00Z"))),
              (std::vector<std::string>{"user employer: Globex", "user home address: 12 Oak Street",
                                        "user budget: 5000"}));
    EXPECT_EQ(texts_of(ok(system->state_as_of("2026-03-20T00:00:00Z"))),
              (std::vector<std::string>{"user employer: Umbrella Labs", "user budget: 5000"}));
    // A change takes effect at its own instant: valid_from <= t < valid_to.
    EXPECT_EQ(texts_of(ok(system->state_as_of(k_t2)))[0], "user employer: Globex");
    const auto then = ok(system->state_as_of("2026-01-20T00:00:00Z"));
    EXPECT_EQ(then[0].sources, std::vector<std::string>{"m1"});
}

TEST(Ledger, ARetractedValueIsNeitherHeldNorRetrieved) {
    const data::Scenario truth = scenario();
    for (const char* retriever : {"hybrid", "bm25", "hashed"}) {
        auto system = oracle_ledger(truth, std::string(",retriever=") + retriever);
        ok(system->store_conversation(truth.sessions[0]));
        const auto before = ok(system->retrieve_memories("where is my home address on Oak Street", {}, 1));
        ASSERT_EQ(before.size(), 1u) << retriever;
        EXPECT_EQ(before[0].memory.text, "user home address: 12 Oak Street") << retriever;
        EXPECT_EQ(before[0].memory.sources, std::vector<std::string>{"m3"}) << retriever;
        for (std::size_t i = 1; i < truth.sessions.size(); ++i) ok(system->store_conversation(truth.sessions[i]));
        const auto hits = ok(system->retrieve_memories("where is my home address on Oak Street", {}, 10));
        EXPECT_LE(hits.size(), 2u) << retriever;  // current records only (BM25 finds none of them here)
        for (const auto& hit : hits) {
            EXPECT_EQ(hit.memory.text.find("Oak Street"), std::string::npos) << retriever;
            EXPECT_EQ(hit.memory.text.find("Acme"), std::string::npos) << retriever;
            EXPECT_EQ(hit.memory.text.find("Initech"), std::string::npos) << retriever;
        }
        const auto employer = ok(system->retrieve_memories("which employer do I work for", {}, 1));
        ASSERT_EQ(employer.size(), 1u) << retriever;
        EXPECT_EQ(employer[0].memory.text, "user employer: Umbrella Labs") << retriever;
        EXPECT_EQ(employer[0].memory.sources, std::vector<std::string>{"m9"}) << retriever;
        EXPECT_TRUE(ok(system->retrieve_memories("employer", {}, 0)).empty());
    }
}

TEST(Ledger, TheOneOffIsGoneAfterItsSession) {
    const data::Scenario truth = scenario();
    auto system = oracle_ledger(truth);
    ok(system->store_conversation(truth.sessions[0]));
    EXPECT_TRUE(mentions(ok(system->all_memories()), "French"));
    ok(system->store_conversation(truth.sessions[1]));
    EXPECT_FALSE(mentions(ok(system->all_memories()), "French"));
    const auto hits = ok(system->retrieve_memories("which language should replies be in, French?", {}, 10));
    for (const auto& hit : hits) EXPECT_EQ(hit.memory.text.find("French"), std::string::npos);

    // Without expires_after it is gone once the session that introduced it is stored.
    data::Scenario once = scenario();
    once.ledger[2].expires_after.clear();
    auto other = oracle_ledger(once);
    ok(other->store_conversation(once.sessions[0]));
    EXPECT_FALSE(mentions(ok(other->all_memories()), "French"));
}

TEST(Ledger, HistoryOffOverwritesAndRefusesHistoryAndAsOf) {
    const data::Scenario truth = scenario();
    auto system = oracle_ledger(truth, ",history=off");
    EXPECT_FALSE(system->capabilities().history);
    EXPECT_FALSE(system->capabilities().as_of);
    EXPECT_TRUE(system->capabilities().idempotent_store);
    ok(system->store_conversation(truth.sessions[0]));
    const auto first = ok(system->all_memories());
    const Memory* employer = find_text(first, "user employer: Acme Corp");
    ASSERT_NE(employer, nullptr);
    const std::string id = employer->id;
    ok(system->store_conversation(truth.sessions[1]));
    const auto second = ok(system->all_memories());
    ASSERT_NE(find_text(second, "user employer: Globex"), nullptr);
    EXPECT_EQ(find_text(second, "user employer: Globex")->id, id);  // the same row, overwritten
    EXPECT_FALSE(mentions(second, "Acme"));
    ok(system->store_conversation(truth.sessions[2]));
    EXPECT_EQ(texts_of(ok(system->all_memories())),
              (std::vector<std::string>{"user employer: Umbrella Labs", "user budget: 5000"}));
    for (const auto& hit : ok(system->retrieve_memories("Acme Globex Oak Street employer address", {}, 10)))
        EXPECT_TRUE(hit.memory.text == "user employer: Umbrella Labs" || hit.memory.text == "user budget: 5000")
            << hit.memory.text;

    const auto history = system->history(id);
    ASSERT_FALSE(history.has_value());
    EXPECT_EQ(history.error().kind, ErrorKind::unsupported);
    const auto as_of = system->state_as_of("2026-01-20T00:00:00Z");
    ASSERT_FALSE(as_of.has_value());
    EXPECT_EQ(as_of.error().kind, ErrorKind::unsupported);
}

TEST(Ledger, PersistsAcrossReopeningTheSameStorage) {
    const data::Scenario truth = scenario();
    test::TempDir dir;
    std::vector<Memory> held;
    std::vector<MemoryEvent> changes;
    {
        auto system = oracle_ledger(truth, "", dir.path());
        ok(system->store_conversation(truth.sessions[0]));
        ok(system->store_conversation(truth.sessions[1]));
    }
    {
        auto system = oracle_ledger(truth, "", dir.path());
        EXPECT_EQ(texts_of(ok(system->all_memories())),
                  (std::vector<std::string>{"user employer: Globex", "user home address: 12 Oak Street",
                                            "user budget: 5000"}));
        ok(system->store_conversation(truth.sessions[1]));  // stored before: nothing changes
        ok(system->store_conversation(truth.sessions[2]));
        held = ok(system->all_memories());
        changes = ok(system->history(held[0].id));
        const auto hits = ok(system->retrieve_memories("employer", {}, 1));
        ASSERT_EQ(hits.size(), 1u);
        EXPECT_EQ(hits[0].memory.text, "user employer: Umbrella Labs");
    }
    {
        auto system = oracle_ledger(truth, "", dir.path());
        const auto reopened = ok(system->all_memories());
        EXPECT_EQ(texts_of(reopened), texts_of(held));
        EXPECT_EQ(test::ids_of(reopened), test::ids_of(held));
        EXPECT_EQ(reopened[0].sources, held[0].sources);
        EXPECT_EQ(ok(system->history(held[0].id)).size(), changes.size());
        EXPECT_EQ(texts_of(ok(system->state_as_of("2026-02-20T00:00:00Z")))[0], "user employer: Globex");
        for (const auto& hit : ok(system->retrieve_memories("home address Oak Street", {}, 10)))
            EXPECT_EQ(hit.memory.text.find("Oak Street"), std::string::npos);
    }
    // A store made with history kept is not reopened as the overwriting floor.
    SystemContext context;
    context.storage_dir = dir.path();
    const auto refused = make_memory_system("ledger:extract=oracle,history=off", context);
    ASSERT_FALSE(refused.has_value());
    EXPECT_NE(refused.error().message.find("history=on"), std::string::npos);
}

TEST(Ledger, ReStoringASessionChangesNothing) {
    const data::Scenario truth = scenario();
    for (const char* options : {"", ",history=off"}) {
        auto system = oracle_ledger(truth, options);
        store_all(*system, truth);
        const auto held = ok(system->all_memories());
        store_all(*system, truth);
        ok(system->store_conversation(truth.sessions[0]));
        const auto again = ok(system->all_memories());
        EXPECT_EQ(texts_of(again), texts_of(held)) << options;
        EXPECT_EQ(test::ids_of(again), test::ids_of(held)) << options;
        for (std::size_t i = 0; i < held.size(); ++i) EXPECT_EQ(again[i].sources, held[i].sources) << options;
        if (system->capabilities().history) {
            EXPECT_EQ(ok(system->history(held[0].id)).size(), 3u);
        }
    }
}

// --- extract=model against the extractive stand-in -----------------------------------------------

using test::StandIn;

TEST(Ledger, ExtractModelRecordsAndAnUpdateClosesTheOldRecord) {
    StandIn model;
    auto system = ok(make_memory_system("ledger", model.context()));
    EXPECT_EQ(system->spec(), "ledger:extract=model,history=on,retriever=hybrid");
    EXPECT_FALSE(system->capabilities().uses_ground_truth);
    ok(system->store_conversation(test::session(
        "s1", k_t1,
        {test::user("a1", "Hi there! I work at Acme Corp."), test::assistant("a2", "Nice to meet you."),
         test::user("a3", "My budget is $5,000, and I want a quiet flat.")})));
    const auto first = ok(system->all_memories());
    EXPECT_EQ(texts_of(first), (std::vector<std::string>{"user employer: Acme Corp", "user budget: $5,000"}));
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[0].sources, std::vector<std::string>{"a1"});
    EXPECT_EQ(first[1].sources, std::vector<std::string>{"a3"});
    const std::string employer_id = first[0].id;

    ok(system->store_conversation(test::session("s2", k_t2, {test::user("b1", "Big news: I now work at Globex.")})));
    const auto second = ok(system->all_memories());
    ASSERT_NE(find_text(second, "user employer: Globex"), nullptr);
    EXPECT_EQ(find_text(second, "user employer: Globex")->id, employer_id);
    EXPECT_EQ(find_text(second, "user employer: Globex")->sources, std::vector<std::string>{"b1"});
    EXPECT_FALSE(mentions(second, "Acme"));
    const auto changes = ok(system->history(employer_id));
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[1].event, "update");
    EXPECT_EQ(changes[1].old_text, "user employer: Acme Corp");
    EXPECT_EQ(changes[1].new_text, "user employer: Globex");
    EXPECT_EQ(texts_of(ok(system->state_as_of("2026-01-20T00:00:00Z")))[0], "user employer: Acme Corp");

    // An assistant's summary does not replace what the user stated.
    ok(system->store_conversation(test::session(
        "s3", k_t3, {test::user("c1", "Thanks for the help."), test::assistant("c2", "Noted: your employer is Initech.")})));
    EXPECT_NE(find_text(ok(system->all_memories()), "user employer: Globex"), nullptr);
    EXPECT_FALSE(mentions(ok(system->all_memories()), "Initech"));

    // A retraction closes the record without a successor.
    ok(system->store_conversation(
        test::session("s4", "2026-04-10T09:00:00Z", {test::user("d1", "Please forget my budget.")})));
    EXPECT_EQ(texts_of(ok(system->all_memories())), std::vector<std::string>{"user employer: Globex"});
    for (const auto& hit : ok(system->retrieve_memories("what is my budget", {}, 5)))
        EXPECT_EQ(hit.memory.text.find("5,000"), std::string::npos);
    const auto budget = ok(system->history(first[1].id));
    ASSERT_EQ(budget.size(), 2u);
    EXPECT_EQ(budget[1].event, "delete");
    EXPECT_EQ(budget[1].sources, std::vector<std::string>{"d1"});

    // Storing a session again asks nothing and changes nothing.
    const auto served = model.server->stats()["chat"];
    ok(system->store_conversation(test::session("s2", k_t2, {test::user("b1", "Big news: I now work at Globex.")})));
    EXPECT_EQ(model.server->stats()["chat"], served);
}

TEST(Ledger, AFailedExtractionLeavesTheLedgerAsItWas) {
    auto record = [](const std::string& attribute, const std::string& value, int message) {
        return json{{"records", json::array({json{{"subject", "User"},
                                                  {"attribute", attribute},
                                                  {"value", value},
                                                  {"authority", "user_stated"},
                                                  {"op", "set"},
                                                  {"messages", json::array({message})}}})}};
    };
    test::ScriptedModel model(test::script_of({{"memfail_ledger_extract", record(" Employer ", "Acme Corp", 1)},
                                               {"memfail_ledger_extract", "schema_violation"},
                                               {"memfail_ledger_extract", record("employer", "Globex", 1)}}));
    auto system = ok(make_memory_system("ledger", model.context()));
    ok(system->store_conversation(test::session("s1", k_t1, {test::user("a1", "I work at Acme Corp.")})));
    const auto s2 = test::session("s2", k_t2, {test::user("b1", "I work at Globex now.")});
    EXPECT_FALSE(system->store_conversation(s2).has_value());
    EXPECT_EQ(texts_of(ok(system->all_memories())), std::vector<std::string>{"user employer: Acme Corp"});
    // Nothing of the failed session was kept, so storing it again asks again; the key, written
    // " Employer " the first time, is the same key.
    ok(system->store_conversation(s2));
    const auto held = ok(system->all_memories());
    EXPECT_EQ(texts_of(held), std::vector<std::string>{"user employer: Globex"});
    EXPECT_EQ(held[0].sources, std::vector<std::string>{"b1"});
    EXPECT_EQ(ok(system->history(held[0].id)).size(), 2u);
}

// --- the stand-in's rules for the ledger prompt ---------------------------------------------------

json messages_of(const llm::ChatRequest& request) {
    json out = json::array();
    for (const auto& m : request.messages) out.push_back({{"role", m.role}, {"content", m.content}});
    return out;
}

// The stand-in's records for a conversation, checked against the prompt's own schema, as
// "op attribute=value (authority) [messages]".
std::vector<std::string> stand_in_records(const std::vector<llm::ChatMessage>& conversation) {
    const llm::ChatRequest request = llm::prompts::ledger_extract("m", conversation);
    EXPECT_TRUE(request.schema.has_value());
    EXPECT_EQ(request.schema->name, llm::prompts::k_ledger_extract_schema);
    const auto reply = fake_llm::extractive_reply(request.schema->name, messages_of(request));
    if (!reply) {
        ADD_FAILURE() << "no reply";
        return {};
    }
    EXPECT_FALSE(llm::validate(*reply, request.schema->schema).has_value()) << reply->dump(2);
    std::vector<std::string> out;
    for (const auto& r : (*reply)["records"]) {
        std::string cited;
        for (const auto& n : r["messages"]) cited += (cited.empty() ? "" : ",") + std::to_string(n.get<int>());
        out.push_back(r["op"].get<std::string>() + " " + r["subject"].get<std::string>() + "." +
                      r["attribute"].get<std::string>() + "=" + r["value"].get<std::string>() + " (" +
                      r["authority"].get<std::string>() + ") [" + cited + "]");
    }
    return out;
}

TEST(LedgerStandIn, ReadsTheSentenceFormsItPromises) {
    EXPECT_EQ(stand_in_records({{"user", "My favourite colour is teal. I work at Acme Corp, which is great."},
                                {"assistant", "Lovely!"},
                                {"user", "I live at 12 Oak Street, Springfield; it is quiet."},
                                {"user", "I live in Lisbon and I love it."},
                                {"user", "The budget is now $6,000."},
                                {"user", "I'm now working as a nurse."},
                                {"user", "I moved to Porto."}}),
              (std::vector<std::string>{"set user.favourite colour=teal (user_stated) [1]",
                                        "set user.employer=Acme Corp (user_stated) [1]",
                                        "set user.address=12 Oak Street, Springfield (user_stated) [3]",
                                        "set user.city=Lisbon (user_stated) [4]",
                                        "set user.budget=$6,000 (user_stated) [5]",
                                        "set user.occupation=nurse (user_stated) [6]",
                                        "set user.city=Porto (user_stated) [7]"}));
    EXPECT_EQ(stand_in_records({{"user", "Please forget my home address."},
                                {"user", "I no longer work at Acme."},
                                {"user", "I no longer live in Lisbon."},
                                {"user", "My car is no longer red."},
                                {"user", "I no longer have a landline."}}),
              (std::vector<std::string>{"retract user.home address= (user_stated) [1]",
                                        "retract user.employer= (user_stated) [2]",
                                        "retract user.city= (user_stated) [3]",
                                        "retract user.car= (user_stated) [4]",
                                        "retract user.landline= (user_stated) [5]"}));
}

TEST(LedgerStandIn, TheAssistantsWordsAreAiSummarizedAndYieldToTheUsers) {
    // Only the assistant spoke of the pet's name: its record stands, as ai_summarized.
    EXPECT_EQ(stand_in_records({{"user", "Thanks."}, {"assistant", "Got it, your dog's name is Rex. I am happy to help."}}),
              std::vector<std::string>{"set user.dog's name=Rex (ai_summarized) [2]"});
    // The user spoke of the employer: the assistant's version is left out.
    EXPECT_EQ(stand_in_records({{"user", "I work at Globex."}, {"assistant", "So your employer is Initech."}}),
              std::vector<std::string>{"set user.employer=Globex (user_stated) [1]"});
    // The same statement twice cites both messages.
    EXPECT_EQ(stand_in_records({{"user", "I work at Globex."}, {"user", "Again: I work at Globex."}}),
              std::vector<std::string>{"set user.employer=Globex (user_stated) [1,2]"});
}

TEST(LedgerStandIn, AnythingElseGivesNoRecord) {
    EXPECT_TRUE(stand_in_records({{"user", "Hello! How are you?"},
                                  {"assistant", "I am fine, thanks."},
                                  {"user", "What is my budget?"},
                                  {"user", "Mango only barks at the doorbell when she is in the back garden."},
                                  {"user", "It is now raining."}})
                    .empty());
}

}  // namespace
}  // namespace memfail::memory
