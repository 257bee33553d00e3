// SPDX-License-Identifier: MIT
// Write-integrity categories about a value that changes: drift, temporal, update, lifecycle,
// trust_hierarchy, extraction_drift, failure_injection, certification, closure. Each builder decides
// which sessions carry which statement, records every value in the ledger with the message that
// states it, and asks probes whose expected value is the ledger's value at the probe's time.
#include <memfail/core/text.hpp>
#include <memfail/suites/writ/categories.hpp>

#include <algorithm>
#include <cmath>

namespace memfail::suites::writ {

using data::MemoryType;
using data::RubricKind;
using nlohmann::json;

data::Probe value_probe(Draft& d, std::size_t after, const std::string& question, const std::string& asks,
                        const std::string& event_id, const json& expected, const std::string& written,
                        const Msg& source, RubricKind kind) {
    data::Probe p = d.new_probe(after, question, asks);
    p.kind = data::ProbeKind::open;
    p.targets = {event_id};
    p.expected = expected;
    p.expected_source = source.id;
    data::Rubric r;
    r.kind = kind;
    if (kind == RubricKind::numeric) r.number = expected.get<double>();
    p.rubric = r;
    p.answer = d.answer("current", {{"value", written}});
    d.evidence(p, event_id, {source}, {{"value", {written}}});
    return p;
}

namespace {

const LexEntry& entry(const std::vector<LexEntry>& table, const std::string& id) {
    for (const auto& e : table)
        if (e.id == id) return e;
    MF_ASSERT(false, "a lexicon entry the generator names is missing");
    return table.front();
}

bool is_address(const LexEntry& attr) { return attr.text("value_source") == "address"; }

RubricKind value_kind(const LexEntry& attr) { return is_address(attr) ? RubricKind::address : RubricKind::exact; }

// `count` values of an attribute, none a part of another or of `avoid`.
std::vector<std::string> attribute_values(Draft& d, const LexEntry& attr, std::size_t count,
                                          const std::vector<std::string>& avoid = {}) {
    if (!is_address(attr)) return d.distinct(attr.list("values"), count, avoid);
    std::vector<std::string> out, seen = avoid;
    while (out.size() < count) {
        out.push_back(d.address(seen));
        seen.push_back(out.back());
    }
    return out;
}

Vars person_vars(const Person& p) {
    return {{"relation", p.relation}, {"relation_cap", text::capitalize(p.relation)}, {"name", p.first}};
}

// One value after another, each stated by the user in its session: the first introduced, the rest
// updates, explicit or (where `indirect` says so) only implied. Returns the stating messages.
std::vector<Msg> state_chain(Draft& d, const LexEntry& attr, const std::string& event_id,
                             const std::vector<std::string>& values, const std::vector<std::size_t>& sessions,
                             const std::vector<bool>& indirect, double p_bury) {
    std::vector<Msg> msgs;
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::size_t s = sessions[i];
        std::string said;
        if (i == 0) said = d.say(attr.list("intro"), {{"value", values[i]}});
        else if (indirect[i - 1]) said = d.say(attr.list("update_indirect"), {{"value", values[i]}});
        else said = d.say(attr.list("update"), {{"value", values[i]}, {"old", values[i - 1]}});
        const Msg m = d.user(s, d.maybe_bury(said, p_bury));
        d.value(event_id, values[i], m, {values[i]});
        if (i == 0) d.ack(s, values[i]);
        else if (indirect[i - 1]) d.ack(s, values[i], 0.25);
        else d.ack(s, values[i], 0.6, values[i - 1]);
        if (i > 0 && indirect[i - 1]) d.trap("indirect_update");
        msgs.push_back(m);
    }
    return msgs;
}

// Someone else's value of the same attribute, said in `session`: a near-duplicate distractor.
void other_persons_value(Draft& d, const LexEntry& attr, const std::string& event_id, const std::string& value,
                         std::size_t session) {
    const Person p = d.person();
    Vars vars = person_vars(p);
    vars.emplace_back("value", value);
    const Msg m = d.user(session, d.say(attr.list("other"), vars));
    d.ack_plain(session);
    d.distractor(event_id, value, m, {value}, data::Authority::user_stated);
    d.trap("near_duplicate");
}

// The near-duplicate of an attribute's values: a permuted house number on one of the user's
// streets, or another value of the pool (none of `avoid`).
std::string near_value(Draft& d, const LexEntry& attr, const std::vector<std::string>& values,
                       const std::vector<std::string>& avoid) {
    if (is_address(attr)) return d.near_address(d.rng.pick(values));
    return attribute_values(d, attr, 1, avoid).front();
}

data::Probe history_probe(Draft& d, const std::string& question, const std::string& event_id,
                          const std::vector<std::string>& values, const std::vector<Msg>& msgs) {
    data::Probe p = d.new_probe(d.last_session(), question, "history");
    std::vector<std::string> distinct_values;
    for (const auto& v : values)
        if (std::find(distinct_values.begin(), distinct_values.end(), v) == distinct_values.end())
            distinct_values.push_back(v);
    p.targets = {event_id};
    p.expected = values;
    p.expected_source = msgs.back().id;
    data::Rubric r;
    r.kind = RubricKind::structured;
    r.required = distinct_values;
    p.rubric = r;
    p.capabilities = {"retrieval", "update_tracking", "history_preservation"};
    p.failure_modes = {"missing_memory", "silent_drift"};
    p.answer = d.answer("history", {{"values", prose_list(values)}});
    std::vector<std::pair<std::string, std::vector<std::string>>> details = {{"value", {values.back()}}};
    for (std::size_t i = 0; i + 1 < values.size(); ++i)
        details.push_back({"previous_" + std::to_string(i + 1), {values[i]}});
    d.evidence(p, event_id, msgs, details);
    return p;
}

// The value at a checkpoint between two of its statements: the one stated at `index`.
data::Probe checkpoint_probe(Draft& d, const LexEntry& attr, const std::string& event_id,
                             const std::vector<std::string>& values, const std::vector<Msg>& msgs,
                             const std::vector<std::size_t>& sessions, std::size_t index) {
    const std::size_t at = static_cast<std::size_t>(
        d.rng.between(static_cast<std::int64_t>(sessions[index]), static_cast<std::int64_t>(sessions[index + 1]) - 1));
    data::Probe p = value_probe(d, at, d.say(attr.list("ask_current"), {}), "current", event_id, values[index],
                                values[index], msgs[index], value_kind(attr));
    p.capabilities = {"retrieval", "update_tracking"};
    p.failure_modes = {"stale_memory", "memory_hallucination"};
    return p;
}

std::size_t sessions_for(Draft& d, std::size_t needed) {
    return static_cast<std::size_t>(d.rng.between(static_cast<std::int64_t>(std::max<std::size_t>(3, needed)), 12));
}

}  // namespace

