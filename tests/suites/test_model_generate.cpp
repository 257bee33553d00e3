// SPDX-License-Identifier: MIT
// `datasets generate --model`: the paper's pipeline against fake-llm scripted with plausible replies
// for a few rows of each dataset, and with faulty ones (schema violations, malformed JSON, a missing
// key detail, a Hard essay with "only when", adjacent rule sentences, a misleading question naming a
// stored person, a fact holding a third anchor, a duplicate, a row that never passes). Checks the
// generation record's counts, that the output validates and imports, resuming after a dead
// endpoint, and the error when nothing is JSON.
#include "fake_llm.hpp"
#include "suite_test_util.hpp"

#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/llm/llm_stack.hpp>
#include <memfail/suites/memfail/csv.hpp>
#include <memfail/suites/memfail/import_csv.hpp>
#include <memfail/suites/memfail/model_generate.hpp>
#include <memfail/suites/memfail/model_generate_internal.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
using nlohmann::ordered_json;
namespace mf = memfail::suites::memfail_suite;
using memfail::Rng;

constexpr std::size_t k_rows = 4;

// ---- Plausible replies, written from the plan as a model would ----------------------------------

const std::vector<std::pair<std::string, std::string>> k_rules = {
    {"hums old sea shanties over the sink", "when the kitchen radio plays jazz"},
    {"folds paper cranes from grocery receipts", "after a long rainy afternoon walk"},
    {"rearranges the spice rack by colour", "during heavy thunderstorm warnings"},
    {"sketches lighthouses on paper napkins", "when neighbours host noisy garden parties"},
    {"polishes every brass doorknob twice", "before winter market weekends"},
    {"recites train timetables under the breath", "while fresh bread bakes downstairs"},
};

std::string words_from(Rng& rng, std::size_t n) {
    static const std::vector<std::string> k_words = {
        "amber",  "basalt", "cobalt", "dune",    "ember",   "fjord",  "garnet", "hollow", "indigo", "juniper",
        "kelp",   "lagoon", "marble", "nectar",  "orchard", "pebble", "quartz", "russet", "saffron", "thicket",
        "umber",  "velvet", "willow", "yarrow",  "zinnia",  "acorn",  "bramble", "cinder", "drizzle", "elm",
        "fennel", "gravel", "heather", "ivy",    "jasper",  "kestrel", "linen",  "moss",   "nutmeg", "opal"};
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += (i ? " " : "") + k_words[rng.below(k_words.size())];
    return out;
}

std::string cap(std::string s) {
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
    return s;
}

// An unconditional filler sentence about the entity's home, different for each (row, index); it
// names nobody, so two essays that differ only in their entity are near-duplicates.
std::string filler(Rng& rng) {
    return "A " + words_from(rng, 2) + " jar sits beside the " + words_from(rng, 2) + " shelf in the house.";
}

json easy_reply(const ordered_json& plan, std::size_t variant) {
    const std::string entity = plan["entity"], pronoun = plan["pronoun"];
    const auto& [behavior, condition] = k_rules[variant % k_rules.size()];
    Rng rng(1000 + variant);
    std::vector<std::string> s = {entity + " lives in a narrow house near the old harbour."};
    for (int i = 0; i < 6; ++i) s.push_back(filler(rng));
    s.insert(s.begin() + 2, cap(pronoun) + " " + behavior + " only " + condition + ".");
    const bool met = plan["condition_met"] == "yes";
    return {{"behavior", behavior},
            {"condition", condition},
            {"essay", memfail::text::join(s, " ")},
            {"question", "It is an ordinary evening at home for " + entity + "; would " + pronoun + " do that right now?"},
            {"question_context", met ? "the situation matches" : "an ordinary evening"},
            {"ground_truth_answer", met ? "Yes, that is exactly when it happens." : "No, that is not the moment."}};
}

// The condition's words without its opener ("when the kitchen radio plays jazz" -> "the kitchen
// radio plays jazz"): how a Hard condition sentence can describe it without spelling it out.
std::string condition_body(const std::string& condition) { return condition.substr(condition.find(' ') + 1); }

json hard_reply(const ordered_json& plan, std::size_t variant, bool adjacent = false, bool only_when = false) {
    const std::string entity = plan["entity"], pronoun = plan["pronoun"];
    const std::string behavior = plan["behavior"], condition = plan["condition"];
    Rng rng(2000 + variant);
    const std::string b = cap(pronoun) + " often " + behavior + ", a habit that friends like to tease about.";
    const std::string c = "Most weeks bring " + condition_body(condition) + " in " + words_from(rng, 1) + " town.";
    const std::string l = only_when ? "It happens only when those evenings come."
                                    : "It is usually in those " + words_from(rng, 1) + " hours that the ritual returns.";
    std::vector<std::string> s = {entity + " keeps a small workshop full of " + words_from(rng, 2) + " boxes."};
    s.push_back(b);
    if (adjacent) s.push_back(c);
    s.push_back(filler(rng));
    if (!adjacent) s.push_back(c);
    s.push_back(filler(rng));
    s.push_back(filler(rng));
    s.push_back(l);
    s.push_back(filler(rng));
    s.push_back(filler(rng));
    const bool met = plan["condition_met"] == "yes";
    return {{"behavior_sentence", b},
            {"condition_sentence", c},
            {"link_sentence", l},
            {"essay", memfail::text::join(s, " ")},
            {"question", "Today is a plain day for " + entity + "; will " + pronoun + " take up that habit now?"},
            {"question_context", met ? "a matching moment" : "a plain day"},
            {"ground_truth_answer", met ? "Yes, this is such a moment." : "No, not on a plain day."}};
}

json coexisting_reply(const ordered_json& plan, std::size_t variant, std::size_t count_override = 0) {
    static const std::vector<std::string> k_items = {"velvet", "copper", "meadow", "harbor", "lantern", "saffron"};
    const std::size_t n = count_override ? count_override : plan["count"].get<std::size_t>();
    Rng rng(3000 + variant);
    std::vector<std::string> prefs, facts;
    for (std::size_t i = 0; i < n; ++i) {
        prefs.push_back(k_items[(i + variant) % k_items.size()] + " kind");
        facts.push_back("I reach for the " + prefs.back() + " on " + words_from(rng, 2) + " days.");
    }
    return {{"preferences", prefs},
            {"preference_facts", facts},
            {"question", "I am planning a " + words_from(rng, 3) + " month of " + plan["category"].get<std::string>() +
                             "; what should I rotate through, " + words_from(rng, 2) + " included?"},
            {"ground_truth_answer", memfail::text::join(prefs, ", ")}};
}

