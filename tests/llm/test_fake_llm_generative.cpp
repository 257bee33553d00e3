// SPDX-License-Identifier: MIT
// The generative stand-in (tools/fake-llm/generative.hpp), over real HTTP: for plans of every
// dataset-generation schema (memfail_gen_*), each reply validates against a strict schema and keeps
// every rule of the request/reply contract; whole batches survive the generators' MinHash dedup at
// their thresholds; the same plan gives the same reply and another ATTEMPT another one; the replies
// count as "extractive" in the stats.
#include "fake_llm.hpp"
#include "generative.hpp"

#include <memfail/core/text.hpp>
#include <memfail/llm/openai_client.hpp>
#include <memfail/llm/schema_check.hpp>
#include <memfail/suites/dedup.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
namespace text = memfail::text;

// ---- schemas, as strict as the contract ---------------------------------------------------------

json str_schema() { return {{"type", "string"}, {"minLength", 1}}; }

json object_schema(const std::vector<std::pair<std::string, json>>& props) {
    json properties = json::object();
    json required = json::array();
    for (const auto& [name, schema] : props) {
        properties[name] = schema;
        required.push_back(name);
    }
    return {{"type", "object"}, {"properties", properties}, {"required", required}, {"additionalProperties", false}};
}

json string_array(int min_items, int max_items) {
    return {{"type", "array"}, {"items", str_schema()}, {"minItems", min_items}, {"maxItems", max_items}};
}

json schema_for(const std::string& name) {
    const std::vector<std::pair<std::string, json>> qa = {
        {"question", str_schema()}, {"question_context", str_schema()}, {"ground_truth_answer", str_schema()}};
    if (name == "memfail_gen_conditional_easy") {
        auto props = std::vector<std::pair<std::string, json>>{
            {"behavior", str_schema()}, {"condition", str_schema()}, {"essay", str_schema()}};
        props.insert(props.end(), qa.begin(), qa.end());
        return object_schema(props);
    }
    if (name == "memfail_gen_conditional_hard") {
        auto props = std::vector<std::pair<std::string, json>>{{"behavior_sentence", str_schema()},
                                                               {"condition_sentence", str_schema()},
                                                               {"link_sentence", str_schema()},
                                                               {"essay", str_schema()}};
        props.insert(props.end(), qa.begin(), qa.end());
        return object_schema(props);
    }
    if (name == "memfail_gen_coexisting")
        return object_schema({{"preferences", string_array(1, 10)},
                              {"preference_facts", string_array(1, 10)},
                              {"question", str_schema()},
                              {"ground_truth_answer", str_schema()}});
    if (name == "memfail_gen_persona") {
        const json question = object_schema({{"text", str_schema()},
                                             {"is_misleading", {{"type", "boolean"}}},
                                             {"distractor", {{"type", "string"}}},
                                             {"ground_truth_answer", str_schema()}});
        return object_schema({{"essay", str_schema()},
                              {"questions", {{"type", "array"}, {"items", question}, {"minItems", 1}}}});
    }
    if (name == "memfail_gen_long_hop")
        return object_schema({{"anchors", string_array(3, 12)},
                              {"facts", string_array(2, 11)},
                              {"graded_question", str_schema()},
                              {"ground_truth_answer", str_schema()}});
    return object_schema({{"distractors", string_array(4, 4)}});
}

// ---- the server and a client ------------------------------------------------------------------

class Generative : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        memfail::fake_llm::ServerOptions options;
        options.script = json{{"extractive", true}};
        server = memfail::fake_llm::FakeLlmServer::start(options).value().release();
        memfail::llm::ClientOptions client_options;
        client_options.base_url = server->base_url();
        client_options.max_retries = 0;
        client_options.max_schema_retries = 0;
        client = memfail::llm::make_openai_client(client_options).value().release();
    }
    static void TearDownTestSuite() {
        delete client;
        client = nullptr;
        delete server;
        server = nullptr;
    }

    // One generation call: the plan line (and an attempt line) in the user message.
    static json ask(const std::string& schema, const json& plan, int attempt = 1,
                    const std::string& problem = "something was wrong") {
        memfail::llm::ChatRequest request;
        request.model = "fake";
        std::string user = "Write one item.\nPLAN: " + plan.dump() + "\n";
        if (attempt > 1)
            user += "ATTEMPT: " + std::to_string(attempt) + "\nPREVIOUS PROBLEM: " + problem + "\n";
        request.messages = {{"system", "You write one dataset item as JSON."}, {"user", user}};
        request.schema = memfail::llm::JsonSchema{schema, schema_for(schema)};
        const auto reply = client->chat(request);
        if (!reply.has_value()) {
            ADD_FAILURE() << schema << ": " << reply.error().describe() << "\nplan: " << plan.dump();
            return json::object();
        }
        const auto invalid = memfail::llm::validate(*reply->json, request.schema->schema);
        EXPECT_FALSE(invalid.has_value()) << invalid.value_or("");
        return *reply->json;
    }

    static memfail::fake_llm::FakeLlmServer* server;
    static memfail::llm::LlmClient* client;
};

