// SPDX-License-Identifier: MIT
// The write-integrity memory-side checks. Each decides exactly from the ledger and what the system
// holds, retrieves, and answers to history() / state_as_of(); a check the probe does not exercise is
// not applicable, and one that cannot be decided (a read operation failed) is left undecided.
//
// A value is found in a memory by its mentions (data::value_mentions) in the memory's canonical
// text at word boundaries, after blanking the longer mentions of the event's other values that
// contain it (so "Acme" is not found inside a memory that only says "Acme Labs"). Provenance is
// used only where the check is about provenance: the same system gets the same verdicts whether or
// not its memories carry sources.
#include <memfail/suites/writ/checks.hpp>
#include <memfail/suites/writ/values.hpp>

#include <memfail/core/text.hpp>
#include <memfail/grade/evidence.hpp>

#include <algorithm>
#include <optional>
#include <set>

namespace memfail::suites::writ {

namespace {

using data::LedgerEvent;
using data::ValueRecord;

// Session order of a scenario, for "stated by the checkpoint" questions.
class Timeline {
public:
    explicit Timeline(const data::Scenario& s) : m_scenario(s), m_index(s) {}
    std::size_t position(const std::string& session_id) const { return m_index.session_position(session_id); }
    // Session of a record: its own, else its message's; npos when neither is known.
    std::size_t record_position(const ValueRecord& r) const {
        if (!r.session_id.empty()) return position(r.session_id);
        if (!r.message_id.empty())
            if (const data::Session* s = m_index.session_of(r.message_id)) return position(s->id);
        return npos;
    }
    const std::string& timestamp(std::size_t position) const { return m_scenario.sessions.at(position).timestamp; }
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

private:
    const data::Scenario& m_scenario;
    data::MessageIndex m_index;
};

std::vector<std::string> normalized_mentions(const ValueRecord& r) {
    std::vector<std::string> out;
    for (const auto& m : data::value_mentions(r)) {
        std::string n = grade::evidence::canonical(m);
        if (!n.empty() && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(std::move(n));
    }
    return out;
}

// Replaces every word-bounded occurrence of `phrase` in `text` with a separator.
void blank(std::string& text, const std::string& phrase) {
    if (phrase.empty()) return;
    std::size_t from = 0;
    while ((from = text.find(phrase, from)) != std::string::npos) {
        const bool left = from == 0 || text[from - 1] == ' ';
        const std::size_t end = from + phrase.size();
        const bool right = end == text.size() || text[end] == ' ';
        if (left && right) {
            text.replace(from, phrase.size(), std::string(phrase.size(), '|'));
            from = end;
        } else {
            from += 1;
        }
    }
}

// The values of one event as matchers: a record is found in a text when one of its mentions is,
// after the longer mentions of the event's other values that contain that mention are blanked.
//
// Where finding a value fails a check (a superseded value retrieved, a value of another time, an
// item that should be gone), the longer values of every event of the ledger are blanked too
// (`wide`): "living with Alex" is not found inside "living with Alex in Pearl District", another
// fact's value), and a mention another event's value shares ("completed" of two tasks, "Sam" of a
// person and a relationship) is no evidence about this event. Where finding it passes one, only
// the event's own are, so a faithful memory is never read as missing its value.
class ValueFinder {
public:
    explicit ValueFinder(const LedgerEvent& e) {
        for (const auto& r : e.history) m_all.push_back(normalized_mentions(r));
        for (const auto& r : e.distractors) m_all.push_back(normalized_mentions(r));
    }
    static ValueFinder wide(const LedgerEvent& e, const data::Scenario& scenario) {
        ValueFinder f(e);
        for (const auto& other : scenario.ledger) {
            if (&other == &e) continue;
            for (const auto* records : {&other.history, &other.distractors})
                for (const auto& r : *records) {
                    f.m_all.push_back(normalized_mentions(r));
                    f.m_shared.insert(f.m_all.back().begin(), f.m_all.back().end());
                }
        }
        return f;
    }
    bool found(const ValueRecord& r, const std::string& normalized_text) const {
        const auto mine = normalized_mentions(r);
        for (const auto& m : mine) {
            if (m_shared.count(m)) continue;
            std::string t = normalized_text;
            for (const auto& others : m_all)
                for (const auto& o : others)
                    if (o.size() > m.size() && std::find(mine.begin(), mine.end(), o) == mine.end() &&
                        text::normalized_contains(o, m))
                        blank(t, o);
            if (text::normalized_contains(t, m)) return true;
        }
        return false;
    }

private:
    std::vector<std::vector<std::string>> m_all;
    std::set<std::string> m_shared;  // wide: other events' mentions
};

bool same_value(const ValueRecord& a, const ValueRecord& b) {
    if (a.value == b.value) return true;
    const auto ma = normalized_mentions(a), mb = normalized_mentions(b);
    return !ma.empty() && !mb.empty() && ma.front() == mb.front();
}

// The life of one event up to a checkpoint.
struct EventState {
    const LedgerEvent* event = nullptr;
    std::vector<const ValueRecord*> stated;  // records stated by the checkpoint, in order
    const ValueRecord* current = nullptr;    // valid at the checkpoint; null when retracted or expired
    const ValueRecord* retracted = nullptr;  // the value a retraction by the checkpoint withdrew
    bool expired = false;                    // a one-off whose lifetime ended by the checkpoint
    std::vector<const ValueRecord*> superseded;  // stated, replaced by a different later value
};

EventState state_at(const LedgerEvent& e, const Timeline& t, std::size_t checkpoint) {
    EventState s;
    s.event = &e;
    for (const auto& r : e.history) {
        const std::size_t p = t.record_position(r);
        if (p != Timeline::npos && p <= checkpoint) s.stated.push_back(&r);
    }
    if (!s.stated.empty()) s.current = s.stated.back();
    for (std::size_t i = 0; i + 1 < s.stated.size(); ++i)
        if (!same_value(*s.stated[i], *s.current)) s.superseded.push_back(s.stated[i]);
    if (!e.retracted_in.empty()) {
        const std::size_t rp = t.position(e.retracted_in);
        // A retraction counts when it comes after the last value stated by the checkpoint (a value
        // stated again after a retraction is current again).
        const std::size_t last = s.current ? t.record_position(*s.current) : Timeline::npos;
        if (rp != Timeline::npos && rp <= checkpoint && (last == Timeline::npos || rp >= last) && s.current) {
            s.retracted = s.current;
            // A value stated in the retraction's own session is the retraction's wording ("removed"),
            // not what was withdrawn: that is the last value stated before it.
            if (last == rp)
                for (auto it = s.stated.rbegin(); it != s.stated.rend(); ++it)
                    if (t.record_position(**it) < rp) {
                        s.retracted = *it;
                        break;
                    }
            s.current = nullptr;
        }
    }
    if (!e.should_persist && s.current) {
        const std::size_t ends = t.position(e.expires_after.empty() ? e.introduced_in : e.expires_after);
        if (ends != Timeline::npos && ends <= checkpoint) {
            s.expired = true;
            s.current = nullptr;
        }
    }
    return s;
}

// The record valid at instant `when`, among those stated by the checkpoint.
const ValueRecord* valid_at(const EventState& s, const std::string& when) {
    const ValueRecord* out = nullptr;
    for (const ValueRecord* r : s.stated)
        if (r->as_of <= when) out = r;
    return out;
}

std::string shown(const ValueRecord& r) {
    const auto m = data::value_mentions(r);
    return m.empty() ? r.value.dump() : m.front();
}

// Best (lowest) rank among hits holding `r`, or npos.
std::size_t best_rank(const ValueFinder& f, const ValueRecord& r, const std::vector<std::string>& hit_texts) {
    for (std::size_t i = 0; i < hit_texts.size(); ++i)
        if (f.found(r, hit_texts[i])) return i;
    return Timeline::npos;
}

const memory::Memory* holder(const ValueFinder& f, const ValueRecord& r, const std::vector<memory::Memory>& held,
                             const std::vector<std::string>& held_texts) {
    for (std::size_t i = 0; i < held.size(); ++i)
        if (f.found(r, held_texts[i])) return &held[i];
    return nullptr;
}

bool has_words(const std::string& canonical_text, const std::vector<std::string>& words) {
    return std::all_of(words.begin(), words.end(),
                       [&](const std::string& w) { return text::normalized_contains(canonical_text, w); });
}

// Stems of the words an item is recognised by when it is worded otherwise.
void add_identity(std::string_view phrase, std::set<std::string>& out) {
    for (const auto& t : grade::evidence::tokens(phrase))
        if (t.size() >= 3 && !grade::evidence::is_function_word(t)) out.insert(grade::evidence::stem(t));
}

// Whether an item that should be gone (a retracted value, an expired one-off) is still in memory.
enum class Presence { present, absent, unsure };
struct Kept {
    Presence presence = Presence::unsure;
    std::string detail;
};

// Present when a memory states the value: by a mention only this event's values have, or, for a
// value other events share ("pending"), by the mention beside the event's own words ("analytics
// tracking ... pending"). Absent only when no memory held or retrieved has any word the item is
// recognised by (its value's words, or its id's): a memory that shares one may hold the item in
// other words ("formal register" for "use formal tone"), which only a judge can tell.
Kept forgotten_item(const data::Scenario& scenario, const LedgerEvent& e, const ValueRecord& r,
                    const std::vector<memory::Memory>& held, const std::vector<std::string>& held_texts,
                    const std::vector<std::string>& hit_texts) {
    const ValueFinder f = ValueFinder::wide(e, scenario);
    const auto mine = normalized_mentions(r);
    bool distinctive = !mine.empty();
    for (const auto& other : scenario.ledger) {
        if (&other == &e || !distinctive) continue;
        auto shared = [&](const ValueRecord& o) {
            const auto theirs = normalized_mentions(o);
            return std::any_of(theirs.begin(), theirs.end(),
                               [&](const std::string& m) { return std::find(mine.begin(), mine.end(), m) != mine.end(); });
        };
        distinctive = std::none_of(other.history.begin(), other.history.end(), shared);
    }
    const std::vector<std::string> own_words = id_words(e.id);
    const std::string shown_value = "\"" + shown(r) + "\"";
    for (std::size_t i = 0; i < held.size(); ++i)
        if (f.found(r, held_texts[i]) && (distinctive || (!own_words.empty() && has_words(held_texts[i], own_words))))
            return {Presence::present, e.id + " " + shown_value + " held by " + held[i].id};
    for (const auto& h : hit_texts)
        if (f.found(r, h) && (distinctive || (!own_words.empty() && has_words(h, own_words))))
            return {Presence::present, e.id + " " + shown_value + " retrieved"};
    std::set<std::string> identity;
    if (distinctive)
        for (const auto& m : data::value_mentions(r)) add_identity(m, identity);
    else
        for (const auto& w : own_words) add_identity(w, identity);
    // Words that what should stay in memory uses too ("alice" of a kept "alice.chen@company.com"
    // beside a withdrawn "alice@gmail.com") recognise nothing.
    std::set<std::string> kept_words;
    for (const auto& other : scenario.ledger) {
        if (&other == &e) continue;
        for (const auto& w : id_words(other.id)) add_identity(w, kept_words);
        for (const auto& h : other.history)
            for (const auto& m : data::value_mentions(h)) add_identity(m, kept_words);
    }
    for (const auto& w : kept_words) identity.erase(w);
    // A memory stating what the item became when it was withdrawn ("analytics tracking: removed",
    // the value WRIT records in the retraction's own session) records its end, not the item.
    std::vector<std::string> markers;
    for (const auto& h : e.history)
        if (&h != &r && !h.session_id.empty() && h.session_id == e.retracted_in)
            for (auto& m : normalized_mentions(h)) markers.push_back(std::move(m));
    auto records_end = [&](const std::string& canonical_text) {
        return std::any_of(markers.begin(), markers.end(),
                           [&](const std::string& m) { return text::normalized_contains(canonical_text, m); });
    };
    if (identity.empty())
        return {Presence::unsure, e.id + " " + shown_value + ": no word of it to show it is gone"};
    auto shares = [&](const std::string& canonical_text) -> std::string {
        for (const auto& t : text::split(canonical_text, ' '))
            if (t.size() >= 3 && identity.count(grade::evidence::stem(t))) return t;
        return {};
    };
    for (std::size_t i = 0; i < held.size(); ++i)
        if (const std::string w = records_end(held_texts[i]) ? std::string() : shares(held_texts[i]); !w.empty())
            return {Presence::unsure, e.id + " " + shown_value + ": " + held[i].id + " says '" + w +
                                          "'; only a judge can tell whether it keeps the item in other words"};
    for (const auto& h : hit_texts)
        if (const std::string w = records_end(h) ? std::string() : shares(h); !w.empty())
            return {Presence::unsure, e.id + " " + shown_value + ": a retrieved memory says '" + w +
                                          "'; only a judge can tell whether it keeps the item in other words"};
    return {Presence::absent, ""};
}

CheckResult not_applicable(const char* name) { return {name, false, std::nullopt, {}}; }

CheckResult decided(const char* name, bool passed, std::string detail) {
    return {name, true, passed, std::move(detail)};
}

CheckResult undecided(const char* name, std::string detail) { return {name, true, std::nullopt, std::move(detail)}; }

const Result<std::vector<memory::Memory>>& as_of_read(const CheckContext& c, const std::string& when) {
    auto it = c.reads.as_of.find(when);
    if (it == c.reads.as_of.end()) it = c.reads.as_of.emplace(when, c.system.state_as_of(when)).first;
    return it->second;
}

const Result<std::vector<memory::MemoryEvent>>& history_read(const CheckContext& c, const std::string& id) {
    auto it = c.reads.history.find(id);
    if (it == c.reads.history.end()) it = c.reads.history.emplace(id, c.system.history(id)).first;
    return it->second;
}

}  // namespace

const std::vector<std::string>& check_names() {
    static const std::vector<std::string> names = {"current_held",     "current_retrieved", "stale_exposure",
                                                   "retraction",       "over_retention",    "authority",
                                                   "history_complete", "drift_detectable",  "as_of",
                                                   "provenance"};
    return names;
}

std::vector<CheckResult> check_writ_memory(const CheckContext& c) {
    const Timeline t(c.scenario);
    const std::size_t checkpoint = t.position(c.probe.after_session);
    std::vector<CheckResult> out;
    if (checkpoint == Timeline::npos) return out;

    if (!c.reads.held_texts) {
        c.reads.held_texts.emplace();
        for (const auto& m : c.held) c.reads.held_texts->push_back(grade::evidence::canonical(m.text));
    }
    MF_ASSERT(c.reads.held_texts->size() == c.held.size(), "a ReadCache serves one checkpoint's held memories");
    const std::vector<std::string>& held_texts = *c.reads.held_texts;
    std::vector<std::string> hit_texts;
    for (const auto& h : c.hits) hit_texts.push_back(grade::evidence::canonical(h.memory.text));

    const bool past = c.probe.temporal && !c.probe.temporal->expect_current && !c.probe.temporal->as_of.empty();
    std::vector<EventState> targets;
    for (const auto& id : c.probe.targets)
        if (const LedgerEvent* e = c.scenario.event(id)) targets.push_back(state_at(*e, t, checkpoint));
    std::vector<EventState> all;
    for (const auto& e : c.scenario.ledger) all.push_back(state_at(e, t, checkpoint));

    // current_held / current_retrieved: the target's value at the checkpoint (probes about now).
    {
        std::vector<std::string> missing_held, missing_hit, latent_held, latent_hit;
        std::size_t applicable = 0;
        for (const auto& s : targets) {
            if (past || !s.current) continue;
            ++applicable;
            const ValueFinder f(*s.event);
            // A value no message states (a latent constraint inferred from behaviour): a memory
            // with its words holds it; one without may still hold it in other words, which only a
            // judge can tell, so its absence decides nothing.
            const bool unstated = s.current->message_id.empty() && s.current->mentions.empty();
            const bool held = holder(f, *s.current, c.held, held_texts) != nullptr;
            const bool hit = best_rank(f, *s.current, hit_texts) != Timeline::npos;
            if (unstated && !held) latent_held.push_back(s.event->id);
            if (unstated && !hit) latent_hit.push_back(s.event->id);
            if (!held && !unstated) missing_held.push_back(s.event->id + " = \"" + shown(*s.current) + "\"");
            if (!hit && !unstated) missing_hit.push_back(s.event->id + " = \"" + shown(*s.current) + "\"");
        }
        if (!applicable) {
            out.push_back(not_applicable("current_held"));
            out.push_back(not_applicable("current_retrieved"));
        } else {
            // A decided failure fails the check; otherwise a latent target not found leaves it undecided.
            auto verdict = [&](const char* name, const std::vector<std::string>& missing,
                               const std::vector<std::string>& latent, const std::string& failed, const std::string& ok) {
                if (!missing.empty()) return decided(name, false, failed + text::join(missing, "; "));
                if (!latent.empty())
                    return undecided(name, "no message states the value of " + text::join(latent, ", ") +
                                               " (inferred, not said) and no memory here has its words: only a "
                                               "judge can tell whether one holds it in other words");
                return decided(name, true, ok);
            };
            out.push_back(verdict("current_held", missing_held, latent_held, "not held: ", "every current value is held"));
            out.push_back(verdict("current_retrieved", missing_hit, latent_hit,
                                  "not in the top " + std::to_string(c.k) + ": ",
                                  "every current value is in the top " + std::to_string(c.k)));
        }
    }

    // stale_exposure: a superseded value retrieved above the current one (or instead of it).
    {
        std::vector<std::string> exposed;
        std::size_t applicable = 0;
        for (const auto& s : targets) {
            if (past || !s.current || s.superseded.empty()) continue;
            ++applicable;
            const ValueFinder f(*s.event);
            const ValueFinder wide = ValueFinder::wide(*s.event, c.scenario);
            const std::size_t current_rank = best_rank(f, *s.current, hit_texts);
            for (const ValueRecord* old : s.superseded) {
                if (same_value(*old, *s.current)) continue;
                const std::size_t r = best_rank(wide, *old, hit_texts);
                if (r != Timeline::npos && r < current_rank)
                    exposed.push_back("\"" + shown(*old) + "\" at rank " + std::to_string(r + 1) +
                                      (current_rank == Timeline::npos
                                           ? ", current \"" + shown(*s.current) + "\" not retrieved"
                                           : ", current \"" + shown(*s.current) + "\" at rank " +
                                                 std::to_string(current_rank + 1)));
            }
        }
        out.push_back(!applicable ? not_applicable("stale_exposure")
                                  : decided("stale_exposure", exposed.empty(),
                                            exposed.empty() ? "no superseded value ranks above the current one"
                                                            : "superseded value retrieved first: " +
                                                                  text::join(exposed, "; ")));
    }

    // retraction: a value the user withdrew, still held or retrieved; over_retention: a one-off item
    // still held or retrieved after its lifetime. Each fails on a memory stating the item, passes
    // only when no memory has a word of it, and is undecided otherwise (forgotten_item).
    auto forgetting = [&](const char* name, bool retraction, const std::string& gone, const std::string& kept_lead) {
        std::vector<std::string> kept, unsure;
        std::size_t applicable = 0;
        for (const auto& s : all) {
            const ValueRecord* item = retraction ? s.retracted : (s.expired && !s.stated.empty() ? s.stated.back() : nullptr);
            if (!item) continue;
            ++applicable;
            const Kept k = forgotten_item(c.scenario, *s.event, *item, c.held, held_texts, hit_texts);
            if (k.presence == Presence::present) kept.push_back(k.detail);
            else if (k.presence == Presence::unsure) unsure.push_back(k.detail);
        }
        if (!applicable) return not_applicable(name);
        if (!kept.empty()) return decided(name, false, kept_lead + text::join(kept, "; "));
        if (!unsure.empty()) return undecided(name, text::join(unsure, "; "));
        return decided(name, true, gone);
    };
    out.push_back(forgetting("retraction", true, "no memory held or retrieved has a word of any retracted value",
                             "retracted but kept: "));
    out.push_back(forgetting("over_retention", false,
                             "no memory held or retrieved has a word of any item that should not persist",
                             "should not persist but held: "));

    // authority: an assistant's contradicting summary held as current over what the user stated:
    // the summary retrieved above the user's value, or held while the user's value is not.
    {
        std::vector<std::string> violations;
        std::size_t applicable = 0;
        for (const auto& s : targets.empty() ? all : targets) {
            if (!s.current || s.current->authority == data::Authority::ai_summarized) continue;
            const ValueFinder f(*s.event);
            for (const auto& d : s.event->distractors) {
                if (d.authority != data::Authority::ai_summarized) continue;
                const std::size_t p = t.record_position(d);
                if (p == Timeline::npos || p > checkpoint || same_value(d, *s.current)) continue;
                ++applicable;
                const bool user_held = holder(f, *s.current, c.held, held_texts) != nullptr;
                const bool ai_held = holder(f, d, c.held, held_texts) != nullptr;
                const std::size_t user_rank = best_rank(f, *s.current, hit_texts);
                const std::size_t ai_rank = best_rank(f, d, hit_texts);
                if (ai_held && !user_held)
                    violations.push_back(s.event->id + ": the summary's \"" + shown(d) + "\" is held, the user's \"" +
                                         shown(*s.current) + "\" is not");
                else if (ai_rank != Timeline::npos && ai_rank < user_rank)
                    violations.push_back(s.event->id + ": the summary's \"" + shown(d) + "\" ranks above the user's \"" +
                                         shown(*s.current) + "\"");
            }
        }
        out.push_back(!applicable ? not_applicable("authority")
                                  : decided("authority", violations.empty(),
                                            violations.empty() ? "no assistant summary outranks what the user stated"
                                                               : text::join(violations, "; ")));
    }

    // history_complete: every past value recoverable, from the memories themselves or history().
    {
        std::vector<std::string> lost, unworded;
        std::size_t applicable = 0;
        std::optional<std::string> undecidable;
        const bool has_history = c.system.capabilities().history;
        for (const auto& s : targets) {
            if (s.superseded.empty()) continue;
            ++applicable;
            const ValueFinder f(*s.event);
            // What history() says about the memories holding any of this event's values.
            std::string recorded;
            if (has_history) {
                for (std::size_t i = 0; i < c.held.size(); ++i) {
                    bool mine = false;
                    for (const ValueRecord* r : s.stated) mine = mine || f.found(*r, held_texts[i]);
                    if (!mine) continue;
                    const auto& h = history_read(c, c.held[i].id);
                    if (!h.has_value()) {
                        if (h.error().kind != ErrorKind::unsupported)
                            undecidable = "history(" + c.held[i].id + ") failed: " + h.error().message;
                        continue;
                    }
                    for (const auto& ev : h.value()) {
                        recorded += ' ' + grade::evidence::canonical(ev.old_text);
                        recorded += ' ' + grade::evidence::canonical(ev.new_text);
                    }
                }
            }
            for (const ValueRecord* old : s.superseded) {
                const bool in_memories = holder(f, *old, c.held, held_texts) != nullptr;
                if (in_memories || f.found(*old, recorded)) continue;
                // A value no message states as written ("dating Alex" for "I started seeing someone
                // named Alex"): a memory may hold it in other words, which only a judge can tell.
                if (old->message_id.empty() && old->mentions.empty())
                    unworded.push_back(s.event->id + " \"" + shown(*old) + "\"");
                else
                    lost.push_back(s.event->id + " \"" + shown(*old) + "\"");
            }
        }
        if (!applicable) out.push_back(not_applicable("history_complete"));
        else if (!lost.empty())
            out.push_back(decided("history_complete", false,
                                  std::string("past values not recoverable") +
                                      (has_history ? "" : " (the system has no history operation)") + ": " +
                                      text::join(lost, "; ")));
        else if (undecidable) out.push_back(undecided("history_complete", *undecidable));
        else if (!unworded.empty())
            out.push_back(undecided("history_complete", "no message states " + text::join(unworded, ", ") +
                                                            " as written and no memory here has it: only a judge "
                                                            "can tell whether one holds it in other words"));
        else out.push_back(decided("history_complete", true, "every past value is recoverable"));
    }

    // drift_detectable (WRIT's detectability): for each target that changed, a memory holding its
    // current value has a history() of more than one value. A system without history() fails it, as
    // WRIT's documentation counts it (its code leaves such a system out).
    {
        std::vector<std::string> silent;
        std::size_t applicable = 0;
        std::optional<std::string> undecidable;
        const bool has_history = c.system.capabilities().history;
        for (const auto& s : targets) {
            if (past || !s.current || s.superseded.empty()) continue;
            ++applicable;
            if (!has_history) continue;
            const ValueFinder f(*s.event);
            bool visible = false;
            for (std::size_t i = 0; i < c.held.size() && !visible; ++i) {
                if (!f.found(*s.current, held_texts[i])) continue;
                const auto& h = history_read(c, c.held[i].id);
                if (!h.has_value()) {
                    if (h.error().kind != ErrorKind::unsupported)
                        undecidable = "history(" + c.held[i].id + ") failed: " + h.error().message;
                    continue;
                }
                const auto& events = h.value();
                visible = events.size() >= 2 || std::any_of(events.begin(), events.end(), [](const memory::MemoryEvent& e) {
                              return !text::trim(e.old_text).empty();
                          });
            }
            if (!visible) silent.push_back(s.event->id);
        }
        if (!applicable) out.push_back(not_applicable("drift_detectable"));
        else if (!has_history)
            out.push_back(decided("drift_detectable", false, "the system keeps no history (no history())"));
        else if (!silent.empty() && !undecidable)
            out.push_back(decided("drift_detectable", false,
                                  "no memory holding the current value shows an earlier one: " + text::join(silent, ", ")));
        else if (!silent.empty()) out.push_back(undecided("drift_detectable", *undecidable));
        else out.push_back(decided("drift_detectable", true, "each change shows in the history of the memory holding its value"));
    }

    // as_of: state_as_of at the probe's date (or, for any target that changed, at the instant its
    // previous value took effect) gives the value valid then and no value from another time.
    {
        struct Ask {
            const EventState* state;
            std::string when;
            const ValueRecord* expected;
        };
        std::vector<Ask> asks;
        for (const auto& s : targets) {
            if (past) {
                if (const ValueRecord* r = valid_at(s, c.probe.temporal->as_of)) asks.push_back({&s, c.probe.temporal->as_of, r});
            } else if (s.stated.size() >= 2) {
                const ValueRecord* prev = s.stated[s.stated.size() - 2];
                if (!same_value(*prev, *s.stated.back())) asks.push_back({&s, prev->as_of, prev});
            }
        }
        if (asks.empty()) {
            out.push_back(not_applicable("as_of"));
        } else if (!c.system.capabilities().as_of) {
            out.push_back(decided("as_of", false, "the system cannot give its state as of a date (no state_as_of)"));
        } else {
            std::vector<std::string> wrong;
            std::optional<std::string> undecidable;
            for (const auto& a : asks) {
                const auto& state = as_of_read(c, a.when);
                if (!state.has_value()) {
                    if (state.error().kind == ErrorKind::unsupported) wrong.push_back("state_as_of(" + a.when + ") unsupported");
                    else undecidable = "state_as_of(" + a.when + ") failed: " + state.error().message;
                    continue;
                }
                std::vector<std::string> texts;
                for (const auto& m : state.value()) texts.push_back(grade::evidence::canonical(m.text));
                const ValueFinder f(*a.state->event);
                const ValueFinder wide = ValueFinder::wide(*a.state->event, c.scenario);
                const bool has_expected =
                    std::any_of(texts.begin(), texts.end(), [&](const std::string& x) { return f.found(*a.expected, x); });
                std::string other;
                for (const ValueRecord* r : a.state->stated) {
                    if (same_value(*r, *a.expected)) continue;
                    if (std::any_of(texts.begin(), texts.end(), [&](const std::string& x) { return wide.found(*r, x); }))
                        other = shown(*r);
                }
                if (!has_expected)
                    wrong.push_back("as of " + a.when + ", " + a.state->event->id + " should be \"" + shown(*a.expected) +
                                    "\" and is not there");
                else if (!other.empty())
                    wrong.push_back("as of " + a.when + ", " + a.state->event->id + " also shows \"" + other +
                                    "\", a value of another time");
            }
            if (!wrong.empty()) out.push_back(decided("as_of", false, text::join(wrong, "; ")));
            else if (undecidable) out.push_back(undecided("as_of", *undecidable));
            else out.push_back(decided("as_of", true, "the state as of each date gives the value valid then"));
        }
    }

    // provenance: a memory holding the expected value names the message that stated it.
    {
        std::vector<std::string> untraced;
        std::size_t applicable = 0;
        for (const auto& s : targets) {
            const ValueRecord* r = past ? valid_at(s, c.probe.temporal->as_of) : s.current;
            if (!r || r->message_id.empty()) continue;
            ++applicable;
            const ValueFinder f(*s.event);
            bool traced = false, found = false;
            auto look = [&](const std::vector<memory::Memory>& memories) {
                for (std::size_t i = 0; i < memories.size() && !traced; ++i) {
                    if (!f.found(*r, grade::evidence::canonical(memories[i].text))) continue;
                    found = true;
                    const auto& src = memories[i].sources;
                    traced = std::find(src.begin(), src.end(), r->message_id) != src.end();
                }
            };
            look(c.held);
            // A past value is traced where the system keeps the past: its state as of that date.
            if (!traced && past && c.system.capabilities().as_of)
                if (const auto& state = as_of_read(c, c.probe.temporal->as_of); state.has_value()) look(state.value());
            if (!traced)
                untraced.push_back(s.event->id + " \"" + shown(*r) + "\"" +
                                   (found ? " is held without its source " + r->message_id : " is not held"));
        }
        out.push_back(!applicable ? not_applicable("provenance")
                                  : decided("provenance", untraced.empty(),
                                            untraced.empty() ? "every expected value names the message that stated it"
                                                             : text::join(untraced, "; ")));
    }
    return out;
}

}  // namespace memfail::suites::writ
