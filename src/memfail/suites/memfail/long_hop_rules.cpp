// SPDX-License-Identifier: MIT
// Construction rules of the Long-Hop dataset (paper Section 4, Task 4, and Appendix B.6).
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace memfail::suites::memfail_suite {

namespace {

constexpr std::array<std::size_t, 3> k_expected_per_hops = {31, 32, 29}; // K = 1, 2, 3
constexpr std::size_t k_expected_chains = 92;
constexpr std::size_t k_choices = 5;

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

// True when `text` names `phrase` as written or in the possessive: "Mei's evening tea" (or
// "Mei’s", either apostrophe) names the anchor "Mei". normalize() joins the apostrophe into the
// word ("meis"), so the bare name alone never matched it on word boundaries.
bool names(std::string_view text, const std::string& phrase) {
    return text::contains_phrase(text, phrase) || text::contains_phrase(text, phrase + "'s");
}

// The head may appear as written (or in the possessive), or as its last word of three or more
// letters, which tolerates "eat apples" -> "eating apples" as the paper's validator does.
bool question_names_head(const std::string& question, const std::string& head) {
    if (names(question, head))
        return true;
    const auto head_words = text::words(head);
    for (auto it = head_words.rbegin(); it != head_words.rend(); ++it)
        if (it->size() >= 3) {
            // Its singular counts too: "long train journeys" is named by "a long train journey".
            const bool plural = it->size() > 3 && it->back() == 's' && (*it)[it->size() - 2] != 's';
            return names(question, *it) || (plural && names(question, it->substr(0, it->size() - 1)));
        }
    return false;
}

// True when the fact's key detail `name` has a variant in the fact's text.
bool detail_in(const data::EvidenceFact& fact, const std::string& name) {
    for (const auto& d : fact.key_details)
        if (d.name == name)
            for (const auto& v : d.variants)
                if (text::contains_phrase(fact.text, v))
                    return true;
    return false;
}

} // namespace

void check_long_hop_rules(const data::Scenario& s, std::size_t line,
                          std::vector<data::Violation>& out) {
    auto add = [&](std::string field, std::string message) {
        out.push_back({line, std::move(field), std::move(message)});
    };
    if (s.probes.size() != k_expected_chains)
        add("probes", "Long-Hop has " + std::to_string(k_expected_chains) + " chains; found " +
                          std::to_string(s.probes.size()));

    const data::MessageIndex index(s);
    const std::string last_session = s.sessions.empty() ? std::string() : s.sessions.back().id;
    std::array<std::size_t, 3> per_hops{};
    std::map<std::string, std::string> anchor_owner; // normalised anchor -> probe id that uses it

    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const data::Probe& p = s.probes[i];
        const std::string path = "probes[" + std::to_string(i) + "]";
        if (p.kind != data::ProbeKind::mcq)
            add(path + ".kind", "a Long-Hop probe is a multiple-choice question");
        if (p.choices.size() != k_choices)
            add(path + ".choices", "a Long-Hop question has exactly 5 choices; found " +
                                       std::to_string(p.choices.size()));
        if (!last_session.empty() && p.after_session != last_session)
            add(path + ".after_session",
                "Long-Hop asks every question after the last session (" + last_session + ")");

        const auto hops_it = p.meta.find("hops");
        // Compared as the 64-bit value it is: get<int>() would wrap 4294967297 to 1.
        if (hops_it == p.meta.end() || !hops_it->is_number_integer() ||
            (hops_it->is_number_unsigned() ? (hops_it->get<std::uint64_t>() < 1 || hops_it->get<std::uint64_t>() > 3)
                                           : (hops_it->get<std::int64_t>() < 1 || hops_it->get<std::int64_t>() > 3))) {
            add(path + ".meta.hops", "must be the hop count K, an integer from 1 to 3");
            continue;
        }
        const std::size_t hops = hops_it->get<std::size_t>();
        ++per_hops[hops - 1];
        const auto chain_it = p.meta.find("chain");
        std::vector<std::string> anchors;
        bool chain_ok =
            chain_it != p.meta.end() && chain_it->is_array() && chain_it->size() == hops + 2;
        if (chain_ok)
            for (const auto& a : *chain_it) {
                chain_ok = chain_ok && a.is_string();
                if (a.is_string())
                    anchors.push_back(a.get<std::string>());
            }
        if (!chain_ok) {
            add(path + ".meta.chain",
                "must list the K+2 = " + std::to_string(hops + 2) + " anchors as strings");
            continue;
        }

        // Anchors: distinct within the chain and never reused by another chain.
        for (std::size_t j = 0; j < anchors.size(); ++j) {
            const std::string apath = path + ".meta.chain[" + std::to_string(j) + "]";
            const std::string norm = text::normalize(anchors[j]);
            if (norm.empty()) {
                add(apath, "anchor is empty");
                continue;
            }
            for (std::size_t k = 0; k < j; ++k)
                if (text::normalize(anchors[k]) == norm)
                    add(apath, "anchor repeats anchor " + std::to_string(k + 1));
            const auto [owner, fresh] = anchor_owner.emplace(norm, p.id);
            if (!fresh && owner->second != p.id)
                add(apath,
                    "anchor " + in_quotes(anchors[j]) + " is already used by " + owner->second);
        }

        // Answer and correct letter name the terminal anchor.
        const std::string& terminal = anchors.back();
        if (!text::contains_phrase(p.answer, terminal) &&
            !text::contains_phrase(terminal, p.answer))
            add(path + ".answer", "must be the terminal anchor " + in_quotes(terminal));
        std::size_t correct = k_choices;
        if (p.correct_choice.size() == 1 && p.correct_choice[0] >= 'A' &&
            static_cast<std::size_t>(p.correct_choice[0] - 'A') < p.choices.size()) {
            correct = static_cast<std::size_t>(p.correct_choice[0] - 'A');
            if (text::normalize(p.choices[correct]) != text::normalize(terminal))
                add(path + ".correct_choice",
                    "choice " + p.correct_choice + " is " + in_quotes(p.choices[correct]) +
                        ", not the terminal anchor " + in_quotes(terminal));
        } else {
            add(path + ".correct_choice", "must be a letter A-E naming the terminal anchor");
        }

        // Evidence: one fact per link, each naming both of its anchors and no later anchor it does
        // not border, and no two facts of the chain stored in the same session.
        if (p.evidence.size() != hops + 1)
            add(path + ".evidence", "a chain of " + std::to_string(hops) + " hops has " +
                                        std::to_string(hops + 1) + " facts; found " +
                                        std::to_string(p.evidence.size()));
        std::map<std::string, std::size_t> session_fact; // session id -> first fact stored there
        for (std::size_t f = 0; f < p.evidence.size() && f <= hops; ++f) {
            const data::EvidenceFact& fact = p.evidence[f];
            const std::string fpath = path + ".evidence[" + std::to_string(f) + "]";
            for (std::size_t j = 0; j < anchors.size(); ++j) {
                const bool borders = j == f || j == f + 1;
                // A bordering anchor counts when the fact states it in the form its key detail
                // gives ("Craving porridge" for the anchor "crave porridge").
                const bool present = names(fact.text, anchors[j]) ||
                                     (borders && detail_in(fact, "anchor_" + std::to_string(j + 1)));
                if (borders && !present)
                    add(fpath + ".text", "fact " + std::to_string(f + 1) + " must name anchor " +
                                             std::to_string(j + 1) + " " + in_quotes(anchors[j]));
                // The head may recur as background (a named person is in every fact).
                if (!borders && present && j > 0)
                    add(fpath + ".text", "anchor " + std::to_string(j + 1) + " " +
                                             in_quotes(anchors[j]) +
                                             " appears outside the two facts that border it");
            }
            for (std::size_t m = 0; m < fact.message_ids.size(); ++m) {
                const data::Session* session = index.session_of(fact.message_ids[m]);
                if (!session)
                    continue; // validate_structure reports unknown messages
                const auto [seen, fresh] = session_fact.emplace(session->id, f);
                if (!fresh && seen->second != f)
                    add(fpath + ".message_ids[" + std::to_string(m) + "]",
                        "fact " + std::to_string(f + 1) + " is stored in session " + session->id +
                            " together with fact " + std::to_string(seen->second + 1) +
                            " of the same chain");
            }
        }

        // Question: names the head, never an intermediate anchor, never the answer.
        if (!question_names_head(p.question, anchors.front()))
            add(path + ".question", "must name the head anchor " + in_quotes(anchors.front()));
        for (std::size_t j = 1; j + 1 < anchors.size(); ++j)
            if (text::contains_phrase(p.question, anchors[j]))
                add(path + ".question", "names intermediate anchor " + std::to_string(j + 1) + " " +
                                            in_quotes(anchors[j]) + "; only the head may appear");
        if (text::contains_phrase(p.question, terminal))
            add(path + ".question", "gives away the terminal anchor " + in_quotes(terminal));

        // Distractors: absent from every fact of the chain and from its anchors.
        for (std::size_t c = 0; c < p.choices.size(); ++c) {
            if (c == correct)
                continue;
            const std::string cpath = path + ".choices[" + std::to_string(c) + "]";
            for (std::size_t f = 0; f < p.evidence.size(); ++f)
                if (text::contains_phrase(p.evidence[f].text, p.choices[c])) {
                    add(cpath, "distractor " + in_quotes(p.choices[c]) + " appears in fact " +
                                   std::to_string(f + 1));
                    break;
                }
            for (const auto& a : anchors)
                if (text::normalize(a) == text::normalize(p.choices[c]))
                    add(cpath, "distractor is an anchor of the chain");
        }
    }

    if (per_hops != k_expected_per_hops)
        add("probes", "hop counts K=1/2/3 are " + std::to_string(per_hops[0]) + "/" +
                          std::to_string(per_hops[1]) + "/" + std::to_string(per_hops[2]) +
                          "; Long-Hop has 31/32/29");
}

} // namespace memfail::suites::memfail_suite
