// SPDX-License-Identifier: MIT
// Construction rules of Coexisting-Facts (paper Section 4, Appendix B.4), checked on any scenario
// that claims to be that dataset, generated or imported.
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <map>

namespace memfail::suites::memfail_suite {

namespace {

constexpr std::size_t k_rows = 100;

std::vector<std::string> preference_variants(const data::EvidenceFact& fact) {
    for (const auto& d : fact.key_details)
        if (d.name == "preference") return d.variants;
    return {};
}

bool names_any(const std::string& normalized_text, const std::vector<std::string>& variants) {
    for (const auto& v : variants)
        if (text::normalized_contains(normalized_text, text::normalize(v))) return true;
    return false;
}

}  // namespace

void check_coexisting_facts_rules(const data::Scenario& s, std::size_t line, std::vector<data::Violation>& out) {
    auto add = [&](std::string field, std::string message) {
        out.push_back({line, std::move(field), std::move(message)});
    };
    if (s.probes.size() != k_rows)
        add("probes", "Coexisting-Facts has one probe per category (" + std::to_string(k_rows) + "); found " +
                          std::to_string(s.probes.size()));

    const data::MessageIndex index(s);
    std::map<std::string, std::size_t> category_rows;
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        const std::string path = "probes[" + std::to_string(i) + "]";
        if (p.kind != data::ProbeKind::list) add(path + ".kind", "a Coexisting-Facts probe is a list question");

        // n: an integer in 2..5 that matches the evidence.
        const auto n_it = p.meta.find("n");
        if (n_it == p.meta.end() || !n_it->is_number_integer()) {
            add(path + ".meta.n", "missing the preference count n");
        } else {
            const auto n = n_it->get<long long>();
            if (n < 2 || n > 5) add(path + ".meta.n", "n must be between 2 and 5; got " + std::to_string(n));
            if (static_cast<long long>(p.evidence.size()) != n)
                add(path + ".meta.n", "n is " + std::to_string(n) + " but the probe has " +
                                          std::to_string(p.evidence.size()) + " evidence facts");
        }
        const auto prefs_it = p.meta.find("preferences");
        if (prefs_it == p.meta.end() || !prefs_it->is_array() || prefs_it->size() != p.evidence.size())
            add(path + ".meta.preferences", "must list one preference per evidence fact");

        // Categories are distinct: each category yields exactly one row.
        const auto cat_it = p.meta.find("category");
        if (cat_it == p.meta.end() || !cat_it->is_string() || cat_it->get<std::string>().empty()) {
            add(path + ".meta.category", "missing the preference category");
        } else {
            const std::string category = cat_it->get<std::string>();
            const auto [it, fresh] = category_rows.emplace(category, i);
            if (!fresh)
                add(path + ".meta.category", "category '" + category + "' already has a row (probes[" +
                                                 std::to_string(it->second) + "])");
        }

        std::vector<std::vector<std::string>> variants(p.evidence.size());
        for (std::size_t e = 0; e < p.evidence.size(); ++e) {
            variants[e] = preference_variants(p.evidence[e]);
            // An imported preference stated in other words has none, and says so (details_complete).
            if (variants[e].empty() && p.evidence[e].details_complete)
                add(path + ".evidence[" + std::to_string(e) + "].key_details",
                    "a fact needs a 'preference' key detail");
        }

        const std::string question = text::normalize(p.question);
        const std::string answer = text::normalize(p.answer);
        std::map<std::string, std::size_t> session_owner;
        for (std::size_t e = 0; e < p.evidence.size(); ++e) {
            const auto& fact = p.evidence[e];
            const std::string fpath = path + ".evidence[" + std::to_string(e) + "]";
            if (variants[e].empty()) continue;
            if (names_any(question, variants[e]))
                add(path + ".question", "the question names the preference '" + variants[e][0] +
                                            "'; it must need the preferences without naming any");
            if (!names_any(answer, variants[e]))
                add(path + ".answer", "the answer does not list the preference '" + variants[e][0] + "'");
            for (std::size_t e2 = 0; e2 < e; ++e2)
                if (!variants[e2].empty() && text::normalize(variants[e2][0]) == text::normalize(variants[e][0]))
                    add(fpath, "preference '" + variants[e][0] + "' is repeated within the row");

            if (fact.message_ids.size() != 1) {
                add(fpath + ".message_ids", "each preference is stated in exactly one message");
                continue;
            }
            const data::Session* session = index.session_of(fact.message_ids[0]);
            if (!session) continue;  // unknown ids are validate_structure's to report
            const std::string mpath = fpath + ".message_ids[0]";
            const auto [owner, fresh] = session_owner.emplace(session->id, e);
            if (!fresh)
                add(mpath, "session '" + session->id + "' already states evidence[" +
                               std::to_string(owner->second) + "]; each preference needs its own session");
            std::string content;
            for (const auto& m : session->messages) content += ' ' + text::normalize(m.content);
            for (std::size_t other = 0; other < p.evidence.size(); ++other) {
                if (other == e || variants[other].empty()) continue;
                if (names_any(content, variants[other]))
                    add(mpath, "session '" + session->id + "' also mentions the row's preference '" +
                                   variants[other][0] + "'; a statement must reference only its own preference");
            }
        }
    }
}

}  // namespace memfail::suites::memfail_suite