// A mutable fact that changes 2-4 times; asked for its current value and its whole history.
void build_drift(Draft& d) {
    const LexEntry& attr = d.rng.pick(d.table("attributes.json", "attributes"));
    const std::size_t count = static_cast<std::size_t>(d.rng.between(3, 5));
    d.make_sessions(sessions_for(d, count + 1));
    const std::vector<std::size_t> sessions = d.slots(count);
    const std::vector<std::string> values = attribute_values(d, attr, count);
    const std::string event_id = attr.id;
    d.event(event_id, MemoryType::mutable_fact, "the user's " + attr.text("label"));
    std::vector<bool> indirect;
    for (std::size_t i = 1; i < count; ++i) indirect.push_back(d.rng.chance(0.3));
    const std::vector<Msg> msgs = state_chain(d, attr, event_id, values, sessions, indirect, 0.2);
    if (d.rng.chance(0.6))
        other_persons_value(d, attr, event_id, near_value(d, attr, values, values), d.rng.below(d.session_count()));

    data::Probe current = value_probe(d, d.last_session(), d.say(attr.list("ask_current"), {}), "current", event_id,
                                      values.back(), values.back(), msgs.back(), value_kind(attr));
    current.capabilities = {"retrieval", "update_tracking"};
    current.failure_modes = {"stale_memory", "silent_drift"};
    d.add_probe(std::move(current));
    d.add_probe(history_probe(d, d.say(attr.list("ask_history"), {}), event_id, values, msgs));
    if (d.rng.chance(0.35)) {
        const std::size_t index = d.rng.below(count - 1);
        d.add_probe(checkpoint_probe(d, attr, event_id, values, msgs, sessions, index));
    }
}

