// SPDX-License-Identifier: MIT
// The deterministic answer stage: the multiple-choice letter parser in its three fallbacks (and its
// refusal to read the article "A" as an option), yes/no polarity, abstention, list coverage.
#include <memfail/grade/answer_rules.hpp>

#include <gtest/gtest.h>

namespace memfail::grade {
namespace {

TEST(ChoiceLetter, WholeReplyAsJson) {
    EXPECT_EQ(parse_choice_letter(R"({"selected_choice": "C"})"), 'C');
    EXPECT_EQ(parse_choice_letter(R"j({"answer": "(D)"})j"), 'D');
    EXPECT_EQ(parse_choice_letter(R"({"choice": "b"})"), 'B');
    EXPECT_EQ(parse_choice_letter("```json\n{\"selected_choice\": \"E\"}\n```"), 'E');
}

TEST(ChoiceLetter, EmbeddedJsonObject) {
    EXPECT_EQ(parse_choice_letter(R"(Chaining the facts, the answer is {"selected_choice": "B"} as shown.)"), 'B');
    // An object without a usable key is skipped in favour of a later one.
    EXPECT_EQ(parse_choice_letter(R"({"note": "x"} then {"selected_choice": "D"})"), 'D');
    // Braces inside strings do not confuse the matcher.
    EXPECT_EQ(parse_choice_letter(R"({"why": "a } b", "selected_choice": "A"})"), 'A');
}

TEST(ChoiceLetter, LoneLetterButNeverTheArticle) {
    EXPECT_EQ(parse_choice_letter("The answer is C."), 'C');
    EXPECT_EQ(parse_choice_letter("I pick (B)"), 'B');
    EXPECT_EQ(parse_choice_letter("Option A"), 'A');
    // "A" starting a sentence is the article, not an option.
    EXPECT_EQ(parse_choice_letter("A walk by the river makes me calm."), std::nullopt);
    EXPECT_EQ(parse_choice_letter("A good guess would be D"), 'D');
    // Letters inside words and letters past the last option do not count.
    EXPECT_EQ(parse_choice_letter("DEFINITELY Fine"), std::nullopt);
    EXPECT_EQ(parse_choice_letter("F", 'E'), std::nullopt);
    EXPECT_EQ(parse_choice_letter("I can't tell."), std::nullopt);
}

TEST(YesNo, FirstCommitmentOfTheFirstSentence) {
    EXPECT_EQ(parse_yes_no("Yes — go ahead."), "yes");
    EXPECT_EQ(parse_yes_no("No, the condition is not met. Yes would be wrong."), "no");
    EXPECT_EQ(parse_yes_no("Probably not sure. Yes."), std::nullopt);
}

TEST(Abstention, RecognisesHonestRefusalsOnly) {
    EXPECT_TRUE(looks_like_abstention("I don't have any information about Quynh Bui."));
    EXPECT_TRUE(looks_like_abstention("You haven't mentioned Lena before, so I can't say."));
    EXPECT_FALSE(looks_like_abstention("Quynh always carries a brass compass."));
}

data::Probe probe_of(data::ProbeKind kind) {
    data::Probe p;
    p.id = "p";
    p.kind = kind;
    return p;
}

TEST(GradeByRules, EachKind) {
    auto mcq = probe_of(data::ProbeKind::mcq);
    mcq.choices = {"a", "b", "c", "d", "e"};
    mcq.correct_choice = "D";
    EXPECT_TRUE(grade_answer_by_rules(mcq, R"({"selected_choice": "D"})").correct);
    EXPECT_FALSE(grade_answer_by_rules(mcq, R"({"selected_choice": "A"})").correct);

    auto yes_no = probe_of(data::ProbeKind::yes_no);
    yes_no.answer = "No — the condition is not met.";
    EXPECT_TRUE(grade_answer_by_rules(yes_no, "No, it is not the right time.").correct);
    EXPECT_FALSE(grade_answer_by_rules(yes_no, "Yes, definitely.").correct);

    auto list = probe_of(data::ProbeKind::list);
    for (const char* pref : {"ramen", "dumplings"}) {
        data::EvidenceFact f;
        f.id = pref;
        f.key_details = {{"preference", {pref}}};
        list.evidence.push_back(f);
    }
    EXPECT_TRUE(grade_answer_by_rules(list, "Put dumplings and ramen on the menu.").correct);
    const auto partial = grade_answer_by_rules(list, "Ramen, definitely.");
    EXPECT_FALSE(partial.correct);
    EXPECT_NE(partial.reason.find("dumplings"), std::string::npos);

    // An imported preference stated in other words than its label has no detail to look for: the
    // rules cannot call the answer correct, whatever else it names.
    data::EvidenceFact paraphrased;
    paraphrased.id = "basketball";
    paraphrased.details_complete = false;
    list.evidence.push_back(paraphrased);
    const auto unsure = grade_answer_by_rules(list, "Dumplings, ramen and shooting hoops.");
    EXPECT_FALSE(unsure.correct);
    EXPECT_NE(unsure.reason.find("only a judge"), std::string::npos);

    auto open = probe_of(data::ProbeKind::open);
    data::EvidenceFact f;
    f.key_details = {{"entity", {"Catalina Ibarra", "Catalina"}}, {"detail", {"hot cocoa"}}};
    open.evidence.push_back(f);
    // The entity's name alone is not the answer; the deciding detail is.
    EXPECT_FALSE(grade_answer_by_rules(open, "Catalina likes a warm drink.").correct);
    EXPECT_TRUE(grade_answer_by_rules(open, "A mug of hot cocoa.").correct);

    auto abstain = probe_of(data::ProbeKind::abstain);
    EXPECT_TRUE(grade_answer_by_rules(abstain, "I don't have information about them.").correct);
    EXPECT_FALSE(grade_answer_by_rules(abstain, "They love hot cocoa.").correct);
}

}  // namespace
}  // namespace memfail::grade
