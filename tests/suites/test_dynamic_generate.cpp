// SPDX-License-Identifier: MIT
// The dynamic (long-horizon profile) generator: deterministic per seed, structurally valid with
// checkpoint isolation, the profile never stated in any log, every gold evidence log carrying the
// strings that evidence its field, coverage of families, domains and schedule types, state_change
// labels that match the snapshots, the size DynamicMem has at the default scale, and clear
// parameter errors. Set MEMFAIL_PRINT_DYNAMIC=1 to print the default user's counts.
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/dynamic/dynamic_suite.hpp>
#include <memfail/suites/dynamic/generate.hpp>
#include <memfail/suites/dynamic/lexicon.hpp>
#include <memfail/suites/memfail/stats.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <tuple>

namespace dynamic = memfail::suites::dynamic;
namespace data = memfail::data;
namespace text = memfail::text;
using memfail::suites::GenerateOptions;

namespace {

dynamic::GeneratorOptions small(std::uint64_t seed = 42, int months = 15) {
    dynamic::GeneratorOptions o;
    o.seed = seed;
    o.months = months;
    o.scale = 0.02;
    return o;
}

// A small user, generated once per (seed, user, months) and shared by the tests.
const data::Scenario& user(std::uint64_t seed = 42, int index = 0, int months = 15) {
    static std::map<std::tuple<std::uint64_t, int, int>, data::Scenario> cache;
    const auto key = std::make_tuple(seed, index, months);
    auto it = cache.find(key);
    if (it == cache.end()) {
        auto s = dynamic::generate_user(small(seed, months), index);
        EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().describe());
        it = cache.emplace(key, std::move(s).value()).first;
    }
    return it->second;
}

std::map<std::string, const data::Message*> messages_by_id(const data::Scenario& s) {
    std::map<std::string, const data::Message*> out;
    for (const auto& session : s.sessions)
        for (const auto& m : session.messages) out[m.id] = &m;
    return out;
}

memfail::Result<dynamic::GeneratorOptions> parse(std::map<std::string, std::string> params) {
    GenerateOptions options;
    options.params = std::move(params);
    return dynamic::generator_options(options);
}

}  // namespace

TEST(DynamicGenerate, LexiconIsWellFormed) {
    const auto& lexicon = dynamic::gen::dynamic_lexicon();
    ASSERT_TRUE(lexicon.has_value()) << lexicon.error().describe();
    EXPECT_GE(lexicon->habits.size(), 15u);
    EXPECT_GE(lexicon->attributes.size(), 12u);
    EXPECT_GE(lexicon->preferences.size(), 12u);
}

TEST(DynamicGenerate, MalformedLexiconIsAClearError) {
    const std::string bad = R"({"about": "x", "pools": {"parks": ["A"]}, "tables": {"habits": [{"id": "run",
        "domain": "health_and_self_care", "label": "run", "activity": "run", "group": "g", "hint": "h",
        "schedules": ["weekly:9"], "start_times": ["06:00"], "durations": [30], "locations": "parks",
        "log": {"app": "a", "api": "b", "at": "end", "request": {"s": "{start_time}"}}}]}})";
    auto result = dynamic::gen::parse_lexicon({{"habits.json", bad}});
    ASSERT_FALSE(result.has_value());
    EXPECT_NE(result.error().where.find("habits.json"), std::string::npos) << result.error().describe();
    EXPECT_NE(result.error().message.find("weekly:9"), std::string::npos) << result.error().describe();
}

TEST(DynamicGenerate, IsDeterministicPerSeed) {
    const auto a = dynamic::generate_user(small(7, 6), 0);
    const auto b = dynamic::generate_user(small(7, 6), 0);
    const auto c = dynamic::generate_user(small(8, 6), 0);
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(data::to_json(*a).dump(), data::to_json(*b).dump());
    EXPECT_NE(data::to_json(*a).dump(), data::to_json(*c).dump());
    EXPECT_EQ(a->id, "dynamic-u001");
    EXPECT_EQ(a->format, data::k_format_v2);
    EXPECT_EQ(a->suite, "dynamic");
}

