// SPDX-License-Identifier: MIT
// Overhead of the LLM client stack: how close memfail's harness gets to the ideal wall time when
// the model server answers every call after a fixed delay. The stack is the one runs use,
// Metered(Cached(OpenAi)) with the cache off, against tools/fake-llm started in-process; a pool of
// `concurrency` threads issues the calls, as the run loop does.
//
//   build/<dir>/bin/bench_llm_overhead [--calls 400] [--repeats 5] [--delay-ms 50] [--concurrency 8,32]
//
// Prints, per concurrency, the median wall time over the repeats and its ratio to the ideal
// calls x delay / concurrency (1.00 = no overhead at all; the target is at most 1.15).
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
#include <memfail/llm/cached_client.hpp>
#include <memfail/llm/openai_client.hpp>
#include <memfail/llm/usage_ledger.hpp>

namespace {

using namespace memfail;
using Clock = std::chrono::steady_clock;

struct Settings {
    int calls = 400;
    int repeats = 5;
    int delay_ms = 50;
    std::vector<int> concurrency = {8, 32};
};

[[noreturn]] void usage_exit() {
    std::fprintf(stderr, "usage: bench_llm_overhead [--calls N] [--repeats R] [--delay-ms D] [--concurrency 8,32]\n");
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
        else if (arg == "--concurrency") {
            s.concurrency.clear();
            std::stringstream in(value);
            for (std::string part; std::getline(in, part, ',');) s.concurrency.push_back(std::atoi(part.c_str()));
        } else {
            usage_exit();
        }
    }
    if (s.calls < 1 || s.repeats < 1 || s.delay_ms < 1 || s.concurrency.empty()) usage_exit();
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

}  // namespace

int main(int argc, char** argv) {
    const Settings settings = parse(argc, argv);
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