// An address or a role that changes; asked what it was on a past date, and what it is now.
void build_temporal(Draft& d) {
    const auto& attrs = d.table("attributes.json", "attributes");
    static const std::vector<std::string> k_roles = {"job_title", "employer", "team"};
    const LexEntry& attr = d.rng.chance(0.6) ? entry(attrs, "address") : entry(attrs, d.rng.pick(k_roles));
    const std::size_t count = static_cast<std::size_t>(d.rng.between(3, 4));
    // Ten days at least between sessions, so a date strictly between two values always exists.
    d.make_sessions(sessions_for(d, count + 1), 10);
    const std::vector<std::size_t> sessions = d.slots(count);
    const std::vector<std::string> values = attribute_values(d, attr, count);
    const std::string event_id = attr.id;
    d.event(event_id, MemoryType::mutable_fact, "the user's " + attr.text("label"));
    std::vector<bool> indirect;
    for (std::size_t i = 1; i < count; ++i) indirect.push_back(d.rng.chance(0.3));
    const std::vector<Msg> msgs = state_chain(d, attr, event_id, values, sessions, indirect, 0.2);
    if (d.rng.chance(0.6))
        other_persons_value(d, attr, event_id, near_value(d, attr, values, values), d.rng.below(d.session_count()));

    // As of a past date: the value stated at `index` and not yet replaced.
    const std::size_t index = d.rng.below(count - 1);
    const int day = d.day_between(sessions[index], sessions[index + 1]);
    data::Probe past = value_probe(d, d.last_session(), d.say(attr.list("ask_as_of"), {{"date", Draft::date_text(day)}}),
                                   "as_of", event_id, values[index], values[index], msgs[index], value_kind(attr));
    past.temporal = data::TemporalQuery{Draft::noon(day), false};
    past.capabilities = {"retrieval", "temporal_replay"};
    past.failure_modes = {"stale_memory", "silent_drift"};
    past.answer = d.answer("as_of", {{"date", Draft::date_text(day)}, {"value", values[index]}});
    d.add_probe(std::move(past));

    data::Probe now = value_probe(d, d.last_session(), d.say(attr.list("ask_current"), {}), "current", event_id,
                                  values.back(), values.back(), msgs.back(), value_kind(attr));
    now.temporal = data::TemporalQuery{"", true};
    now.capabilities = {"retrieval", "update_tracking"};
    now.failure_modes = {"stale_memory"};
    d.add_probe(std::move(now));
    if (d.rng.chance(0.3)) {
        const std::size_t at = d.rng.below(count - 1);
        d.add_probe(checkpoint_probe(d, attr, event_id, values, msgs, sessions, at));
    }
}

// Two or three facts, each updated once: at least one update explicit, one only implied ("started
// at X last month"). Asked for each current value; sometimes for one before its update.
void build_update(Draft& d) {
    std::vector<LexEntry> attrs = d.table("attributes.json", "attributes");
    d.rng.shuffle(attrs);
    const std::size_t count = static_cast<std::size_t>(d.rng.between(2, 3));
    attrs.resize(count);
    d.make_sessions(sessions_for(d, 2 * count));
    std::vector<std::size_t> pool = d.slots(2 * count);
    d.rng.shuffle(pool);
    struct Fact {
        const LexEntry* attr;
        std::vector<std::string> values;
        std::vector<std::size_t> sessions;
        std::vector<Msg> msgs;
    };
    std::vector<Fact> facts;
    std::vector<std::string> used;
    for (std::size_t k = 0; k < count; ++k) {
        Fact f;
        f.attr = &attrs[k];
        f.values = attribute_values(d, *f.attr, 2, used);
        used.insert(used.end(), f.values.begin(), f.values.end());
        f.sessions = {std::min(pool[2 * k], pool[2 * k + 1]), std::max(pool[2 * k], pool[2 * k + 1])};
        d.event(f.attr->id, MemoryType::mutable_fact, "the user's " + f.attr->text("label"));
        // The first fact's update is implied, the second's explicit, a third's either.
        const bool indirect = k == 0 || (k == 2 && d.rng.chance(0.5));
        f.msgs = state_chain(d, *f.attr, f.attr->id, f.values, f.sessions, {indirect}, 0.2);
        facts.push_back(std::move(f));
    }
    if (d.rng.chance(0.5)) {
        const Fact& f = d.rng.pick(facts);
        other_persons_value(d, *f.attr, f.attr->id, near_value(d, *f.attr, f.values, used),
                            d.rng.below(d.session_count()));
    }
    for (const Fact& f : facts) {
        data::Probe p = value_probe(d, d.last_session(), d.say(f.attr->list("ask_current"), {}), "current", f.attr->id,
                                    f.values.back(), f.values.back(), f.msgs.back(), value_kind(*f.attr));
        p.capabilities = {"retrieval", "update_tracking"};
        p.failure_modes = {"stale_memory", "silent_drift"};
        d.add_probe(std::move(p));
    }
    if (count == 2 && d.rng.chance(0.6)) {
        const Fact& f = d.rng.pick(facts);
        d.add_probe(checkpoint_probe(d, *f.attr, f.attr->id, f.values, f.msgs, f.sessions, 0));
    }
}

