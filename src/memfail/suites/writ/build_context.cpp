// SPDX-License-Identifier: MIT
// Write-integrity categories about what surrounds a value: provenance (where a figure came from),
// constraint (a preference never stated), entity (one person, several names), forgetting (what must
// not persist), abstention (what was never said), multi_hop (two facts together) and work_state
// (tasks whose status changes).
#include <memfail/core/text.hpp>
#include <memfail/suites/writ/categories.hpp>

#include <algorithm>
#include <cctype>

namespace memfail::suites::writ {

using data::MemoryType;
using data::RubricKind;
using nlohmann::json;

namespace {

std::int64_t to_int(std::size_t v) { return static_cast<std::int64_t>(v); }

std::size_t sessions_for(Draft& d, std::size_t needed) {
    return static_cast<std::size_t>(d.rng.between(to_int(std::max<std::size_t>(3, needed)), 12));
}

Vars person_vars(const Person& p) {
    return {{"relation", p.relation}, {"relation_cap", text::capitalize(p.relation)}, {"name", p.first}};
}

std::string lower_id(const std::string& s) {
    std::string out;
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '_';
    }
    return out;
}

// A name as a key detail: bare or possessive ("Maya's" normalises to "mayas", which the bare name
// does not match on word boundaries).
std::vector<std::string> possessable(const std::string& name) { return {name, name + "'s"}; }

// The form a name takes in a message: possessive when it is written so.
std::vector<std::string> surface(const std::string& message, const std::string& name) {
    return {text::contains_phrase(message, name + "'s") ? name + "'s" : name};
}

// "A, B or C".
std::string choice_list(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i)
        out += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
    return out;
}

}  // namespace

// A figure stated once, near other figures of the same topic and repeated later; asked where it
// came from and when it was first mentioned (the first statement is the expected source).
void build_provenance(Draft& d) {
    const LexEntry& f = d.rng.pick(d.table("provenance.json", "figures"));
    const std::int64_t step = f.integer("step"), lo = f.integer("min"), hi = f.integer("max");
    const std::int64_t value = lo + step * d.rng.between(0, (hi - lo) / step);
    const std::string figure = written_number(static_cast<double>(value), 0, "$", "");
    const std::string& keyword = f.text("keyword");
    const std::size_t n = sessions_for(d, 3);
    d.make_sessions(n);
    const std::size_t at = static_cast<std::size_t>(d.rng.between(0, to_int(n) - 2));
    d.event(f.id, MemoryType::explicit_fact, text::replace_all(f.id, "_", " "));

    const Msg source = d.user(at, d.maybe_bury(d.say(f.list("state"), {{"figure", figure}}), 0.3));
    d.value(f.id, value, source, {figure});
    d.ack(at, figure, 0.5);
    // Nearby figures of the same topic, said later: near-duplicate numbers.
    const std::size_t related = static_cast<std::size_t>(d.rng.between(1, 2));
    std::vector<std::int64_t> used = {value};
    for (std::size_t k = 0; k < related; ++k) {
        std::int64_t other = 0;
        for (;;) {
            other = value + step * d.rng.between(-3, 3);
            if (other > 0 && std::find(used.begin(), used.end(), other) == used.end()) break;
        }
        used.push_back(other);
        const std::string other_text = written_number(static_cast<double>(other), 0, "$", "");
        const std::size_t s = static_cast<std::size_t>(d.rng.between(to_int(at), to_int(n) - 1));
        const Msg m = d.user(s, d.say(f.list("related"), {{"other", other_text}}));
        d.ack_plain(s);
        d.distractor(f.id, other, m, {other_text}, data::Authority::user_stated);
    }
    d.trap("near_duplicate");
    if (d.rng.chance(0.7)) {
        const std::size_t s = static_cast<std::size_t>(d.rng.between(to_int(at) + 1, to_int(n) - 1));
        d.user(s, d.say(f.list("repeat"), {{"figure", figure}}));
        d.ack_plain(s);
        d.trap("repeated_mention");
    }

    data::Probe p = d.new_probe(d.last_session(), d.say(f.list("ask"), {{"figure", figure}}), "provenance");
    p.targets = {f.id};
    p.expected = value;
    p.expected_source = source.id;
    data::Rubric r;
    r.kind = RubricKind::contains;
    r.required = {figure, keyword};
    const std::string date = Draft::date_text(d.day(at));
    r.keywords = {keyword, date};
    r.criteria = {"traces " + figure + " to the user's message of " + date + " (session " + source.session_id +
                  ") about the " + keyword + " plans"};
    p.rubric = r;
    p.capabilities = {"retrieval", "provenance_tracing"};
    p.failure_modes = {"provenance_loss", "missing_memory"};
    p.answer = d.answer("provenance", {{"figure", figure}, {"date", date}, {"keyword", keyword}, {"source", source.id}});
    d.evidence(p, f.id, {source}, {{"value", {figure}}, {"topic", {keyword}}});
    d.add_probe(std::move(p));
}

