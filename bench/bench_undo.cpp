// SPDX-License-Identifier: MIT
// What a rolled-back session costs a store's retrievers: Retriever::undo_changes (a journal of the
// session's own changes taken back) against reload() (every row read back from SQLite and the
// vector index rebuilt), the way rollbacks were handled before. One BM25 and one embedding
// retriever (hashed text vectors; HNSW above the exact limit) share a database, as in `graph`.
//
//   build/<dir>/bin/bench_undo [--sizes 10000,100000] [--dim 384] [--repeats 3]
//
// Each repeat stores a session (20 rows added, embedded and indexed, 5 older vectors removed, as
// when `facts` retires memories), rolls it back, and times taking it back one way; the other way
// gets the same session. It prints medians and the reload/undo ratio measured in this run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <memfail/core/rng.hpp>
#include <memfail/memory/retriever.hpp>
#include <memfail/memory/text_embedder.hpp>
#include <memfail/store/database.hpp>

namespace {

using memfail::Rng;
namespace mem = memfail::memory;
namespace store = memfail::store;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t k_seed = 20261122;
constexpr int k_rows_per_session = 20;
constexpr int k_removed_per_session = 5;

template <class T>
T ok(memfail::Result<T> result, const char* what) {
    if (!result) {
        std::fprintf(stderr, "bench_undo: %s: %s\n", what, result.error().describe().c_str());
        std::exit(1);
    }
    if constexpr (!std::is_void_v<T>) return std::move(result).value();
}

void ok(memfail::Result<void> result, const char* what) {
    if (!result) {
        std::fprintf(stderr, "bench_undo: %s: %s\n", what, result.error().describe().c_str());
        std::exit(1);
    }
}

std::string sentence(Rng& rng) {
    static const std::vector<std::string> words = {
        "rain", "lisbon", "porto", "coffee", "sister", "works", "hiking", "piano", "allergic", "peanuts",
        "moved", "friday", "teacher", "garden", "kyoto", "ferry", "budget", "novel", "cello", "marathon"};
    std::string out;
    const auto length = rng.between(6, 16);
    for (std::int64_t i = 0; i < length; ++i) {
        if (!out.empty()) out += ' ';
        // A made-up word in one of four places keeps vectors apart, as names and numbers do.
        if (rng.chance(0.25)) {
            out += 'w';
            out += std::to_string(rng.between(0, 200000));
        } else {
            out += rng.pick(words);
        }
    }
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

[[noreturn]] void usage(const std::string& why, int code) {
    std::fprintf(code == 0 ? stdout : stderr,
                 "%s%susage: bench_undo [--sizes 10000,100000] [--dim 384] [--repeats 3]\n"
                 "Times taking back a rolled-back session: Retriever::undo_changes against reload().\n",
                 why.c_str(), why.empty() ? "" : "\n");
    std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::int64_t> sizes = {10000, 100000};
    int dim = 384;
    int repeats = 3;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") usage("", 0);
        if (i + 1 >= argc) usage("bench_undo: missing value for " + arg, 2);
        const std::string value = argv[++i];
        if (arg == "--sizes") {
            sizes.clear();
            std::stringstream in(value);
            for (std::string part; std::getline(in, part, ',');)
                if (!part.empty()) sizes.push_back(std::atoll(part.c_str()));
        } else if (arg == "--dim") {
            dim = std::atoi(value.c_str());
        } else if (arg == "--repeats") {
            repeats = std::atoi(value.c_str());
        } else {
            usage("bench_undo: unknown option " + arg, 2);
        }
    }
    if (sizes.empty() || dim < 8 || repeats < 1) usage("bench_undo: bad --sizes, --dim or --repeats", 2);
    std::sort(sizes.begin(), sizes.end());

    const auto dir = std::filesystem::temp_directory_path() / ("memfail-bench-undo-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto db = ok(store::Database::open((dir / "undo.sqlite").string()), "open");
    auto bm25 = ok(mem::Bm25Retriever::open(db), "open bm25");
    auto dense = ok(mem::EmbeddingRetriever::open(db, mem::make_hashed_text_embedder(dim)), "open dense");
    Rng rng(k_seed);
    std::int64_t rows = 0;
    std::printf("size      undo ms   reload ms   reload/undo   (medians of %d; one session: %d rows added, %d removed)\n",
                repeats, k_rows_per_session, k_removed_per_session);
    for (const std::int64_t size : sizes) {
        const auto build = Clock::now();
        while (rows < size) {
            auto txn = ok(store::Transaction::begin(db), "begin");
            for (int i = 0; i < 1000 && rows < size; ++i) {
                ++rows;
                const std::string text = sentence(rng);
                ok(bm25->add(rows, text), "add");
                ok(dense->add(rows, text), "add");
            }
            ok(dense->flush(), "flush");
            ok(txn.commit(), "commit");
        }
        std::fprintf(stderr, "  %lld rows indexed in %.1f s\n", static_cast<long long>(size), ms_since(build) / 1e3);
        std::vector<double> undo, reload;
        for (int r = 0; r < 2 * repeats; ++r) {
            const bool journaled = r % 2 == 0;
            mem::Retriever* const both[] = {bm25.get(), dense.get()};
            for (auto* retriever : both) retriever->begin_changes();
            {
                auto txn = ok(store::Transaction::begin(db), "begin");
                for (int i = 1; i <= k_rows_per_session; ++i) {
                    const std::string text = sentence(rng);
                    ok(bm25->add(rows + i, text), "add");
                    ok(dense->add(rows + i, text), "add");
                }
                ok(dense->flush(), "flush");
                for (int i = 0; i < k_removed_per_session; ++i) (void)ok(dense->remove(rng.between(1, rows)), "remove");
                // Dropped without commit: rolled back.
            }
            const auto start = Clock::now();
            for (auto* retriever : both) ok(journaled ? retriever->undo_changes() : retriever->reload(), "take back");
            (journaled ? undo : reload).push_back(ms_since(start));
            if (ok(bm25->count(), "count") != rows || ok(dense->count(), "count") != rows) {
                std::fprintf(stderr, "bench_undo: the rolled-back rows are still counted\n");
                return 1;
            }
        }
        std::printf("%-8lld %8.2f %11.1f %13.0f\n", static_cast<long long>(size), median(undo), median(reload),
                    median(reload) / std::max(median(undo), 1e-3));
        std::fflush(stdout);
    }
    std::filesystem::remove_all(dir);
    return 0;
}
