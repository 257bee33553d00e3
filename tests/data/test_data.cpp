// SPDX-License-Identifier: MIT
// The data model's JSONL form: round trips, field-precise errors, structural validation.
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <iterator>

namespace memfail::data {
namespace {

using nlohmann::json;

Scenario tiny() {
    Scenario s;
    s.id = "tiny";
    s.suite = "memfail";
    s.dataset = "custom";
    s.sessions.push_back({"s1", "2026-01-01T00:00:00Z", {{"m1", "user", "Mira hums only when the kettle boils."}}});
    s.sessions.push_back({"s2", "2026-01-02T00:00:00Z", {{"m2", "user", "I like tea."}, {"m3", "assistant", "Noted."}}});
    Probe p;
    p.id = "p1";
    p.after_session = "s2";
    p.question = "Would Mira hum now?";
    p.kind = ProbeKind::yes_no;
    p.answer = "No";
    p.evidence.push_back({"p1-f1", "Mira hums only when the kettle boils.", {"m1"}, {{"entity", {"Mira"}}, {"condition", {"kettle boils"}}}, {}, true});
    s.probes.push_back(p);
    Probe m;
    m.id = "p2";
    m.after_session = "s2";
    m.question = "Pick one";
    m.kind = ProbeKind::mcq;
    m.choices = {"tea", "coffee"};
    m.correct_choice = "A";
    m.evidence.push_back({"p2-f1", "I like tea.", {"m2"}, {{"preference", {"tea"}}}, {}, true});
    s.probes.push_back(m);
    return s;
}

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("memfail-data-" + std::to_string(::getpid()) + "-" + name)).string();
}

TEST(Jsonl, RoundTripPreservesEverything) {
    const Scenario s = tiny();
    auto back = scenario_from_json(to_json(s));
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    EXPECT_EQ(to_json(*back), to_json(s));
    EXPECT_EQ(scenario_hash(*back), scenario_hash(s));
}

TEST(Jsonl, HashChangesWithContent) {
    Scenario a = tiny(), b = tiny();
    b.sessions[0].messages[0].content += " ";
    EXPECT_NE(scenario_hash(a), scenario_hash(b));
}

TEST(Jsonl, FileErrorsNameLineAndField) {
    const std::string path = temp_path("bad.jsonl");
    auto j = to_json(tiny());
    j["probes"][1]["kind"] = "essay";
    {
        std::ofstream out(path);
        out << to_json(tiny()).dump() << "\n" << j.dump() << "\n";
    }
    auto r = read_jsonl(path);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
    EXPECT_NE(r.error().where.find(path + ":2"), std::string::npos) << r.error().describe();
    EXPECT_NE(r.error().where.find("probes[1].kind"), std::string::npos) << r.error().describe();
    std::filesystem::remove(path);
}

TEST(Jsonl, MissingFieldAndBadJson) {
    auto j = to_json(tiny());
    j["sessions"][1]["messages"][0].erase("content");
    auto r = scenario_from_json(j);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().where, "sessions[1].messages[0].content");

    const std::string path = temp_path("notjson.jsonl");
    {
        std::ofstream out(path);
        out << "\n{\"format\": \"memfail/1\",\n";
    }
    auto bad = read_jsonl(path);
    ASSERT_FALSE(bad.has_value());
    EXPECT_NE(bad.error().where.find(":2"), std::string::npos) << bad.error().describe();
    std::filesystem::remove(path);
}

TEST(Jsonl, WrongFormatVersionIsRefused) {
    auto j = to_json(tiny());
    j["format"] = "memfail/9";
    auto r = scenario_from_json(j);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find("memfail/9"), std::string::npos);
}

TEST(Jsonl, WriteIsAtomicAndReadable) {
    const std::string path = temp_path("ok.jsonl");
    ASSERT_TRUE(write_jsonl(path, {tiny(), tiny()}).has_value());
    auto r = read_jsonl(path);
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->size(), 2u);
    EXPECT_EQ((*r)[1].line, 2u);
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
        EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos);
    std::filesystem::remove(path);
}

std::vector<Violation> violations_of(const Scenario& s) {
    std::vector<Violation> v;
    validate_structure(s, 7, v);
    return v;
}

bool has_field(const std::vector<Violation>& v, const std::string& field) {
    for (const auto& x : v)
        if (x.field == field) return true;
    return false;
}