// A membership introduced, changed, cancelled and taken up again (maybe an earlier one).
void build_lifecycle(Draft& d) {
    const LexEntry& m = d.rng.pick(d.table("lifecycle.json", "memberships"));
    const std::vector<std::string> pool = d.distinct(m.list("values"), 3);
    const double u = d.rng.unit();
    const std::vector<std::string> values = {pool[0], pool[1], u < 0.4 ? pool[0] : u < 0.6 ? pool[1] : pool[2]};
    d.make_sessions(sessions_for(d, 4));
    const std::vector<std::size_t> s = d.slots(4);
    const std::string event_id = m.id;
    d.event(event_id, MemoryType::mutable_fact, "the user's " + m.text("label"));

    std::vector<Msg> msgs;
    msgs.push_back(d.user(s[0], d.maybe_bury(d.say(m.list("intro"), {{"value", values[0]}}), 0.2)));
    d.value(event_id, values[0], msgs.back(), {values[0]});
    d.ack(s[0], values[0]);
    msgs.push_back(d.user(s[1], d.say(m.list("update"), {{"value", values[1]}, {"old", values[0]}})));
    d.value(event_id, values[1], msgs.back(), {values[1]});
    d.ack(s[1], values[1], 0.6, values[0]);
    const Msg cancel = d.user(s[2], d.say(m.list("retract"), {{"value", values[1]}}));
    d.retract(event_id, cancel);
    d.ack_plain(s[2]);
    d.trap("retraction");
    msgs.push_back(d.user(s[3], d.say(m.list("reintro"), {{"value", values[2]}})));
    d.value(event_id, values[2], msgs.back(), {values[2]});
    d.ack(s[3], values[2]);
    d.trap("reintroduction");

    data::Probe now = value_probe(d, d.last_session(), d.say(m.list("ask_current"), {}), "current", event_id,
                                  values[2], values[2], msgs[2], RubricKind::exact);
    now.capabilities = {"retrieval", "update_tracking"};
    now.failure_modes = {"stale_memory", "over_retention"};
    d.add_probe(std::move(now));
    d.add_probe(history_probe(d, d.say(m.list("ask_history"), {}), event_id, values, msgs));
    if (d.rng.chance(0.4)) {
        // Between the change and the cancellation the second membership was current.
        const std::size_t at = static_cast<std::size_t>(
            d.rng.between(static_cast<std::int64_t>(s[1]), static_cast<std::int64_t>(s[2]) - 1));
        data::Probe mid = value_probe(d, at, d.say(m.list("ask_current"), {}), "current", event_id, values[1],
                                      values[1], msgs[1], RubricKind::exact);
        mid.capabilities = {"retrieval", "update_tracking"};
        mid.failure_modes = {"stale_memory"};
        d.add_probe(std::move(mid));
    }
}

