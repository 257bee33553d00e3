// SPDX-License-Identifier: MIT
// memfail datasets: generate the five MemFail datasets, validate any dataset file, show probes,
// import the paper's CSV release, audit datasets for answers readable without memory.
#include <commands/cli.hpp>
#include <commands/common.hpp>
#include <commands/llm_options.hpp>

#include <memfail/core/hash.hpp>
#include <memfail/core/spec.hpp>
#include <memfail/core/version.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/llm/llm_stack.hpp>
#include <memfail/llm/preflight.hpp>
#include <memfail/run/dataset_source.hpp>
#include <memfail/suites/memfail/audit.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/import_csv.hpp>
#include <memfail/suites/memfail/model_generate.hpp>
#include <memfail/suites/memfail/rules.hpp>
#include <memfail/suites/memfail/stats.hpp>
#include <memfail/suites/suite.hpp>
#include <memfail/text/tokenizer.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <unistd.h>

namespace memfail::cli {

namespace mf = memfail::suites::memfail_suite;
using nlohmann::json;

namespace {

struct GenerateOptions {
    std::vector<std::string> names = {"all"};
    std::string out = "data";
    unsigned long long seed = 42;
    std::size_t scenarios = 0;  // 0: the suite's default
    // The dynamic suite's knobs; empty: its defaults.
    std::string users, months, scale;
    std::vector<std::string> settings;  // --set KEY=VALUE, handed to the suite as params
    // --model: the model writes the text (the paper's pipeline); the LLM options reach it.
    std::string model;
    std::vector<std::string> model_for;  // --model-for DATASET=MODEL: a dataset's own model
    std::size_t rows = 0;  // --rows: the first N rows only (a trial run)
    double max_planned = 2.0;  // --max-planned: the top-up bound, a multiple of each dataset's target
    LlmOptions llm;
};

struct ValidateOptions {
    std::vector<std::string> files;
    int max_shown = 200;
};

struct ShowOptions {
    std::string dataset;
    std::vector<std::string> probes;
    std::size_t limit = 3;
    unsigned long long seed = 42;
};

struct StatsOptions {
    std::vector<std::string> files;
    std::string format = "text";
    std::string encoding = "cl100k_base";
};

struct ImportOptions {
    std::string from = "memfail-csv";
    std::string dir;
    std::string out = "data-imported";
    bool allow_partial = false;  // a refused file or skipped element is accepted: exit 0
};

struct AuditOptions {
    std::vector<std::string> files;
    std::vector<std::string> against;
    std::string format = "text";
};

json summary_of(const data::Scenario& s) {
    std::size_t abstain = 0;
    for (const auto& p : s.probes) abstain += p.kind == data::ProbeKind::abstain;
    return {{"dataset", s.dataset},
            {"scenario", s.id},
            {"sessions", s.sessions.size()},
            {"messages", data::message_count(s)},
            {"probes", s.probes.size()},
            {"abstain_probes", abstain},
            {"hash", data::scenario_hash(s)}};
}

// Moves every file of `staging` into `out_dir`, the manifest last, and removes `staging`. When
// `out_dir` does not exist, the whole folder is renamed into place in one step; otherwise every
// target is checked first, so a file that cannot be replaced stops the move before anything moved.
Result<void> publish_staged(const std::filesystem::path& staging, const std::filesystem::path& out_dir,
                            const std::vector<std::string>& names) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(out_dir, ec)) {
        fs::rename(staging, out_dir, ec);
        if (ec) return make_error(ErrorKind::io, "cannot move the finished datasets into place: " + ec.message(), out_dir.string());
        return {};
    }
    if (!fs::is_directory(out_dir, ec)) return make_error(ErrorKind::io, "--out exists and is not a folder", out_dir.string());
    for (const auto& name : names)
        if (fs::exists(out_dir / name, ec) && !fs::is_regular_file(out_dir / name, ec))
            return make_error(ErrorKind::io, "cannot replace it: not a regular file", (out_dir / name).string());
    for (const auto& name : names) {
        fs::rename(staging / name, out_dir / name, ec);
        if (ec) return make_error(ErrorKind::io, "cannot move into place: " + ec.message(), (out_dir / name).string());
    }
    fs::remove_all(staging, ec);
    return {};
}

// Writes scenarios to OUT/<dataset>.jsonl, one line each, as they come, and a manifest naming the
// files with their hashes. All or nothing: the files are written into a temporary folder beside OUT
// and moved into OUT only when every one of them, manifest included, is written. A scenario is
// written out as soon as it is added, so the caller holds one at a time.
class DatasetWriter {
public:
    explicit DatasetWriter(const std::string& out_dir) {
        namespace fs = std::filesystem;
        const fs::path out = fs::path(out_dir).lexically_normal();
        m_target = out.has_filename() ? out : out.parent_path();
        m_staging = m_target.parent_path() / ("." + m_target.filename().string() + ".partial-" + std::to_string(::getpid()));
        std::error_code ec;
        fs::remove_all(m_staging, ec);
        if (!m_target.parent_path().empty()) fs::create_directories(m_target.parent_path(), ec);
        fs::create_directory(m_staging, ec);
        if (ec)
            throw Fatal(make_error(ErrorKind::io, "cannot create a temporary folder: " + ec.message(), m_staging.string()));
    }
    // Removes the temporary folder on every way out, a thrown Fatal included.
    ~DatasetWriter() {
        std::error_code ignored;
        std::filesystem::remove_all(m_staging, ignored);
    }
    DatasetWriter(const DatasetWriter&) = delete;
    DatasetWriter& operator=(const DatasetWriter&) = delete;