TEST(Validate, CleanScenarioHasNoViolations) { EXPECT_TRUE(violations_of(tiny()).empty()); }

TEST(Validate, ReportsEachBrokenRuleWithItsField) {
    Scenario s = tiny();
    s.sessions[1].messages[1].id = "m1";                       // duplicate message id
    s.probes[0].evidence[0].message_ids = {"nope"};           // unknown message
    s.probes[1].correct_choice = "C";                         // only two choices
    s.probes[1].evidence[0].key_details[0].variants = {"milk"};  // not in message or fact text
    const auto v = violations_of(s);
    EXPECT_TRUE(has_field(v, "sessions[1].messages[1].id"));
    EXPECT_TRUE(has_field(v, "probes[0].evidence[0].message_ids[0]"));
    EXPECT_TRUE(has_field(v, "probes[1].correct_choice"));
    EXPECT_TRUE(has_field(v, "probes[1].evidence[0].key_details[0]"));
    for (const auto& x : v) EXPECT_EQ(x.line, 7u);
    EXPECT_EQ(format_violation("f.jsonl", v[0]).rfind("f.jsonl:7: ", 0), 0u);
}

TEST(Validate, OneFlawIsReportedOnce) {
    Scenario s = tiny();
    // Absent from the message and from the fact's text: one finding, saying both.
    s.probes[1].evidence[0].key_details[0].variants = {"milk"};
    const auto v = violations_of(s);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_NE(v[0].message.find("appears in none of the cited messages nor in the fact's own text"),
              std::string::npos)
        << v[0].message;
}

TEST(Validate, AFactFlaggedIncompleteMayListNoKeyDetail) {
    // An imported preference stated in other words: its statement is what a memory must keep.
    Scenario s = tiny();
    auto& fact = s.probes[1].evidence[0];
    fact.key_details.clear();
    EXPECT_TRUE(has_field(violations_of(s), "probes[1].evidence[0].key_details"));
    fact.details_complete = false;
    fact.statements = {"I like tea."};
    EXPECT_TRUE(violations_of(s).empty());
    // A complete fact with only qualifiers says nothing of what it is about.
    s = tiny();
    s.probes[0].evidence[0].key_details.erase(s.probes[0].evidence[0].key_details.begin());
    EXPECT_TRUE(has_field(violations_of(s), "probes[0].evidence[0].key_details"));
}

TEST(Validate, CheckpointMustFollowEvidence) {
    Scenario s = tiny();
    s.probes[1].after_session = "s1";  // its evidence (m2) is stored in s2, after the checkpoint
    EXPECT_TRUE(has_field(violations_of(s), "probes[1].evidence[0].message_ids[0]"));
    s.probes[1].after_session = "s9";
    EXPECT_TRUE(has_field(violations_of(s), "probes[1].after_session"));
}

TEST(Validate, AbstainProbesCarryNoEvidence) {
    Scenario s = tiny();
    s.probes[0].kind = ProbeKind::abstain;
    EXPECT_TRUE(has_field(violations_of(s), "probes[0].evidence"));
    s.probes[0].evidence.clear();
    EXPECT_TRUE(violations_of(s).empty());
}

// Ids end up in file names and logs: a restricted character set and length, checked where defined.
TEST(Validate, IdsOutsideTheCharacterSetAreRefused) {
    EXPECT_EQ(id_problem("memfail.long_hop:s-01_a"), "");
    EXPECT_EQ(id_problem(std::string(k_max_id_length, 'a')), "");
    EXPECT_NE(id_problem(std::string(k_max_id_length + 1, 'a')), "");
    for (const std::string& bad : std::vector<std::string>{"", "/tmp/victim", "../../../victim", "a/b", "a\\b", ".hidden", "a b",
                                  "caf\xc3\xa9", std::string("a\0b", 3), "a\nb"})
        EXPECT_NE(id_problem(bad), "") << bad;

    Scenario s = tiny();
    s.id = "/tmp/victim";
    s.sessions[0].id = "../../../victim";
    s.sessions[1].messages[0].id = "m 2";
    s.probes[0].id = std::string(200, 'p');
    s.probes[1].evidence[0].id = ".f";
    const auto v = violations_of(s);
    EXPECT_TRUE(has_field(v, "id"));
    EXPECT_TRUE(has_field(v, "sessions[0].id"));
    EXPECT_TRUE(has_field(v, "sessions[1].messages[0].id"));
    EXPECT_TRUE(has_field(v, "probes[0].id"));
    EXPECT_TRUE(has_field(v, "probes[1].evidence[0].id"));
    for (const auto& x : v) EXPECT_EQ(x.line, 7u);
    EXPECT_EQ(format_violation("d.jsonl", v.front()).rfind("d.jsonl:7: id: scenario id '/tmp/victim' contains '/'", 0), 0u)
        << format_violation("d.jsonl", v.front());
}

