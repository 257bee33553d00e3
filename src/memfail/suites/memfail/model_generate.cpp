// SPDX-License-Identifier: MIT
// Model generation: the requests, the attempts, deduplication and the final assembly by import.
#include <memfail/core/text.hpp>
#include <memfail/core/thread_pool.hpp>
#include <memfail/core/version.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/dedup.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/import_csv.hpp>
#include <memfail/suites/memfail/model_generate_internal.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <future>
#include <set>

namespace memfail::suites::memfail_suite {

namespace {

using namespace model_gen;

// The paper's dedup thresholds and keys (Appendix B.1).
struct DedupRule {
    const char* key;
    double threshold;
};
DedupRule dedup_rule(const std::string& dataset) {
    if (dataset == "coexisting_facts") return {"question", 0.7};
    if (dataset == "persona_retrieval") return {"essay", 0.7};
    if (dataset == "long_hop") return {"fact", 0.7};  // a chain with one colliding fact is dropped whole
    return {"essay", 0.8};
}

// One kind of request of a dataset: its prompt, its checks and the rows kept so far (for
// uniqueness and deduplication).
struct Stage {
    std::string prompt_key;  // lexicon().prompts key
    std::string dataset;     // the one-row import's dataset; empty: the reply is not a whole row
    std::function<Result<Built>(const Item&, const json&)> check;
    MinHashDeduper deduper;
    std::map<std::string, std::size_t> owners;  // "what\tnormalised text" -> row
    // Whether the replies this stage accepts are the rows <name>_raw.csv lists (Long-Hop's
    // distractor stage writes options for rows the chain stage listed already).
    bool lists_raw = true;

    Stage(std::string key, std::string dataset_, double threshold,
          std::function<Result<Built>(const Item&, const json&)> check_)
        : prompt_key(std::move(key)), dataset(std::move(dataset_)), check(std::move(check_)), deduper(threshold) {}
};

// What happened to one dataset's items, for the record.
struct Tally {
    std::size_t planned = 0, accepted = 0, attempts = 0, retried = 0, dedup_candidates = 0;
    json dropped = json::array();  // [{row, stage, attempts, reason, kind}]
    json dedup = json::array();    // [{row, attempt, similar_to}]
    std::int64_t calls = 0, invalid_replies = 0, cached = 0, fresh = 0;
    // HTTP requests this run sent, every one: the client's re-asks after a reply that was not the
    // schema's JSON and its retries included (a cached reply sent none).
    std::int64_t requests_sent = 0;
    std::int64_t prompt_tokens = 0, completion_tokens = 0, new_prompt_tokens = 0, new_completion_tokens = 0;
    std::vector<std::string> drop_lines;
    // Every row a reply wrote that passed its own checks, before the checks across rows (near-
    // duplicates, a value another row holds), in the order judged: the rows of <name>_raw.csv (the
    // paper writes them before its MinHash pass).
    std::vector<std::vector<std::string>> raw;
    // Conditional-Facts: rows left out because the pair's other variant was dropped.
    std::optional<std::size_t> pair_dropped;
};

// How far a planned row got: dropped at its first stage, accepted at its first stage only (a
// Long-Hop chain whose distractors were dropped, an Easy row whose Hard was dropped), or whole.
enum class Reach { dropped, partly, whole };

// A dataset's rows: the plan's and the top-up rows after them, and which are kept.
struct Plan {
    std::vector<Item> items;
    std::vector<Reach> reach;                   // per item
    std::size_t original = 0;                   // the plan's rows: the dataset's target
    std::vector<std::string> buckets;           // bucket_of keys, in order of first appearance
    std::map<std::string, std::size_t> target;  // per bucket: the plan's rows in it
    std::size_t bound = 0;                      // rows planned in all, at most
    std::size_t waves = 0;                      // top-up waves
    std::vector<std::size_t> selected;          // the kept rows (indices into items), in plan order
    json bucket_counts = json::array();         // [{bucket, target, kept, planned}]
    std::string shortfall;                      // non-empty: a bucket is short after the bound
};

// A Built reply, or why it was refused; `dedup_row` is set when it was refused as a near-duplicate.
struct Verdict {
    std::optional<Built> built;
    std::string problem;
    std::string dedup_row;
};

std::string one_line(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::replace(s.begin(), s.end(), '\r', ' ');
    return s;
}

// Top-level size rules ("has 100 rows; found 3"): expected with `rows` or after drops.
bool is_size_rule(const data::Violation& v) { return v.field == "probes" || v.field == "sessions"; }

// Why a one-row CSV of `cells` does not import cleanly, or empty.
std::string import_problem(const std::string& dataset, const std::vector<std::string>& cells) {
    const std::string csv = csv_line(csv_columns(dataset)) + csv_line(cells);
    ImportReport report;
    auto scenario = import_memfail_csv_text(csv, "reply", dataset, report);
    auto without_place = [](std::string s) {
        // "reply:2: row 1: behaviour ..." -> "behaviour ..."
        if (const auto at = s.find(": row 1: "); at != std::string::npos) s = s.substr(at + 9);
        return s;
    };
    if (!scenario) return "the row does not import: " + scenario.error().message;
    if (!report.errors.empty()) return "the row does not import: " + without_place(report.errors.front());
    if (!report.warnings.empty()) return "the row imports with a problem: " + without_place(report.warnings.front());
    if (report.incomplete_facts > 0) return "a fact's key details cannot all be found in the text";
    std::vector<data::Violation> violations;
    data::validate_structure(*scenario, 0, violations);
    check_dataset_rules(*scenario, 0, violations);
    for (const auto& v : violations)
        if (!is_size_rule(v)) return "the row breaks a rule: " + v.field + ": " + v.message;
    return {};
}

json calls_json(const Tally& t) {
    return {{"requests", t.calls},
            {"invalid_replies", t.invalid_replies},
            {"prompt_tokens", t.prompt_tokens},
            {"completion_tokens", t.completion_tokens}};
}

}  // namespace

struct ModelGenerator::Impl {
    llm::LlmClient& client;
    GenerateModelOptions options;
    ThreadPool pool;
    // Conditional-Facts Easy and Hard, generated together (conditional()).
    std::optional<std::pair<ModelDataset, ModelDataset>> conditional_pair;

