// SPDX-License-Identifier: MIT
// Run comparison: matched cells, paired (exact McNemar) or unpaired (two-proportion z, Fisher) tests,
// mirror rows kept out of the family, Holm-Bonferroni, and the summary.
#include <memfail/report/compare.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

namespace memfail::report {

namespace {

using CellKey = std::pair<std::string, int>;  // dataset, k

// What one side holds: its summary rows by dataset and k, and each dataset's hashes.
struct Side {
    CompareSideInfo info;
    std::map<CellKey, store::SummaryRow> rows;
    std::map<CellKey, std::int64_t> owner;  // the run holding each dataset x k
    std::vector<std::string> dataset_order;
    std::map<std::string, std::set<std::string>> hashes;
};

std::string join_runs(const std::vector<std::int64_t>& runs) {
    std::string out;
    for (std::size_t i = 0; i < runs.size(); ++i) out += (i ? ", " : "") + std::to_string(runs[i]);
    return out;
}

Result<Side> load_side(store::ResultsDb& db, const std::vector<std::int64_t>& runs, const std::string& name,
                       std::vector<std::string>& warnings) {
    if (runs.empty()) return make_error(ErrorKind::invalid_input, "side " + name + " names no run", db.database().path());
    Side side;
    side.info.runs = runs;
    // system -> its runs; several systems on one side have no single answer to "how does B differ".
    std::map<std::string, std::vector<std::int64_t>> by_system, by_protocol;
    for (std::int64_t id : runs) {
        MF_TRY_ASSIGN(auto run, db.run(id));
        if (!run)
            return make_error(ErrorKind::not_found, "side " + name + ": no run " + std::to_string(id), db.database().path());
        by_system[run->system_spec].push_back(id);
        by_protocol[run->protocol()].push_back(id);
        if (run->status != "finished")
            warnings.push_back("run " + std::to_string(id) + " (side " + name + ") is " + run->status +
                               ", not finished: its counts may be partial");
        side.info.system = run->system_spec;
    }
    if (by_protocol.size() > 1) {
        std::string list;
        for (const auto& [protocol, ids] : by_protocol)
            list += (list.empty() ? "" : "; ") + protocol + " (run " + join_runs(ids) + ")";
        return make_error(ErrorKind::invalid_input,
                          "side " + name + " holds runs of different protocols: " + list + "; choose runs of one",
                          db.database().path());
    }
    side.info.protocol = by_protocol.begin()->first;
    if (by_system.size() > 1) {
        std::string list;
        for (const auto& [system, ids] : by_system)
            list += (list.empty() ? "" : "; ") + system + " (run " + join_runs(ids) + ")";
        return make_error(ErrorKind::invalid_input,
                          "side " + name + " holds runs of different systems: " + list +
                              "; choose one run for side " + name,
                          db.database().path());
    }
    std::map<CellKey, std::int64_t> owner;
    MF_TRY_ASSIGN(auto rows, db.summary(runs));
    for (auto& r : rows) {
        const CellKey key{r.dataset, r.k};
        if (auto it = owner.find(key); it != owner.end())
            return make_error(ErrorKind::invalid_input,
                              "side " + name + " holds dataset " + r.dataset + " at k=" + std::to_string(r.k) +
                                  " in both run " + std::to_string(it->second) + " and run " +
                                  std::to_string(r.run_id) + "; choose one run for side " + name,
                              db.database().path());
        owner[key] = r.run_id;
        side.owner[key] = r.run_id;
        side.info.end_to_end |= r.answered > 0;
        if (std::find(side.dataset_order.begin(), side.dataset_order.end(), r.dataset) == side.dataset_order.end())
            side.dataset_order.push_back(r.dataset);
        side.rows.emplace(key, std::move(r));
    }
    for (std::int64_t id : runs) {
        MF_TRY_ASSIGN(auto scenarios, db.scenarios(id));
        for (const auto& s : scenarios) side.hashes[s.dataset].insert(s.dataset_hash);
    }
    return side;
}

struct Counts {
    std::int64_t probes = 0;
    std::map<std::string, std::int64_t> outcomes;
};

// The probes a cell is measured over and the count of each outcome. End to end, every graded probe
// counts (abstaining correctly is a success); on the memory side only probes with evidence do.
Counts counts_of(const store::SummaryRow& r, bool end_to_end) {
    Counts c;
    const std::int64_t graded = r.graded - r.errors;
    c.probes = end_to_end ? graded : graded - r.abstain_graded;
    c.outcomes["success"] = end_to_end ? r.correct : r.success;
    c.outcomes["not_stored"] = r.not_stored;
    c.outcomes["summary_error"] = r.summary_error;
    c.outcomes["unverified"] = r.unverified;
    c.outcomes["not_retrieved"] = r.not_retrieved;
    if (end_to_end) c.outcomes["reasoning_error"] = r.reasoning_error;
    return c;
}

// Whether a probe counts toward a cell, as counts_of counts it: graded, not an error, and (on the
// memory side) not an abstain probe (it has no evidence to store or retrieve).
bool counted(const store::ProbeOutcomeRow& p, bool end_to_end) {
    if (p.stage == "needs_answer_stage" || p.stage == "ambiguous" || p.stage == "error") return false;
    if (!end_to_end && p.kind == "abstain" && (p.stage == "correct" || p.stage == "reasoning_error")) return false;
    return true;
}

// Whether a counted probe had `outcome`: success (a correct answer end to end, else the memory side
// passed) or ended at that failure stage.
bool holds(const store::ProbeOutcomeRow& p, const std::string& outcome, bool end_to_end) {
    if (outcome == "success") return end_to_end ? p.stage == "correct" : p.memory_success;
    return p.stage == outcome;
}

using ProbePair = std::pair<const store::ProbeOutcomeRow*, const store::ProbeOutcomeRow*>;  // A, B

// The probes of one dataset and k counted on both sides, matched by scenario and probe id; `unmatched`
// counts those counted on one side only.
std::vector<ProbePair> match_probes(const std::vector<store::ProbeOutcomeRow>& a,
                                    const std::vector<store::ProbeOutcomeRow>& b, const CellKey& key,
                                    bool end_to_end, std::int64_t& unmatched) {
    std::map<std::pair<std::string, std::string>, const store::ProbeOutcomeRow*> in_b;
    for (const auto& p : b)
        if (p.dataset == key.first && p.k == key.second && counted(p, end_to_end))
            in_b.emplace(std::make_pair(p.scenario_id, p.probe_id), &p);
    std::vector<ProbePair> out;
    unmatched = 0;
    for (const auto& p : a) {
        if (p.dataset != key.first || p.k != key.second || !counted(p, end_to_end)) continue;
        const auto it = in_b.find({p.scenario_id, p.probe_id});
        if (it == in_b.end()) { ++unmatched; continue; }
        out.emplace_back(&p, it->second);
        in_b.erase(it);
    }
    unmatched += static_cast<std::int64_t>(in_b.size());
    return out;
}

std::vector<std::string> outcome_names(bool end_to_end) {
    std::vector<std::string> out = {"success", "not_stored", "summary_error", "unverified", "not_retrieved"};
    if (end_to_end) out.push_back("reasoning_error");
    return out;
}

std::string hash_list(const std::set<std::string>& hashes) {
    std::string out;
    for (const auto& h : hashes) {
        if (!out.empty()) out += '+';
        out.append(h, 0, 12);
    }
    return out;
}

std::string format(const char* pattern, double value) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, pattern, value);
    return buffer;
}