TEST(Validate, DuplicateIdsAreReported) {
    Scenario s = tiny();
    s.probes[0].evidence.push_back(s.probes[0].evidence[0]);  // same fact id twice in one probe
    s.probes[1].id = "p1";
    s.sessions[1].messages[1].id = "m2";
    const auto v = violations_of(s);
    EXPECT_TRUE(has_field(v, "probes[0].evidence[1].id"));
    EXPECT_TRUE(has_field(v, "probes[1].id"));
    EXPECT_TRUE(has_field(v, "sessions[1].messages[1].id"));
}

std::string write_lines(const std::string& name, const std::vector<std::string>& lines) {
    const std::string path = temp_path(name);
    std::ofstream out(path, std::ios::binary);
    for (const auto& l : lines) out << l << "\n";
    return path;
}

TEST(Jsonl, DeepNestingIsRefusedWithTheLine) {
    const std::size_t depths[] = {65, 1000, 60000};
    for (const std::size_t depth : depths) {
        auto j = to_json(tiny());
        const std::string nested = std::string(depth, '[') + std::string(depth, ']');
        std::string line = j.dump();
        line.insert(line.size() - 1, ",\"deep\":" + nested);
        const std::string path = write_lines("deep.jsonl", {to_json(tiny()).dump(), line});
        auto r = read_jsonl(path);
        ASSERT_FALSE(r.has_value()) << depth;
        EXPECT_EQ(r.error().describe(), path + ":2: nesting deeper than 64");
        std::filesystem::remove(path);
    }
    // Brackets inside strings do not count, and 64 levels are fine.
    auto j = to_json(tiny());
    j["sessions"][0]["messages"][0]["content"] = std::string(500, '[');
    json meta = json::array();
    for (int i = 0; i < 60; ++i) meta = json::array({meta});
    j["meta"] = {{"m", meta}};
    const std::string path = write_lines("shallow.jsonl", {j.dump()});
    auto r = read_jsonl(path);
    EXPECT_TRUE(r.has_value()) << r.error().describe();
    std::filesystem::remove(path);
}

TEST(Jsonl, HugeNumbersGiveLineAndField) {
    std::string line = to_json(tiny()).dump();
    const std::string probe_meta = "\"meta\":{\"row\":1e999},";
    const auto at = line.find("\"question\":\"Pick one\"");
    ASSERT_NE(at, std::string::npos);
    line.insert(at, probe_meta);
    const std::string path = write_lines("huge.jsonl", {line});
    auto r = read_jsonl(path);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
    EXPECT_EQ(r.error().where, path + ":1: probes[1].meta.row") << r.error().describe();
    EXPECT_NE(r.error().message.find("1e999"), std::string::npos) << r.error().describe();
    std::filesystem::remove(path);
}

// Bounded and deterministic: mutations of a valid line never escape as an exception or a crash.
TEST(Jsonl, MutatedLinesNeverThrow) {
    const std::string base = to_json(tiny()).dump();
    const std::string inserts[] = {"1e999", "-1e999", "99999999999999999999999", "\"\\ud800\"", "\xff", "[[[[",
                                   "}", "null", "18446744073709551616"};
    std::uint64_t state = 42;
    for (int i = 0; i < 300; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        std::string line = base;
        const std::size_t pos = (state >> 33) % line.size();
        line.insert(pos, inserts[(state >> 13) % std::size(inserts)]);
        const std::string path = write_lines("mutated.jsonl", {line});
        auto r = read_jsonl(path);  // must return, valid or not
        if (!r) {
            EXPECT_NE(r.error().where.find(path + ":1"), std::string::npos) << r.error().describe();
        } else {
            std::vector<Violation> v;
            for (const auto& l : *r) validate_structure(l.scenario, l.line, v);
        }
        std::filesystem::remove(path);
    }
}