memfail::fake_llm::FakeLlmServer* Generative::server = nullptr;
memfail::llm::LlmClient* Generative::client = nullptr;

// ---- contract checks ------------------------------------------------------------------------------

bool has(const std::string& haystack, const std::string& phrase) {
    return text::contains_phrase(haystack, phrase);
}

const std::vector<std::string> k_connectives = {"only when", "unless",       "except when", "but only if",
                                                "whenever",  "if",           "only after",  "only if"};

const std::vector<std::string> k_condition_types = {
    "time_of_day",   "day_of_week",     "season",          "time_elapsed",   "weather",
    "temperature",   "location",        "noise_level",     "lighting",       "hunger_level",
    "energy_level",  "pain_or_discomfort", "sobriety",     "mood",           "stress_level",
    "anxiety_level", "motivation_level", "company",        "social_setting", "relationship_closeness",
    "task_type",     "workload",        "completion_state", "music_playing", "scent",
    "food_or_drink_present", "conflict_state", "approval_received", "request_made", "prior_activity",
    "frequency_cap", "streak_state"};

const std::vector<std::string> k_pet_types = {"time_of_day", "weather",  "temperature", "location", "noise_level",
                                              "lighting",    "food_or_drink_present", "prior_activity", "company"};

const std::vector<std::string> k_names = {"Gideon", "Marisol", "Tobias", "Ingrid", "Caspian", "Odessa",
                                          "Benedikt", "Lucinda", "Ferris", "Anouk", "Pickle", "Waffles",
                                          "Biscuit", "Juniper", "Rasmus", "Theodora", "Wren", "Castor"};

const std::vector<std::string> k_persona_names = {
    "Ava Thompson", "Liam Carter",   "Maya Patel",     "Noah Brooks",   "Zoe Kim",       "Ethan Rivera",
    "Priya Shah",   "Lucas Bennett", "Sofia Nguyen",   "Daniel Park",   "Elena Rossi",   "Marcus Lee",
    "Amara Okafor", "Jonas Weber",   "Hana Sato",      "Theo Laurent",  "Nia Williams",  "Ravi Iyer",
    "Clara Schmidt", "Diego Alvarez", "Yuki Tanaka",   "Sasha Petrov",  "Imani Johnson", "Felix Andersen",
    "Leila Haddad", "Owen Murphy",   "Anya Volkov",    "Caleb Foster",  "Mei Zhang",     "Tomas Costa"};
const std::vector<std::string> k_persona_pronouns = {
    "she", "he", "she", "he", "she", "he", "she", "he", "she", "he", "she", "he", "she", "he", "she",
    "he",  "she", "he", "she", "he", "she", "he", "she", "he", "she", "he", "she", "he", "she", "he"};

const std::vector<std::string> k_flavors = {
    "a meticulous indoor gardener with strong opinions about humidity",
    "a lapsed competitive swimmer who now coaches youth weekend meets",
    "a sound engineer obsessed with vintage analog gear",
    "a part-time pastry chef who does math research on the side",
    "a long-distance hiker training for the Pacific Crest Trail",
    "a retired ER nurse who took up woodworking after retirement",
    "a beekeeper-turned-marketing-consultant who still keeps three hives",
    "an amateur astronomer who hates city light pollution",
    "a freelance translator working between Portuguese and Korean",
    "a cybersecurity researcher who collects vintage typewriters",
    "a former competitive figure skater now running a small tea shop",
    "a chef-instructor who teaches knife skills at a community college",
    "an opera singer who is also a part-time auto mechanic",
    "an architect specializing in adaptive reuse of old factories",
    "a wildlife photographer focused on owls in the Pacific Northwest",
    "a high-school chemistry teacher who restores vintage motorcycles",
    "a marathoner with a rare allergy to most stone fruits",
    "a bookbinder who designs board games on weekends",
    "a software engineer who breeds carnivorous plants",
    "a paramedic who plays cello in a community orchestra",
    "a former diplomat now running a pottery studio",
    "a cartographer obsessed with historic shipwrecks",
    "a dog trainer specializing in working breeds",
    "a forensic accountant who writes science fiction novels",
    "a glassblower with severe pollen allergies",
    "a sommelier transitioning to non-alcoholic beverage consulting",
    "a former orchestra conductor who now teaches sailing",
    "a museum conservator focused on 19th-century photographs",
    "a competitive bridge player who works as an actuary",
    "a backcountry ski guide who restores antique furniture in summer"};