TEST(DynamicGenerate, SmallUserIsStructurallyValid) {
    for (int index = 0; index < 2; ++index) {
        const auto& s = user(42, index);
        std::vector<data::Violation> out;
        data::validate_structure(s, 0, out);
        for (const auto& v : out) ADD_FAILURE() << s.id << ": " << data::format_violation("", v);
        EXPECT_TRUE(out.empty());
        // It survives a round trip through its JSON form.
        auto back = data::scenario_from_json(data::to_json(s));
        ASSERT_TRUE(back.has_value()) << back.error().describe();
        EXPECT_EQ(data::to_json(*back).dump(), data::to_json(s).dump());
    }
}

// The suite's rules pass a generated user, and fail one whose tasks lost their evidence or that
// has nothing to grade (what a half-read import leaves).
TEST(DynamicGenerate, ValidationCatchesAUserThatLostItsEvidenceOrItsTasks) {
    const auto& s = user(42, 0);
    auto violations = [](const data::Scenario& u) {
        std::vector<data::Violation> out;
        dynamic::validate_dynamic(u, 0, out);
        return out;
    };
    EXPECT_TRUE(violations(s).empty());
    data::Scenario lost = s;
    std::size_t task = lost.probes.size();
    for (std::size_t i = 0; i < lost.probes.size() && task == lost.probes.size(); ++i)
        if (!lost.probes[i].task.empty()) task = i;
    ASSERT_LT(task, lost.probes.size());
    for (auto& f : lost.probes[task].fields) f.evidence.clear();
    const auto v = violations(lost);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].field, "probes[" + std::to_string(task) + "].fields");
    EXPECT_NE(v[0].message.find("evidence was lost"), std::string::npos);
    data::Scenario empty = s;
    empty.probes.clear();
    empty.profile.clear();
    std::set<std::string> fields;
    for (const auto& x : violations(empty)) fields.insert(x.field);
    EXPECT_TRUE(fields.count("probes"));
    EXPECT_TRUE(fields.count("profile"));
}

// `datasets stats` counts a long-horizon user's profile tasks and the distinct app logs their
// fields cite, not the evidence facts it has none of.
TEST(DynamicGenerate, StatsCountProfileTasksAndTheirEvidenceLogs) {
    const auto& s = user(42, 0);
    const auto st = memfail::suites::memfail_suite::dataset_stats(s);
    std::set<std::string> logs;
    std::int64_t tasks = 0;
    for (const auto& p : s.probes)
        if (!p.task.empty()) {
            ++tasks;
            for (const auto& f : p.fields) logs.insert(f.evidence.begin(), f.evidence.end());
        }
    EXPECT_GT(tasks, 0);
    EXPECT_EQ(st.profile_tasks, tasks);
    EXPECT_EQ(st.evidence_logs, static_cast<std::int64_t>(logs.size()));
    EXPECT_GT(st.evidence_logs, 0);
    const std::string text = memfail::suites::memfail_suite::stats_text(st, "");
    EXPECT_NE(text.find(std::to_string(tasks) + " profile tasks citing " + std::to_string(logs.size()) + " evidence app logs"),
              std::string::npos) << text;
    EXPECT_EQ(memfail::suites::memfail_suite::stats_json(st).at("evidence_logs"), st.evidence_logs);
}

// The (app, API, request keys, response keys) shape of a log.
std::string shape_of(const data::AppLog& log) {
    std::string out = log.app + "." + log.api + "|";
    for (const auto* part : {&log.request, &log.response}) {
        if (part->is_object())
            for (const auto& [k, v] : part->items()) out += k + ",";
        out += "|";
    }
    return out;
}

// What a shape-only filter does on one user: the share of logs it keeps when it keeps every
// (app, API, request keys, response keys) shape some evidence log has (so all the evidence), and
// the noise logs that hold every detail of some evidence log (a noise log that could stand in for it).
struct ShapeFigures {
    double kept = 0;
    std::size_t logs = 0, evidence = 0, detail_leaks = 0;
    std::map<std::string, std::set<std::string>> shapes_per_api;
};

