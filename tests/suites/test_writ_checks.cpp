// SPDX-License-Identifier: MIT
// The write-integrity memory checks: each caught by a memory that breaks it on purpose, passed by
// one that keeps it, and the same verdicts with or without provenance (except provenance itself).
#include <memfail/memory/memory_system.hpp>
#include <memfail/suites/suite.hpp>
#include <memfail/suites/writ/checks.hpp>

#include <gtest/gtest.h>

#include <map>

namespace memfail::suites::writ {
namespace {

using data::Authority;
using memory::Hit;
using memory::Memory;

// A scenario where the employer changes twice, an allergy is retracted, a one-off code must not
// persist and an assistant summarises the employer wrongly.
data::Scenario scenario() {
    data::Scenario s;
    s.id = "w";
    s.suite = "writ";
    s.dataset = "writ_drift";
    s.sessions = {
        {"1", "2026-01-10T09:00:00Z", {{"1:0", "user", "I work at Acme Labs and I am allergic to peanuts.", {}}}},
        {"2", "2026-03-01T09:00:00Z",
         {{"2:0", "user", "New job: I work at Initech now. Use code 4471 for today's call only.", {}},
          {"2:1", "assistant", "Noted, you work at Initrode now.", {}}}},
        {"3", "2026-05-01T09:00:00Z",
         {{"3:0", "user", "I moved to Globex. Also, forget the peanut thing, that was wrong.", {}}}},
        {"4", "2026-06-01T09:00:00Z", {{"4:0", "user", "Where do I work?", {}}}},
    };
    data::LedgerEvent employer;
    employer.id = "employer";
    employer.type = data::MemoryType::mutable_fact;
    employer.value = "Globex";
    employer.history = {{"Acme Labs", "2026-01-10T09:00:00Z", "1:0", "1", Authority::user_stated, {}},
                        {"Initech", "2026-03-01T09:00:00Z", "2:0", "2", Authority::user_stated, {}},
                        {"Globex", "2026-05-01T09:00:00Z", "3:0", "3", Authority::user_stated, {}}};
    employer.introduced_in = "1";
    employer.updated_in = "3";
    employer.distractors = {{"Initrode", "2026-03-01T09:00:00Z", "2:1", "2", Authority::ai_summarized, {}}};
    data::LedgerEvent allergy;
    allergy.id = "allergy";
    allergy.value = "peanuts";
    allergy.history = {{"peanuts", "2026-01-10T09:00:00Z", "1:0", "1", Authority::user_stated, {}}};
    allergy.introduced_in = "1";
    allergy.retracted_in = "3";
    allergy.retracted_by = "3:0";
    data::LedgerEvent code;
    code.id = "call_code";
    code.type = data::MemoryType::non_memory;
    code.value = "4471";
    code.history = {{"4471", "2026-03-01T09:00:00Z", "2:0", "2", Authority::user_stated, {}}};
    code.introduced_in = "2";
    code.should_persist = false;
    s.ledger = {employer, allergy, code};
    data::Probe p;
    p.id = "now";
    p.after_session = "3";
    p.question = "Where do I work?";
    p.answer = "Globex";
    p.expected = "Globex";
    p.targets = {"employer"};
    p.evidence.push_back({"now:employer", "I moved to Globex.", {"3:0"}, {{"value", {"Globex"}}}, {}, true});
    s.probes.push_back(p);
    data::Probe past = p;
    past.id = "march";
    past.question = "Where did I work in April?";
    past.temporal = data::TemporalQuery{"2026-04-01T00:00:00Z", false};
    past.expected = "Initech";
    past.answer = "Initech";
    s.probes.push_back(past);
    return s;
}

// A memory as a scripted system holds it: fixed memories, hits, history and state as of a date.
class Scripted final : public memory::MemorySystem {
public:
    std::vector<Memory> held;
    std::map<std::string, std::vector<memory::MemoryEvent>> histories;
    std::map<std::string, std::vector<Memory>> as_of;  // by timestamp
    memory::Capabilities caps;
    int history_calls = 0, as_of_calls = 0;