std::string p_text(const std::optional<double>& p) {
    if (!p) return "-";
    if (*p < 1e-4) return "<0.0001";
    return format("%.4f", *p);
}

double log_choose(std::int64_t n, std::int64_t k) {
    return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
           std::lgamma(static_cast<double>(n - k) + 1);
}

std::string side_label(const char* name, const CompareSideInfo& side) {
    return std::string(name) + " (" + side.system + ", run" + (side.runs.size() > 1 ? "s " : " ") +
           join_runs(side.runs) + ")";
}

// "long_hop k=5 (success -10.9 points, not_retrieved +10.9 points)" for the cells of one verdict,
// grouped by dataset and k in table order.
std::vector<std::string> grouped_phrases(const std::vector<CompareCell>& cells, int verdict) {
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const auto& c : cells) {
        if (c.verdict() != verdict) continue;
        const std::string key = c.dataset + " k=" + std::to_string(c.k);
        if (groups.empty() || groups.back().first != key) groups.push_back({key, {}});
        groups.back().second.push_back(c.outcome + " " + format("%+.1f", c.diff_points) + " points");
    }
    std::vector<std::string> out;
    for (const auto& [key, items] : groups) {
        std::string inner;
        for (const auto& item : items) inner += (inner.empty() ? "" : ", ") + item;
        out.push_back(key + " (" + inner + ")");
    }
    return out;
}

