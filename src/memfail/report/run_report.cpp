// SPDX-License-Identifier: MIT
// Diagnostic tables.
#include <memfail/core/hash.hpp>
#include <memfail/store/leaky_sql.hpp>
#include <memfail/core/text.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/report/leaky.hpp>
#include <memfail/report/sources.hpp>
#include <memfail/figures/stats.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

namespace memfail::report {

Result<std::vector<std::int64_t>> select_runs(store::ResultsDb& db, const std::vector<std::int64_t>& requested) {
    std::vector<std::int64_t> out;
    if (!requested.empty()) {
        for (std::int64_t id : requested) {
            MF_TRY_ASSIGN(auto run, db.run(id));
            if (!run) return make_error(ErrorKind::not_found, "no run " + std::to_string(id), db.database().path());
            out.push_back(id);
        }
        return out;
    }
    MF_TRY_ASSIGN(auto runs, db.runs());
    for (const auto& r : runs)
        if (r.status == "finished") out.push_back(r.id);
    if (out.empty())
        return make_error(ErrorKind::not_found,
                          runs.empty() ? "the results file holds no run"
                                       : "the results file holds no finished run (name one with --run to see a partial one)",
                          db.database().path());
    return out;
}

Result<Table> success_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, TableStyle style) {
    MF_TRY_ASSIGN(auto rows, db.summary(run_ids));
    MF_TRY_ASSIGN(auto origins, run_origins(db));
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    const bool machine = style == TableStyle::machine;
    bool end_to_end = false, any_ambiguous = false;
    for (const auto& r : rows) {
        end_to_end |= r.answered > 0;
        any_ambiguous |= r.ambiguous > 0;
    }
    Table t;
    t.title = end_to_end ? "End-to-end success (the full taxonomy: memory stages, then the answer)"
                         : "Memory-side success (stored, faithful and retrieved; the answer stage is not graded)";
    if (machine && !origins.empty()) t.columns.push_back({"file", Align::left});
    t.columns.insert(t.columns.end(), {{"run", Align::right}, {"system", Align::left}, {"dataset", Align::left},
                                       {"k", Align::right}, {"probes", Align::right},
                                       {end_to_end ? "correct" : "success", Align::right}});
    add_rate_columns(t, machine);
    // Beside every rate, the share of its probes the graders decided: a high rate over a low decided
    // share is mostly waiting for a judge.
    t.columns.push_back({machine ? "decided" : "decided %", Align::right});
    t.columns.insert(t.columns.end(), {{"not_stored", Align::right}, {"summary_error", Align::right},
                                       {"unverified", Align::right}, {"not_retrieved", Align::right}});
    if (end_to_end)
        t.columns.insert(t.columns.end(), {{"reasoning_error", Align::right}, {"errors", Align::right},
                                           {machine ? "memory_ok" : "memory ok %", Align::right}});
    else
        t.columns.insert(t.columns.end(), {{"errors", Align::right}, {machine ? "abstain" : "abstain*", Align::right}});
    // Only where a dataset has them (the paper's Persona release reuses names).
    if (any_ambiguous) t.columns.push_back({machine ? "ambiguous" : "ambiguous**", Align::right});
    t.columns.push_back({machine ? "tokens_per_probe" : "tok/probe", Align::right});
    bool any_abstain = false, any_error = false, any_unverified = false;
    for (const auto& r : rows) {
        const std::int64_t graded = r.graded - r.errors;
        const std::int64_t success = end_to_end ? r.correct : r.success;
        const Interval ci = wilson_interval(success, graded);
        const double rate = graded > 0 ? static_cast<double>(success) / static_cast<double>(graded) : 0.0;
        std::vector<std::string> row;
        const auto origin = origins.find(r.run_id);
        if (machine && origin != origins.end()) row = {origin->second.file, std::to_string(origin->second.id)};
        else row = {names.count(r.run_id) ? names[r.run_id] : std::to_string(r.run_id)};
        row.insert(row.end(), {r.system_spec, r.dataset, std::to_string(r.k), std::to_string(graded), std::to_string(success)});
        if (machine) row.insert(row.end(), {fraction(rate), fraction(ci.low), fraction(ci.high)});
        else row.insert(row.end(), {percent(rate), "[" + percent(ci.low) + ", " + percent(ci.high) + "]"});
        const std::int64_t decided = std::max<std::int64_t>(graded - r.unverified, 0);
        const double decided_share = graded > 0 ? static_cast<double>(decided) / static_cast<double>(graded) : 0.0;
        row.push_back(machine ? fraction(decided_share) : percent(decided_share));
        row.insert(row.end(), {std::to_string(r.not_stored), std::to_string(r.summary_error),
                               std::to_string(r.unverified), std::to_string(r.not_retrieved)});
        if (end_to_end) {
            // Memory ok: probes with evidence whose memory side passed, over probes with evidence.
            const std::int64_t with_evidence = graded - r.abstain_graded;
            MF_ASSERT(r.success <= std::max<std::int64_t>(with_evidence, 0), "memory-side successes exceed their probes");
            const double memory_ok = with_evidence > 0 ? static_cast<double>(r.success) / static_cast<double>(with_evidence) : 0.0;
            row.push_back(std::to_string(r.reasoning_error));
            row.push_back(std::to_string(r.errors));
            row.push_back(machine ? fraction(memory_ok) : percent(memory_ok));
        } else {
            row.push_back(std::to_string(r.errors));
            row.push_back(std::to_string(r.needs_answer_stage));
        }
        if (any_ambiguous) row.push_back(std::to_string(r.ambiguous));
        char tokens[32] = "-";
        if (machine) tokens[0] = '\0';
        if (r.retrieved_tokens) std::snprintf(tokens, sizeof tokens, "%.0f", *r.retrieved_tokens);
        row.push_back(tokens);
        t.rows.push_back(std::move(row));
        any_abstain |= r.needs_answer_stage > 0;
        any_error |= r.errors > 0;
        any_unverified |= r.unverified > 0;
    }
    // A run that could not see its system says so above everything else.
    std::set<std::int64_t> seen_runs;
    for (const auto& r : rows) {
        if (!seen_runs.insert(r.run_id).second) continue;
        // The `none` baseline stores nothing by design.
        if (store::is_no_memory_spec(r.system_spec)) continue;
        MF_TRY_ASSIGN(const auto seen, db.run_visibility(r.run_id));
        const std::string who = "run " + (names.count(r.run_id) ? names[r.run_id] : std::to_string(r.run_id)) +
                                " (" + r.system_spec + ")";
        if (seen.stored_nothing())
            t.banners.push_back(who + " STORED NOTHING: every checkpoint recorded an empty store, so its not_stored "
                                "counts are the system's silence, not memory failures (check the system or adapter).");
        else if (seen.served_nothing())
            t.banners.push_back(who + " SERVED NOTHING: no probe at any k was given a memory, so its not_retrieved "
                                "and not_stored counts say nothing of what it holds (check retrieval).");
    }
    t.notes.push_back("decided: the share of the rate's probes the graders decided; the rest are unverified "
                      "(a judge decides them; never success).");
    if (!end_to_end && any_abstain)
        t.notes.push_back(
            "* abstain: probes that must be abstained on (misleading questions) have no evidence to find; "
            "they need the answer stage and are not in the success rate.");
    // Imported facts whose details could not all be derived: short of a verbatim copy their summary
    // is for the judge, which the reader must know when reading summary_error and unverified.
    std::string incomplete;
    std::set<std::string> named;
    for (const auto& r : rows)
        if (r.incomplete > 0 && named.insert(r.dataset).second)
            incomplete += (incomplete.empty() ? "" : ", ") + r.dataset + " " + std::to_string(r.incomplete);
    if (!incomplete.empty())
        t.notes.push_back("incomplete details: probes carrying a fact whose key details the importer could not all "
                          "derive (" + incomplete + "); short of a verbatim copy their summary stage is unverified "
                          "(needs a judge), never success.");
    if (any_ambiguous)
        t.notes.push_back("** ambiguous: misleading questions that name a person whose essay IS stored (the named "
                          "person is stored, so abstaining is not the only defensible answer); reported apart, "
                          "in no rate.");
    if (any_unverified)
        t.notes.push_back(std::string(k_unverified_note));
    if (any_error)
        t.notes.push_back("errors: probes whose retrieval, answer or judge call failed; excluded from the rate "
                          "(the message is in probe_results.error of the results file).");
    if (end_to_end)
        t.notes.push_back("Rate = correct / probes (abstain probes included: abstaining is their correct answer); "
                          "memory ok = probes with evidence whose every fact was stored, faithful and retrieved "
                          "(unverified probes count as not ok). CI = 95% Wilson score interval.");
    else
        t.notes.push_back(std::string("reasoning: not graded (needs an LLM). ") + k_memory_rate_definition +
                          " CI = 95% Wilson score interval.");
    t.notes.push_back("tok/probe: mean tokens of the k memories retrieved per probe (cl100k_base), the cost side of "
                      "the MemFail paper's token/accuracy trade-off.");
    if (db.excludes_answerable_without_memory()) {
        MF_TRY_ASSIGN(auto leaky, leaky_datasets(db));
        std::string left_out;
        for (const auto& d : leaky)
            left_out += (left_out.empty() ? "" : ", ") + d.dataset + " " + std::to_string(d.leaky);
        t.notes.push_back("--exclude-leaky: probes a `none` run answered right without memory are left out of every "
                          "count and rate above (" + (left_out.empty() ? std::string("none") : left_out) + ").");
    }
    return t;
}

