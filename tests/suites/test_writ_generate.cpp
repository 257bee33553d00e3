// SPDX-License-Identifier: MIT
// The write-integrity generator and its rules: the embedded lexicon is well formed (and a malformed
// one is a clear error), every category generates valid scenarios with the shape the suite promises,
// generation is deterministic per seed, each category holds its traps, and every rule catches a
// planted fault. Set MEMFAIL_PRINT_WRIT=<category>[:<number>] to print a scenario of the default seed.
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/suite.hpp>
#include <memfail/suites/writ/generate.hpp>
#include <memfail/suites/writ/lexicon.hpp>
#include <memfail/suites/writ/rules.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace writ = memfail::suites::writ;
namespace data = memfail::data;
namespace text = memfail::text;
using memfail::suites::GenerateOptions;

namespace {

std::vector<data::Violation> violations(const data::Scenario& s) {
    std::vector<data::Violation> out;
    data::validate_structure(s, 0, out);
    writ::validate_writ(s, 0, out);
    return out;
}

std::vector<data::Violation> rule_violations(const data::Scenario& s) {
    std::vector<data::Violation> out;
    writ::validate_writ(s, 0, out);
    return out;
}

std::string describe(const std::vector<data::Violation>& vs) {
    std::string out;
    for (std::size_t i = 0; i < vs.size() && i < 10; ++i) out += vs[i].field + ": " + vs[i].message + "\n";
    return out;
}

bool has_field(const std::vector<data::Violation>& vs, const std::string& field) {
    return std::any_of(vs.begin(), vs.end(), [&](const data::Violation& v) { return v.field == field; });
}

std::vector<data::Scenario> generate(const std::string& category, std::uint64_t seed = 42,
                                     std::map<std::string, std::string> params = {}) {
    GenerateOptions options;
    options.seed = seed;
    options.params = std::move(params);
    auto r = writ::generate_category(category, options);
    if (!r) ADD_FAILURE() << category << ": " << r.error().describe();
    return r ? std::move(r).value() : std::vector<data::Scenario>{};
}

// Every category at the default seed, generated once for the tests that only read.
const std::map<std::string, std::vector<data::Scenario>>& dataset() {
    static const std::map<std::string, std::vector<data::Scenario>> k_all = [] {
        std::map<std::string, std::vector<data::Scenario>> all;
        for (const auto& c : writ::categories()) all[c] = generate(c);
        return all;
    }();
    return k_all;
}

const data::Scenario& first_of(const std::string& category) { return dataset().at(category).front(); }

// The first scenario of a category for which `pred` holds.
template <class Pred>
const data::Scenario* find_scenario(const std::string& category, Pred pred) {
    for (const auto& s : dataset().at(category))
        if (pred(s)) return &s;
    return nullptr;
}

const data::Message* message(const data::Scenario& s, const std::string& id) {
    for (const auto& session : s.sessions)
        for (const auto& m : session.messages)
            if (m.id == id) return &m;
    return nullptr;
}

std::size_t index_of_event(const data::Scenario& s, const std::string& id) {
    for (std::size_t i = 0; i < s.ledger.size(); ++i)
        if (s.ledger[i].id == id) return i;
    return s.ledger.size();
}

bool has_trap(const data::Scenario& s, const std::string& trap) {
    const auto& traps = s.meta.at("traps");
    return std::find(traps.begin(), traps.end(), trap) != traps.end();
}

}  // namespace

// ---- lexicon --------------------------------------------------------------------------------------

TEST(WritLexicon, EmbeddedLexiconIsWellFormed) {
    const auto& lex = writ::writ_lexicon();
    ASSERT_TRUE(lex) << lex.error().describe();
    const auto files = writ::embedded_lexicon_files();
    EXPECT_GE(files.size(), 16u);
    for (const auto& f : files) {
        EXPECT_TRUE(text::ends_with(f, ".json")) << f;
        EXPECT_TRUE(lex->files.count(f)) << f;
    }
    EXPECT_EQ(lex->files.size(), files.size());
}

TEST(WritLexicon, FillerNamesNoNumberNorName) {
    // Filler must never be mistaken for a value: no digits, no name from people.json.
    const auto& lex = writ::writ_lexicon().value();
    std::vector<std::string> texts = lex.pool("filler.json", "asides");
    const auto& segues = lex.pool("filler.json", "segues");
    texts.insert(texts.end(), segues.begin(), segues.end());
    for (const auto& e : lex.table("filler.json", "exchanges")) {
        texts.push_back(e.text("user"));
        texts.push_back(e.text("assistant"));
    }
    std::vector<std::string> names = lex.pool("people.json", "first_names");
    const auto& lasts = lex.pool("people.json", "last_names");
    names.insert(names.end(), lasts.begin(), lasts.end());
    for (const auto& t : texts) {
        EXPECT_EQ(t.find_first_of("0123456789"), std::string::npos) << t;
        for (const auto& n : names) EXPECT_FALSE(text::contains_phrase(t, n)) << n << " in: " << t;
    }
}