std::string join_phrases(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += i + 1 == items.size() ? (items.size() > 2 ? ", and " : " and ") : ", ";
        out += items[i];
    }
    return out;
}

}  // namespace

const char* compare_test_name(CompareTest test) {
    switch (test) {
        case CompareTest::mcnemar: return "mcnemar";
        case CompareTest::z_test: return "z";
        case CompareTest::fisher: return "fisher";
        case CompareTest::too_few: return "too few";
        case CompareTest::constant: return "none";
        case CompareTest::mirror: return "mirror";
    }
    return "?";
}

int CompareCell::verdict() const {
    if (!significant) return 0;
    const bool higher = b_rate > a_rate;
    return higher == higher_is_better ? 1 : -1;
}

std::size_t Comparison::tested() const {
    return static_cast<std::size_t>(std::count_if(cells.begin(), cells.end(), [](const CompareCell& c) {
        return c.p_value.has_value();
    }));
}

std::size_t Comparison::too_few() const {
    return static_cast<std::size_t>(std::count_if(cells.begin(), cells.end(), [](const CompareCell& c) {
        return c.test == CompareTest::too_few;
    }));
}

double two_proportion_z(std::int64_t x1, std::int64_t n1, std::int64_t x2, std::int64_t n2) {
    if (n1 <= 0 || n2 <= 0) return 0;
    const double a = static_cast<double>(n1), b = static_cast<double>(n2);
    const double pooled = static_cast<double>(x1 + x2) / (a + b);
    const double variance = pooled * (1 - pooled) * (1 / a + 1 / b);
    if (variance <= 0) return 0;
    return (static_cast<double>(x2) / b - static_cast<double>(x1) / a) / std::sqrt(variance);
}

double two_proportion_p(std::int64_t x1, std::int64_t n1, std::int64_t x2, std::int64_t n2) {
    const double z = two_proportion_z(x1, n1, x2, n2);
    return std::min(1.0, std::erfc(std::fabs(z) / std::sqrt(2.0)));
}

double fisher_exact_p(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    MF_ASSERT(a >= 0 && b >= 0 && c >= 0 && d >= 0, "a 2x2 table holds counts");
    const std::int64_t row1 = a + b, row2 = c + d, col1 = a + c, n = row1 + row2;
    if (n == 0) return 1.0;
    // With the margins fixed the table is determined by its top-left cell, hypergeometric.
    auto log_prob = [&](std::int64_t x) { return log_choose(row1, x) + log_choose(row2, col1 - x) - log_choose(n, col1); };
    const double observed = log_prob(a);
    const std::int64_t low = std::max<std::int64_t>(0, col1 - row2), high = std::min(row1, col1);
    double p = 0;
    for (std::int64_t x = low; x <= high; ++x) {
        const double lp = log_prob(x);
        // Relative tolerance: tables as likely as the observed one must count despite rounding.
        if (lp <= observed + 1e-7) p += std::exp(lp);
    }
    return std::min(1.0, p);
}

bool needs_exact_test(std::int64_t x1, std::int64_t n1, std::int64_t x2, std::int64_t n2) {
    const double n = static_cast<double>(n1 + n2);
    if (n <= 0) return true;
    const double yes = static_cast<double>(x1 + x2), no = n - yes;
    for (double side : {static_cast<double>(n1), static_cast<double>(n2)})
        for (double column : {yes, no})
            if (side * column / n < 5.0) return true;
    return false;
}

