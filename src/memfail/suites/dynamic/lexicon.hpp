// SPDX-License-Identifier: MIT
// The dynamic generator's state definitions, log templates and API calls: the JSON files under
// lexicon/, compiled in by cmake/embed.cmake, parsed once into the typed definitions below and
// checked (every key the generator reads, every placeholder a template holds). A malformed file is
// an error naming the file and the JSON path, never a crash halfway through generating a user.
//
// Templates are JSON whose strings hold placeholders: {name} a variable the generator supplies
// (a habit's {start_time}, an attribute's field, a collection's {item}), {@pool} a word drawn from
// a pool, {#lo-hi} an integer, {$lo-hi} an amount with cents, {id} a fresh reference. A string
// that is exactly one numeric placeholder becomes a JSON number. Internal to the generator
// (namespace gen).
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/dates.hpp>
#include <memfail/core/error.hpp>
#include <memfail/core/rng.hpp>
#include <memfail/data/model.hpp>

namespace memfail::suites::dynamic::gen {

// A habit's schedule (DynamicMem's shapes); days and weekdays are 0 = Monday .. 6 = Sunday.
struct Schedule {
    std::string type;       // daily | weekly | biweekly | monthly_by_date | monthly_nth_weekday
    std::vector<int> days;  // weekly, biweekly (one day)
    int day_of_month = 0;   // monthly_by_date (1..28)
    int nth = 0;            // monthly_nth_weekday (1..4)
    int weekday = 0;        // monthly_nth_weekday
    friend bool operator==(const Schedule&, const Schedule&) = default;
};
// "daily", "weekly:0,2,4", "biweekly:6", "monthly_by_date:15", "monthly_nth_weekday:2:3".
Result<Schedule> parse_schedule(std::string_view spec);
// The schedule as a state value's "schedule" object.
nlohmann::json schedule_json(const Schedule& schedule);
Schedule schedule_from_json(const nlohmann::json& value);
// Whether the schedule falls on `day` (days since the epoch); biweekly counts weeks from `origin`.
bool occurs_on(const Schedule& schedule, std::int64_t day, std::int64_t origin);
const std::vector<std::string>& frequency_types();

struct LogTemplate {
    std::string app, api;
    std::string at;  // habits: "start" (logged before the start time) or "end" (after the end time)
    nlohmann::json request = nlohmann::json::object();
    nlohmann::json response;  // null: the API's default response
};

struct HabitDef {
    std::string id, domain, label, activity, group, hint;
    std::vector<Schedule> schedules;
    std::vector<int> start_times;  // minutes after midnight
    std::vector<int> durations;    // minutes
    std::string locations;         // a pool name
    LogTemplate log;
};

struct FieldDef {
    std::string name;
    data::FieldType type = data::FieldType::text;
    data::FieldRole role = data::FieldRole::core;
    std::string pool;             // text, enumeration
    int lo = 0, hi = 0, step = 1;  // number
    // text: "organization" draws a role the employers table pairs with that (earlier) field's value.
    std::string paired_with;
};

struct AttributeDef {
    std::string id, domain, label, kind, group, service;
    std::vector<FieldDef> fields;  // single
    std::string pool;              // collection: where items come from
    int initial_lo = 0, initial_hi = 0;  // collection: how many items it starts with
    std::vector<LogTemplate> logs;
    bool collection() const { return kind == "collection"; }
};

struct Signal {
    bool favors = true;  // shows the favoured thing (else the avoided one)
    std::string mark;    // the surface string in the log that shows it
    LogTemplate log;
};

struct PreferenceOption {
    std::string statement, favors, avoids;
    std::vector<Signal> signals;
};

struct PreferenceDef {
    std::string id, domain, label, group, service;
    std::vector<PreferenceOption> options;
};

struct Effect {
    std::string key;  // "habits_state:long_run"
    std::string op;   // modify | acquire | drop | add_item | remove_item
};

struct CauseDef {
    std::string id, kind, description;
    std::vector<Effect> effects;
};

// One API call of an app (apps.json, tables.calls): its one shape and how often the phone makes it.
// Every log of the API, grounded or noise, carries exactly the request and response fields of
// `request` and `response`: a grounded template names the fields that show its key and the rest
// are filled from here. Noise is drawn from these templates at `per_day` calls a day (scale 1),
// with {start_time}, {end_time} and {date} supplied at random.
struct CallDef {
    std::string app, api;
    double per_day = 0;
    nlohmann::json request, response;
};

// An employer and the roles that fit it (attributes.json tables.employers), each with the
// occupation a profile states for it. The pools "employers" (the names) and "job_titles" (every
// role) are derived from this table.
struct EmployerRole {
    std::string title, occupation;
};

struct EmployerDef {
    std::string name, sector;
    std::vector<EmployerRole> roles;
    const EmployerRole* role(std::string_view title) const;  // null when it does not fit
};

struct Lexicon {
    std::map<std::string, std::vector<std::string>, std::less<>> pools;  // every file's pools, merged
    std::vector<EmployerDef> employers;
    std::vector<HabitDef> habits;
    std::vector<AttributeDef> attributes;
    std::vector<PreferenceDef> preferences;
    std::vector<CauseDef> causes;
    std::vector<CallDef> calls;
    std::map<std::string, std::size_t, std::less<>> call_index;  // "app.api" -> index into calls
    // app -> {"request": {...}, "response": {...}}: fields every call of the app carries.
    std::map<std::string, nlohmann::json, std::less<>> envelopes;

    const std::vector<std::string>& pool(std::string_view name) const;  // asserts it exists
    const EmployerDef* employer(std::string_view name) const;           // null when unknown
    const std::string& text(std::string_view pool_name) const { return pool(pool_name).front(); }
    // The call of an API; every template's API has one (parse_lexicon checks it).
    const CallDef& call(const std::string& app, const std::string& api) const;
};

// Parses and checks a set of files ({name, content}); errors are invalid_input with `where`
// "<file>: <json path>".
Result<Lexicon> parse_lexicon(const std::vector<std::pair<std::string, std::string>>& files);
// The embedded lexicon, parsed on first use (thread-safe) and shared.
const Result<Lexicon>& dynamic_lexicon();

// Variables a template may name, with their values.
using Vars = std::map<std::string, nlohmann::json, std::less<>>;
// Fills every placeholder of `tmpl` (see above). A variable missing from `vars` is a bug (asserts):
// parse_lexicon has checked every template against the variables its kind supplies. A pool word in
// `avoid` is drawn again (a few times) so noise does not show the user's own values.
nlohmann::json fill_template(const nlohmann::json& tmpl, const Vars& vars, const Lexicon& lexicon, Rng& rng,
                             const std::set<std::string>* avoid = nullptr);

}  // namespace memfail::suites::dynamic::gen
