// SPDX-License-Identifier: MIT
// Tokenizer throughput against the npm `tiktoken` package, measured in the same run on the same bytes.
//
//   build/<dir>/bin/bench_tokenizer [--mb 4] [--runs 7] [--npm-modules DIR] [--tokenizer-dir DIR]
//                                   [--encoding cl100k_base|o200k_base] [--no-node] [--scripts]
//
// --scripts measures each writing system apart (bench/data/scripts.json: English, code, Chinese,
// Japanese, Korean, Arabic, Hindi, Thai, Cyrillic, emoji), --mb megabytes each (default 0.5), and
// prints the ratio per script and the smallest one; --script NAME (repeatable) measures only those.
//
// The corpus (about --mb megabytes) is the tokenizer test fixture repeated (code, JSON, many
// scripts, emoji, odd whitespace) plus generated English-like prose under a fixed seed. For each
// encoding it reports the median encode time of --runs runs for memfail and, via
// bench/tiktoken_bench.mjs under node, for tiktoken; both token counts must agree (exit 1 if not).
// MB means 10^6 bytes. The npm package is looked for in --npm-modules, else $MEMFAIL_NPM_MODULES,
// else <source tree>/.deps/npm/node_modules (the source tree it was built from).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/rng.hpp>
#include <memfail/text/tokenizer.hpp>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const fs::path k_source_root = MEMFAIL_SOURCE_DIR;

struct Options {
    double megabytes = 4;
    int runs = 7;
    std::string npm_modules;
    std::string tokenizer_dir;
    std::vector<std::string> encodings = {"cl100k_base", "o200k_base"};
    bool node = true;
    bool scripts = false;
    std::vector<std::string> only_scripts;  // --script NAME: only these (with --scripts)
};

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "bench_tokenizer: cannot read %s\n", path.c_str());
        std::exit(2);
    }
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// English-like prose: sentences of common words with capitals, commas, numbers, contractions and
// paragraph breaks, so the benchmark is not dominated by the fixture's unusual scripts.
std::string generated_prose(std::size_t bytes, memfail::Rng& rng) {
    static const std::vector<std::string> words = {
        "the", "a", "of", "and", "to", "in", "is", "was", "that", "for", "it", "with", "as", "on", "at", "by",
        "this", "from", "they", "we", "she", "he", "you", "were", "had", "have", "will", "would", "could",
        "morning", "river", "garden", "letter", "station", "window", "market", "winter", "question", "answer",
        "memory", "system", "record", "meeting", "doctor", "teacher", "village", "kitchen", "journey", "evening",
        "quietly", "always", "never", "often", "almost", "suddenly", "together", "slowly", "again", "later",
        "walked", "wrote", "remembered", "forgot", "carried", "opened", "noticed", "promised", "borrowed",
        "bright", "heavy", "narrow", "patient", "ordinary", "careful", "distant", "familiar", "strange",
        "don't", "it's", "we'll", "they're", "I'm", "couldn't", "she'd", "you've", "Anna", "Marcus", "Lisbon",
        "Tuesday", "October", "about", "because", "before", "after", "between", "without", "under", "over",
        "people", "year", "day", "time", "way", "thing", "house", "water", "story", "number", "price",
        "information", "development", "understanding", "responsibility", "configuration", "approximately"};
    std::string out;
    out.reserve(bytes + 256);
    int sentence = 0;
    while (out.size() < bytes) {
        const auto length = rng.between(6, 22);
        for (std::int64_t i = 0; i < length; ++i) {
            std::string w = rng.pick(words);
            if (i == 0 && w[0] >= 'a' && w[0] <= 'z') w[0] = static_cast<char>(w[0] - 32);
            if (rng.chance(0.05)) w = std::to_string(rng.between(1, 99999));
            out += w;
            if (i + 1 < length) out += rng.chance(0.08) ? ", " : " ";
        }
        out += rng.chance(0.85) ? ". " : (rng.chance(0.5) ? "? " : "! ");
        if (++sentence % 6 == 0) {
            out.back() = '\n';
            out += '\n';
        }
    }
    return out;
}