// A preference shown by declining the same kind of thing three or four times, never stated as a
// rule; the probe asks for a recommendation among options of which only one fits it.
void build_constraint(Draft& d) {
    const LexEntry& c = d.rng.pick(d.table("constraint.json", "constraints"));
    const std::size_t count = static_cast<std::size_t>(d.rng.between(3, 4));
    d.make_sessions(sessions_for(d, count));
    const std::vector<std::size_t> s = d.slots(count);
    const std::vector<std::string> items = d.distinct(c.list("items"), count);
    std::vector<Msg> msgs;
    for (std::size_t i = 0; i < count; ++i) {
        const std::string id = "declined_" + std::to_string(i + 1);
        d.event(id, MemoryType::explicit_fact, "something the user declined");
        msgs.push_back(d.user(s[i], d.maybe_bury(d.say(c.list("behaviour"), {{"item", items[i]}}), 0.25)));
        d.value(id, items[i], msgs.back(), {items[i]});
        d.ack_plain(s[i]);
    }
    // The constraint itself is never said: it holds once the behaviour has repeated.
    d.event("constraint", MemoryType::latent, "latent constraint: the user " + c.text("label"));
    d.unstated_value("constraint", c.text("label"), s.back());
    d.trap("implicit_constraint");

    const std::string safe = d.rng.pick(c.list("safe"));
    const std::vector<std::string> decoys = d.distinct(c.list("decoys"), 2, {safe});
    std::vector<std::string> options = {safe, decoys[0], decoys[1]};
    d.rng.shuffle(options);
    data::Probe p = d.new_probe(d.last_session(), d.say(c.list("ask"), {{"options", choice_list(options)}}),
                                "recommendation");
    p.targets = {"constraint"};
    p.expected = safe;
    p.expected_source = msgs.back().id;
    data::Rubric r;
    r.kind = RubricKind::constraint;
    r.must_contain = {safe};
    r.must_not_contain = decoys;
    r.notes = "the user " + c.text("label") + ", shown only by what they declined";
    p.rubric = r;
    p.capabilities = {"retrieval", "constraint_application"};
    p.failure_modes = {"constraint_violation", "incorrect_generalization"};
    p.answer = d.answer("constraint", {{"option", text::capitalize(safe)}, {"label", c.text("label")}});
    std::vector<std::pair<std::string, std::vector<std::string>>> details = {{"value", {items[0]}}};
    for (std::size_t i = 1; i < count; ++i) details.push_back({"value_" + std::to_string(i + 1), {items[i]}});
    d.evidence(p, "constraint", msgs, details);
    d.add_probe(std::move(p));
}

