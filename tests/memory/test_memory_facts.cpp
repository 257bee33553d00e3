// SPDX-License-Identifier: MIT
// facts (Mem0's classic pipeline) against scripted model replies over real HTTP: each decision kind
// is applied with its history, ids shown as small integers map back to real memories, provenance
// survives updates, a decision naming an unknown memory is rejected without corrupting the store, a
// malformed reply leaves the store as it was, add_only suppresses exact duplicates only, and
// extract=careful sends the tuned prompts (the default sends the published ones) and says so in its spec.
#include <gtest/gtest.h>

#include <memfail/llm/openai_client.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/memory/builtin/facts.hpp>
#include <memfail/memory/memory_system.hpp>

#include <fake_llm.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using nlohmann::json;
using test::ok;
using test::script_of;


json extract(std::vector<std::pair<std::string, int>> facts) {
    json list = json::array();
    for (auto& [text, message] : facts) list.push_back(json{{"text", text}, {"messages", json::array({message})}});
    return json{{"facts", list}};
}

json decide(std::vector<std::tuple<int, std::string, int, std::string>> decisions) {
    json list = json::array();
    for (auto& [fact, event, memory, text] : decisions)
        list.push_back(json{{"fact", fact}, {"event", event}, {"memory", memory}, {"text", text}});
    return json{{"decisions", list}};
}

struct Harness : test::ScriptedModel {
    std::unique_ptr<MemorySystem> system;

    Harness(json script, const std::string& spec = "facts") : ScriptedModel(std::move(script)) {
        system = ok(make_memory_system(spec, context()));
    }
};

data::Session said(const std::string& session, const std::string& message, const std::string& text) {
    return test::session(session, "2026-03-0" + session.substr(1) + "T09:00:00Z", {test::user(message, text)});
}

TEST(Facts, NeedsASystemModel) {
    auto made = make_memory_system("facts", SystemContext{});
    ASSERT_FALSE(made.has_value());
    EXPECT_NE(made.error().message.find("--system-model"), std::string::npos);
}

TEST(Facts, AddUpdateDeleteWithHistoryAndProvenance) {
    Harness h(script_of({
        {"memfail_facts_extract", extract({{"Priya lives in Lisbon.", 1}})},
        {"memfail_facts_decide", decide({{1, "ADD", -1, ""}})},
        {"memfail_facts_extract", extract({{"Priya moved to Porto.", 1}})},
        {"memfail_facts_decide", decide({{1, "UPDATE", 0, "Priya lives in Porto."}})},
        {"memfail_facts_extract", extract({{"Priya no longer lives in Portugal.", 1}})},
        {"memfail_facts_decide", decide({{1, "DELETE", 0, ""}})},
    }));
    ok(h.system->store_conversation(said("s1", "m1", "My sister Priya lives in Lisbon.")));
    auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 1u);
    const std::string id = memories[0].id;
    EXPECT_EQ(memories[0].sources, std::vector<std::string>{"m1"});

    ok(h.system->store_conversation(said("s2", "m2", "Priya just moved to Porto!")));
    memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 1u);
    EXPECT_EQ(memories[0].id, id);  // the shown number 0 mapped back to the real memory
    EXPECT_EQ(memories[0].text, "Priya lives in Porto.");
    EXPECT_EQ(memories[0].sources, (std::vector<std::string>{"m1", "m2"}));  // provenance survives the update
    // Retrieval never returns the retired text.
    const auto hits = ok(h.system->retrieve_memories("Where does Priya live?", {}, 5));
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].memory.text, "Priya lives in Porto.");

    ok(h.system->store_conversation(said("s3", "m3", "Priya left Portugal.")));
    EXPECT_TRUE(ok(h.system->all_memories()).empty());
    EXPECT_TRUE(ok(h.system->retrieve_memories("Priya", {}, 5)).empty());

    const auto events = ok(h.system->history(id));
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].event, "add");
    EXPECT_EQ(events[1].event, "update");
    EXPECT_EQ(events[1].old_text, "Priya lives in Lisbon.");
    EXPECT_EQ(events[1].new_text, "Priya lives in Porto.");
    EXPECT_EQ(events[1].sources, std::vector<std::string>{"m2"});
    EXPECT_EQ(events[2].event, "delete");
    EXPECT_FALSE(h.system->history("fact-unknown").has_value());
}