std::string build_corpus(double megabytes) {
    const auto target = static_cast<std::size_t>(megabytes * 1e6);
    const auto doc = nlohmann::json::parse(read_file(k_source_root / "tests" / "fixtures" / "tokenizer" / "corpus.json"));
    std::string fixture;
    for (const auto& c : doc.at("cases")) fixture += c.at("text").get<std::string>() + "\n";
    memfail::Rng rng(20261122);
    std::string corpus;
    corpus.reserve(target + 4096);
    // A quarter fixture, three quarters prose, interleaved in blocks.
    while (corpus.size() < target) {
        corpus += fixture;
        corpus += generated_prose(fixture.size() * 3, rng);
    }
    return corpus;
}

struct NodeResult {
    bool ok = false;
    std::string why;
    double median_s = 0;
    double load_s = 0;
    long long tokens = -1;
    std::string version;
};

// One result per text file, in order; all failed alike when node could not run.
std::vector<NodeResult> run_node(const Options& options, const std::string& encoding,
                                 const std::vector<fs::path>& text_files, const fs::path& scratch) {
    std::vector<NodeResult> results(text_files.size());
    auto fail_all = [&](const std::string& why) {
        for (auto& r : results) r.why = why;
        return results;
    };
    const fs::path out = scratch / ("node-" + encoding + ".json");
    const fs::path err = scratch / ("node-" + encoding + ".err");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> args = {"node", (k_source_root / "bench" / "tiktoken_bench.mjs").string(),
                                     options.npm_modules, encoding, text_files.front().string(),
                                     std::to_string(options.runs)};
    for (std::size_t i = 1; i < text_files.size(); ++i) args.push_back(text_files[i].string());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, "node", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return fail_all(std::string("cannot run node: ") + std::strerror(rc));
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fail_all("node exited with " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ": " +
                        read_file(err));
    std::istringstream lines(read_file(out));
    std::string line;
    for (auto& result : results) {
        if (!std::getline(lines, line)) {
            result.why = "node printed fewer results than files";
            continue;
        }
        const auto reply = nlohmann::json::parse(line, nullptr, false);
        if (reply.is_discarded()) {
            result.why = "node printed no JSON";
            continue;
        }
        result.ok = true;
        result.median_s = reply.value("median_s", 0.0);
        result.load_s = reply.value("load_s", 0.0);
        result.tokens = reply.value("tokens", -1LL);
        result.version = reply.value("tiktoken", "?");
    }
    return results;
}

// Each script's sentences shuffled and repeated to about `bytes`, a paragraph break every few.
std::vector<std::pair<std::string, std::string>> script_corpora(std::size_t bytes, const std::vector<std::string>& only) {
    const auto doc = nlohmann::json::parse(read_file(k_source_root / "bench" / "data" / "scripts.json"));
    memfail::Rng rng(20261126);
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [name, sentences] : doc.at("scripts").items()) {
        if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
        std::vector<std::string> pool = sentences.get<std::vector<std::string>>();
        std::string text;
        std::size_t in_paragraph = 0;
        while (text.size() < bytes) {
            const std::string& sentence = pool[rng.below(pool.size())];
            // Chinese and Japanese run sentences together; Thai, without spaces between words, puts one
            // between sentences.
            const bool spaced = name != "chinese" && name != "japanese";
            if (!text.empty() && text.back() != '\n' && spaced) text += ' ';
            text += sentence;
            if (++in_paragraph >= 3 + rng.below(5)) {
                text += "\n\n";
                in_paragraph = 0;
            }
        }
        out.emplace_back(name, std::move(text));
    }
    return out;
}