// One person under several names (full name, short name, honorific and surname), often beside a
// different person with the same surname and someone else; asked how many people were named and
// who a short name is.
void build_entity(Draft& d) {
    const LexEntry& nick = d.rng.pick(d.table("people.json", "nicknames"));
    const std::string given = nick.text("given");
    const std::string last = d.rng.pick(d.pool("people.json", "last_names"));
    d.use_name(given);
    d.use_name(last);
    const std::string full = given + " " + last;
    const std::string short_name = d.rng.pick(nick.list("short"));
    const std::string formal = nick.text("honorific") + " " + last;
    const std::string role = d.rng.pick(d.pool("entity.json", "roles"));
    const bool twin = d.rng.chance(0.6);
    const bool third = !twin || d.rng.chance(0.6);
    const std::size_t mentions = static_cast<std::size_t>(d.rng.between(2, 3));
    const std::size_t needed = 1 + mentions + (twin ? 1 : 0) + (third ? 1 : 0);
    d.make_sessions(sessions_for(d, std::min<std::size_t>(needed, 6)));
    // The introduction comes first; everything else is placed after it, several to a session when
    // sessions are few.
    const std::size_t intro_at = d.rng.below(std::max<std::size_t>(1, d.session_count() - 2));
    auto later = [&] { return static_cast<std::size_t>(d.rng.between(to_int(intro_at) + 1, to_int(d.last_session()))); };

    d.event("person_main", MemoryType::entity, role);
    d.ev("person_main").aliases = {short_name, formal};
    const Msg intro = d.user(intro_at, d.say("entity.json", "intro",
                                             {{"full", full}, {"short", short_name}, {"role", role},
                                              {"role_cap", text::capitalize(role)}}));
    d.value("person_main", full, intro, {full});
    d.ack_plain(intro_at);
    d.trap("entity_aliases");
    std::vector<Msg> alias_msgs;
    std::size_t last_formal = 0;
    for (std::size_t k = 0; k < mentions; ++k) {
        // The formal name is used at least once.
        const std::string alias = k == 0 ? formal : d.rng.chance(0.5) ? short_name : formal;
        const std::size_t at = later();
        alias_msgs.push_back(d.user(at, d.say("entity.json", "mention", {{"alias", alias}})));
        if (alias == formal) last_formal = std::max(last_formal, at);
        d.ack_plain(at);
    }
    std::vector<std::vector<std::string>> groups = {{full, short_name, formal}};
    std::vector<std::string> targets = {"person_main"};
    std::vector<Msg> intros = {intro};
    if (twin) {
        const std::string first = d.first_name();
        const std::string twin_full = first + " " + last;
        const std::string twin_role = d.rng.pick(d.pool("entity.json", "twin_roles"));
        d.event("person_twin", MemoryType::entity, twin_role);
        // Once a second person shares the surname, the formal name would be ambiguous: the twin
        // appears only after its last use.
        const std::size_t at = static_cast<std::size_t>(d.rng.between(to_int(last_formal), to_int(d.last_session())));
        const Msg m = d.user(at, d.say("entity.json", "surname_twin", {{"full", twin_full}, {"role", twin_role}, {"other", full}}));
        d.value("person_twin", twin_full, m, {twin_full});
        d.ack_plain(at);
        d.trap("near_duplicate");
        groups.push_back({twin_full});
        targets.push_back("person_twin");
        intros.push_back(m);
    }
    if (third) {
        const Person p = d.person();
        d.event("person_other", MemoryType::entity, p.relation);
        const std::size_t at = d.rng.below(d.session_count());
        const Msg m = d.user(at, d.say("entity.json", "person",
                                       {{"full", p.full}, {"relation", p.relation},
                                        {"relation_cap", text::capitalize(p.relation)}}));
        d.value("person_other", p.full, m, {p.full});
        d.ack_plain(at);
        groups.push_back({p.full});
        targets.push_back("person_other");
        intros.push_back(m);
    }

    const int count = static_cast<int>(groups.size());
    data::Probe p = d.new_probe(d.last_session(), d.rng.pick(d.pool("entity.json", "ask_count")), "count");
    p.targets = targets;
    p.expected = count;
    p.expected_source = intro.id;
    data::Rubric r;
    r.kind = RubricKind::entity_count;
    r.expected_count = count;
    r.groups = groups;
    p.rubric = r;
    p.capabilities = {"retrieval", "entity_resolution"};
    p.failure_modes = {"duplicate_entity", "merged_entities"};
    std::vector<std::string> shown;
    for (const auto& g : groups) shown.push_back(g.size() > 1 ? g[0] + " (also " + prose_list({g.begin() + 1, g.end()}) + ")" : g[0]);
    p.answer = d.answer("count", {{"count", std::to_string(count)}, {"groups", text::join(shown, "; ")}});
    for (std::size_t i = 0; i < targets.size(); ++i) {
        if (i == 0) {
            std::vector<Msg> cited = {intro};
            cited.insert(cited.end(), alias_msgs.begin(), alias_msgs.end());
            d.evidence(p, targets[i], cited, {{"value", {full}}, {"alias", {short_name}}, {"formal_name", {formal}}});
        } else {
            d.evidence(p, targets[i], {intros[i]}, {{"value", {groups[i][0]}}});
        }
    }
    d.add_probe(std::move(p));

    if (d.rng.chance(0.7)) {
        // With a namesake around, only the short name still points at one person.
        const bool by_formal = !twin && d.rng.chance(0.5);
        const std::string alias = by_formal ? formal : short_name;
        data::Probe q = value_probe(d, d.last_session(), d.say("entity.json", "ask_resolve", {{"alias", alias}}),
                                    "resolve", "person_main", full, full, intro, RubricKind::exact);
        q.answer = d.answer("resolve", {{"alias", alias}, {"value", full}});
        if (by_formal) {
            // The formal name is said in a mention, not in the introduction: both are evidence.
            q.evidence.clear();
            d.evidence(q, "person_main", {intro, alias_msgs[0]}, {{"value", {full}}, {"alias", {formal}}});
        } else {
            q.evidence.back().key_details.emplace_back("alias", std::vector<std::string>{short_name},
                                                       data::DetailRole::identity);
        }
        q.capabilities = {"retrieval", "entity_resolution"};
        q.failure_modes = {"duplicate_entity", "missing_memory"};
        d.add_probe(std::move(q));
    }
}