Result<Table> llm_usage_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    Table t;
    t.title = "LLM calls";
    t.columns = {{"run", Align::right},      {"role", Align::left},       {"calls", Align::right},
                 {"cache hits", Align::right}, {"misses", Align::right},  {"prompt tok", Align::right},
                 {"completion tok", Align::right}, {"errors", Align::right}, {"retries", Align::right},
                 {"p50 ms", Align::right},   {"p95 ms", Align::right}};
    bool local = false;
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto usage, db.llm_usage(id));
        for (const auto& u : usage) {
            char p50[32], p95[32];
            std::snprintf(p50, sizeof p50, "%.0f", u.p50_ms);
            std::snprintf(p95, sizeof p95, "%.0f", u.p95_ms);
            t.rows.push_back({names[id], u.role, std::to_string(u.calls), std::to_string(u.cache_hits),
                              std::to_string(u.calls - u.cache_hits - u.errors), std::to_string(u.prompt_tokens),
                              std::to_string(u.completion_tokens), std::to_string(u.errors),
                              std::to_string(u.retries), p50, p95});
            local |= u.counted_locally > 0;
        }
    }
    t.notes.push_back("Tokens as reported by the server for every call, cached or not (a cache hit costs nothing now "
                      "but was paid for once); latency is over network calls only.");
    if (local) t.notes.push_back("Some servers sent no usage: those calls were counted with the local tokenizer.");
    return t;
}

