// SPDX-License-Identifier: MIT
// The dynamic suite's evidence recall and attribution labels: each label caught by a memory set that
// breaks its rule on purpose, exact recall figures, and the same diagnosis with or without provenance
// wherever the logs carry details.
#include <memfail/memory/memory_system.hpp>
#include <memfail/suites/dynamic/evidence.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

namespace memfail::suites::dynamic {
namespace {

using memory::Memory;
using nlohmann::json;

data::Message app_message(const std::string& id, const std::string& when, const std::string& api, json request,
                          std::vector<std::string> details) {
    data::AppLog log;
    log.timestamp = when;
    log.app = "fitness_tracker";
    log.api = api;
    log.request = std::move(request);
    log.response = {{"status", "ok"}};
    log.details = std::move(details);
    data::Message m;
    m.id = id;
    m.role = "app";
    m.content = data::render_app_log(log);
    m.app_log = std::move(log);
    return m;
}

// A morning run that moved from Lakeside Trail at 07:15 (old, L0) to Riverside Park (L1) at 06:30
// (L2) on Mondays and Wednesdays (L3); an evening swim (a competing routine, L9); a grocery order
// (another key, L5); and a log with no details (L7).
data::Scenario scenario() {
    data::Scenario s;
    s.id = "d";
    s.suite = "dynamic";
    s.dataset = "dynamic";
    data::Session one{"s1", "2024-02-01T08:00:00Z", {}};
    one.messages.push_back(app_message("L0", "2024-02-01 08:02:00", "log_workout",
                                       {{"activity", "run"}, {"place", "Lakeside Trail"}, {"start", "07:15"}},
                                       {"Lakeside Trail", "07:15"}));
    data::Session two{"s2", "2024-03-04T08:00:00Z", {}};
    two.messages.push_back(app_message("L1", "2024-03-04 08:01:00", "log_workout",
                                       {{"activity", "run"}, {"place", "Riverside Park"}}, {"Riverside Park"}));
    two.messages.push_back(app_message("L2", "2024-03-04 08:02:00", "set_alarm",
                                       {{"label", "run"}, {"time", "06:30"}}, {"06:30"}));
    two.messages.push_back(app_message("L3", "2024-03-04 08:03:00", "set_schedule",
                                       {{"label", "run"}, {"days", {"Monday", "Wednesday"}}}, {"Monday", "Wednesday"}));
    two.messages.push_back(app_message("L5", "2024-03-04 08:04:00", "order",
                                       {{"items", {"oat milk", "sourdough bread"}}}, {"oat milk", "sourdough bread"}));
    two.messages.push_back(app_message("L9", "2024-03-04 08:05:00", "log_workout",
                                       {{"activity", "swim"}, {"place", "Aquatic Centre"}}, {"Aquatic Centre"}));
    two.messages.push_back(app_message("L7", "2024-03-04 08:06:00", "sync", {{"device", "watch"}}, {}));
    s.sessions = {one, two};
    return s;
}

data::ProbeField field(const std::string& path, data::FieldRole role, std::vector<std::string> evidence) {
    data::ProbeField f;
    f.path = path;
    f.role = role;
    f.evidence = std::move(evidence);
    return f;
}

data::Probe probe() {
    data::Probe p;
    p.id = "p";
    p.task = "state_completion";
    p.state_key = "habits_state:morning_run";
    p.checkpoint = "C2";
    p.fields = {field("location", data::FieldRole::identity, {"L1"}),
                field("start_time", data::FieldRole::core, {"L2"}),
                field("days_of_week", data::FieldRole::detail, {"L3"})};
    p.conflicting = {"L0", "L9"};
    return p;
}

// The morning run's own key: its old and current logs (L9 belongs to the evening swim).
data::ProfileState run_state() {
    data::ProfileState st;
    st.key = "habits_state:morning_run";
    st.snapshots = {{"C1", "x", {{"location", {"L0"}}, {"start_time", {"L0"}}}},
                    {"C2", "y", {{"location", {"L1"}}, {"start_time", {"L2"}}, {"days_of_week", {"L3"}}}}};
    return st;
}

// A verbatim-like system: one memory per log, its text the log's content, citing it.
class Store {
public:
    explicit Store(const data::Scenario& s) {
        for (const auto& session : s.sessions)
            for (const auto& m : session.messages) m_memories[m.id] = Memory{"m-" + m.id, m.content, "", "", {m.id}};
    }
    std::vector<const Memory*> of(const std::vector<std::string>& ids) const {
        std::vector<const Memory*> out;
        for (const auto& id : ids) out.push_back(&m_memories.at(id));
        return out;
    }
    std::vector<const Memory*> all() const {
        std::vector<const Memory*> out;
        for (const auto& [id, m] : m_memories) out.push_back(&m);
        return out;
    }

private:
    std::map<std::string, Memory> m_memories;
};

struct Fixture : ::testing::Test {
    data::Scenario s = scenario();
    data::MessageIndex messages{s};
    Store store{s};
    data::Probe p = probe();
    data::ProfileState state = run_state();