// What must not persist: a nickname asked for one conversation only, a code good for one session,
// a trip retracted later. Asked for the user's name (not the nickname) and the trips still planned.
void build_forgetting(Draft& d) {
    const std::string name = d.first_name();
    const std::string nickname = d.rng.pick(d.pool("forgetting.json", "nicknames"));
    const std::vector<std::string> trips = d.distinct(d.pool("places.json", "destinations"), 3);
    const std::size_t dropped = d.rng.below(3);
    d.make_sessions(sessions_for(d, 4));
    const std::vector<std::size_t> s = d.slots(4);
    const std::size_t n = d.session_count();

    d.event("user_name", MemoryType::explicit_fact, "the user's name");
    const std::size_t name_at = d.rng.below(n);
    const Msg name_msg = d.user(name_at, d.say("forgetting.json", "name_intro", {{"name", name}}));
    d.value("user_name", name, name_msg, {name});
    d.ack(name_at, name, 0.5);

    // A one-off instruction: good for its own session only.
    const std::size_t once_at = d.rng.below(n);
    d.event("nickname_request", MemoryType::non_memory, "a nickname the user asked for in one conversation only");
    const Msg once = d.user(once_at, d.say("forgetting.json", "one_off", {{"nickname", nickname}}));
    d.value("nickname_request", nickname, once, {nickname});
    d.ev("nickname_request").should_persist = false;
    d.ev("nickname_request").expires_after = once.session_id;
    d.assistant(once_at, d.say("forgetting.json", "one_off_ack", {{"nickname", nickname}}));
    d.trap("one_off_instruction");

    if (d.rng.chance(0.6)) {
        const LexEntry& t = d.rng.pick(d.table("forgetting.json", "temporary"));
        const std::string code = d.digit_string(static_cast<std::size_t>(t.integer("digits")));
        const std::size_t at = d.rng.below(n);
        d.event(t.id, MemoryType::non_memory, "a temporary " + text::replace_all(t.id, "_", " "));
        const Msg m = d.user(at, d.say(t.list("state"), {{"value", code}}));
        d.value(t.id, code, m, {code});
        d.ev(t.id).should_persist = false;
        d.ev(t.id).expires_after = m.session_id;
        d.ack_plain(at);
        d.trap("temporary_item");
    }

    std::vector<Msg> plan_msgs;
    for (std::size_t k = 0; k < 3; ++k) {
        const std::string id = "trip_" + lower_id(trips[k]);
        const std::size_t at = s[std::min<std::size_t>(k, 2)];
        d.event(id, MemoryType::explicit_fact, "a trip the user plans");
        plan_msgs.push_back(d.user(at, d.maybe_bury(d.say("forgetting.json", "plan", {{"value", trips[k]}}), 0.2)));
        d.value(id, trips[k], plan_msgs.back(), {trips[k]});
        d.ack(at, trips[k], 0.4);
    }
    const std::string dropped_id = "trip_" + lower_id(trips[dropped]);
    const Msg cancel = d.user(s[3], d.say("forgetting.json", "retract", {{"value", trips[dropped]}}));
    d.retract(dropped_id, cancel);
    d.ack_plain(s[3]);
    d.trap("retraction");

    data::Probe who = value_probe(d, d.last_session(), d.rng.pick(d.pool("forgetting.json", "ask_name")), "current",
                                  "user_name", name, name, name_msg, RubricKind::exact);
    who.rubric->forbidden = {nickname};
    who.answer = d.answer("name", {{"value", name}});
    who.capabilities = {"retrieval", "selective_forgetting"};
    who.failure_modes = {"over_retention"};
    d.add_probe(std::move(who));

    data::Probe plans = d.new_probe(d.last_session(), d.rng.pick(d.pool("forgetting.json", "ask_plans")), "list");
    std::vector<std::string> kept;
    for (std::size_t k = 0; k < 3; ++k) {
        const std::string id = "trip_" + lower_id(trips[k]);
        plans.targets.push_back(id);
        if (k == dropped) {
            d.evidence(plans, id, {cancel}, {{"value", {trips[k]}}});
        } else {
            kept.push_back(trips[k]);
            d.evidence(plans, id, {plan_msgs[k]}, {{"value", {trips[k]}}});
        }
    }
    plans.expected = kept;
    plans.expected_source = plan_msgs[dropped == 2 ? 1 : 2].id;
    data::Rubric r;
    r.kind = RubricKind::structured;
    r.required = kept;
    r.forbidden = {trips[dropped]};
    plans.rubric = r;
    plans.answer = d.answer("plans", {{"values", prose_list(kept)}});
    plans.capabilities = {"retrieval", "selective_forgetting", "update_tracking"};
    plans.failure_modes = {"over_retention", "stale_memory"};
    d.add_probe(std::move(plans));
}