Result<std::map<std::string, ModelPrice>> parse_prices(const std::vector<std::string>& specs) {
    std::map<std::string, ModelPrice> out;
    for (const auto& spec : specs) {
        const auto eq = spec.rfind('=');
        const auto slash = eq == std::string::npos ? std::string::npos : spec.find('/', eq);
        auto bad = [&](const std::string& why) {
            return make_error(ErrorKind::invalid_input, "bad price '" + spec + "': " + why +
                                  " (expected MODEL=INPUT/OUTPUT in US dollars per million tokens, e.g. "
                                  "gpt-4o-mini=0.15/0.60)",
                              "--price");
        };
        if (eq == std::string::npos || eq == 0 || slash == std::string::npos) return bad("missing '=' or '/'");
        auto number = [](const std::string& text) -> std::optional<double> {
            if (text.empty()) return std::nullopt;
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end != text.c_str() + text.size() || !(v >= 0) || v > 1e6) return std::nullopt;
            return v;
        };
        const auto input = number(spec.substr(eq + 1, slash - eq - 1));
        const auto output = number(spec.substr(slash + 1));
        if (!input || !output) return bad("prices must be non-negative numbers");
        out[spec.substr(0, eq)] = ModelPrice{*input, *output};
    }
    return out;
}

Result<Table> llm_cost_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                             const std::map<std::string, ModelPrice>& prices) {
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    Table t;
    t.title = "LLM cost (US dollars, from --price)";
    t.columns = {{"run", Align::right},        {"role", Align::left},          {"model", Align::left},
                 {"paid calls", Align::right}, {"paid prompt tok", Align::right}, {"paid completion tok", Align::right},
                 {"cost $", Align::right},     {"uncached cost $", Align::right}};
    std::set<std::string> unpriced;
    auto dollars = [](double v) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, v < 1 ? "%.4f" : "%.2f", v);
        return std::string(buffer);
    };
    double total = 0, total_uncached = 0;
    bool any_priced = false;
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto usage, db.llm_usage_by_model(id));
        for (const auto& u : usage) {
            const auto price = prices.find(u.model);
            std::string cost = "-", uncached = "-";
            if (price != prices.end()) {
                const auto at = [&](std::int64_t in, std::int64_t out) {
                    return (static_cast<double>(in) * price->second.input_per_million +
                            static_cast<double>(out) * price->second.output_per_million) / 1e6;
                };
                const double paid = at(u.paid_prompt_tokens, u.paid_completion_tokens);
                const double all = paid + at(u.cached_prompt_tokens, u.cached_completion_tokens);
                cost = dollars(paid);
                uncached = dollars(all);
                total += paid;
                total_uncached += all;
                any_priced = true;
            } else {
                unpriced.insert(u.model.empty() ? "(unnamed)" : u.model);
            }
            t.rows.push_back({names[id], u.role, u.model, std::to_string(u.calls - u.cache_hits),
                              std::to_string(u.paid_prompt_tokens), std::to_string(u.paid_completion_tokens), cost,
                              uncached});
        }
    }
    if (any_priced)
        t.notes.push_back("Total: $" + dollars(total) + " paid by these runs; $" + dollars(total_uncached) +
                          " for the same calls with an empty cache.");
    if (!unpriced.empty()) {
        std::string names;
        for (const auto& m : unpriced) names += (names.empty() ? "" : ", ") + m;
        t.notes.push_back("No price given for: " + names + " (add --price MODEL=INPUT/OUTPUT).");
    }
    return t;
}