json persona_reply(const ordered_json& plan, std::size_t variant, const std::string& misleading_name = "") {
    const std::string entity = plan["entity"], pronoun = plan["pronoun"];
    Rng rng(4000 + variant);
    std::vector<std::string> s = {entity + " is " + plan["flavor"].get<std::string>() + "."};
    std::string kept_noun, kept_place;
    for (int i = 0; i < 10; ++i) {
        const std::string noun = words_from(rng, 1) + " " + words_from(rng, 1), place = words_from(rng, 2);
        s.push_back(cap(pronoun) + " stores a " + noun + " lamp in the " + place + " cupboard.");
        if (i == 3) kept_noun = noun, kept_place = place;
    }
    json questions = json::array();
    for (const auto& slot : plan["slots"]) {
        if (slot["misleading"].get<bool>()) {
            const std::string d = slot["distractor"];
            const std::string named = misleading_name.empty() ? d : d + " and " + misleading_name;
            questions.push_back({{"text", "Which lamp would " + named + " pick for a reading nook?"},
                                 {"is_misleading", true},
                                 {"distractor", d},
                                 {"ground_truth_answer", "I don't have information about " + d + "."}});
        } else {
            questions.push_back({{"text", "What does " + entity + " keep in the " + kept_place + " cupboard?"},
                                 {"is_misleading", false},
                                 {"distractor", ""},
                                 {"ground_truth_answer", "A " + kept_noun + " lamp."}});
        }
    }
    return {{"essay", memfail::text::join(s, " ")}, {"questions", questions}};
}

std::vector<std::string> chain_anchors(const ordered_json& plan) {
    static const std::vector<std::string> k_pool = {
        "lemon tea",   "quiet focus", "long emails", "stiff shoulders", "evening stretches",
        "cold showers", "sharp mood",  "tidy desk",   "early nights",    "fresh bread",
        "river walks", "calm breath", "sketchbooks", "warm soup",        "slow mornings",
        "jazz records", "soft socks",  "green salads", "puzzle books",   "night trains"};
    const auto row = plan["row"].get<std::size_t>(), k = plan["hop_count"].get<std::size_t>();
    std::vector<std::string> out;
    for (std::size_t i = 0; i < k + 2; ++i) out.push_back(k_pool[((row - 1) * 5 + i) % k_pool.size()]);
    return out;
}

json chain_reply(const ordered_json& plan, bool extra_anchor = false) {
    const auto anchors = chain_anchors(plan);
    const bool named = plan["voice"] == "named";
    const std::string who = named ? plan["name"].get<std::string>() : "me";
    std::vector<std::string> facts;
    for (std::size_t f = 0; f + 1 < anchors.size(); ++f)
        facts.push_back(named ? cap(anchors[f]) + " always gives " + who + " " + anchors[f + 1] + "."
                              : cap(anchors[f]) + " always gives me " + anchors[f + 1] + ".");
    if (extra_anchor) facts[0] = facts[0].substr(0, facts[0].size() - 1) + " and " + anchors.back() + ".";
    return {{"anchors", anchors},
            {"facts", facts},
            {"graded_question", "What does " + anchors.front() + " eventually lead to for " + who + "?"},
            {"ground_truth_answer", anchors.back()}};
}

json distractor_reply(std::size_t row, bool overlap_answer = false, const std::string& answer = "") {
    static const std::vector<std::string> k_pool = {"paper kites", "tin whistles", "rope ladders", "glass beads",
                                                    "clay pots",   "wool scarves", "brass bells", "cork boards"};
    std::vector<std::string> d;
    for (std::size_t i = 0; i < 4; ++i) d.push_back(k_pool[(row + i) % k_pool.size()]);
    if (overlap_answer) d[0] = answer;
    return {{"distractors", d}};
}

// ---- Scripts --------------------------------------------------------------------------------

std::string row_key(std::size_t row) { return "\"row\":" + std::to_string(row) + ","; }

json rule(const std::string& schema, std::size_t row, json reply, int times = 0) {
    json r = {{"match", {{"schema", schema}, {"contains", row_key(row)}}}, {"json", std::move(reply)}};
    if (times > 0) r["times"] = times;
    return r;
}

json fault(const std::string& schema, std::size_t row, const std::string& kind, int times) {
    return {{"match", {{"schema", schema}, {"contains", row_key(row)}}}, {"fault", kind}, {"times", times}};
}

mf::GenerateModelOptions small_options() {
    mf::GenerateModelOptions o;
    o.model = "fake-writer";
    o.rows = k_rows;
    o.concurrency = 4;
    return o;
}

// Good replies for every row of every dataset (Hard from the Easy rows' own phrases).
json good_rules(const std::string& dataset) {
    const mf::GenerateModelOptions o = small_options();
    json rules = json::array();
    const auto plans = mf::plan_rows(dataset == "conditional_facts_hard" ? "conditional_facts_easy" : dataset, o);
    for (const auto& p : plans) {
        const auto row = p["row"].get<std::size_t>();
        if (dataset == "conditional_facts_easy") {
            rules.push_back(rule("memfail_gen_conditional_easy", row, easy_reply(p, row)));
        } else if (dataset == "conditional_facts_hard") {
            ordered_json hard = p;
            const json easy = easy_reply(p, row);
            hard["behavior"] = easy["behavior"];
            hard["condition"] = easy["condition"];
            rules.push_back(rule("memfail_gen_conditional_hard", row, hard_reply(hard, row)));
        } else if (dataset == "coexisting_facts") {
            rules.push_back(rule("memfail_gen_coexisting", row, coexisting_reply(p, row)));
        } else if (dataset == "persona_retrieval") {
            rules.push_back(rule("memfail_gen_persona", row, persona_reply(p, row)));
        } else {
            rules.push_back(rule("memfail_gen_long_hop", row, chain_reply(p)));
            rules.push_back(rule("memfail_gen_long_hop_distractors", row, distractor_reply(row)));
        }
    }
    return rules;
}