TEST(WritLexicon, MalformedFilesAreClearErrors) {
    // A well-formed minimal conversation.json, then one fault at a time.
    const std::string good = R"({"about": "acks", "pools": {"ack_value": ["Noted: {value}.", "Got {value}.", "Saved {value}."],
        "ack_update": ["Now {value}.", "{old} to {value}.", "Changed to {value}."], "ack_plain": ["Ok.", "Fine.", "Noted."]}, "tables": {}})";
    ASSERT_TRUE(writ::parse_lexicon_file("conversation.json", good));
    struct Case {
        std::string content, where, says;
    };
    const std::vector<Case> cases = {
        {"{not json", "conversation.json: (file)", "not valid JSON"},
        {R"({"pools": {}, "tables": {}})", "conversation.json: about", "what the file is for"},
        {text::replace_all(good, "\"Got {value}.\"", "\"Got it.\""), "conversation.json: pools.ack_value[1]",
         "lacks the placeholder {value}"},
        {text::replace_all(good, "Saved {value}.", "Saved {value} {vlaue}."), "conversation.json: pools.ack_value[2]",
         "holds {vlaue}"},
        {text::replace_all(good, "Saved {value}.", "Saved {value."), "conversation.json: pools.ack_value[2]",
         "malformed placeholder"},
        {text::replace_all(good, "\"Fine.\"", "\"Ok.\""), "conversation.json: pools.ack_plain[1]", "duplicates"},
        {text::replace_all(good, "\"ack_plain\"", "\"ack_plan\""), "conversation.json: pools.ack_plan", "unknown pool"},
        {text::replace_all(good, "\"Fine.\", ", ""), "conversation.json: pools.ack_plain", "at least 3"},
        {text::replace_all(good, "\"tables\": {}", "\"tables\": {}, \"extra\": 1"), "conversation.json: extra",
         "unknown key"},
    };
    for (const auto& c : cases) {
        const auto r = writ::parse_lexicon_file("conversation.json", c.content);
        ASSERT_FALSE(r) << c.where;
        EXPECT_EQ(r.error().where, c.where);
        EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find("malformed lexicon"), std::string::npos);
    }
    const auto unknown = writ::parse_lexicon_file("colours.json", good);
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("no schema"), std::string::npos);

    // A table entry without a required list, and a semantic check (the keyword given away).
    const std::string provenance = R"({"about": "x", "pools": {}, "tables": {"figures": [)"
                                   R"({"id": "a", "keyword": "kitchen", "min": 100, "max": 900, "step": 10,)"
                                   R"( "state": ["The kitchen is {figure}.", "Kitchen: {figure}."], "related": ["{other}.", "About {other}."],)"
                                   R"( "repeat": ["Still {figure}."], "ask": ["What was {figure} for the kitchen?"]}]}})";
    const auto r = writ::parse_lexicon_file("provenance.json", provenance);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().where, "provenance.json: tables.figures");  // fewer entries than required
    std::string four = provenance;
    const std::string entry = four.substr(four.find("{\"id\""), four.rfind(']') - four.find("{\"id\""));
    for (const char* id : {"b", "c", "d"})
        four.insert(four.rfind(']'), ", " + text::replace_all(entry, "\"id\": \"a\"", std::string("\"id\": \"") + id + "\""));
    const auto given_away = writ::parse_lexicon_file("provenance.json", four);
    ASSERT_FALSE(given_away);
    EXPECT_EQ(given_away.error().where, "provenance.json: tables.figures[0].ask[0]");
    EXPECT_NE(given_away.error().message.find("gives the keyword"), std::string::npos);
    const auto missing_list = writ::parse_lexicon_file(
        "provenance.json", text::replace_all(four, R"( "repeat": ["Still {figure}."],)", ""));
    ASSERT_FALSE(missing_list);
    EXPECT_EQ(missing_list.error().where, "provenance.json: tables.figures[0].repeat");

    // A lexicon missing a file.
    const auto partial = writ::parse_lexicon({{"conversation.json", good}});
    ASSERT_FALSE(partial);
    EXPECT_NE(partial.error().message.find("missing from the lexicon"), std::string::npos);
}