const std::vector<std::string> k_categories = {
    "foods",
    "cuisines",
    "types of desserts",
    "drinks",
    "coffee types",
    "tea varieties",
    "breakfast foods",
    "street foods",
    "snack types",
    "cocktail types",
    "cooking methods",
    "restaurant types",
    "music genres",
    "types of movies",
    "book genres",
    "tv show genres",
    "video game genres",
    "podcast topics",
    "comedy styles",
    "documentary subjects",
    "types of concerts",
    "types of museums",
    "sports to watch on TV",
    "types of theater",
    "sports",
    "outdoor activities",
    "physical exercises",
    "fitness class types",
    "martial arts styles",
    "dance styles",
    "cycling types",
    "swimming styles",
    "types of yoga",
    "hiking styles",
    "fashion styles",
    "home decor styles",
    "makeup styles",
    "jewelry types",
    "shoe styles",
    "hair care styles",
    "skincare routines",
    "bag styles",
    "hat styles",
    "travel destinations",
    "vacation types",
    "nature environments",
    "city neighborhood types",
    "outdoor dining settings",
    "hobbies",
    "crafts",
    "art styles",
    "photography styles",
    "creative writing styles",
    "musical instruments",
    "types of puzzles",
    "journaling styles",
    "home improvement projects",
    "garden types",
    "houseplants",
    "weekend activities",
    "party activities",
    "dating activities",
    "types of social gatherings",
    "board games",
    "card games",
    "conversation topics",
    "programming languages",
    "tech interests",
    "academic subjects",
    "skills to learn",
    "languages to learn",
    "language learning methods",
    "study techniques",
    "note-taking methods",
    "productivity methods",
    "mental health activities",
    "meditation types",
    "self-care activities",
    "sleep habits",
    "morning routine habits",
    "evening routine habits",
    "career fields",
    "types of volunteering",
    "investment types",
    "budget planning methods",
    "social media content types",
    "news formats",
    "podcast formats",
    "types of reading material",
    "audio listening formats",
    "content creation types",
    "animals",
    "dog breeds",
    "collectibles",
    "subscription box types",
    "car types",
    "home organization methods",
    "types of naps",
    "camping styles",
    "astrology interests"};

bool starts_with_word(const std::string& s, const std::vector<std::string>& words) {
    const auto w = text::words(s);
    return !w.empty() && std::find(words.begin(), words.end(), w[0]) != words.end();
}

// Drops by MinHash dedup of the texts at the threshold, in order.
std::size_t dedup_drops(const std::vector<std::string>& texts, double threshold) {
    memfail::suites::MinHashDeduper dedup(threshold);
    std::size_t dropped = 0;
    for (std::size_t i = 0; i < texts.size(); ++i)
        if (!dedup.offer(std::to_string(i), texts[i]))
            ++dropped;
    return dropped;
}

// How many items repeat an earlier one (normalised).
std::size_t repeats(const std::vector<std::string>& items) {
    std::set<std::string> seen;
    std::size_t n = 0;
    for (const auto& item : items)
        if (!seen.insert(text::normalize(item)).second)
            ++n;
    return n;
}

json conditional_plan(int row, bool hard) {
    const bool pet = row % 4 == 0;
    const std::string type = pet ? k_pet_types[static_cast<std::size_t>(row / 4) % k_pet_types.size()]
                                 : k_condition_types[static_cast<std::size_t>(row - row / 4 - 1) % k_condition_types.size()];
    const std::string pronoun = pet ? (row % 8 == 0 ? "it" : "she") : (row % 3 == 0 ? "she" : "he");
    return json{{"dataset", hard ? "conditional_facts_hard" : "conditional_facts_easy"},
                {"row", row + 1},
                {"entity", k_names[static_cast<std::size_t>(row) % k_names.size()] +
                               (row >= static_cast<int>(k_names.size()) ? "" : "")},
                {"entity_category", pet ? "pet" : "character"},
                {"pronoun", pronoun},
                {"condition_type", type},
                {"condition_group", "Group"},
                {"condition_met", (row / 2) % 2 == 0 ? "yes" : "no"},
                {"sentences", hard ? json::array({8, 12}) : json::array({6, 9})}};
}

