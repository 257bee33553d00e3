// SPDX-License-Identifier: MIT
// The dynamic generator's entry points: its parameters and one user's scenario. User i is drawn
// from Rng(seed).fork("dynamic").fork(i), and each stage from its own fork of that, so a user is the
// same whatever the number of users asked for, and the grounded logs the same at every scale.
#include <memfail/core/spec.hpp>
#include <memfail/suites/dynamic/generate.hpp>
#include <memfail/suites/dynamic/plan.hpp>

#include <charconv>
#include <cstdio>

namespace memfail::suites::dynamic {

using namespace gen;

namespace {

constexpr int k_start_year = 2024;  // every user starts on January 1st

Error bad_param(const std::string& message) { return make_error(ErrorKind::invalid_input, message); }

Result<int> int_param(const std::string& name, const std::string& text, int lo, int hi) {
    int n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size())
        return bad_param(name + " must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                         "; got '" + text + "'");
    if (n < lo || n > hi)
        return bad_param(name + " must be from " + std::to_string(lo) + " to " + std::to_string(hi) + "; got " + text);
    return n;
}

Result<double> scale_param(const std::string& text) {
    double x = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    if (ec != std::errc() || end != text.data() + text.size())
        return bad_param("scale must be a number from 0.01 to 4; got '" + text + "'");
    if (!(x >= 0.01 && x <= 4)) return bad_param("scale must be from 0.01 to 4; got " + text);
    return x;
}

nlohmann::json windows_meta(const UserPlan& plan) {
    nlohmann::json out = nlohmann::json::array();
    for (int w = 0; w < plan.windows; ++w) {
        nlohmann::json window = {{"id", "W" + std::to_string(w + 1)},
                                 {"start", dates::format_date(dates::civil_from_days(plan.window_start[w]))},
                                 {"end", dates::format_date(dates::civil_from_days(plan.checkpoint_day(w)))},
                                 {"checkpoint", "C" + std::to_string(w + 1)},
                                 {"cause", nullptr}};
        if (w > 0) {
            const CauseDef& c = *plan.causes[w - 1];
            window["cause"] = {{"id", c.id}, {"kind", c.kind}, {"description", c.description}, {"changed", plan.changed[w - 1]}};
        }
        out.push_back(std::move(window));
    }
    return out;
}

nlohmann::json counts_meta(const data::Scenario& s, const UserPlan& plan) {
    std::size_t logs = 0, chars = 0;
    for (const auto& session : s.sessions)
        for (const auto& m : session.messages) ++logs, chars += m.content.size();
    return {{"logs", logs},
            {"grounded_logs", plan.grounded},
            {"noise_logs", logs - plan.grounded},
            {"content_chars", chars},
            {"estimated_tokens", chars / 4},  // a rough estimate; the tokenizer gives the real count
            {"state_keys", plan.keys.size()},
            {"probes", s.probes.size()}};
}

}  // namespace

Result<GeneratorOptions> generator_options(const suites::GenerateOptions& options) {
    GeneratorOptions out;
    out.seed = options.seed;
    const std::vector<std::string> known = {"users", "months", "scale", "lookalikes"};
    for (const auto& [key, value] : options.params) {
        if (key == "users") {
            MF_TRY_ASSIGN(out.users, int_param("users", value, 1, 1000));
        } else if (key == "months") {
            MF_TRY_ASSIGN(out.months, int_param("months", value, 3, 24));
            if (out.months % k_window_months != 0)
                return bad_param("months must be a multiple of 3 (one checkpoint per quarter); got " + value);
        } else if (key == "scale") {
            MF_TRY_ASSIGN(out.scale, scale_param(value));
        } else if (key == "lookalikes") {
            double x = -1;
            const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
            if (ec != std::errc() || end != value.data() + value.size() || !(x >= 0 && x <= 0.95))
                return bad_param("lookalikes must be a share from 0 to 0.95; got '" + value + "'");
            out.lookalikes = x;
        } else {
            const std::string hint = did_you_mean(key, known);
            return bad_param("unknown parameter '" + key + "' for the dynamic generator" +
                             (hint.empty() ? "" : " (" + hint + ")") +
                             "; it takes: users=N (1..1000), months=N (3..24, a multiple of 3), scale=X (0.01..4), "
                             "lookalikes=X (0..0.95)");
        }
    }
    return out;
}

Result<data::Scenario> generate_user(const GeneratorOptions& options, int user_index) {
    if (user_index < 0) return bad_param("user index must not be negative");
    if (options.months < 3 || options.months > 24 || options.months % k_window_months != 0)
        return bad_param("months must be 3..24 and a multiple of 3; got " + std::to_string(options.months));
    if (!(options.scale >= 0.01 && options.scale <= 4)) return bad_param("scale must be from 0.01 to 4");
    const Result<Lexicon>& lexicon = dynamic_lexicon();
    if (!lexicon) return lexicon.error();

    UserPlan plan;
    plan.options = options;
    plan.user = user_index;
    char id[32];
    std::snprintf(id, sizeof id, "dynamic-u%03d", user_index + 1);
    plan.scenario_id = id;
    plan.windows = options.months / k_window_months;
    const dates::Date start{k_start_year, 1, 1};
    for (int w = 0; w <= plan.windows; ++w)
        plan.window_start.push_back(dates::days_from_civil(dates::add_months(start, w * k_window_months)));

    const Rng root = Rng(options.seed).fork("dynamic").fork(std::to_string(user_index));
    plan_profile(plan, *lexicon, root.fork("profile"));
    emit_logs(plan, *lexicon, root.fork("logs"));

    data::Scenario s;
    s.format = data::k_format_v2;
    s.id = plan.scenario_id;
    s.suite = "dynamic";
    s.dataset = "dynamic";
    s.sessions = build_sessions(plan);
    plan.logs.clear();
    plan.logs.shrink_to_fit();
    build_ground_truth(plan, *lexicon, s);
    const nlohmann::json left_out = s.meta.value("ambiguous_service_tasks_left_out", nlohmann::json(0));
    s.meta = {{"generator", k_dynamic_generator_version},
              {"seed", options.seed},
              {"user", user_index + 1},
              {"months", options.months},
              {"scale", options.scale},
              {"lookalikes", options.lookalikes},
              {"start", dates::format_date(start)},
              {"profile", plan.profile},
              {"windows", windows_meta(plan)}};
    s.meta["counts"] = counts_meta(s, plan);
    s.meta["ambiguous_service_tasks_left_out"] = left_out;
    return s;
}

}  // namespace memfail::suites::dynamic
