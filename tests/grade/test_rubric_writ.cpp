// SPDX-License-Identifier: MIT
// The rubric rules as WRIT's own scenarios need them (issue 28), each with the faithful answers that
// must pass and the planted faults that must not: required elements that are numbers read as
// values ("75" is the "$75K" it leads), structured rubrics at WRIT's 80% unless a run asks for all,
// rejected elements in every kind (named ones fail, described ones leave a pass to the judge), an
// abstention that declines and then guesses, and a constraint check beside a rubric of another kind.
#include <memfail/grade/rubric.hpp>

#include <string>

#include <gtest/gtest.h>

namespace memfail::grade {
namespace {

using data::Probe;
using data::Rubric;
using data::RubricKind;
using nlohmann::json;

constexpr RubricOutcome pass = RubricOutcome::pass;
constexpr RubricOutcome fail = RubricOutcome::fail;
constexpr RubricOutcome unsure = RubricOutcome::unsure;

Probe structured(std::vector<std::string> required, double fraction = 0.8) {
    Probe p;
    p.id = "p";
    p.question = "?";
    Rubric r;
    r.kind = RubricKind::structured;
    r.required = std::move(required);
    r.pass_fraction = fraction;
    p.rubric = r;
    return p;
}

RubricVerdict graded(const Probe& p, std::string_view answer, const RubricContext& context = {}) {
    return grade_rubric(p, answer, context);
}

// ---- numbers as values ------------------------------------------------------------------------------

TEST(RubricWritNumbers, ABareNumberElementIsTheAmountItLeads) {
    // certification-002's elements: a correct answer written any of three ways names all three.
    const Probe p = structured({"75000", "75", "$75"}, 1.0);
    for (const char* answer : {"The worksheet budget is $75K.", "The budget is $75,000.", "It is 75 thousand dollars."}) {
        const auto v = graded(p, answer);
        EXPECT_EQ(v.outcome, pass) << answer << ": " << v.reason;
    }
    // trust_hierarchy-005: "120" in "$120K" and "$120,000".
    const Probe salary = structured({"120"}, 1.0);
    EXPECT_EQ(graded(salary, "Your base salary is $120K.").outcome, pass);
    EXPECT_EQ(graded(salary, "Your base salary is $120,000 a year.").outcome, pass);
}

TEST(RubricWritNumbers, AnotherAmountOrTheDigitsInsideAnotherNumberIsNotTheElement) {
    const Probe p = structured({"$75"}, 1.0);
    EXPECT_EQ(graded(p, "The budget is $50K.").outcome, fail);
    EXPECT_EQ(graded(p, "The budget is $175,000.").outcome, fail);
    EXPECT_EQ(graded(p, "The budget is $7,500.").outcome, fail);
    // Money only as money: "$60" is not the 60 of "60 days".
    Probe constraint;
    constraint.id = "c";
    Rubric r;
    r.kind = RubricKind::constraint;
    r.must_not_contain = {"$60"};
    constraint.rubric = r;
    EXPECT_EQ(graded(constraint, "A $45 gift card, valid for 60 days.").outcome, pass);
    EXPECT_EQ(graded(constraint, "A $60 gift card.").outcome, fail);
    // A price with cents is the whole amount it starts with, as a substring match finds it.
    EXPECT_EQ(graded(constraint, "A scarf at $60.99.").outcome, fail);
}

TEST(RubricWritNumbers, ASignAloneIsPresentWhenWrittenOrWhenMoneyIsStated) {
    Probe p;
    p.id = "c";
    Rubric r;
    r.kind = RubricKind::constraint;
    r.must_contain = {"$"};
    p.rubric = r;
    EXPECT_EQ(graded(p, "A book for $25.").outcome, pass);
    EXPECT_EQ(graded(p, "A book for 25 dollars.").outcome, pass);
    EXPECT_EQ(graded(p, "A book you will love.").outcome, fail);
}

// ---- the structured threshold -------------------------------------------------------------------------

TEST(RubricWritStructured, PassesAtEightyPercentUnlessTheRunAsksForAll) {
    // update-003: four of five elements is WRIT's pass; the strict option fails it.
    const Probe p = structured({"88 Oak Avenue", "Apt 3B", "Portland", "OR", "97201"});
    const std::string four = "88 Oak Avenue, Apt 3B, Portland, Oregon 97201";
    EXPECT_EQ(graded(p, four).outcome, pass) << graded(p, four).reason;
    RubricContext strict;
    strict.structured_threshold = 1.0;
    EXPECT_EQ(graded(p, four, strict).outcome, fail);
    EXPECT_EQ(graded(p, "88 Oak Avenue, Apt 3B, Portland, OR 97201", strict).outcome, pass);
    // Three of five is below 80% either way.
    EXPECT_EQ(graded(p, "88 Oak Avenue in Portland, Oregon 97201").outcome, fail);
}

// ---- rejected elements --------------------------------------------------------------------------------

TEST(RubricWritReject, ANamedRejectedElementNeverPassesAndFailsAWrongAnswer) {
    // closure-002: an earlier proposal's price named beside every element may be history or a
    // claim: the judge's, never a pass.
    Probe p = structured({"$29", "$59", "$119", "Pro", "Business", "Team"});
    p.rubric->reject = {"$19", "$24", "$49", "$99"};
    EXPECT_EQ(graded(p, "Pro is $29/month, Business $59/month and Team $119/month.").outcome, pass);
    const auto v = graded(p, "Pro is $29/month, Business $59/month and Team $119/month (down from $99).");
    EXPECT_EQ(v.outcome, unsure) << v.reason;
    ASSERT_FALSE(v.offending.empty());
    EXPECT_EQ(v.offending.front(), "$99");
    // "$119" does not name "$19", nor "$59" name "$49".
    EXPECT_EQ(graded(p, "Pro $29, Business $59, Team $119.").outcome, pass);
    // lifecycle-001: a wrong answer naming the rejected value fails and lists it.
    Probe ceo = structured({"Bob Okonkwo", "Bob"});
    ceo.rubric->reject = {"Alice Nguyen", "Alice"};
    const auto wrong = graded(ceo, "Alice Nguyen is the CEO.");
    EXPECT_EQ(wrong.outcome, fail) << wrong.reason;
    EXPECT_EQ(wrong.offending, (std::vector<std::string>{"Alice Nguyen", "Alice"}));
    EXPECT_EQ(graded(ceo, "Bob Okonkwo is the CEO.").outcome, pass);
    EXPECT_EQ(graded(ceo, "Bob Okonkwo is the CEO; he replaced Alice Nguyen in June.").outcome, unsure);
    // An exact rubric too.
    Probe exact;
    exact.id = "e";
    exact.expected = "Bob Okonkwo";
    Rubric r;
    r.kind = RubricKind::exact;
    r.reject = {"Alice Nguyen"};
    exact.rubric = r;
    EXPECT_EQ(graded(exact, "Bob Okonkwo.").outcome, pass);
    EXPECT_EQ(graded(exact, "Alice Nguyen is the CEO; Bob Okonkwo is on the board.").outcome, unsure);
}

TEST(RubricWritReject, ADescribedReadingLeavesAPassThatNamesItsSubjectToTheJudge) {
    // certification-001: the reject element describes a reading, not a value.
    Probe p = structured({"Bob Okonkwo", "updated", "recent", "change", "snapshot"});
    p.rubric->reject = {"Alice Martinez as current lead without staleness warning"};
    const std::string clean = "Bob Okonkwo is the lead: the snapshot is not recent, it changed and was updated.";
    EXPECT_EQ(graded(p, clean).outcome, pass) << graded(p, clean).reason;
    const std::string both =
        "Bob Okonkwo is the lead; the snapshot still says Alice Martinez, it is not recent, it changed and was updated.";
    EXPECT_EQ(graded(p, both).outcome, unsure) << graded(p, both).reason;
    // A failing answer stays failed.
    EXPECT_EQ(graded(p, "Alice Martinez leads the project.").outcome, fail);
}

// ---- abstention ----------------------------------------------------------------------------------------

Probe abstention() {
    Probe p;
    p.id = "a";
    p.should_abstain = true;
    p.kind = data::ProbeKind::abstain;
    Rubric r;
    r.kind = RubricKind::abstention;
    r.accept_patterns = {"don't have", "never shared"};
    p.rubric = r;
    return p;
}

TEST(RubricWritAbstention, DeclinesAndStatesNoCandidate) {
    const Probe p = abstention();
    EXPECT_EQ(graded(p, "I don't have that information; you never shared your salary.").outcome, pass);
    // abstention-004: a hedged guess is an answer.
    const auto v = graded(p, "I'm not sure, but Alex probably makes around $150,000.");
    EXPECT_EQ(v.outcome, fail) << v.reason;
    // A guess without a value the rules can read, or a number beside a decline, is the judge's.
    EXPECT_EQ(graded(p, "I don't know, but it might be in the Seattle office.").outcome, unsure);
    EXPECT_EQ(graded(p, "I don't have that; it did not come up in our 3 conversations.").outcome, unsure);
    // A value known to be wrong, named while declining, fails.
    RubricContext known;
    known.wrong_values = {"BlueSky42"};
    EXPECT_EQ(graded(p, "I don't have it any more; it was BlueSky42.", known).outcome, fail);
    EXPECT_EQ(graded(p, "You get $150,000.").outcome, fail);
}

// ---- a constraint check beside another kind -------------------------------------------------------------

TEST(RubricWritConstraint, AViolatedConstraintFailsASemanticRubric) {
    // constraint-001: semantic rubric, constraint_check beside it.
    Probe p;
    p.id = "m";
    p.expected = "menu without dairy products";
    Rubric r;
    r.kind = RubricKind::semantic;
    r.must_contain = {"dairy-free"};
    r.must_not_contain = {"cheese", "cream", "butter"};
    p.rubric = r;
    EXPECT_EQ(graded(p, "A dairy-free menu: salad, grilled fish, and a cheese board.").outcome, fail);
    // Kept, it decides nothing: the meaning is still the judge's.
    EXPECT_EQ(graded(p, "A dairy-free menu: salad, grilled fish, sorbet.").outcome, unsure);
    // "dairy-free" required does not count as naming a forbidden word it holds.
    EXPECT_EQ(graded(p, "Dairy-free cream-less soup").outcome, fail);
}

// ---- the hallucination check reads numbers as the rubric does -----------------------------------------

TEST(RubricWritHallucination, AKnownAmountInAnotherFormatIsNoHallucination) {
    data::Scenario s;
    data::LedgerEvent e;
    e.id = "budget";
    data::ValueRecord old_value, new_value;
    old_value.value = 50000;
    new_value.value = "$75,000";
    e.history = {old_value, new_value};
    s.ledger = {e};
    Probe p;
    p.id = "b";
    p.expected = "$75,000";
    p.targets = {"budget"};
    for (const char* a : {"It is $75K.", "The budget was $50K.", "fifty thousand dollars"})
        EXPECT_TRUE(answer_states_known_value(s, p, a)) << a;
    for (const char* a : {"It is $60K.", "About $7,500."}) EXPECT_FALSE(answer_states_known_value(s, p, a)) << a;
}

}  // namespace
}  // namespace memfail::grade