void check_question(const json& plan, const json& reply, const std::string& condition) {
    const std::string q = reply["question"];
    EXPECT_TRUE(has(q, plan["entity"].get<std::string>())) << q;
    EXPECT_FALSE(has(q, condition)) << q;
    const bool yes = plan["condition_met"] == "yes";
    EXPECT_EQ(text::starts_with(reply["ground_truth_answer"].get<std::string>(), "Yes"), yes);
    EXPECT_EQ(text::starts_with(reply["ground_truth_answer"].get<std::string>(), "No"), !yes);
    EXPECT_FALSE(reply["question_context"].get<std::string>().empty());
}

TEST_F(Generative, ConditionalEasyAndHardKeepEveryRule) {
    std::vector<std::string> easy_essays, hard_essays, behaviors, conditions, questions;
    std::set<std::string> types_seen;
    std::set<std::string> categories_seen;
    for (int row = 0; row < 100; ++row) {
        const json plan = conditional_plan(row, false);
        SCOPED_TRACE(plan.dump());
        const json easy = ask("memfail_gen_conditional_easy", plan);
        if (!easy.contains("essay"))
            continue;
        types_seen.insert(plan["condition_type"]);
        categories_seen.insert(plan["entity_category"]);
        const std::string behavior = easy["behavior"], condition = easy["condition"], essay = easy["essay"];
        EXPECT_FALSE(has(behavior, plan["entity"].get<std::string>()));
        EXPECT_TRUE(starts_with_word(condition, {"when", "after", "before", "during", "on", "while", "in", "at"}))
            << condition;
        const auto sentences = text::split_sentences(essay);
        EXPECT_GE(sentences.size(), 6u) << essay;
        EXPECT_LE(sentences.size(), 9u) << essay;
        EXPECT_TRUE(has(sentences[0], plan["entity"].get<std::string>())) << sentences[0];
        std::size_t rule_sentences = 0;
        for (const auto& s : sentences)
            if (has(s, behavior) && has(s, "only " + condition))
                ++rule_sentences;
        EXPECT_EQ(rule_sentences, 1u) << essay;
        // The pronoun of the plan is used after the introduction.
        std::string rest;
        for (std::size_t i = 1; i < sentences.size(); ++i)
            rest += sentences[i] + " ";
        const std::string pronoun = plan["pronoun"];
        const std::string possessive = pronoun == "he" ? "his" : pronoun == "she" ? "her" : "its";
        EXPECT_TRUE(has(rest, pronoun) || has(rest, possessive) || has(rest, pronoun == "he" ? "him" : pronoun))
            << essay;
        check_question(plan, easy, condition);
        easy_essays.push_back(essay);
        behaviors.push_back(behavior);
        conditions.push_back(condition);
        questions.push_back(easy["question"]);

        json hard_plan = conditional_plan(row, true);
        hard_plan["behavior"] = behavior;
        hard_plan["condition"] = condition;
        const json hard = ask("memfail_gen_conditional_hard", hard_plan);
        if (!hard.contains("essay"))
            continue;
        const std::string hard_essay = hard["essay"];
        const auto hs = text::split_sentences(hard_essay);
        EXPECT_GE(hs.size(), 8u) << hard_essay;
        EXPECT_LE(hs.size(), 12u) << hard_essay;
        EXPECT_TRUE(has(hs[0], plan["entity"].get<std::string>()));
        for (const auto& c : k_connectives)
            EXPECT_FALSE(has(hard_essay, c)) << c << " in " << hard_essay;
        const std::string bs = hard["behavior_sentence"], cs = hard["condition_sentence"], ls = hard["link_sentence"];
        EXPECT_TRUE(has(bs, behavior)) << bs;
        EXPECT_FALSE(has(bs, condition)) << bs;
        EXPECT_FALSE(has(cs, behavior)) << cs;
        std::vector<std::size_t> at;
        for (const auto* s : {&bs, &cs, &ls}) {
            const auto it = std::find(hs.begin(), hs.end(), *s);
            ASSERT_NE(it, hs.end()) << *s << "\n" << hard_essay;
            at.push_back(static_cast<std::size_t>(it - hs.begin()));
        }
        std::sort(at.begin(), at.end());
        EXPECT_GE(at[1] - at[0], 2u);
        EXPECT_GE(at[2] - at[1], 2u);
        check_question(hard_plan, hard, condition);
        hard_essays.push_back(hard_essay);
    }
    EXPECT_EQ(types_seen.size(), k_condition_types.size());
    // memfail keeps each behavior, condition and question to one row (a repeat is asked again with
    // another ATTEMPT): report how many first attempts repeat an earlier row's.
    std::cout << "[unique] conditional easy first attempts repeating an earlier row: behavior " << repeats(behaviors)
              << ", condition " << repeats(conditions) << ", question " << repeats(questions) << " (of "
              << behaviors.size() << ")\n";
    EXPECT_EQ(categories_seen.size(), 2u);
    const std::size_t easy_drops = dedup_drops(easy_essays, 0.8);
    const std::size_t hard_drops = dedup_drops(hard_essays, 0.8);
    std::cout << "[dedup] conditional easy: " << easy_drops << " of " << easy_essays.size()
              << " essays dropped at 0.8; hard: " << hard_drops << " of " << hard_essays.size() << "\n";
    EXPECT_LE(easy_drops, 2u);
    EXPECT_LE(hard_drops, 2u);
}

