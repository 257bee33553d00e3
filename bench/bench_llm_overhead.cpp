// SPDX-License-Identifier: MIT
// Overhead of the LLM client stack: how close memfail's harness gets to the ideal wall time when
// the model server answers every call after a fixed delay. The stack is the one runs use,
// Metered(Cached(OpenAi)) with the cache off, against tools/fake-llm started in-process; a pool of
// `concurrency` threads issues the calls, as the run loop does.
//
//   build/<dir>/bin/bench_llm_overhead [--calls 400] [--repeats 5] [--delay-ms 50] [--concurrency 8,32]
//                                      [--case calls|run|all] [--run-delay-ms 100] [--run-probes 0]
//
// Case `calls`: prints, per concurrency, the median wall time over the repeats and its ratio to the
// ideal calls x delay / concurrency (1.00 = no overhead at all; the target is at most 1.15).
// Case `run`: a whole run (run::run_datasets) of `verbatim` over the five MemFail datasets (the first
// --run-probes probes of each, 0 = all) with answer and judge models on fake-llm answering every
// call after --run-delay-ms, at each concurrency; prints the wall time against the ideal
// max(calls x delay / concurrency, longest chain of dependent calls x delay), and the same run's
// memory side alone (no models) for scale. bench/README.md explains the ideal.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fake_llm.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/llm/cached_client.hpp>
#include <memfail/llm/llm_stack.hpp>
#include <memfail/llm/openai_client.hpp>
#include <memfail/llm/usage_ledger.hpp>
#include <memfail/run/runner.hpp>

#include <filesystem>
#include <unistd.h>

namespace {

using namespace memfail;
using Clock = std::chrono::steady_clock;

struct Settings {
    int calls = 400;
    int repeats = 5;
    int delay_ms = 50;
    std::vector<int> concurrency = {8, 32};
    std::string which = "all"; // calls | run | all
    int run_delay_ms = 100;
    int run_probes = 0; // per dataset; 0: all
};

[[noreturn]] void usage_exit() {
    std::fprintf(stderr, "usage: bench_llm_overhead [--calls N] [--repeats R] [--delay-ms D] [--concurrency 8,32]\n"
                         "                          [--case calls|run|all] [--run-delay-ms D] [--run-probes N]\n");
    std::exit(2);
}

Settings parse(int argc, char** argv) {
    Settings s;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) usage_exit();
        const std::string value = argv[++i];
        if (arg == "--calls") s.calls = std::atoi(value.c_str());
        else if (arg == "--repeats") s.repeats = std::atoi(value.c_str());
        else if (arg == "--delay-ms") s.delay_ms = std::atoi(value.c_str());
        else if (arg == "--case") s.which = value;
        else if (arg == "--run-delay-ms") s.run_delay_ms = std::atoi(value.c_str());
        else if (arg == "--run-probes") s.run_probes = std::atoi(value.c_str());
        else if (arg == "--concurrency") {
            s.concurrency.clear();
            std::stringstream in(value);
            for (std::string part; std::getline(in, part, ',');) s.concurrency.push_back(std::atoi(part.c_str()));
        } else {
            usage_exit();
        }
    }
    if (s.calls < 1 || s.repeats < 1 || s.delay_ms < 1 || s.concurrency.empty() || s.run_delay_ms < 1 ||
        s.run_probes < 0 || (s.which != "calls" && s.which != "run" && s.which != "all"))
        usage_exit();
    for (int c : s.concurrency)
        if (c < 1) usage_exit();
    return s;
}

llm::ChatRequest request_for(int i) {
    llm::ChatRequest request;
    request.role = llm::Role::answer;
    request.stage = "bench";
    request.model = "bench-model";
    request.messages = {{"system", "Answer from the memories below. Memories: the user owns a red bicycle."},
                        {"user", "Question number " + std::to_string(i) + ": what colour is the bicycle?"}};
    return request;
}