    Impl(llm::LlmClient& c, GenerateModelOptions o)
        : client(c), options(std::move(o)), pool(std::max<std::size_t>(1, options.concurrency)) {}

    void progress(const std::string& line) const {
        if (options.progress) options.progress(line);
    }

    llm::ChatRequest request(const Stage& stage, const Item& item, int attempt, const std::string& previous) const {
        const Prompt& prompt = lexicon().prompts.at(stage.prompt_key);
        std::string user = "Write this item exactly as the plan says.\nPLAN: " + item.plan.dump();
        if (attempt > 1)
            user += "\nATTEMPT: " + std::to_string(attempt) + "\nPREVIOUS PROBLEM: " + one_line(previous);
        llm::ChatRequest r;
        r.role = llm::Role::system;
        r.stage = "generate." + stage.prompt_key;
        // The prompt keys are the datasets' names ("long_hop_distractors" and "long_hop_audit" are Long-Hop's).
        r.model = options.model_for(stage.prompt_key.rfind("long_hop", 0) == 0 ? "long_hop" : stage.prompt_key);
        r.messages = {{"system", prompt.system}, {"user", user}};
        r.temperature = options.temperature;
        r.seed = options.llm_seed;
        r.schema = llm::JsonSchema{prompt.schema_name, prompt.schema};
        return r;
    }

    Verdict judge(Stage& stage, const Item& item, const llm::ChatReply& reply, Tally& tally) {
        Verdict v;
        if (!reply.json || !reply.json->is_object()) {
            v.problem = "the reply is not a JSON object";
            return v;
        }
        Result<Built> built = make_error(ErrorKind::invalid_output, "unchecked");
        try {
            built = stage.check(item, *reply.json);
        } catch (const nlohmann::json::exception& e) {
            // The client checks the schema, so this means a reply shaped unlike it.
            built = make_error(ErrorKind::invalid_output, std::string("the reply does not fit the schema: ") + e.what());
        }
        if (!built) {
            v.problem = built.error().message;
            return v;
        }
        if (!built->cells.empty() && !stage.dataset.empty())
            if (v.problem = import_problem(stage.dataset, built->cells); !v.problem.empty()) return v;
        if (stage.lists_raw) {
            const auto& row = built->raw.empty() ? built->cells : built->raw;
            if (!row.empty()) tally.raw.push_back(row);
        }
        if (!built->dedup.empty()) ++tally.dedup_candidates;
        for (const auto& text_ : built->dedup)
            if (std::string hit = stage.deduper.collides(text_); !hit.empty()) {
                v.dedup_row = hit;
                v.problem = "too similar to row " + hit;
                return v;
            }
        for (const auto& [what, text_] : built->unique) {
            const auto it = stage.owners.find(what + '\t' + text::normalize(text_));
            if (it != stage.owners.end() && it->second != item.row) {
                v.problem = "the " + what + " '" + text_ + "' is already used by row " + std::to_string(it->second);
                return v;
            }
        }
        for (const auto& [what, text_] : built->unique) stage.owners[what + '\t' + text::normalize(text_)] = item.row;
        for (const auto& text_ : built->dedup) stage.deduper.keep(std::to_string(item.row), text_);
        v.built = std::move(built).value();
        return v;
    }