    void add(const data::Scenario& s) {
        auto [it, fresh] = m_files.try_emplace(s.dataset);
        File& f = it->second;
        if (fresh) {
            m_order.push_back(s.dataset);
            f.out.open(m_staging / (s.dataset + ".jsonl"), std::ios::binary);
            if (!f.out)
                throw Fatal(make_error(ErrorKind::io, "cannot write", (m_staging / (s.dataset + ".jsonl")).string()));
            f.first = summary_of(s);
            f.first["file"] = s.dataset + ".jsonl";
            if (s.meta.contains("dedup")) f.dedup = s.meta["dedup"];
        }
        const std::string line = value_or_fatal(data::scenario_line(s));
        f.out << line << '\n';
        if (!f.out) throw Fatal(make_error(ErrorKind::io, "cannot write", (m_staging / (s.dataset + ".jsonl")).string()));
        ++f.scenarios;
        f.sessions += s.sessions.size();
        f.messages += data::message_count(s);
        f.probes += s.probes.size();
        for (const auto& p : s.probes) f.abstain += p.kind == data::ProbeKind::abstain;
        f.hashes += content_hash(line);
        m_v2 = m_v2 || s.uses_v2();
    }

    // A file published beside the datasets (a model generation's CSV and record).
    void add_file(const std::string& name, const std::string& content) {
        value_or_fatal(data::write_file_atomically((m_staging / name).string(), content));
        m_extra.push_back(name);
    }

    void finish(json manifest_extra) {
        json files = json::array();
        std::vector<std::string> names = m_extra;
        for (const auto& dataset : m_order) {
            File& f = m_files.at(dataset);
            f.out.close();
            if (!f.out) throw Fatal(make_error(ErrorKind::io, "cannot write", (m_staging / (dataset + ".jsonl")).string()));
            names.push_back(dataset + ".jsonl");
            const std::string path = (m_target / (dataset + ".jsonl")).string();
            if (f.scenarios > 1) {
                // Several scenarios (writ's categories, dynamic's users): one entry for the file.
                json entry = {{"dataset", dataset}, {"scenarios", f.scenarios}, {"sessions", f.sessions},
                              {"messages", f.messages}, {"probes", f.probes}, {"abstain_probes", f.abstain},
                              {"hash", content_hash(f.hashes)}, {"file", dataset + ".jsonl"}};
                files.push_back(entry);
                std::printf("  %-24s %4zu scenarios %4zu sessions %4zu probes  hash %s  -> %s\n", dataset.c_str(),
                            f.scenarios, f.sessions, f.probes, entry["hash"].get<std::string>().substr(0, 12).c_str(),
                            path.c_str());
                continue;
            }
            json entry = f.first;
            if (f.dedup.is_object())
                entry["dedup"] = {{"key", f.dedup.value("key", "")}, {"threshold", f.dedup.value("threshold", 0.0)},
                                  {"candidates", f.dedup.value("candidates", 0)}, {"kept", f.dedup.value("kept", 0)}};
            files.push_back(entry);
            std::printf("  %-24s %4zu sessions %4zu probes  hash %s  -> %s\n", dataset.c_str(), f.sessions, f.probes,
                        entry["hash"].get<std::string>().substr(0, 12).c_str(), path.c_str());
            if (f.dedup.is_object()) {
                const auto dropped = f.dedup.contains("dropped") ? f.dedup["dropped"].size() : 0;
                std::printf("  %-24s dedup (%s, Jaccard >= %.2f): %zu candidate(s) dropped and regenerated\n", "",
                            f.dedup.value("key", "").c_str(), f.dedup.value("threshold", 0.0),
                            static_cast<std::size_t>(dropped));
            }
        }
        manifest_extra["format"] = m_v2 ? data::k_format_v2 : data::k_format;
        manifest_extra["code_version"] = std::string(code_version());
        manifest_extra["datasets"] = files;
        // The manifest quotes paths given on the command line: bytes that are not UTF-8 are replaced.
        value_or_fatal(data::write_file_atomically(
            (m_staging / "manifest.json").string(), manifest_extra.dump(2, ' ', false, json::error_handler_t::replace) + "\n"));
        names.push_back("manifest.json");
        value_or_fatal(publish_staged(m_staging, m_target, names));
    }

private:
    struct File {
        std::ofstream out;
        std::size_t scenarios = 0, sessions = 0, messages = 0, probes = 0, abstain = 0;
        std::string hashes;  // the scenarios' line hashes, in order
        json first;          // the first scenario's summary (a file of one scenario is described by it)
        json dedup;
    };
    std::filesystem::path m_target, m_staging;
    std::vector<std::string> m_order;
    std::vector<std::string> m_extra;
    std::map<std::string, File> m_files;
    bool m_v2 = false;
};

void write_datasets(const std::vector<data::Scenario>& scenarios, const std::string& out_dir, json manifest_extra) {
    DatasetWriter writer(out_dir);
    for (const auto& s : scenarios) writer.add(s);
    writer.finish(std::move(manifest_extra));
}