TEST(MessageIndex, FindsMessagesAndSessions) {
    const Scenario s = tiny();
    MessageIndex index(s);
    ASSERT_NE(index.message("m3"), nullptr);
    EXPECT_EQ(index.message("m3")->role, "assistant");
    EXPECT_EQ(index.session_of("m2")->id, "s2");
    EXPECT_EQ(index.session_position("s2"), 1u);
    EXPECT_EQ(index.message("zz"), nullptr);
}

}  // namespace
}  // namespace memfail::data

namespace memfail::data {
namespace {

TEST(WriteFileAtomically, AFailedProducerLeavesNothingBehind) {
    const auto dir = std::filesystem::temp_directory_path() / ("memfail-atomic-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "out.jsonl").string();
    ASSERT_TRUE(write_file_atomically(path, std::string("old\n")).has_value());
    const auto failed = write_file_atomically(path, [](std::ostream& out) -> Result<void> {
        out << "half a line";
        return make_error(ErrorKind::io, "the producer gave up");
    });
    ASSERT_FALSE(failed.has_value());
    EXPECT_EQ(failed.error().message, "the producer gave up");
    EXPECT_EQ(read_file(path).value(), "old\n");  // the earlier file is untouched
    std::size_t entries = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) entries += e.is_regular_file() ? 1 : 0;
    EXPECT_EQ(entries, 1u);  // no temporary file left
    ASSERT_TRUE(write_file_atomically(path, [](std::ostream& out) -> Result<void> {
                    out << "streamed\n";
                    return {};
                }).has_value());
    EXPECT_EQ(read_file(path).value(), "streamed\n");
    std::filesystem::remove_all(dir);
}


// ---- memfail/2: the write-integrity ledger -----------------------------------------------------

Scenario with_ledger() {
    Scenario s;
    s.id = "w1";
    s.suite = "writ";
    s.dataset = "writ_drift";
    s.sessions.push_back({"1", "2026-01-15T10:00:00Z", {{"1:0", "user", "I work at Acme Corp."}, {"1:1", "assistant", "Noted."}}});
    s.sessions.push_back({"2", "2026-03-01T14:00:00Z", {{"2:0", "user", "I work at Initech now."}}});
    s.sessions.push_back({"3", "2026-04-01T14:00:00Z", {{"3:0", "user", "Where do I work, and my budget is $5,000?"}}});
    LedgerEvent e;
    e.id = "employer";
    e.type = MemoryType::mutable_fact;
    e.value = "Initech";
    e.history = {{"Acme Corp", "2026-01-15T10:00:00Z", "1:0", "1", Authority::user_stated, {}},
                 {"Initech", "2026-03-01T14:00:00Z", "2:0", "", Authority::user_stated, {"Initech"}}};
    e.introduced_in = "1";
    e.updated_in = "2";
    e.aliases = {"my employer"};
    e.distractors = {{"Initrode", "2026-03-01T14:00:00Z", "2:0", "", Authority::ai_summarized, {}}};
    s.ledger.push_back(e);
    LedgerEvent b;
    b.id = "budget";
    b.value = nlohmann::json{{"amount", 5000}, {"currency", "USD"}};
    b.history = {{b.value, "2026-04-01T14:00:00Z", "3:0", "3", Authority::user_stated, {}}};
    b.introduced_in = "3";
    b.should_persist = false;
    s.ledger.push_back(b);
    Probe p;
    p.id = "p1";
    p.after_session = "3";
    p.question = "Where do I work?";
    p.answer = "Initech";
    p.evidence.push_back({"p1-f1", "I work at Initech now.", {"2:0"}, {{"entity", {"Initech"}}}, {}, true});
    p.capabilities = {"retrieval", "update_tracking"};
    p.temporal = TemporalQuery{"2026-02-01T00:00:00Z", false};
    p.rubric = Rubric{};
    p.rubric->kind = RubricKind::structured;
    p.rubric->method = "multi_criterion";
    p.rubric->required = {"Initech"};
    p.rubric->pass_fraction = 0.5;
    p.rubric->groups = {{"Acme", "Acme Corp"}};
    p.rubric->fields = {{"employer", "Initech"}};
    p.targets = {"employer"};
    p.expected = nlohmann::json{{"employer", "Initech"}};
    p.expected_source = "2:0";
    p.failure_modes = {"stale_memory", "some_label_not_in_the_enum"};
    s.probes.push_back(p);
    return s;
}

TEST(JsonlV2, ALedgerRoundTripsAndIsWrittenAsFormat2) {
    const Scenario s = with_ledger();
    const json j = to_json(s);
    EXPECT_EQ(j.at("format"), "memfail/2");
    auto back = scenario_from_json(j);
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    EXPECT_EQ(to_json(*back), j);
    ASSERT_EQ(back->ledger.size(), 2u);
    EXPECT_EQ(back->ledger[0].distractors[0].authority, Authority::ai_summarized);
    EXPECT_EQ(back->ledger[1].value.at("amount"), 5000);  // objects stay objects
    EXPECT_FALSE(back->ledger[1].should_persist);
    ASSERT_TRUE(back->probes[0].temporal);
    EXPECT_FALSE(back->probes[0].temporal->expect_current);
    EXPECT_EQ(back->probes[0].rubric->pass_fraction, 0.5);
    EXPECT_EQ(back->probes[0].failure_modes[1], "some_label_not_in_the_enum");
    EXPECT_TRUE(violations_of(s).empty());
}

TEST(JsonlV2, AScenarioWithoutV2FieldsStaysFormat1AndKeepsItsHash) {
    const Scenario s = tiny();
    EXPECT_EQ(to_json(s).at("format"), "memfail/1");
    EXPECT_FALSE(s.uses_v2());
}

TEST(JsonlV2, Format1FilesMayNotCarryV2Fields) {
    json j = to_json(tiny());
    j["probes"][0]["rubric"] = {{"kind", "exact"}};
    auto r = scenario_from_json(j);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().where, "probes[0].rubric");
    EXPECT_NE(r.error().message.find("memfail/2"), std::string::npos);
    json k = to_json(tiny());
    k["ledger"] = json::array();
    EXPECT_FALSE(scenario_from_json(k).has_value());
}

TEST(JsonlV2, BadLedgerFieldsNameTheirPath) {
    json j = to_json(with_ledger());
    j["ledger"][0]["type"] = "sometimes";
    auto r = scenario_from_json(j);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().where, "ledger[0].type");
    j = to_json(with_ledger());
    j["ledger"][0]["history"][1]["authority"] = "the_boss";
    r = scenario_from_json(j);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().where, "ledger[0].history[1].authority");
    j = to_json(with_ledger());
    j["probes"][0]["rubric"]["kind"] = "substring";
    r = scenario_from_json(j);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().where, "probes[0].rubric.kind");
}

