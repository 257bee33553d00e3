// SPDX-License-Identifier: MIT
// memfail run: store every dataset into a memory system, retrieve for every probe at every k, grade.
#include <commands/cli.hpp>
#include <commands/common.hpp>
#include <commands/llm_options.hpp>

#include <memfail/llm/llm_stack.hpp>
#include <memfail/store/leaky_sql.hpp>
#include <memfail/llm/preflight.hpp>
#include <memfail/store/results_db.hpp>

#include <memfail/run/dataset_source.hpp>
#include <memfail/run/runner.hpp>

#include <memfail/suites/suite.hpp>

#include <CLI/CLI.hpp>
#include <csignal>
#include <memory>

#include <signal.h>

namespace memfail::cli {

namespace {
struct RunOptions {
    std::string system = "verbatim";
    std::vector<std::string> datasets = {"all"};
    std::string ks;  // empty: the protocol's default (memfail 1,3,5,10; paper 5,10,15)
    std::string out = "results.db";
    std::string data_dir;
    unsigned long long seed = 42;
    bool resume = false;
    long long run_id = 0;
    bool quiet = false;
    std::string grader = "auto";
    bool store_replies = false;
    bool retry_errors = false;
    double max_error_rate = 0.05;
    std::string name;
    std::size_t limit = 0;
    std::string protocol = "memfail";
    std::string modes;
    std::string shard;
    std::vector<std::string> settings;  // --set KEY=VALUE
    LlmOptions llm;
};

// One line per role: what the run cost and how much the cache saved.
void print_llm_usage(const std::string& results_path, std::int64_t run_id, const llm::LlmStack& stack) {
    auto db = store::ResultsDb::open(results_path);
    if (!db) return;
    auto usage = db->llm_usage(run_id);
    if (!usage) return;
    for (const auto& u : *usage)
        std::printf("  llm %-6s %lld calls (%lld from cache), %lld prompt + %lld completion tokens, %lld errors, "
                    "%lld retries, p50 %.0f ms, p95 %.0f ms\n",
                    u.role.c_str(), static_cast<long long>(u.calls), static_cast<long long>(u.cache_hits),
                    static_cast<long long>(u.prompt_tokens), static_cast<long long>(u.completion_tokens),
                    static_cast<long long>(u.errors), static_cast<long long>(u.retries), u.p50_ms, u.p95_ms);
    std::printf("  llm cache: %s\n", stack.cache_path.c_str());
}
// The signal that asked a run to stop (SIGINT or SIGTERM), 0 while none has.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_run_stop_signal(int signal) { g_stop_signal = signal; }

// A run with more rows in error than --max-error-rate allows has failed, whatever it printed: say
// so, with the commonest causes, and exit 1.
void fail_on_errors(const std::string& results_path, std::int64_t run_id, double max_rate) {
    auto db = value_or_fatal(store::ResultsDb::open(results_path));
    const auto summary = value_or_fatal(db.error_summary(run_id));
    if (summary.rows == 0 || summary.errors == 0) return;
    const double rate = static_cast<double>(summary.errors) / static_cast<double>(summary.rows);
    if (rate <= max_rate) {
        std::fprintf(stderr, "memfail: note: %lld of %lld probe x k rows ended in error (see `memfail report`)\n",
                     static_cast<long long>(summary.errors), static_cast<long long>(summary.rows));
        return;
    }
    std::fprintf(stderr,
                 "memfail: error: run %lld: %lld of %lld probe x k rows (%.1f%%) ended in error, more than "
                 "--max-error-rate %.3g allows; the commonest causes:\n",
                 static_cast<long long>(run_id), static_cast<long long>(summary.errors),
                 static_cast<long long>(summary.rows), 100.0 * rate, max_rate);
    for (const auto& [cause, count] : summary.causes)
        std::fprintf(stderr, "  %6lld  %s\n", static_cast<long long>(count), cause.c_str());
    std::fprintf(stderr, "Fix the cause, then grade exactly those rows again with the same command and --retry-errors.\n");
    throw ExitStatus{1};
}

// A run that could not see its system says so where it ends, as the report does above its table.
// The `none` baseline stores nothing by design.
void warn_if_blind(const std::string& results_path, std::int64_t run_id, const std::string& system) {
    if (store::is_no_memory_spec(system)) return;
    auto db = value_or_fatal(store::ResultsDb::open(results_path));
    const auto seen = value_or_fatal(db.run_visibility(run_id));
    if (seen.stored_nothing())
        std::fprintf(stderr, "memfail: warning: run %lld: the system stored nothing (every checkpoint's store was "
                             "empty): its not_stored counts are its silence, not memory failures\n",
                     static_cast<long long>(run_id));
    else if (seen.served_nothing())
        std::fprintf(stderr, "memfail: warning: run %lld: the system served no memory to any probe at any k\n",
                     static_cast<long long>(run_id));
}

}  // namespace

void add_run_command(CLI::App& app, std::function<void()>& action) {
    auto opts = std::make_shared<RunOptions>();
    CLI::App* cmd = app.add_subcommand(
        "run", "Store datasets into a memory system, retrieve top-k for every probe, and grade each "
               "evidence fact: stored, faithful, retrieved; with --answer-model the answer too (the full taxonomy)");
    cmd->add_option("--system,-s", opts->system,
                    "Memory system spec, e.g. verbatim:chunk=sentence,retriever=hashed (see `memfail ls systems`)")
        ->capture_default_str();
    cmd->add_option("--datasets,-d", opts->datasets,
                    "Dataset names (all, conditional_facts_easy, ...) or JSONL files; comma-separated or repeated")
        ->capture_default_str();
    cmd->add_option("--k", opts->ks,
                    "Retrieval depths to grade, comma-separated [default: 1,3,5,10; with --protocol paper 5,10,15]");
    cmd->add_option("--out,-o", opts->out, "Results database (SQLite); created when missing, appended to otherwise")
        ->capture_default_str();
    cmd->add_option("--data-dir", opts->data_dir,
                    "Folder with <dataset>.jsonl files (from `memfail datasets generate`); named datasets "
                    "missing there are generated in memory; the folder must exist");
    cmd->add_option("--seed", opts->seed, "Seed for datasets generated in memory")->capture_default_str();
    cmd->add_flag("--resume", opts->resume,
                  "Continue the newest unfinished run with the same system, datasets, k list, code version, grader and models");
    cmd->add_option("--run-id", opts->run_id, "With --resume or --retry-errors: the run to continue");
    cmd->add_option("--name", opts->name,
                    "What tables, charts and exports call this run (default: its system spec); recorded, not part "
                    "of what --resume matches");
    cmd->add_option("--limit", opts->limit,
                    "Only the first N probes of each dataset (every session is still stored): a quick try; "
                    "recorded, and part of what --resume matches")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--max-error-rate", opts->max_error_rate,
                    "A run whose share of probe x k rows in error exceeds this exits 1 with the causes (the rows stay "
                    "recorded; --retry-errors grades them again), and so does --resume of it once finished")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    cmd->add_flag("--retry-errors", opts->retry_errors,
                  "Grade again, in place, exactly the probes of the run (--run-id, else the newest with the same "
                  "configuration, finished or not) that ended in error; nothing else is redone");
    cmd->add_flag("--quiet,-q", opts->quiet, "No progress on stderr");
    cmd->add_option("--grader", opts->grader,
                    "auto (llm when --judge-model is set, else rules) | rules | llm | both (both: the judge decides, "
                    "the rules are compared with it stage by stage)")
        ->capture_default_str();
    cmd->add_flag("--store-replies", opts->store_replies,
                  "The test-taker replies to every storage turn and the system stores the reply too (needs --answer-model)");
    cmd->add_option("--protocol", opts->protocol,
                    "memfail (its own exact-or-unsure grading) | paper (the MemFail paper's evaluation: per-dataset "
                    "judge prompts deciding every stage, storage turns answered with retrieved memories shown, "
                    "answers restating the memories used, misleading Persona questions graded through their essay) | "
                    "locomo (LoCoMo's own: its short-answer prompt with each memory's date, the adversarial category "
                    "as its two-option choice; LoCoMo datasets only) | longmemeval (LongMemEval's own: its "
                    "history-chats prompt with session and current dates, its per-question-type judge prompts; "
                    "LongMemEval datasets only); docs/PROTOCOLS.md")
        ->check(CLI::IsMember(suites::protocol_names()))
        ->capture_default_str();
    cmd->add_option("--modes", opts->modes,
                    "Run each scenario in several modes, comma-separated: native (the system), no_memory (nothing "
                    "remembered: what the model invents), oracle (WRIT's: the gold current state handed to the answerer "
                    "whole, no retrieval), oracle_retrieval (the gold facts as a memory that retrieves the top k). The "
                    "report shows the gaps between them (docs/WRIT.md) [default: native]");
    cmd->add_option("--shard", opts->shard,
                    "I/N: run only the I-th of N disjoint parts of the work (by scenario, balanced by size, the "
                    "same split in every part), into this part's own --out; join the parts with `memfail merge`. "
                    "A part that dies is rerun with --resume (README, \"Sweeps across machines\")");
    cmd->add_option("--set", opts->settings,
                    "KEY=VALUE (repeatable): a grading setting, recorded in the run and part of what --resume "
                    "matches. writ.structured_threshold=F (0 to 1): every structured rubric passes at this share of "
                    "its elements instead of its own (WRIT's scenarios: 0.8, WRIT's rule; 1.0 asks for all)");
    opts->llm.add_to(*cmd);
    cmd->callback([opts, &action] {
        action = [opts] {
            run::RunConfig config;
            config.system_spec = opts->system;
            config.datasets = parse_name_list(opts->datasets);
            config.protocol = opts->protocol;
            for (const std::string& setting : opts->settings) {
                const auto eq = setting.find('=');
                if (eq == std::string::npos || eq == 0)
                    throw Fatal(make_error(ErrorKind::invalid_input,
                                           "bad setting '" + setting + "': expected KEY=VALUE (e.g. "
                                           "writ.structured_threshold=1.0)",
                                           "--set"));
                config.settings[setting.substr(0, eq)] = setting.substr(eq + 1);
            }
            if (!opts->modes.empty()) config.modes = parse_name_list({opts->modes});
            config.ks = parse_int_list(
                !opts->ks.empty() ? opts->ks : config.protocol == "paper" ? std::string("5,10,15") : std::string("1,3,5,10"),
                "--k");
            config.results_path = opts->out;
            config.data_dir = opts->data_dir;
            config.seed = opts->seed;
            config.resume = opts->resume || opts->run_id != 0 || opts->retry_errors;
            config.retry_errors = opts->retry_errors;
            config.name = opts->name;
            config.limit = opts->limit;
            config.resume_run_id = opts->run_id;
            config.llm = opts->llm.resolve();
            config.grader = opts->grader;
            config.store_replies = opts->store_replies;
            if (!opts->shard.empty()) config.shard = value_or_fatal(run::parse_shard(opts->shard));
            const std::string grader = value_or_fatal(run::resolve_grader(config));
            const bool wants_llm = config.llm.uses_llm() || grader != "rules";
            // Build the system once in memory before loading data or writing anything, so a typo in
            // the spec fails at once and leaves no results file behind.
            memory::SystemContext check;
            check.services.model = config.llm.system_model;
            check.services.embed_model = config.llm.embed_model;
            value_or_fatal(memory::make_memory_system(config.system_spec, check));
            // A part of a sharded run loads in full only the scenarios it runs.
            auto datasets = value_or_fatal(
                config.shard.active() ? run::load_datasets_for_shard(config.datasets, config.data_dir, config.seed,
                                                                     config.limit, config.modes, config.shard)
                                      : run::load_datasets(config.datasets, config.data_dir, config.seed));
            run::ProgressSink sink;
            if (!opts->quiet) sink = progress_line;
            std::optional<llm::LlmStack> stack;
            if (wants_llm) stack = value_or_fatal(llm::make_llm_stack(config.llm, config.results_path));
            // Before any work: one tiny request to each configured model, so a wrong URL, key or
            // model fails here in seconds (exit 3) rather than as an error row per probe.
            if (stack && config.llm.preflight && config.llm.uses_llm()) {
                const auto checks = value_or_fatal(llm::preflight(*stack->preflight, config.llm));
                for (const auto& c : checks) {
                    if (!c.note.empty())
                        std::fprintf(stderr, "memfail: warning: preflight: the %s model '%s': %s\n",
                                     std::string(llm::role_name(c.role)).c_str(), c.model.c_str(), c.note.c_str());
                    else if (sink)
                        sink("preflight: the " + std::string(llm::role_name(c.role)) + " model '" + c.model +
                             "' answers at " + stack->client->identity() +
                             (c.cache_hit ? " (cached)" : " (" + std::to_string(c.latency_micros / 1000) + " ms)"));
                }
            }
            // SIGINT and SIGTERM stop the run between probes: what is recorded stays, the run is
            // marked interrupted, and --resume continues it.
            struct sigaction stop = {};
            stop.sa_handler = on_run_stop_signal;
            sigemptyset(&stop.sa_mask);
            ::sigaction(SIGINT, &stop, nullptr);
            ::sigaction(SIGTERM, &stop, nullptr);
            config.keep_going = [] { return g_stop_signal == 0; };
            auto outcome = value_or_fatal(run::run_datasets(config, datasets, run::factory_for_spec(config.system_spec), sink,
                                                            {}, stack ? stack->client.get() : nullptr));
            if (outcome.stopped && g_stop_signal != 0) {
                const int signal = static_cast<int>(g_stop_signal);
                auto db = value_or_fatal(store::ResultsDb::open(config.results_path));
                value_or_fatal(db.finish_run(outcome.run_id, "interrupted",
                                             std::string("stopped by ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") +
                                                 "; --resume continues it"));
                std::fprintf(stderr,
                             "memfail: run %lld interrupted after %zu probe x k; what was recorded is kept, and the "
                             "same command with --resume continues it\n",
                             static_cast<long long>(outcome.run_id), outcome.probes_graded);
                throw ExitStatus{128 + signal};
            }
            if (outcome.already_finished) {
                std::printf("run %lld already finished: nothing to resume (results in %s; `memfail report %s`)\n",
                            static_cast<long long>(outcome.run_id), config.results_path.c_str(),
                            config.results_path.c_str());
                // A finished run that failed --max-error-rate still has: resuming it changes nothing,
                // so it exits as the run did (1, the same causes), never 0.
                fail_on_errors(config.results_path, outcome.run_id, opts->max_error_rate);
                return;
            }
            if (config.retry_errors)
                std::printf("run %lld: %lld probe x k rows in error graded again\n",
                            static_cast<long long>(outcome.run_id), static_cast<long long>(outcome.retried));
            std::printf("run %lld %s: %zu probe x k graded%s; results in %s (memory stores in %s)\n",
                        static_cast<long long>(outcome.run_id), outcome.resumed ? "resumed" : "finished",
                        outcome.probes_graded,
                        outcome.probes_skipped ? (", " + std::to_string(outcome.probes_skipped) + " already recorded").c_str() : "",
                        config.results_path.c_str(), run::memory_dir_for(config.results_path, outcome.run_id).c_str());
            if (stack) print_llm_usage(config.results_path, outcome.run_id, *stack);
            warn_if_blind(config.results_path, outcome.run_id, config.system_spec);
            fail_on_errors(config.results_path, outcome.run_id, opts->max_error_rate);
        };
    });
}

}  // namespace memfail::cli