// `generate NAME --model M`: the paper's pipeline (suites/memfail/model_generate.hpp). Each dataset
// is written as OUT/<dataset>.jsonl with its release-format CSV and its generation record
// (generation_config_<dataset>.json) beside it; replies are cached in OUT/generation.llm-cache.db
// (or --cache-db), so the same command after a kill makes new calls only for what is unanswered.
void generate_with_model(const GenerateOptions& o) {
    auto refuse = [](const std::string& what, const std::string& flag) {
        throw Fatal(make_error(ErrorKind::invalid_input,
                               what + " applies to the template generator; with --model the model writes the text "
                                      "and the code chooses only what the paper's code chooses",
                               flag));
    };
    if (!o.settings.empty()) refuse("--set", "--set");
    if (o.scenarios > 0) refuse("--scenarios", "--scenarios");
    if (!o.users.empty() || !o.months.empty() || !o.scale.empty()) refuse("--users, --months and --scale", "--model");
    const auto& memfail_names = mf::dataset_names();
    for (const auto& n : parse_name_list(o.names))
        if (const suites::Suite* suite = suites::find_suite(n); suite && suite->name() != "memfail")
            throw Fatal(make_error(ErrorKind::invalid_input,
                                   "generating with a model is not implemented for the " + n +
                                       " suite; --model writes the five MemFail datasets (all, or " +
                                       text::join(memfail_names, ", ") + ")",
                                   "--model"));
    const std::vector<std::string> names = suites::expand_dataset_names(parse_name_list(o.names));
    for (const auto& n : names) {
        if (std::find(memfail_names.begin(), memfail_names.end(), n) != memfail_names.end()) continue;
        if (const suites::Suite* suite = suites::suite_for_dataset(n))
            throw Fatal(make_error(ErrorKind::invalid_input,
                                   "generating with a model is not implemented for '" + n + "' (suite " + suite->name() +
                                       "); --model writes the five MemFail datasets (all, or " +
                                       text::join(memfail_names, ", ") + ")",
                                   "--model"));
        const std::vector<std::string> known = suites::known_dataset_names();
        const std::string hint = did_you_mean(n, known);
        throw Fatal(make_error(ErrorKind::invalid_input, "unknown dataset '" + n + "'; known: " + text::join(known, ", ") +
                                                             (hint.empty() ? std::string() : " (" + hint + ")")));
    }
    // The generator is the only model: the roles of `run` do not apply here.
    llm::LlmSettings settings = o.llm.resolve();
    settings.answer_model.clear();
    settings.judge_model.clear();
    settings.embed_model.clear();
    settings.system_model = o.model;
    const std::string ledger = (std::filesystem::path(o.out) / "generation").string();
    llm::LlmStack stack = value_or_fatal(llm::make_llm_stack(settings, ledger));
    if (settings.preflight) value_or_fatal(llm::preflight(*stack.preflight, settings));

    mf::GenerateModelOptions options;
    options.model = o.model;
    for (const auto& spec : o.model_for) {
        const auto eq = spec.find('=');
        const std::string dataset = eq == std::string::npos ? spec : spec.substr(0, eq);
        const std::string model = eq == std::string::npos ? std::string() : spec.substr(eq + 1);
        if (std::find(memfail_names.begin(), memfail_names.end(), dataset) == memfail_names.end() || model.empty())
            throw Fatal(make_error(ErrorKind::invalid_input,
                                   "expected DATASET=MODEL with DATASET one of " + text::join(memfail_names, ", ") +
                                       "; got '" + spec + "'",
                                   "--model-for"));
        options.models[dataset] = model;
    }
    options.seed = o.seed;
    options.rows = o.rows;
    options.max_planned = o.max_planned;
    options.concurrency = static_cast<std::size_t>(std::max(1, settings.concurrency));
    options.temperature = settings.temperature;
    options.llm_seed = settings.seed;
    options.progress = progress_line;
    mf::ModelGenerator generator(*stack.client, options);
    // Everything is generated before anything is written, so a killed generation leaves only the
    // reply cache behind (the five datasets are small).
    std::vector<mf::ModelDataset> generated;
    std::vector<std::string> failed;
    for (const auto& n : names) {
        progress_line("generating " + n + " with " + o.model + " (seed " + std::to_string(o.seed) + ", replies cached in " +
                      stack.cache_path + ")");
        auto d = generator.generate(n);
        if (!d) {
            // Every item failed its attempts: nothing to write for it. Anything else (the endpoint
            // failing) stops here; the cache keeps what was answered, so the same command resumes.
            if (d.error().kind != ErrorKind::invalid_output) throw Fatal(d.error());
            progress_line("error: " + d.error().describe());
            failed.push_back(n);
            continue;
        }
        // Dropped rows are topped up: a drop is a warning only when the dataset stayed short.
        const std::string level = d->shortfall.empty() ? "note: " : "warning: ";
        for (const auto& line : d->drops) progress_line(level + n + ": " + line);
        for (const auto& note : d->size_notes) progress_line("note: " + n + " (validate will say): " + note);
        generated.push_back(std::move(*d));
    }
    if (generated.empty())
        throw Fatal(make_error(ErrorKind::invalid_output,
                               "no dataset could be generated with '" + o.model + "': " + text::join(failed, ", ") +
                                   " failed in every row (see the errors above); nothing was written"));
    DatasetWriter writer(o.out);
    json summary = json::array();
    for (const auto& d : generated) {
        const std::string& n = d.scenario.dataset;
        writer.add(d.scenario);
        writer.add_file(d.csv_file, d.csv);
        writer.add_file(d.raw_csv_file, d.raw_csv);
        writer.add_file("generation_config_" + n + ".json", d.record.dump(2) + "\n");
        summary.push_back({{"dataset", n}, {"counts", d.record["counts"]}, {"calls", d.record["calls"]},
                           {"this_run", d.record["this_run"]}, {"shortfall", d.shortfall}});
    }
    std::printf("wrote %zu dataset(s) generated by %s to %s:\n", generated.size(), o.model.c_str(), o.out.c_str());
    writer.finish({{"seed", o.seed}, {"generator", mf::k_model_generator_version}, {"model", o.model},
                   {"prompts_hash", mf::generation_prompts_hash()}});
    for (const auto& entry : summary) {
        const json& c = entry["counts"];
        const json& calls = entry["calls"];
        const json& run = entry["this_run"];
        const std::size_t pair_dropped = c.value("pair_dropped", std::size_t{0});
        std::printf("  %-24s rows %zu/%zu kept%s; %zu planned (%zu top-up in %zu wave(s), at most %zu), %zu dropped (%zu as "
                    "duplicates)%s, %zu truncated, %zu retried attempt(s); %lld call(s), %lld prompt + %lld completion "
                    "tokens (this run: %lld new call(s), %lld cached)\n",
                    entry["dataset"].get<std::string>().c_str(), c["kept"].get<std::size_t>(),
                    c["target"].get<std::size_t>(), entry["shortfall"].get<std::string>().empty() ? "" : " SHORT",
                    c["planned"].get<std::size_t>(), c["top_up"].get<std::size_t>(), c["top_up_waves"].get<std::size_t>(),
                    c["max_planned"].get<std::size_t>(), c["dropped"].get<std::size_t>(),
                    c["dropped_as_duplicates"].get<std::size_t>(),
                    pair_dropped ? (", " + std::to_string(pair_dropped) + " left out with their pair").c_str() : "",
                    c["truncated"].get<std::size_t>(), c["retried_attempts"].get<std::size_t>(),
                    calls["requests"].get<long long>(), calls["prompt_tokens"].get<long long>(),
                    calls["completion_tokens"].get<long long>(), run["new_calls"].get<long long>(),
                    run["cached_calls"].get<long long>());
    }
    std::vector<std::string> short_ones;
    for (const auto& entry : summary)
        if (!entry["shortfall"].get<std::string>().empty()) {
            short_ones.push_back(entry["dataset"].get<std::string>());
            std::fprintf(stderr, "memfail: error: SHORT: %s\n", entry["shortfall"].get<std::string>().c_str());
        }
    if (!short_ones.empty())
        throw Fatal(make_error(ErrorKind::invalid_output,
                               text::join(short_ones, ", ") + (short_ones.size() == 1 ? " is" : " are") +
                                   " short of the target: rows kept failing after every top-up row the bound allows "
                                   "(--model writes what there is; `memfail datasets validate` will fail its size rule). "
                                   "Rerun with a larger --max-planned, another --seed or a stronger model; the cache "
                                   "keeps every reply" + (failed.empty() ? std::string() : "; " + text::join(failed, ", ") +
                                                                                   " could not be generated at all")));
    if (!failed.empty())
        throw Fatal(make_error(ErrorKind::invalid_output, text::join(failed, ", ") +
                                                              " could not be generated (every row failed); the other "
                                                              "datasets were written"));
}