json script_of(std::vector<json> faulty, const std::vector<std::string>& datasets) {
    json rules = json::array();
    for (auto& f : faulty) rules.push_back(std::move(f));
    for (const auto& d : datasets)
        for (auto& r : good_rules(d)) rules.push_back(std::move(r));
    return {{"rules", rules}};
}

const std::vector<std::string> k_all = {"conditional_facts_easy", "conditional_facts_hard", "coexisting_facts",
                                        "persona_retrieval", "long_hop"};

struct Endpoint {
    std::unique_ptr<memfail::fake_llm::FakeLlmServer> server;
    memfail::llm::LlmStack stack;
};

Endpoint start(const json& script, const std::string& cache, const std::string& log = "") {
    memfail::fake_llm::ServerOptions options;
    options.script = script;
    options.log_path = log;
    Endpoint e;
    e.server = memfail::fake_llm::FakeLlmServer::start(options).value();
    memfail::llm::LlmSettings settings;
    settings.base_url = e.server->base_url();
    settings.max_retries = 0;
    settings.timeout_seconds = 20;
    settings.concurrency = 4;
    settings.cache_db = cache;
    e.stack = memfail::llm::make_llm_stack(settings, cache + ".ledger").value();
    return e;
}

// Every violation except the size rules a small run is expected to break.
std::vector<memfail::data::Violation> rule_violations(const memfail::data::Scenario& s) {
    std::vector<memfail::data::Violation> out;
    for (auto& v : memfail::testing::all_violations(s))
        if (v.field != "probes" && v.field != "sessions") out.push_back(std::move(v));
    return out;
}

std::size_t count(const mf::ModelDataset& d, const char* key) { return d.record["counts"][key].get<std::size_t>(); }

// ---- Tests ----------------------------------------------------------------------------------

TEST(ModelGenerate, PlausibleRepliesMakeFiveDatasetsThatValidateAndImport) {
    memfail::testing::ScratchDir dir;
    Endpoint e = start(script_of({}, k_all), dir.file("cache.db"));
    mf::ModelGenerator generator(*e.stack.client, small_options());
    for (const auto& dataset : k_all) {
        auto d = generator.generate(dataset);
        ASSERT_TRUE(d.has_value()) << dataset << ": " << d.error().describe();
        EXPECT_EQ(count(*d, "accepted"), k_rows) << dataset << "\n" << d->record.dump(2);
        EXPECT_EQ(count(*d, "retried_attempts"), 0u) << dataset << "\n" << d->record.dump(2);
        EXPECT_TRUE(d->drops.empty());
        const auto violations = rule_violations(d->scenario);
        EXPECT_TRUE(violations.empty()) << dataset << ":\n" << memfail::testing::describe(violations);
        EXPECT_FALSE(d->size_notes.empty()) << "a 4-row dataset is below the paper's size";
        // The release-format CSV imports to the same dataset.
        mf::ImportReport report;
        auto imported = mf::import_memfail_csv_text(d->csv, d->csv_file, dataset, report);
        ASSERT_TRUE(imported.has_value()) << imported.error().describe();
        EXPECT_EQ(imported->probes.size(), d->scenario.probes.size());
        EXPECT_EQ(imported->sessions.size(), d->scenario.sessions.size());
        EXPECT_EQ(report.incomplete_facts, 0u);
        for (const auto& p : d->scenario.probes)
            for (const auto& f : p.evidence) EXPECT_TRUE(f.details_complete) << p.id;
        // The record: in the scenario too, without what depends on the cache's state.
        EXPECT_EQ(d->record["model"], "fake-writer");
        EXPECT_EQ(d->record["prompts_hash"], mf::generation_prompts_hash());
        EXPECT_TRUE(d->record.contains("this_run"));
        EXPECT_FALSE(d->scenario.meta["generation"].contains("this_run"));
        EXPECT_EQ(d->scenario.meta["generation"]["counts"], d->record["counts"]);
        EXPECT_GT(d->record["calls"]["prompt_tokens"].get<long long>(), 0);
    }
}

// A dataset's own model (the paper names one per dataset): its requests carry it, the others the
// default, and the record names each; a Hard rule is the Hard model's, its Easy source the Easy one's.
TEST(ModelGenerate, EachDatasetCanHaveItsOwnModel) {
    memfail::testing::ScratchDir dir;
    Endpoint e = start(script_of({}, k_all), dir.file("cache.db"), dir.file("requests.jsonl"));
    mf::GenerateModelOptions o = small_options();
    o.models = {{"conditional_facts_hard", "hard-writer"}, {"long_hop", "chain-writer"}};
    mf::ModelGenerator generator(*e.stack.client, o);
    for (const char* dataset : {"conditional_facts_hard", "long_hop", "persona_retrieval"}) {
        auto d = generator.generate(dataset);
        ASSERT_TRUE(d.has_value()) << dataset << ": " << d.error().describe();
        EXPECT_EQ(d->record["model"], o.model_for(dataset)) << dataset;
        EXPECT_EQ(d->scenario.meta["model"], o.model_for(dataset)) << dataset;
    }
    std::map<std::string, std::set<std::string>> models_of;  // stage -> models its requests named
    std::ifstream log(dir.file("requests.jsonl"));
    for (std::string line; std::getline(log, line);) {
        if (line.empty()) continue;
        const json entry = json::parse(line);
        if (entry.value("endpoint", "") != "chat") continue;
        const std::string schema = entry.value("schema", "");
        models_of[schema].insert(entry.value("model", ""));
    }
    ASSERT_FALSE(models_of.empty());
    for (const auto& [schema, models] : models_of) {
        const std::string want = schema.find("conditional_hard") != std::string::npos ? "hard-writer"
                                 : schema.find("long_hop") != std::string::npos       ? "chain-writer"
                                                                                       : "fake-writer";
        EXPECT_EQ(models, (std::set<std::string>{want})) << schema;
    }
    EXPECT_TRUE(models_of.count("memfail_gen_long_hop_distractors")) << "the distractors' requests are Long-Hop's";
}

