// SPDX-License-Identifier: MIT
// Deterministic storage, summary and retrieval checks, exact or unsure (docs/TAXONOMY.md).
//
// For one evidence fact:
//   candidates  the memories citing the fact's messages (provenance) or every memory (none)
//   holders     candidates holding the fact's content: one of its statements verbatim (as whole
//               sentences: "not only when ..." does not hold "only when ..."), or every
//               identity detail that says what the fact states (its entity may be missing: that
//               is a detached fact, a summary error, not a missing one)
//   storage     holders exist: stored. No candidate at all: not stored. Candidates but no holder:
//               unsure (a memory may hold the fact in other words), left to the judge.
//   summary     the holders hold every statement verbatim (or the whole cited messages when the
//               fact lists no statements, every sentence of them, in some memory): faithful. A key detail absent from every holder: summary
//               error. Otherwise (every phrase kept, the wording changed) unsure.
//   retrieval   the holders among the top k hold the statements verbatim, or every key detail.
// Provenance only shrinks the candidates; a memory outside them never holds a fact's statement or
// its content details unless it repeats what another message said.
#include <memfail/core/text.hpp>
#include <memfail/grade/memory_grader.hpp>

#include <algorithm>
#include <set>

namespace memfail::grade {

const char* match_name(Match match) { return match == Match::provenance ? "provenance" : "content"; }

const char* unsure_name(Unsure unsure) {
    switch (unsure) {
        case Unsure::none: return "none";
        case Unsure::storage: return "storage";
        case Unsure::summary: return "summary";
    }
    return "none";
}

Stage combine_fact_stages(const std::vector<Stage>& stages) {
    std::optional<Stage> decided_failure;
    bool unsure = false;
    Stage worst_retrieval = Stage::retrieved;
    for (Stage s : stages) {
        if (s == Stage::not_stored || s == Stage::summary_error) {
            if (!decided_failure || static_cast<int>(s) < static_cast<int>(*decided_failure)) decided_failure = s;
        } else if (s == Stage::unverified) {
            unsure = true;
        } else if (static_cast<int>(s) < static_cast<int>(worst_retrieval)) {
            worst_retrieval = s;
        }
    }
    if (decided_failure) return *decided_failure;
    if (unsure) return Stage::unverified;
    return worst_retrieval;
}

MemorySnapshot::MemorySnapshot(std::vector<memory::Memory> memories, bool provenance)
    : m_memories(std::move(memories)), m_provenance(provenance) {
    m_normalized.reserve(m_memories.size());
    m_bounded.reserve(m_memories.size());
    for (std::size_t i = 0; i < m_memories.size(); ++i) {
        m_normalized.push_back(text::normalize(m_memories[i].text));
        m_bounded.push_back(sentence_bounded(m_memories[i].text));
        for (const auto& source : m_memories[i].sources) m_by_source[source].push_back(i);
        m_by_id.emplace(m_memories[i].id, i);
    }
}

const std::vector<std::size_t>& MemorySnapshot::by_source(const std::string& message_id) const {
    static const std::vector<std::size_t> k_none;
    auto it = m_by_source.find(message_id);
    return it == m_by_source.end() ? k_none : it->second;
}

std::optional<std::size_t> MemorySnapshot::index_of(const std::string& id) const {
    auto it = m_by_id.find(id);
    if (it == m_by_id.end()) return std::nullopt;
    return it->second;
}

std::string sentence_bounded(std::string_view text) {
    constexpr char k_separator = '\x1f';
    std::string out(1, k_separator);
    for (const auto& sentence : text::split_sentences(text))
        if (auto n = text::normalize(sentence); !n.empty()) out.append(n).push_back(k_separator);
    return out;
}

bool cites_fact(const std::vector<std::string>& sources, const data::EvidenceFact& fact) {
    for (const auto& s : sources)
        if (std::find(fact.message_ids.begin(), fact.message_ids.end(), s) != fact.message_ids.end())
            return true;
    return false;
}

bool detail_present(const data::KeyDetail& detail, const std::string& normalized_text) {
    for (const auto& variant : detail.variants)
        if (text::normalized_contains(normalized_text, text::normalize(variant))) return true;
    return false;
}

namespace {

// A memory as the grader sees it: normalised text and sources.
struct View {
    std::string id;
    const std::string* normalized;
    const std::string* bounded;  // sentence_bounded()
    const std::vector<std::string>* sources;
};

// A fact prepared for matching: details and statements normalised once, so matching against many
// memories never re-normalises the same phrase.
struct PreparedFact {
    struct Detail {
        std::string name;
        data::DetailRole role;
        std::vector<std::string> variants;
    };
    std::vector<Detail> details;
    std::vector<std::size_t> content;     // identity details saying what is stated (not "entity")
    std::vector<std::string> statements;  // sentence_bounded(); the cited messages' sentences when none are listed
    // The statements are the cited messages' sentences, one by one (the fact lists none): a memory
    // holding one of them is no holder by itself (a filler sentence is no part of the fact), but
    // memories that together hold them all are a verbatim copy of the messages.
    bool from_messages = false;
    bool complete = true;