ShapeFigures shape_figures(const data::Scenario& s) {
    ShapeFigures out;
    std::set<std::string> gold, shapes;
    for (const auto& p : s.probes)
        for (const auto& f : p.fields) gold.insert(f.evidence.begin(), f.evidence.end());
    const auto by_id = messages_by_id(s);
    for (const auto& id : gold) shapes.insert(shape_of(*by_id.at(id)->app_log));
    std::size_t kept = 0;
    for (const auto& [id, m] : by_id) {
        ++out.logs;
        kept += shapes.count(shape_of(*m->app_log)) > 0;
        out.shapes_per_api[m->app_log->app + "." + m->app_log->api].insert(shape_of(*m->app_log));
    }
    out.kept = static_cast<double>(kept) / static_cast<double>(out.logs);
    out.evidence = gold.size();
    std::vector<std::pair<std::string, std::string>> noise;  // id, normalized text
    for (const auto& [id, m] : by_id)
        if (!gold.count(id) && m->app_log->details.empty()) noise.emplace_back(id, text::normalize(m->content));
    for (const auto& id : gold) {
        const auto& details = by_id.at(id)->app_log->details;
        if (details.empty()) continue;
        std::vector<std::string> normal;
        for (const auto& d : details) normal.push_back(text::normalize(d));
        for (const auto& entry : noise) {
            const std::string& t = entry.second;
            if (std::all_of(normal.begin(), normal.end(), [&](const std::string& d) { return text::normalized_contains(t, d); })) {
                if (out.detail_leaks++ == 0)
                    ADD_FAILURE() << id << " details " << text::join(details, " | ") << " held by " << entry.first << ": "
                                  << by_id.at(entry.first)->content;
            }
        }
    }
    return out;
}

// The noise is the grounded logs' own API calls at each call's daily rate: every log of an API has
// one shape, so a filter that keeps the evidence shapes keeps at least 80% of every user's logs; no
// noise log holds every detail of an evidence log.
TEST(DynamicGenerate, NoiseSharesTheEvidenceShapesWithoutHoldingItsDetails) {
    for (int u = 0; u < 3; ++u) {
        auto options = small(42, 15);
        options.scale = 0.1;  // enough noise for the share to mean something
        const auto s = dynamic::generate_user(options, u);
        ASSERT_TRUE(s.has_value());
        const ShapeFigures f = shape_figures(*s);
        for (const auto& [api, shapes] : f.shapes_per_api) EXPECT_EQ(shapes.size(), 1u) << api;
        EXPECT_GE(f.kept, 0.8) << "user " << u;
        EXPECT_EQ(f.detail_leaks, 0u) << "user " << u;
        EXPECT_GT(f.evidence, 100u);
    }
}

// Look-alikes (lookalikes=X) add calls imitating the user's own routines and attributes: still never
// holding every detail of an evidence log, and nothing else of the user changes.
TEST(DynamicGenerate, LookalikesNeverHoldAnEvidenceLogsDetails) {
    auto options = small(42, 6);
    options.scale = 0.15;
    const auto plain = dynamic::generate_user(options, 0);
    options.lookalikes = 0.5;
    const auto alike = dynamic::generate_user(options, 0);
    ASSERT_TRUE(plain.has_value() && alike.has_value());
    EXPECT_EQ(shape_figures(*alike).detail_leaks, 0u);
    // The same profile and tasks (their evidence ids shift with the logs added among them).
    ASSERT_EQ(plain->probes.size(), alike->probes.size());
    for (std::size_t i = 0; i < plain->probes.size(); ++i) {
        EXPECT_EQ(plain->probes[i].id, alike->probes[i].id);
        EXPECT_EQ(plain->probes[i].expected, alike->probes[i].expected) << plain->probes[i].id;
    }
    EXPECT_EQ(plain->meta.at("profile"), alike->meta.at("profile"));
}

