// SPDX-License-Identifier: MIT
// Table 2 figures of a dataset.
#include <memfail/suites/memfail/stats.hpp>

#include <memfail/core/text.hpp>

#include <cstdio>
#include <set>

namespace memfail::suites::memfail_suite {

namespace {

using ordered_json = nlohmann::ordered_json;

bool family(const std::string& dataset, std::string_view prefix) { return text::starts_with(dataset, prefix); }

std::optional<std::int64_t> meta_int(const data::Probe& p, const char* key) {
    const auto it = p.meta.find(key);
    if (it == p.meta.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<std::int64_t>();
}

std::optional<std::string> meta_string(const data::Probe& p, const char* key) {
    const auto it = p.meta.find(key);
    if (it == p.meta.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

bool meta_true(const data::Probe& p, const char* key) {
    const auto it = p.meta.find(key);
    return it != p.meta.end() && it->is_boolean() && it->get<bool>();
}

// meta.condition_met as the generator ("yes"/"no") or the importer (a boolean) writes it.
std::optional<bool> condition_met(const data::Probe& p) {
    const auto it = p.meta.find("condition_met");
    if (it == p.meta.end()) return std::nullopt;
    if (it->is_boolean()) return it->get<bool>();
    if (it->is_string()) {
        const std::string v = text::normalize(it->get<std::string>());
        if (v == "yes" || v == "true") return true;
        if (v == "no" || v == "false") return false;
    }
    return std::nullopt;
}

// The reference answer's first word: yes, no or neither.
std::optional<bool> polarity(const std::string& answer) {
    const auto words = text::words(answer);
    if (words.empty()) return std::nullopt;
    if (words[0] == "yes") return true;
    if (words[0] == "no") return false;
    return std::nullopt;
}

// Tokens of the sentences stating a fact (its statements, else its canonical text).
std::size_t fact_tokens(const data::EvidenceFact& f, const TokenCounter& count) {
    if (f.statements.empty()) return count(f.text);
    std::size_t total = 0;
    for (const auto& s : f.statements) total += count(s);
    return total;
}

struct GroupSums {
    double fact_tokens = 0;
    double question_tokens = 0;
};

void add_to_group(GroupStats& g, GroupSums& sums, const data::Probe& p, const TokenCounter& count) {
    ++g.rows;
    g.facts += static_cast<std::int64_t>(p.evidence.size());
    if (!count) return;
    for (const auto& f : p.evidence) sums.fact_tokens += static_cast<double>(fact_tokens(f, count));
    sums.question_tokens += static_cast<double>(count(p.question));
}

void finish_groups(std::map<std::int64_t, GroupStats>& groups, const std::map<std::int64_t, GroupSums>& sums,
                   bool counted) {
    if (!counted) return;
    for (auto& [key, g] : groups) {
        if (g.rows == 0) continue;
        g.mean_fact_tokens = sums.at(key).fact_tokens / static_cast<double>(g.rows);
        g.mean_question_tokens = sums.at(key).question_tokens / static_cast<double>(g.rows);
    }
}

ordered_json optional_number(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

ordered_json groups_json(const std::map<std::int64_t, GroupStats>& groups, const char* key) {
    ordered_json out = ordered_json::array();
    for (const auto& [k, g] : groups)
        out.push_back({{key, k},
                       {"rows", g.rows},
                       {"facts", g.facts},
                       {"mean_fact_tokens", optional_number(g.mean_fact_tokens)},
                       {"mean_question_tokens", optional_number(g.mean_question_tokens)}});
    return out;
}

std::string fixed1(const std::optional<double>& v) {
    if (!v) return "-";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", *v);
    return buffer;
}

std::string pad_left(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string groups_text(const std::map<std::int64_t, GroupStats>& groups, const std::string& name,
                        const std::string& unit) {
    std::string out = "  " + pad_left(name, 4) + pad_left(unit, 8) + pad_left("facts", 8) +
                      pad_left("mean tok (facts)", 19) + pad_left("mean tok (question)", 22) + "\n";
    for (const auto& [k, g] : groups)
        out += "  " + pad_left(std::to_string(k), 4) + pad_left(std::to_string(g.rows), 8) +
               pad_left(std::to_string(g.facts), 8) + pad_left(fixed1(g.mean_fact_tokens), 19) +
               pad_left(fixed1(g.mean_question_tokens), 22) + "\n";
    return out;
}

}  // namespace

DatasetStats dataset_stats(const data::Scenario& scenario, const TokenCounter& count) {
    DatasetStats st;
    st.dataset = scenario.dataset;
    st.scenario_id = scenario.id;
    st.sessions = static_cast<std::int64_t>(scenario.sessions.size());
    double entry_tokens = 0;
    for (const auto& s : scenario.sessions) {
        st.messages += static_cast<std::int64_t>(s.messages.size());
        if (count)
            for (const auto& m : s.messages) entry_tokens += static_cast<double>(count(m.content));
    }
    if (count && st.sessions > 0) st.mean_entry_tokens = entry_tokens / static_cast<double>(st.sessions);

    const bool conditional = family(scenario.dataset, "conditional_facts");
    const bool coexisting = family(scenario.dataset, "coexisting_facts");
    const bool long_hop = family(scenario.dataset, "long_hop");
    const bool persona = family(scenario.dataset, "persona_retrieval");
    std::map<std::int64_t, GroupSums> n_sums, hop_sums;
    for (const auto& p : scenario.probes) {
        ++st.probes;
        const bool ambiguous = meta_true(p, "ambiguous");
        st.ambiguous += ambiguous;
        st.graded += !ambiguous;
        st.abstain += p.kind == data::ProbeKind::abstain;
        st.facts += static_cast<std::int64_t>(p.evidence.size());
        if (conditional && p.kind == data::ProbeKind::yes_no) {
            const auto yes = polarity(p.answer);
            if (!yes) ++st.unreadable;
            else if (*yes) ++st.yes;
            else ++st.no;
            const auto met = condition_met(p);
            if (met && yes && *met != *yes) ++st.condition_met_mismatch;
            if (const auto type = meta_string(p, "condition_type"); type && !type->empty()) ++st.condition_types[*type];
        }
        if (coexisting) {
            const std::int64_t n = meta_int(p, "n").value_or(static_cast<std::int64_t>(p.evidence.size()));
            add_to_group(st.by_n[n], n_sums[n], p, count);
        }
        if (long_hop) {
            const std::int64_t hops = meta_int(p, "hops").value_or(static_cast<std::int64_t>(p.evidence.size()) - 1);
            add_to_group(st.by_hops[hops], hop_sums[hops], p, count);
            ++st.voices[meta_string(p, "voice").value_or("unknown")];
        }
        if (persona) st.misleading += meta_true(p, "is_misleading") || p.kind == data::ProbeKind::abstain;
    }
    finish_groups(st.by_n, n_sums, static_cast<bool>(count));
    finish_groups(st.by_hops, hop_sums, static_cast<bool>(count));
    return st;
}

nlohmann::ordered_json stats_json(const DatasetStats& st) {
    ordered_json out = {{"dataset", st.dataset},
                        {"scenario", st.scenario_id},
                        {"entries",
                         {{"sessions", st.sessions},
                          {"messages", st.messages},
                          {"mean_tokens", optional_number(st.mean_entry_tokens)}}},
                        {"probes", st.probes},
                        {"graded", st.graded},
                        {"abstain", st.abstain},
                        {"ambiguous", st.ambiguous},
                        {"facts", st.facts}};
    if (family(st.dataset, "conditional_facts")) {
        out["yes_no"] = {{"yes", st.yes},
                         {"no", st.no},
                         {"unreadable", st.unreadable},
                         {"condition_met_mismatch", st.condition_met_mismatch}};
        ordered_json types = ordered_json::object();
        for (const auto& [t, n] : st.condition_types) types[t] = n;
        out["condition_types"] = {{"count", st.condition_types.size()}, {"probes", types}};
    }
    if (family(st.dataset, "coexisting_facts")) out["by_n"] = groups_json(st.by_n, "n");
    if (family(st.dataset, "long_hop")) {
        out["by_hops"] = groups_json(st.by_hops, "hops");
        ordered_json voices = ordered_json::object();
        for (const auto& [v, n] : st.voices) voices[v] = n;
        out["voices"] = voices;
    }
    if (family(st.dataset, "persona_retrieval")) {
        out["misleading"] = {{"probes", st.misleading},
                             {"share", st.probes > 0 ? ordered_json(static_cast<double>(st.misleading) /
                                                                    static_cast<double>(st.probes))
                                                     : ordered_json(nullptr)}};
    }
    return out;
}

std::string stats_text(const DatasetStats& st, const std::string& encoding) {
    const std::string tok = encoding.empty() ? "tokens not counted" : encoding;
    std::string out = st.dataset + " (scenario " + st.scenario_id + ")\n";
    out += "  entries          " + std::to_string(st.sessions) + " sessions, " + std::to_string(st.messages) +
           " messages; mean " + fixed1(st.mean_entry_tokens) + " tokens per entry (" + tok + ")\n";
    out += "  probes           " + std::to_string(st.probes) + " (graded " + std::to_string(st.graded);
    if (st.abstain > 0) out += ", abstain " + std::to_string(st.abstain);
    if (st.ambiguous > 0) out += ", ambiguous " + std::to_string(st.ambiguous) + " not graded";
    out += "), " + std::to_string(st.facts) + " evidence facts\n";
    if (family(st.dataset, "conditional_facts")) {
        out += "  yes/no           " + std::to_string(st.yes) + " yes / " + std::to_string(st.no) + " no";
        if (st.unreadable > 0) out += " / " + std::to_string(st.unreadable) + " neither";
        if (st.condition_met_mismatch > 0)
            out += " (" + std::to_string(st.condition_met_mismatch) + " disagree with meta.condition_met)";
        out += "\n  condition types  " + std::to_string(st.condition_types.size()) + "\n";
    }
    if (family(st.dataset, "coexisting_facts")) out += groups_text(st.by_n, "N", "rows");
    if (family(st.dataset, "long_hop")) {
        out += groups_text(st.by_hops, "K", "chains");
        out += "  voice           ";
        for (const auto& [v, n] : st.voices) out += " " + v + " " + std::to_string(n);
        out += "\n";
    }
    if (family(st.dataset, "persona_retrieval")) {
        char share[32] = "-";
        if (st.probes > 0)
            std::snprintf(share, sizeof share, "%.1f%%",
                          100.0 * static_cast<double>(st.misleading) / static_cast<double>(st.probes));
        out += "  misleading       " + std::to_string(st.misleading) + " of " + std::to_string(st.probes) + " (" +
               share + ")\n";
    }
    return out;
}

}  // namespace memfail::suites::memfail_suite
