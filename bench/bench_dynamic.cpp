// SPDX-License-Identifier: MIT
// Ingest and retrieval of a generated long-horizon user (the dynamic suite) beside the same figures
// for the five MemFail datasets, measured in the same run, into `verbatim` (BM25) and optionally
// `verbatim:retriever=embed` (hashed vectors). Per dataset: its exact token count (cl100k_base, when
// the rank files are installed), memories stored, store wall time and memories/s, the process's peak
// resident memory after storing, and retrieval latency (median, p99) of its probes' questions at
// k=10, asked at the end (the full store). The ratio row divides the dynamic user's figures by the
// MemFail datasets' pooled ones. Not a test: run `build/release/bin/bench_dynamic` (see bench/README.md).
#include <memfail/core/text.hpp>
#include <memfail/data/model.hpp>
#include <memfail/memory/memory_system.hpp>
#include <memfail/suites/suite.hpp>
#include <memfail/text/tokenizer.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace mf = memfail;
using Clock = std::chrono::steady_clock;

namespace {

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto index = static_cast<std::size_t>(std::ceil(p * double(v.size()))) - 1;
    return v[std::min(index, v.size() - 1)];
}

double peak_rss_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

struct Row {
    std::string name;
    std::size_t memories = 0;
    std::int64_t tokens = -1;
    double store_s = 0;
    double rss_mib = 0;
    std::vector<double> retrieve_us;
};

struct Options {
    double scale = 1.0;
    std::vector<std::string> specs = {"verbatim"};
    int repeats = 3;  // each question asked this many times; latencies are per call
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--scale" && i + 1 < argc) o.scale = std::atof(argv[++i]);
        else if (a == "--embed") o.specs.push_back("verbatim:retriever=embed");
        else if (a == "--repeats" && i + 1 < argc) o.repeats = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr,
                         "usage: bench_dynamic [--scale S] [--embed] [--repeats N]\n"
                         "  --scale S    the dynamic user's scale (default 1: about 2.7M tokens)\n"
                         "  --embed      also verbatim:retriever=embed (hashed vectors; slow to build at 30k)\n"
                         "  --repeats N  times each probe question is asked (default 3)\n");
            std::exit(a == "--help" || a == "-h" ? 0 : 2);
        }
    }
    return o;
}

Row measure(const std::string& spec, const std::string& name, const std::vector<const mf::data::Scenario*>& scenarios,
            const mf::text::Tokenizer* tokenizer, int repeats) {
    Row row;
    row.name = name;
    if (tokenizer) {
        row.tokens = 0;
        for (const auto* s : scenarios)
            for (const auto& session : s->sessions)
                for (const auto& m : session.messages) row.tokens += static_cast<std::int64_t>(tokenizer->count(m.content));
    }
    for (const auto* s : scenarios) {
        const auto dir = std::filesystem::temp_directory_path() /
                         ("bench-dynamic-" + std::to_string(::getpid()) + "-" + s->id);
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        mf::memory::SystemContext context;
        context.storage_dir = dir.string();
        auto made = mf::memory::make_memory_system(spec, context);
        if (!made) {
            std::fprintf(stderr, "%s: %s\n", spec.c_str(), made.error().describe().c_str());
            std::exit(1);
        }
        auto system = std::move(made).value();
        const auto start = Clock::now();
        for (const auto& session : s->sessions) {
            auto stored = system->store_conversation(session);
            if (!stored) {
                std::fprintf(stderr, "%s: storing %s failed: %s\n", spec.c_str(), session.id.c_str(),
                             stored.error().describe().c_str());
                std::exit(1);
            }
        }
        row.store_s += std::chrono::duration<double>(Clock::now() - start).count();
        row.rss_mib = std::max(row.rss_mib, peak_rss_mib());
        auto all = system->all_memories();
        row.memories += all ? all->size() : 0;
        for (int r = 0; r < repeats; ++r)
            for (const auto& p : s->probes) {
                const auto t0 = Clock::now();
                auto hits = system->retrieve_memories(p.question, {}, 10);
                row.retrieve_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
                if (!hits) std::exit(1);
            }
        system.reset();
        std::filesystem::remove_all(dir);
    }
    return row;
}