// ---- generation -----------------------------------------------------------------------------------

TEST(WritGenerate, EveryCategoryGeneratesValidScenarios) {
    ASSERT_EQ(writ::categories().size(), 16u);
    const std::regex message_id(R"(^(\d+):(\d+)$)");
    for (const auto& category : writ::categories()) {
        const auto& scenarios = dataset().at(category);
        ASSERT_EQ(scenarios.size(), 25u) << category;
        for (std::size_t n = 0; n < scenarios.size(); ++n) {
            const data::Scenario& s = scenarios[n];
            SCOPED_TRACE(s.id);
            const auto vs = violations(s);
            EXPECT_TRUE(vs.empty()) << describe(vs);
            char id[64];
            std::snprintf(id, sizeof id, "writ-%s-%03zu", category.c_str(), n + 1);
            EXPECT_EQ(s.id, id);
            EXPECT_EQ(s.suite, "writ");
            EXPECT_EQ(s.dataset, "writ_" + category);
            EXPECT_TRUE(s.uses_v2());
            EXPECT_EQ(s.meta.at("category"), category);
            EXPECT_EQ(s.meta.at("source"), "generated");
            EXPECT_EQ(s.meta.at("generator"), writ::k_writ_generator_version);
            EXPECT_EQ(s.meta.at("seed"), 42);
            EXPECT_TRUE(s.meta.at("traps").is_array());
            EXPECT_GE(s.sessions.size(), 3u);
            EXPECT_LE(s.sessions.size(), 12u);
            for (std::size_t i = 0; i < s.sessions.size(); ++i) {
                const auto& session = s.sessions[i];
                EXPECT_EQ(session.id, std::to_string(i + 1));
                EXPECT_EQ(session.timestamp.size(), 20u) << session.timestamp;
                if (i) {
                    EXPECT_LT(s.sessions[i - 1].timestamp.substr(0, 10), session.timestamp.substr(0, 10));
                }
                bool user = false, assistant = false;
                for (std::size_t m = 0; m < session.messages.size(); ++m) {
                    const auto& msg = session.messages[m];
                    EXPECT_EQ(msg.id, session.id + ":" + std::to_string(m));
                    EXPECT_TRUE(std::regex_match(msg.id, message_id));
                    EXPECT_EQ(msg.content.find('{'), std::string::npos) << msg.content;
                    user = user || msg.role == "user";
                    assistant = assistant || msg.role == "assistant";
                }
                EXPECT_TRUE(user && assistant) << session.id;
            }
            // Days to a year: the first and last session are at most a year and a bit apart.
            EXPECT_LE(s.sessions.front().timestamp.substr(0, 4), s.sessions.back().timestamp.substr(0, 4));

            ASSERT_FALSE(s.ledger.empty());
            for (const auto& e : s.ledger) {
                ASSERT_FALSE(e.history.empty()) << e.id;
                EXPECT_EQ(e.value, e.history.back().value) << e.id;
                for (const auto& r : e.history) {
                    if (e.type == data::MemoryType::latent) continue;  // never stated
                    ASSERT_FALSE(r.message_id.empty()) << e.id;
                    ASSERT_FALSE(r.mentions.empty()) << e.id;
                    const data::Message* m = message(s, r.message_id);
                    ASSERT_TRUE(m);
                    const data::Session* in = nullptr;
                    for (const auto& session : s.sessions)
                        if (session.id == r.session_id) in = &session;
                    ASSERT_TRUE(in) << r.session_id;
                    EXPECT_EQ(r.as_of, in->timestamp);
                    EXPECT_NE(m->content.find(r.mentions[0]), std::string::npos)
                        << "the exact surface form is used: " << r.mentions[0] << " / " << m->content;
                }
            }

            ASSERT_GE(s.probes.size(), 1u);
            EXPECT_LE(s.probes.size(), 3u);
            std::set<std::string> checkpoints;
            for (std::size_t i = 0; i < s.probes.size(); ++i) {
                const data::Probe& p = s.probes[i];
                EXPECT_EQ(p.id, s.id + "-p" + std::to_string(i + 1));
                checkpoints.insert(p.after_session);
                ASSERT_TRUE(p.rubric) << p.id;
                EXPECT_FALSE(p.capabilities.empty()) << p.id;
                EXPECT_FALSE(p.failure_modes.empty()) << p.id;
                EXPECT_FALSE(p.answer.empty()) << p.id;
                if (p.should_abstain) {
                    EXPECT_EQ(p.kind, data::ProbeKind::abstain);
                    EXPECT_TRUE(p.evidence.empty());
                    EXPECT_EQ(p.rubric->kind, data::RubricKind::abstention);
                    EXPECT_FALSE(p.rubric->reject.empty());
                    continue;
                }
                EXPECT_FALSE(p.targets.empty()) << p.id;
                EXPECT_FALSE(p.expected.is_null()) << p.id;
                EXPECT_FALSE(p.expected_source.empty()) << p.id;
                ASSERT_EQ(p.evidence.size(), p.targets.size()) << p.id;
                for (std::size_t t = 0; t < p.targets.size(); ++t) {
                    const auto& f = p.evidence[t];
                    EXPECT_EQ(f.id, p.id + ":" + p.targets[t]);
                    ASSERT_FALSE(f.key_details.empty());
                    EXPECT_EQ(f.key_details[0].name, "value");
                    EXPECT_EQ(f.key_details[0].effective_role(), data::DetailRole::identity);
                    if (f.message_ids.size() == 1) {
                        EXPECT_EQ(f.text, message(s, f.message_ids[0])->content);
                    }
                }
                // A single-target value probe cites the message stating its expected value.
                if (p.targets.size() == 1 && p.evidence[0].message_ids.size() == 1 &&
                    p.rubric->kind != data::RubricKind::constraint) {
                    EXPECT_EQ(p.evidence[0].message_ids[0], p.expected_source) << p.id;
                }
            }
            // The last session is always a checkpoint.
            EXPECT_TRUE(checkpoints.count(s.sessions.back().id)) << s.id;
        }
    }
}