TEST(ModelGenerate, FaultyRepliesAreRetriedDroppedAndCounted) {
    // No top-up here (the script answers the plan's rows only): the drops themselves are counted.
    mf::GenerateModelOptions o = small_options();
    o.max_planned = 1.0;
    const auto easy = mf::plan_rows("conditional_facts_easy", o);
    const auto persona = mf::plan_rows("persona_retrieval", o);
    const auto coexisting = mf::plan_rows("coexisting_facts", o);
    const auto hops = mf::plan_rows("long_hop", o);
    auto hard_plan = [&](std::size_t row) {
        ordered_json p = easy[row - 1];
        const json e = easy_reply(p, row);
        p["behavior"] = e["behavior"];
        p["condition"] = e["condition"];
        return p;
    };
    // A persona row with a misleading slot, and a stored person's name for its question.
    std::size_t misleading_row = 0;
    for (const auto& p : persona)
        for (const auto& slot : p["slots"])
            if (!misleading_row && slot["misleading"].get<bool>()) misleading_row = p["row"];
    ASSERT_GT(misleading_row, 0u);
    const std::string stored = persona[misleading_row - 1]["entity"] == "Liam Carter" ? "Ava Thompson" : "Liam Carter";

    json missing_condition = easy_reply(easy[2], 3);
    missing_condition["essay"] = memfail::text::replace_all(missing_condition["essay"], " only " + k_rules[3].second, " only sometimes");
    std::vector<json> faulty = {
        // Easy: a duplicate of row 1 for row 2, a missing condition phrase for row 3, a schema
        // violation on every transport attempt of row 4's first request.
        fault("memfail_gen_conditional_easy", 4, "schema_violation", 3),
        rule("memfail_gen_conditional_easy", 2, easy_reply(easy[1], 1), 1),
        rule("memfail_gen_conditional_easy", 3, missing_condition, 1),
        // Hard: "only when" in the essay, then the three rule sentences side by side.
        rule("memfail_gen_conditional_hard", 1, hard_reply(hard_plan(1), 1, false, true), 1),
        rule("memfail_gen_conditional_hard", 2, hard_reply(hard_plan(2), 2, true, false), 1),
        // Coexisting: malformed JSON for the first request; row 3 never has the planned count.
        fault("memfail_gen_coexisting", 1, "malformed_json", 3),
        rule("memfail_gen_coexisting", 3,
             coexisting_reply(coexisting[2], 3, coexisting[2]["count"].get<std::size_t>() == 2 ? 3 : 2)),
        // Persona: a misleading question naming a stored person.
        rule("memfail_gen_persona", misleading_row, persona_reply(persona[misleading_row - 1], misleading_row, stored), 1),
        // Long-Hop: a fact holding a third anchor; distractors repeating the answer.
        rule("memfail_gen_long_hop", 1, chain_reply(hops[0], true), 1),
        rule("memfail_gen_long_hop_distractors", 2, distractor_reply(2, true, chain_anchors(hops[1]).back()), 1),
    };
    memfail::testing::ScratchDir dir;
    Endpoint e = start(script_of(faulty, k_all), dir.file("cache.db"), dir.file("requests.jsonl"));
    mf::ModelGenerator generator(*e.stack.client, o);
    std::map<std::string, mf::ModelDataset> out;
    for (const auto& dataset : k_all) {
        auto d = generator.generate(dataset);
        ASSERT_TRUE(d.has_value()) << dataset << ": " << d.error().describe();
        const auto violations = rule_violations(d->scenario);
        EXPECT_TRUE(violations.empty()) << dataset << ":\n" << memfail::testing::describe(violations);
        out.emplace(dataset, std::move(*d));
    }
    // Every request the server saw is in a record: the client's re-asks after a reply that was not
    // the schema's JSON too, so more requests than calls.
    std::int64_t sent = 0, calls = 0;
    for (const auto& [name, d] : out) {
        sent += d.record["this_run"]["requests_sent"].get<std::int64_t>();
        calls += d.record["this_run"]["new_calls"].get<std::int64_t>();
    }
    std::int64_t logged = 0;
    {
        std::ifstream log(dir.file("requests.jsonl"));
        for (std::string line; std::getline(log, line);)
            logged += !line.empty() && json::parse(line).value("endpoint", "") == "chat";
    }
    EXPECT_EQ(sent, logged);
    EXPECT_GT(sent, calls);
    const auto& cfe = out.at("conditional_facts_easy");
    EXPECT_EQ(count(cfe, "accepted"), k_rows) << cfe.record.dump(2);
    EXPECT_EQ(count(cfe, "retried_attempts"), 3u) << cfe.record.dump(2);
    EXPECT_EQ(count(cfe, "dedup_collisions"), 1u) << cfe.record.dump(2);
    EXPECT_EQ(cfe.record["dedup"][0]["row"], 2);
    EXPECT_EQ(cfe.record["dedup"][0]["similar_to"], 1);
    EXPECT_EQ(cfe.scenario.meta["dedup"]["dropped"].size(), 1u);
    // The raw copy lists every reply that passed its checks before deduplication: the kept rows and
    // row 2's near-duplicate of row 1, which the kept CSV does not hold.
    EXPECT_EQ(cfe.raw_csv_file, "conditional_facts_dataset_easy_raw.csv");
    EXPECT_EQ(count(cfe, "raw_rows"), count(cfe, "accepted") + count(cfe, "dedup_collisions"));
    {
        auto raw = mf::parse_csv(cfe.raw_csv, cfe.raw_csv_file);
        auto kept = mf::parse_csv(cfe.csv, cfe.csv_file);
        ASSERT_TRUE(raw.has_value() && kept.has_value());
        EXPECT_EQ(raw->header, kept->header);
        EXPECT_EQ(raw->records.size(), count(cfe, "raw_rows"));
        std::set<std::vector<std::string>> raw_rows;
        for (const auto& r : raw->records) raw_rows.insert(r.fields);
        for (const auto& r : kept->records) EXPECT_TRUE(raw_rows.count(r.fields)) << "a kept row is missing from the raw copy";
        std::size_t copies_of_row_1 = 0;
        const std::string behaviour_1 = kept->records[0].fields[2];
        for (const auto& r : raw->records) copies_of_row_1 += r.fields[2] == behaviour_1;
        EXPECT_EQ(copies_of_row_1, 2u) << "row 2's duplicate of row 1 is in the raw copy";
    }

    const auto& cfh = out.at("conditional_facts_hard");
    EXPECT_EQ(count(cfh, "accepted"), k_rows);
    EXPECT_EQ(count(cfh, "retried_attempts"), 2u) << cfh.record.dump(2);

    const auto& cof = out.at("coexisting_facts");
    EXPECT_EQ(count(cof, "accepted"), k_rows - 1);
    EXPECT_EQ(count(cof, "dropped"), 1u);
    EXPECT_EQ(count(cof, "retried_attempts"), 4u) << cof.record.dump(2);  // row 1 once, row 3 three times
    EXPECT_EQ(cof.record["calls"]["invalid_replies"], 1);
    ASSERT_EQ(cof.drops.size(), 1u);
    EXPECT_EQ(cof.drops[0].rfind("row 3 dropped after 4 attempts: preferences has", 0), 0u) << cof.drops[0];
    EXPECT_EQ(cof.record["dropped"][0]["kind"], "validation");
    EXPECT_EQ(cof.scenario.probes.size(), k_rows - 1);
    // Without top-up the dataset stays short of its target, and says so.
    EXPECT_EQ(count(cof, "top_up"), 0u);
    EXPECT_EQ(count(cof, "kept"), k_rows - 1);
    EXPECT_EQ(cof.target, k_rows);
    EXPECT_NE(cof.shortfall.find("coexisting_facts has 3 of its 4 rows"), std::string::npos) << cof.shortfall;
    EXPECT_TRUE(cof.record.contains("short"));

    const auto& per = out.at("persona_retrieval");
    EXPECT_EQ(count(per, "retried_attempts"), 1u) << per.record.dump(2);
    const auto& lhp = out.at("long_hop");
    EXPECT_EQ(count(lhp, "accepted"), k_rows);
    // Long-Hop's raw copy lists the chains as checked, before their options were written.
    EXPECT_EQ(lhp.raw_csv_file, "long_hop_chains_raw.csv");
    {
        auto raw = mf::parse_csv(lhp.raw_csv, lhp.raw_csv_file);
        ASSERT_TRUE(raw.has_value());
        EXPECT_EQ(raw->records.size(), count(lhp, "raw_rows"));
        EXPECT_GE(raw->records.size(), k_rows);
        for (const auto& r : raw->records) {
            EXPECT_EQ(r.fields.at(0).rfind("longhop-", 0), 0u);
            EXPECT_TRUE(r.fields.back().empty()) << "no options before deduplication";
        }
    }
    EXPECT_EQ(count(lhp, "retried_attempts"), 2u) << lhp.record.dump(2);

    // What the retries said: the same plan with the attempt and the problem.
    EXPECT_GT(e.server->stats()["faults"].get<int>(), 0);
    std::vector<std::string> problems;
    std::ifstream log(dir.file("requests.jsonl"));
    for (std::string line; std::getline(log, line);) {
        const json entry = json::parse(line);
        const std::string user = entry["messages"].back()["content"];
        if (const auto at = user.find("PREVIOUS PROBLEM: "); at != std::string::npos) {
            EXPECT_NE(user.find("\nATTEMPT: "), std::string::npos);
            EXPECT_NE(user.find("\nPLAN: {\"dataset\":"), std::string::npos);
            problems.push_back(user.substr(at + 18));
        }
    }
    const std::string all = memfail::text::join(problems, "\n");
    for (const char* expected :
         {"too similar to row 1", "the essay lacks the condition phrase 'when neighbours host noisy garden parties'",
          "the reply is not valid JSON for the schema", "the essay contains the conditional connective 'only when'",
          "are adjacent; put another sentence between them", "a stored person",
          "fact 1 holds anchor 3", "overlaps the answer", "preferences has"})
        EXPECT_NE(all.find(expected), std::string::npos) << expected << " not among:\n" << all;
}