// The user states a value; an assistant turn later summarises it wrongly and nobody corrects it.
// The user's value stays current. Sometimes the same recap restates a second fact correctly.
void build_trust_hierarchy(Draft& d) {
    std::vector<LexEntry> facts = d.table("trust.json", "facts");
    d.rng.shuffle(facts);
    const LexEntry& f = facts[0];
    const std::vector<std::string> v = d.distinct(f.list("values"), 2);
    const std::string& said = v[0];
    const std::string& wrong = v[1];
    d.make_sessions(sessions_for(d, 2));
    const bool same_session = d.rng.chance(0.3);
    const std::vector<std::size_t> s = d.slots(2);
    d.event(f.id, MemoryType::explicit_fact, "the user's " + text::replace_all(f.id, "_", " "));

    const Msg stated = d.user(s[0], d.maybe_bury(d.say(f.list("user"), {{"value", said}}), 0.2));
    d.value(f.id, said, stated, {said});
    Msg summary;
    const LexEntry* second = nullptr;
    std::string second_value;
    Msg second_msg;
    if (same_session) {
        summary = d.assistant(s[0], d.say(f.list("summary"), {{"wrong", wrong}}));
    } else {
        d.ack_plain(s[0]);
        std::string recap = d.say(f.list("summary"), {{"wrong", wrong}});
        if (d.rng.chance(0.5)) {
            // A second fact, stated before the recap, which the recap gets right.
            second = &facts[1];
            second_value = d.rng.pick(second->list("values"));
            const std::size_t at = static_cast<std::size_t>(d.rng.between(0, static_cast<std::int64_t>(s[1]) - 1));
            d.event(second->id, MemoryType::explicit_fact, "the user's " + text::replace_all(second->id, "_", " "));
            second_msg = d.user(at, d.say(second->list("user"), {{"value", second_value}}));
            d.value(second->id, second_value, second_msg, {second_value});
            d.ack_plain(at);
            recap += " " + d.say(second->list("summary"), {{"wrong", second_value}});
        }
        d.user(s[1], d.rng.pick(d.pool("trust.json", "recap_request")));
        summary = d.assistant(s[1], recap);
    }
    d.distractor(f.id, wrong, summary, {wrong}, data::Authority::ai_summarized);
    d.trap("assistant_contradiction");
    d.trap("near_duplicate");

    data::Probe p = value_probe(d, d.last_session(), d.say(f.list("ask"), {}), "current", f.id, said, said, stated,
                                RubricKind::exact);
    p.rubric->forbidden = {wrong};
    p.capabilities = {"retrieval", "authority_resolution"};
    p.failure_modes = {"authority_violation", "false_confidence"};
    d.add_probe(std::move(p));
    if (second) {
        data::Probe q = value_probe(d, d.last_session(), d.say(second->list("ask"), {}), "current", second->id,
                                    second_value, second_value, second_msg, RubricKind::exact);
        q.capabilities = {"retrieval"};
        q.failure_modes = {"missing_memory"};
        d.add_probe(std::move(q));
    }
}

// A precise number the assistant paraphrases lossily ("$4,375.50" -> "roughly $4,400"); the probe
// wants the precise one.
void build_extraction_drift(Draft& d) {
    std::vector<LexEntry> quantities = d.table("extraction.json", "quantities");
    d.rng.shuffle(quantities);
    const std::size_t count = d.rng.chance(0.5) ? 2 : 1;
    d.make_sessions(sessions_for(d, count + 1));
    const std::vector<std::size_t> s = d.slots(count);
    for (std::size_t k = 0; k < count; ++k) {
        const LexEntry& q = quantities[k];
        const int decimals = static_cast<int>(q.integer("decimals"));
        const std::int64_t round_to = q.integer("round_to");
        double precise = 0;
        for (;;) {
            const std::int64_t whole = d.rng.between(q.integer("min"), q.integer("max") - 1);
            const std::int64_t frac = decimals == 0 ? 0 : d.rng.between(1, decimals == 1 ? 9 : 99);
            precise = static_cast<double>(whole) + static_cast<double>(frac) / (decimals == 2 ? 100.0 : 10.0);
            if (decimals > 0 || whole % round_to != 0) break;
        }
        const double rounded = std::llround(precise / static_cast<double>(round_to)) * static_cast<double>(round_to);
        const std::string prefix = q.text("prefix"), suffix = q.text("suffix");
        const std::string precise_text = written_number(precise, decimals, prefix, suffix);
        const std::string rounded_text = written_number(rounded, 0, prefix, suffix);

        d.event(q.id, MemoryType::explicit_fact, text::replace_all(q.id, "_", " "));
        const Msg stated = d.user(s[k], d.maybe_bury(d.say(q.list("user"), {{"value", precise_text}}), 0.25));
        d.value(q.id, number_json(precise, decimals), stated, {precise_text});
        const Msg lossy = d.assistant(s[k], d.say(q.list("paraphrase"), {{"rounded", rounded_text}}));
        d.distractor(q.id, number_json(rounded, 0), lossy, {rounded_text}, data::Authority::ai_summarized);
        d.trap("lossy_paraphrase");

        data::Probe p = value_probe(d, d.last_session(), d.say(q.list("ask"), {}), "current", q.id,
                                    number_json(precise, decimals), precise_text, stated, RubricKind::numeric);
        p.rubric->tolerance = 0;
        p.capabilities = {"retrieval", "precision"};
        p.failure_modes = {"lossy_summary", "false_confidence"};
        d.add_probe(std::move(p));
    }
}