// The same kind of fact stated about two other people and never about the user: asked about the
// user (must be declined; naming the others' values is answering) and about one of the others.
void build_abstention(Draft& d) {
    const LexEntry& t = d.rng.pick(d.table("abstention.json", "topics"));
    const std::vector<std::string> values = d.distinct(t.list("values"), 2);
    d.make_sessions(sessions_for(d, 3));
    const std::vector<std::size_t> s = d.slots(2);
    std::vector<Person> people;
    std::vector<Msg> msgs;
    std::vector<std::string> ids;
    for (std::size_t k = 0; k < 2; ++k) {
        people.push_back(d.person());
        Vars vars = person_vars(people.back());
        vars.emplace_back("value", values[k]);
        ids.push_back(t.id + "_" + lower_id(people.back().first));
        d.event(ids.back(), MemoryType::explicit_fact, people.back().relation + "'s " + text::replace_all(t.id, "_", " "));
        msgs.push_back(d.user(s[k], d.maybe_bury(d.say(t.list("other"), vars), 0.2)));
        d.value(ids.back(), values[k], msgs.back(), {values[k]});
        d.ack(s[k], values[k], 0.4);
    }
    d.trap("near_duplicate");

    data::Probe p = d.new_probe(d.last_session(), d.rng.pick(t.list("ask_self")), "abstain");
    p.kind = data::ProbeKind::abstain;
    p.should_abstain = true;
    data::Rubric r;
    r.kind = RubricKind::abstention;
    r.reject = values;
    p.rubric = r;
    p.answer = d.answer("abstain", {});
    p.capabilities = {"abstention"};
    p.failure_modes = {"memory_hallucination", "false_confidence"};
    d.add_probe(std::move(p));

    if (d.rng.chance(0.8)) {
        const std::size_t k = d.rng.below(2);
        data::Probe q = value_probe(d, d.last_session(), d.say(t.list("ask_other"), {{"name", people[k].first}}),
                                    "current", ids[k], values[k], values[k], msgs[k], RubricKind::exact);
        q.evidence.back().key_details.emplace_back("person", possessable(people[k].first), data::DetailRole::identity);
        q.capabilities = {"retrieval"};
        q.failure_modes = {"missing_memory"};
        d.add_probe(std::move(q));
    }
}