TEST(DynamicGenerate, ProfileIsNeverStated) {
    const auto& s = user();
    std::vector<std::string> statements;
    for (const auto& state : s.profile)
        for (const auto& snap : state.snapshots)
            if (snap.value.is_object() && snap.value.contains("statement"))
                statements.push_back(text::normalize(snap.value["statement"].get<std::string>()));
    ASSERT_FALSE(statements.empty());
    for (const auto& session : s.sessions)
        for (const auto& m : session.messages) {
            const std::string lower = text::to_lower(m.content);
            EXPECT_EQ(lower.find("prefer"), std::string::npos) << m.content;
            EXPECT_EQ(lower.find("habit"), std::string::npos) << m.content;
            const std::string normal = text::normalize(m.content);
            for (const auto& statement : statements)
                EXPECT_FALSE(text::normalized_contains(normal, statement)) << m.content;
        }
}

TEST(DynamicGenerate, EvidenceLogsCarryTheirDetails) {
    const auto& s = user();
    const auto by_id = messages_by_id(s);
    std::size_t checked = 0;
    auto check = [&](const std::string& id) {
        const data::Message* m = by_id.at(id);
        ASSERT_TRUE(m->app_log.has_value());
        ASSERT_FALSE(m->app_log->details.empty()) << id;
        EXPECT_EQ(m->content, data::render_app_log(*m->app_log));
        const std::string normal = text::normalize(m->content);
        for (const auto& d : m->app_log->details)
            EXPECT_TRUE(text::normalized_contains(normal, text::normalize(d))) << id << ": '" << d << "' in " << m->content;
        ++checked;
    };
    for (const auto& p : s.probes)
        for (const auto& f : p.fields) {
            EXPECT_FALSE(f.evidence.empty()) << p.id << " " << f.path;
            EXPECT_LE(f.evidence.size(), 4u);
            for (const auto& id : f.evidence) check(id);
        }
    for (const auto& state : s.profile)
        for (const auto& snap : state.snapshots)
            for (const auto& fe : snap.evidence) {
                EXPECT_FALSE(fe.log_ids.empty()) << state.key << " " << fe.path;
                for (const auto& id : fe.log_ids) check(id);
            }
    EXPECT_GT(checked, 100u);
}

TEST(DynamicGenerate, CoversFamiliesDomainsAndScheduleTypes) {
    std::set<std::string> families, schedules, domains;
    for (int index = 0; index < 3; ++index) {
        const auto& s = user(42, index);
        std::set<std::string> user_domains, user_families;
        for (const auto& state : s.profile) {
            user_families.insert(data::state_family_name(state.family));
            user_domains.insert(state.domain);
            for (const auto& snap : state.snapshots)
                if (state.family == data::StateFamily::habit && snap.value.is_object())
                    schedules.insert(snap.value["schedule"]["frequency_type"].get<std::string>());
        }
        EXPECT_EQ(user_families.size(), 3u) << s.id;
        EXPECT_EQ(user_domains.size(), 6u) << s.id;
        EXPECT_GE(s.profile.size(), 30u) << s.id;
        EXPECT_LE(s.profile.size(), 45u) << s.id;
        families.insert(user_families.begin(), user_families.end());
        domains.insert(user_domains.begin(), user_domains.end());
    }
    EXPECT_EQ(families, (std::set<std::string>{"attribute", "habit", "preference"}));
    EXPECT_EQ(domains.size(), 6u);
    EXPECT_EQ(schedules, (std::set<std::string>{"daily", "weekly", "biweekly", "monthly_by_date", "monthly_nth_weekday"}));
}