// A value corrected within one message, or in the next turn of the same session, and/or updated in
// later sessions by updates that conflict (a second update, or a withdrawal back to the old value).
// The final correction is current; withdrawn values are forbidden.
void build_failure_injection(Draft& d) {
    const LexEntry& f = d.rng.pick(d.table("correction.json", "fields"));
    const std::size_t digits = static_cast<std::size_t>(f.integer("digits"));
    const double u = d.rng.unit();
    const int opening = u < 0.4 ? 0 : u < 0.75 ? 1 : 2;  // in-message correction, slip then correction, plain
    const bool conflict = opening == 2 || d.rng.chance(0.5);
    d.make_sessions(sessions_for(d, conflict ? 4 : 2));
    const std::vector<std::size_t> s = d.slots(conflict ? 3 : 1);
    d.event(f.id, MemoryType::mutable_fact, "the user's " + text::replace_all(f.id, "_", " "));

    std::vector<std::string> used;
    auto fresh = [&] {
        for (;;) {
            std::string v = d.digit_string(digits);
            if (std::find(used.begin(), used.end(), v) == used.end()) {
                used.push_back(v);
                return v;
            }
        }
    };
    const std::string first = fresh();
    std::string slip;
    for (;;) {
        slip = d.swapped_digits(first);
        if (std::find(used.begin(), used.end(), slip) == used.end()) break;
    }
    used.push_back(slip);
    std::vector<std::string> forbidden;
    std::vector<std::string> values = {first};
    std::vector<Msg> msgs;
    if (opening == 0) {
        msgs.push_back(d.user(s[0], d.say(f.list("in_message"), {{"wrong", slip}, {"value", first}})));
        d.value(f.id, first, msgs.back(), {first});
        d.distractor(f.id, slip, msgs.back(), {slip}, data::Authority::user_stated);
        d.ack(s[0], first);
        forbidden.push_back(slip);
        d.trap("self_correction");
    } else if (opening == 1) {
        const Msg wrong = d.user(s[0], d.say(f.list("slip"), {{"wrong", slip}}));
        d.ack_plain(s[0]);
        msgs.push_back(d.user(s[0], d.say(f.list("same_session"), {{"wrong", slip}, {"value", first}})));
        d.value(f.id, first, msgs.back(), {first});
        d.distractor(f.id, slip, wrong, {slip}, data::Authority::user_stated);
        d.ack(s[0], first);
        forbidden.push_back(slip);
        d.trap("self_correction");
    } else {
        msgs.push_back(d.user(s[0], d.maybe_bury(d.say(f.list("state"), {{"value", first}}), 0.2)));
        d.value(f.id, first, msgs.back(), {first});
        d.ack(s[0], first);
    }
    if (conflict) {
        const std::string second = fresh();
        msgs.push_back(d.user(s[1], d.say(f.list("update"), {{"value", second}})));
        d.value(f.id, second, msgs.back(), {second});
        d.ack(s[1], second, 0.5, first);
        values.push_back(second);
        if (d.rng.chance(0.5)) {
            // The update is withdrawn: the first value holds again.
            msgs.push_back(d.user(s[2], d.say(f.list("revert"), {{"wrong", second}, {"value", first}})));
            d.value(f.id, first, msgs.back(), {first});
            d.ack(s[2], first, 0.5);
            values.push_back(first);
            forbidden.push_back(second);
        } else {
            const std::string third = fresh();
            msgs.push_back(d.user(s[2], d.say(f.list("update"), {{"value", third}})));
            d.value(f.id, third, msgs.back(), {third});
            d.ack(s[2], third, 0.5, second);
            values.push_back(third);
        }
        d.trap("conflicting_update");
    }

    data::Probe p = value_probe(d, d.last_session(), d.say(f.list("ask"), {}), "current", f.id, values.back(),
                                values.back(), msgs.back(), RubricKind::exact);
    p.rubric->forbidden = forbidden;
    p.capabilities = {"retrieval", "update_tracking", "conflict_resolution"};
    p.failure_modes = {"stale_memory", "silent_drift"};
    d.add_probe(std::move(p));
    if (conflict && d.rng.chance(0.4)) {
        const std::size_t at = static_cast<std::size_t>(
            d.rng.between(static_cast<std::int64_t>(s[0]), static_cast<std::int64_t>(s[1]) - 1));
        data::Probe mid = value_probe(d, at, d.say(f.list("ask"), {}), "current", f.id, first, first, msgs[0],
                                      RubricKind::exact);
        if (opening != 2) mid.rubric->forbidden = {slip};
        mid.capabilities = {"retrieval", "update_tracking"};
        mid.failure_modes = {"stale_memory"};
        d.add_probe(std::move(mid));
    }
}

