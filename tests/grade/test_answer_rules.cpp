// SPDX-License-Identifier: MIT
// The deterministic answer stage: the multiple-choice letter parser in its three fallbacks (and its
// refusal to read the article "A" as an option), yes/no polarity, abstention, list coverage.
#include <memfail/grade/answer_rules.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <utility>
#include <vector>

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

// The rules decide only what they can prove: a detail not found may be said in other words, a
// refusal may be worded otherwise, a reply may commit to neither yes nor no.
TEST(GradeByRules, UndecidedWhereTheWordsProveNothing) {
    auto open = probe_of(data::ProbeKind::open);
    data::EvidenceFact f;
    f.key_details = {{"entity", {"Catalina"}}, {"detail", {"hot cocoa"}}};
    open.evidence.push_back(f);
    const auto paraphrase = grade_answer_by_rules(open, "Catalina likes a warm chocolate drink.");
    EXPECT_FALSE(paraphrase.correct);
    EXPECT_FALSE(paraphrase.decided) << paraphrase.reason;
    // Named, but denied or hedged in the same sentence: not proof either way.
    for (const char* reply : {"Not hot cocoa, she hates it.", "Maybe hot cocoa?", "She never drinks hot cocoa."}) {
        const auto v = grade_answer_by_rules(open, reply);
        EXPECT_FALSE(v.correct) << reply;
        EXPECT_FALSE(v.decided) << reply;
    }
    // A refusal of an answerable question is wrong, decided.
    const auto declined = grade_answer_by_rules(open, "I don't have any information about Catalina.");
    EXPECT_FALSE(declined.correct);
    EXPECT_TRUE(declined.decided);

    auto abstain = probe_of(data::ProbeKind::abstain);
    const auto other_words = grade_answer_by_rules(abstain, "Priya? That name means nothing to me.");
    EXPECT_FALSE(other_words.correct);
    EXPECT_FALSE(other_words.decided);

    auto yes_no = probe_of(data::ProbeKind::yes_no);
    yes_no.answer = "Yes — it is raining.";
    const auto neither = grade_answer_by_rules(yes_no, "Probably, given the rain.");
    EXPECT_FALSE(neither.correct);
    EXPECT_FALSE(neither.decided);
    // A label before the commitment is read through: "Answer: no" commits.
    const auto labelled = grade_answer_by_rules(yes_no, "Answer: no, it is dry.");
    EXPECT_TRUE(labelled.decided);
    EXPECT_FALSE(labelled.correct);

    // Multiple choice is read exactly, as the paper grades it: no letter is a wrong answer.
    auto mcq = probe_of(data::ProbeKind::mcq);
    mcq.choices = {"a", "b", "c", "d", "e"};
    mcq.correct_choice = "B";
    EXPECT_TRUE(grade_answer_by_rules(mcq, "I can't tell.").decided);
}

// Metamorphic: faithful rewrites of a correct reply never become a decided wrong answer; corrupting
// ones never become correct.
TEST(GradeByRules, MetamorphicRewritesOfAReply) {
    auto open = probe_of(data::ProbeKind::open);
    data::EvidenceFact f;
    f.key_details = {{"entity", {"Dana"}}, {"budget", {"$120,000"}}};
    open.evidence.push_back(f);
    auto list = probe_of(data::ProbeKind::list);
    for (const char* pref : {"ramen", "dumplings"}) {
        data::EvidenceFact e;
        e.key_details = {{"preference", {pref}}};
        list.evidence.push_back(e);
    }
    const std::pair<const data::Probe*, std::string> correct[] = {
        {&open, "Dana's budget is $120,000."}, {&list, "Serve ramen and dumplings."}};
    const std::vector<std::pair<const char*, std::string (*)(const std::string&)>> faithful = {
        {"answer label", [](const std::string& s) { return "Answer: " + s; }},
        {"upper case", [](const std::string& s) {
             std::string o = s;
             for (auto& c : o) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
             return o;
         }},
        {"bullet", [](const std::string& s) { return "- " + s; }},
        {"money as K", [](const std::string& s) {
             std::string o = s;
             if (auto at = o.find("$120,000"); at != std::string::npos) o.replace(at, 8, "$120K");
             return o;
         }},
        {"markdown bold", [](const std::string& s) { return "**" + s + "**"; }},
    };
    const std::vector<std::pair<const char*, std::string (*)(const std::string&)>> corrupting = {
        {"negated", [](const std::string& s) { return "It is not true that " + s; }},
        {"hedged", [](const std::string& s) { return "Perhaps " + s; }},
        {"value changed", [](const std::string& s) {
             std::string o = s;
             if (auto at = o.find("120,000"); at != std::string::npos) o.replace(at, 7, "150,000");
             if (auto at = o.find("ramen"); at != std::string::npos) o.replace(at, 5, "pasta");
             return o;
         }},
        {"detail dropped", [](const std::string& s) {
             std::string o = s;
             if (auto at = o.find(" $120,000"); at != std::string::npos) o.erase(at, 9);
             if (auto at = o.find(" and dumplings"); at != std::string::npos) o.erase(at, 14);
             return o;
         }},
    };
    for (const auto& [probe, reply] : correct) {
        ASSERT_TRUE(grade_answer_by_rules(*probe, reply).correct) << reply;
        for (const auto& [name, t] : faithful) {
            const auto v = grade_answer_by_rules(*probe, t(reply));
            EXPECT_TRUE(v.correct || !v.decided) << name << ": " << t(reply) << " -> " << v.reason;
        }
        for (const auto& [name, t] : corrupting) {
            const auto v = grade_answer_by_rules(*probe, t(reply));
            EXPECT_FALSE(v.correct) << name << ": " << t(reply) << " -> " << v.reason;
        }
    }
}

}  // namespace
}  // namespace memfail::grade