// Issues `calls` distinct chat calls from `threads` threads; returns the wall time in seconds.
double run_batch(llm::LlmClient& client, int calls, int threads, int offset, int& failures) {
    std::atomic<int> next{0};
    std::atomic<int> failed{0};
    const auto start = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            for (int i = next++; i < calls; i = next++) {
                if (!client.chat(request_for(offset + i))) ++failed;
            }
        });
    }
    for (auto& thread : pool) thread.join();
    failures += failed.load();
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// --- Case `run`: a whole run ------------------------------------------------------------------------

// A folder of its own for one run's results file and memory stores, removed afterwards.
struct ScratchDir {
    std::filesystem::path path;
    ScratchDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "memfail-bench-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) std::abort();
        path = pattern;
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

// One whole run of `verbatim` over `datasets` (k=5); with a server, answer and judge models on it
// at `concurrency`. Returns the wall time in seconds, or a negative number on failure.
double whole_run(const std::vector<run::LoadedDataset>& datasets, const fake_llm::FakeLlmServer* server,
                 int concurrency) {
    ScratchDir dir;
    run::RunConfig config;
    config.system_spec = "verbatim";
    config.ks = {5};
    config.quiet = true;
    config.results_path = (dir.path / "results.db").string();
    std::unique_ptr<llm::LlmStack> stack;
    if (server) {
        config.llm.base_url = server->base_url();
        config.llm.api_key_env = "MEMFAIL_BENCH_KEY";
        config.llm.answer_model = "taker";
        config.llm.judge_model = "judge";
        config.llm.concurrency = concurrency;
        config.llm.timeout_seconds = 60;
        config.llm.cache = "off";
    }
    const auto start = Clock::now();
    if (server) {
        auto made = llm::make_llm_stack(config.llm, config.results_path);
        if (!made) {
            std::fprintf(stderr, "bench_llm_overhead: %s\n", made.error().describe().c_str());
            return -1;
        }
        stack = std::make_unique<llm::LlmStack>(std::move(made).value());
    }
    auto outcome = run::run_datasets(config, datasets, run::factory_for_spec(config.system_spec), {}, {},
                                     stack ? stack->client.get() : nullptr);
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    if (!outcome) {
        std::fprintf(stderr, "bench_llm_overhead: run failed: %s\n", outcome.error().describe().c_str());
        return -1;
    }
    return wall;
}

int run_case(const Settings& settings) {
    ::setenv("MEMFAIL_BENCH_KEY", "bench-key", 1);
    auto loaded = run::load_datasets({"all"}, "", 42);
    if (!loaded) {
        std::fprintf(stderr, "bench_llm_overhead: %s\n", loaded.error().describe().c_str());
        return 1;
    }
    std::vector<run::LoadedDataset> datasets = std::move(loaded).value();
    std::size_t probes = 0;
    for (auto& d : datasets) {
        if (settings.run_probes > 0 && d.scenario.probes.size() > static_cast<std::size_t>(settings.run_probes)) {
            d.scenario.probes.resize(static_cast<std::size_t>(settings.run_probes));
            d.hash = data::scenario_hash(d.scenario);
        }
        probes += d.scenario.probes.size();
    }
    fake_llm::ServerOptions server_options;
    // Every call (answers, judge verdicts) gets the auto reply after the delay.
    server_options.script = {{"default", {{"delay_ms", settings.run_delay_ms}}}};
    server_options.threads = 2 * *std::max_element(settings.concurrency.begin(), settings.concurrency.end()) + 8;
    auto server = fake_llm::FakeLlmServer::start(server_options);
    if (!server) {
        std::fprintf(stderr, "bench_llm_overhead: %s\n", server.error().describe().c_str());
        return 1;
    }
    const double memory_side = whole_run(datasets, nullptr, 1);
    if (memory_side < 0) return 1;
    std::printf("\nwhole run: verbatim, k=5, %zu datasets, %zu probes, answer + judge models, delay=%d ms, cache off\n",
                datasets.size(), probes, settings.run_delay_ms);
    std::printf("memory side alone (no models): %.3f s\n", memory_side);
    std::printf("%-12s %8s %8s %10s %10s %10s %8s\n", "concurrency", "calls", "chain", "ideal s", "wall s",
                "wall-mem s", "ratio");
    int status = 0;
    for (int concurrency : settings.concurrency) {
        (*server)->reset();
        const double wall = whole_run(datasets, server->get(), concurrency);
        if (wall < 0) {
            status = 1;
            continue;
        }
        const auto stats = (*server)->stats();
        const int calls = stats["chat"].get<int>();
        // A lower bound on the longest chain of calls that must follow one another: a probe's
        // answer, then the judge's verdict on that answer. Against calls x delay / concurrency it
        // only matters for tiny runs.
        const int chain = 2;
        const double delay = settings.run_delay_ms / 1000.0;
        const double ideal = std::max(calls * delay / concurrency, chain * delay);
        std::printf("%-12d %8d %8d %10.3f %10.3f %10.3f %8.3f\n", concurrency, calls, chain, ideal, wall,
                    wall - memory_side, wall / ideal);
        std::fflush(stdout);
    }
    return status;
}

int calls_case(const Settings& settings) {
    fake_llm::ServerOptions server_options;
    server_options.script = {{"default", {{"delay_ms", settings.delay_ms}, {"reply", "It is red."}}}};
    server_options.threads = 2 * *std::max_element(settings.concurrency.begin(), settings.concurrency.end()) + 8;
    auto server = fake_llm::FakeLlmServer::start(server_options);
    if (!server) {
        std::fprintf(stderr, "bench_llm_overhead: %s\n", server.error().describe().c_str());
        return 1;
    }

    std::printf("calls=%d repeats=%d delay=%d ms (fake-llm in-process, Metered(Cached(OpenAi)), cache off)\n",
                settings.calls, settings.repeats, settings.delay_ms);
    std::printf("%-12s %12s %12s %12s %12s %8s\n", "concurrency", "ideal s", "median s", "min s", "max s", "ratio");
    int failures = 0;
    int offset = 0;
    for (int concurrency : settings.concurrency) {
        llm::ClientOptions options;
        options.base_url = (*server)->base_url();
        options.concurrency = concurrency;
        options.timeout_seconds = 30;
        auto openai = llm::make_openai_client(options);
        auto cache = llm::LlmCache::open(":memory:");
        if (!openai || !cache) {
            std::fprintf(stderr, "bench_llm_overhead: cannot build the client stack\n");
            return 1;
        }
        auto ledger = std::make_shared<llm::UsageLedger>();
        llm::MeteredClient client(
            std::make_shared<llm::CachedClient>(std::move(openai).value(), std::move(cache).value(), llm::CacheMode::off),
            ledger);
        // Warm-up: open the connections once, as a run's first calls do.
        run_batch(client, concurrency, concurrency, offset, failures);
        offset += concurrency;
        std::vector<double> walls;
        for (int r = 0; r < settings.repeats; ++r) {
            walls.push_back(run_batch(client, settings.calls, concurrency, offset, failures));
            offset += settings.calls;
        }
        std::sort(walls.begin(), walls.end());
        const double median = walls[walls.size() / 2];
        const double ideal = settings.calls * (settings.delay_ms / 1000.0) / concurrency;
        std::printf("%-12d %12.3f %12.3f %12.3f %12.3f %8.3f\n", concurrency, ideal, median, walls.front(),
                    walls.back(), median / ideal);
        std::fflush(stdout);
    }
    const auto stats = (*server)->stats();
    std::printf("server: %d requests, peak in flight %d; client failures: %d\n", stats["requests"].get<int>(),
                stats["peak_in_flight"].get<int>(), failures);
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const Settings settings = parse(argc, argv);
    int status = 0;
    if (settings.which != "run") status = calls_case(settings);
    if (settings.which != "calls" && run_case(settings) != 0) status = 1;
    return status;
}
