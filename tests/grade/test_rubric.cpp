// SPDX-License-Identifier: MIT
// The rubric grader, kind by kind: a passing, a failing and (where the rules cannot decide) an
// unsure answer for each, and the planted faults a bare-substring grader gets wrong: the stale value,
// a value hidden in a longer word, numbers written differently, objects compared as text, forbidden
// values, rejected values while declining, addresses written differently, aliases counted twice.
// Ends with a fuzz test over random bytes and random rubrics.
#include <memfail/grade/rubric.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace memfail::grade {
namespace {

using data::Probe;
using data::Rubric;
using data::RubricKind;
using nlohmann::json;

Probe probe_of(Rubric rubric, json expected = nullptr) {
    Probe p;
    p.id = "p1";
    p.question = "?";
    p.rubric = std::move(rubric);
    p.expected = std::move(expected);
    return p;
}

Rubric rubric_of(RubricKind kind) {
    Rubric r;
    r.kind = kind;
    return r;
}

RubricOutcome outcome(const Probe& p, std::string_view answer, const RubricContext& context = {}) {
    return grade_rubric(p, answer, context).outcome;
}

constexpr RubricOutcome pass = RubricOutcome::pass;
constexpr RubricOutcome fail = RubricOutcome::fail;
constexpr RubricOutcome unsure = RubricOutcome::unsure;

// ---- exact -----------------------------------------------------------------------------------------

TEST(RubricExact, StringPresentAtWordBoundariesPasses) {
    const Probe p = probe_of(rubric_of(RubricKind::exact), "Globex Corporation");
    const auto v = grade_rubric(p, "You work at GLOBEX corporation, since March.");
    EXPECT_EQ(v.outcome, pass) << v.reason;
    EXPECT_EQ(v.score, 1);
    // Case and punctuation differences do not matter.
    EXPECT_EQ(outcome(probe_of(rubric_of(RubricKind::exact), "Dr. Ana Ruiz-Lopez"), "It's dr ana ruiz lopez!"), pass);
}

TEST(RubricExact, ParaphraseIsUnsureAbstentionFails) {
    const Probe p = probe_of(rubric_of(RubricKind::exact), "Globex Corporation");
    // A shortened name or an acronym may mean the same: only the judge can tell.
    const auto v = grade_rubric(p, "You work at Globex.");
    EXPECT_EQ(v.outcome, unsure) << v.reason;
    EXPECT_EQ(v.missing, (std::vector<std::string>{"Globex Corporation"}));
    EXPECT_EQ(outcome(probe_of(rubric_of(RubricKind::exact), "New York City"), "You live in NYC."), unsure);
    // Declining is not a paraphrase.
    EXPECT_EQ(outcome(p, "I don't have any information about your employer."), fail);
    EXPECT_EQ(outcome(p, "I don't know."), fail);
}

TEST(RubricExact, ValueHiddenInsideALongerWordIsNotAMatch) {
    const Probe p = probe_of(rubric_of(RubricKind::exact), "Acme");
    EXPECT_NE(outcome(p, "You grew up in Acmeville."), pass);
    EXPECT_EQ(outcome(p, "You grew up in Acme."), pass);
}

TEST(RubricExact, StaleValueFails) {
    Probe p = probe_of(rubric_of(RubricKind::exact), "Seattle");
    const RubricContext ledger{{"Portland", "Tacoma"}};
    const auto v = grade_rubric(p, "You live in Portland.", ledger);
    EXPECT_EQ(v.outcome, fail) << v.reason;
    EXPECT_EQ(v.offending, (std::vector<std::string>{"Portland"}));
    EXPECT_EQ(outcome(p, "You moved from Portland to Seattle.", ledger), pass);
    EXPECT_EQ(outcome(p, "You live in the Emerald City.", ledger), unsure);
    // Without the ledger, the probe's own rejected values are the known-wrong ones.
    p.rubric->reject = {"Portland"};
    EXPECT_EQ(outcome(p, "You live in Portland."), fail);
}

TEST(RubricExact, ExpectedInsideAStaleValueIsNotStated) {
    // The user left "Acme Labs" for "Acme": "Acme Labs" contains "Acme" but is the stale value.
    const Probe p = probe_of(rubric_of(RubricKind::exact), "Acme");
    const RubricContext ledger{{"Acme Labs"}};
    const auto v = grade_rubric(p, "You work at Acme Labs.", ledger);
    EXPECT_EQ(v.outcome, fail) << v.reason;
    EXPECT_EQ(v.offending, (std::vector<std::string>{"Acme Labs"}));
    EXPECT_EQ(outcome(p, "You left Acme Labs and now work at Acme.", ledger), pass);
    // A known-wrong value inside the expected one is never evidence against it.
    const Probe q = probe_of(rubric_of(RubricKind::exact), "Acme Labs");
    EXPECT_EQ(outcome(q, "Acme Labs.", RubricContext{{"Acme"}}), pass);
}

TEST(RubricExact, StaleValueFromTheScenarioLedger) {
    data::Scenario s;
    data::LedgerEvent e;
    e.id = "e1";
    e.type = data::MemoryType::mutable_fact;
    data::ValueRecord old_value, new_value, distractor;
    old_value.value = "Portland";
    new_value.value = "Seattle";
    distractor.value = "Spokane";
    distractor.authority = data::Authority::ai_summarized;
    e.history = {old_value, new_value};
    e.value = "Seattle";
    e.distractors = {distractor};
    s.ledger = {e};
    Probe p = probe_of(rubric_of(RubricKind::exact), "Seattle");
    p.targets = {"e1"};
    const RubricContext ctx = rubric_context(s, p);
    EXPECT_EQ(ctx.wrong_values, (std::vector<std::string>{"Portland", "Spokane"}));
    EXPECT_EQ(outcome(p, "Portland", ctx), fail);
    EXPECT_EQ(outcome(p, "Spokane, I believe", ctx), fail);
    EXPECT_EQ(outcome(p, "Seattle", ctx), pass);
    // A probe about the past: the current value is the wrong one.
    Probe past = p;
    past.expected = "Portland";
    const RubricContext past_ctx = rubric_context(s, past);
    EXPECT_EQ(outcome(past, "Seattle", past_ctx), fail);
    EXPECT_EQ(outcome(past, "Portland", past_ctx), pass);
}

// What the hallucination rate rests on: a wrong answer naming any value the probe's facts ever had
// (current, past or a distractor) did not make one up.
TEST(RubricHallucination, AKnownValueIsAnyValueTheTargetsEverHad) {
    data::Scenario s;
    data::LedgerEvent e;
    e.id = "e1";
    data::ValueRecord old_value, new_value, distractor;
    old_value.value = "Portland";
    new_value.value = "Seattle";
    distractor.value = "Spokane";
    e.history = {old_value, new_value};
    e.distractors = {distractor};
    s.ledger = {e};
    Probe p = probe_of(rubric_of(RubricKind::exact), "Seattle");
    p.targets = {"e1"};
    for (const char* a : {"Seattle.", "You lived in Portland.", "Spokane, I think"})
        EXPECT_TRUE(answer_states_known_value(s, p, a)) << a;
    for (const char* a : {"Tacoma.", "Portlandia", ""}) EXPECT_FALSE(answer_states_known_value(s, p, a)) << a;
    p.targets = {"no_such_event"};
    EXPECT_FALSE(answer_states_known_value(s, p, "Seattle"));
}

TEST(RubricExact, NumbersComparedAsNumbers) {
    const Probe p = probe_of(rubric_of(RubricKind::exact), 5000);
    for (const char* a : {"$5,000", "5000", "5k", "five thousand dollars", "5,000.00", "about $5K a month"})
        EXPECT_EQ(outcome(p, a), pass) << a;
    EXPECT_EQ(outcome(p, "$5,001"), fail);
    EXPECT_EQ(outcome(p, "$50,000"), fail);
    EXPECT_EQ(outcome(p, "It is a tidy sum."), unsure);
    // The expected value written as a string with a currency sign is a number too.
    const Probe q = probe_of(rubric_of(RubricKind::exact), "$2,000");
    EXPECT_EQ(outcome(q, "2000 dollars"), pass);
    EXPECT_EQ(outcome(q, "two thousand"), pass);
    EXPECT_EQ(outcome(q, "$2,500"), fail);
}

TEST(RubricExact, ObjectsComparedFieldByField) {
    const json expected = {{"employer", "Initech"}, {"city", "Austin"}, {"salary", 95000}};
    const Probe p = probe_of(rubric_of(RubricKind::exact), expected);
    const std::string every_field = "You work at Initech in Austin, earning $95,000 a year.";
    // A grader that compares the stringified object can never pass this answer.
    ASSERT_EQ(every_field.find(expected.dump()), std::string::npos);
    const auto v = grade_rubric(p, every_field);
    EXPECT_EQ(v.outcome, pass) << v.reason;
    EXPECT_EQ(v.score, 1);
    // Two of three: partial credit, unsure (the city may be paraphrased).
    const auto partial = grade_rubric(p, "Initech pays you 95k.");
    EXPECT_EQ(partial.outcome, unsure) << partial.reason;
    EXPECT_NEAR(partial.score, 2.0 / 3.0, 1e-9);
    EXPECT_EQ(partial.missing, (std::vector<std::string>{"city: Austin"}));
    // A wrong salary is a fail, with the others still credited.
    const auto wrong = grade_rubric(p, "Initech in Austin, $90,000.");
    EXPECT_EQ(wrong.outcome, fail) << wrong.reason;
    EXPECT_NEAR(wrong.score, 2.0 / 3.0, 1e-9);
    // Arrays: every element.
    const Probe list = probe_of(rubric_of(RubricKind::exact), json::array({"tea", "toast"}));
    EXPECT_EQ(outcome(list, "Tea and toast."), pass);
    EXPECT_EQ(outcome(list, "I don't know."), fail);
}

TEST(RubricExact, BooleansAndYesNo) {
    EXPECT_EQ(outcome(probe_of(rubric_of(RubricKind::exact), true), "Yes, you did."), pass);
    EXPECT_EQ(outcome(probe_of(rubric_of(RubricKind::exact), true), "No."), fail);
    EXPECT_EQ(outcome(probe_of(rubric_of(RubricKind::exact), "no"), "No, never."), pass);
    EXPECT_EQ(outcome(probe_of(rubric_of(RubricKind::exact), "no"), "Yes."), fail);
}

TEST(RubricExact, EffectiveRubricWithoutOne) {
    Probe p;
    p.answer = "Globex";
    EXPECT_EQ(effective_rubric(p).kind, RubricKind::exact);
    EXPECT_EQ(outcome(p, "Globex, of course."), pass);
    Probe nothing;
    EXPECT_EQ(outcome(nothing, "anything"), unsure);
    Probe abstain;
    abstain.kind = data::ProbeKind::abstain;
    abstain.should_abstain = true;
    EXPECT_EQ(effective_rubric(abstain).kind, RubricKind::abstention);
    EXPECT_EQ(outcome(abstain, "I don't know anything about that."), pass);
}

// ---- structured, contains ----------------------------------------------------------------------------

TEST(RubricStructured, PartialCreditAndPassFraction) {
    Rubric r = rubric_of(RubricKind::structured);
    r.required = {"Initech", "Austin", "$95,000", "manager"};
    const Probe p = probe_of(r);
    const auto all = grade_rubric(p, "A manager at Initech in Austin paid 95000.");
    EXPECT_EQ(all.outcome, pass) << all.reason;
    EXPECT_EQ(all.score, 1);
    const auto half = grade_rubric(p, "Initech, in Austin.");
    EXPECT_EQ(half.outcome, fail) << half.reason;
    EXPECT_DOUBLE_EQ(half.score, 0.5);
    EXPECT_EQ(half.missing, (std::vector<std::string>{"$95,000", "manager"}));
    r.pass_fraction = 0.5;
    const auto enough = grade_rubric(probe_of(r), "Initech, in Austin.");
    EXPECT_EQ(enough.outcome, pass) << enough.reason;
    EXPECT_DOUBLE_EQ(enough.score, 0.5);
    EXPECT_EQ(outcome(probe_of(r), "Initech."), fail);
}

TEST(RubricContains, EveryTermAtWordBoundaries) {
    Rubric r = rubric_of(RubricKind::contains);
    r.required = {"Acme", "blue"};
    EXPECT_EQ(outcome(probe_of(r), "Acme painted it blue."), pass);
    const auto v = grade_rubric(probe_of(r), "Acmeville painted it blue.");
    EXPECT_EQ(v.outcome, fail);
    EXPECT_EQ(v.missing, (std::vector<std::string>{"Acme"}));
    EXPECT_EQ(outcome(probe_of(r), "Acme painted it blueish."), fail);
    // Without required: expected_terms, else keywords.
    Rubric terms = rubric_of(RubricKind::contains);
    terms.expected_terms = {"oat milk"};
    terms.keywords = {"never used"};
    EXPECT_EQ(outcome(probe_of(terms), "Oat-milk, please."), pass);
    Rubric keywords = rubric_of(RubricKind::contains);
    keywords.keywords = {"oat milk"};
    EXPECT_EQ(outcome(probe_of(keywords), "Soy milk."), fail);
    EXPECT_EQ(outcome(probe_of(rubric_of(RubricKind::contains)), "anything"), unsure);
}

// ---- numeric ----------------------------------------------------------------------------------------

TEST(RubricNumeric, EveryWrittenFormOfTheNumber) {
    Rubric r = rubric_of(RubricKind::numeric);
    r.number = 5000;
    const Probe p = probe_of(r);
    for (const char* a : {"$5,000", "5000", "5k", "5K", "5,000.00", "five thousand", "Your budget is $5,000.",
                          "5 thousand", "USD 5000"})
        EXPECT_EQ(outcome(p, a), pass) << a;
    const auto v = grade_rubric(p, "5,001");
    EXPECT_EQ(v.outcome, fail) << v.reason;
    EXPECT_EQ(v.missing, (std::vector<std::string>{"5000"}));
    EXPECT_EQ(outcome(p, "50001"), fail);
    EXPECT_EQ(outcome(p, "$500"), fail);
}

TEST(RubricNumeric, LargeAndWordNumbers) {
    Rubric r = rubric_of(RubricKind::numeric);
    r.number = 1200000;
    for (const char* a : {"$1.2 million", "1.2M", "$1.2m", "1,200,000", "one million two hundred thousand"})
        EXPECT_EQ(outcome(probe_of(r), a), pass) << a;
    EXPECT_EQ(outcome(probe_of(r), "1.2 km"), fail);
    r.number = 1500000;
    EXPECT_EQ(outcome(probe_of(r), "1.5M"), pass);
    r.number = 21;
    EXPECT_EQ(outcome(probe_of(r), "twenty-one"), pass);
    r.number = 105;
    EXPECT_EQ(outcome(probe_of(r), "one hundred and five"), pass);
    r.number = 24;
    EXPECT_EQ(outcome(probe_of(r), "two dozen"), pass);
    r.number = 1999;
    EXPECT_EQ(outcome(probe_of(r), "in nineteen ninety-nine"), pass);
    r.number = 2024;
    EXPECT_EQ(outcome(probe_of(r), "twenty twenty-four"), pass);
    EXPECT_EQ(outcome(probe_of(r), "two thousand twenty-four"), pass);
    r.number = -3;
    EXPECT_EQ(outcome(probe_of(r), "It was -3 degrees."), pass);
    EXPECT_EQ(outcome(probe_of(r), "Between 2-3 degrees."), fail);
}

TEST(RubricNumeric, NoNumberAbstentionToleranceAndExpectedFallback) {
    Rubric r = rubric_of(RubricKind::numeric);
    r.number = 5000;
    EXPECT_EQ(outcome(probe_of(r), "I don't know your budget."), fail);
    EXPECT_EQ(outcome(probe_of(r), "Your budget is generous."), unsure);
    // A lone "one" is often a pronoun: it neither passes nor fails.
    EXPECT_EQ(outcome(probe_of(r), "The one you told me about."), unsure);
    r.tolerance = 100;
    EXPECT_EQ(outcome(probe_of(r), "about 5,050"), pass);
    EXPECT_EQ(outcome(probe_of(r), "about 5,150"), fail);
    // No rubric number: the probe's expected value.
    EXPECT_EQ(outcome(probe_of(rubric_of(RubricKind::numeric), "$3,500"), "3.5k"), pass);
    EXPECT_EQ(outcome(probe_of(rubric_of(RubricKind::numeric), 42), "forty-two"), pass);
    EXPECT_EQ(outcome(probe_of(rubric_of(RubricKind::numeric)), "42"), unsure);
}

// ---- address ---------------------------------------------------------------------------------------

TEST(RubricAddress, NormalisedComponents) {
    const Probe p = probe_of(rubric_of(RubricKind::address), "123 Oak St., Portland, Oregon");
    const auto v = grade_rubric(p, "123 Oak Street, Portland, OR");
    EXPECT_EQ(v.outcome, pass) << v.reason;
    const auto wrong = grade_rubric(p, "124 Oak Street, Portland, OR");
    EXPECT_EQ(wrong.outcome, fail) << wrong.reason;
    EXPECT_EQ(outcome(p, "You live on Elm Street in Portland, Oregon."), fail);
    // Another street type is another street.
    EXPECT_EQ(outcome(p, "123 Oak Avenue, Portland, Oregon"), fail);
    // The street without the city or state: the judge decides.
    EXPECT_EQ(outcome(p, "123 Oak Street"), unsure);
    EXPECT_EQ(outcome(p, "I don't know your address."), fail);
    // "or" written in lower case is the conjunction, not Oregon.
    EXPECT_EQ(outcome(p, "123 Oak Street in Portland or thereabouts"), unsure);
}

TEST(RubricAddress, UnitsStatesDirectionalsAndObjects) {
    const Probe p = probe_of(rubric_of(RubricKind::address), "456 North Elm Avenue, Apartment 4B, New York, NY 10001");
    EXPECT_EQ(outcome(p, "456 N Elm Ave #4B, New York, New York"), pass);
    EXPECT_EQ(outcome(p, "456 N. Elm Ave., Apt. 4B, New York NY 10001-1234"), pass);
    EXPECT_EQ(outcome(p, "456 N Elm Ave, New York, NY"), unsure);  // the unit left out
    const Probe dc = probe_of(rubric_of(RubricKind::address), "1600 Pennsylvania Avenue NW, Washington, DC 20500");
    EXPECT_EQ(outcome(dc, "1600 Pennsylvania Ave., Washington, D.C."), pass);
    const Probe court = probe_of(rubric_of(RubricKind::address), "9 Birch Ct, Hartford, CT");
    EXPECT_EQ(outcome(court, "9 Birch Court, Hartford, Connecticut"), pass);
    // Ordinal street names, and a different ZIP code is not this address as written.
    const Probe fifth = probe_of(rubric_of(RubricKind::address), "500 5th Avenue, New York, NY 10110");
    EXPECT_EQ(outcome(fifth, "500 Fifth Avenue, New York, NY"), pass);
    EXPECT_EQ(outcome(fifth, "500 Fifth Avenue, New York, NY 10111"), unsure);
    const Probe fields = probe_of(rubric_of(RubricKind::address),
                                  {{"street", "77 Lake Shore Drive"}, {"city", "Chicago"}, {"state", "Illinois"}});
    EXPECT_EQ(outcome(fields, "77 Lake Shore Dr, Chicago, IL"), pass);
    EXPECT_EQ(outcome(fields, "78 Lake Shore Dr, Chicago, IL"), fail);
}

// ---- multi_field -----------------------------------------------------------------------------------

TEST(RubricMultiField, EveryFieldByItsType) {
    Rubric r = rubric_of(RubricKind::multi_field);
    r.fields = {{"name", "Dana"}, {"guests", 40}, {"vegetarian", true}};
    const Probe p = probe_of(r);
    const auto v = grade_rubric(p, "Yes: Dana is hosting forty guests.");
    EXPECT_EQ(v.outcome, pass) << v.reason;
    EXPECT_EQ(v.score, 1);
    const auto partial = grade_rubric(p, "Yes, Dana is hosting.");
    EXPECT_EQ(partial.outcome, unsure) << partial.reason;
    EXPECT_NEAR(partial.score, 2.0 / 3.0, 1e-9);
    const auto wrong = grade_rubric(p, "Yes, Dana, 45 guests.");
    EXPECT_EQ(wrong.outcome, fail) << wrong.reason;
    EXPECT_EQ(wrong.missing, (std::vector<std::string>{"guests: 40"}));
    // No fields in the rubric: the expected object.
    const Probe q = probe_of(rubric_of(RubricKind::multi_field), {{"day", "Friday"}, {"time", "7pm"}});
    EXPECT_EQ(outcome(q, "Friday at 7pm"), pass);
    EXPECT_EQ(outcome(q, "Friday at 7am"), unsure);  // "7pm" is a time, not the number 7
    EXPECT_EQ(outcome(q, "I don't know."), fail);
}

// ---- entity_count ----------------------------------------------------------------------------------

TEST(RubricEntityCount, StatedCountOrGroupsWithAliasesMerged) {
    Rubric r = rubric_of(RubricKind::entity_count);
    r.expected_count = 2;
    r.groups = {{"Bob", "Robert Lee"}, {"Alice Chen", "Alice"}, {"Lee"}};
    const Probe p = probe_of(r);
    EXPECT_EQ(outcome(p, "You know two people."), pass);
    EXPECT_EQ(outcome(p, "2"), pass);
    // "Bob" and "Robert Lee" are one person; "Lee" inside "Robert Lee" is not the third group.
    const auto v = grade_rubric(p, "Bob (Robert Lee) and Alice.");
    EXPECT_EQ(v.outcome, pass) << v.reason;
    EXPECT_EQ(outcome(p, "Bob, Robert Lee and Alice are three people."), fail);
    EXPECT_EQ(outcome(p, "You know 3 people."), fail);
    // Names only, the wrong number of them: a count could still be implied, the judge decides.
    EXPECT_EQ(outcome(p, "Bob, Alice and Lee."), unsure);
    // A stated count decides even when the names given are right.
    EXPECT_EQ(outcome(p, "Three people: Bob and Alice."), fail);
    EXPECT_EQ(outcome(p, "Two people: Bob and Alice."), pass);
    EXPECT_EQ(outcome(p, "I don't know."), fail);
}

// ---- constraint ------------------------------------------------------------------------------------

TEST(RubricConstraint, MustAndMustNot) {
    Rubric r = rubric_of(RubricKind::constraint);
    r.must_contain = {"peanut-free"};
    r.must_not_contain = {"peanut", "walnuts"};
    const Probe p = probe_of(r);
    EXPECT_EQ(outcome(p, "Order the peanut-free cake."), pass);
    const auto v = grade_rubric(p, "Order the peanut-free cake with walnuts.");
    EXPECT_EQ(v.outcome, fail);
    EXPECT_EQ(v.offending, (std::vector<std::string>{"walnuts"}));
    const auto m = grade_rubric(p, "Order the cake.");
    EXPECT_EQ(m.outcome, fail);
    EXPECT_EQ(m.missing, (std::vector<std::string>{"peanut-free"}));
    EXPECT_EQ(grade_rubric(p, "Peanut-free, but add peanut butter.").offending, (std::vector<std::string>{"peanut"}));
}

// ---- abstention --------------------------------------------------------------------------------------

TEST(RubricAbstention, DecliningRejectedAndAcceptPatterns) {
    Rubric r = rubric_of(RubricKind::abstention);
    r.reject = {"Acme", "$5,000"};
    r.accept_patterns = {"no longer have|was deleted", "can't share that"};
    Probe p = probe_of(r);
    p.should_abstain = true;
    p.kind = data::ProbeKind::abstain;
    EXPECT_EQ(outcome(p, "I don't have any information about your employer."), pass);
    EXPECT_EQ(outcome(p, "I'm not sure, you never said."), pass);
    const auto named = grade_rubric(p, "I don't have any information, but it might be Acme.");
    EXPECT_EQ(named.outcome, fail) << named.reason;
    EXPECT_EQ(named.offending, (std::vector<std::string>{"Acme"}));
    EXPECT_EQ(grade_rubric(p, "I don't know; maybe 5k?").offending, (std::vector<std::string>{"$5,000"}));
    // accept_patterns, matched on normalised text and case-insensitively; '|' separates alternatives.
    EXPECT_EQ(outcome(p, "That detail WAS DELETED at your request."), pass);
    EXPECT_EQ(outcome(p, "Sorry, I CAN'T share that."), pass);
    // Answering with a number answers; a reply that does not decline in known words may still decline
    // in others ("I have nothing on file"), so only a judge tells it from an answer.
    EXPECT_EQ(outcome(p, "Your salary is $72,000."), fail);
    EXPECT_EQ(outcome(p, "You work at Initech."), unsure);
    EXPECT_EQ(outcome(p, "I have nothing on file for that."), unsure);
    const auto empty = grade_rubric(p, "   ");
    EXPECT_EQ(empty.outcome, fail);
    EXPECT_NE(empty.reason.find("not an abstention"), std::string::npos);
}

// ---- semantic, forbidden, edge cases -------------------------------------------------------------------

TEST(RubricSemantic, NeedsTheJudge) {
    const Probe p = probe_of(rubric_of(RubricKind::semantic), "They prefer quiet evenings.");
    const auto v = grade_rubric(p, "They like calm nights in.");
    EXPECT_EQ(v.outcome, unsure);
    EXPECT_EQ(v.reason, "needs the judge");
    EXPECT_EQ(outcome(p, ""), fail);
}

TEST(RubricForbidden, OverridesAPassInEveryKind) {
    Rubric r = rubric_of(RubricKind::exact);
    r.forbidden = {"Portland"};
    const auto v = grade_rubric(probe_of(r, "Seattle"), "Seattle (formerly Portland).");
    EXPECT_EQ(v.outcome, fail) << v.reason;
    EXPECT_EQ(v.offending, (std::vector<std::string>{"Portland"}));
    EXPECT_EQ(v.score, 0);
    Rubric n = rubric_of(RubricKind::numeric);
    n.number = 6000;
    n.forbidden = {"$5,000"};
    EXPECT_EQ(outcome(probe_of(n), "It went from 5000 to 6000."), fail);
    EXPECT_EQ(outcome(probe_of(n), "It is 6000."), pass);
    Rubric s = rubric_of(RubricKind::structured);
    s.required = {"Initech"};
    s.forbidden = {"Acme"};
    EXPECT_EQ(outcome(probe_of(s), "Initech, after Acme."), fail);
    Rubric sem = rubric_of(RubricKind::semantic);
    sem.forbidden = {"Acme"};
    EXPECT_EQ(outcome(probe_of(sem), "Acme"), fail);
    // A forbidden value inside the expected one is not named by stating the expected one.
    Rubric inside = rubric_of(RubricKind::exact);
    inside.forbidden = {"Acme"};
    EXPECT_EQ(outcome(probe_of(inside, "Acme Labs"), "Acme Labs."), pass);
    EXPECT_EQ(outcome(probe_of(inside, "Acme Labs"), "Acme Labs, not Acme."), fail);
}

TEST(RubricEdges, EmptyInvalidUtf8AndLongAnswers) {
    const Probe p = probe_of(rubric_of(RubricKind::exact), "Globex");
    EXPECT_EQ(grade_rubric(p, "").outcome, fail);
    EXPECT_EQ(grade_rubric(p, "...!?").outcome, fail);
    const std::string invalid = std::string("Globex \xff\xfe\xc2") + "\xe2\x80";
    EXPECT_EQ(outcome(p, invalid), pass);
    Rubric r = rubric_of(RubricKind::numeric);
    r.number = 5000;
    EXPECT_EQ(outcome(probe_of(r), "\xe2\x82\xac" "5,000"), pass);  // euro sign
    EXPECT_EQ(outcome(probe_of(r), "\xc2\xa3" "5k"), pass);          // pound sign
    EXPECT_EQ(outcome(probe_of(r), "\xe2\x80\x9c" "5000" "\xe2\x80\x9d"), pass);
    // A long answer is graded in about linear time, whatever it repeats: twice the answer takes about
    // twice the time (a quadratic scan would take four times), and 0.8 MB stay far from a minute.
    const auto grade_all = [](int repeats) {
        std::string long_answer;
        for (int i = 0; i < repeats; ++i) long_answer += "acme 5,00 one a hundred and Bob #4 St. ";
        long_answer += "Globex 5000";
        {
            const auto start = std::chrono::steady_clock::now();
            for (RubricKind kind : {RubricKind::exact, RubricKind::numeric, RubricKind::address,
                                    RubricKind::entity_count, RubricKind::abstention, RubricKind::constraint}) {
                Rubric k = rubric_of(kind);
                k.number = 5000;
                k.expected_count = 2;
                k.groups = {{"Bob", "Robert"}, {"acme"}};
                k.must_not_contain = {"acme acme acme acme acme b"};
                k.reject = {"zzz"};
                Probe q = probe_of(k, kind == RubricKind::address ? json("4 Acme St, Bob, OR") : json("Globex"));
                const auto v = grade_rubric(q, long_answer);
                EXPECT_GE(v.score, 0);
                EXPECT_LE(v.score, 1);
            }
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
    };
    // The two sizes measured in turn, twice, and the faster of each kept: the machine is shared,
    // and a load that comes and goes then weighs on both alike.
    // Under a sanitizer (every access checked, tens of times slower) a tenth of the size, once: the
    // ratio still tells linear from quadratic.
#if defined(MEMFAIL_SANITIZED)
    const int base = 1000, attempts = 1;
#else
    const int base = 10000, attempts = 2;
#endif
    double half = 1e9, full = 1e9;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        half = std::min(half, grade_all(base));
        full = std::min(full, grade_all(2 * base));
    }
    EXPECT_LT(full, 3.0 * half + 0.05) << "10k repeats " << half << " s, 20k repeats " << full << " s";
    EXPECT_LT(full, 60.0);
}

// ---- fuzz ------------------------------------------------------------------------------------------

TEST(RubricFuzz, RandomBytesAndRandomRubricsNeverCrash) {
    std::mt19937_64 rng(20260301);
    const std::vector<std::string> pieces = {
        "Acme", "$5,000", "5k", "five", "thousand", "one", "a", "hundred", "and", "Oak", "St.", "Street", "#",
        "Apt", "OR", "Oregon", "D.", "C.", "I don't know", "Bob", "Robert Lee", ",", ".", "-", "1.5M", "$",
        "\xe2\x82\xac", "\xe2\x80\x99", "\xff", "\xc2", "\xe2\x80", "0", "99999999999999999999999999", "1e308",
        "yes", "no", "true", " ", "\n", "1,2,3", "12,345,678.901", "5-", "-5", "k", "M", "bn"};
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    auto random_text = [&] {
        std::string s;
        const std::size_t n = pick(12);
        for (std::size_t i = 0; i < n; ++i) {
            if (pick(3) == 0) {
                const std::size_t bytes = pick(8);
                for (std::size_t b = 0; b < bytes; ++b) s.push_back(static_cast<char>(rng() & 0xFF));
            } else {
                s += pieces[pick(pieces.size())];
                if (pick(2)) s += ' ';
            }
        }
        return s;
    };
    auto random_list = [&] {
        std::vector<std::string> out(pick(4));
        for (auto& s : out) s = random_text();
        return out;
    };
    auto random_json = [&](auto& self, int depth) -> json {
        switch (pick(depth > 2 ? 4 : 6)) {
            case 0: return nullptr;
            case 1: return random_text();
            case 2: return static_cast<double>(static_cast<std::int64_t>(rng() % 2000000) - 1000000) / (pick(2) ? 1 : 100);
            case 3: return pick(2) == 0;
            case 4: {
                json o = json::object();
                for (std::size_t i = pick(4); i > 0; --i) o[random_text()] = self(self, depth + 1);
                return o;
            }
            default: {
                json a = json::array();
                for (std::size_t i = pick(4); i > 0; --i) a.push_back(self(self, depth + 1));
                return a;
            }
        }
    };
    const RubricKind kinds[] = {RubricKind::exact,        RubricKind::structured, RubricKind::contains,
                                RubricKind::numeric,      RubricKind::address,    RubricKind::multi_field,
                                RubricKind::entity_count, RubricKind::constraint, RubricKind::abstention,
                                RubricKind::semantic};
    for (int iteration = 0; iteration < 3000; ++iteration) {
        Probe p;
        p.answer = random_text();
        p.expected = random_json(random_json, 0);
        p.should_abstain = pick(4) == 0;
        if (pick(6) != 0) {
            Rubric r;
            r.kind = kinds[pick(std::size(kinds))];
            r.required = random_list();
            r.pass_fraction = static_cast<double>(pick(101)) / 100.0;
            r.must_contain = random_list();
            r.must_not_contain = random_list();
            r.forbidden = random_list();
            r.reject = random_list();
            r.accept_patterns = random_list();
            if (pick(2)) r.number = static_cast<double>(static_cast<std::int64_t>(rng() % 20000) - 10000);
            r.tolerance = static_cast<double>(pick(3));
            if (pick(2)) r.expected_count = static_cast<int>(pick(5));
            for (std::size_t g = pick(4); g > 0; --g) r.groups.push_back(random_list());
            if (pick(2)) r.fields = random_json(random_json, 1);
            r.keywords = random_list();
            r.expected_terms = random_list();
            p.rubric = r;
        }
        const std::string answer = random_text();
        const RubricContext context{random_list()};
        const auto v = grade_rubric(p, answer, context);
        ASSERT_GE(v.score, 0) << iteration;
        ASSERT_LE(v.score, 1) << iteration;
        ASSERT_FALSE(v.reason.empty()) << iteration;
        if (v.outcome == RubricOutcome::pass) {
            ASSERT_TRUE(v.offending.empty()) << iteration;
        }
        // Deterministic.
        const auto again = grade_rubric(p, answer, context);
        ASSERT_EQ(again.outcome, v.outcome);
        ASSERT_EQ(again.score, v.score);
    }
}

TEST(RubricOutcomeNames, AllNamed) {
    EXPECT_STREQ(rubric_outcome_name(RubricOutcome::pass), "pass");
    EXPECT_STREQ(rubric_outcome_name(RubricOutcome::fail), "fail");
    EXPECT_STREQ(rubric_outcome_name(RubricOutcome::unsure), "unsure");
}

}  // namespace
}  // namespace memfail::grade