    // Runs `items` through `stage`: every pending item is asked concurrently, the replies are judged
    // in item order (so what is kept does not depend on timing), and failing items are asked again
    // with the problem, up to max_attempts. `done` is called with each item as it is accepted or
    // dropped. A call that fails for another reason than its reply (network, auth, ...) stops it.
    Result<std::vector<std::optional<Built>>> run(Stage& stage, const std::vector<Item>& items, Tally& tally,
                                                  const std::function<void(bool accepted)>& done) {
        std::vector<std::optional<Built>> out(items.size());
        std::vector<std::string> problems(items.size());
        std::vector<bool> finished(items.size(), false);
        const int max_attempts = std::max(1, options.max_attempts);
        for (int attempt = 1; attempt <= max_attempts; ++attempt) {
            std::vector<std::pair<std::size_t, std::future<Result<llm::ChatReply>>>> calls;
            for (std::size_t i = 0; i < items.size(); ++i) {
                if (finished[i]) continue;
                llm::ChatRequest r = request(stage, items[i], attempt, problems[i]);
                calls.emplace_back(i, pool.submit([this, r = std::move(r)] { return client.chat(r); }));
            }
            if (calls.empty()) break;
            std::optional<Error> stop;
            for (auto& [i, future] : calls) {
                Result<llm::ChatReply> reply = future.get();
                tally.requests_sent += reply ? reply->attempts : reply.error().attempts;
                if (stop) continue;  // wait for the rest: what they answered is cached
                ++tally.calls;
                ++tally.attempts;
                if (attempt > 1) ++tally.retried;
                Verdict v;
                if (!reply) {
                    if (reply.error().kind != ErrorKind::invalid_output) {
                        stop = reply.error();
                        continue;
                    }
                    ++tally.invalid_replies;
                    ++tally.fresh;
                    // "POST <url>: the reply never satisfied schema X after 3 attempts: <why>": the
                    // model is told why, never where it was called.
                    const std::string& m = reply.error().message;
                    const auto why = m.find("attempts: ");
                    v.problem = "the reply is not valid JSON for the schema" +
                                (why == std::string::npos ? std::string() : ": " + m.substr(why + 10));
                } else {
                    (reply->cache_hit ? tally.cached : tally.fresh) += 1;
                    tally.prompt_tokens += reply->usage.prompt_tokens;
                    tally.completion_tokens += reply->usage.completion_tokens;
                    if (!reply->cache_hit) {
                        tally.new_prompt_tokens += reply->usage.prompt_tokens;
                        tally.new_completion_tokens += reply->usage.completion_tokens;
                    }
                    v = judge(stage, items[i], *reply, tally);
                }
                if (v.built) {
                    out[i] = std::move(v.built);
                    finished[i] = true;
                    done(true);
                    continue;
                }
                problems[i] = v.problem;
                if (!v.dedup_row.empty())
                    tally.dedup.push_back({{"row", items[i].row}, {"attempt", attempt}, {"similar_to", std::stoul(v.dedup_row)}});
                if (attempt == max_attempts) {
                    finished[i] = true;
                    const std::string kind = v.dedup_row.empty() ? "validation" : "dedup";
                    tally.dropped.push_back({{"row", items[i].row}, {"stage", stage.prompt_key}, {"attempts", attempt},
                                             {"kind", kind}, {"reason", v.problem}});
                    tally.drop_lines.push_back("row " + std::to_string(items[i].row) +
                                               (stage.prompt_key == "long_hop_distractors" ? " (distractors)" : "") +
                                               " dropped after " + std::to_string(attempt) + " attempts: " + v.problem);
                    done(false);
                }
            }
            if (stop)
                return stop->with_context("generating " + stage.prompt_key + " (row " +
                                          std::to_string(items.front().row) + "...)");
        }
        return out;
    }

    std::function<void(bool)> counter(const std::string& label, std::size_t total, std::size_t& done_count) const {
        const std::size_t step = std::max<std::size_t>(1, total / 10);
        return [this, label, total, step, &done_count](bool) {
            ++done_count;
            if (done_count % step == 0 || done_count == total)
                progress(label + ": " + std::to_string(done_count) + "/" + std::to_string(total) + " rows done");
        };
    }