TEST(ValidateV2, LedgerReferencesAndRubricsAreChecked) {
    Scenario s = with_ledger();
    s.ledger[0].history[1].message_id = "9:9";
    s.ledger[0].updated_in = "7";
    s.ledger[1].id = "employer";
    s.ledger[0].history[1].as_of = "2025-01-01T00:00:00Z";
    s.probes[0].targets.push_back("salary");
    s.probes[0].rubric->kind = RubricKind::numeric;
    s.probes[0].temporal->as_of.clear();
    const auto v = violations_of(s);
    auto has = [&](const std::string& field) {
        return std::any_of(v.begin(), v.end(), [&](const Violation& x) { return x.field == field; });
    };
    EXPECT_TRUE(has("ledger[0].history[1].message_id"));
    EXPECT_TRUE(has("ledger[0].updated_in"));
    EXPECT_TRUE(has("ledger[1].id"));
    EXPECT_TRUE(has("ledger[0].history[1].as_of"));
    EXPECT_TRUE(has("probes[0].targets[1]"));
    EXPECT_TRUE(has("probes[0].rubric.number"));
    EXPECT_TRUE(has("probes[0].temporal.as_of"));
}

TEST(ValueMentions, NumbersGetTheirGroupedFormAndObjectsTheirLeaves) {
    ValueRecord r;
    r.value = 5000;
    EXPECT_EQ(value_mentions(r), (std::vector<std::string>{"5000", "5,000"}));
    r.value = 1234567.0;
    EXPECT_EQ(value_mentions(r), (std::vector<std::string>{"1234567", "1,234,567"}));
    r.value = nlohmann::json{{"city", "Berlin"}, {"zip", 10115}};
    EXPECT_EQ(value_mentions(r), (std::vector<std::string>{"Berlin", "10115", "10,115"}));
    r.mentions = {"$5k"};
    EXPECT_EQ(value_mentions(r), (std::vector<std::string>{"$5k"}));
}

}  // namespace
}  // namespace memfail::data