double mcnemar_exact_p(std::int64_t a_only, std::int64_t b_only) {
    MF_ASSERT(a_only >= 0 && b_only >= 0, "discordant pairs are counts");
    const std::int64_t n = a_only + b_only, low = std::min(a_only, b_only);
    if (n == 0) return 1.0;
    // P(X <= low) for X ~ Binomial(n, 1/2): C(n, i) / 2^n summed, each term from the last by
    // C(n, i + 1) = C(n, i) (n - i) / (i + 1). Up to n = 1000, 2^-n is an exact normal double; beyond,
    // the terms are summed in logarithms scaled by the largest (the last: low <= n / 2).
    double tail = 0;
    if (n <= 1000) {
        double term = std::ldexp(1.0, -static_cast<int>(n));
        for (std::int64_t i = 0; i <= low; ++i) {
            tail += term;
            term = term * static_cast<double>(n - i) / static_cast<double>(i + 1);
        }
    } else {
        std::vector<double> logs;
        double log_term = -static_cast<double>(n) * std::log(2.0);
        for (std::int64_t i = 0; i <= low; ++i) {
            logs.push_back(log_term);
            log_term += std::log(static_cast<double>(n - i)) - std::log(static_cast<double>(i + 1));
        }
        const double top = logs.back();
        double scaled = 0;
        for (double l : logs) scaled += std::exp(l - top);
        tail = std::exp(top) * scaled;
    }
    return std::min(1.0, 2 * tail);
}

std::vector<double> holm_adjust(const std::vector<double>& p_values) {
    const std::size_t m = p_values.size();
    std::vector<std::size_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return p_values[x] < p_values[y]; });
    std::vector<double> adjusted(m);
    double running = 0;
    for (std::size_t rank = 0; rank < m; ++rank) {
        const double scaled = std::min(1.0, static_cast<double>(m - rank) * p_values[order[rank]]);
        running = std::max(running, scaled);  // step-down: never below an earlier (smaller) p
        adjusted[order[rank]] = running;
    }
    return adjusted;
}