    PreparedFact(const data::EvidenceFact& fact, const data::MessageIndex* messages) : complete(fact.details_complete) {
        for (const auto& d : fact.key_details) {
            Detail prepared{d.name, d.effective_role(), {}};
            for (const auto& v : d.variants)
                if (auto n = text::normalize(v); !n.empty()) prepared.variants.push_back(std::move(n));
            details.push_back(std::move(prepared));
        }
        for (std::size_t i = 0; i < details.size(); ++i)
            if (details[i].role == data::DetailRole::identity && details[i].name != "entity") content.push_back(i);
        if (content.empty())
            for (std::size_t i = 0; i < details.size(); ++i)
                if (details[i].role == data::DetailRole::identity) content.push_back(i);
        const auto add_statement = [&](std::string_view text) {
            if (auto b = sentence_bounded(text); b.size() > 1) statements.push_back(std::move(b));
        };
        for (const auto& s : fact.statements) add_statement(s);
        if (statements.empty() && messages) {
            for (const auto& id : fact.message_ids)
                if (const auto* m = messages->message(id))
                    for (const auto& sentence : text::split_sentences(m->content)) add_statement(sentence);
            from_messages = !statements.empty();
        }
    }

    bool present(std::size_t detail, const std::string& normalized_text) const {
        for (const auto& v : details[detail].variants)
            if (text::normalized_contains(normalized_text, v)) return true;
        return false;
    }
    bool holds_statement(const std::string& bounded_text) const {
        for (const auto& s : statements)
            if (bounded_text.find(s) != std::string::npos) return true;
        return false;
    }
    // A memory holds the fact when it holds one of its statements verbatim or all of its content.
    bool holds(const std::string& normalized_text, const std::string& bounded_text) const {
        if (!from_messages && holds_statement(bounded_text)) return true;
        if (content.empty()) return false;
        for (std::size_t d : content)
            if (!present(d, normalized_text)) return false;
        return true;
    }
    // Every statement is in some memory of `views` (a fact split over memories is whole when
    // together they hold every sentence of it).
    bool copied_in(const std::vector<View>& views) const {
        if (statements.empty()) return false;
        for (const auto& s : statements) {
            const bool found = std::any_of(views.begin(), views.end(),
                                           [&](const View& v) { return v.bounded->find(s) != std::string::npos; });
            if (!found) return false;
        }
        return true;
    }
    // Names of the details that no memory among `views` contains.
    std::vector<std::string> missing_in(const std::vector<View>& views) const {
        std::vector<std::string> missing;
        for (std::size_t d = 0; d < details.size(); ++d) {
            const bool found = std::any_of(views.begin(), views.end(),
                                           [&](const View& v) { return present(d, *v.normalized); });
            if (!found) missing.push_back(details[d].name);
        }
        return missing;
    }
};

std::string quoted_list(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", '" : "'") + names[i] + "'";
    return out;
}

// A summary error in words a person reads: what was lost, and what that does to the fact.
std::string summary_error_reason(const PreparedFact& fact, const std::vector<std::string>& missing) {
    bool entity = false, identity = false;
    for (const auto& name : missing) {
        if (name == "entity") entity = true;
        for (const auto& d : fact.details)
            if (d.name == name && d.role == data::DetailRole::identity) identity = true;
    }
    std::string out = "stored without key detail " + quoted_list(missing);
    if (entity) out += " (the fact is detached from whom it is about)";
    else if (!identity) out += " (a qualifier of the fact is lost)";
    return out;
}

FactVerdict grade_fact(const data::EvidenceFact& fact, const PreparedFact& prepared, const MemorySnapshot& snapshot,
                       const std::vector<View>& retrieved_views) {
    FactVerdict v;
    v.fact_id = fact.id;
    const bool provenance = snapshot.provenance();
    v.method = provenance ? Match::provenance : Match::content;

    // Storage: the candidates, and among them the holders.
    std::vector<std::size_t> candidates;
    if (provenance) {
        std::set<std::size_t> indices;
        for (const auto& message_id : fact.message_ids)
            for (std::size_t i : snapshot.by_source(message_id)) indices.insert(i);
        candidates.assign(indices.begin(), indices.end());
    } else {
        candidates.resize(snapshot.memories().size());
        for (std::size_t i = 0; i < candidates.size(); ++i) candidates[i] = i;
    }
    const auto view_of = [&](std::size_t i) {
        return View{snapshot.memories()[i].id, &snapshot.normalized_text(i), &snapshot.bounded_text(i),
                    &snapshot.memories()[i].sources};
    };
    std::vector<View> holders;
    for (std::size_t i : candidates)
        if (prepared.holds(snapshot.normalized_text(i), snapshot.bounded_text(i))) holders.push_back(view_of(i));
    // A fact listing no statements: the memories holding its messages' sentences, when together
    // they hold them all, are a verbatim copy, and hold the fact with the content holders.
    if (prepared.from_messages) {
        std::vector<View> copy;
        for (std::size_t i : candidates)
            if (prepared.holds_statement(snapshot.bounded_text(i))) copy.push_back(view_of(i));
        if (prepared.copied_in(copy))
            for (const auto& c : copy)
                if (std::none_of(holders.begin(), holders.end(), [&](const View& h) { return h.id == c.id; }))
                    holders.push_back(c);
    }
    for (const auto& h : holders) v.stored_ids.push_back(h.id);
    if (holders.empty()) {
        if (candidates.empty()) {
            v.stage = Stage::not_stored;
            v.explanation = provenance ? "no stored memory came from the fact's messages" : "the store is empty";
        } else {
            v.stage = Stage::unverified;
            v.unsure = Unsure::storage;
            v.explanation = std::string(provenance ? "memories came from the fact's messages but none"
                                                   : "no memory") +
                            " holds its statement or its content words; only a judge can tell whether one holds it in "
                            "other words";
        }
        return v;
    }

    // Retrieval, checked for any fact with holders: the holders in the top k.
    std::vector<View> hits;
    for (const auto& r : retrieved_views) {
        // A snapshot memory belongs when it is a holder; one the snapshot does not know (rendered
        // at query time) is examined by the same test, on its own text and sources.
        const bool belongs = std::any_of(holders.begin(), holders.end(), [&](const View& h) { return h.id == r.id; }) ||
                             ((!provenance || cites_fact(*r.sources, fact)) && prepared.holds(*r.normalized, *r.bounded));
        if (belongs) hits.push_back(r);
    }
    for (const auto& h : hits) v.retrieved_ids.push_back(h.id);
    v.retrieval_checked = true;
    if (hits.empty()) {
        v.retrieval_explanation = "none of the fact's memories is in the top k";
    } else if (prepared.copied_in(hits)) {
        v.retrieved = true;
    } else if (auto missing = prepared.missing_in(hits); missing.empty()) {
        v.retrieved = true;
    } else {
        v.retrieval_explanation = "the top k miss the part holding " + quoted_list(missing);
        v.missing_details = std::move(missing);
    }
    if (v.retrieved) v.retrieval_explanation = "stored faithfully and retrieved";

    // Summary: exact when the holders are a verbatim copy, or when they lack a detail.
    const auto stage_after_summary = [&] {
        v.stage = v.retrieved ? Stage::retrieved : Stage::not_retrieved;
        v.explanation = v.retrieval_explanation;
    };
    if (prepared.copied_in(holders)) {
        v.verbatim_copy = true;
        stage_after_summary();
        return v;
    }
    if (auto missing = prepared.missing_in(holders); !missing.empty()) {
        v.stage = Stage::summary_error;
        v.missing_details = missing;
        v.explanation = summary_error_reason(prepared, missing);
        return v;
    }
    v.stage = Stage::unverified;
    v.unsure = Unsure::summary;
    v.explanation = prepared.complete
                        ? "every key detail is kept but not the statement's wording; only a judge can tell whether "
                          "its meaning is (negated, hedged, merged)"
                        : "the listed key details are kept, but the fact's details are incomplete; only a judge can "
                          "tell whether it is kept";
    if (!v.retrieved) v.explanation += "; also, " + v.retrieval_explanation;
    return v;
}

}  // namespace