Result<Table> agreement_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    Table t;
    t.title = "Rules and judge agreement (where both checked the same stage)";
    t.columns = {{"run", Align::right}, {"stage", Align::left}, {"compared", Align::right},
                 {"agreed", Align::right}, {"agreement %", Align::right}};
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto rows, db.agreement(id));
        for (const auto& a : rows)
            t.rows.push_back({names[id], a.stage, std::to_string(a.compared), std::to_string(a.agreed),
                              percent(a.compared ? static_cast<double>(a.agreed) / static_cast<double>(a.compared) : 0.0)});
    }
    return t;
}

Result<Table> disagreement_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, std::size_t limit) {
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    Table t;
    t.title = "Disagreements (first " + std::to_string(limit) + " per run)";
    t.columns = {{"run", Align::right},  {"probe", Align::left}, {"k", Align::right},     {"fact", Align::left},
                 {"stage", Align::left}, {"rules", Align::left}, {"judge", Align::left}, {"judge's reason", Align::left}};
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto rows, db.disagreements(id, limit));
        for (const auto& d : rows)
            t.rows.push_back({names[id], d.probe_id, std::to_string(d.k), d.fact_id, d.stage,
                              d.rules_passed ? "pass" : "fail", d.llm_passed ? "pass" : "fail", d.llm_reason});
    }
    return t;
}

