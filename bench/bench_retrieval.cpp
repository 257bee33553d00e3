// SPDX-License-Identifier: MIT
// Ingest throughput and retrieval latency of the verbatim system with its BM25 and hashed
// retrievers, at 10k and 100k memories (1M with MEMFAIL_BENCH_LARGE=1). The corpus is synthetic:
// sentences drawn from a fixed vocabulary with a Zipf law, under a fixed seed, so runs compare.
//
//   build/<dir>/bin/bench_retrieval [--benchmark_filter=...]
//   MEMFAIL_BENCH_SIZES=10000,300000 build/<dir>/bin/bench_retrieval     # other sizes
//
// After the Google Benchmark report it prints a summary table: ingest memories/s, retrieval
// latency p50 (the median) and p99, recall@10 of the memory each query was made from, and the
// hashed/bm25 ratio of each figure measured in this same run.
//
// A second table measures the vector index alone on the same hashed vectors (no SQLite, no text
// handling): the column scan the hashed retrievers use ("columns") against the HNSW graph they used
// before 2026-11-26 and that model embeddings still use ("hnsw": int8 codes, M=32, ef by size,
// float re-scoring), with recall@10 of the source memory and against exact search, and the
// describe() of what served. The graph builds at about 1,700 vectors/s, so at 1M its case takes
// 10 minutes (filter it out with --benchmark_filter='index/columns' for a quick run).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include <ctime>
#include <thread>

#include <benchmark/benchmark.h>

#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/memory/embedder.hpp>
#include <memfail/memory/memory_system.hpp>
#include <memfail/memory/vector_index.hpp>