TEST(DynamicGenerate, QuarterlyCheckpoints) {
    const auto& s = user();
    ASSERT_EQ(s.checkpoints.size(), 5u);
    const std::vector<std::string> as_of = {"2024-03-31T23:59:59Z", "2024-06-30T23:59:59Z", "2024-09-30T23:59:59Z",
                                            "2024-12-31T23:59:59Z", "2025-03-31T23:59:59Z"};
    std::set<std::string> sessions;
    for (const auto& session : s.sessions) sessions.insert(session.id);
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(s.checkpoints[i].id, "C" + std::to_string(i + 1));
        EXPECT_EQ(s.checkpoints[i].as_of, as_of[i]);
        EXPECT_TRUE(sessions.count(s.checkpoints[i].after_session));
        EXPECT_LE(s.checkpoints[i].after_session.substr(1), as_of[i].substr(0, 10));
    }
    EXPECT_EQ(user(42, 0, 6).checkpoints.size(), 2u);
    // Two tasks per key per checkpoint where it holds, less the service tasks left out because a
    // competing habit due at the same moment would ask the same question.
    std::map<std::string, int> tasks;
    for (const auto& p : s.probes) ++tasks[p.task];
    EXPECT_EQ(tasks["state_completion"],
              tasks["personalized_service"] + s.meta.at("ambiguous_service_tasks_left_out").get<int>());
    EXPECT_EQ(tasks.size(), 2u);
    std::set<std::pair<std::string, std::string>> questions;
    for (const auto& p : s.probes) EXPECT_TRUE(questions.insert({p.after_session, p.question}).second) << p.id;
}

TEST(DynamicGenerate, StateChangeMatchesSnapshots) {
    const auto& s = user();
    std::map<std::string, const data::ProfileState*> states;
    for (const auto& state : s.profile) states[state.key] = &state;
    std::map<std::string, int> labels;
    for (const auto& p : s.probes) {
        const auto& snaps = states.at(p.state_key)->snapshots;
        std::size_t at = 0;
        while (at < snaps.size() && snaps[at].checkpoint != p.checkpoint) ++at;
        ASSERT_LT(at, snaps.size()) << p.id;
        const auto& value = snaps[at].value;
        ASSERT_FALSE(value.is_null()) << p.id;
        const bool held_before = at > 0 && !snaps[at - 1].value.is_null();
        const bool first_checkpoint = p.checkpoint == "C1";
        ++labels[p.state_change];
        if (p.state_change == "new") {
            EXPECT_FALSE(held_before) << p.id;
        }
        if (p.state_change == "updated") {
            EXPECT_TRUE(held_before && snaps[at - 1].value != value) << p.id;
        }
        if (p.state_change == "retained") {
            EXPECT_FALSE(first_checkpoint) << p.id;
            EXPECT_TRUE(held_before) << p.id;
            for (std::size_t i = 0; i <= at; ++i) {
                if (!snaps[i].value.is_null()) {
                    EXPECT_EQ(snaps[i].value, value) << p.id;
                }
            }
        }
        if (p.state_change == "settled") {
            EXPECT_TRUE(held_before && snaps[at - 1].value == value) << p.id;
            bool changed = false;
            for (std::size_t i = 0; i < at; ++i) changed = changed || (!snaps[i].value.is_null() && snaps[i].value != value);
            EXPECT_TRUE(changed) << p.id;
        }
        EXPECT_FALSE(p.state_change.empty()) << p.id << ": every task has its state change";
        if (p.task == "state_completion") {
            EXPECT_EQ(p.expected, value) << p.id;
        }
    }
    EXPECT_GT(labels["new"], 0);
    EXPECT_GT(labels["updated"], 0);
    EXPECT_GT(labels["retained"], 0);
    EXPECT_GT(labels["settled"], 0);
}

TEST(DynamicGenerate, TasksHaveTemplatesAndRoles) {
    const auto& s = user();
    for (const auto& p : s.probes) {
        const std::string tmpl = p.answer_template.dump();
        std::size_t fills = 0;
        for (auto at = tmpl.find("<fill>"); at != std::string::npos; at = tmpl.find("<fill>", at + 1)) ++fills;
        EXPECT_EQ(fills, p.fields.size()) << p.id;
        EXPECT_NE(p.question.find(tmpl), std::string::npos) << p.id;
        EXPECT_TRUE(p.meta.contains("family") && p.meta.contains("domain") && p.meta.contains("key"));
        if (p.task == "personalized_service" && p.meta["family"] == "habit") {
            EXPECT_EQ(p.fields.front().role, data::FieldRole::identity) << p.id;
        }
    }
}