int run_scripts(const Options& options) {
    const auto corpora = script_corpora(static_cast<std::size_t>(options.megabytes * 1e6), options.only_scripts);
    if (corpora.empty()) {
        std::fprintf(stderr, "bench_tokenizer: no such script in bench/data/scripts.json\n");
        return 2;
    }
    const fs::path scratch = fs::temp_directory_path() / ("memfail-bench-tok-" + std::to_string(::getpid()));
    fs::create_directories(scratch);
    std::vector<fs::path> files;
    for (const auto& [name, text] : corpora) {
        files.push_back(scratch / (name + ".txt"));
        std::ofstream(files.back(), std::ios::binary) << text;
    }
    std::printf("per script: %.2f MB each, %d runs per measurement, median reported\n\n", options.megabytes,
                options.runs);
    std::printf("%-12s %-10s %9s %12s %13s %7s %6s\n", "encoding", "script", "tokens", "memfail MB/s",
                "tiktoken MB/s", "ratio", "equal");
    bool agree = true;
    double worst = 0;
    std::string worst_name;
    for (const auto& encoding : options.encodings) {
        auto loaded = memfail::text::load_tokenizer(encoding, options.tokenizer_dir);
        if (!loaded) {
            std::fprintf(stderr, "bench_tokenizer: %s\n", loaded.error().describe().c_str());
            return 1;
        }
        const auto& tok = **loaded;
        std::vector<NodeResult> node;
        if (options.node) node = run_node(options, encoding, files, scratch);
        for (std::size_t i = 0; i < corpora.size(); ++i) {
            const auto& [name, text] = corpora[i];
            const std::size_t tokens = tok.encode(text).size();
            std::vector<double> times;
            for (int r = 0; r < options.runs; ++r) {
                const auto start = Clock::now();
                if (tok.encode(text).size() != tokens) agree = false;
                times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
            }
            const double mb = text.size() / 1e6, ours = median(times);
            if (i < node.size() && node[i].ok) {
                const bool equal = node[i].tokens == static_cast<long long>(tokens);
                agree = agree && equal;
                const double ratio = node[i].median_s / ours;
                if (worst == 0 || ratio < worst) {
                    worst = ratio;
                    worst_name = encoding + " " + name;
                }
                std::printf("%-12s %-10s %9zu %12.2f %13.2f %7.2f %6s\n", encoding.c_str(), name.c_str(), tokens,
                            mb / ours, mb / node[i].median_s, ratio, equal ? "yes" : "NO");
            } else {
                std::printf("%-12s %-10s %9zu %12.2f %13s %7s %6s\n", encoding.c_str(), name.c_str(), tokens, mb / ours,
                            "-", "-", "-");
                if (i < node.size() && i == 0) std::fprintf(stderr, "bench_tokenizer: tiktoken peer unavailable: %s\n",
                                                            node[i].why.c_str());
            }
        }
    }
    std::error_code ec;
    fs::remove_all(scratch, ec);
    if (worst > 0) std::printf("\nsmallest ratio: %.2f (%s); ratio = memfail MB/s / tiktoken MB/s\n", worst, worst_name.c_str());
    if (!agree) {
        std::fprintf(stderr, "bench_tokenizer: token counts differ between memfail and tiktoken\n");
        return 1;
    }
    return 0;
}