    // Plans, generates and tops up one dataset's rows (the paper's "oversample, then truncate each
    // bucket to a fixed target"): the plan's rows are generated; while a bucket (bucket_of) has
    // fewer whole rows than the plan gave it, a wave of new rows is planned for the missing ones
    // (top_up_item: row numbers after the plan's, drawn from the seed) and generated, until every
    // bucket is full or `max_planned` times the target have been planned. Each bucket keeps its
    // first whole rows, in plan order, up to its target. `produce` generates a wave (indices into
    // plan.items) and says, per item, how far it got.
    Result<void> plan_and_top_up(const std::string& dataset, Plan& plan,
                                 const std::function<Result<std::vector<Reach>>(const std::vector<std::size_t>&)>& produce,
                                 const std::string& label = {}) {
        plan.original = plan.items.size();
        for (const auto& item : plan.items) {
            const std::string b = bucket_of(dataset, item);
            if (plan.target[b]++ == 0) plan.buckets.push_back(b);
        }
        const double factor = std::max(1.0, options.max_planned);
        plan.bound = std::max(plan.original,
                              static_cast<std::size_t>(std::floor(factor * static_cast<double>(plan.original) + 1e-9)));
        std::vector<std::size_t> wave(plan.items.size());
        for (std::size_t i = 0; i < wave.size(); ++i) wave[i] = i;
        plan.reach.assign(plan.items.size(), Reach::dropped);
        for (;;) {
            MF_TRY_ASSIGN(auto reached, produce(wave));
            for (std::size_t w = 0; w < wave.size(); ++w) plan.reach[wave[w]] = reached[w];
            std::map<std::string, std::size_t> whole;
            std::set<std::string> held;
            for (std::size_t i = 0; i < plan.items.size(); ++i) {
                if (plan.reach[i] == Reach::whole) ++whole[bucket_of(dataset, plan.items[i])];
                if (plan.reach[i] != Reach::dropped)
                    if (std::string h = held_by(dataset, plan.items[i]); !h.empty()) held.insert(h);
            }
            std::vector<std::pair<std::string, std::size_t>> missing;  // bucket, rows
            for (const auto& b : plan.buckets)
                if (whole[b] < plan.target[b]) missing.emplace_back(b, plan.target[b] - whole[b]);
            if (missing.empty()) break;
            wave.clear();
            std::string what;
            for (const auto& [b, n] : missing) {
                // A copy: planning appends to plan.items.
                const Item like = *std::find_if(plan.items.begin(), plan.items.end(),
                                                [&, b = b](const Item& i) { return bucket_of(dataset, i) == b; });
                std::size_t planned_here = 0;
                for (std::size_t k = 0; k < n && plan.items.size() < plan.bound; ++k) {
                    std::optional<Item> item = top_up_item(dataset, options, plan.items, held, like);
                    if (!item) break;
                    if (std::string h = held_by(dataset, *item); !h.empty()) held.insert(h);
                    wave.push_back(plan.items.size());
                    plan.items.push_back(std::move(*item));
                    plan.reach.push_back(Reach::dropped);
                    ++planned_here;
                }
                if (planned_here > 0) what += (what.empty() ? "" : ", ") + std::to_string(planned_here) + " " + b;
            }
            if (wave.empty()) break;
            ++plan.waves;
            progress((label.empty() ? dataset : label) + ": top-up wave " + std::to_string(plan.waves) + ": " + std::to_string(wave.size()) +
                     " more row(s) planned for the rows dropped (" + what + "); " +
                     std::to_string(plan.items.size()) + " planned of at most " + std::to_string(plan.bound));
        }
        // Truncate each bucket to its target, in plan order.
        std::map<std::string, std::size_t> taken;
        for (std::size_t i = 0; i < plan.items.size(); ++i) {
            if (plan.reach[i] != Reach::whole) continue;
            if (std::size_t& t = taken[bucket_of(dataset, plan.items[i])]; t < plan.target[bucket_of(dataset, plan.items[i])]) {
                ++t;
                plan.selected.push_back(i);
            }
        }
        std::vector<std::string> short_buckets;
        for (const auto& b : plan.buckets) {
            plan.bucket_counts.push_back({{"bucket", b}, {"target", plan.target[b]}, {"kept", taken[b]}});
            if (taken[b] < plan.target[b])
                short_buckets.push_back(b + " " + std::to_string(taken[b]) + "/" + std::to_string(plan.target[b]));
        }
        std::map<std::string, std::size_t> planned;
        for (const auto& item : plan.items) ++planned[bucket_of(dataset, item)];
        for (auto& c : plan.bucket_counts) c["planned"] = planned[c["bucket"].get<std::string>()];
        if (!short_buckets.empty())
            plan.shortfall = (label.empty() ? dataset : label) + " has " + std::to_string(plan.selected.size()) + " of its " +
                             std::to_string(plan.original) + " rows after planning " + std::to_string(plan.items.size()) +
                             " (the bound is " + std::to_string(plan.bound) + "); short: " + text::join(short_buckets, ", ");
        return {};
    }