TEST(WritGenerate, DeterministicPerSeed) {
    for (const auto& category : writ::categories()) {
        const auto again = generate(category);
        const auto& first = dataset().at(category);
        ASSERT_EQ(again.size(), first.size());
        for (std::size_t i = 0; i < again.size(); ++i)
            EXPECT_EQ(data::to_json(again[i]).dump(), data::to_json(first[i]).dump()) << category << " " << i;
        const auto other = generate(category, 7);
        std::size_t differing = 0;
        for (std::size_t i = 0; i < other.size(); ++i)
            differing += data::to_json(other[i]).dump() != data::to_json(first[i]).dump();
        EXPECT_GE(differing, 20u) << category;
        // Scenarios within a dataset differ from one another.
        std::set<std::string> hashes;
        for (const auto& s : first) hashes.insert(data::to_json(s).at("sessions").dump());
        EXPECT_EQ(hashes.size(), first.size()) << category;
    }
    // Scenario i does not depend on how many were asked for.
    const auto three = generate("drift", 42, {{"scenarios", "3"}});
    ASSERT_EQ(three.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_EQ(data::to_json(three[i]).dump(), data::to_json(dataset().at("drift")[i]).dump());
}

TEST(WritGenerate, ManySeedsStayValid) {
    // Every random branch of every builder, many times over: no violation, no assertion.
    std::size_t checked = 0;
    for (std::uint64_t seed = 1; seed <= 12; ++seed)
        for (const auto& category : writ::categories())
            for (const auto& s : generate(category, seed * 7919, {{"scenarios", "40"}})) {
                const auto vs = violations(s);
                EXPECT_TRUE(vs.empty()) << s.id << " seed " << seed * 7919 << "\n" << describe(vs);
                ++checked;
            }
    EXPECT_EQ(checked, 12u * 16u * 40u);
}

TEST(WritGenerate, SixteenByTwentyFiveIsFast) {
    const auto start = std::chrono::steady_clock::now();
    std::size_t scenarios = 0;
    for (const auto& category : writ::categories()) scenarios += generate(category, 3).size();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(scenarios, 400u);
    // Well under a second on an idle machine; the bound leaves room for a loaded CI box.
    EXPECT_LT(seconds, 3.0);
    std::printf("generated 16 x 25 write-integrity scenarios in %.3f s\n", seconds);
}

TEST(WritGenerate, ParametersAreChecked) {
    GenerateOptions options;
    options.params = {{"scenario", "5"}};
    auto r = writ::generate_category("drift", options);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, memfail::ErrorKind::invalid_input);
    EXPECT_NE(r.error().message.find("unknown parameter 'scenario'"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("did you mean 'scenarios'"), std::string::npos) << r.error().message;
    for (const char* bad : {"0", "10001", "abc", "-3", "", "2.5"}) {
        options.params = {{"scenarios", bad}};
        r = writ::generate_category("drift", options);
        ASSERT_FALSE(r) << bad;
        EXPECT_NE(r.error().message.find("scenarios must be a whole number from 1 to 10000"), std::string::npos);
    }
    options.params = {{"scenarios", "1"}};
    EXPECT_EQ(writ::generate_category("closure", options)->size(), 1u);
    const auto unknown = writ::generate_category("drfit", {});
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("did you mean 'drift'"), std::string::npos);
    // Through the suite interface, by dataset name.
    const auto* suite = memfail::suites::find_suite("writ");
    ASSERT_TRUE(suite);
    options.params = {{"scenarios", "2"}};
    const auto through = suite->generate("writ_entity", options);
    ASSERT_TRUE(through) << through.error().describe();
    EXPECT_EQ(through->size(), 2u);
    std::vector<data::Violation> out;
    suite->validate(through->front(), 0, out);
    EXPECT_TRUE(out.empty()) << describe(out);
}