void print(const Row& r) {
    std::printf("%-22s %9zu %10s %8.2f %10.0f %8.0f %9.1f %9.1f\n", r.name.c_str(), r.memories,
                r.tokens < 0 ? "-" : std::to_string(r.tokens).c_str(), r.store_s,
                r.store_s > 0 ? static_cast<double>(r.memories) / r.store_s : 0.0, r.rss_mib,
                percentile(r.retrieve_us, 0.5), percentile(r.retrieve_us, 0.99));
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    auto tokenizer = mf::text::load_tokenizer("cl100k_base");
    const mf::text::Tokenizer* tok = tokenizer ? tokenizer->get() : nullptr;
    if (!tok) std::fprintf(stderr, "note: no cl100k_base rank files; token counts are left out\n");

    // The MemFail datasets first, then the user: the peak RSS column is the process's high-water
    // mark, so the user's figure includes whatever the smaller datasets left behind, never less.
    const mf::suites::Suite* memfail = mf::suites::find_suite("memfail");
    const mf::suites::Suite* dynamic = mf::suites::find_suite("dynamic");
    std::vector<mf::data::Scenario> memfail_data;
    for (const auto& name : memfail->dataset_names()) {
        auto made = memfail->generate(name, {42, {}});
        if (!made) return 1;
        for (auto& s : *made) memfail_data.push_back(std::move(s));
    }
    char scale[32];
    std::snprintf(scale, sizeof scale, "%g", o.scale);
    const auto gen_start = Clock::now();
    auto user = dynamic->generate("dynamic", {42, {{"scale", scale}}});
    if (!user) {
        std::fprintf(stderr, "%s\n", user.error().describe().c_str());
        return 1;
    }
    const double gen_s = std::chrono::duration<double>(Clock::now() - gen_start).count();
    std::printf("dynamic user: scale %s, generated in %.2f s; k=10, each probe question asked %d times\n\n", scale, gen_s,
                o.repeats);

    for (const auto& spec : o.specs) {
        std::printf("%s\n%-22s %9s %10s %8s %10s %8s %9s %9s\n", spec.c_str(), "dataset", "memories", "tokens",
                    "store s", "mem/s", "rss MiB", "p50 us", "p99 us");
        std::vector<const mf::data::Scenario*> all_memfail;
        for (const auto& s : memfail_data) all_memfail.push_back(&s);
        const Row base = measure(spec, "memfail (5 datasets)", all_memfail, tok, o.repeats);
        print(base);
        const Row dyn = measure(spec, "dynamic (1 user)", {&user->front()}, tok, o.repeats);
        print(dyn);
        const double base_rate = base.store_s > 0 ? static_cast<double>(base.memories) / base.store_s : 0;
        const double dyn_rate = dyn.store_s > 0 ? static_cast<double>(dyn.memories) / dyn.store_s : 0;
        std::printf("%-22s %9.2f %10s %8s %10.2f %8s %9.2f %9.2f\n\n", "ratio dynamic/memfail",
                    base.memories ? static_cast<double>(dyn.memories) / static_cast<double>(base.memories) : 0.0,
                    base.tokens > 0 ? (std::to_string(static_cast<double>(dyn.tokens) / static_cast<double>(base.tokens)).substr(0, 5)).c_str() : "-",
                    "", base_rate > 0 ? dyn_rate / base_rate : 0.0, "",
                    percentile(base.retrieve_us, 0.5) > 0 ? percentile(dyn.retrieve_us, 0.5) / percentile(base.retrieve_us, 0.5) : 0.0,
                    percentile(base.retrieve_us, 0.99) > 0 ? percentile(dyn.retrieve_us, 0.99) / percentile(base.retrieve_us, 0.99) : 0.0);
    }
    return 0;
}