// A fact about a person and a link from the user's situation to that person: the question names
// only the situation. The same fact about another person is a near-duplicate; sometimes the
// person's fact changes later.
void build_multi_hop(Draft& d) {
    const LexEntry& c = d.rng.pick(d.table("multi_hop.json", "chains"));
    const std::vector<std::string> values = d.distinct(c.list("values"), 3);
    const Person target = d.person(), other = d.person();
    const bool with_other = d.rng.chance(0.7);
    const bool updated = d.rng.chance(0.4);
    const std::size_t pieces = 2 + (with_other ? 1 : 0);
    d.make_sessions(sessions_for(d, pieces + (updated ? 1 : 0)));
    std::vector<std::size_t> s = d.slots(pieces + (updated ? 1 : 0));
    const std::size_t update_at = s.back();
    if (updated) s.pop_back();
    d.rng.shuffle(s);

    d.event("hop_fact", MemoryType::mutable_fact, "what the linked person's fact is");
    Vars vars = person_vars(target);
    vars.emplace_back("value", values[0]);
    Msg fact = d.user(s[0], d.maybe_bury(d.say(c.list("fact"), vars), 0.2));
    d.value("hop_fact", values[0], fact, {values[0]});
    d.ack(s[0], values[0], 0.4);

    d.event("hop_link", MemoryType::explicit_fact, "who links the user's situation to the fact");
    const Msg link = d.user(s[1], d.say(c.list("link"), {{"name", target.first}}));
    d.value("hop_link", target.first, link, surface(link.content, target.first));
    d.ack_plain(s[1]);

    if (with_other) {
        Vars ov = person_vars(other);
        ov.emplace_back("value", values[1]);
        const Msg m = d.user(s[2], d.say(c.list("fact"), ov));
        d.event("other_fact", MemoryType::explicit_fact, "the same kind of fact about someone else");
        d.value("other_fact", values[1], m, {values[1]});
        d.distractor("hop_fact", values[1], m, {values[1]}, data::Authority::user_stated);
        d.ack_plain(s[2]);
        d.trap("near_duplicate");
    }
    std::string current = values[0];
    if (updated) {
        fact = d.user(update_at, d.say(c.list("update"), {{"name", target.first}, {"value", values[2]}}));
        d.value("hop_fact", values[2], fact, {values[2]});
        d.ack(update_at, values[2], 0.4);
        current = values[2];
    }

    data::Probe p = d.new_probe(d.last_session(), d.rng.pick(c.list("ask")), "multi_hop");
    p.targets = {"hop_fact", "hop_link"};
    p.expected = current;
    p.expected_source = fact.id;
    data::Rubric r;
    r.kind = RubricKind::exact;
    p.rubric = r;
    p.answer = d.answer("multi_hop", {{"value", current}, {"name", target.first}});
    p.capabilities = {"retrieval", "multi_hop_reasoning"};
    p.failure_modes = {"missing_memory", "retrieval_miss"};
    if (updated) {
        p.capabilities.push_back("update_tracking");
        p.failure_modes.push_back("stale_memory");
    }
    d.evidence(p, "hop_fact", {fact}, {{"value", {current}}, {"person", possessable(target.first)}});
    d.evidence(p, "hop_link", {link}, {{"value", possessable(target.first)}});
    d.add_probe(std::move(p));
}