    // The kept rows (plan.selected) as a dataset with its generation record.
    Result<ModelDataset> assemble(const std::string& dataset, const Plan& plan, const std::vector<std::vector<std::string>>& cells,
                                  Tally& tally, json extra) const {
        tally.planned = plan.items.size();
        std::vector<std::vector<std::string>> rows;
        for (std::size_t i : plan.selected) rows.push_back(cells[i]);
        if (rows.empty())
            return make_error(ErrorKind::invalid_output,
                              "no row of " + dataset + " could be generated: all " + std::to_string(tally.planned) +
                                  " items failed after " + std::to_string(options.max_attempts) +
                                  " attempts (" + (tally.drop_lines.empty() ? std::string("no reply") : tally.drop_lines.front()) +
                                  "); is the model answering in JSON?");
        ModelDataset out;
        out.target = plan.original;
        out.shortfall = plan.shortfall;
        out.csv_file = release_csv_name(dataset);
        out.csv = csv_line(csv_columns(dataset));
        for (const auto& r : rows) out.csv += csv_line(r);
        out.raw_csv_file = raw_csv_name(dataset);
        out.raw_csv = csv_line(csv_columns(dataset));
        for (const auto& r : tally.raw) out.raw_csv += csv_line(r);
        ImportReport report;
        auto scenario = import_memfail_csv_text(out.csv, out.csv_file, dataset, report);
        if (!scenario) return scenario.error().with_context("internal: the kept rows do not import");
        std::vector<std::string> problems = report.errors;
        for (const auto& w : report.warnings)
            // Persona names repeat by design (drawn with replacement, as the paper's).
            if (w.find("given to more than one essay") == std::string::npos) problems.push_back(w);
        if (report.incomplete_facts > 0)
            problems.push_back(std::to_string(report.incomplete_facts) + " fact(s) with incomplete key details");
        std::vector<data::Violation> violations;
        data::validate_structure(*scenario, 0, violations);
        check_dataset_rules(*scenario, 0, violations);
        for (const auto& v : violations) {
            if (is_size_rule(v)) out.size_notes.push_back(v.field + ": " + v.message);
            else problems.push_back(v.field + ": " + v.message);
        }
        if (!problems.empty())
            return make_error(ErrorKind::internal, "the generated " + dataset + " breaks its construction rules (" +
                                                       std::to_string(problems.size()) + " problem(s); first: " +
                                                       problems.front() + "); this is a bug in memfail");

        const DedupRule rule = dedup_rule(dataset);
        const Lexicon& lex = lexicon();
        json schemas = json::array();
        for (const auto& key : {dataset, std::string("long_hop_distractors")})
            if (key == dataset || dataset == "long_hop") schemas.push_back(lex.prompts.at(key).schema_name);
        std::size_t whole = 0;
        for (const Reach r : plan.reach) whole += r == Reach::whole;
        json counts = {{"target", plan.original},
                       {"planned", plan.items.size()},
                       {"top_up", plan.items.size() - plan.original},
                       {"top_up_waves", plan.waves},
                       {"max_planned", plan.bound},
                       {"accepted", tally.accepted},
                       {"kept", rows.size()},
                       {"raw_rows", tally.raw.size()},
                       {"truncated", whole - rows.size()},
                       {"dropped", tally.dropped.size()},
                       {"attempts", tally.attempts},
                       {"retried_attempts", tally.retried},
                       {"dedup_collisions", tally.dedup.size()},
                       {"dropped_as_duplicates",
                        std::count_if(tally.dropped.begin(), tally.dropped.end(),
                                      [](const json& d) { return d["kind"] == "dedup"; })}};
        if (tally.pair_dropped) counts["pair_dropped"] = *tally.pair_dropped;
        json record_models = json::object();
        for (const std::string key : {"conditional_facts_easy", "conditional_facts_hard", "coexisting_facts",
                                      "persona_retrieval", "long_hop"})
            if (key == dataset || (dataset == "conditional_facts_hard" && key == "conditional_facts_easy"))
                record_models[key] = options.model_for(key);
        json record = {{"dataset", dataset},
                       {"generator", k_model_generator_version},
                       {"model", options.model_for(dataset)},
                       {"models", record_models},
                       {"seed", options.seed},
                       {"code_version", std::string(code_version())},
                       {"prompts_version", lex.version},
                       {"prompts_hash", lex.hash},
                       {"schemas", schemas},
                       {"thresholds", {{"dedup_key", rule.key}, {"dedup_jaccard", rule.threshold},
                                       {"dedup_method", "minhash-lsh word-3-shingles"},
                                       {"max_attempts", options.max_attempts},
                                       {"max_planned_factor", std::max(1.0, options.max_planned)}}},
                       {"counts", counts},
                       {"buckets", plan.bucket_counts},
                       {"dropped", tally.dropped},
                       {"dedup", tally.dedup},
                       {"calls", calls_json(tally)}};
        if (plan.items.size() > plan.original) {
            json rows_ = json::array();
            for (std::size_t i = plan.original; i < plan.items.size(); ++i) rows_.push_back(plan.items[i].row);
            record["top_up_rows"] = rows_;
        }
        if (!plan.shortfall.empty()) record["short"] = {{"rows", plan.original - rows.size()}, {"why", plan.shortfall}};
        if (options.rows > 0) record["rows_option"] = options.rows;
        record.update(extra);
        if (!out.size_notes.empty()) record["size_notes"] = out.size_notes;

        data::Scenario& s = *scenario;
        s.id = dataset + "-model-seed" + std::to_string(options.seed);
        s.meta = {{"generator", k_model_generator_version},
                  {"seed", options.seed},
                  {"source", "model"},
                  {"model", options.model_for(dataset)},
                  {"generation", record},
                  {"skipped_rows", 0},
                  {"incomplete_facts", 0}};
        json dropped = json::array();
        for (const auto& d : tally.dedup) dropped.push_back({{"id", "row-" + d["row"].dump()}, {"kept", "row-" + d["similar_to"].dump()}});
        s.meta["dedup"] = {{"method", "minhash-lsh word-3-shingles"}, {"key", rule.key}, {"threshold", rule.threshold},
                           {"candidates", tally.dedup_candidates}, {"kept", tally.dedup_candidates - tally.dedup.size()},
                           {"dropped", dropped}};
        out.scenario = std::move(s);
        record["this_run"] = {{"cached_calls", tally.cached},
                              {"new_calls", tally.fresh},
                              {"requests_sent", tally.requests_sent},
                              {"new_prompt_tokens", tally.new_prompt_tokens},
                              {"new_completion_tokens", tally.new_completion_tokens}};
        out.record = std::move(record);
        out.drops = tally.drop_lines;
        return out;
    }