namespace {

using memfail::Rng;
using memfail::data::Message;
using memfail::data::Session;
namespace mem = memfail::memory;

constexpr std::uint64_t k_seed = 20260301;
constexpr int k_messages_per_session = 50;
constexpr int k_queries = 2000;
constexpr int k_top_k = 10;
constexpr std::size_t k_vocabulary = 20000;
// Content words follow Zipf's law 1/(rank + offset). In English the first ~100 ranks are function
// words, which the retrievers drop; the offset removes that head so the commonest content word is
// about 0.3% of content tokens, as words like "time" are in real text. Without it the top word
// would sit in half of all memories and every query would score half the store.
constexpr double k_zipf_offset = 50;

// Real words give the porter stemmer and character n-grams something familiar to chew on; made-up
// syllable words widen the vocabulary to the size of a long chat history.
const std::vector<std::string> k_base_words = {
    "garden", "coffee", "rain", "sister", "brother", "mother", "father", "dog", "cat", "piano",
    "guitar", "cello", "lisbon", "porto", "glasgow", "kyoto", "train", "flight", "hotel", "beach",
    "mountain", "river", "forest", "market", "bakery", "bread", "cheese", "tomato", "pepper",
    "curry", "noodle", "dumpling", "birthday", "wedding", "meeting", "deadline", "budget", "report",
    "project", "manager", "doctor", "dentist", "teacher", "student", "lecture", "exam", "novel",
    "poem", "painting", "museum", "concert", "festival", "holiday", "winter", "summer", "spring",
    "autumn", "morning", "evening", "weekend", "monday", "friday", "bicycle", "scooter", "car",
    "bus", "ferry", "apartment", "kitchen", "balcony", "window", "sofa", "lamp", "blanket",
    "sweater", "jacket", "boots", "umbrella", "backpack", "laptop", "phone", "camera", "printer",
    "allergy", "peanut", "gluten", "vegetarian", "marathon", "swimming", "climbing", "yoga",
    "tennis", "football", "chess", "puzzle", "recipe", "oven", "kettle", "teapot", "mug", "plant",
    "orchid", "cactus", "tulip", "rose", "neighbour", "colleague", "friend", "cousin", "aunt",
    "uncle", "grandmother", "nephew", "niece", "wallet", "passport", "ticket", "invoice", "salary",
    "promotion", "interview", "contract", "landlord", "rent", "mortgage", "insurance", "pharmacy",
    "medicine", "headache", "fever", "vaccine", "appointment", "haircut", "library", "bookshop",
    "journal", "diary", "letter", "parcel", "delivery", "storm", "thunder", "snow", "sunshine",
    "octopus", "aquarium", "biologist", "engineer", "architect", "chef", "pilot", "nurse",
    "lawyer", "violin", "drums", "choir", "opera", "ballet", "theatre", "cinema", "documentary",
    "podcast", "newsletter", "spreadsheet", "presentation", "conference", "workshop", "hiking",
    "camping", "fishing", "sailing", "kayak", "tent", "lantern", "compass", "map", "island",
    "village", "city", "harbour", "bridge", "tower", "castle", "cathedral", "garage", "workshop",
    "hammer", "paint", "ladder", "fence", "hedge", "lawn", "strawberry", "blueberry", "lemon",
    "ginger", "honey", "chocolate", "vanilla", "cinnamon", "espresso", "smoothie", "lemonade",
};

const std::vector<std::string> k_function_words = {
    "the", "a", "to", "of", "and", "in", "on", "with", "for", "at", "my", "her", "his", "is",
    "was", "we", "they", "after", "before", "because", "really", "every", "last", "next"};

std::vector<std::string> make_vocabulary(Rng rng) {
    static const std::vector<std::string> onsets = {"b", "br", "c", "d", "f", "g", "gl", "k", "l",
                                                    "m", "n", "p", "pr", "r", "s", "st", "t",
                                                    "tr", "v", "z"};
    static const std::vector<std::string> vowels = {"a", "e", "i", "o", "u", "ai", "ou", "ee"};
    static const std::vector<std::string> codas = {"", "n", "r", "s", "l", "m", "nd", "st", "x"};
    std::vector<std::string> words = k_base_words;
    std::set<std::string> seen(words.begin(), words.end());
    while (words.size() < k_vocabulary) {
        std::string w;
        const auto syllables = rng.between(2, 3);
        for (std::int64_t s = 0; s < syllables; ++s) w += rng.pick(onsets) + rng.pick(vowels);
        w += rng.pick(codas);
        if (seen.insert(w).second) words.push_back(std::move(w));
    }
    rng.shuffle(words);  // so Zipf ranks mix real and made-up words
    return words;
}

// "b17" and the like. (Spelled out because GCC 12 warns falsely on "b" + std::to_string(...).)
std::string numbered(char prefix, std::size_t n) {
    std::string out(1, prefix);
    out += std::to_string(n);
    return out;
}

struct Corpus {
    std::vector<Session> sessions;
    std::vector<std::string> queries;
    std::vector<std::string> query_targets;  // memory id each query was made from
    std::size_t memories = 0;
};

Corpus make_corpus(std::size_t memories) {
    Rng rng(k_seed);
    const std::vector<std::string> vocabulary = make_vocabulary(rng.fork("vocabulary"));
    // Zipf weights, sampled through the cumulative sum.
    std::vector<double> cumulative(vocabulary.size());
    double total = 0;
    for (std::size_t r = 0; r < vocabulary.size(); ++r)
        cumulative[r] = total += 1.0 / (double(r + 1) + k_zipf_offset);
    Rng words_rng = rng.fork("sentences");
    auto content_word = [&]() -> const std::string& {
        const double u = words_rng.unit() * total;
        const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
        return vocabulary[std::min<std::size_t>(it - cumulative.begin(), vocabulary.size() - 1)];
    };

    Corpus corpus;
    corpus.memories = memories;
    std::vector<std::vector<std::string>> content(memories);
    for (std::size_t i = 0; i < memories; ++i) {
        if (i % k_messages_per_session == 0)
            corpus.sessions.push_back({numbered('s', corpus.sessions.size()),
                                       "2026-03-01T09:00:00Z", {}});
        std::string sentence;
        const auto length = words_rng.between(8, 18);
        for (std::int64_t w = 0; w < length; ++w) {
            std::string word;
            if (words_rng.chance(0.35)) {
                word = words_rng.pick(k_function_words);
            } else {
                word = content_word();
                content[i].push_back(word);
            }
            if (sentence.empty()) {
                sentence = memfail::text::capitalize(word);
            } else {
                sentence += ' ';
                sentence += word;
            }
        }
        sentence += '.';
        const std::string id = numbered('b', i);
        Message message;  // by member, so fields Message gains later need no edit here
        message.id = id;
        message.role = i % 2 == 0 ? "user" : "assistant";
        message.content = std::move(sentence);
        corpus.sessions.back().messages.push_back(std::move(message));
    }

    // Each query restates a few content words of one memory, in another order.
    Rng query_rng = rng.fork("queries");
    while (corpus.queries.size() < k_queries) {
        const std::size_t target = query_rng.below(memories);
        std::vector<std::string> words = content[target];
        if (words.size() < 3) continue;
        query_rng.shuffle(words);
        words.resize(std::min<std::size_t>(words.size(), 4));
        corpus.queries.push_back("What did I say about " + memfail::text::join(words, " ") + "?");
        corpus.query_targets.push_back(numbered('b', target) + "#0");
    }
    return corpus;
}

struct Figures {
    double ingest_per_s = 0;
    std::vector<double> latencies_us;
    std::vector<double> cpu_us;  // the same searches in the thread's CPU time
    double recall = 0;
};

// The 2 cores are shared: a query preempted by another job shows in wall time, not in CPU time,
// so p99 is printed in both.
double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}