// A project's tasks, added and then finished or dropped; asked which are still open, at the end
// and sometimes at a checkpoint in between.
void build_work_state(Draft& d) {
    const LexEntry& project = d.rng.pick(d.table("work_state.json", "projects"));
    const std::string& label = project.text("label");
    const std::size_t count =
        static_cast<std::size_t>(d.rng.between(4, std::min<std::int64_t>(6, to_int(project.list("tasks").size()))));
    const std::vector<std::string> tasks = d.distinct(project.list("tasks"), count);
    d.make_sessions(sessions_for(d, 4));
    const std::size_t n = d.session_count();
    const std::size_t closed = static_cast<std::size_t>(d.rng.between(1, to_int(count) - 1));
    struct Task {
        std::string name, id, end_status;  // end_status: open, done or dropped
        std::size_t added = 0, closed_at = 0;
        Msg add_msg, close_msg;
    };
    std::vector<Task> ts(count);
    std::vector<std::size_t> order = d.rng.sample_indices(count, closed);  // the tasks that get closed
    for (std::size_t i = 0; i < count; ++i) {
        ts[i].name = tasks[i];
        ts[i].id = "task_" + lower_id(tasks[i]);
        ts[i].added = d.rng.below(n - 1);
        ts[i].end_status = "open";
    }
    for (const std::size_t i : order) {
        ts[i].end_status = d.rng.chance(0.65) ? "done" : "dropped";
        ts[i].closed_at = static_cast<std::size_t>(d.rng.between(to_int(ts[i].added) + 1, to_int(n) - 1));
    }
    for (const Task& t : ts) d.event(t.id, MemoryType::work_state, "a task of the user's " + label);
    // Session by session: what is added, then what is closed, each as one user turn.
    for (std::size_t s = 0; s < n; ++s) {
        std::vector<std::size_t> adds, closes;
        for (std::size_t i = 0; i < count; ++i) {
            if (ts[i].added == s) adds.push_back(i);
            if (ts[i].end_status != "open" && ts[i].closed_at == s) closes.push_back(i);
        }
        if (!adds.empty()) {
            std::vector<std::string> said;
            for (const std::size_t i : adds)
                said.push_back(d.say("work_state.json", "add", {{"task", ts[i].name}, {"project", label}}));
            const Msg m = d.user(s, d.maybe_bury(text::join(said, " "), 0.15));
            for (const std::size_t i : adds) {
                ts[i].add_msg = m;
                d.value(ts[i].id, json{{"task", ts[i].name}, {"status", "open"}}, m, {ts[i].name});
            }
            d.ack_plain(s);
        }
        if (!closes.empty()) {
            std::vector<std::string> said;
            for (const std::size_t i : closes)
                said.push_back(d.say("work_state.json", ts[i].end_status == "done" ? "done" : "dropped",
                                     {{"task", ts[i].name}}));
            const Msg m = d.user(s, text::join(said, " "));
            for (const std::size_t i : closes) {
                ts[i].close_msg = m;
                d.value(ts[i].id, json{{"task", ts[i].name}, {"status", ts[i].end_status}}, m, {ts[i].name});
                if (ts[i].end_status == "dropped") d.trap("retraction");
            }
            d.ack_plain(s);
        }
    }

    // Which tasks are open once session `at` is stored.
    auto open_probe = [&](std::size_t at) {
        data::Probe p = d.new_probe(at, d.say("work_state.json", "ask_open", {{"project", label}}), "open_tasks");
        std::vector<std::string> open, shut;
        const Msg* latest = nullptr;
        for (const Task& t : ts) {
            if (t.added > at) continue;
            const bool is_closed = t.end_status != "open" && t.closed_at <= at;
            p.targets.push_back(t.id);
            const Msg& m = is_closed ? t.close_msg : t.add_msg;
            d.evidence(p, t.id, {m}, {{"value", {t.name}}});
            (is_closed ? shut : open).push_back(t.name);
            if (!latest || m.session > latest->session) latest = &m;
        }
        MF_ASSERT(latest, "an open-task probe needs a task added by its checkpoint");
        p.expected = open;
        p.expected_source = latest->id;
        data::Rubric r;
        r.kind = RubricKind::structured;
        r.required = open;
        r.forbidden = shut;
        p.rubric = r;
        p.answer = d.answer("open_tasks", {{"values", prose_list(open)}});
        p.capabilities = {"retrieval", "state_tracking"};
        p.failure_modes = {"stale_memory", "missing_memory"};
        return std::make_pair(p, !open.empty());
    };
    d.add_probe(open_probe(d.last_session()).first);
    if (d.rng.chance(0.6) && n > 2) {
        const std::size_t at = static_cast<std::size_t>(d.rng.between(1, to_int(n) - 2));
        const bool any_added = std::any_of(ts.begin(), ts.end(), [&](const Task& t) { return t.added <= at; });
        auto [mid, has_open] = any_added ? open_probe(at) : std::make_pair(data::Probe{}, false);
        if (has_open) d.add_probe(std::move(mid));
    }
}

}  // namespace memfail::suites::writ