void generate(const GenerateOptions& o) {
    if (!o.model.empty()) return generate_with_model(o);
    if (!o.model_for.empty())
        throw Fatal(make_error(ErrorKind::invalid_input,
                               "--model-for names a dataset's own model when generating with a model; give --model "
                               "too (the model of the other datasets)",
                               "--model-for"));
    if (o.rows > 0)
        throw Fatal(make_error(ErrorKind::invalid_input, "--rows applies to generating with a model (--model)", "--rows"));
    const std::vector<std::string> names = suites::expand_dataset_names(parse_name_list(o.names));
    DatasetWriter writer(o.out);
    json generators = json::object();
    for (const auto& n : names) {
        const suites::Suite* suite = suites::suite_for_dataset(n);
        if (!suite) {
            const std::vector<std::string> known = suites::known_dataset_names();
            const std::string hint = did_you_mean(n, known);
            throw Fatal(make_error(ErrorKind::invalid_input,
                                   "unknown dataset '" + n + "'; known: " + text::join(known, ", ") +
                                       (hint.empty() ? std::string() : " (" + hint + ")")));
        }
        suites::GenerateOptions options{o.seed, {}};
        if (o.scenarios > 0) {
            if (suite->name() == "memfail")
                throw Fatal(make_error(ErrorKind::invalid_input,
                                       "--scenarios applies to suites of many small scenarios (writ); '" + n +
                                           "' is one scenario by construction",
                                       "--scenarios"));
            options.params["scenarios"] = std::to_string(o.scenarios);
        }
        for (const auto& [flag, key, value] : {std::tuple{"--users", "users", &o.users},
                                               std::tuple{"--months", "months", &o.months},
                                               std::tuple{"--scale", "scale", &o.scale}}) {
            if (value->empty()) continue;
            if (suite->name() != "dynamic")
                throw Fatal(make_error(ErrorKind::invalid_input,
                                       std::string(flag) + " applies to the dynamic suite; '" + n + "' is " +
                                           suite->name() + "'s",
                                       flag));
            options.params[key] = *value;
        }
        for (const std::string& setting : o.settings) {
            const auto eq = setting.find('=');
            if (eq == std::string::npos || eq == 0)
                throw Fatal(make_error(ErrorKind::invalid_input,
                                       "bad setting '" + setting + "': expected KEY=VALUE (e.g. persona.name_pool=100)",
                                       "--set"));
            options.params[setting.substr(0, eq)] = setting.substr(eq + 1);
        }
        progress_line("generating " + n + " (seed " + std::to_string(o.seed) + ")");
        generators[suite->name()] = suite->name() == "memfail" ? std::string(mf::k_generator_version)
                                                               : suite->name() + "-gen";
        // Each scenario is written as soon as it is made: a dynamic user is ~2M tokens.
        value_or_fatal(suite->generate_each(n, options, [&](data::Scenario&& s) -> Result<void> {
            if (s.meta.contains("generator") && s.meta["generator"].is_string())
                generators[suite->name()] = s.meta["generator"];
            writer.add(s);
            return {};
        }));
    }
    std::printf("wrote %zu dataset(s) to %s:\n", names.size(), o.out.c_str());
    json extra = {{"seed", o.seed}};
    // One suite: "generator" as before; several: a generator per suite.
    if (generators.size() == 1) extra["generator"] = generators.begin().value();
    else extra["generators"] = generators;
    writer.finish(extra);
}

int validate(const ValidateOptions& o) {
    std::size_t total = 0;
    for (const auto& path : o.files) {
        auto loaded = data::read_jsonl(path);
        if (!loaded) {
            // A line that is not a scenario at all is one violation; the rest cannot be checked.
            std::printf("%s\n", loaded.error().describe().c_str());
            ++total;
            continue;
        }
        std::vector<data::Violation> violations;
        for (const auto& l : *loaded) {
            data::validate_structure(l.scenario, l.line, violations);
            if (const suites::Suite* suite = suites::find_suite(l.scenario.suite))
                suite->validate(l.scenario, l.line, violations);
            else mf::check_dataset_rules(l.scenario, l.line, violations);
        }
        for (std::size_t i = 0; i < violations.size(); ++i) {
            if (static_cast<int>(i) >= o.max_shown) {
                std::printf("%s: ... %zu more violation(s) not shown (raise --max)\n", path.c_str(),
                            violations.size() - i);
                break;
            }
            std::printf("%s\n", data::format_violation(path, violations[i]).c_str());
        }
        std::fprintf(stderr, "memfail: %s: %zu scenario(s), %zu violation(s)\n", path.c_str(), loaded->size(),
                     violations.size());
        total += violations.size();
    }
    return total == 0 ? 0 : 1;
}