    // The label with provenance on and off, checked to agree.
    ProbeEvidence diagnose(const std::vector<std::string>& hits, const data::ProfileState* st = nullptr) {
        const auto with = attribute(p, store.of(hits), store.all(), true, messages, st);
        const auto without = attribute(p, store.of(hits), store.all(), false, messages, st);
        EXPECT_EQ(with.label, without.label) << with.reason << " / " << without.reason;
        EXPECT_DOUBLE_EQ(with.recall, without.recall);
        EXPECT_EQ(with.complete, without.complete);
        return with;
    }
};

using DynamicEvidence = Fixture;

TEST_F(DynamicEvidence, AllRetrievedIsAllClear) {
    const auto e = diagnose({"L1", "L2", "L3", "L5"});
    ASSERT_TRUE(e.label);
    EXPECT_EQ(*e.label, Attribution::all_clear);
    EXPECT_DOUBLE_EQ(e.recall, 1.0);
    EXPECT_TRUE(e.complete);
    ASSERT_EQ(e.fields.size(), 3u);
    for (const auto& f : e.fields) {
        EXPECT_EQ(f.gold, 1u);
        EXPECT_EQ(f.retrieved, 1u);
        EXPECT_EQ(f.stored, 1u);
        EXPECT_DOUBLE_EQ(f.recall, 1.0);
    }
}

TEST_F(DynamicEvidence, DroppedIdentityLogsAreIdentityMiss) {
    const auto e = diagnose({"L2", "L3"});
    ASSERT_TRUE(e.label);
    EXPECT_EQ(*e.label, Attribution::identity_miss);
    EXPECT_DOUBLE_EQ(e.recall, 2.0 / 3);
    EXPECT_FALSE(e.complete);
    EXPECT_EQ(e.fields[0].retrieved, 0u);
    EXPECT_EQ(e.fields[0].stored, 1u);
    EXPECT_NE(e.reason.find("L1 (stored, not retrieved)"), std::string::npos) << e.reason;
}

// One retrieved entry that establishes the routine is enough for its identity (DynamicMem asks
// whether the identity is established, not whether every identity log came back).
TEST_F(DynamicEvidence, OneIdentityEntrySuffices) {
    p.fields[0].evidence = {"L1", "L2"};
    auto e = diagnose({"L2", "L3"});
    ASSERT_TRUE(e.label);
    EXPECT_EQ(*e.label, Attribution::all_clear);
    EXPECT_FALSE(e.complete);  // L1 is still a gold log not retrieved: recall says so
    e = diagnose({"L3"});
    EXPECT_EQ(*e.label, Attribution::identity_miss);
    // A probe without identity fields: any current log establishes what it is about, and its detail
    // decides.
    for (auto& f : p.fields) f.role = data::FieldRole::core;
    e = diagnose({"L3"});
    EXPECT_EQ(*e.label, Attribution::detail_miss);
}

// Identity for every family. A habit is the same routine at its earlier times and places: its
// superseded logs establish it, and only another routine's logs miss it. An attribute's or a
// preference's earlier value is another entity or another comparison: retrieved alone, the identity is
// missed. With and without identity fields.
TEST_F(DynamicEvidence, IdentityForEveryFamily) {
    for (const bool identity_fields : {true, false}) {
        if (!identity_fields)
            for (auto& f : p.fields) f.role = data::FieldRole::core;
        p.state_key = "habits_state:morning_run";
        auto e = diagnose({"L0"}, &state);  // the routine's old time: the routine, not its detail
        EXPECT_EQ(*e.label, Attribution::detail_miss) << identity_fields;
        e = diagnose({"L9", "L5"}, &state);  // only the evening swim: another routine
        EXPECT_EQ(*e.label, Attribution::identity_miss) << identity_fields;
        for (const char* key : {"preferences_state:coffee_style", "attributes_state:employer"}) {
            p.state_key = key;
            state.key = key;
            e = diagnose({"L0"}, &state);  // the earlier comparison or entity only
            EXPECT_EQ(*e.label, Attribution::identity_miss) << key << identity_fields;
            e = diagnose({"L9"}, &state);  // a competing key's only
            EXPECT_EQ(*e.label, Attribution::identity_miss) << key << identity_fields;
            e = diagnose({"L0", "L1", "L2", "L3"}, &state);
            EXPECT_EQ(*e.label, Attribution::conflated) << key << identity_fields;
        }
        state.key = "habits_state:morning_run";
    }
}

TEST_F(DynamicEvidence, DroppedDetailLogsAreDetailMiss) {
    const auto e = diagnose({"L1", "L2", "L5"});
    ASSERT_TRUE(e.label);
    EXPECT_EQ(*e.label, Attribution::detail_miss);
    EXPECT_DOUBLE_EQ(e.recall, 2.0 / 3);
    EXPECT_DOUBLE_EQ(e.fields[2].recall, 0.0);
    EXPECT_NE(e.reason.find("L3"), std::string::npos);
}

TEST_F(DynamicEvidence, SupersededLogRetrievedIsConflated) {
    // Beside the current evidence.
    auto e = diagnose({"L1", "L2", "L3", "L0"});
    ASSERT_TRUE(e.label);
    EXPECT_EQ(*e.label, Attribution::conflated);
    EXPECT_TRUE(e.complete);
    EXPECT_DOUBLE_EQ(e.recall, 1.0);
    EXPECT_NE(e.reason.find("L0"), std::string::npos);
    // Instead of the detail evidence: the current value's evidence is missing first (DynamicMem's
    // order: detail before conflated).
    e = diagnose({"L1", "L2", "L0"});
    EXPECT_EQ(*e.label, Attribution::detail_miss);
    // Instead of all of it, the old value only: the routine is established (a habit's earlier time
    // is the same routine), its current detail is missing.
    e = diagnose({"L0"});
    EXPECT_EQ(*e.label, Attribution::detail_miss);
    EXPECT_DOUBLE_EQ(e.recall, 0.0);
}

TEST_F(DynamicEvidence, OtherKeysOnlyIsIrrelevantEvidence) {
    auto e = diagnose({"L5"});
    ASSERT_TRUE(e.label);
    EXPECT_EQ(*e.label, Attribution::irrelevant_evidence);
    EXPECT_DOUBLE_EQ(e.recall, 0.0);
    e = diagnose({});
    EXPECT_EQ(*e.label, Attribution::irrelevant_evidence);
    // A competing routine's log is about this part of the user's life, not irrelevant: with the
    // profile state it is another routine (the identity is missed); without it every conflicting log
    // counts as this key's (the routine is there, its detail is not).
    e = diagnose({"L9", "L5"}, &state);
    EXPECT_EQ(*e.label, Attribution::identity_miss);
    e = diagnose({"L9", "L5"});
    EXPECT_EQ(*e.label, Attribution::detail_miss);
    // The old value of the same key keeps it relevant either way.
    e = diagnose({"L0"}, &state);
    EXPECT_EQ(*e.label, Attribution::detail_miss);
}

TEST_F(DynamicEvidence, RecallCountsDistinctGoldLogsPerField) {
    p.fields[1].evidence = {"L1", "L2", "L2"};  // a duplicate counts once
    const auto e = diagnose({"L1", "L3"});
    EXPECT_EQ(e.fields[1].gold, 2u);
    EXPECT_EQ(e.fields[1].retrieved, 1u);
    EXPECT_DOUBLE_EQ(e.fields[1].recall, 0.5);
    EXPECT_DOUBLE_EQ(e.recall, 3.0 / 4);  // micro: (1 + 1 + 1) / (1 + 2 + 1)
    EXPECT_EQ(*e.label, Attribution::detail_miss);
}

TEST_F(DynamicEvidence, StoredCountsWhatTheSystemHolds) {
    const auto held = store.of({"L1", "L2"});
    const auto e = attribute(p, store.of({"L1", "L2"}), held, true, messages);
    EXPECT_EQ(e.fields[2].stored, 0u);
    EXPECT_EQ(*e.label, Attribution::detail_miss);
    EXPECT_NE(e.reason.find("L3 (not stored)"), std::string::npos) << e.reason;
}

TEST_F(DynamicEvidence, TheTextDecidesWithOrWithoutProvenance) {
    const std::vector<std::string> logs = {"L1", "L2"};
    // Cites L1 but lost the place; holds L2's time but cites nothing.
    const Memory lossy{"a", "went for a run", "", "", {"L1"}};
    const Memory uncited{"b", "alarm set for 06:30", "", "", {}};
    const std::vector<const Memory*> memories = {&lossy, &uncited};
    // Provenance tells where to look first; the text decides: the citing memory lost a detail, the
    // uncited one holds L2's. The same verdict with provenance and without.
    auto c = covered_logs(logs, memories, true, messages);
    EXPECT_EQ(c.held, (std::set<std::string>{"L2"}));
    EXPECT_TRUE(c.unsure.empty());
    c = covered_logs(logs, memories, false, messages);
    EXPECT_EQ(c.held, (std::set<std::string>{"L2"}));
    // A summary that keeps the details holds the log whatever its wording.
    const Memory summary{"c", "The user now runs at riverside park, alarm at 06:30.", "", "", {"L1", "L2"}};
    c = covered_logs(logs, {&summary}, true, messages);
    EXPECT_EQ(c.held, (std::set<std::string>{"L1", "L2"}));
    // Details are matched at word boundaries: "06:305" is not "06:30".
    const Memory near{"d", "code 06:305 at Riverside Parkway", "", "", {}};
    c = covered_logs(logs, {&near}, false, messages);
    EXPECT_TRUE(c.held.empty());
}

TEST_F(DynamicEvidence, LogsWithoutDetailsAreUnsureWithoutProvenance) {
    p.fields[2].evidence = {"L7"};  // a log that carries no details
    const auto with = attribute(p, store.of({"L1", "L2", "L7"}), store.all(), true, messages);
    ASSERT_TRUE(with.label);
    EXPECT_EQ(*with.label, Attribution::all_clear);
    const auto without = attribute(p, store.of({"L1", "L2", "L7"}), store.all(), false, messages);
    EXPECT_FALSE(without.label);
    EXPECT_NE(without.reason.find("L7"), std::string::npos) << without.reason;
    EXPECT_EQ(without.fields[2].unsure, 1u);
    EXPECT_EQ(without.fields[2].retrieved, 0u);
    EXPECT_FALSE(without.complete);
    // An identity miss that holds whatever L7 is still decides.
    const auto decided = attribute(p, store.of({"L2", "L7"}), store.all(), false, messages);
    ASSERT_TRUE(decided.label);
    EXPECT_EQ(*decided.label, Attribution::identity_miss);
    const auto c = covered_logs({"L7"}, store.of({"L7"}), false, messages);
    EXPECT_EQ(c.unsure, (std::set<std::string>{"L7"}));
}

TEST_F(DynamicEvidence, AttributionNamesRoundTrip) {
    for (auto a : {Attribution::irrelevant_evidence, Attribution::identity_miss, Attribution::detail_miss,
                   Attribution::conflated, Attribution::all_clear})
        EXPECT_EQ(parse_attribution(attribution_name(a)), a);
    EXPECT_FALSE(parse_attribution("Detail_Miss"));
}

// A checkpoint's store indexed once serves a hundred probes in time linear in its size: ten times the
// memories take far less than a hundred times as long (what a scan per probe and memory pair would
// cost). Timed as a ratio of two sizes measured side by side (best of three each), so a loaded or
// instrumented machine slows both alike.
TEST_F(DynamicEvidence, HeldIndexScalesToLargeStores) {
    auto seconds_for = [&](int size) {
        std::vector<Memory> bulk;
        bulk.reserve(static_cast<std::size_t>(size));
        for (int i = 0; i < size; ++i)
            bulk.push_back(Memory{"x" + std::to_string(i),
                                  "[Mon 2024-01-01 07:00] fitness_tracker.log_workout request: {\"place\":\"Track " +
                                      std::to_string(i) + "\",\"note\":\"run at the park\"}",
                                  "", "", {"X" + std::to_string(i)}});
        std::vector<const Memory*> held;
        for (const auto& m : bulk) held.push_back(&m);
        for (const auto* m : store.all()) held.push_back(m);
        double best = 1e9;
        for (int round = 0; round < 3; ++round) {
            const auto start = std::chrono::steady_clock::now();
            for (bool provenance : {true, false}) {
                const HeldIndex index(held, provenance);
                const HeldIndex hits(store.of({"L1", "L2", "L3"}), provenance);
                for (int i = 0; i < 100; ++i) {
                    const auto e = attribute(p, hits, index, messages);
                    EXPECT_EQ(*e.label, Attribution::all_clear);
                    EXPECT_EQ(e.fields[0].stored, 1u);
                }
            }
            best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        return best;
    };
    const double small = seconds_for(3000);
    const double large = seconds_for(30000);
    EXPECT_LT(large, 30 * small + 0.05) << "3,000 memories: " << small << " s; 30,000: " << large << " s";
}

}  // namespace
}  // namespace memfail::suites::dynamic