TEST(Facts, AnUnknownMemoryNumberIsRejectedAndTheFactKept) {
    Harness h(script_of({
        {"memfail_facts_extract", extract({{"Biscuit is a beagle.", 1}})},
        {"memfail_facts_decide", decide({{1, "ADD", -1, ""}})},
        {"memfail_facts_extract", extract({{"Biscuit hides during storms.", 1}})},
        {"memfail_facts_decide", decide({{1, "UPDATE", 7, "garbage"}})},
    }));
    ok(h.system->store_conversation(said("s1", "m1", "Our dog Biscuit is a beagle.")));
    ok(h.system->store_conversation(said("s2", "m2", "Biscuit hides during storms.")));
    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 2u);
    EXPECT_EQ(memories[0].text, "Biscuit is a beagle.");  // untouched
    EXPECT_EQ(memories[1].text, "Biscuit hides during storms.");
    EXPECT_EQ(ok(dynamic_cast<FactsSystem&>(*h.system).rejected_decisions()), 1);
}

TEST(Facts, AMalformedReplyLeavesTheStoreAsItWas) {
    Harness h(script_of({
        {"memfail_facts_extract", extract({{"Biscuit is a beagle.", 1}})},
        {"memfail_facts_decide", decide({{1, "ADD", -1, ""}})},
        {"memfail_facts_extract", json("schema_violation")},
    }));
    ok(h.system->store_conversation(said("s1", "m1", "Our dog Biscuit is a beagle.")));
    EXPECT_FALSE(h.system->store_conversation(said("s2", "m2", "Biscuit hides during storms.")).has_value());
    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 1u);
    EXPECT_EQ(memories[0].text, "Biscuit is a beagle.");
}

TEST(Facts, StoringASessionTwiceAsksNothingTheSecondTime) {
    Harness h(script_of({
        {"memfail_facts_extract", extract({{"Biscuit is a beagle.", 1}})},
        {"memfail_facts_decide", decide({{1, "ADD", -1, ""}})},
    }));
    ok(h.system->store_conversation(said("s1", "m1", "Our dog Biscuit is a beagle.")));
    const auto requests = h.server->stats()["requests"].get<int>();
    ok(h.system->store_conversation(said("s1", "m1", "Our dog Biscuit is a beagle.")));
    EXPECT_EQ(h.server->stats()["requests"].get<int>(), requests);
    EXPECT_EQ(ok(h.system->all_memories()).size(), 1u);
}

TEST(Facts, AddOnlySuppressesExactDuplicatesWithoutAskingForDecisions) {
    Harness h(script_of({
                  {"memfail_facts_extract", extract({{"Biscuit is a beagle.", 1}})},
                  {"memfail_facts_extract", extract({{"biscuit is a Beagle", 1}, {"Biscuit is six.", 1}})},
              }),
              "facts:add_only=true");
    ok(h.system->store_conversation(said("s1", "m1", "Our dog Biscuit is a beagle.")));
    ok(h.system->store_conversation(said("s2", "m2", "Biscuit, our beagle, turned six.")));
    const auto memories = ok(h.system->all_memories());
    ASSERT_EQ(memories.size(), 2u);
    EXPECT_EQ(memories[0].sources, (std::vector<std::string>{"m1", "m2"}));  // the repeat credits its source
    EXPECT_FALSE(h.server->stats()["by_schema"].contains("memfail_facts_decide"));
}

// The system text of a request: what the style decides.
std::string system_text(const llm::ChatRequest& request) { return request.messages.at(0).content; }

