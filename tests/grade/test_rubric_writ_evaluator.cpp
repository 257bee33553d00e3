// SPDX-License-Identifier: MIT
// memfail's rubric verdicts beside WRIT's evaluator on crafted answers, one rubric method of the
// release at a time (correct, stale, partial at WRIT's threshold, paraphrased, numbers in other
// formats, hedged, forbidden or rejected). WRIT's rules are replicated from its public evaluator
// (src/evaluator.ts: checkRecall is a case-insensitive substring of the expected value,
// checkStructuredRecall at least 80% of the elements as substrings, evaluateConstraint literal
// must/must-not substrings; an abstention is the adapter's own `abstained` flag; any other method
// falls back to checkRecall). Every case where the two differ names why; a new difference fails the
// test. MEMFAIL_PRINT_WRIT_TABLE=1 prints the table (the resolve note's).
#include <memfail/grade/rubric.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

namespace memfail::grade {
namespace {

using data::Probe;
using data::Rubric;
using data::RubricKind;
using nlohmann::json;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool has(const std::string& answer, const std::string& term) { return lower(answer).find(lower(term)) != std::string::npos; }

std::string text_of(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

// WRIT's recall verdict (true: correct) for a non-abstaining answer.
bool writ_recall(const Probe& p, const std::string& answer) {
    const Rubric& r = *p.rubric;
    if (r.method == "structured") {
        std::size_t found = 0;
        for (const auto& e : r.required) found += has(answer, e) ? 1 : 0;
        return !r.required.empty() && static_cast<double>(found) / static_cast<double>(r.required.size()) >= 0.8;
    }
    if (p.expected.is_object()) {
        for (const auto& [k, v] : p.expected.items())
            if (!has(answer, text_of(v))) return false;
        return true;
    }
    return has(answer, text_of(p.expected));
}

bool writ_constraint(const Rubric& r, const std::string& answer) {
    for (const auto& t : r.must_contain)
        if (!has(answer, t)) return false;
    for (const auto& t : r.must_not_contain)
        if (has(answer, t)) return false;
    return true;
}

struct Case {
    std::string method, scenario, kind, answer;
    RubricOutcome memfail;      // what memfail must decide
    std::string why;            // when WRIT decides otherwise: why memfail differs
    bool adapter_abstained = false;  // abstention probes: the flag WRIT would read from the adapter
};

Probe probe(const std::string& method, RubricKind kind, json expected) {
    Probe p;
    p.id = method;
    p.question = "?";
    p.expected = std::move(expected);
    Rubric r;
    r.kind = kind;
    r.method = method;
    p.rubric = r;
    return p;
}

const char* name(RubricOutcome o) { return rubric_outcome_name(o); }

TEST(RubricVersusWritEvaluator, EveryMethodOfTheReleaseOnCraftedAnswers) {
    constexpr auto pass = RubricOutcome::pass;
    constexpr auto fail = RubricOutcome::fail;
    constexpr auto unsure = RubricOutcome::unsure;
    struct Group {
        Probe probe;
        RubricContext context;
        std::vector<Case> cases;
        bool constraint_metric = false;
    };
    std::vector<Group> groups;

    {  // exact: multi_hop-003 (June 15)
        Group g{probe("exact", RubricKind::exact, "June 15"), {}, {}};
        g.context.wrong_values = {"March 3"};
        g.cases = {
            {"exact", "multi_hop-003", "correct", "Emma's anniversary is June 15.", pass, ""},
            {"exact", "multi_hop-003", "other format", "It falls on June 15th.", pass, ""},
            {"exact", "multi_hop-003", "other format", "It is on 15 June.", pass,
             "WRIT's substring misses \"15 June\"; memfail reads both as one date"},
            {"exact", "multi_hop-003", "wrong value", "It is March 3.", fail, ""},
            {"exact", "multi_hop-003", "hedged", "I'm not sure, maybe June 15?", unsure,
             "WRIT passes any answer containing the value; a hedged one is the judge's in memfail"},
            {"exact", "multi_hop-003", "paraphrase", "The middle of June, on the fifteenth.", unsure,
             "no rule can read the paraphrase; WRIT fails it, memfail asks the judge"},
        };
        groups.push_back(std::move(g));
    }
    {  // exact with a number: provenance-001 (5000)
        Group g{probe("exact", RubricKind::exact, 5000), {}, {}};
        g.context.wrong_values = {"2000", "1200"};
        g.cases = {
            {"exact", "provenance-001", "correct", "Your trip budget is 5000.", pass, ""},
            {"exact", "provenance-001", "other format", "Your trip budget is $5,000.", pass,
             "WRIT's substring \"5000\" is not in \"$5,000\"; memfail reads numbers as values"},
            {"exact", "provenance-001", "stale or other value", "The hotel is $2,000.", fail, ""},
        };
        groups.push_back(std::move(g));
    }
    {  // structured at WRIT's threshold: update-003
        Group g{probe("structured", RubricKind::structured, "88 Oak Avenue, Apt 3B, Portland, OR 97201"), {}, {}};
        g.probe.rubric->required = {"88 Oak Avenue", "Apt 3B", "Portland", "OR", "97201"};
        g.probe.rubric->pass_fraction = 0.8;
        g.cases = {
            {"structured", "update-003", "correct", "88 Oak Avenue, Apt 3B, Portland, OR 97201.", pass, ""},
            {"structured", "update-003", "partial at 80%", "88 Oak Avenue, Apt 3B, Portland, Oregon 97201.", pass, ""},
            {"structured", "update-003", "partial below 80%", "88 Oak Avenue in Portland.", fail, ""},
            {"structured", "update-003", "stale", "42 Elm Street, Portland, OR 97201.", fail, ""},
        };
        groups.push_back(std::move(g));
    }
    {  // structured with numbers: certification-002
        Group g{probe("structured", RubricKind::structured, "$75K"), {}, {}};
        g.probe.rubric->required = {"75000", "75", "$75", "conflict", "contradict", "both", "50", "updated", "later"};
        g.probe.rubric->pass_fraction = 0.8;
        g.cases = {
            {"structured", "certification-002", "correct, numbers as $K",
             "Both records conflict: the later, updated one says $75K and contradicts the earlier $50K.", pass, ""},
            {"structured", "certification-002", "stale", "The budget is $50K.", fail, ""},
        };
        groups.push_back(std::move(g));
    }
    {  // structured with rejected elements: lifecycle-001
        Group g{probe("structured", RubricKind::structured, "Bob Okonkwo"), {}, {}};
        g.probe.rubric->required = {"Bob Okonkwo", "Bob"};
        g.probe.rubric->reject = {"Alice Nguyen", "Alice"};
        g.probe.rubric->pass_fraction = 0.8;
        g.cases = {
            {"structured", "lifecycle-001", "correct", "Bob Okonkwo is the CEO.", pass, ""},
            {"structured", "lifecycle-001", "rejected value", "Alice Nguyen is the CEO.", fail, ""},
            {"structured", "lifecycle-001", "correct, naming the rejected as past",
             "Bob Okonkwo is the CEO; Alice Nguyen stepped down in June.", unsure,
             "WRIT ignores reject_elements; memfail cannot tell the past from a claim by rule and asks the judge"},
            {"structured", "lifecycle-001", "both as current", "Bob Okonkwo and Alice Nguyen are both CEO.", unsure,
             "WRIT ignores reject_elements and passes it; memfail never passes an answer naming a rejected value"},
        };
        groups.push_back(std::move(g));
    }
    {  // structured with forbidden elements: update-005
        Group g{probe("structured", RubricKind::structured, "two-week client engagement at Tokyo office"), {}, {}};
        g.probe.rubric->required = {"client engagement", "Tokyo"};
        g.probe.rubric->forbidden = {"vacation", "conference"};
        g.probe.rubric->pass_fraction = 0.8;
        g.cases = {
            {"structured", "update-005", "correct", "A two-week client engagement at the Tokyo office.", pass, ""},
            {"structured", "update-005", "forbidden element",
             "A client engagement in Tokyo, then a conference.", fail,
             "WRIT ignores forbidden_elements; memfail fails any answer naming one"},
        };
        groups.push_back(std::move(g));
    }
    {  // contains: temporal-003
        Group g{probe("contains", RubricKind::contains, "dairy-free"), {}, {}};
        g.probe.rubric->required = {"dairy-free"};
        g.cases = {
            {"contains", "temporal-003", "correct", "On March 10 you were dairy-free.", pass, ""},
            {"contains", "temporal-003", "stale", "You had no restrictions.", fail, ""},
            {"contains", "temporal-003", "other spelling", "You were dairy free then.", pass,
             "WRIT's substring needs the hyphen; memfail compares canonical words"},
        };
        groups.push_back(std::move(g));
    }
    {  // constraint: constraint-003
        Group g{probe("constraint", RubricKind::constraint, "dessert recipe free of both dairy and tree nuts"), {}, {}};
        g.probe.rubric->must_not_contain = {"milk", "cream", "butter", "cheese", "almond", "walnut"};
        g.constraint_metric = true;
        g.cases = {
            {"constraint", "constraint-003", "correct", "A mango sorbet with coconut flakes.", pass, ""},
            {"constraint", "constraint-003", "violating", "A walnut brownie.", fail, ""},
            {"constraint", "constraint-003", "violating, other form", "Brownies with walnuts.", fail,
             "WRIT's substring finds \"walnut\" in \"walnuts\" too; both fail it"},
        };
        groups.push_back(std::move(g));
    }
    {  // semantic with a constraint check: constraint-001
        Group g{probe("semantic", RubricKind::semantic, "menu without dairy products"), {}, {}};
        g.probe.rubric->must_contain = {"dairy-free"};
        g.probe.rubric->must_not_contain = {"cheese", "cream", "butter"};
        g.cases = {
            {"semantic", "constraint-001", "violating", "A dairy-free menu: salad, fish and a cheese board.", fail, ""},
            {"semantic", "constraint-001", "correct", "A dairy-free menu: salad, grilled fish, sorbet.", unsure,
             "WRIT looks for the whole expected phrase, which no menu says; memfail leaves meaning to the judge"},
        };
        groups.push_back(std::move(g));
    }
    {  // abstention: abstention-004
        Group g{probe("abstention", RubricKind::abstention, nullptr), {}, {}};
        g.probe.should_abstain = true;
        g.probe.kind = data::ProbeKind::abstain;
        g.probe.rubric->accept_patterns = {"don't have", "never shared", "no record", "wasn't mentioned", "don't know"};
        g.cases = {
            {"abstention", "abstention-004", "declines", "I don't have Alex's salary; you never shared it.", pass, "",
             true},
            {"abstention", "abstention-004", "hedged guess", "I'm not sure, but Alex probably makes around $150,000.",
             fail, "WRIT reads the adapter's abstained flag, which an adapter may set for this reply", true},
            {"abstention", "abstention-004", "answers", "Alex makes $150,000.", fail, ""},
        };
        groups.push_back(std::move(g));
    }
    {  // numeric_equivalence: extraction_drift-002
        Group g{probe("numeric_equivalence", RubricKind::numeric,
                      "$50,000 (single consolidated budget fact; equivalent to $50K and fifty thousand dollars)"),
                {}, {}};
        g.probe.rubric->number = 50000;
        g.cases = {
            {"numeric_equivalence", "extraction_drift-002", "correct", "The budget cap is $50K.", pass,
             "WRIT falls back to the whole annotated value as a substring, which no answer says"},
            {"numeric_equivalence", "extraction_drift-002", "wrong", "The budget cap is $60K.", fail, ""},
        };
        groups.push_back(std::move(g));
    }
    {  // multi_criterion with a value criterion: provenance-003
        Group g{probe("multi_criterion", RubricKind::semantic, 1800), {}, {}};
        g.probe.rubric->criteria = {"correct_value_1800", "identifies_user_as_source", "flags_agent_error"};
        g.probe.rubric->must_contain = {"1800"};
        g.cases = {
            {"multi_criterion", "provenance-003", "correct", "It is $1,800, as you said; the agent's $2,160 was wrong.",
             unsure, "WRIT misses \"1800\" in \"$1,800\"; memfail leaves the other criteria to the judge"},
            {"multi_criterion", "provenance-003", "wrong value", "It is $2,160.", fail, ""},
        };
        groups.push_back(std::move(g));
    }
    {  // multi_field_exact: temporal-002
        Group g{probe("multi_field_exact", RubricKind::multi_field, json{{"employer", "Globex Industries"}, {"city", "Denver, CO"}}),
                {}, {}};
        g.probe.rubric->fields = g.probe.expected;
        g.context.wrong_values = {"Acme Corp", "Austin, TX"};
        g.cases = {
            {"multi_field_exact", "temporal-002", "correct", "At Globex Industries, living in Denver, CO.", pass, ""},
            {"multi_field_exact", "temporal-002", "stale", "At Acme Corp, in Austin, TX.", fail, ""},
            {"multi_field_exact", "temporal-002", "other format", "At Globex Industries in Denver, Colorado.", unsure,
             "WRIT's substring finds \"Denver, CO\" inside \"Denver, Colorado\"; memfail compares the field's "
             "words, so the state's spelling is the judge's"},
        };
        groups.push_back(std::move(g));
    }

    {  // address_normalization: extraction_drift-004
        Group g{probe("address_normalization", RubricKind::address,
                      "123 Main Street, Springfield, IL (single location; St/St./Street and Illinois vs IL are "
                      "formatting variants of the same address)"),
                {}, {}};
        g.cases = {
            {"address_normalization", "extraction_drift-004", "correct", "123 Main Street, Springfield, IL.", pass,
             "WRIT falls back to the whole annotated value as a substring, which no answer says"},
            {"address_normalization", "extraction_drift-004", "other format", "123 Main St., Springfield, Illinois.",
             pass, "WRIT falls back to the whole annotated value as a substring, which no answer says"},
            {"address_normalization", "extraction_drift-004", "wrong", "45 Oak Street, Springfield, IL.", fail, ""},
        };
        groups.push_back(std::move(g));
    }
    {  // entity count: extraction_drift-005 (the count from ground_truth.expected_entity_count)
        Group g{probe("entity_count_and_org_merge", RubricKind::entity_count,
                      "1 distinct client company (Acme / Acme Corp / Acme Corporation / ACME Inc. are the same "
                      "organization)"),
                {}, {}};
        g.probe.rubric->expected_count = 1;
        g.cases = {
            {"entity_count_and_org_merge", "extraction_drift-005", "correct", "One client company: Acme Corporation.",
             pass, "WRIT falls back to the whole annotated value as a substring, which no answer says"},
            {"entity_count_and_org_merge", "extraction_drift-005", "duplicates", "Two companies: Acme Corp and ACME Inc.",
             fail, ""},
        };
        groups.push_back(std::move(g));
    }

    const bool print = std::getenv("MEMFAIL_PRINT_WRIT_TABLE") != nullptr;
    if (print) std::cout << "| method | scenario | answer | memfail | WRIT | why they differ |\n|---|---|---|---|---|---|\n";
    for (const auto& g : groups)
        for (const auto& c : g.cases) {
            const RubricVerdict v = grade_rubric(g.probe, c.answer, g.context);
            EXPECT_EQ(v.outcome, c.memfail) << c.scenario << " " << c.kind << ": " << v.reason;
            bool writ = false;
            if (g.probe.should_abstain) writ = c.adapter_abstained;
            else if (g.constraint_metric) writ = writ_constraint(*g.probe.rubric, c.answer);
            else writ = writ_recall(g.probe, c.answer) && writ_constraint(*g.probe.rubric, c.answer);
            const bool agree = (c.memfail == RubricOutcome::pass) == writ && c.memfail != RubricOutcome::unsure;
            if (agree) EXPECT_TRUE(c.why.empty() || c.why.find("both") != std::string::npos)
                           << c.scenario << " " << c.kind << ": the verdicts agree; drop the explanation";
            else EXPECT_FALSE(c.why.empty()) << c.scenario << " " << c.kind << ": memfail " << name(c.memfail)
                                             << ", WRIT " << (writ ? "pass" : "fail") << ", unexplained";
            if (print)
                std::cout << "| " << c.method << " | " << c.scenario << " (" << c.kind << ") | " << c.answer << " | "
                          << name(v.outcome) << " | " << (writ ? "pass" : "fail") << " | " << (agree ? "" : c.why)
                          << " |\n";
        }
}

}  // namespace
}  // namespace memfail::grade