Result<Comparison> compare_runs(store::ResultsDb& a, const std::vector<std::int64_t>& runs_a,
                                store::ResultsDb& b, const std::vector<std::int64_t>& runs_b,
                                const CompareOptions& options) {
    if (!(options.alpha > 0 && options.alpha < 1))
        return make_error(ErrorKind::invalid_input, "alpha must be between 0 and 1 (exclusive)");
    if (options.min_probes < 1) return make_error(ErrorKind::invalid_input, "min-probes must be at least 1");
    Comparison out;
    out.options = options;
    MF_TRY_ASSIGN(Side side_a, load_side(a, runs_a, "A", out.warnings));
    MF_TRY_ASSIGN(Side side_b, load_side(b, runs_b, "B", out.warnings));
    out.a = side_a.info;
    out.b = side_b.info;
    if (side_a.info.protocol != side_b.info.protocol) {
        const std::string why = "side A follows the " + side_a.info.protocol + " protocol and side B the " +
                                side_b.info.protocol + " protocol: their stages are graded by different rules, so a "
                                "difference mixes the systems with the grading";
        if (!options.force)
            return make_error(ErrorKind::invalid_input, why + "; compare runs of one protocol, or pass --force");
        out.warnings.push_back(why + " (compared anyway: --force)");
    }
    out.end_to_end = side_a.info.end_to_end && side_b.info.end_to_end;
    if (side_a.info.end_to_end != side_b.info.end_to_end)
        out.warnings.push_back(std::string("answers were graded on side ") + (side_a.info.end_to_end ? "A" : "B") +
                               " only, so both sides are compared on the memory side (stored, faithful and "
                               "retrieved)");

    // Datasets in A's order, then those only B holds.
    std::vector<std::string> datasets = side_a.dataset_order;
    for (const auto& d : side_b.dataset_order)
        if (std::find(datasets.begin(), datasets.end(), d) == datasets.end()) datasets.push_back(d);
    std::set<std::string> compared_datasets;
    // Each run's probe outcomes, read once when some cell of it is paired.
    std::map<std::pair<int, std::int64_t>, std::vector<store::ProbeOutcomeRow>> probe_cache;
    auto probes_of = [&](int side, store::ResultsDb& db,
                         std::int64_t run) -> Result<const std::vector<store::ProbeOutcomeRow>*> {
        const auto cache_key = std::make_pair(side, run);
        auto it = probe_cache.find(cache_key);
        if (it == probe_cache.end()) {
            MF_TRY_ASSIGN(auto rows, store::probe_outcomes(db, run));
            it = probe_cache.emplace(cache_key, std::move(rows)).first;
        }
        return &it->second;
    };
    for (const auto& dataset : datasets) {
        std::set<int> ks;
        for (const auto* side : {&side_a, &side_b})
            for (const auto& [key, row] : side->rows)
                if (key.first == dataset) ks.insert(key.second);
        for (int k : ks) {
            const CellKey key{dataset, k};
            const auto ia = side_a.rows.find(key), ib = side_b.rows.find(key);
            const std::string name = dataset + " k=" + std::to_string(k);
            if (ib == side_b.rows.end()) { out.only_in_a.push_back(name); continue; }
            if (ia == side_a.rows.end()) { out.only_in_b.push_back(name); continue; }
            compared_datasets.insert(dataset);
            const bool e2e = out.end_to_end;
            // Same dataset content on both sides: the same probes were asked, so pair them.
            std::vector<ProbePair> pairs;
            const auto& ha = side_a.hashes[dataset];
            const auto& hb = side_b.hashes[dataset];
            if (!ha.empty() && ha == hb) {
                MF_TRY_ASSIGN(const auto* pa, probes_of(0, a, side_a.owner.at(key)));
                MF_TRY_ASSIGN(const auto* pb, probes_of(1, b, side_b.owner.at(key)));
                std::int64_t unmatched = 0;
                pairs = match_probes(*pa, *pb, key, e2e, unmatched);
                if (pairs.empty())
                    out.warnings.push_back(name + ": no probe graded on one side was graded on the other, so the "
                                           "sides are compared as independent samples");
                else if (unmatched > 0)
                    out.warnings.push_back(name + ": " + std::to_string(unmatched) + " probe" +
                                           (unmatched == 1 ? "" : "s") + " graded on one side only (an error or an "
                                           "unfinished run on the other) left out of the paired comparison");
            }
            const bool paired = !pairs.empty();
            out.paired |= paired;
            const Counts ca = counts_of(ia->second, e2e), cb = counts_of(ib->second, e2e);
            std::vector<CompareCell> group;  // success first, then the stages
            for (const auto& outcome : outcome_names(e2e)) {
                CompareCell c;
                c.dataset = dataset;
                c.k = k;
                c.outcome = outcome;
                c.higher_is_better = outcome == "success";
                c.paired = paired;
                if (paired) {
                    c.a_probes = c.b_probes = static_cast<std::int64_t>(pairs.size());
                    for (const auto& [pa, pb] : pairs) {
                        const bool in_a = holds(*pa, outcome, e2e), in_b = holds(*pb, outcome, e2e);
                        c.a_count += in_a;
                        c.b_count += in_b;
                        c.a_only += in_a && !in_b;
                        c.b_only += in_b && !in_a;
                    }
                } else {
                    c.a_count = ca.outcomes.at(outcome);
                    c.a_probes = ca.probes;
                    c.b_count = cb.outcomes.at(outcome);
                    c.b_probes = cb.probes;
                }
                c.a_rate = c.a_probes > 0 ? static_cast<double>(c.a_count) / static_cast<double>(c.a_probes) : 0.0;
                c.b_rate = c.b_probes > 0 ? static_cast<double>(c.b_count) / static_cast<double>(c.b_probes) : 0.0;
                c.diff_points = 100.0 * (c.b_rate - c.a_rate);
                group.push_back(std::move(c));
            }
            const CompareCell& success = group.front();
            // A stage mirrors success when, on both sides, the probes that failed at it are exactly the
            // probes that did not succeed (and some probe did not succeed): paired, probe by probe;
            // unpaired, by counts (a probe that failed at a stage never succeeded, so equal counts mean
            // the same probes).
            auto mirrors_success = [&](const CompareCell& c) {
                if (c.outcome == "success") return false;
                if (success.a_count == success.a_probes && success.b_count == success.b_probes) return false;
                if (!paired)
                    return c.a_count == success.a_probes - success.a_count &&
                           c.b_count == success.b_probes - success.b_count;
                return std::all_of(pairs.begin(), pairs.end(), [&](const ProbePair& pair) {
                    return holds(*pair.first, c.outcome, e2e) != holds(*pair.first, "success", e2e) &&
                           holds(*pair.second, c.outcome, e2e) != holds(*pair.second, "success", e2e);
                });
            };
            std::vector<bool> mirror(group.size());
            for (std::size_t i = 0; i < group.size(); ++i) mirror[i] = mirrors_success(group[i]);
            for (std::size_t i = 0; i < group.size(); ++i) {
                CompareCell& c = group[i];
                if (c.a_probes < options.min_probes || c.b_probes < options.min_probes) {
                    c.test = CompareTest::too_few;
                } else if (mirror[i]) {
                    c.test = CompareTest::mirror;  // the success row read backwards: tested there, once
                } else if (paired) {
                    if (c.a_only + c.b_only == 0) {
                        c.test = CompareTest::constant;  // the same outcome on every probe on both sides
                    } else {
                        c.test = CompareTest::mcnemar;
                        c.p_value = mcnemar_exact_p(c.a_only, c.b_only);
                    }
                } else if ((c.a_count == 0 && c.b_count == 0) ||
                           (c.a_count == c.a_probes && c.b_count == c.b_probes)) {
                    c.test = CompareTest::constant;
                } else if (needs_exact_test(c.a_count, c.a_probes, c.b_count, c.b_probes)) {
                    c.test = CompareTest::fisher;
                    c.p_value = fisher_exact_p(c.a_count, c.a_probes - c.a_count, c.b_count, c.b_probes - c.b_count);
                } else {
                    c.test = CompareTest::z_test;
                    c.p_value = two_proportion_p(c.a_count, c.a_probes, c.b_count, c.b_probes);
                }
            }
            for (auto& c : group) out.cells.push_back(std::move(c));
        }
    }

    // One family: every tested cell, whatever its dataset, k or outcome.
    std::vector<double> p_values;
    for (const auto& c : out.cells)
        if (c.p_value) p_values.push_back(*c.p_value);
    const std::vector<double> adjusted = holm_adjust(p_values);
    std::size_t next = 0;
    for (auto& c : out.cells) {
        if (!c.p_value) continue;
        c.holm_p = adjusted[next++];
        c.significant = *c.holm_p < options.alpha;
    }

    for (const auto& dataset : compared_datasets) {
        const auto& ha = side_a.hashes[dataset];
        const auto& hb = side_b.hashes[dataset];
        if (ha == hb) continue;
        out.same_datasets = false;
        out.warnings.push_back("dataset " + dataset + " differs between the sides (A " + hash_list(ha) + ", B " +
                               hash_list(hb) + "): they were not asked the same probes, so a difference mixes "
                               "the systems with the data");
    }
    if (out.cells.empty())
        out.warnings.push_back("the sides share no dataset and k: there is nothing to compare");
    return out;
}