std::map<std::size_t, std::unique_ptr<Corpus>> g_corpora;
std::map<std::pair<std::string, std::size_t>, Figures> g_figures;
std::map<std::pair<std::string, std::size_t>, std::unique_ptr<mem::MemorySystem>> g_systems;
std::vector<std::filesystem::path> g_dirs;

const Corpus& corpus_of(std::size_t size) {
    auto& slot = g_corpora[size];
    if (!slot) slot = std::make_unique<Corpus>(make_corpus(size));
    return *slot;
}

std::filesystem::path fresh_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "memfail-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    g_dirs.emplace_back(pattern);
    return g_dirs.back();
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto index = static_cast<std::size_t>(std::ceil(p * double(v.size()))) - 1;
    return v[std::min(index, v.size() - 1)];
}

void fail(benchmark::State& state, const memfail::Error& error) {
    state.SkipWithError(error.describe().c_str());
}

void bench_ingest(benchmark::State& state, const std::string& retriever, std::size_t size) {
    const Corpus& corpus = corpus_of(size);
    for (auto _ : state) {
        const mem::SystemContext context{fresh_dir().string(), "bench"};
        auto made = mem::make_memory_system("verbatim:retriever=" + retriever, context);
        if (!made) return fail(state, made.error());
        auto system = std::move(made).value();
        const auto start = std::chrono::steady_clock::now();
        for (const Session& session : corpus.sessions) {
            auto stored = system->store_conversation(session);
            if (!stored) return fail(state, stored.error());
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        state.SetIterationTime(seconds);
        g_figures[{retriever, size}].ingest_per_s = double(size) / seconds;
        g_systems[{retriever, size}] = std::move(system);
    }
    state.counters["memories_per_s"] =
        benchmark::Counter(double(size), benchmark::Counter::kIsIterationInvariantRate);
}

void bench_retrieve(benchmark::State& state, const std::string& retriever, std::size_t size) {
    const Corpus& corpus = corpus_of(size);
    auto it = g_systems.find({retriever, size});
    if (it == g_systems.end())
        return state.SkipWithError("no store: run the matching ingest benchmark first");
    mem::MemorySystem& system = *it->second;
    Figures& figures = g_figures[{retriever, size}];
    figures.latencies_us.clear();
    figures.cpu_us.clear();
    std::size_t found = 0;
    std::size_t asked = 0;
    for (auto _ : state) {
        const std::size_t q = asked++ % corpus.queries.size();
        const double cpu_start = thread_cpu_s();
        const auto start = std::chrono::steady_clock::now();
        auto hits = system.retrieve_memories(corpus.queries[q], {}, k_top_k);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        figures.cpu_us.push_back((thread_cpu_s() - cpu_start) * 1e6);
        state.SetIterationTime(seconds);
        if (!hits) return fail(state, hits.error());
        figures.latencies_us.push_back(seconds * 1e6);
        for (const mem::Hit& hit : *hits)
            if (hit.memory.id == corpus.query_targets[q]) ++found;
    }
    figures.recall = asked ? double(found) / double(asked) : 0;
    state.counters["p50_us"] = percentile(figures.latencies_us, 0.50);
    state.counters["p99_us"] = percentile(figures.latencies_us, 0.99);
    state.counters["recall_at_10"] = figures.recall;
    g_systems.erase(it);  // free the store before the next, larger one
}

// ---- the vector index alone ----------------------------------------------------------------------

// The vectors the hashed retriever builds for the corpus: each memory's hashed features,
// normalised; each query's weighted by idf over the whole corpus, as HashedRetriever::search does.
struct HashedVectors {
    int dim = mem::HashedEmbedder::k_default_dim;
    std::vector<float> memories;  // dim floats per memory, in corpus order
    std::vector<float> queries;   // dim floats per query
    std::vector<std::size_t> targets;
    std::vector<std::vector<std::size_t>> exact_top;  // exact search's top 10 per query
};

std::map<std::size_t, std::unique_ptr<HashedVectors>> g_vectors;

double bm25_idf(double documents, double df) { return std::log(1.0 + (documents - df + 0.5) / (df + 0.5)); }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
// The release build targets baseline x86-64 (SSE2); the exact scan is 1e12 multiply-adds at 1M, so
// it gets an AVX2 kernel of its own (this driver runs on the machines that built it).
__attribute__((target("avx2,fma"))) float dot512(const float* a, const float* b, std::size_t dim) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    std::size_t i = 0;
    for (; i + 16 <= dim; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, _mm256_add_ps(s0, s1));
    float total = 0;
    for (const float x : lanes) total += x;
    for (; i < dim; ++i) total += a[i] * b[i];
    return total;
}
#else
float dot512(const float* a, const float* b, std::size_t dim) {
    float total = 0;
    for (std::size_t i = 0; i < dim; ++i) total += a[i] * b[i];
    return total;
}
#endif