TEST(DynamicGenerate, OptionErrors) {
    auto ok = parse({{"users", "3"}, {"months", "12"}, {"scale", "0.5"}});
    ASSERT_TRUE(ok.has_value()) << ok.error().describe();
    EXPECT_EQ(ok->users, 3);
    EXPECT_EQ(ok->months, 12);
    EXPECT_DOUBLE_EQ(ok->scale, 0.5);
    auto unknown = parse({{"user", "3"}});
    ASSERT_FALSE(unknown.has_value());
    EXPECT_NE(unknown.error().message.find("users"), std::string::npos) << unknown.error().message;
    EXPECT_FALSE(parse({{"users", "abc"}}).has_value());
    EXPECT_FALSE(parse({{"users", "0"}}).has_value());
    EXPECT_FALSE(parse({{"users", "1001"}}).has_value());
    EXPECT_FALSE(parse({{"months", "7"}}).has_value());
    EXPECT_FALSE(parse({{"months", "27"}}).has_value());
    EXPECT_FALSE(parse({{"scale", "5"}}).has_value());
    EXPECT_FALSE(parse({{"scale", "x"}}).has_value());
    auto months = parse({{"months", "10"}});
    ASSERT_FALSE(months.has_value());
    EXPECT_NE(months.error().message.find("multiple of 3"), std::string::npos);
}

// The one slow test (a few seconds): a default user has DynamicMem's size.
TEST(DynamicGenerate, DefaultUserHasDynamicMemSize) {
    dynamic::GeneratorOptions o;
    const auto t0 = std::chrono::steady_clock::now();
    auto s = dynamic::generate_user(o, 0);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(s.has_value()) << s.error().describe();
    std::size_t chars = 0, logs = 0, grounded = 0;
    for (const auto& session : s->sessions)
        for (const auto& m : session.messages) {
            chars += m.content.size();
            ++logs;
            grounded += !m.app_log->details.empty();
        }
    const std::size_t tokens = chars / 4;
    EXPECT_GE(tokens, 1'500'000u);
    EXPECT_LE(tokens, 3'000'000u);
    EXPECT_GE(grounded, 1500u);
    EXPECT_LE(grounded, 2000u);
    if (std::getenv("MEMFAIL_PRINT_DYNAMIC"))
        std::printf("tokens~%zu logs=%zu grounded=%zu keys=%zu probes=%zu sessions=%zu seconds=%.2f\n", tokens, logs,
                    grounded, s->profile.size(), s->probes.size(), s->sessions.size(), seconds);
}

namespace memfail::suites {
namespace {

// A conflicting log (a superseded value, a competing key) whose details every gold log's text also
// holds could never be told apart from the current evidence: by the rule that a memory holding a
// log's details holds its evidence, retrieving the gold alone would read as `conflated`. The
// lexicon's markers must be distinctive enough that this never happens.
TEST(DynamicGenerate, NoGoldLogHoldsAConflictingLogsDetails) {
    for (std::uint64_t seed : {1, 2, 3}) {
        const auto& s = user(seed);
        const data::MessageIndex messages(s);
        std::size_t checked = 0;
        for (const auto& p : s.probes) {
            std::set<std::string> gold;
            for (const auto& f : p.fields) gold.insert(f.evidence.begin(), f.evidence.end());
            for (const auto& c : p.conflicting) {
                const data::Message* conflicting = messages.message(c);
                ASSERT_NE(conflicting, nullptr);
                ASSERT_TRUE(conflicting->app_log);
                const auto& details = conflicting->app_log->details;
                ASSERT_FALSE(details.empty()) << c;
                for (const auto& g : gold) {
                    const std::string t = text::normalize(messages.message(g)->content);
                    EXPECT_FALSE(std::all_of(details.begin(), details.end(), [&](const std::string& d) {
                        return text::normalized_contains(t, text::normalize(d));
                    })) << p.id << ": gold " << g << " holds the details of conflicting " << c << "\n  gold: "
                       << messages.message(g)->content << "\n  conflicting: " << conflicting->content
                       << "\n  details: " << text::join(details, " | ");
                }
                ++checked;
            }
        }
        EXPECT_GT(checked, 0u);
    }
}

}  // namespace
}  // namespace memfail::suites