TEST_F(Generative, CoexistingKeepsEveryRule) {
    std::vector<std::string> questions;
    for (std::size_t row = 0; row < k_categories.size(); ++row) {
        const int count = 2 + static_cast<int>(row % 4);
        const json plan{{"dataset", "coexisting_facts"}, {"row", row + 1}, {"category", k_categories[row]}, {"count", count}};
        SCOPED_TRACE(plan.dump());
        const json reply = ask("memfail_gen_coexisting", plan);
        if (!reply.contains("preferences"))
            continue;
        const auto prefs = reply["preferences"].get<std::vector<std::string>>();
        const auto facts = reply["preference_facts"].get<std::vector<std::string>>();
        ASSERT_EQ(prefs.size(), static_cast<std::size_t>(count));
        ASSERT_EQ(facts.size(), prefs.size());
        EXPECT_EQ(std::set<std::string>(prefs.begin(), prefs.end()).size(), prefs.size());
        for (std::size_t i = 0; i < prefs.size(); ++i) {
            const auto w = text::words(facts[i]);
            EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](const std::string& x) {
                return x == "i" || x == "me" || x == "my" || x == "mine" || x == "myself" || x == "im" ||
                       x == "ive" || x == "ill" || x == "id";
            })) << facts[i];
            for (std::size_t j = 0; j < prefs.size(); ++j)
                EXPECT_EQ(has(facts[i], prefs[j]), i == j) << facts[i] << " / " << prefs[j];
            EXPECT_FALSE(has(reply["question"].get<std::string>(), prefs[i]));
        }
        EXPECT_EQ(reply["ground_truth_answer"], text::join(prefs, ", "));
        questions.push_back(reply["question"]);
    }
    EXPECT_EQ(questions.size(), 100u);
    const std::size_t drops = dedup_drops(questions, 0.7);
    std::cout << "[dedup] coexisting: " << drops << " of " << questions.size() << " questions dropped at 0.7\n";
    EXPECT_LE(drops, 2u);
}