Table comparison_table(const Comparison& cmp) {
    Table t;
    t.title = std::string("B against A, ") + (cmp.end_to_end ? "end-to-end" : "memory-side") + " outcomes: " +
              side_label("A", cmp.a) + " vs " + side_label("B", cmp.b);
    t.columns = {{"dataset", Align::left}, {"k", Align::right},     {"outcome", Align::left},
                 {"A", Align::right},      {"A %", Align::right},   {"B", Align::right},
                 {"B %", Align::right},    {"B-A pts", Align::right}, {"A only/B only", Align::right},
                 {"test", Align::left},    {"p", Align::right},       {"Holm p", Align::right},
                 {"verdict", Align::left}};
    std::size_t left_out = 0;
    bool any_constant = false, any_mirror = false, any_paired = false, any_unpaired = false;
    for (const auto& c : cmp.cells) {
        // A stage nobody reached on either side says nothing; success rows always stay.
        if (c.outcome != "success" && c.a_count == 0 && c.b_count == 0) {
            ++left_out;
            continue;
        }
        std::string verdict = c.test == CompareTest::too_few ? "too few"
                              : c.test == CompareTest::mirror ? "mirrors success"
                                                              : "-";
        if (c.verdict() > 0) verdict = "B better";
        if (c.verdict() < 0) verdict = "B worse";
        any_constant |= c.test == CompareTest::constant;
        any_mirror |= c.test == CompareTest::mirror;
        any_paired |= c.paired;
        any_unpaired |= !c.paired;
        t.rows.push_back({c.dataset, std::to_string(c.k), c.outcome,
                          std::to_string(c.a_count) + "/" + std::to_string(c.a_probes), format("%.1f", 100 * c.a_rate),
                          std::to_string(c.b_count) + "/" + std::to_string(c.b_probes), format("%.1f", 100 * c.b_rate),
                          format("%+.1f", c.diff_points),
                          c.paired ? std::to_string(c.a_only) + "/" + std::to_string(c.b_only) : "-",
                          compare_test_name(c.test), p_text(c.p_value), p_text(c.holm_p), verdict});
    }
    t.notes.push_back(std::string("success: ") +
                      (cmp.end_to_end ? "a correct answer, over every graded probe"
                                      : "every evidence fact stored, faithful and retrieved, over probes with evidence") +
                      "; a stage row is the share of those probes that failed at that stage (lower is better).");
    if (any_paired)
        t.notes.push_back("mcnemar: both sides graded the same probes (same dataset hash), so they are paired and "
                          "the counts are over the probes graded on both; A only/B only are the probes where only A "
                          "or only B had the outcome, and p is the exact McNemar test (two-sided binomial test of "
                          "those discordant probes against an even split).");
    if (any_unpaired)
        t.notes.push_back(std::string(any_paired ? "z, fisher: the sides graded different probes (the dataset hashes "
                                                   "differ), so they are compared as independent samples: "
                                                 : "test: ") +
                          "pooled two-proportion z-test, or Fisher's exact test when an expected count is below 5; "
                          "p is two-sided.");
    t.notes.push_back("Holm p: adjusted with Holm-Bonferroni over all " + std::to_string(cmp.tested()) +
                      " tested rows; a verdict needs Holm p < " + format("%g", cmp.options.alpha) + ".");
    if (any_mirror)
        t.notes.push_back("mirror: every probe that did not succeed failed at this stage, on both sides, so the row "
                          "is the success row read backwards; shown, but tested once, as success, and not counted "
                          "in Holm's family.");
    if (left_out > 0)
        t.notes.push_back("Left out: " + std::to_string(left_out) + " stage row" + (left_out == 1 ? "" : "s") +
                          " that no probe reached on either side.");
    if (any_constant)
        t.notes.push_back(!any_paired     ? "none: 0% or 100% on both sides, nothing to test."
                          : !any_unpaired ? "none: no probe differs between the sides, nothing to test."
                                          : "none: nothing to test (paired: no probe differs between the sides; "
                                            "independent: 0% or 100% on both sides).");
    if (cmp.too_few() > 0)
        t.notes.push_back("too few: fewer than " + std::to_string(cmp.options.min_probes) +
                          " probes on a side; shown, never tested or flagged.");
    if (!cmp.only_in_a.empty()) t.notes.push_back("only in A (not compared): " + join_phrases(cmp.only_in_a) + ".");
    if (!cmp.only_in_b.empty()) t.notes.push_back("only in B (not compared): " + join_phrases(cmp.only_in_b) + ".");
    return t;
}