int usage(const char* why) {
    std::fprintf(stderr,
                 "bench_tokenizer: %s\nusage: bench_tokenizer [--mb 4] [--runs 7] [--npm-modules DIR] "
                 "[--tokenizer-dir DIR] [--encoding NAME] [--no-node] [--scripts] [--script NAME]...\n",
                 why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    if (const char* env = std::getenv("MEMFAIL_NPM_MODULES"); env && *env) options.npm_modules = env;
    bool encoding_given = false, mb_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (arg == "--no-node") {
            options.node = false;
        } else if (arg == "--scripts") {
            options.scripts = true;
        } else if (arg == "--script") {
            const char* v = value();
            if (!v) return usage("missing value for --script");
            options.scripts = true;
            options.only_scripts.emplace_back(v);
        } else if (arg == "--mb" || arg == "--runs" || arg == "--npm-modules" || arg == "--tokenizer-dir" ||
                   arg == "--encoding") {
            const char* v = value();
            if (!v) return usage(("missing value for " + arg).c_str());
            if (arg == "--mb") {
                options.megabytes = std::atof(v);
                mb_given = true;
            }
            if (arg == "--runs") options.runs = std::atoi(v);
            if (arg == "--npm-modules") options.npm_modules = v;
            if (arg == "--tokenizer-dir") options.tokenizer_dir = v;
            if (arg == "--encoding") {
                if (!encoding_given) options.encodings.clear();
                encoding_given = true;
                options.encodings.emplace_back(v);
            }
        } else {
            return usage(("unknown argument " + arg).c_str());
        }
    }
    if (options.megabytes <= 0 || options.runs < 1) return usage("--mb and --runs must be positive");
    if (options.npm_modules.empty()) options.npm_modules = (k_source_root / ".deps" / "npm" / "node_modules").string();
    if (options.scripts) {
        if (!mb_given) options.megabytes = 0.5;
        return run_scripts(options);
    }

    const std::string corpus = build_corpus(options.megabytes);
    const fs::path scratch = fs::temp_directory_path() / ("memfail-bench-tok-" + std::to_string(::getpid()));
    fs::create_directories(scratch);
    const fs::path text_file = scratch / "corpus.txt";
    std::ofstream(text_file, std::ios::binary) << corpus;
    std::printf("corpus: %.2f MB (%zu bytes), %d runs per measurement, median reported\n", corpus.size() / 1e6,
                corpus.size(), options.runs);

    struct Row {
        std::string encoding;
        std::size_t tokens = 0;
        double load_s = 0, ours_s = 0, ours_count_s = 0;
        NodeResult node;
    };
    std::vector<Row> rows;
    bool counts_agree = true;
    for (const auto& encoding : options.encodings) {
        Row row;
        row.encoding = encoding;
        const auto t0 = Clock::now();
        auto loaded = memfail::text::load_tokenizer(encoding, options.tokenizer_dir);
        row.load_s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!loaded) {
            std::fprintf(stderr, "bench_tokenizer: %s\n", loaded.error().describe().c_str());
            return 1;
        }
        const auto& tok = **loaded;
        row.tokens = tok.encode(corpus).size();  // warm-up, and the count to compare
        std::vector<double> times, count_times;
        for (int r = 0; r < options.runs; ++r) {
            const auto start = Clock::now();
            const auto ids = tok.encode(corpus);
            times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
            if (ids.size() != row.tokens) counts_agree = false;
            const auto start_count = Clock::now();
            const std::size_t n = tok.count(corpus);
            count_times.push_back(std::chrono::duration<double>(Clock::now() - start_count).count());
            if (n != row.tokens) counts_agree = false;
        }
        row.ours_s = median(times);
        row.ours_count_s = median(count_times);
        if (options.node) {
            row.node = run_node(options, encoding, {text_file}, scratch).front();
            if (!row.node.ok) std::fprintf(stderr, "bench_tokenizer: tiktoken peer unavailable: %s\n", row.node.why.c_str());
            if (row.node.ok && row.node.tokens != static_cast<long long>(row.tokens)) counts_agree = false;
        }
        rows.push_back(std::move(row));
    }
    std::error_code ec;
    fs::remove_all(scratch, ec);

    const double mb = corpus.size() / 1e6;
    std::printf("\n%-12s %10s %9s %11s %11s %11s %9s %8s %8s\n", "encoding", "tokens", "load s", "memfail MB/s",
                "count MB/s", "tiktoken MB/s", "ratio", "tt load", "equal");
    for (const auto& row : rows) {
        if (row.node.ok)
            std::printf("%-12s %10zu %9.3f %11.2f %11.2f %11.2f %9.2f %8.3f %8s\n", row.encoding.c_str(), row.tokens,
                        row.load_s, mb / row.ours_s, mb / row.ours_count_s, mb / row.node.median_s,
                        row.node.median_s / row.ours_s, row.node.load_s,
                        row.node.tokens == static_cast<long long>(row.tokens) ? "yes" : "NO");
        else
            std::printf("%-12s %10zu %9.3f %11.2f %11.2f %11s %9s %8s %8s\n", row.encoding.c_str(), row.tokens,
                        row.load_s, mb / row.ours_s, mb / row.ours_count_s, "-", "-", "-", "-");
    }
    if (!rows.empty() && rows.front().node.ok) std::printf("(tiktoken %s under node; ratio = memfail MB/s / tiktoken MB/s)\n", rows.front().node.version.c_str());
    if (!counts_agree) {
        std::fprintf(stderr, "bench_tokenizer: token counts differ between memfail and tiktoken\n");
        return 1;
    }
    return 0;
}