// Answers each facts prompt by which system text it carries (the whole text must match), so a memory
// shows which prompt produced it; anything else gets the auto reply (no facts).
json style_script() {
    namespace prompts = llm::prompts;
    const std::vector<llm::ChatMessage> conversation = {{"user", "x"}};
    auto rule = [](const std::string& name, const char* schema, const std::string& text, json reply) {
        return json{{"name", name}, {"match", {{"schema", schema}, {"contains", text}}}, {"json", reply}};
    };
    const auto style_rules = [&](prompts::PromptStyle style, const std::string& fact) {
        const std::string name = prompts::prompt_style_name(style);
        return std::vector<json>{
            rule(name + " extract", prompts::k_facts_extract_schema,
                 system_text(prompts::facts_extract("m", conversation, style)), extract({{fact, 1}})),
            rule(name + " decide", prompts::k_facts_decide_schema,
                 system_text(prompts::facts_decide("m", {}, {"x"}, style)), decide({{1, "ADD", -1, ""}})),
        };
    };
    json rules = json::array();
    for (json& r : style_rules(prompts::PromptStyle::careful, "Priya walks Biscuit only when it is dry.")) rules.push_back(r);
    for (json& r : style_rules(prompts::PromptStyle::published, "Priya walks Biscuit.")) rules.push_back(r);
    return json{{"rules", rules}};
}

TEST(Facts, ThePublishedPromptsAreTheDefaultAndTheSpecSaysSo) {
    Harness h(style_script());
    EXPECT_NE(h.system->spec().find("extract=published"), std::string::npos) << h.system->spec();
    ok(h.system->store_conversation(said("s1", "m1", "Priya walks Biscuit, but only when it is dry.")));
    ok(h.system->store_conversation(said("s2", "m2", "Priya got a raincoat for Biscuit.")));
    const auto memories = ok(h.system->all_memories());
    ASSERT_FALSE(memories.empty());
    EXPECT_EQ(memories[0].text, "Priya walks Biscuit.");
    const json by_rule = h.server->stats()["by_rule"];
    EXPECT_EQ(by_rule.value("published extract", 0), 2) << by_rule.dump();
    EXPECT_EQ(by_rule.value("published decide", 0), 2) << by_rule.dump();
    EXPECT_FALSE(by_rule.contains("careful extract")) << by_rule.dump();
    EXPECT_FALSE(by_rule.contains("careful decide")) << by_rule.dump();
}

TEST(Facts, ExtractCarefulSendsTheTunedPromptsAndIsInTheSpec) {
    Harness h(style_script(), "facts:extract=careful");
    EXPECT_NE(h.system->spec().find("extract=careful"), std::string::npos) << h.system->spec();
    // The canonical spec makes the same system again.
    EXPECT_EQ(ok(make_memory_system(h.system->spec(), h.context()))->spec(), h.system->spec());
    ok(h.system->store_conversation(said("s1", "m1", "Priya walks Biscuit, but only when it is dry.")));
    ok(h.system->store_conversation(said("s2", "m2", "Priya got a raincoat for Biscuit.")));
    const auto memories = ok(h.system->all_memories());
    ASSERT_FALSE(memories.empty());
    EXPECT_EQ(memories[0].text, "Priya walks Biscuit only when it is dry.");
    const json by_rule = h.server->stats()["by_rule"];
    EXPECT_EQ(by_rule.value("careful extract", 0), 2) << by_rule.dump();
    EXPECT_EQ(by_rule.value("careful decide", 0), 2) << by_rule.dump();
    EXPECT_FALSE(by_rule.contains("published extract")) << by_rule.dump();
    EXPECT_FALSE(by_rule.contains("published decide")) << by_rule.dump();
}

TEST(Facts, ExtractTakesOnlyItsTwoValuesAndIsListedAsTuned) {
    test::ScriptedModel model(json{{"rules", json::array()}});
    auto bad = make_memory_system("facts:extract=tuned", model.context());
    ASSERT_FALSE(bad.has_value());
    EXPECT_NE(bad.error().message.find("published, careful"), std::string::npos) << bad.error().message;
    const SystemInfo info = FactsSystem::info();
    const OptionInfo* extract_option = nullptr;
    for (const OptionInfo& o : info.options)
        if (o.name == "extract") extract_option = &o;
    ASSERT_NE(extract_option, nullptr);
    EXPECT_EQ(extract_option->default_value, "published");
    EXPECT_NE(extract_option->help.find("careful"), std::string::npos) << extract_option->help;
    EXPECT_NE(extract_option->help.find("tuned, not Mem0's published design"), std::string::npos) << extract_option->help;
}

}  // namespace
}  // namespace memfail::memory