// Exact top 10 of every query by brute force, split over two threads (this takes about 3 minutes
// of CPU at 1M). Scores ties by lower memory index, as VectorIndex does.
void exact_top10(HashedVectors& v) {
    const auto dim = static_cast<std::size_t>(v.dim);
    const std::size_t count = v.memories.size() / dim;
    const std::size_t queries = v.targets.size();
    v.exact_top.assign(queries, {});
    auto work = [&](std::size_t from, std::size_t to) {
        std::vector<std::vector<std::pair<float, std::size_t>>> best(to - from);
        constexpr std::size_t k_block = 512;  // memories per block: each block stays in cache
        for (std::size_t b = 0; b < count; b += k_block) {
            const std::size_t end = std::min(count, b + k_block);
            for (std::size_t q = from; q < to; ++q) {
                const float* query = &v.queries[q * dim];
                auto& top = best[q - from];
                for (std::size_t i = b; i < end; ++i) {
                    const float score = dot512(query, &v.memories[i * dim], dim);
                    if (top.size() == 10 && score <= top.back().first) continue;
                    top.emplace_back(score, i);
                    std::sort(top.begin(), top.end(), [](const auto& a, const auto& c) {
                        return a.first != c.first ? a.first > c.first : a.second < c.second;
                    });
                    if (top.size() > 10) top.pop_back();
                }
            }
        }
        for (std::size_t q = from; q < to; ++q)
            for (const auto& [score, index] : best[q - from]) v.exact_top[q].push_back(index);
    };
    std::thread second(work, 0, queries / 2);
    work(queries / 2, queries);
    second.join();
}