TEST_F(Generative, PersonaKeepsEveryRule) {
    std::vector<std::string> essays;
    for (std::size_t row = 0; row < 100; ++row) {
        const std::size_t who = (row * 7) % k_persona_names.size();
        const std::string name = k_persona_names[who];
        json slots = json::array();
        for (std::size_t s = 0; s < 3; ++s) {
            if ((row >> s) % 2 == 1 || (row % 8 == 0 && s == 1)) {
                slots.push_back({{"misleading", false}});
            } else {
                const std::string d = k_persona_names[(who + 1 + s * 5 + row % 3) % k_persona_names.size()];
                slots.push_back({{"misleading", true}, {"distractor", d}});
            }
        }
        const json plan{{"dataset", "persona_retrieval"},
                        {"row", row + 1},
                        {"entity", name},
                        {"pronoun", k_persona_pronouns[who]},
                        {"flavor", k_flavors[row % k_flavors.size()]},
                        {"slots", slots},
                        {"sentences", json::array({8, 12})}};
        SCOPED_TRACE(plan.dump());
        const json reply = ask("memfail_gen_persona", plan);
        if (!reply.contains("essay"))
            continue;
        const std::string essay = reply["essay"];
        const auto sentences = text::split_sentences(essay);
        EXPECT_GE(sentences.size(), 8u) << essay;
        EXPECT_LE(sentences.size(), 12u) << essay;
        EXPECT_TRUE(has(sentences[0], name)) << sentences[0];
        ASSERT_EQ(reply["questions"].size(), slots.size());
        for (std::size_t s = 0; s < slots.size(); ++s) {
            const json& q = reply["questions"][s];
            const std::string t = q["text"];
            EXPECT_EQ(q["is_misleading"], slots[s]["misleading"]);
            if (slots[s]["misleading"].get<bool>()) {
                const std::string d = slots[s]["distractor"];
                EXPECT_EQ(q["distractor"], d);
                EXPECT_TRUE(has(t, d)) << t;
                EXPECT_FALSE(has(t, name)) << t;
                EXPECT_EQ(q["ground_truth_answer"], "I don't have information about " + d + ".");
            } else {
                EXPECT_EQ(q["distractor"], "");
                EXPECT_TRUE(has(t, name)) << t;
                const auto w = text::words(q["ground_truth_answer"].get<std::string>());
                bool quoted = false;
                for (std::size_t i = 0; i + 3 <= w.size(); ++i)
                    quoted = quoted || has(essay, w[i] + " " + w[i + 1] + " " + w[i + 2]);
                EXPECT_TRUE(quoted) << q["ground_truth_answer"] << "\n" << essay;
            }
        }
        essays.push_back(essay);
    }
    EXPECT_EQ(essays.size(), 100u);
    const std::size_t drops = dedup_drops(essays, 0.7);
    std::cout << "[dedup] persona: " << drops << " of " << essays.size() << " essays dropped at 0.7\n";
    EXPECT_LE(drops, 2u);
}

TEST_F(Generative, LongHopChainsAndDistractorsKeepEveryRule) {
    const std::vector<std::string> people = {"Diego", "Ines", "Tobias", "Kwame", "Marta", "Yusuf", "Zelda", "Quentin"};
    memfail::suites::MinHashDeduper facts_dedup(0.7);
    std::size_t chains = 0, chains_dropped = 0, fact_count = 0;
    std::vector<std::string> previous, all_anchors;
    for (int row = 0; row < 92; ++row) {
        const int hops = row < 31 ? 1 : row < 63 ? 2 : 3;
        const bool named = row % 2 == 1;
        const std::string person = named ? people[static_cast<std::size_t>(row / 2) % people.size()] : "";
        json prev = json::array();
        for (std::size_t i = previous.size() > 50 ? previous.size() - 50 : 0; i < previous.size(); ++i)
            prev.push_back(previous[i]);
        const json plan{{"dataset", "long_hop"}, {"row", row + 1}, {"hop_count", hops},
                        {"voice", named ? "named" : "first_person"}, {"name", person}, {"previous", prev}};
        SCOPED_TRACE(plan.dump());
        const json reply = ask("memfail_gen_long_hop", plan);
        if (!reply.contains("anchors"))
            continue;
        const auto anchors = reply["anchors"].get<std::vector<std::string>>();
        const auto facts = reply["facts"].get<std::vector<std::string>>();
        ASSERT_EQ(anchors.size(), static_cast<std::size_t>(hops + 2));
        ASSERT_EQ(facts.size(), static_cast<std::size_t>(hops + 1));
        for (std::size_t i = 0; i < anchors.size(); ++i) {
            EXPECT_LE(text::words(anchors[i]).size(), 4u) << anchors[i];
            for (std::size_t j = 0; j < anchors.size(); ++j) {
                if (i != j) {
                    EXPECT_FALSE(has(anchors[i], anchors[j])) << anchors[i] << " / " << anchors[j];
                }
            }
        }
        for (std::size_t i = 0; i < facts.size(); ++i) {
            for (std::size_t j = 0; j < anchors.size(); ++j)
                EXPECT_EQ(has(facts[i], anchors[j]), j == i || j == i + 1) << facts[i] << " / " << anchors[j];
            if (named) {
                EXPECT_TRUE(has(facts[i], person)) << facts[i];
            } else {
                const auto w = text::words(facts[i]);
                EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](const std::string& x) {
                    return x == "i" || x == "me" || x == "my";
                })) << facts[i];
            }
        }
        const std::string q = reply["graded_question"];
        EXPECT_TRUE(has(q, anchors.front())) << q;
        for (std::size_t j = 1; j < anchors.size(); ++j)
            EXPECT_FALSE(has(q, anchors[j])) << q << " / " << anchors[j];
        EXPECT_EQ(reply["ground_truth_answer"], anchors.back());
        const std::string pair = anchors.front() + " -> " + anchors.back();
        EXPECT_EQ(std::find(prev.begin(), prev.end(), json(pair)), prev.end()) << pair;
        previous.push_back(pair);
        all_anchors.insert(all_anchors.end(), anchors.begin(), anchors.end());

        // Fact-level dedup as Long-Hop does it: a chain with one colliding fact is dropped whole.
        bool collides = false;
        for (const auto& f : facts)
            collides = collides || !facts_dedup.collides(f).empty();
        ++chains;
        fact_count += facts.size();
        if (collides) {
            ++chains_dropped;
        } else {
            for (std::size_t i = 0; i < facts.size(); ++i)
                facts_dedup.keep(std::to_string(row) + "." + std::to_string(i), facts[i]);
        }

        const json dplan{{"dataset", "long_hop"}, {"row", row + 1}, {"answer", anchors.back()},
                         {"anchors", anchors}, {"facts", facts}};
        const json dreply = ask("memfail_gen_long_hop_distractors", dplan);
        if (!dreply.contains("distractors"))
            continue;
        const auto ds = dreply["distractors"].get<std::vector<std::string>>();
        ASSERT_EQ(ds.size(), 4u);
        EXPECT_EQ(std::set<std::string>(ds.begin(), ds.end()).size(), 4u);
        for (const auto& d : ds)
            for (const auto& a : anchors) {
                const std::string nd = text::normalize(d), na = text::normalize(a);
                EXPECT_EQ(nd.find(na), std::string::npos) << d << " / " << a;
                EXPECT_EQ(na.find(nd), std::string::npos) << d << " / " << a;
            }
    }
    EXPECT_EQ(chains, 92u);
    std::cout << "[unique] long-hop anchors repeating an earlier chain's: " << repeats(all_anchors) << " of "
              << all_anchors.size() << "\n";
    std::cout << "[dedup] long-hop: " << chains_dropped << " of " << chains << " chains (" << fact_count
              << " facts) dropped at 0.7\n";
    EXPECT_LE(chains_dropped, 2u);
}