    // A wave's label for progress lines: "coexisting_facts", "coexisting_facts (top-up wave 2)".
    static std::string wave_label(const std::string& dataset, const Plan& plan) {
        return plan.waves == 0 ? dataset : dataset + " (top-up wave " + std::to_string(plan.waves) + ")";
    }

    // Conditional-Facts Easy and Hard, generated as pairs: every planned row's Easy item, then the
    // Hard item of each accepted Easy row (its behaviour and condition). A row is whole when both
    // are accepted; both datasets keep the same whole rows, so Easy and Hard share their 100 specs
    // as the template generator's do. Asking for either generates both (once; the calls are cached).
    Result<void> conditional() {
        if (conditional_pair) return {};
        Plan plan;
        plan.items = plan_items("conditional_facts_easy", options);
        Stage easy_stage("conditional_facts_easy", "conditional_facts_easy", 0.8, check_easy);
        Stage hard_stage("conditional_facts_hard", "conditional_facts_hard", 0.8, check_hard);
        Tally easy_tally, hard_tally;
        std::vector<std::vector<std::string>> easy_cells, hard_cells;
        std::size_t easy_done = 0, hard_done = 0;
        MF_TRY(plan_and_top_up("conditional_facts_easy", plan, [&](const std::vector<std::size_t>& wave) -> Result<std::vector<Reach>> {
            std::vector<Item> items;
            for (std::size_t i : wave) items.push_back(plan.items[i]);
            easy_cells.resize(plan.items.size());
            hard_cells.resize(plan.items.size());
            easy_done = 0;
            hard_done = 0;
            MF_TRY_ASSIGN(auto easy, run(easy_stage, items, easy_tally,
                                         counter(wave_label("conditional_facts_easy", plan), items.size(), easy_done)));
            std::vector<Item> hard_items;
            std::vector<std::size_t> hard_of;  // index into `wave`
            for (std::size_t w = 0; w < wave.size(); ++w)
                if (easy[w]) {
                    easy_cells[wave[w]] = easy[w]->cells;
                    hard_items.push_back(hard_item(items[w], easy[w]->kept));
                    hard_of.push_back(w);
                }
            MF_TRY_ASSIGN(auto hard, run(hard_stage, hard_items, hard_tally,
                                         counter(wave_label("conditional_facts_hard", plan), hard_items.size(), hard_done)));
            std::vector<Reach> reach(wave.size(), Reach::dropped);
            for (std::size_t h = 0; h < hard_items.size(); ++h) {
                reach[hard_of[h]] = hard[h] ? Reach::whole : Reach::partly;
                if (hard[h]) hard_cells[wave[hard_of[h]]] = hard[h]->cells;
            }
            return reach;
        }, "conditional_facts_easy/hard (pairs)"));
        std::size_t easy_accepted = 0, hard_accepted = 0;
        for (const Reach r : plan.reach) {
            easy_accepted += r != Reach::dropped;
            hard_accepted += r == Reach::whole;
        }
        easy_tally.accepted = easy_accepted;
        easy_tally.pair_dropped = easy_accepted - hard_accepted;  // Easy accepted, Hard dropped
        hard_tally.accepted = hard_accepted;
        hard_tally.pair_dropped = plan.items.size() - easy_accepted;  // Easy dropped: no Hard asked
        const json pairing = {{"pairs", "conditional_facts_easy and conditional_facts_hard keep the same rows: a row is "
                                        "kept when both its Easy and its Hard reply were accepted"}};
        auto easy = assemble("conditional_facts_easy", plan, easy_cells, easy_tally, pairing);
        if (!easy) return easy.error();
        auto hard = assemble("conditional_facts_hard", plan, hard_cells, hard_tally,
                             {{"pairs", pairing["pairs"]}, {"based_on", {{"dataset", "conditional_facts_easy"}}}});
        if (!hard) return hard.error();
        conditional_pair.emplace(std::move(*easy), std::move(*hard));
        return {};
    }

    Result<ModelDataset> single(const std::string& dataset,
                                std::function<Result<Built>(const Item&, const json&)> check) {
        Plan plan;
        plan.items = plan_items(dataset, options);
        Stage stage(dataset, dataset, dedup_rule(dataset).threshold, std::move(check));
        Tally tally;
        std::vector<std::vector<std::string>> cells;
        std::size_t done = 0;
        MF_TRY(plan_and_top_up(dataset, plan, [&](const std::vector<std::size_t>& wave) -> Result<std::vector<Reach>> {
            std::vector<Item> items;
            for (std::size_t i : wave) items.push_back(plan.items[i]);
            cells.resize(plan.items.size());
            done = 0;
            MF_TRY_ASSIGN(auto built, run(stage, items, tally, counter(wave_label(dataset, plan), items.size(), done)));
            std::vector<Reach> reach(wave.size(), Reach::dropped);
            for (std::size_t w = 0; w < wave.size(); ++w)
                if (built[w]) {
                    cells[wave[w]] = built[w]->cells;
                    reach[w] = Reach::whole;
                    ++tally.accepted;
                }
            return reach;
        }));
        return assemble(dataset, plan, cells, tally, json::object());
    }