// Prints probes as a person reads them: question, choices, answer, and each evidence fact with the
// messages that state it.
void show(const ShowOptions& o) {
    const auto loaded = value_or_fatal(run::load_datasets({o.dataset}, "", o.seed));
    std::size_t shown = 0;
    for (const auto& d : loaded) {
        const data::Scenario& s = d.scenario;
        // A file of many scenarios (writ) shows the ones holding the probes asked for.
        if (o.probes.empty() && shown >= o.limit) break;
        if (!o.probes.empty() && std::none_of(s.probes.begin(), s.probes.end(), [&](const data::Probe& p) {
                return std::find(o.probes.begin(), o.probes.end(), p.id) != o.probes.end();
            }))
            continue;
        const data::MessageIndex index(s);
        std::printf("# %s (%s): %zu sessions, %zu probes, hash %s\n", s.id.c_str(), d.origin.c_str(),
                    s.sessions.size(), s.probes.size(), d.hash.substr(0, 12).c_str());
        for (const auto& p : s.probes) {
            if (!o.probes.empty() && std::find(o.probes.begin(), o.probes.end(), p.id) == o.probes.end()) continue;
            if (o.probes.empty() && shown >= o.limit) break;
            ++shown;
            std::printf("\n[%s] %s (asked after %s)\n  Q: %s\n", p.id.c_str(), data::probe_kind_name(p.kind),
                        p.after_session.c_str(), p.question.c_str());
            for (std::size_t c = 0; c < p.choices.size(); ++c)
                std::printf("     %c. %s%s\n", static_cast<char>('A' + c), p.choices[c].c_str(),
                            p.correct_choice == std::string(1, static_cast<char>('A' + c)) ? "   <- correct" : "");
            std::printf("  A: %s\n", p.answer.c_str());
            if (!p.meta.empty()) std::printf("  meta: %s\n", p.meta.dump().c_str());
            // memfail/2: what the probe is graded against, and its facts' lives.
            if (!p.expected.is_null()) std::printf("  expected: %s\n", p.expected.dump().c_str());
            if (p.rubric) std::printf("  rubric: %s\n", data::to_json(p).at("rubric").dump().c_str());
            if (p.temporal)
                std::printf("  temporal: as of %s%s\n", p.temporal->as_of.empty() ? "now" : p.temporal->as_of.c_str(),
                            p.temporal->expect_current ? " (the current value)" : "");
            if (p.should_abstain) std::printf("  should abstain\n");
            for (const auto& id : p.targets) {
                const data::LedgerEvent* e = s.event(id);
                if (!e) continue;
                std::printf("  target %s (%s%s):\n", id.c_str(), data::memory_type_name(e->type),
                            e->should_persist ? "" : ", must not persist");
                for (const auto& r : e->history)
                    std::printf("    %s  %s  [%s, %s]\n", r.as_of.c_str(), r.value.dump().c_str(),
                                data::authority_name(r.authority), r.message_id.empty() ? "no message" : r.message_id.c_str());
                if (!e->retracted_in.empty()) std::printf("    retracted in session %s\n", e->retracted_in.c_str());
                for (const auto& r : e->distractors)
                    std::printf("    distractor %s  [%s, %s]\n", r.value.dump().c_str(), data::authority_name(r.authority),
                                r.message_id.c_str());
            }
            for (const auto& f : p.evidence) {
                std::printf("  evidence %s: %s\n", f.id.c_str(), f.text.c_str());
                for (const auto& kd : f.key_details)
                    std::printf("    key detail %s: \"%s\"\n", kd.name.c_str(), text::join(kd.variants, "\" | \"").c_str());
                for (const auto& id : f.message_ids) {
                    const data::Message* m = index.message(id);
                    const data::Session* session = index.session_of(id);
                    if (m) std::printf("    %s (%s, %s): %s\n", id.c_str(), session->id.c_str(), m->role.c_str(), m->content.c_str());
                }
            }
        }
    }
    if (shown == 0 && !o.probes.empty())
        throw Fatal(make_error(ErrorKind::not_found, "no probe named " + text::join(o.probes, ", "), o.dataset));
}

// Table 2 of the MemFail paper for each scenario of each file.
void stats(const StatsOptions& o) {
    std::shared_ptr<const text::Tokenizer> tokenizer;
    if (auto loaded = text::shared_tokenizer(o.encoding)) tokenizer = *loaded;
    else progress_line("warning: tokens not counted: " + loaded.error().describe());
    mf::TokenCounter count;
    if (tokenizer) count = [tokenizer](std::string_view t) { return tokenizer->count(t); };
    const std::string encoding = tokenizer ? tokenizer->encoding() : std::string();
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    std::string text_out;
    for (const auto& path : o.files) {
        // Errors name the file and line of the scenario that could not be read.
        const auto loaded = value_or_fatal(data::read_jsonl(path));
        for (const auto& l : loaded) {
            const auto st = mf::dataset_stats(l.scenario, count);
            if (o.format == "json") {
                nlohmann::ordered_json entry = {{"file", path}, {"line", l.line}};
                entry.update(mf::stats_json(st));
                entry["token_encoding"] = encoding.empty() ? nlohmann::ordered_json(nullptr)
                                                           : nlohmann::ordered_json(encoding);
                out.push_back(std::move(entry));
            } else {
                text_out += (text_out.empty() ? "" : "\n") + path + ":" + std::to_string(l.line) + ": " +
                            mf::stats_text(st, encoding);
            }
        }
    }
    if (o.format == "json") std::printf("%s\n", out.dump(2).c_str());
    else std::fwrite(text_out.data(), 1, text_out.size(), stdout);
}

// Adds the scenarios of `path` (a dataset file, or every *.jsonl file of a folder, in name order) to
// `input`. Of a dataset no strategy reads (a dynamic user of 2M tokens), only the name is kept.
void read_audit_files(const std::string& path, mf::AuditInput& input) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<std::string> files;
    if (fs::is_directory(path, ec)) {
        for (const auto& entry : fs::directory_iterator(path, ec))
            if (entry.path().extension() == ".jsonl" && entry.is_regular_file()) files.push_back(entry.path().string());
        if (ec) throw Fatal(make_error(ErrorKind::invalid_input, "cannot list the folder: " + ec.message(), path));
        if (files.empty()) throw Fatal(make_error(ErrorKind::invalid_input, "no *.jsonl dataset file in this folder", path));
        std::sort(files.begin(), files.end());
    } else if (fs::is_regular_file(path, ec)) {
        files.push_back(path);
    } else {
        throw Fatal(make_error(ErrorKind::invalid_input, "no such dataset file or folder", path));
    }
    for (const auto& file : files)
        value_or_fatal(data::for_each_jsonl(file, [&](data::LoadedScenario&& l) -> Result<void> {
            if (!mf::audit_applies(l.scenario.dataset)) {
                l.scenario.sessions.clear();
                l.scenario.probes.clear();
            }
            input.scenarios.push_back({std::move(l.scenario), file, l.line});
            return {};
        }));
}