// ---- consistent users: 20 users of seed 42 ------------------------------------------------------

namespace {

constexpr int k_users = 20;

const data::ProfileState* state_of(const data::Scenario& s, const std::string& key) {
    for (const auto& state : s.profile)
        if (state.key == key) return &state;
    return nullptr;
}

}  // namespace

// Every employer a user holds is one of the lexicon's employers, and the role one that employer
// has (no "Chemistry Teacher at Brightline Health Systems"), also after a change of employer.
TEST(DynamicGenerate, EmployerAndRoleArePairedByTheLexicon) {
    const auto& lexicon = dynamic::gen::dynamic_lexicon();
    ASSERT_TRUE(lexicon.has_value()) << lexicon.error().describe();
    std::set<std::pair<std::string, std::string>> pairs;
    std::size_t held = 0, moves = 0;
    for (int i = 0; i < k_users; ++i) {
        const data::ProfileState* employer = state_of(user(42, i), "attributes_state:employer");
        if (!employer) continue;
        const nlohmann::json* before = nullptr;
        for (const auto& snap : employer->snapshots) {
            if (snap.value.is_null()) continue;
            const std::string organization = snap.value.at("organization"), role = snap.value.at("role");
            const auto* e = lexicon->employer(organization);
            ASSERT_NE(e, nullptr) << organization;
            EXPECT_NE(e->role(role), nullptr) << user(42, i).id << " " << snap.checkpoint << ": " << role << " at " << organization;
            pairs.insert({organization, role});
            ++held;
            if (before && before->at("organization") != snap.value.at("organization")) ++moves;
            before = &snap.value;
        }
    }
    EXPECT_GT(held, 20u);
    EXPECT_GT(moves, 0u) << "no user changed employer: the change of employer is untested";
    EXPECT_GT(pairs.size(), 8u);
}

// The employers table is checked when loaded: a role listed twice for one employer, or an
// "employers" pool listed beside the table it is derived from, is an error naming the file.
TEST(DynamicGenerate, EmployersTableIsChecked) {
    const std::string twice = R"({"pools": {}, "tables": {"employers": [{"name": "Acme", "sector": "retail", "roles": [
        {"title": "Clerk", "occupation": "store clerk"}, {"title": "Clerk", "occupation": "cashier"}]}]}})";
    auto a = dynamic::gen::parse_lexicon({{"attributes.json", twice}});
    ASSERT_FALSE(a.has_value());
    EXPECT_NE(a.error().where.find("attributes.json"), std::string::npos) << a.error().describe();
    EXPECT_NE(a.error().message.find("listed twice"), std::string::npos) << a.error().describe();
    const std::string pool = R"({"pools": {"employers": ["Acme"]}, "tables": {"employers": [{"name": "Acme",
        "sector": "retail", "roles": [{"title": "Clerk", "occupation": "store clerk"}]}]}})";
    auto b = dynamic::gen::parse_lexicon({{"attributes.json", pool}});
    ASSERT_FALSE(b.has_value());
    EXPECT_NE(b.error().message.find("derived from tables.employers"), std::string::npos) << b.error().describe();
}