const HashedVectors& vectors_of(std::size_t size) {
    auto& slot = g_vectors[size];
    if (slot) return *slot;
    const Corpus& corpus = corpus_of(size);
    auto v = std::make_unique<HashedVectors>();
    const mem::HashedEmbedder embedder(v->dim);
    std::vector<std::int64_t> df(static_cast<std::size_t>(v->dim), 0);
    v->memories.reserve(size * static_cast<std::size_t>(v->dim));
    for (const Session& session : corpus.sessions) {
        for (const Message& message : session.messages) {
            const auto features = embedder.features(message.content);
            for (const auto& f : features) ++df[f.bucket];
            std::vector<float> vector = mem::densify(features, v->dim);
            mem::l2_normalize(vector);
            v->memories.insert(v->memories.end(), vector.begin(), vector.end());
        }
    }
    for (std::size_t q = 0; q < corpus.queries.size(); ++q) {
        auto features = embedder.features(corpus.queries[q]);
        for (auto& f : features) f.weight *= static_cast<float>(bm25_idf(double(size), double(df[f.bucket])));
        std::vector<float> vector = mem::densify(features, v->dim);
        mem::l2_normalize(vector);
        v->queries.insert(v->queries.end(), vector.begin(), vector.end());
        // "b<index>#0" -> index
        v->targets.push_back(std::stoull(corpus.query_targets[q].substr(1)));
    }
    const auto start = std::chrono::steady_clock::now();
    exact_top10(*v);
    std::fprintf(stderr, "exact top 10 of %zu queries over %zu vectors: %.0f s\n", v->targets.size(), size,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    slot = std::move(v);
    return *slot;
}

mem::VectorIndexOptions index_options(const std::string& config) {
    return {.dim = mem::HashedEmbedder::k_default_dim,
            .large = config == "columns" ? mem::LargeIndex::columns : mem::LargeIndex::hnsw};
}

struct IndexFigures {
    std::string served;  // describe() after the build
    double ingest_per_s = 0;
    std::vector<double> latencies_us;
    std::vector<double> cpu_us;
    double recall_source = 0;
    double recall_exact = 0;
};

std::map<std::pair<std::string, std::size_t>, IndexFigures> g_index_figures;

// Builds the index with one add per memory (as the retriever does), then answers every query with
// k=10 and compares with the source memory and with exact search.
void bench_index(benchmark::State& state, const std::string& config, std::size_t size) {
    const HashedVectors& v = vectors_of(size);
    const auto dim = static_cast<std::size_t>(v.dim);
    IndexFigures& figures = g_index_figures[{config, size}];
    for (auto _ : state) {
        mem::VectorIndex index(index_options(config));
        const auto start = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < size; ++i)
            index.add(static_cast<std::int64_t>(i), std::span<const float>(&v.memories[i * dim], dim));
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        state.SetIterationTime(seconds);
        figures.ingest_per_s = double(size) / seconds;
        figures.served = index.describe();

        std::size_t source = 0;
        std::size_t agree = 0;
        std::size_t wanted = 0;
        figures.latencies_us.clear();
        figures.cpu_us.clear();
        for (std::size_t q = 0; q < v.targets.size(); ++q) {
            const double cpu_start = thread_cpu_s();
            const auto wall_start = std::chrono::steady_clock::now();
            const auto hits = index.search(std::span<const float>(&v.queries[q * dim], dim), k_top_k);
            figures.latencies_us.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count() * 1e6);
            figures.cpu_us.push_back((thread_cpu_s() - cpu_start) * 1e6);
            const auto& truth = v.exact_top[q];
            for (const mem::VectorMatch& hit : hits) {
                const auto id = static_cast<std::size_t>(hit.id);
                if (id == v.targets[q]) ++source;
                if (std::find(truth.begin(), truth.end(), id) != truth.end()) ++agree;
            }
            wanted += truth.size();
        }
        figures.recall_source = double(source) / double(v.targets.size());
        figures.recall_exact = wanted ? double(agree) / double(wanted) : 0;
    }
    state.counters["vectors_per_s"] = figures.ingest_per_s;
    state.counters["p50_us"] = percentile(figures.latencies_us, 0.50);
    state.counters["p99_us"] = percentile(figures.latencies_us, 0.99);
    state.counters["recall_at_10"] = figures.recall_source;
    state.counters["recall_vs_exact"] = figures.recall_exact;
    state.SetLabel(figures.served);
}

void print_index_summary(const std::vector<std::size_t>& sizes) {
    std::printf("\nVector index alone (hashed 512-d vectors of the same corpus, k=%d; recall@10 of the "
                "source memory and against exact search; cpu p99 is the thread's CPU time)\n",
                k_top_k);
    std::printf("%-8s %-7s %12s %9s %9s %9s %9s %9s  %s\n", "size", "index", "ingest v/s", "p50 us",
                "p99 us", "cpu p99", "recall@10", "vs exact", "served by");
    for (const std::size_t size : sizes) {
        for (const char* config : {"hnsw", "columns"}) {
            if (!g_index_figures.count({config, size})) continue;
            const IndexFigures& f = g_index_figures[{config, size}];
            std::printf("%-8zu %-7s %12.0f %9.1f %9.1f %9.1f %9.3f %9.3f  %s\n", size, config, f.ingest_per_s,
                        percentile(f.latencies_us, 0.50), percentile(f.latencies_us, 0.99),
                        percentile(f.cpu_us, 0.99), f.recall_source, f.recall_exact, f.served.c_str());
        }
        if (!g_index_figures.count({"hnsw", size}) || !g_index_figures.count({"columns", size})) continue;
        const IndexFigures& o = g_index_figures[{"hnsw", size}];
        const IndexFigures& n = g_index_figures[{"columns", size}];
        auto ratio = [](double x, double y) { return y > 0 ? x / y : 0.0; };
        std::printf("%-8zu %-7s %12.2f %9.2f %9.2f %9.2f %9.2f %9.2f  columns/hnsw\n", size, "ratio",
                    ratio(n.ingest_per_s, o.ingest_per_s),
                    ratio(percentile(n.latencies_us, 0.50), percentile(o.latencies_us, 0.50)),
                    ratio(percentile(n.latencies_us, 0.99), percentile(o.latencies_us, 0.99)),
                    ratio(percentile(n.cpu_us, 0.99), percentile(o.cpu_us, 0.99)),
                    ratio(n.recall_source, o.recall_source), ratio(n.recall_exact, o.recall_exact));
    }
}