TEST(ModelGenerate, DuplicatesFailingEveryAttemptAreDroppedAsDuplicates) {
    mf::GenerateModelOptions o = small_options();
    o.max_planned = 1.0;  // no top-up: the script answers the plan's rows only
    const auto plans = mf::plan_rows("coexisting_facts", o);
    // Row 2 always asks row 1's question.
    json copy = coexisting_reply(plans[1], 2);
    copy["question"] = coexisting_reply(plans[0], 1)["question"];
    memfail::testing::ScratchDir dir;
    Endpoint e = start(script_of({rule("memfail_gen_coexisting", 2, copy)}, {"coexisting_facts"}), dir.file("cache.db"));
    mf::ModelGenerator generator(*e.stack.client, o);
    auto d = generator.generate("coexisting_facts");
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_EQ(count(*d, "dedup_collisions"), 4u);
    EXPECT_EQ(count(*d, "dropped_as_duplicates"), 1u);
    ASSERT_EQ(d->drops.size(), 1u);
    EXPECT_EQ(d->drops[0], "row 2 dropped after 4 attempts: too similar to row 1");
    // Each of row 2's four near-duplicates is a raw row; none is a kept row.
    EXPECT_EQ(count(*d, "raw_rows"), count(*d, "accepted") + 4u);
}