// The profile's occupation is what the user's first role at their employer is; a user without an
// employer has one of the lexicon's occupations.
TEST(DynamicGenerate, OccupationAgreesWithTheFirstEmployerRole) {
    const auto& lexicon = dynamic::gen::dynamic_lexicon();
    ASSERT_TRUE(lexicon.has_value());
    const auto& occupations = lexicon->pool("occupations");
    std::size_t with = 0, without = 0;
    for (int i = 0; i < k_users; ++i) {
        const auto& s = user(42, i);
        const std::string occupation = s.meta.at("profile").at("occupation");
        const data::ProfileState* employer = state_of(s, "attributes_state:employer");
        const nlohmann::json* first = nullptr;
        if (employer)
            for (const auto& snap : employer->snapshots)
                if (!first && !snap.value.is_null()) first = &snap.value;
        if (!first) {
            ++without;
            EXPECT_NE(std::find(occupations.begin(), occupations.end(), occupation), occupations.end()) << s.id << ": " << occupation;
            continue;
        }
        ++with;
        const auto* e = lexicon->employer(first->at("organization").get<std::string>());
        ASSERT_NE(e, nullptr);
        const auto* role = e->role(first->at("role").get<std::string>());
        ASSERT_NE(role, nullptr);
        EXPECT_EQ(occupation, role->occupation) << s.id << ": " << role->title << " at " << e->name;
    }
    EXPECT_GT(with, 0u);
    EXPECT_GT(without, 0u);
}

// Places fit any of the users' cities: no place a habit or an attribute draws from (nor a value a
// user holds) names a real city's landmark or neighbourhood, or one of the cities themselves.
TEST(DynamicGenerate, PlacesAreNotTiedToARealCity) {
    const auto& lexicon = dynamic::gen::dynamic_lexicon();
    ASSERT_TRUE(lexicon.has_value());
    std::vector<std::string> landmarks = {
        "Frick", "Carnegie", "Mellon", "Allegheny", "Strip District", "Lawrenceville", "Squirrel Hill", "Shadyside",
        "Bloomfield", "Mount Washington", "Forbes", "Liberty Avenue", "Penn Circle", "Giant Eagle", "Baum",
        "Westinghouse", "Steel City", "Three Rivers", "Keystone", "Oakland", "Dormont", "Mount Lebanon",
        "Regent Square", "Highland Park", "Wexford", "East End"};
    for (const auto& city : lexicon->pool("cities")) landmarks.push_back(city.substr(0, city.find(',')));
    auto check = [&](const std::string& where, const std::string& place) {
        for (const auto& landmark : landmarks)
            EXPECT_FALSE(text::contains_phrase(place, landmark)) << where << ": '" << place << "' names " << landmark;
    };
    std::set<std::string> pools;
    for (const auto& h : lexicon->habits) pools.insert(h.locations);
    for (const auto& a : lexicon->attributes) {
        if (a.collection()) pools.insert(a.pool);
        for (const auto& f : a.fields)
            if (!f.pool.empty()) pools.insert(f.pool);
    }
    for (const auto& pool : pools)
        for (const auto& place : lexicon->pool(pool)) check("pool " + pool, place);
    std::size_t values = 0;
    for (int i = 0; i < k_users; ++i)
        for (const auto& state : user(42, i).profile)
            if (state.family != data::StateFamily::preference)
                for (const auto& snap : state.snapshots)
                    if (snap.value.is_object())
                        for (const auto& [field, v] : snap.value.items())
                            if (v.is_string()) check(user(42, i).id + " " + state.key, v.get<std::string>()), ++values;
    EXPECT_GT(values, 500u);
}

// No two users of one seed hold the same value of a habit in any window (the same schedule, times
// and place), though their habits draw from the same lexicon.
TEST(DynamicGenerate, NoTwoUsersShareAHabitValue) {
    std::map<std::tuple<std::string, std::string, std::string>, std::string> holder;  // (key, checkpoint, value) -> user
    std::size_t checked = 0;
    for (int i = 0; i < k_users; ++i) {
        const auto& s = user(42, i);
        for (const auto& state : s.profile) {
            if (state.family != data::StateFamily::habit) continue;
            for (const auto& snap : state.snapshots) {
                if (snap.value.is_null()) continue;
                ++checked;
                const auto [it, fresh] = holder.emplace(std::make_tuple(state.key, snap.checkpoint, snap.value.dump()), s.id);
                EXPECT_TRUE(fresh) << s.id << " and " << it->second << " both hold " << state.key << " = " << snap.value.dump()
                                   << " at " << snap.checkpoint;
            }
        }
    }
    EXPECT_GT(checked, 500u);
}
