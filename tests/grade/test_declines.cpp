// SPDX-License-Identifier: MIT
// Declines read as people write them (grade/declines.hpp): the benchmarks' own abstention wording and
// what answer models write is an abstention; a decline that guesses or goes on to answer is not one;
// ordinary sentences holding a decline word ("an unknown artist", "she was not sure") are never
// graded as declines. Then the same through the answer rules on abstain and answerable probes.
#include <memfail/grade/answer_rules.hpp>
#include <memfail/grade/declines.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

namespace memfail::grade {
namespace {

// Each benchmark's own wording and the forms answer models write.
const std::vector<std::string> k_abstentions = {
    // LoCoMo: its adversarial option, the HF scripts' option, and its scorer's phrases.
    "Not mentioned in the conversation",
    "Not mentioned in the conversation.",
    "(a) Not mentioned in the conversation",
    "No information available",
    "No information available.",
    "Not mentioned.",
    // LongMemEval's reference answers for its _abs questions.
    "The information provided is not enough. You did not mention how much the bus ride costs.",
    "You did not mention this information.",
    "The information provided is not enough. You mentioned fixing the fence but did not mention buying cows.",
    // The real release's _abs answers.
    "You did not mention this information. You mentioned your cat Luna but not your hamster.",
    "The information provided is not enough. You mentioned starting the role as Senior Software Engineer but not "
    "Software Engineer Manager.",
    "The information provided is not enough. You only mentioned booking Airbnb in San Francisco.",
    // HaluMem's memory-boundary answers.
    "Unknown; not provided by the user.",
    "Unknown.",
    // memfail's own prompt asks for this.
    "I don't have that information.",
    "I do not have that information.",
    // What answer models write.
    "I'm sorry, but I don't know.",
    "I don’t know.",
    "I cannot find anything about that in our conversations. Sorry!",
    "That wasn't mentioned.",
    "This was never mentioned.",
    "It is not in the conversation.",
    "I don't recall you telling me that.",
    "There is no information about your sister's job.",
    "Sorry — I have no record of that.",
    "You never told me your brother's name.",
    "I have no idea.",
    "Answer: Not specified.",
    "It cannot be determined from our conversations.",
    "I am unable to answer that; you haven't shared it with me.",
};

// Declines that also answer or guess: never an abstention the rules can prove.
const std::vector<std::string> k_not_abstentions = {
    "I'm not sure, but Alex probably makes around $150,000.",
    "I'm not sure, but probably Paris.",
    "Not mentioned, but I think it was Paris.",
    "I don't know the exact date, but it was in May.",
    "You never told me directly; it is Boston.",
    "I don't have that information. My guess is Tuesday.",
    "You did not mention your hamster. It is called Pip.",
};

// Ordinary answers holding a decline word: not declines at all.
const std::vector<std::string> k_ordinary = {
    "An unknown artist painted it.",
    "She doesn't know how to swim.",
    "She was not sure about the move.",
    "Her brother was not mentioned in the will.",
    "She had no idea he was coming.",
    "They went hiking near the lake.",
    "None of the three dogs.",
};

TEST(Declines, TheBenchmarksWordingAndModelsFormsAreAbstentions) {
    for (const auto& a : k_abstentions) {
        const DeclineReading r = read_decline(a);
        EXPECT_TRUE(r.declines) << a;
        EXPECT_TRUE(is_plain_abstention(r)) << a << " (wholly " << r.wholly << ", guesses " << r.guesses << ")";
    }
}

TEST(Declines, ADeclineThatGuessesOrAnswersIsNotAnAbstention) {
    for (const auto& a : k_not_abstentions) {
        const DeclineReading r = read_decline(a);
        EXPECT_TRUE(r.declines) << a;
        EXPECT_FALSE(is_plain_abstention(r)) << a;
    }
}

TEST(Declines, OrdinarySentencesWithDeclineWordsDoNotDecline) {
    for (const auto& a : k_ordinary) EXPECT_FALSE(read_decline(a).declines) << a;
}

// Harmless rewrites (a label, a bullet, quotes, case, curly apostrophes, spacing) change no reading.
std::vector<std::string> rewrites(const std::string& a) {
    std::string upper = a, curly;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (char c : a) curly += c == '\'' ? std::string("\xE2\x80\x99") : std::string(1, c);
    return {"Answer: " + a, "- " + a, "\"" + a + "\"", upper, curly, "  " + a + "  \n", "**" + a + "**"};
}

TEST(Declines, HarmlessRewritesChangeNoReading) {
    for (const auto* list : {&k_abstentions, &k_not_abstentions, &k_ordinary})
        for (const auto& a : *list) {
            const DeclineReading base = read_decline(a);
            for (const auto& r : rewrites(a)) {
                const DeclineReading got = read_decline(r);
                EXPECT_EQ(got.declines, base.declines) << r;
                EXPECT_EQ(is_plain_abstention(got), is_plain_abstention(base)) << r;
            }
        }
}

data::Probe abstain_probe() {
    data::Probe p;
    p.id = "q";
    p.kind = data::ProbeKind::abstain;
    p.question = "What did Caroline do after the road trip to relax?";
    p.answer = "Not mentioned in the conversation";
    p.meta["adversarial_answer"] = "Went on a nature walk or hike";
    return p;
}

data::Probe open_probe() {
    data::Probe p;
    p.id = "q";
    p.kind = data::ProbeKind::open;
    p.question = "What did Melanie do to relax?";
    p.answer = "Went on a nature walk";
    data::EvidenceFact f;
    f.id = "f";
    f.text = "Melanie went on a nature walk to relax.";
    f.key_details = {{"entity", {"Melanie"}}, {"activity", {"nature walk"}}};
    p.evidence = {f};
    return p;
}

TEST(AbstentionRules, EveryFormIsGradedCorrectOnAnAbstainProbe) {
    const data::Probe p = abstain_probe();
    for (const auto& a : k_abstentions) {
        const auto v = grade_answer_by_rules(p, a);
        EXPECT_TRUE(v.decided && v.correct) << a << ": " << v.reason;
    }
}

TEST(AbstentionRules, AGuessOrTheTrapAnswerIsNeverAnAbstention) {
    const data::Probe p = abstain_probe();
    for (const auto& a : k_not_abstentions) EXPECT_FALSE(grade_answer_by_rules(p, a).correct) << a;
    // The trap answer without a decline answers: decided wrong.
    const auto trap = grade_answer_by_rules(p, "She went on a nature walk or hike.");
    EXPECT_TRUE(trap.decided);
    EXPECT_FALSE(trap.correct);
    // The trap named while declining: for a judge.
    const auto both = grade_answer_by_rules(p, "It is not mentioned in the conversation that she went on a nature walk or hike.");
    EXPECT_FALSE(both.decided);
    EXPECT_FALSE(both.correct);
    // An answer in words the rules do not know: for a judge, never a pass.
    const auto other = grade_answer_by_rules(p, "She read a book on the porch.");
    EXPECT_FALSE(other.decided);
    EXPECT_FALSE(other.correct);
}

TEST(AbstentionRules, AnAnswerableQuestionDeclinedIsWrongButAPartialDeclineIsGradedOnWhatItStates) {
    const data::Probe p = open_probe();
    for (const auto& a : k_abstentions) {
        const auto v = grade_answer_by_rules(p, a);
        EXPECT_TRUE(v.decided) << a;
        EXPECT_FALSE(v.correct) << a;
    }
    // A faithful answer that declines one detail is not a decided error.
    for (const std::string a : {"Melanie went on a nature walk; she never said where.",
                                "She went on a nature walk, though the place is not mentioned."}) {
        const auto v = grade_answer_by_rules(p, a);
        EXPECT_FALSE(v.decided && !v.correct) << a << ": " << v.reason;
    }
    // Ordinary answers with decline words are never graded as declines.
    for (const auto& a : k_ordinary) {
        const auto v = grade_answer_by_rules(p, a);
        EXPECT_EQ(v.parsed.find("abstained"), std::string::npos) << a;
    }
}

}  // namespace
}  // namespace memfail::grade