// Long-Hop's cross-chain audit (Appendix B.6): every wave's chains go through a global pass and
// windows of twice the wave size overlapping by half; a chain the audit drops is topped up like any
// other drop. Here rows 1 and 2 share a distinctive phrase (not enough for the facts' MinHash) and
// fake-llm's own audit finds it.
TEST(ModelGenerate, TheCrossChainAuditDropsInterferingChainsAndTopUpReplacesThem) {
    mf::GenerateModelOptions o = small_options();
    o.wave = 1;  // windows of 2 chains over the 4
    const auto hops = mf::plan_rows("long_hop", o);
    json first = chain_reply(hops[0]), second = chain_reply(hops[1]);
    for (json* c : {&first, &second}) {
        std::string f = (*c)["facts"][0];
        (*c)["facts"][0] = f.substr(0, f.size() - 1) + " beside crooked copper lighthouse stairs.";
    }
    json script = {{"extractive", true},
                   {"rules", {rule("memfail_gen_long_hop", 1, first), rule("memfail_gen_long_hop", 2, second)}}};
    memfail::testing::ScratchDir dir;
    Endpoint e = start(script, dir.file("cache.db"), dir.file("requests.jsonl"));
    mf::ModelGenerator generator(*e.stack.client, o);
    auto d = generator.generate("long_hop");
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_EQ(count(*d, "kept"), k_rows);
    EXPECT_EQ(count(*d, "dropped"), 1u) << d->record.dump(2);
    EXPECT_EQ(count(*d, "top_up"), 1u);
    ASSERT_EQ(d->record["dropped"].size(), 1u);
    EXPECT_EQ(d->record["dropped"][0]["row"], 2);
    EXPECT_EQ(d->record["dropped"][0]["kind"], "cross_chain");
    const json& audit = d->record["cross_chain"];
    ASSERT_EQ(audit["dropped"].size(), 1u) << audit.dump(2);
    const std::string reason = audit["dropped"][0]["reason"];
    EXPECT_NE(reason.find("crooked"), std::string::npos) << reason;
    EXPECT_NE(reason.find("longhop-"), std::string::npos) << "the reason names the other chain: " << reason;
    // The first wave: a global pass and three windows; the top-up wave: one global pass over the
    // three kept chains (fixed) and the new one, and the windows holding the new one.
    std::vector<json> plans;
    {
        std::ifstream log(dir.file("requests.jsonl"));
        for (std::string line; std::getline(log, line);) {
            const json entry = json::parse(line);
            const std::string user = entry["messages"].back()["content"];
            const auto at = user.find("PLAN: ");
            if (at == std::string::npos) continue;
            const json plan = json::parse(user.substr(at + 6, user.find('\n', at) - at - 6));
            if (plan.value("dataset", "") == "long_hop_audit") plans.push_back(plan);
        }
    }
    ASSERT_GE(plans.size(), 6u);
    EXPECT_EQ(audit["requests"].get<std::size_t>(), plans.size());
    std::size_t globals = 0, fixed_seen = 0;
    for (const auto& p : plans) {
        globals += p["pass"] == "global";
        if (p["pass"] == "global") EXPECT_GE(p["chains"].size(), 4u) << p.dump();
        else EXPECT_LE(p["chains"].size(), 2u) << p.dump();
        for (const auto& c : p["chains"]) fixed_seen += c["fixed"].get<bool>();
    }
    EXPECT_EQ(globals, 2u);
    EXPECT_GT(fixed_seen, 0u) << "the top-up wave lists the kept chains as fixed";
    // The kept rows never hold both chains that interfere.
    std::size_t with_phrase = 0;
    for (const auto& p : d->scenario.probes)
        for (const auto& f : p.evidence) with_phrase += f.text.find("copper lighthouse") != std::string::npos;
    EXPECT_EQ(with_phrase, 1u);
}

TEST(ModelGenerate, TheCrossChainAuditMayDropOnlyTheWavesOwnChains) {
    namespace mg = mf::model_gen;
    mg::Item item;
    item.context = {{"fixed", {"longhop-1hop-001"}}, {"new", {"longhop-1hop-002", "longhop-2hop-001"}}};
    auto reply = [](std::vector<std::pair<std::string, std::string>> drops) {
        json d = json::array();
        for (const auto& [id, why] : drops) d.push_back({{"id", id}, {"reason", why}});
        return json{{"to_drop", d}};
    };
    auto fixed = mg::check_audit(item, reply({{"longhop-1hop-001", "shares a phrase with longhop-1hop-002"}}));
    ASSERT_FALSE(fixed.has_value());
    EXPECT_NE(fixed.error().message.find("is fixed"), std::string::npos) << fixed.error().message;
    auto unknown = mg::check_audit(item, reply({{"longhop-3hop-009", "x"}}));
    ASSERT_FALSE(unknown.has_value());
    EXPECT_NE(unknown.error().message.find("no chain of the plan"), std::string::npos);
    EXPECT_FALSE(mg::check_audit(item, reply({{"longhop-1hop-002", " "}})).has_value()) << "a drop needs a reason";
    auto ok = mg::check_audit(item, reply({{"longhop-2hop-001", "retells longhop-1hop-001"},
                                           {"longhop-2hop-001", "again"}}));
    ASSERT_TRUE(ok.has_value()) << ok.error().message;
    EXPECT_EQ(ok->kept["to_drop"].size(), 1u);
    EXPECT_TRUE(mg::check_audit(item, reply({})).has_value()) << "no interference, no drop";
}