// `datasets audit`: the memory-free strategies per dataset and input, beside the reference; exit 1
// when a threshold is missed.
void audit(const AuditOptions& o) {
    std::vector<mf::AuditInput> inputs;
    for (const auto& path : o.files) {
        mf::AuditInput input;
        input.name = path;
        read_audit_files(path, input);
        inputs.push_back(std::move(input));
    }
    std::optional<mf::AuditInput> reference;
    if (!o.against.empty()) {
        reference.emplace();
        reference->name = text::join(o.against, ", ");
        for (const auto& path : o.against) read_audit_files(path, *reference);
    }
    const mf::AuditReport report = value_or_fatal(mf::audit_datasets(inputs, reference));
    if (report.datasets.empty())
        throw Fatal(make_error(ErrorKind::invalid_input,
                               "none of the five MemFail datasets is in " + text::join(o.files, ", ") + ": nothing to audit"));
    if (o.format == "json") std::printf("%s\n", mf::audit_json(report).dump(2).c_str());
    else std::fputs(mf::audit_text(report).c_str(), stdout);
    if (!report.passed()) throw ExitStatus{1};
}

// "1 file", "3 rows".
std::string counted(std::size_t n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// The last line of an import that left something out, after every note: what was refused and
// skipped, counted. Without --allow-partial the import fails (exit 2, what could be imported is
// written), so a script or a supervisor never takes a partial import for a whole one.
void end_partial_import(const std::vector<std::string>& left_out, const std::string& see, const ImportOptions& o) {
    if (left_out.empty()) return;
    const std::string what = text::join(left_out, ", ") + " (see the " + see + " above)";
    if (o.allow_partial) {
        progress_line("a partial import, accepted (--allow-partial): " + what + "; the rest is written to " + o.out);
        return;
    }
    progress_line("error: the import is incomplete: " + what + "; the rest is written to " + o.out +
                  "; pass --allow-partial to accept a partial import");
    throw ExitStatus{2};
}

// What a suite's importer calls the elements of a file it skips (ImportResult::elements_skipped) and
// the files it refuses (a DynamicMem refusal leaves out a whole user folder).
std::string element_noun(const std::string& from) {
    if (from == "locomo") return "sample";
    if (from == "longmemeval") return "instance";
    if (from == "halumem") return "user";
    return "element";
}
std::string refused_noun(const std::string& from) { return from == "dynamicmem" ? "user folder" : "file"; }

// A suite's importer (--from writ): every note printed with its file and JSON path, and written
// beside the data (import-notes.json), so nothing that could not be mapped passes unseen.
void import_with_suite(const suites::Suite& suite, const ImportOptions& o) {
    // Scenarios are written as they come (LongMemEval-M is 2.8 GB): one in memory at a time.
    DatasetWriter writer(o.out);
    std::size_t scenarios = 0, probes = 0;
    auto result = value_or_fatal(suite.import_each(o.from, o.dir, [&](data::Scenario&& s) -> Result<void> {
        ++scenarios;
        probes += s.probes.size();
        writer.add(s);
        return {};
    }));
    json notes = json::array();
    for (const auto& n : result.notes) {
        progress_line("note: " + n.file + (n.json_path.empty() ? "" : ": " + n.json_path) + ": " + n.message);
        notes.push_back({{"file", n.file}, {"json_path", n.json_path}, {"message", n.message}});
    }
    std::printf("imported %zu scenario(s), %zu probe(s) from %zu file(s) of %s into %s", scenarios, probes,
                result.files_read, o.dir.c_str(), o.out.c_str());
    if (result.files_refused > 0) std::printf("; refused %zu file(s) (see the notes)", result.files_refused);
    if (result.elements_skipped > 0) std::printf("; skipped %zu element(s) (see the notes)", result.elements_skipped);
    std::printf("; %zu note(s):\n", result.notes.size());
    writer.finish({{"source", o.from}, {"from", o.dir}, {"files_read", result.files_read},
                   {"files_refused", result.files_refused}, {"elements_skipped", result.elements_skipped},
                   {"partial_accepted", o.allow_partial && (result.files_refused > 0 || result.elements_skipped > 0)},
                   {"notes", notes}});
    std::fflush(stdout);
    std::vector<std::string> left_out;
    if (result.files_refused > 0) left_out.push_back("refused " + counted(result.files_refused, refused_noun(o.from)));
    if (result.elements_skipped > 0) left_out.push_back("skipped " + counted(result.elements_skipped, element_noun(o.from)));
    end_partial_import(left_out, "notes", o);
}

void import_csv(const ImportOptions& o) {
    for (const suites::Suite* suite : suites::all_suites()) {
        const auto formats = suite->import_formats();
        if (std::find(formats.begin(), formats.end(), o.from) != formats.end()) return import_with_suite(*suite, o);
    }
    if (o.from != "memfail-csv")
        throw Fatal(make_error(ErrorKind::invalid_input,
                               "unknown import format '" + o.from + "'; supported: memfail-csv, writ, dynamicmem, locomo, longmemeval, halumem"));
    auto [scenarios, report] = value_or_fatal(mf::import_memfail_csv_dir(o.dir));
    for (const auto& n : report.notes) progress_line("note: " + n);
    for (const auto& w : report.warnings) progress_line("warning: " + w);
    // A row that cannot be converted is skipped, not fatal: the rest of the release still imports,
    // and the import exits 2 unless --allow-partial accepts it.
    for (const auto& e : report.errors) progress_line("error: " + e);
    std::printf("imported %zu row(s), %zu probe(s) from %s into %s", report.rows - report.skipped_rows,
                report.probes, o.dir.c_str(), o.out.c_str());
    if (report.skipped_rows > 0) std::printf("; skipped %zu row(s) that could not be converted", report.skipped_rows);
    if (report.incomplete_facts > 0)
        std::printf("; %zu fact(s) with incomplete key details (graded by the judge)", report.incomplete_facts);
    std::printf(":\n");
    write_datasets(scenarios, o.out,
                   {{"source", "memfail-csv"},
                    {"from", o.dir},
                    {"warnings", report.warnings.size()},
                    {"skipped_rows", report.skipped_rows},
                    {"partial_accepted", o.allow_partial && report.skipped_rows > 0},
                    {"incomplete_facts", report.incomplete_facts}});
    std::fflush(stdout);
    // Warnings (a detail not derived, incomplete facts) are not refusals: only skipped rows count.
    std::vector<std::string> left_out;
    if (report.skipped_rows > 0) left_out.push_back("skipped " + counted(report.skipped_rows, "row"));
    end_partial_import(left_out, "errors", o);
}

}  // namespace