Result<std::vector<Table>> success_tables_by_run(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    std::vector<Table> out;
    for (std::size_t i = 0; i < run_ids.size(); ++i) {
        MF_TRY_ASSIGN(Table flat, success_table(db, {run_ids[i]}));
        MF_TRY_ASSIGN(auto run, db.run(run_ids[i]));
        Table t;
        t.title = "run " + names[run_ids[i]] + ": " + (run ? run->label() : std::string("?"));
        if (run && run->label() != run->system_spec) t.title += " (" + run->system_spec + ")";
        t.columns.assign(flat.columns.begin() + 2, flat.columns.end());
        for (auto& row : flat.rows) t.rows.emplace_back(row.begin() + 2, row.end());
        // The notes explain columns once, under the last table.
        if (i + 1 == run_ids.size()) t.notes = flat.notes;
        out.push_back(std::move(t));
    }
    return out;
}

Result<Table> runs_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    Table t;
    t.title = "Runs";
    t.columns = {{"run", Align::right},   {"status", Align::left},        {"system", Align::left},
                 {"dataset", Align::left}, {"dataset hash", Align::left},  {"store p50 ms", Align::right},
                 {"retrieve p50 ms", Align::right}, {"retrieve p99 ms", Align::right},
                 {"memories", Align::right}, {"tok/memory", Align::right}, {"protocol", Align::left},
                 {"code", Align::left}};
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto run, db.run(id));
        if (!run) continue;
        MF_TRY_ASSIGN(auto all_scenarios, db.scenarios(id));
        // One row per dataset: a suite of many small scenarios (writ) names its dataset once, with
        // the hash of its scenarios' hashes and their count.
        std::vector<store::ScenarioRecord> scenarios;
        std::map<std::string, std::pair<std::size_t, std::string>> per_dataset;  // count, joined hashes
        for (const auto& s : all_scenarios) {
            auto& [count, hashes] = per_dataset[s.dataset];
            if (count++ == 0) scenarios.push_back(s);
            hashes += s.dataset_hash;
        }
        for (auto& s : scenarios)
            if (const auto& [count, hashes] = per_dataset[s.dataset]; count > 1)
                s.dataset_hash = content_hash(hashes).substr(0, 12) + " (" + std::to_string(count) + " scenarios)";
        for (const auto& s : scenarios) {
            MF_TRY_ASSIGN(auto store_lat, db.store_latency(id, s.dataset));
            MF_TRY_ASSIGN(auto retrieve_lat, db.retrieve_latency(id, s.dataset));
            MF_TRY_ASSIGN(auto stats, db.memory_stats(id, s.dataset));
            std::string memories = "-", per_memory = "-";
            if (stats) {
                memories = std::to_string(stats->memories);
                if (stats->tokens && stats->memories > 0) {
                    char buffer[32];
                    std::snprintf(buffer, sizeof buffer, "%.1f", static_cast<double>(*stats->tokens) / static_cast<double>(stats->memories));
                    per_memory = buffer;
                }
            }
            char a[32], b[32], c[32];
            std::snprintf(a, sizeof a, "%.3f", store_lat.p50_ms);
            std::snprintf(b, sizeof b, "%.3f", retrieve_lat.p50_ms);
            std::snprintf(c, sizeof c, "%.3f", retrieve_lat.p99_ms);
            t.rows.push_back({names[id], run->status, run->system_spec, s.dataset,
                              s.dataset_hash.size() > 12 && s.dataset_hash.find(' ') == std::string::npos
                                  ? s.dataset_hash.substr(0, 12)
                                  : s.dataset_hash,
                              a, b, c, memories, per_memory, run->protocol(),
                              run->code_version});
        }
    }
    t.notes.push_back("memories, tok/memory: the store at the dataset's last checkpoint; tokens in cl100k_base, "
                      "the encoding the MemFail paper reports (docs/TOKENS.md).");
    t.notes.push_back("protocol: memfail (exact-or-unsure rules, the judge for what they cannot decide), paper "
                      "(the MemFail paper's per-dataset judge deciding every stage), or locomo / longmemeval (the "
                      "benchmark's own answer prompts and grading); docs/PROTOCOLS.md.");
    // An approximate index's misses read as not_retrieved: say which index served each run.
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto servings, db.servings(id));
        if (!servings.empty()) t.notes.push_back("run " + names[id] + " retrieved with: " + text::join(servings, "; "));
    }
    return t;
}

}  // namespace memfail::report