// Rows that fail every attempt are topped up: new rows in their buckets, numbered after the plan's,
// until each dataset is back at its target. The stand-in (fake-llm's generative replies, "extractive":
// true) writes every row no rule fails.
TEST(ModelGenerate, RowsFailingEveryAttemptAreToppedUpToTheTarget) {
    const mf::GenerateModelOptions o = small_options();
    const auto easy = mf::plan_rows("conditional_facts_easy", o);
    const auto coexisting = mf::plan_rows("coexisting_facts", o);
    const auto hops = mf::plan_rows("long_hop", o);
    ordered_json hard3 = easy[2];
    hard3["behavior"] = "hums";
    hard3["condition"] = "when it rains";
    json script = {{"extractive", true},
                   {"rules",
                    {// Coexisting row 2 never has its planned count.
                     rule("memfail_gen_coexisting", 2,
                          coexisting_reply(coexisting[1], 2, coexisting[1]["count"].get<std::size_t>() == 2 ? 3 : 2)),
                     // Hard row 3 always says "only when": Easy row 3 is accepted but left out with its pair.
                     rule("memfail_gen_conditional_hard", 3, hard_reply(hard3, 3, false, true)),
                     // Long-Hop row 1 (K=1) always holds a third anchor in a fact.
                     rule("memfail_gen_long_hop", 1, chain_reply(hops[0], true))}}};
    memfail::testing::ScratchDir dir;
    Endpoint e = start(script, dir.file("cache.db"));
    mf::ModelGenerator generator(*e.stack.client, o);
    std::map<std::string, mf::ModelDataset> out;
    for (const auto& dataset : k_all) {
        auto d = generator.generate(dataset);
        ASSERT_TRUE(d.has_value()) << dataset << ": " << d.error().describe();
        // Persona-Retrieval asks three questions per row.
        EXPECT_EQ(d->scenario.probes.size(), (dataset == "persona_retrieval" ? 3 : 1) * k_rows)
            << dataset << "\n" << d->record.dump(2);
        EXPECT_EQ(count(*d, "kept"), k_rows) << dataset;
        EXPECT_EQ(count(*d, "target"), k_rows) << dataset;
        EXPECT_TRUE(d->shortfall.empty()) << dataset << ": " << d->shortfall;
        EXPECT_FALSE(d->record.contains("short")) << dataset;
        for (const auto& b : d->record["buckets"]) EXPECT_EQ(b["kept"], b["target"]) << dataset << ": " << b.dump();
        // Every planned row is kept, truncated, dropped or left out with its pair.
        EXPECT_EQ(count(*d, "planned"), count(*d, "kept") + count(*d, "truncated") + count(*d, "dropped") +
                                            d->record["counts"].value("pair_dropped", std::size_t{0}))
            << dataset << "\n" << d->record["counts"].dump();
        EXPECT_EQ(d->scenario.meta["generation"]["counts"], d->record["counts"]);
        const auto violations = rule_violations(d->scenario);
        EXPECT_TRUE(violations.empty()) << dataset << ":\n" << memfail::testing::describe(violations);
        out.emplace(dataset, std::move(*d));
    }
    // Coexisting: row 2 dropped, row 5 (count as row 2's) planned in its place and kept.
    const auto& cof = out.at("coexisting_facts");
    EXPECT_EQ(count(cof, "dropped"), 1u) << cof.record.dump(2);
    EXPECT_EQ(count(cof, "top_up"), 1u);
    EXPECT_EQ(count(cof, "top_up_waves"), 1u);
    EXPECT_EQ(cof.record["top_up_rows"], json::array({5}));
    EXPECT_EQ(cof.record["dropped"][0]["row"], 2);
    std::set<std::string> categories;
    for (const auto& p : cof.scenario.probes) categories.insert(p.meta["category"].get<std::string>());
    EXPECT_EQ(categories.count(coexisting[1]["category"].get<std::string>()), 1u)
        << "the dropped row's category is free again and the top-up row takes it";
    // Conditional: Easy and Hard keep the same rows (row 3 in neither, row 5 in both).
    const auto& cfe = out.at("conditional_facts_easy");
    const auto& cfh = out.at("conditional_facts_hard");
    EXPECT_EQ(count(cfe, "dropped"), 0u) << cfe.record.dump(2);
    EXPECT_EQ(count(cfe, "pair_dropped"), 1u);
    EXPECT_EQ(count(cfh, "dropped"), 1u) << cfh.record.dump(2);
    EXPECT_EQ(count(cfh, "pair_dropped"), 0u);
    EXPECT_EQ(count(cfe, "top_up"), 1u);
    EXPECT_EQ(cfe.record["top_up_rows"], cfh.record["top_up_rows"]);
    ASSERT_EQ(cfe.scenario.probes.size(), cfh.scenario.probes.size());
    std::size_t yes = 0;
    for (std::size_t i = 0; i < cfe.scenario.probes.size(); ++i) {
        const auto& a = cfe.scenario.probes[i].meta;
        const auto& b = cfh.scenario.probes[i].meta;
        EXPECT_EQ(a["entity"], b["entity"]) << i;
        EXPECT_EQ(a["behaviour"], b["behaviour"]) << i;
        EXPECT_EQ(a["condition"], b["condition"]) << i;
        EXPECT_EQ(a["condition_met"], b["condition_met"]) << i;
        yes += a["condition_met"].get<bool>();
    }
    std::size_t planned_yes = 0;
    for (const auto& p : easy) planned_yes += p["condition_met"] == "yes";
    EXPECT_EQ(yes, planned_yes) << "the yes/no balance of the plan is kept";
    // Long-Hop: each hop bucket at its planned size; row 1's chain replaced by a K=1 chain.
    const auto& lhp = out.at("long_hop");
    EXPECT_EQ(count(lhp, "dropped"), 1u) << lhp.record.dump(2);
    EXPECT_EQ(count(lhp, "top_up"), 1u);
    std::map<std::string, int> planned_k, kept_k;
    for (const auto& p : hops) ++planned_k[std::to_string(p["hop_count"].get<int>())];
    for (const auto& p : lhp.scenario.probes) ++kept_k[std::to_string(p.evidence.size() - 1)];
    EXPECT_EQ(kept_k, planned_k);
}

// A dataset whose rows keep failing after every top-up row the bound allows comes back short: what
// there is, with the shortfall and the record saying so.
TEST(ModelGenerate, TheTopUpBoundLeavesAShortDatasetThatSaysSo) {
    mf::GenerateModelOptions o = small_options();
    o.max_planned = 1.5;  // at most 6 rows planned for the 4
    const auto coexisting = mf::plan_rows("coexisting_facts", o);
    json bad = coexisting_reply(coexisting[1], 2, coexisting[1]["count"].get<std::size_t>() == 2 ? 3 : 2);
    json script = {{"extractive", true},
                   {"rules",
                    {rule("memfail_gen_coexisting", 2, bad), rule("memfail_gen_coexisting", 5, bad),
                     rule("memfail_gen_coexisting", 6, bad)}}};
    memfail::testing::ScratchDir dir;
    Endpoint e = start(script, dir.file("cache.db"));
    mf::ModelGenerator generator(*e.stack.client, o);
    auto d = generator.generate("coexisting_facts");
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_EQ(d->scenario.probes.size(), 3u);
    EXPECT_EQ(count(*d, "planned"), 6u) << d->record.dump(2);
    EXPECT_EQ(count(*d, "max_planned"), 6u);
    EXPECT_EQ(count(*d, "top_up"), 2u);
    EXPECT_EQ(count(*d, "top_up_waves"), 2u);
    EXPECT_EQ(count(*d, "dropped"), 3u);
    EXPECT_EQ(count(*d, "kept"), 3u);
    EXPECT_EQ(d->record["short"]["rows"], 1);
    EXPECT_NE(d->shortfall.find("coexisting_facts has 3 of its 4 rows after planning 6 (the bound is 6)"), std::string::npos)
        << d->shortfall;
    EXPECT_EQ(d->scenario.meta["generation"]["short"], d->record["short"]);
    EXPECT_EQ(d->drops.size(), 3u);
}

