// SPDX-License-Identifier: MIT
// The write-integrity generator: parameters, the per-scenario random streams and the dispatch to
// the sixteen category builders (build_changes.cpp, build_context.cpp). Scenario i of a category is
// drawn from Rng(seed).fork("writ/<category>").fork(i), so it is the same whatever the number of
// scenarios asked for.
#include <memfail/core/spec.hpp>
#include <memfail/suites/writ/categories.hpp>
#include <memfail/suites/writ/generate.hpp>
#include <memfail/suites/writ/lexicon.hpp>

#include <algorithm>

namespace memfail::suites::writ {

namespace {

constexpr std::size_t k_default_scenarios = 25;
constexpr std::size_t k_max_scenarios = 10000;

using Builder = void (*)(Draft&);

Builder builder_for(const std::string& category) {
    static const std::vector<std::pair<std::string, Builder>> k_builders = {
        {"drift", build_drift},
        {"temporal", build_temporal},
        {"provenance", build_provenance},
        {"constraint", build_constraint},
        {"entity", build_entity},
        {"forgetting", build_forgetting},
        {"abstention", build_abstention},
        {"update", build_update},
        {"multi_hop", build_multi_hop},
        {"work_state", build_work_state},
        {"lifecycle", build_lifecycle},
        {"trust_hierarchy", build_trust_hierarchy},
        {"extraction_drift", build_extraction_drift},
        {"failure_injection", build_failure_injection},
        {"certification", build_certification},
        {"closure", build_closure},
    };
    for (const auto& [name, builder] : k_builders)
        if (name == category) return builder;
    return nullptr;
}

Result<std::size_t> scenario_count(const GenerateOptions& options) {
    for (const auto& [key, value] : options.params) {
        if (key == "scenarios") continue;
        const std::string hint = did_you_mean(key, {"scenarios"});
        return make_error(ErrorKind::invalid_input,
                          "unknown parameter '" + key + "' for the write-integrity generator" +
                              (hint.empty() ? "" : " (" + hint + ")") + "; it takes: scenarios=N (1.." +
                              std::to_string(k_max_scenarios) + ")");
    }
    const auto it = options.params.find("scenarios");
    if (it == options.params.end()) return k_default_scenarios;
    const std::string& text = it->second;
    const bool digits = !text.empty() && text.size() <= 6 &&
                        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    const std::size_t n = digits ? static_cast<std::size_t>(std::stoul(text)) : 0;
    if (!digits || n < 1 || n > k_max_scenarios)
        return make_error(ErrorKind::invalid_input, "scenarios must be a whole number from 1 to " +
                                                        std::to_string(k_max_scenarios) + "; got '" + text + "'");
    return n;
}

}  // namespace

const std::vector<std::string>& categories() {
    static const std::vector<std::string> c = {"drift",     "temporal",   "provenance",      "constraint",
                                               "entity",    "forgetting", "abstention",      "update",
                                               "multi_hop", "work_state", "lifecycle",       "trust_hierarchy",
                                               "extraction_drift", "failure_injection", "certification", "closure"};
    return c;
}

std::string dataset_name(const std::string& category) { return "writ_" + category; }

Result<std::vector<data::Scenario>> generate_category(const std::string& category, const GenerateOptions& options) {
    const Builder builder = builder_for(category);
    if (!builder) {
        const std::string hint = did_you_mean(category, categories());
        return make_error(ErrorKind::invalid_input, "unknown write-integrity category '" + category + "'" +
                                                        (hint.empty() ? "" : " (" + hint + ")"));
    }
    MF_TRY_ASSIGN(const std::size_t count, scenario_count(options));
    const Result<Lexicon>& lexicon = writ_lexicon();
    if (!lexicon) return lexicon.error();
    const Rng root = Rng(options.seed).fork("writ/" + category);
    std::vector<data::Scenario> out;
    out.reserve(count);
    for (std::size_t i = 1; i <= count; ++i) {
        Draft draft(*lexicon, category, i, options.seed, root.fork(std::to_string(i)));
        builder(draft);
        out.push_back(draft.finish());
    }
    return out;
}

}  // namespace memfail::suites::writ