// A licence with a number and an expiry date, renewed (sometimes with a new number). Asked for both
// fields now, and sometimes as they were on a date before the renewal.
void build_certification(Draft& d) {
    const LexEntry& l = d.rng.pick(d.table("certification.json", "licences"));
    const std::size_t digits = static_cast<std::size_t>(l.integer("digits"));
    const std::string prefix = l.text("prefix");
    d.make_sessions(sessions_for(d, 3), 3);
    const std::vector<std::size_t> s = d.slots(2);
    const std::string body = d.digit_string(digits);
    const std::string number1 = prefix + body;
    std::string number2 = number1;
    if (d.rng.chance(0.5))
        while (number2 == number1) number2 = prefix + d.digit_string(digits);
    const int expiry_day = d.day(s[1]) + static_cast<int>(d.rng.between(10, 120));
    const std::string expiry1 = Draft::date_text(expiry_day);
    const std::string expiry2 = Draft::date_text_plus_years(expiry_day, static_cast<int>(l.integer("valid_years")));
    const json value1 = {{"number", number1}, {"expiry", expiry1}};
    const json value2 = {{"number", number2}, {"expiry", expiry2}};
    d.event(l.id, MemoryType::mutable_fact, "the user's " + l.text("label"));

    const Msg intro =
        d.user(s[0], d.maybe_bury(d.say(l.list("intro"), {{"number", number1}, {"expiry", expiry1}}), 0.2));
    d.value(l.id, value1, intro, {number1, expiry1});
    d.ack(s[0], number1, 0.4);
    const Msg renewal = d.user(s[1], d.say(l.list("renew"), {{"number", number2}, {"expiry", expiry2}}));
    d.value(l.id, value2, renewal, {number2, expiry2});
    d.ack(s[1], expiry2, 0.5);
    if (d.rng.chance(0.6)) {
        const Person p = d.person();
        // Someone else's number: the user's with two digits swapped (or fresh, if that is the
        // user's new number).
        std::string other_body = d.swapped_digits(body);
        while (prefix + other_body == number2 || prefix + other_body == number1) other_body = d.digit_string(digits);
        const std::string other_number = prefix + other_body;
        const std::string other_expiry = Draft::date_text(d.day(s[0]) + static_cast<int>(d.rng.between(200, 700)));
        Vars vars = person_vars(p);
        vars.emplace_back("number", other_number);
        vars.emplace_back("expiry", other_expiry);
        const std::size_t at = d.rng.below(d.session_count());
        const Msg m = d.user(at, d.say(l.list("other"), vars));
        d.ack_plain(at);
        d.distractor(l.id, json{{"number", other_number}, {"expiry", other_expiry}}, m, {other_number},
                     data::Authority::user_stated);
        d.trap("near_duplicate");
    }

    auto licence_probe = [&](const std::string& question, const std::string& asks, const json& value, const Msg& source) {
        data::Probe p = d.new_probe(d.last_session(), question, asks);
        p.targets = {l.id};
        p.expected = value;
        p.expected_source = source.id;
        data::Rubric r;
        r.kind = RubricKind::multi_field;
        r.fields = value;
        p.rubric = r;
        p.answer = d.answer("licence", {{"number", value["number"].get<std::string>()},
                                        {"expiry", value["expiry"].get<std::string>()}});
        d.evidence(p, l.id, {source},
                   {{"value", {value["number"].get<std::string>()}}, {"expiry", {value["expiry"].get<std::string>()}}});
        return p;
    };
    data::Probe now = licence_probe(d.say(l.list("ask_current"), {}), "current", value2, renewal);
    now.capabilities = {"retrieval", "update_tracking"};
    now.failure_modes = {"stale_memory", "missing_memory"};
    d.add_probe(std::move(now));
    if (d.rng.chance(0.5)) {
        const int day = d.day_between(s[0], s[1]);
        data::Probe past =
            licence_probe(d.say(l.list("ask_as_of"), {{"date", Draft::date_text(day)}}), "as_of", value1, intro);
        past.temporal = data::TemporalQuery{Draft::noon(day), false};
        past.capabilities = {"retrieval", "temporal_replay"};
        past.failure_modes = {"stale_memory", "silent_drift"};
        d.add_probe(std::move(past));
    }
}