TEST(ModelGenerate, AKilledGenerationResumesWithOnlyTheMissingCalls) {
    const mf::GenerateModelOptions o = small_options();
    memfail::testing::ScratchDir dir;
    // An uninterrupted run, for reference.
    std::string reference;
    {
        Endpoint e = start(script_of({}, {"persona_retrieval"}), dir.file("reference.db"));
        mf::ModelGenerator generator(*e.stack.client, o);
        auto d = generator.generate("persona_retrieval");
        ASSERT_TRUE(d.has_value()) << d.error().describe();
        reference = memfail::data::scenario_line(d->scenario).value();
    }
    // Rows 1 and 2 answered, then the endpoint fails: the generation stops with its error.
    json script = script_of({}, {"persona_retrieval"});
    json kept = json::array();
    for (const auto& r : script["rules"])
        if (r["match"]["contains"] == row_key(1) || r["match"]["contains"] == row_key(2)) kept.push_back(r);
    Endpoint e = start({{"rules", kept}, {"default", {{"fault", "http_500"}}}}, dir.file("cache.db"));
    {
        mf::ModelGenerator generator(*e.stack.client, o);
        auto d = generator.generate("persona_retrieval");
        ASSERT_FALSE(d.has_value());
        EXPECT_EQ(d.error().kind, memfail::ErrorKind::network) << d.error().describe();
    }
    // The same generation again, from a new process's stack over the same endpoint and cache:
    // only rows 3 and 4 reach the server, and the result is the same.
    ASSERT_TRUE(e.server->set_script(script).has_value());
    e.server->reset();
    memfail::llm::LlmSettings settings;
    settings.base_url = e.server->base_url();
    settings.max_retries = 0;
    settings.cache_db = dir.file("cache.db");
    auto stack = memfail::llm::make_llm_stack(settings, dir.file("cache.db.ledger")).value();
    mf::ModelGenerator generator(*stack.client, o);
    auto d = generator.generate("persona_retrieval");
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_EQ(e.server->stats()["chat"], 2);
    EXPECT_EQ(d->record["this_run"]["cached_calls"], 2);
    EXPECT_EQ(d->record["this_run"]["new_calls"], 2);
    EXPECT_EQ(memfail::data::scenario_line(d->scenario).value(), reference);
}

TEST(ModelGenerate, NoJsonAnywhereFailsWithAClearError) {
    mf::GenerateModelOptions o = small_options();
    o.rows = 2;
    memfail::testing::ScratchDir dir;
    Endpoint e = start({{"rules", json::array()}, {"default", {{"reply", "Sorry, I can only chat."}}}}, dir.file("cache.db"));
    mf::ModelGenerator generator(*e.stack.client, o);
    auto d = generator.generate("coexisting_facts");
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.error().kind, memfail::ErrorKind::invalid_output);
    EXPECT_NE(d.error().message.find("no row of coexisting_facts could be generated"), std::string::npos)
        << d.error().message;
    EXPECT_NE(d.error().message.find("JSON"), std::string::npos) << d.error().message;
}

TEST(ModelGenerate, ThePlanIsDeterministicAndFollowsThePaper) {
    mf::GenerateModelOptions o;
    const auto a = mf::plan_rows("long_hop", o), b = mf::plan_rows("long_hop", o);
    ASSERT_EQ(a, b);
    std::size_t per[3] = {0, 0, 0}, named = 0;
    std::set<std::string> names;
    for (const auto& p : a) {
        ++per[p["hop_count"].get<std::size_t>() - 1];
        if (p["voice"] == "named") {
            ++named;
            names.insert(p["name"].get<std::string>());
        }
    }
    EXPECT_EQ(per[0], 31u);
    EXPECT_EQ(per[1], 32u);
    EXPECT_EQ(per[2], 29u);
    EXPECT_EQ(named, 12u + 13u + 12u);
    EXPECT_EQ(names.size(), named) << "every named chain has its own person";

    // Persona: entities among the first 30 names, distractors never an entity, half the slots misleading.
    const auto persona = mf::plan_rows("persona_retrieval", o);
    ASSERT_EQ(persona.size(), 100u);
    std::set<std::string> entities;
    std::size_t misleading = 0;
    for (const auto& p : persona) entities.insert(p["entity"].get<std::string>());
    EXPECT_LE(entities.size(), 30u);
    for (const auto& p : persona)
        for (const auto& slot : p["slots"])
            if (slot["misleading"].get<bool>()) {
                ++misleading;
                EXPECT_EQ(entities.count(slot["distractor"].get<std::string>()), 0u);
            }
    EXPECT_EQ(misleading, 150u);

    // Conditional: pets only get observable condition types.
    const std::set<std::string> observable = {"time_of_day", "weather", "temperature", "location", "noise_level",
                                              "lighting", "food_or_drink_present", "prior_activity", "company"};
    for (const auto& p : mf::plan_rows("conditional_facts_easy", o)) {
        if (p["entity_category"] == "pet") {
            EXPECT_EQ(observable.count(p["condition_type"].get<std::string>()), 1u);
        }
    }
    EXPECT_EQ(mf::plan_rows("coexisting_facts", o).size(), 100u);
    mf::GenerateModelOptions other = o;
    other.seed = 7;
    EXPECT_NE(mf::plan_rows("coexisting_facts", other), mf::plan_rows("coexisting_facts", o));
}

}  // namespace