    std::string spec() const override { return "scripted"; }
    memory::Capabilities capabilities() const override { return caps; }
    Result<void> store_conversation(const data::Session&) override { return {}; }
    Result<std::vector<Hit>> retrieve_memories(std::string_view, const std::vector<data::Message>&, int) override {
        return std::vector<Hit>{};
    }
    Result<std::vector<Memory>> all_memories() override { return held; }
    Result<void> reset() override { return {}; }
    Result<std::vector<memory::MemoryEvent>> history(std::string_view id) override {
        ++history_calls;
        if (!caps.history) return memory::MemorySystem::history(id);
        const auto it = histories.find(std::string(id));
        if (it == histories.end()) return std::vector<memory::MemoryEvent>{};
        return it->second;
    }
    Result<std::vector<Memory>> state_as_of(std::string_view when) override {
        ++as_of_calls;
        if (!caps.as_of) return memory::MemorySystem::state_as_of(when);
        const auto it = as_of.find(std::string(when));
        if (it == as_of.end()) return std::vector<Memory>{};
        return it->second;
    }
};

Memory mem(std::string id, std::string text, std::vector<std::string> sources) {
    return {std::move(id), std::move(text), "", "", std::move(sources)};
}

// A faithful bi-temporal memory of the scenario at session 3.
Scripted faithful() {
    Scripted s;
    s.caps.provenance = s.caps.history = s.caps.as_of = true;
    s.held = {mem("e", "user employer: Globex", {"3:0"})};
    s.histories["e"] = {{"e", "add", "", "user employer: Acme Labs", "2026-01-10T09:00:00Z", {"1:0"}},
                        {"e", "update", "user employer: Acme Labs", "user employer: Initech", "2026-03-01T09:00:00Z", {"2:0"}},
                        {"e", "update", "user employer: Initech", "user employer: Globex", "2026-05-01T09:00:00Z", {"3:0"}}};
    s.as_of["2026-04-01T00:00:00Z"] = {mem("e", "user employer: Initech", {"2:0"})};
    s.as_of["2026-03-01T09:00:00Z"] = {mem("e", "user employer: Initech", {"2:0"})};
    return s;
}

std::map<std::string, CheckResult> run_checks(Scripted& system, const std::vector<Hit>& hits,
                                              const std::string& probe = "now", int k = 3) {
    static const data::Scenario s = scenario();
    const data::Probe* p = nullptr;
    for (const auto& x : s.probes)
        if (x.id == probe) p = &x;
    ReadCache reads;
    const CheckContext context{s, *p, system.held, hits, system, reads, k};
    std::map<std::string, CheckResult> out;
    for (auto& c : check_writ_memory(context)) out.emplace(c.name, c);
    return out;
}

std::vector<Hit> hits_of(const std::vector<Memory>& ms) {
    std::vector<Hit> out;
    double score = 10;
    for (const auto& m : ms) out.push_back({m, score--});
    return out;
}

bool passed(const std::map<std::string, CheckResult>& r, const std::string& name) {
    const auto it = r.find(name);
    return it != r.end() && it->second.applicable && it->second.passed && *it->second.passed;
}

bool failed(const std::map<std::string, CheckResult>& r, const std::string& name) {
    const auto it = r.find(name);
    return it != r.end() && it->second.applicable && it->second.passed && !*it->second.passed;
}

TEST(WritChecks, AFaithfulBitemporalMemoryPassesEveryCheck) {
    Scripted s = faithful();
    const auto r = run_checks(s, hits_of(s.held));
    for (const char* name : {"current_held", "current_retrieved", "stale_exposure", "retraction", "over_retention",
                             "authority", "history_complete", "drift_detectable", "as_of", "provenance"})
        EXPECT_TRUE(passed(r, name)) << name << ": " << r.at(name).detail;
    const auto past = run_checks(s, hits_of(s.held), "march");
    EXPECT_TRUE(passed(past, "as_of")) << past.at("as_of").detail;
    EXPECT_FALSE(past.at("current_held").applicable);  // a probe about the past
}

TEST(WritChecks, LastWriteWinsLosesHistoryAndAsOf) {
    Scripted s = faithful();
    s.caps.history = s.caps.as_of = false;
    s.histories.clear();
    const auto r = run_checks(s, hits_of(s.held));
    EXPECT_TRUE(failed(r, "history_complete")) << r.at("history_complete").detail;
    EXPECT_NE(r.at("history_complete").detail.find("Acme Labs"), std::string::npos);
    EXPECT_TRUE(failed(r, "drift_detectable")) << r.at("drift_detectable").detail;
    EXPECT_TRUE(failed(r, "as_of"));
    EXPECT_TRUE(passed(r, "current_held"));
}

TEST(WritChecks, AStaleValueRankedFirstIsExposure) {
    Scripted s = faithful();
    s.held.push_back(mem("old", "I work at Acme Labs", {"1:0"}));
    auto r = run_checks(s, hits_of({s.held[1], s.held[0]}));
    EXPECT_TRUE(failed(r, "stale_exposure")) << r.at("stale_exposure").detail;
    // Retrieved below the current value it is not exposure.
    r = run_checks(s, hits_of({s.held[0], s.held[1]}));
    EXPECT_TRUE(passed(r, "stale_exposure"));
    // Nor is a longer value holding the old one's words ("Acme Labs" vs "Acme"): blanked first.
}

TEST(WritChecks, ARetractedValueKeptIsARetractionFailure) {
    Scripted s = faithful();
    s.held.push_back(mem("a", "user allergy: peanuts", {"1:0"}));
    const auto r = run_checks(s, hits_of({s.held[0]}));
    EXPECT_TRUE(failed(r, "retraction")) << r.at("retraction").detail;
}

TEST(WritChecks, DriftIsDetectableOnlyWhenTheCurrentValuesMemoryShowsAnEarlierOne) {
    // WRIT's detectability: history() of the memory holding the current value shows the change.
    Scripted s = faithful();
    EXPECT_TRUE(passed(run_checks(s, hits_of(s.held)), "drift_detectable"));
    // A history of one event that added the value shows no change.
    s.histories["e"] = {{"e", "add", "", "user employer: Globex", "2026-05-01T09:00:00Z", {"3:0"}}};
    auto r = run_checks(s, hits_of(s.held));
    EXPECT_TRUE(failed(r, "drift_detectable")) << r.at("drift_detectable").detail;
    // One event replacing a text does.
    s.histories["e"] = {{"e", "update", "user employer: Initech", "user employer: Globex", "2026-05-01T09:00:00Z", {"3:0"}}};
    EXPECT_TRUE(passed(run_checks(s, hits_of(s.held)), "drift_detectable"));
    // Not about the past.
    EXPECT_FALSE(run_checks(s, hits_of(s.held), "march").at("drift_detectable").applicable);
}

TEST(WritChecks, AForgottenItemWordedOtherwiseIsUndecidedNeverAPass) {
    // No match is no proof of absence: a memory that shares a word of the retracted value may keep
    // it in other words ("peanut" for "peanuts"), and only a judge can tell.
    Scripted s = faithful();
    s.held.push_back(mem("a", "user avoids anything with peanut in it", {"1:0"}));
    for (const bool with_sources : {true, false}) {
        if (!with_sources) s.held.back().sources.clear();
        const auto r = run_checks(s, hits_of({s.held[0]}));
        ASSERT_TRUE(r.at("retraction").applicable);
        EXPECT_FALSE(r.at("retraction").passed.has_value()) << r.at("retraction").detail;
        EXPECT_NE(r.at("retraction").detail.find("peanut"), std::string::npos);
    }
    // A memory with none of its words is proof enough: the faithful memory passes (above), and an
    // unrelated one too.
    s.held.back() = mem("a", "user likes long walks", {"1:0"});
    EXPECT_TRUE(passed(run_checks(s, hits_of({s.held[0]})), "retraction"));
}

TEST(WritChecks, AOneOffKeptIsOverRetention) {
    Scripted s = faithful();
    s.held.push_back(mem("c", "the call code is 4471", {"2:0"}));
    const auto r = run_checks(s, hits_of({s.held[0]}));
    EXPECT_TRUE(failed(r, "over_retention")) << r.at("over_retention").detail;
}

TEST(WritChecks, AnAssistantSummaryOverTheUserIsAnAuthorityViolation) {
    Scripted s = faithful();
    s.held = {mem("x", "user employer: Initrode", {"2:1"})};
    auto r = run_checks(s, hits_of(s.held));
    EXPECT_TRUE(failed(r, "authority")) << r.at("authority").detail;
    // Both held, the summary ranked above the user's value: still a violation.
    s.held = {mem("x", "user employer: Initrode", {"2:1"}), mem("e", "user employer: Globex", {"3:0"})};
    r = run_checks(s, hits_of(s.held));
    EXPECT_TRUE(failed(r, "authority"));
    r = run_checks(s, hits_of({s.held[1], s.held[0]}));
    EXPECT_TRUE(passed(r, "authority"));
}

TEST(WritChecks, AnAsOfAnswerFromTheWrongTimeFails) {
    Scripted s = faithful();
    s.as_of["2026-04-01T00:00:00Z"] = {mem("e", "user employer: Globex", {"3:0"})};
    const auto r = run_checks(s, hits_of(s.held), "march");
    EXPECT_TRUE(failed(r, "as_of")) << r.at("as_of").detail;
    s.as_of["2026-04-01T00:00:00Z"] = {mem("e", "user employer: Initech", {"2:0"}), mem("f", "Globex", {})};
    EXPECT_TRUE(failed(run_checks(s, hits_of(s.held), "march"), "as_of"));
}

TEST(WritChecks, ProvenanceIsTheOnlyVerdictSourcesChange) {
    Scripted with = faithful();
    with.held.push_back(mem("old", "I work at Acme Labs", {"1:0"}));
    Scripted without = with;
    for (auto& m : without.held) m.sources.clear();
    without.caps.provenance = false;
    const auto a = run_checks(with, hits_of({with.held[1], with.held[0]}));
    const auto b = run_checks(without, hits_of({without.held[1], without.held[0]}));
    for (const auto& [name, result] : a) {
        if (name == "provenance") continue;
        EXPECT_EQ(result.passed, b.at(name).passed) << name;
    }
    EXPECT_TRUE(passed(a, "provenance"));
    EXPECT_TRUE(failed(b, "provenance")) << b.at("provenance").detail;
}

TEST(WritChecks, AFailingReadIsUndecidedNotAPass) {
    class Broken final : public memory::MemorySystem {
    public:
        std::vector<Memory> held = {mem("e", "user employer: Globex", {"3:0"})};
        std::string spec() const override { return "broken"; }
        memory::Capabilities capabilities() const override {
            memory::Capabilities c;
            c.history = c.as_of = true;
            return c;
        }
        Result<void> store_conversation(const data::Session&) override { return {}; }
        Result<std::vector<Hit>> retrieve_memories(std::string_view, const std::vector<data::Message>&, int) override {
            return std::vector<Hit>{};
        }
        Result<std::vector<Memory>> all_memories() override { return held; }
        Result<void> reset() override { return {}; }
        Result<std::vector<memory::MemoryEvent>> history(std::string_view) override {
            return make_error(ErrorKind::io, "adapter went away");
        }
        Result<std::vector<Memory>> state_as_of(std::string_view) override {
            return make_error(ErrorKind::io, "adapter went away");
        }
    } broken;
    static const data::Scenario s = scenario();
    ReadCache reads;
    const auto hits = hits_of(broken.held);
    const CheckContext context{s, s.probes[1], broken.held, hits, broken, reads, 3};
    for (const auto& c : check_writ_memory(context))
        if (c.name == "as_of") {
            EXPECT_TRUE(c.applicable);
            EXPECT_FALSE(c.passed.has_value()) << c.detail;
        }
}

TEST(WritChecks, ReadsAreAskedOncePerCheckpoint) {
    Scripted s = faithful();
    static const data::Scenario sc = scenario();
    ReadCache reads;
    const auto hits = hits_of(s.held);
    for (int k : {1, 3, 5}) {
        const CheckContext context{sc, sc.probes[0], s.held, hits, s, reads, k};
        (void)check_writ_memory(context);
    }
    EXPECT_EQ(s.history_calls, 1);
    EXPECT_EQ(s.as_of_calls, 1);
}


TEST(WritChecks, AnUnstatedValueIsHeldByItsWordsAndOtherwiseUndecided) {
    data::Scenario s = scenario();
    data::LedgerEvent latent;
    latent.id = "constraint";
    latent.type = data::MemoryType::latent;
    latent.value = "avoids dairy";
    latent.history = {{"avoids dairy", "2026-05-01T09:00:00Z", "", "3", Authority::user_stated, {}}};
    latent.introduced_in = "3";
    s.ledger.push_back(latent);
    data::Probe p = s.probes[0];
    p.id = "recommend";
    p.targets = {"constraint"};
    Scripted system = faithful();
    auto run = [&](const std::vector<Memory>& held) {
        system.held = held;
        ReadCache reads;
        const auto hits = hits_of(held);
        const CheckContext context{s, p, system.held, hits, system, reads, 3};
        std::map<std::string, CheckResult> out;
        for (auto& c : check_writ_memory(context)) out.emplace(c.name, c);
        return out;
    };
    auto r = run({mem("c", "the user avoids dairy", {})});
    EXPECT_TRUE(passed(r, "current_held"));
    r = run({mem("c", "no milk or cheese for this user", {})});
    ASSERT_TRUE(r.at("current_held").applicable);
    EXPECT_FALSE(r.at("current_held").passed.has_value()) << r.at("current_held").detail;
    EXPECT_FALSE(r.at("current_retrieved").passed.has_value());
}

}  // namespace
}  // namespace memfail::suites::writ