// An item opened and later closed, and often a second item that stays open. Asked for statuses.
void build_closure(Draft& d) {
    std::vector<LexEntry> items = d.table("closure.json", "items");
    d.rng.shuffle(items);
    const bool has_other = d.rng.chance(0.7);
    d.make_sessions(sessions_for(d, has_other ? 3 : 2));
    const std::vector<std::size_t> s = d.slots(has_other ? 3 : 2);
    const std::size_t opened = s.front(), closed = s.back();
    const LexEntry& main = items[0];
    const std::string& item = main.text("item");
    d.event(main.id, MemoryType::work_state, "the status of the user's " + item);
    const Msg open_msg = d.user(
        opened, d.maybe_bury(d.say("closure.json", "open", {{"item", item}, {"status", "open"}}), 0.2));
    d.value(main.id, "open", open_msg, {"open"});
    d.ack_plain(opened);
    const Msg close_msg = d.user(closed, d.say("closure.json", "close", {{"item", item}, {"status", "closed"}}));
    d.value(main.id, "closed", close_msg, {"closed"});
    d.ack_plain(closed);

    auto status_probe = [&](std::size_t after, const LexEntry& e, const std::string& status, const Msg& source) {
        const std::string& what = e.text("item");
        data::Probe p = value_probe(d, after, d.say("closure.json", "ask", {{"item", what}}), "status", e.id, status,
                                    status, source, RubricKind::exact);
        p.answer = d.answer("status", {{"value", status}});
        p.evidence.back().key_details.emplace_back("item", std::vector<std::string>{what}, data::DetailRole::identity);
        p.capabilities = {"retrieval", "update_tracking"};
        p.failure_modes = {"stale_memory"};
        return p;
    };
    d.add_probe(status_probe(d.last_session(), main, "closed", close_msg));
    if (d.rng.chance(0.6)) {
        const std::size_t at = static_cast<std::size_t>(
            d.rng.between(static_cast<std::int64_t>(opened), static_cast<std::int64_t>(closed) - 1));
        d.add_probe(status_probe(at, main, "open", open_msg));
    }
    if (has_other) {
        const LexEntry& other = items[1];
        d.event(other.id, MemoryType::work_state, "the status of the user's " + other.text("item"));
        const Msg m = d.user(s[1], d.say("closure.json", "open", {{"item", other.text("item")}, {"status", "open"}}));
        d.value(other.id, "open", m, {"open"});
        d.ack_plain(s[1]);
        d.trap("near_duplicate");
        d.add_probe(status_probe(d.last_session(), other, "open", m));
    }
}

}  // namespace memfail::suites::writ