// ---- what each category holds ---------------------------------------------------------------------

TEST(WritGenerate, CategoriesHoldTheirTraps) {
    // trust_hierarchy: an assistant's wrong summary, cited, forbidden in the answer.
    for (const auto& s : dataset().at("trust_hierarchy")) {
        bool found = false;
        for (const auto& e : s.ledger)
            for (const auto& d : e.distractors)
                if (d.authority == data::Authority::ai_summarized) {
                    found = true;
                    EXPECT_EQ(message(s, d.message_id)->role, "assistant");
                    EXPECT_NE(d.value, e.value);
                    const auto& p = s.probes.front();
                    EXPECT_EQ(p.targets[0], e.id);
                    EXPECT_EQ(p.expected, e.value);
                    EXPECT_EQ(p.rubric->forbidden, std::vector<std::string>{d.value.get<std::string>()});
                }
        EXPECT_TRUE(found) << s.id;
        EXPECT_TRUE(has_trap(s, "assistant_contradiction"));
    }
    // forgetting: one-off items that must not persist, expiring in their own session; a retraction.
    for (const auto& s : dataset().at("forgetting")) {
        const auto* once = s.event("nickname_request");
        ASSERT_TRUE(once);
        EXPECT_FALSE(once->should_persist);
        EXPECT_EQ(once->expires_after, once->introduced_in);
        EXPECT_EQ(once->type, data::MemoryType::non_memory);
        const bool retracted = std::any_of(s.ledger.begin(), s.ledger.end(), [](const data::LedgerEvent& e) {
            return !e.retracted_in.empty() && !e.retracted_by.empty();
        });
        EXPECT_TRUE(retracted);
        EXPECT_TRUE(std::any_of(s.probes.begin(), s.probes.end(), [&](const data::Probe& p) {
            return p.rubric->forbidden == std::vector<std::string>{once->value.get<std::string>()};
        }));
    }
    // temporal: a probe about the past.
    for (const auto& s : dataset().at("temporal")) {
        const bool past = std::any_of(s.probes.begin(), s.probes.end(), [](const data::Probe& p) {
            return p.temporal && !p.temporal->expect_current && !p.temporal->as_of.empty();
        });
        EXPECT_TRUE(past) << s.id;
    }
    const auto* address = find_scenario("temporal", [](const data::Scenario& s) { return s.event("address"); });
    ASSERT_TRUE(address);
    EXPECT_EQ(address->probes.front().rubric->kind, data::RubricKind::address);
    // entity: aliases, counted in groups.
    for (const auto& s : dataset().at("entity")) {
        const auto* main = s.event("person_main");
        ASSERT_TRUE(main);
        EXPECT_EQ(main->aliases.size(), 2u);
        const auto& count = s.probes.front();
        EXPECT_EQ(count.rubric->kind, data::RubricKind::entity_count);
        EXPECT_EQ(static_cast<std::size_t>(*count.rubric->expected_count), count.rubric->groups.size());
        EXPECT_GE(count.rubric->groups.size(), 2u);
        // Every alias is said somewhere.
        for (const auto& alias : main->aliases) {
            bool said = false;
            for (const auto& session : s.sessions)
                for (const auto& m : session.messages) said = said || text::contains_phrase(m.content, alias);
            EXPECT_TRUE(said) << alias;
        }
    }
    // constraint: latent, never stated, recommendation with must_not_contain.
    for (const auto& s : dataset().at("constraint")) {
        const auto* c = s.event("constraint");
        ASSERT_TRUE(c);
        EXPECT_EQ(c->type, data::MemoryType::latent);
        EXPECT_TRUE(c->history[0].message_id.empty());
        EXPECT_EQ(s.probes[0].rubric->kind, data::RubricKind::constraint);
        EXPECT_EQ(s.probes[0].rubric->must_not_contain.size(), 2u);
        EXPECT_TRUE(has_trap(s, "implicit_constraint"));
    }
    // abstention: should_abstain with the near-duplicates rejected.
    for (const auto& s : dataset().at("abstention")) {
        const auto& p = s.probes.front();
        EXPECT_TRUE(p.should_abstain);
        EXPECT_EQ(p.rubric->reject.size(), 2u);
    }
    // lifecycle: introduced, updated, retracted, re-introduced.
    for (const auto& s : dataset().at("lifecycle")) {
        const auto& e = s.ledger.front();
        EXPECT_EQ(e.history.size(), 3u);
        EXPECT_FALSE(e.retracted_in.empty());
        EXPECT_LT(std::stoi(e.retracted_in), std::stoi(e.history.back().session_id));
    }
    // extraction_drift: a numeric rubric and the assistant's rounded figure as a distractor.
    for (const auto& s : dataset().at("extraction_drift")) {
        EXPECT_EQ(s.probes.front().rubric->kind, data::RubricKind::numeric);
        EXPECT_EQ(s.ledger.front().distractors.front().authority, data::Authority::ai_summarized);
    }
    // certification: multi_field with number and expiry.
    for (const auto& s : dataset().at("certification")) {
        const auto& p = s.probes.front();
        EXPECT_EQ(p.rubric->kind, data::RubricKind::multi_field);
        EXPECT_TRUE(p.rubric->fields.contains("number") && p.rubric->fields.contains("expiry"));
        EXPECT_EQ(s.ledger.front().history.size(), 2u);
    }
    // closure and work_state: statuses; open tasks required, closed ones forbidden.
    for (const auto& s : dataset().at("closure")) EXPECT_EQ(s.probes.back().expected.is_string(), true);
    for (const auto& s : dataset().at("work_state")) {
        const auto& p = s.probes.back();
        EXPECT_EQ(p.rubric->kind, data::RubricKind::structured);
        EXPECT_FALSE(p.rubric->forbidden.empty());
        EXPECT_FALSE(p.rubric->required.empty());
    }
    // drift: current and full history.
    for (const auto& s : dataset().at("drift")) {
        const auto& e = s.ledger.front();
        EXPECT_GE(e.history.size(), 3u);
        EXPECT_LE(e.history.size(), 5u);
        const bool history = std::any_of(s.probes.begin(), s.probes.end(), [&](const data::Probe& p) {
            return p.rubric->kind == data::RubricKind::structured && p.rubric->required.size() == e.history.size();
        });
        EXPECT_TRUE(history) << s.id;
    }
    // failure_injection: a correction or conflicting updates in every scenario.
    for (const auto& s : dataset().at("failure_injection"))
        EXPECT_TRUE(has_trap(s, "self_correction") || has_trap(s, "conflicting_update")) << s.id;
    // multi_hop: two targets.
    for (const auto& s : dataset().at("multi_hop")) EXPECT_EQ(s.probes.front().targets.size(), 2u);

    // Across the dataset every trap appears, and some probes sit at a mid checkpoint.
    std::set<std::string> traps;
    std::size_t mid = 0;
    for (const auto& [category, scenarios] : dataset())
        for (const auto& s : scenarios) {
            for (const auto& t : s.meta.at("traps")) traps.insert(t.get<std::string>());
            for (const auto& p : s.probes) mid += p.after_session != s.sessions.back().id;
        }
    for (const char* t : {"near_duplicate", "conflicting_update", "low_salience", "indirect_update", "retraction",
                          "one_off_instruction", "temporary_item", "assistant_contradiction", "entity_aliases",
                          "implicit_constraint", "lossy_paraphrase", "self_correction", "repeated_mention",
                          "reintroduction"})
        EXPECT_TRUE(traps.count(t)) << t;
    EXPECT_GE(mid, 20u);
}