TEST_F(Generative, SamePlanSameReplyAnotherAttemptAnotherReply) {
    const json plans[] = {conditional_plan(5, false),
                          json{{"dataset", "coexisting_facts"}, {"row", 1}, {"category", "hat styles"}, {"count", 3}},
                          json{{"dataset", "persona_retrieval"}, {"row", 1}, {"entity", "Yuki Tanaka"}, {"pronoun", "she"},
                               {"flavor", "a cartographer obsessed with historic shipwrecks"},
                               {"slots", json::array({{{"misleading", true}, {"distractor", "Noah Brooks"}},
                                                      {{"misleading", false}},
                                                      {{"misleading", true}, {"distractor", "Clara Schmidt"}}})},
                               {"sentences", json::array({8, 12})}},
                          json{{"dataset", "long_hop"}, {"row", 1}, {"hop_count", 2}, {"voice", "named"},
                               {"name", "Diego"}, {"previous", json::array()}}};
    const char* schemas[] = {"memfail_gen_conditional_easy", "memfail_gen_coexisting", "memfail_gen_persona",
                             "memfail_gen_long_hop"};
    for (std::size_t i = 0; i < 4; ++i) {
        const json first = ask(schemas[i], plans[i]);
        EXPECT_EQ(first, ask(schemas[i], plans[i])) << schemas[i];
        const json second = ask(schemas[i], plans[i], 2);
        EXPECT_NE(first, second) << schemas[i];
        EXPECT_EQ(second, ask(schemas[i], plans[i], 2)) << schemas[i];
        EXPECT_NE(second, ask(schemas[i], plans[i], 3)) << schemas[i];
    }
}

TEST_F(Generative, CountsAsExtractiveAndLeavesOtherPromptsAlone) {
    server->reset();
    const json plan{{"dataset", "coexisting_facts"}, {"row", 9}, {"category", "board games"}, {"count", 4}};
    ask("memfail_gen_coexisting", plan);
    ask("memfail_gen_coexisting", plan, 2);
    const json stats = server->stats();
    EXPECT_EQ(stats["by_rule"]["extractive"], 2);
    EXPECT_EQ(stats["by_schema"]["memfail_gen_coexisting"], 2);
    // Without a PLAN line (or for another schema) the stand-in does not answer.
    EXPECT_FALSE(memfail::fake_llm::generative_reply("memfail_gen_coexisting",
                                                     json::array({{{"role", "user"}, {"content", "hello"}}})));
    EXPECT_FALSE(memfail::fake_llm::generative_reply(
        "memfail_judge_answer", json::array({{{"role", "user"}, {"content", "PLAN: " + plan.dump()}}})));
    EXPECT_TRUE(memfail::fake_llm::is_generative_schema("memfail_gen_long_hop_distractors"));
}