std::string comparison_summary(const Comparison& cmp) {
    const auto better = grouped_phrases(cmp.cells, 1), worse = grouped_phrases(cmp.cells, -1);
    std::size_t flagged = 0;
    for (const auto& c : cmp.cells) flagged += c.significant;
    std::string out = side_label("B", cmp.b) + " against " + side_label("A", cmp.a) + ", " +
                      (cmp.end_to_end ? "end to end" : "memory side only") + ", " + std::to_string(cmp.tested()) +
                      " cell" + (cmp.tested() == 1 ? "" : "s") + " tested at alpha " + format("%g", cmp.options.alpha) +
                      " after Holm-Bonferroni: ";
    if (cmp.tested() == 0 && cmp.too_few() == cmp.cells.size() && !cmp.cells.empty()) {
        out += "no cell had the " + std::to_string(cmp.options.min_probes) +
               " probes per side a test needs, so no difference is supported.";
    } else if (cmp.tested() == 0) {
        out += "no cell could be tested, so no difference is supported.";
    } else if (flagged == 0) {
        out += "no difference is supported by the sample sizes.";
    } else {
        std::vector<std::string> parts;
        if (!better.empty()) parts.push_back("B is better on " + join_phrases(better));
        if (!worse.empty())
            parts.push_back(std::string(better.empty() ? "B is worse on " : "worse on ") + join_phrases(worse));
        out += parts.size() == 2 ? parts[0] + "; " + parts[1] : parts[0];
        out += flagged < cmp.tested() ? "; no supported difference elsewhere." : ".";
    }
    std::vector<std::string> small;  // dataset x k pairs with too few probes, once each
    for (const auto& c : cmp.cells) {
        const std::string key = c.dataset + " k=" + std::to_string(c.k);
        if (c.test == CompareTest::too_few && std::find(small.begin(), small.end(), key) == small.end())
            small.push_back(key);
    }
    if (!small.empty())
        out += " " + join_phrases(small) + (small.size() == 1 ? " has" : " have") + " fewer than " +
               std::to_string(cmp.options.min_probes) + " probes on a side and " + (small.size() == 1 ? "was" : "were") +
               " not tested.";
    if (!cmp.same_datasets) out += " The datasets differ between the sides (see the warnings).";
    return out;
}