TEST(WritGenerate, PrintScenarioOnRequest) {
    const char* request = std::getenv("MEMFAIL_PRINT_WRIT");
    if (!request) GTEST_SKIP() << "set MEMFAIL_PRINT_WRIT=<category>[:<number>] to print a scenario";
    const std::string text(request);
    const std::string category = text.substr(0, text.find(':'));
    const std::size_t number = text.find(':') == std::string::npos ? 1 : std::stoul(text.substr(text.find(':') + 1));
    ASSERT_TRUE(dataset().count(category)) << category;
    ASSERT_TRUE(number >= 1 && number <= dataset().at(category).size());
    std::printf("%s\n", data::to_json(dataset().at(category)[number - 1]).dump(2).c_str());
}

// ---- planted faults -------------------------------------------------------------------------------

TEST(WritRules, RecordNotStatedByItsMessage) {
    data::Scenario s = first_of("drift");
    ASSERT_TRUE(rule_violations(s).empty());
    // Cite another message of the conversation for the first value.
    auto& r = s.ledger[0].history[0];
    std::string other;
    for (const auto& session : s.sessions)
        for (const auto& m : session.messages)
            if (other.empty() && m.id != r.message_id && !text::contains_phrase(m.content, r.mentions[0])) other = m.id;
    r.message_id = other;
    r.session_id.clear();
    auto vs = rule_violations(s);
    EXPECT_TRUE(has_field(vs, "ledger[0].history[0].message_id")) << describe(vs);

    // A distractor whose message says something else.
    data::Scenario t = first_of("trust_hierarchy");
    t.ledger[0].distractors[0].mentions = {"a value nobody said"};
    vs = rule_violations(t);
    EXPECT_TRUE(has_field(vs, "ledger[0].distractors[0].message_id")) << describe(vs);

    // A record citing no message is not checked for statement.
    data::Scenario u = first_of("drift");
    u.ledger[0].history[0].message_id.clear();
    u.ledger[0].history[0].mentions = {"a value nobody said"};
    EXPECT_FALSE(has_field(rule_violations(u), "ledger[0].history[0].message_id"));
}