TEST_F(Generative, AnswersTheJsonObjectFallbackToo) {
    memfail::llm::ClientOptions options;
    options.base_url = server->base_url();
    options.max_retries = 0;
    options.structured_output = "json_object";
    auto fallback = memfail::llm::make_openai_client(options).value();
    memfail::llm::ChatRequest request;
    request.model = "fake";
    request.messages = {{"system", "You write one dataset item as JSON."},
                        {"user", "PLAN: " + json{{"dataset", "coexisting_facts"}, {"row", 3}, {"category", "tea varieties"},
                                                 {"count", 2}}.dump()}};
    request.schema = memfail::llm::JsonSchema{"memfail_gen_coexisting", schema_for("memfail_gen_coexisting")};
    const auto reply = fallback->chat(request);
    ASSERT_TRUE(reply.has_value()) << reply.error().describe();
    EXPECT_EQ(reply->json->at("preferences").size(), 2u);
}

// memfail keeps each Easy behavior and condition, and each Long-Hop anchor, to one row: a repeat is
// asked again (ATTEMPT 2..4, the PREVIOUS PROBLEM naming what is taken). How many rows would still
// be dropped, with the plans of a whole run?
TEST_F(Generative, RetriesResolveMostRepeats) {
    std::set<std::string> owned;
    std::size_t dropped = 0;
    for (int row = 0; row < 100; ++row) {
        const json plan = conditional_plan(row, false);
        std::string problem;
        bool kept = false;
        for (int attempt = 1; attempt <= 4 && !kept; ++attempt) {
            const json reply = ask("memfail_gen_conditional_easy", plan, attempt, problem);
            problem.clear();
            for (const char* key : {"behavior", "condition"})
                if (problem.empty() && owned.count(std::string(key) + text::normalize(reply[key].get<std::string>())))
                    problem = std::string("the ") + key + " '" + reply[key].get<std::string>() + "' is already used by row 1";
            if (problem.empty()) {
                kept = true;
                owned.insert("behavior" + text::normalize(reply["behavior"].get<std::string>()));
                owned.insert("condition" + text::normalize(reply["condition"].get<std::string>()));
            }
        }
        dropped += kept ? 0 : 1;
    }
    std::set<std::string> anchors_owned;
    std::size_t chains_dropped = 0;
    std::vector<std::string> previous;
    for (int row = 0; row < 92; ++row) {
        const int hops = row < 31 ? 1 : row < 63 ? 2 : 3;
        json prev = json::array();
        for (std::size_t i = previous.size() > 50 ? previous.size() - 50 : 0; i < previous.size(); ++i)
            prev.push_back(previous[i]);
        const json plan{{"dataset", "long_hop"}, {"row", row + 1}, {"hop_count", hops},
                        {"voice", row % 5 < 2 ? "named" : "first_person"}, {"name", row % 5 < 2 ? "Esme" : ""},
                        {"previous", prev}};
        std::string problem;
        bool kept = false;
        for (int attempt = 1; attempt <= 4 && !kept; ++attempt) {
            const json reply = ask("memfail_gen_long_hop", plan, attempt, problem);
            problem.clear();
            for (const auto& a : reply["anchors"])
                if (problem.empty() && anchors_owned.count(text::normalize(a.get<std::string>())))
                    problem = "the anchor '" + a.get<std::string>() + "' is already used by row 1";
            if (problem.empty()) {
                kept = true;
                for (const auto& a : reply["anchors"])
                    anchors_owned.insert(text::normalize(a.get<std::string>()));
                previous.push_back(reply["anchors"].front().get<std::string>() + " -> " +
                                   reply["anchors"].back().get<std::string>());
            }
        }
        chains_dropped += kept ? 0 : 1;
    }
    std::cout << "[unique] after up to 4 attempts: conditional easy rows dropped " << dropped
              << " of 100; long-hop chains dropped " << chains_dropped << " of 92\n";
    // Conditional: manners and "at times when" openers leave few repeats. Long-Hop: every anchor
    // of every chain must be new, and the pools hold about 380 non-feeling anchors for ~180 uses,
    // so some chains still run out of attempts (memfail oversamples); the bound guards regressions.
    EXPECT_LE(dropped, 6u);
    EXPECT_LE(chains_dropped, 24u);
}

}  // namespace