    // Long-Hop's cross-chain audit (Appendix B.6): a global pass over every chain, then windows of
    // twice `wave` chains overlapping by half (those holding a chain of this wave), each a request
    // listing {id, facts, fixed}. Chains kept in earlier waves are fixed; only this wave's may be
    // dropped. Returns the union of the drops: id -> reason. An audit request without a valid reply
    // after its attempts stops the dataset: its chains cannot be said to be free of interference.
    Result<std::map<std::string, std::string>> audit_chains(Stage& stage, const json& fixed, const json& fresh,
                                                            std::size_t first_row, Tally& tally, json& audit) {
        std::map<std::string, std::string> out;
        if (fresh.empty()) return out;
        json all = json::array(), fixed_ids = json::array(), new_ids = json::array();
        for (const json& c : fixed) {
            all.push_back({{"id", c["id"]}, {"facts", c["facts"]}, {"fixed", true}});
            fixed_ids.push_back(c["id"]);
        }
        for (const json& c : fresh) {
            all.push_back({{"id", c["id"]}, {"facts", c["facts"]}, {"fixed", false}});
            new_ids.push_back(c["id"]);
        }
        const std::size_t window = 2 * std::max<std::size_t>(1, options.wave);
        std::vector<Item> items;
        auto add = [&](const std::string& pass, std::size_t from, std::size_t to) {
            Item item;
            item.row = first_row;
            json chains(all.begin() + static_cast<std::ptrdiff_t>(from), all.begin() + static_cast<std::ptrdiff_t>(to));
            item.plan = {{"dataset", "long_hop_audit"}, {"pass", pass}, {"chains", chains}};
            item.context = {{"fixed", fixed_ids}, {"new", new_ids}};
            items.push_back(std::move(item));
        };
        add("global", 0, all.size());
        if (all.size() > window)
            for (std::size_t from = 0; from < all.size(); from += window / 2) {
                const std::size_t to = std::min(all.size(), from + window);
                const bool holds_new = to > fixed.size();
                if (holds_new) add("window " + std::to_string(from + 1) + "-" + std::to_string(to), from, to);
                if (to == all.size()) break;
            }
        MF_TRY_ASSIGN(auto replies, run(stage, items, tally, [](bool) {}));
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (!replies[i]) {
                const json& last = tally.dropped.back();
                return make_error(ErrorKind::invalid_output,
                                  "the Long-Hop cross-chain audit (" + items[i].plan["pass"].get<std::string>() +
                                      " pass) had no valid reply after " + std::to_string(options.max_attempts) +
                                      " attempts (" + last.value("reason", std::string()) +
                                      "); the chains cannot be said to be free of interference");
            }
            for (const json& d : replies[i]->kept["to_drop"])
                out.emplace(d["id"].get<std::string>(), d["reason"].get<std::string>());
        }
        audit["requests"] = audit.value("requests", 0) + static_cast<int>(items.size());
        return out;
    }