TEST(WritRules, AsOfBeforeItsSession) {
    data::Scenario s = first_of("drift");
    s.ledger[0].history[1].as_of = "2020-01-01T00:00:00Z";
    auto vs = rule_violations(s);
    EXPECT_TRUE(has_field(vs, "ledger[0].history[1].as_of")) << describe(vs);
    s.ledger[0].history[1].as_of = "last Tuesday";
    vs = rule_violations(s);
    EXPECT_TRUE(has_field(vs, "ledger[0].history[1].as_of")) << describe(vs);
    // Other ISO forms of the same instant are fine.
    data::Scenario t = first_of("drift");
    std::string ts = t.ledger[0].history[1].as_of;
    t.ledger[0].history[1].as_of = ts.substr(0, 19) + ".000+00:00";
    EXPECT_TRUE(rule_violations(t).empty()) << describe(rule_violations(t));
}

TEST(WritRules, RetractionAndExpiry) {
    const data::Scenario* found = find_scenario("forgetting", [](const data::Scenario& s) {
        return std::any_of(s.ledger.begin(), s.ledger.end(),
                           [](const data::LedgerEvent& e) { return !e.retracted_in.empty(); });
    });
    ASSERT_TRUE(found);
    data::Scenario s = *found;
    std::size_t i = 0;
    while (s.ledger[i].retracted_in.empty()) ++i;
    const std::string field = "ledger[" + std::to_string(i) + "]";
    // retracted_by in another session than retracted_in.
    s.ledger[i].retracted_in = s.ledger[i].retracted_in == "1" ? "2" : "1";
    auto vs = rule_violations(s);
    EXPECT_TRUE(has_field(vs, field + ".retracted_by")) << describe(vs);
    s.ledger[i].retracted_in.clear();
    vs = rule_violations(s);
    EXPECT_TRUE(has_field(vs, field + ".retracted_in")) << describe(vs);

    // expires_after before introduced_in.
    data::Scenario t = *found;
    const std::size_t once = index_of_event(t, "nickname_request");
    auto& e = t.ledger[once];
    const std::string later = std::to_string(std::stoi(e.introduced_in) + 1);
    e.expires_after = e.introduced_in;
    e.introduced_in = later == std::to_string(t.sessions.size() + 1) ? e.introduced_in : later;
    if (e.introduced_in == e.expires_after) e.expires_after = std::to_string(std::stoi(e.introduced_in) - 1);
    vs = rule_violations(t);
    EXPECT_TRUE(has_field(vs, "ledger[" + std::to_string(once) + "].expires_after")) << describe(vs);
}

