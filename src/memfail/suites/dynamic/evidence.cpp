// SPDX-License-Identifier: MIT
// Evidence recall and attribution for the dynamic suite. Coverage is decided per log (held, absent,
// unsure) and the label is read off in DynamicMem's order with three-valued logic: a condition that
// unsure logs could make either true or false stops the walk and leaves the label empty, so an
// undecidable diagnosis is reported as such rather than guessed.
#include <memfail/suites/dynamic/evidence.hpp>

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include <memfail/core/text.hpp>
#include <memfail/grade/evidence.hpp>

namespace memfail::suites::dynamic {

namespace {

// Adds `i` to a posting list built in increasing order of memory, once.
void post(std::vector<std::uint32_t>& list, std::uint32_t i) {
    if (list.empty() || list.back() != i) list.push_back(i);
}

std::vector<std::uint32_t> intersect(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
    std::vector<std::uint32_t> out;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

}  // namespace

std::vector<std::string> log_details(const std::string& log_id, const data::MessageIndex& messages) {
    std::vector<std::string> out;
    const data::Message* m = messages.message(log_id);
    if (!m || !m->app_log) return out;
    for (const auto& d : m->app_log->details) {
        std::string n = grade::evidence::canonical(d);
        if (!n.empty() && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(std::move(n));
    }
    return out;
}

HeldIndex::HeldIndex(const std::vector<const memory::Memory*>& memories, bool provenance, CanonicalCache* cache)
    : m_provenance(provenance) {
    m_texts.reserve(memories.size());
    for (std::size_t i = 0; i < memories.size(); ++i) {
        const auto index = static_cast<std::uint32_t>(i);
        const std::string& raw = memories[i]->text;
        if (cache) {
            const std::size_t hash = std::hash<std::string>{}(raw);
            auto& entry = cache->by_id[memories[i]->id];
            if (entry.second.empty() || entry.first != hash) entry = {hash, grade::evidence::canonical(raw)};
            m_texts.push_back(entry.second);
        } else {
            m_texts.push_back(grade::evidence::canonical(raw));
        }
        if (provenance)
            for (const auto& source : memories[i]->sources) post(m_citing[source], index);
        // Every store is searchable by words: a memory that holds a log's details holds its evidence
        // whether or not it cites the log (below).
        for (auto& w : text::split(m_texts.back(), ' '))
            if (!w.empty()) post(m_words[std::move(w)], index);
    }
}

bool HeldIndex::holds_all(std::uint32_t memory, const std::vector<std::string>& details) const {
    const std::string& t = m_texts[memory];
    return std::all_of(details.begin(), details.end(),
                       [&](const std::string& d) { return text::normalized_contains(t, d); });
}

// Memories holding every word of every detail: the posting lists intersected, shortest first, so
// the work is bounded by the rarest word's list.
std::vector<std::uint32_t> HeldIndex::candidates(const std::vector<std::string>& details) const {
    std::vector<const std::vector<std::uint32_t>*> lists;
    std::set<std::string> seen;
    for (const auto& d : details)
        for (const auto& w : text::split(d, ' ')) {
            if (w.empty() || !seen.insert(w).second) continue;
            const auto it = m_words.find(w);
            if (it == m_words.end()) return {};
            lists.push_back(&it->second);
        }
    if (lists.empty()) return {};
    std::sort(lists.begin(), lists.end(), [](const auto* a, const auto* b) { return a->size() < b->size(); });
    std::vector<std::uint32_t> out = *lists.front();
    for (std::size_t i = 1; i < lists.size() && !out.empty(); ++i) out = intersect(out, *lists[i]);
    return out;
}

LogStatus HeldIndex::status(const std::string& log_id, const data::MessageIndex& messages) const {
    const auto details = log_details(log_id, messages);
    // A log with details is held by any memory whose text holds them all: the memories citing it
    // are looked at first (provenance makes the check cheaper), then the rest by their words, so a
    // system gets the same verdict with or without provenance. A log without details can only be
    // traced through provenance: without it, unsure.
    if (m_provenance) {
        const auto it = m_citing.find(log_id);
        if (details.empty()) return it == m_citing.end() ? LogStatus::absent : LogStatus::held;
        if (it != m_citing.end())
            for (const auto m : it->second)
                if (holds_all(m, details)) return LogStatus::held;
    }
    if (details.empty()) return LogStatus::unsure;
    for (const auto m : candidates(details))
        if (holds_all(m, details)) return LogStatus::held;
    return LogStatus::absent;
}

Coverage HeldIndex::covered(const std::vector<std::string>& log_ids, const data::MessageIndex& messages) const {
    Coverage out;
    for (const auto& id : log_ids) {
        switch (status(id, messages)) {
            case LogStatus::held: out.held.insert(id); break;
            case LogStatus::unsure: out.unsure.insert(id); break;
            case LogStatus::absent: break;
        }
    }
    return out;
}

Coverage covered_logs(const std::vector<std::string>& log_ids, const std::vector<const memory::Memory*>& memories,
                      bool provenance, const data::MessageIndex& messages) {
    return HeldIndex(memories, provenance).covered(log_ids, messages);
}

namespace {

constexpr const char* k_attribution_names[] = {"irrelevant_evidence", "identity_miss", "detail_miss", "conflated",
                                               "all_clear"};

// Three-valued truth: `maybe` when unsure logs could make a condition either true or false.
enum class Tri { no, yes, maybe };

Tri negate(Tri t) { return t == Tri::yes ? Tri::no : t == Tri::no ? Tri::yes : Tri::maybe; }

// Per-log statuses in the hits and in the store, each asked once per probe.
class Statuses {
public:
    Statuses(const HeldIndex& index, const data::MessageIndex& messages) : m_index(index), m_messages(messages) {}
    LogStatus operator()(const std::string& id) {
        auto it = m_cache.find(id);
        if (it == m_cache.end()) it = m_cache.emplace(id, m_index.status(id, m_messages)).first;
        return it->second;
    }
    Tri some_held(const std::set<std::string>& ids) {
        Tri t = Tri::no;
        for (const auto& id : ids) {
            const LogStatus s = (*this)(id);
            if (s == LogStatus::held) return Tri::yes;
            if (s == LogStatus::unsure) t = Tri::maybe;
        }
        return t;
    }
    Tri some_absent(const std::set<std::string>& ids) {
        Tri t = Tri::no;
        for (const auto& id : ids) {
            const LogStatus s = (*this)(id);
            if (s == LogStatus::absent) return Tri::yes;
            if (s == LogStatus::unsure) t = Tri::maybe;
        }
        return t;
    }

private:
    const HeldIndex& m_index;
    const data::MessageIndex& m_messages;
    std::map<std::string, LogStatus> m_cache;
};

std::set<std::string> key_logs(const data::ProfileState& state) {
    std::set<std::string> out;
    for (const auto& snapshot : state.snapshots)
        for (const auto& e : snapshot.evidence) out.insert(e.log_ids.begin(), e.log_ids.end());
    return out;
}

std::string listed(const std::set<std::string>& ids) {
    return text::join(std::vector<std::string>(ids.begin(), ids.end()), ", ");
}

// The logs of `ids` the hits do not hold, each marked with whether the system stored it at all.
std::string missing_text(const std::set<std::string>& ids, Statuses& hits, Statuses& store) {
    std::vector<std::string> parts;
    for (const auto& id : ids) {
        if (hits(id) != LogStatus::absent) continue;
        const LogStatus s = store(id);
        parts.push_back(id + (s == LogStatus::held ? " (stored, not retrieved)"
                              : s == LogStatus::unsure ? " (storage unsure)"
                                                       : " (not stored)"));
    }
    return text::join(parts, ", ");
}

std::string unsure_text(const std::set<std::string>& ids, Statuses& hits) {
    std::set<std::string> unsure;
    for (const auto& id : ids)
        if (hits(id) == LogStatus::unsure) unsure.insert(id);
    return listed(unsure);
}

}  // namespace

const char* attribution_name(Attribution attribution) {
    return k_attribution_names[static_cast<int>(attribution)];
}

std::optional<Attribution> parse_attribution(const std::string& name) {
    for (int i = 0; i < 5; ++i)
        if (name == k_attribution_names[i]) return static_cast<Attribution>(i);
    return std::nullopt;
}

ProbeEvidence attribute(const data::Probe& probe, const HeldIndex& hits, const HeldIndex& held,
                        const data::MessageIndex& messages, const data::ProfileState* state) {
    ProbeEvidence out;
    Statuses in_hits(hits, messages), in_store(held, messages);

    std::set<std::string> gold, identity_gold, other_gold;
    std::size_t gold_total = 0, retrieved_total = 0;
    out.complete = true;
    for (const auto& f : probe.fields) {
        const std::set<std::string> logs(f.evidence.begin(), f.evidence.end());
        FieldEvidenceResult r;
        r.path = f.path;
        r.gold = logs.size();
        for (const auto& id : logs) {
            const LogStatus s = in_hits(id);
            if (s == LogStatus::held) ++r.retrieved;
            if (s == LogStatus::unsure) ++r.unsure;
            if (in_store(id) == LogStatus::held) ++r.stored;
        }
        r.recall = r.gold == 0 ? 1.0 : static_cast<double>(r.retrieved) / static_cast<double>(r.gold);
        if (r.retrieved != r.gold) out.complete = false;
        gold_total += r.gold;
        retrieved_total += r.retrieved;
        gold.insert(logs.begin(), logs.end());
        (f.role == data::FieldRole::identity ? identity_gold : other_gold).insert(logs.begin(), logs.end());
        out.fields.push_back(std::move(r));
    }
    out.recall = gold_total == 0 ? 1.0 : static_cast<double>(retrieved_total) / static_cast<double>(gold_total);

    std::set<std::string> conflicting;
    for (const auto& id : probe.conflicting)
        if (!gold.count(id)) conflicting.insert(id);
    // Relevant: the current evidence, the key's superseded values and the competing keys beside it
    // (this part of the user's life).
    std::set<std::string> relevant = gold;
    relevant.insert(conflicting.begin(), conflicting.end());
    // The identity: what the answer is about. Named by the identity fields when the task has them (an
    // employer's name, a reminder's routine); otherwise any current log establishes it (a habit's
    // routine, a preference's compared items, a collection's items). A habit stays the same routine
    // at its earlier times and places, so its superseded logs establish it too; an attribute's or a
    // preference's earlier value is another entity or another comparison. Without the profile state
    // every conflicting log counts as the key's own.
    if (identity_gold.empty()) identity_gold = gold;
    if (probe.state_key.rfind("habits_state:", 0) == 0) {
        const std::set<std::string> same_key = state ? key_logs(*state) : conflicting;
        for (const auto& id : conflicting)
            if (same_key.count(id)) identity_gold.insert(id);
    }

    // DynamicMem's order (its project page's): irrelevant evidence, identity (one entry suffices),
    // detail, conflated (complete but ambiguous), all clear. The first condition that holds names the
    // failure, and one that unsure logs leave open stops the walk.
    auto decide = [&](Tri holds, Attribution label, const std::set<std::string>& ids, const char* what,
                      const std::string& why) {
        if (holds == Tri::maybe)
            out.reason = std::string("cannot tell ") + what + ": no provenance and no details for " +
                         unsure_text(ids, in_hits);
        if (holds == Tri::yes) {
            out.label = label;
            out.reason = why;
        }
        return holds != Tri::no;
    };
    if (decide(negate(in_hits.some_held(relevant)), Attribution::irrelevant_evidence, relevant,
               "whether any relevant log was retrieved",
               "no retrieved memory holds a log of this state or of a competing one"))
        return out;
    // Identity: one retrieved entry that establishes the entity, routine or comparison suffices.
    if (decide(negate(in_hits.some_held(identity_gold)), Attribution::identity_miss, identity_gold,
               "whether any identity evidence was retrieved",
               "no identity evidence retrieved: " + missing_text(identity_gold, in_hits, in_store)))
        return out;
    // Then the current value's other evidence, before anything retrieved beside it.
    if (decide(in_hits.some_absent(other_gold), Attribution::detail_miss, other_gold,
               "whether the detail evidence was retrieved",
               "detail evidence not retrieved: " + missing_text(other_gold, in_hits, in_store)))
        return out;
    // Complete, but a superseded value or a competing key retrieved beside it: ambiguous.
    std::set<std::string> conflicting_retrieved;
    for (const auto& id : conflicting)
        if (in_hits(id) == LogStatus::held) conflicting_retrieved.insert(id);
    if (decide(in_hits.some_held(conflicting), Attribution::conflated, conflicting,
               "whether a conflicting log was retrieved",
               "every current log retrieved, and conflicting logs beside them: " + listed(conflicting_retrieved)))
        return out;
    out.label = Attribution::all_clear;
    out.reason = "every gold log retrieved, no conflicting log";
    return out;
}

ProbeEvidence attribute(const data::Probe& probe, const std::vector<const memory::Memory*>& hits,
                        const std::vector<const memory::Memory*>& held, bool provenance,
                        const data::MessageIndex& messages, const data::ProfileState* state) {
    return attribute(probe, HeldIndex(hits, provenance), HeldIndex(held, provenance), messages, state);
}

}  // namespace memfail::suites::dynamic