std::string comparison_json(const Comparison& cmp) {
    using json = nlohmann::ordered_json;  // keys in the documented order
    auto side = [](const CompareSideInfo& s) {
        return json{{"runs", s.runs}, {"system", s.system}, {"end_to_end", s.end_to_end}};
    };
    json cells = json::array();
    for (const auto& c : cmp.cells) {
        const char* verdict = c.test == CompareTest::too_few  ? "too_few"
                              : c.test == CompareTest::mirror ? "mirror"
                              : c.verdict() > 0               ? "better"
                              : c.verdict() < 0               ? "worse"
                                                              : "none";
        cells.push_back({{"dataset", c.dataset},
                         {"k", c.k},
                         {"outcome", c.outcome},
                         {"higher_is_better", c.higher_is_better},
                         {"a", {{"count", c.a_count}, {"probes", c.a_probes}, {"rate", c.a_rate}}},
                         {"b", {{"count", c.b_count}, {"probes", c.b_probes}, {"rate", c.b_rate}}},
                         {"diff_points", c.diff_points},
                         {"paired", c.paired},
                         {"discordant", c.paired ? json{{"a_only", c.a_only}, {"b_only", c.b_only}} : json(nullptr)},
                         {"test", c.test == CompareTest::too_few ? "too_few" : compare_test_name(c.test)},
                         {"p_value", c.p_value ? json(*c.p_value) : json(nullptr)},
                         {"holm_p", c.holm_p ? json(*c.holm_p) : json(nullptr)},
                         {"significant", c.significant},
                         {"verdict", verdict}});
    }
    const json doc = {{"memfail_compare", 1},
                      {"alpha", cmp.options.alpha},
                      {"min_probes", cmp.options.min_probes},
                      {"measure", cmp.end_to_end ? "end_to_end" : "memory"},
                      {"a", side(cmp.a)},
                      {"b", side(cmp.b)},
                      {"same_datasets", cmp.same_datasets},
                      {"paired", cmp.paired},
                      {"warnings", cmp.warnings},
                      {"summary", comparison_summary(cmp)},
                      {"only_in_a", cmp.only_in_a},
                      {"only_in_b", cmp.only_in_b},
                      {"cells", cells}};
    return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace memfail::report