TEST(WritRules, ProbesStayBeforeTheirCheckpoint) {
    // A target introduced after the checkpoint.
    data::Scenario s = first_of("closure");
    const std::size_t e = index_of_event(s, s.probes.back().targets[0]);
    s.ledger[e].introduced_in = s.sessions.back().id;
    s.probes.back().after_session = std::to_string(s.sessions.size() - 1);
    auto vs = rule_violations(s);
    EXPECT_TRUE(has_field(vs, "probes[" + std::to_string(s.probes.size() - 1) + "].targets[0]")) << describe(vs);

    // The expected source stored after the checkpoint.
    data::Scenario t = first_of("drift");
    data::Probe& p = t.probes.back();
    p.expected_source = t.sessions.back().messages.back().id;
    p.after_session = "1";
    vs = rule_violations(t);
    EXPECT_TRUE(has_field(vs, "probes[" + std::to_string(t.probes.size() - 1) + "].expected_source")) << describe(vs);

    // A temporal as_of that is not before the checkpoint.
    data::Scenario u = first_of("temporal");
    std::size_t i = 0;
    while (!(u.probes[i].temporal && !u.probes[i].temporal->expect_current)) ++i;
    u.probes[i].temporal->as_of = "2030-01-01T00:00:00Z";
    vs = rule_violations(u);
    EXPECT_TRUE(has_field(vs, "probes[" + std::to_string(i) + "].temporal.as_of")) << describe(vs);
    // A date after the checkpoint that asks for the value now (WRIT's temporal-004, "what will my
    // salary be in December?", expect_current true) is a question about the present.
    u.probes[i].temporal->expect_current = true;
    u.probes[i].expected = u.ledger[0].history.back().value;
    vs = rule_violations(u);
    EXPECT_FALSE(has_field(vs, "probes[" + std::to_string(i) + "].temporal.as_of")) << describe(vs);
}

TEST(WritRules, ExpectedValueIsTheTargetsValueAtTheProbesTime) {
    // A current-value probe expecting a stale value.
    data::Scenario s = first_of("drift");
    std::size_t i = 0;
    while (s.probes[i].meta.at("asks") != "current" || s.probes[i].after_session != s.sessions.back().id) ++i;
    s.probes[i].expected = s.ledger[0].history[0].value;
    auto vs = rule_violations(s);
    EXPECT_TRUE(has_field(vs, "probes[" + std::to_string(i) + "].expected")) << describe(vs);

    // A past-date probe expecting today's value.
    data::Scenario t = first_of("temporal");
    std::size_t j = 0;
    while (!(t.probes[j].temporal && !t.probes[j].temporal->expect_current)) ++j;
    t.probes[j].expected = t.ledger[0].value;
    vs = rule_violations(t);
    EXPECT_TRUE(has_field(vs, "probes[" + std::to_string(j) + "].expected")) << describe(vs);

    // The right value with a source that does not state it.
    data::Scenario u = first_of("drift");
    std::size_t k = 0;
    while (u.probes[k].meta.at("asks") != "current" || u.probes[k].after_session != u.sessions.back().id) ++k;
    u.probes[k].expected_source = u.ledger[0].history[0].message_id;
    vs = rule_violations(u);
    EXPECT_TRUE(has_field(vs, "probes[" + std::to_string(k) + "].expected_source")) << describe(vs);

    // A probe asking for a value the target no longer has (retracted, never re-introduced).
    data::Scenario l = first_of("lifecycle");
    l.ledger[0].history.pop_back();
    l.ledger[0].value = l.ledger[0].history.back().value;
    std::size_t c = 0;
    while (l.probes[c].meta.at("asks") != "current" || l.probes[c].after_session != l.sessions.back().id) ++c;
    l.probes[c].expected = l.ledger[0].value;
    vs = rule_violations(l);
    EXPECT_TRUE(has_field(vs, "probes[" + std::to_string(c) + "].expected")) << describe(vs);
    EXPECT_NE(describe(vs).find("retracted"), std::string::npos) << describe(vs);

    // Numbers compare as numbers, strings on normalised words.
    data::Scenario x = first_of("extraction_drift");
    x.probes[0].expected = x.probes[0].expected.get<double>() + 0.0;
    EXPECT_TRUE(rule_violations(x).empty()) << describe(rule_violations(x));
    data::Scenario y = first_of("closure");
    y.probes.back().expected = text::capitalize(y.probes.back().expected.get<std::string>()) + ".";
    EXPECT_TRUE(rule_violations(y).empty()) << describe(rule_violations(y));
    // WRIT annotates values: the same lead under another annotation is the same value.
    data::Scenario z = first_of("closure");
    z.probes.back().expected = z.probes.back().expected.get<std::string>() + " (the final decision; the drafts differ)";
    EXPECT_TRUE(rule_violations(z).empty()) << describe(rule_violations(z));
    z.probes.back().expected = "something else (the final decision)";
    EXPECT_TRUE(has_field(rule_violations(z), "probes[" + std::to_string(z.probes.size() - 1) + "].expected"));
}