ProbeVerdict grade_memory_side(const data::Probe& probe, const MemorySnapshot& snapshot,
                               const std::vector<memory::Hit>& retrieved, const data::MessageIndex* messages) {
    ProbeVerdict verdict;
    if (probe.evidence.empty()) return verdict;

    // Retrieved memories the snapshot does not know (a system may render memories at query time)
    // are judged by their own text.
    std::vector<std::string> own_normalized(retrieved.size()), own_bounded(retrieved.size());
    std::vector<View> views;
    views.reserve(retrieved.size());
    for (std::size_t i = 0; i < retrieved.size(); ++i) {
        const auto& m = retrieved[i].memory;
        if (auto index = snapshot.index_of(m.id);
            index && snapshot.memories()[*index].text == m.text) {
            views.push_back({m.id, &snapshot.normalized_text(*index), &snapshot.bounded_text(*index), &m.sources});
        } else {
            own_normalized[i] = text::normalize(m.text);
            own_bounded[i] = sentence_bounded(m.text);
            views.push_back({m.id, &own_normalized[i], &own_bounded[i], &m.sources});
        }
    }

    std::vector<Stage> stages;
    for (const auto& fact : probe.evidence) {
        const PreparedFact prepared(fact, messages);
        FactVerdict fv = grade_fact(fact, prepared, snapshot, views);
        stages.push_back(fv.stage);
        verdict.facts.push_back(std::move(fv));
    }
    verdict.stage = combine_fact_stages(stages);
    return verdict;
}

}  // namespace memfail::grade