    // Long-Hop as Appendix B.6 runs it: chains are proposed in waves of `wave` (each request lists
    // the head -> terminal of the chains accepted before it) and checked one by one (their facts
    // deduplicated at MinHash 0.7 as they come); the wave's chains then go through the cross-chain
    // audit together with the chains kept before; the survivors get their distractors. Top-up
    // chains come in waves too.
    Result<ModelDataset> long_hop() {
        Plan plan;
        plan.items = plan_items("long_hop", options);
        Stage chains("long_hop", "", 0.7, check_chain);
        Stage distractors("long_hop_distractors", "long_hop", 0.0, check_distractors);
        distractors.lists_raw = false;
        Stage auditor("long_hop_audit", "", 0.0, check_audit);
        auditor.lists_raw = false;
        Tally tally;
        std::vector<std::vector<std::string>> cells;
        ojson previous = ojson::array();
        json kept_chains = json::array();  // {id, facts} of every whole row so far: fixed in later audits
        json audit = {{"method", "cross-chain audit: a global pass, then windows of " +
                                     std::to_string(2 * std::max<std::size_t>(1, options.wave)) +
                                     " chains overlapping by half"},
                      {"requests", 0},
                      {"dropped", json::array()}};
        const std::size_t wave_size = std::max<std::size_t>(1, options.wave);
        std::size_t done = 0;
        MF_TRY(plan_and_top_up("long_hop", plan, [&](const std::vector<std::size_t>& wave) -> Result<std::vector<Reach>> {
            cells.resize(plan.items.size());
            std::vector<Reach> reach(wave.size(), Reach::dropped);
            done = 0;
            auto count = counter(wave_label("long_hop", plan), wave.size(), done);
            std::vector<Item> batch_items(wave.size());
            std::vector<std::optional<Built>> chain(wave.size());
            for (std::size_t first = 0; first < wave.size(); first += wave_size) {
                const std::size_t end = std::min(wave.size(), first + wave_size);
                std::vector<Item> batch;
                for (std::size_t w = first; w < end; ++w) {
                    batch.push_back(plan.items[wave[w]]);
                    batch.back().plan["previous"] = previous;
                }
                MF_TRY_ASSIGN(auto built, run(chains, batch, tally, [&count](bool accepted) {
                                  if (!accepted) count(false);
                              }));
                for (std::size_t b = 0; b < batch.size(); ++b) {
                    batch_items[first + b] = batch[b];
                    if (!built[b]) continue;
                    previous.push_back(chain_summary(built[b]->kept));
                    chain[first + b] = std::move(built[b]);
                }
                // At most the last 50, as the contract says.
                while (previous.size() > 50) previous.erase(previous.begin());
            }

            json fresh = json::array();
            for (std::size_t w = 0; w < wave.size(); ++w)
                if (chain[w]) fresh.push_back({{"id", batch_items[w].context.at("id")}, {"facts", chain[w]->kept.at("facts")}});
            MF_TRY_ASSIGN(auto drops, audit_chains(auditor, kept_chains, fresh, plan.items[wave.front()].row, tally, audit));
            for (std::size_t w = 0; w < wave.size(); ++w) {
                if (!chain[w]) continue;
                const auto it = drops.find(batch_items[w].context.at("id").get<std::string>());
                if (it == drops.end()) continue;
                const std::size_t row = batch_items[w].row;
                audit["dropped"].push_back({{"row", row}, {"id", it->first}, {"reason", it->second}});
                tally.dropped.push_back({{"row", row}, {"stage", "long_hop_audit"}, {"attempts", 1},
                                         {"kind", "cross_chain"}, {"reason", it->second}});
                tally.drop_lines.push_back("row " + std::to_string(row) + " (" + it->first +
                                           ") dropped by the cross-chain audit: " + it->second);
                chain[w].reset();
                count(false);
            }

            std::vector<Item> asks;
            std::vector<std::size_t> ask_of;  // index into `wave`
            for (std::size_t w = 0; w < wave.size(); ++w)
                if (chain[w]) {
                    asks.push_back(distractor_item(batch_items[w], chain[w]->kept, options.seed));
                    ask_of.push_back(w);
                    reach[w] = Reach::partly;
                }
            MF_TRY_ASSIGN(auto full, run(distractors, asks, tally, count));
            for (std::size_t a = 0; a < asks.size(); ++a) {
                if (!full[a]) continue;
                cells[wave[ask_of[a]]] = full[a]->cells;
                reach[ask_of[a]] = Reach::whole;
                ++tally.accepted;
                kept_chains.push_back({{"id", asks[a].context.at("id")}, {"facts", asks[a].context.at("facts")}});
            }
            return reach;
        }));
        return assemble("long_hop", plan, cells, tally, {{"wave", wave_size}, {"cross_chain", audit}});
    }
};

ModelGenerator::ModelGenerator(llm::LlmClient& client, GenerateModelOptions options)
    : m_impl(std::make_unique<Impl>(client, std::move(options))) {}

ModelGenerator::~ModelGenerator() = default;

Result<ModelDataset> ModelGenerator::generate(const std::string& dataset) {
    if (dataset == "conditional_facts_easy" || dataset == "conditional_facts_hard") {
        MF_TRY(m_impl->conditional());
        return dataset == "conditional_facts_easy" ? m_impl->conditional_pair->first : m_impl->conditional_pair->second;
    }
    if (dataset == "coexisting_facts") return m_impl->single(dataset, check_coexisting);
    if (dataset == "persona_retrieval") return m_impl->single(dataset, check_persona);
    if (dataset == "long_hop") return m_impl->long_hop();
    return make_error(ErrorKind::invalid_input, "generating with a model is not implemented for '" + dataset +
                                                    "'; it writes the five MemFail datasets (" +
                                                    text::join(dataset_names(), ", ") + ")");
}

std::string release_csv_name(const std::string& dataset) {
    if (dataset == "conditional_facts_easy") return "conditional_facts_dataset_easy.csv";
    if (dataset == "conditional_facts_hard") return "conditional_facts_dataset_hard.csv";
    if (dataset == "coexisting_facts") return "coexisting_facts_dataset.csv";
    if (dataset == "persona_retrieval") return "persona_dataset.csv";
    if (dataset == "long_hop") return "long_hop_chains.csv";
    return dataset + ".csv";
}

std::string raw_csv_name(const std::string& dataset) {
    std::string name = release_csv_name(dataset);
    return name.substr(0, name.size() - 4) + "_raw.csv";
}

std::vector<nlohmann::ordered_json> plan_rows(const std::string& dataset, const GenerateModelOptions& options) {
    std::vector<nlohmann::ordered_json> out;
    for (auto& item : plan_items(dataset, options)) {
        if (dataset == "conditional_facts_hard") {
            item.plan["dataset"] = dataset;
            item.plan["sentences"] = lexicon().hard_sentences;
        }
        out.push_back(std::move(item.plan));
    }
    return out;
}

std::string generation_prompts_hash() { return lexicon().hash; }

}  // namespace memfail::suites::memfail_suite