void print_summary(const std::vector<std::size_t>& sizes) {
    std::printf("\nSummary (verbatim:chunk=turn, k=%d, %d queries per size; p50 is the median)\n",
                k_top_k, k_queries);
    std::printf("%-8s %-9s %14s %10s %10s %10s %10s\n", "size", "retriever", "ingest mem/s", "p50 us",
                "p99 us", "cpu p99", "recall@10");
    for (const std::size_t size : sizes) {
        if (!g_figures.count({"bm25", size}) && !g_figures.count({"hashed", size})) continue;
        const bool both = g_figures.count({"bm25", size}) && g_figures.count({"hashed", size});
        for (const char* retriever : {"bm25", "hashed"}) {
            if (!g_figures.count({retriever, size})) continue;  // filtered out of this run
            const Figures& f = g_figures[{retriever, size}];
            std::printf("%-8zu %-9s %14.0f %10.1f %10.1f %10.1f %10.3f\n", size, retriever, f.ingest_per_s,
                        percentile(f.latencies_us, 0.50), percentile(f.latencies_us, 0.99),
                        percentile(f.cpu_us, 0.99), f.recall);
        }
        if (!both) continue;  // a ratio needs both measured in this run
        const Figures& b = g_figures[{"bm25", size}];
        const Figures& h = g_figures[{"hashed", size}];
        auto ratio = [](double x, double y) { return y > 0 ? x / y : 0.0; };
        std::printf("%-8zu %-9s %14.2f %10.2f %10.2f %10.2f %10.2f\n", size, "ratio h/b",
                    ratio(h.ingest_per_s, b.ingest_per_s),
                    ratio(percentile(h.latencies_us, 0.50), percentile(b.latencies_us, 0.50)),
                    ratio(percentile(h.latencies_us, 0.99), percentile(b.latencies_us, 0.99)),
                    ratio(percentile(h.cpu_us, 0.99), percentile(b.cpu_us, 0.99)), ratio(h.recall, b.recall));
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::size_t> sizes = {10'000, 100'000};
    const char* large = std::getenv("MEMFAIL_BENCH_LARGE");
    if (large != nullptr && std::string(large) == "1") sizes.push_back(1'000'000);
    // MEMFAIL_BENCH_SIZES=10000,300000 replaces the list (a size between 100k and 1M builds the
    // hashed store in minutes rather than the better part of an hour).
    if (const char* listed = std::getenv("MEMFAIL_BENCH_SIZES"); listed != nullptr && *listed != '\0') {
        sizes.clear();
        for (const std::string& item : memfail::text::split(listed, ','))
            if (!item.empty()) sizes.push_back(std::stoull(item));
    }

    for (const std::size_t size : sizes) {
        // The index alone first.
        for (const std::string config : {"hnsw", "columns"}) {
            benchmark::RegisterBenchmark(("index/" + config + "/" + std::to_string(size)).c_str(),
                                         [=](benchmark::State& s) { bench_index(s, config, size); })
                ->Iterations(1)
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
        }
        for (const std::string retriever : {"bm25", "hashed"}) {
            const std::string suffix = retriever + "/" + std::to_string(size);
            benchmark::RegisterBenchmark(("ingest/" + suffix).c_str(),
                                         [=](benchmark::State& s) { bench_ingest(s, retriever, size); })
                ->Iterations(1)
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
            benchmark::RegisterBenchmark(("retrieve/" + suffix).c_str(),
                                         [=](benchmark::State& s) { bench_retrieve(s, retriever, size); })
                ->Iterations(k_queries)
                ->UseManualTime()
                ->Unit(benchmark::kMicrosecond);
        }
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    print_summary(sizes);
    print_index_summary(sizes);

    g_systems.clear();
    for (const auto& dir : g_dirs) {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    return 0;
}