void add_datasets_command(CLI::App& app, std::function<void()>& action) {
    CLI::App* cmd = app.add_subcommand("datasets", "Generate, validate, show, import, describe (stats) and audit datasets");
    cmd->require_subcommand(1);

    auto gen = std::make_shared<GenerateOptions>();
    CLI::App* g = cmd->add_subcommand(
        "generate", "Write datasets (deterministic for a seed) as JSONL, one file per dataset, with a manifest: the five "
                    "MemFail datasets (all), the write-integrity suite (writ: 16 categories, writ_<category>), or the long-horizon "
                    "suite (dynamic: one scenario per user); with --model, the five MemFail datasets written by a model");
    g->add_option("names", gen->names,
                  "Datasets to write: all (the five MemFail datasets), a suite (writ, dynamic), or dataset names, comma-separated")
        ->capture_default_str();
    g->add_option("--scenarios", gen->scenarios,
                  "Scenarios per dataset for suites of many small scenarios (writ; default 25)");
    g->add_option("--users", gen->users, "dynamic: users to generate, one scenario each (default 1)");
    g->add_option("--months", gen->months, "dynamic: months of activity per user, a multiple of 3 (default 15: C1-C5)");
    g->add_option("--scale", gen->scale,
                  "dynamic: multiplies the routine log volume (default 1: about 2M tokens per user; 0.02 for a quick look)");
    g->add_option("--set", gen->settings,
                  "KEY=VALUE (repeatable): a generator's difficulty setting. The five MemFail datasets take "
                  "persona.name_pool (default 30: names drawn with replacement), persona.distinct_names (false), "
                  "persona.pronoun_share (0.67), persona.multi_sentence_share (0.35), persona.context_share (0.65) and "
                  "long_hop.named_share (0.4: chains naming a person in every fact), conditional.name_reuse (0.2), "
                  "conditional.role_share (0.4), conditional.easy_rule_named_share (0.97), conditional.easy_name_share (0.25), "
                  "conditional.easy_paraphrase_share (0.02), conditional.hard_paraphrase_share "
                  "(0.15; conditional.paraphrase_share sets both), conditional.easy_loose_share (0) / hard_loose_share (0.2: of the "
                  "questions not paraphrased, those restating the behaviour loosely), conditional.easy_min_sentences / easy_max_sentences (6 / 8) and "
                  "conditional.hard_min_sentences / hard_max_sentences (9 / 11), docs/DATASETS.md; dynamic takes lookalikes (0: the share of noise logs that imitate the user's own calls, docs/DYNAMIC.md); an unknown key or a value out of range is refused");
    g->add_option("--out,-o", gen->out, "Output folder")->capture_default_str();
    g->add_option("--seed", gen->seed, "Generator seed")->capture_default_str();
    g->add_option("--model", gen->model,
                  "Write the five MemFail datasets with this model, as the paper's Appendix B does (docs/DATASETS.md, "
                  "\"Generating with a model\"): the code chooses rules, categories, names and chains from --seed, the "
                  "model writes the text; every reply is checked, retried up to 3 times, deduplicated; dropped rows are "
                  "topped up with new rows of the same bucket (see --max-planned), and the dataset is written with its "
                  "release-format CSV and generation_config_<dataset>.json. Replies are cached "
                  "(default OUT/generation.llm-cache.db), so a killed generation resumes. Not with --set; the run "
                  "roles (--answer-model, --judge-model, --system-model, --embed-model) do not apply");
    g->add_option("--model-for", gen->model_for,
                  "With --model: DATASET=MODEL (repeatable), a dataset's own model, as the paper's Table 2 names one "
                  "per dataset (conditional_facts_easy=gpt-4.1-mini, conditional_facts_hard=gpt-5-mini, "
                  "coexisting_facts=gpt-4.1-mini, persona_retrieval=gpt-5-mini, long_hop=gpt-5); a Hard rule is written "
                  "by the Hard model from its Easy source, Long-Hop's distractors by Long-Hop's; the record names each");
    g->add_option("--rows", gen->rows, "With --model: only the first N rows of each dataset (a trial run; the "
                                       "datasets then fail validate's size rules)");
    g->add_option("--max-planned", gen->max_planned,
                  "With --model: the top-up bound; rows planned in all (the plan's and the top-up rows for dropped "
                  "ones) at most this many times each dataset's target. A dataset still short then is written, "
                  "reported and the command exits non-zero")
        ->check(CLI::Range(1.0, 10.0))
        ->capture_default_str();
    gen->llm.add_to(*g, "OUT/generation.llm-cache.db");
    g->callback([gen, &action] { action = [gen] { generate(*gen); }; });

    auto val = std::make_shared<ValidateOptions>();
    CLI::App* v = cmd->add_subcommand(
        "validate", "Check dataset files against the format and every construction rule; prints each violation "
                    "as file:line: field: message and exits 1 when there is any");
    v->add_option("files", val->files, "JSONL dataset files")->required();
    v->add_option("--max", val->max_shown, "Most violations to print per file")->capture_default_str();
    v->callback([val, &action] {
        action = [val] {
            const int code = validate(*val);
            if (code != 0) throw ExitStatus{code};
        };
    });

    auto sh = std::make_shared<ShowOptions>();
    CLI::App* show_cmd = cmd->add_subcommand(
        "show", "Print probes as a person reads them: question, choices, answer, evidence facts, key details "
                "and the messages that state them");
    show_cmd->add_option("dataset", sh->dataset, "A dataset name (generated with --seed) or a JSONL file")->required();
    show_cmd->add_option("--probe,-p", sh->probes, "Probe ids to show (default: the first --limit probes)");
    show_cmd->add_option("--limit,-n", sh->limit, "How many probes to show when no --probe is given")->capture_default_str();
    show_cmd->add_option("--seed", sh->seed, "Seed for a generated dataset")->capture_default_str();
    show_cmd->callback([sh, &action] { action = [sh] { show(*sh); }; });

    auto st = std::make_shared<StatsOptions>();
    CLI::App* stats_cmd = cmd->add_subcommand(
        "stats", "Print the MemFail paper's Table 2 figures for dataset files (generated or imported): entries, "
                 "graded probes, mean tokens per entry, the yes/no split and condition types (Conditional), rows, "
                 "facts and tokens per N (Coexisting), chains, facts and tokens per K (Long-Hop), the share of "
                 "misleading questions (Persona); then the traits that set a dataset's difficulty (docs/DATASETS.md "
                 "defines them): words/message, the mean and median whitespace-separated words per stored message; "
                 "names (Conditional, Persona), the distinct person names of the entries (sessions), the most entries "
                 "sharing one name and one first name, each entry named by the meta.entity of the probes citing it "
                 "(or naming it by meta.row), else by the leading capitalised words of its first sentence (the "
                 "method is counted); pronoun facts "
                 "(Conditional, Persona), the evidence facts none of whose key details (bar the entity and one-word "
                 "qualifiers) sits in a sentence naming the person (mixed: some do; unknown: no person or detail found); chain voice "
                 "(Long-Hop), chains with a fact in the first person (i, me, my, mine, myself, I'm, I've), else naming "
                 "their person (meta.chain's head, else found in the text) in every fact, in some, or in none; q/evidence words (all), the "
                 "mean over graded probes with evidence of the share of the question's distinct non-stopword words "
                 "(no stemming) that occur in the messages its evidence cites");
    stats_cmd->add_option("files", st->files, "JSONL dataset files")->required();
    stats_cmd->add_option("--format,-f", st->format, "text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    stats_cmd->add_option("--encoding", st->encoding,
                          "Tokenizer for the token figures (cl100k_base, as the paper; or o200k_base); without its "
                          "rank files the figures are left out with a warning")
        ->check(CLI::IsMember({"cl100k_base", "o200k_base"}))
        ->capture_default_str();
    stats_cmd->callback([st, &action] { action = [st] { stats(*st); }; });

    auto au = std::make_shared<AuditOptions>();
    CLI::App* audit_cmd = cmd->add_subcommand(
        "audit", "Measure how far strategies that use no memory at all get on dataset files, to expose data whose "
                 "answers can be read without memory (docs/DATASETS.md, \"Auditing generated data\"). Per dataset and "
                 "input: a naive Bayes word model over the question alone, names masked (Conditional yes/no, Persona "
                 "direct or misleading), trained on the other inputs and leave-one-out within the file; Long-Hop option "
                 "elimination (options never seen as a wrong option in the other inputs, or in the file's other rows), "
                 "the option sharing most words with the question and the longest option; the share of sentences "
                 "opening on a frame (first five words) shared by 5% of the essays or more; Persona direct answers "
                 "found in two essays or more; Easy rule sentences naming their person. Prints a table per dataset "
                 "(strategy | input | accuracy % | chance % | n | reference) and a verdict per threshold: question-only "
                 "at most 60%, option elimination at most 40%, recurring frames at most 5% (Conditional, Persona), Easy "
                 "rules naming their person at least 90%; exits 1 when one is missed, 2 on bad input");
    audit_cmd->add_option("files", au->files,
                          "Dataset files or folders (a folder: every *.jsonl in it); each is one input, typically one "
                          "seed's `datasets generate` folder")
        ->required();
    audit_cmd->add_option("--against", au->against,
                          "The reference, beside which the same strategies are printed (typically the paper's release "
                          "imported with `datasets import --from memfail-csv`): a folder, or files (repeatable, read "
                          "together). Its cross-input figures are trained on every audited input; no threshold applies "
                          "to it");
    audit_cmd->add_option("--format,-f", au->format, "text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    audit_cmd->callback([au, &action] { action = [au] { audit(*au); }; });

    auto imp = std::make_shared<ImportOptions>();
    CLI::App* i = cmd->add_subcommand(
        "import", "Convert a released dataset to memfail's JSONL format, deriving evidence and key details");
    i->add_option("--from", imp->from,
                  "Source format: memfail-csv (the MemFail paper's CSV release), writ (WRIT's scenario JSON files), "
                  "dynamicmem (DynamicMem user folders), locomo (LoCoMo's locomo10.json), longmemeval (a LongMemEval "
                  "instance file, streamed) or halumem (HaluMem-Medium.jsonl or HaluMem-Long.jsonl, streamed). An import "
                  "that refuses a file or skips an element (a memfail-csv row, a DynamicMem user folder, a LoCoMo "
                  "sample, a LongMemEval instance, a HaluMem user) writes the rest, prints the count last and exits 2, "
                  "unless --allow-partial; warnings (a detail not derived, incomplete facts) do not count")
        ->capture_default_str();
    i->add_option("dir", imp->dir,
                  "Folder holding the release's files as released: for memfail-csv conditional_facts_dataset_easy.csv, "
                  "..., long_hop_chains.csv or <dataset>.csv (*_raw.csv and *.json are ignored); for writ one "
                  "<scenario>.json per scenario; for dynamicmem one user folder (task_packs.json, app_log_large.json) "
                  "or a folder of them; for locomo, longmemeval and halumem the file itself")
        ->required();
    i->add_option("--out,-o", imp->out, "Output folder")->capture_default_str();
    i->add_flag("--allow-partial", imp->allow_partial,
                "Accept an import that refused a file or skipped an element: the rest is written as always, the "
                "count is still printed last, and the command exits 0 (the manifest says partial_accepted)");
    i->callback([imp, &action] { action = [imp] { import_csv(*imp); }; });
}

}  // namespace memfail::cli
