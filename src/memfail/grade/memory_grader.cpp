// SPDX-License-Identifier: MIT
// Deterministic storage, summary and retrieval checks.
#include <memfail/core/text.hpp>
#include <memfail/grade/memory_grader.hpp>

#include <algorithm>
#include <set>

namespace memfail::grade {

const char* match_name(Match match) { return match == Match::provenance ? "provenance" : "key_details"; }

MemorySnapshot::MemorySnapshot(std::vector<memory::Memory> memories, bool provenance)
    : m_memories(std::move(memories)), m_provenance(provenance) {
    m_normalized.reserve(m_memories.size());
    for (std::size_t i = 0; i < m_memories.size(); ++i) {
        m_normalized.push_back(text::normalize(m_memories[i].text));
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
    const std::vector<std::string>* sources;
};

bool cites_fact(const std::vector<std::string>& sources, const data::EvidenceFact& fact) {
    for (const auto& s : sources)
        if (std::find(fact.message_ids.begin(), fact.message_ids.end(), s) != fact.message_ids.end())
            return true;
    return false;
}

// A fact's key details with every variant normalised once, so matching against many memories
// never re-normalises the same phrase.
struct NormalizedDetails {
    std::vector<std::string> names;
    std::vector<std::vector<std::string>> variants;

    explicit NormalizedDetails(const data::EvidenceFact& fact) {
        for (const auto& d : fact.key_details) {
            names.push_back(d.name);
            std::vector<std::string> normalized;
            for (const auto& v : d.variants) normalized.push_back(text::normalize(v));
            variants.push_back(std::move(normalized));
        }
    }
    bool present(std::size_t detail, const std::string& normalized_text) const {
        for (const auto& v : variants[detail])
            if (text::normalized_contains(normalized_text, v)) return true;
        return false;
    }
    bool any_present(const std::string& normalized_text) const {
        for (std::size_t d = 0; d < variants.size(); ++d)
            if (present(d, normalized_text)) return true;
        return false;
    }
    // Names of the details that no memory among `views` contains.
    std::vector<std::string> missing_in(const std::vector<View>& views) const {
        std::vector<std::string> missing;
        for (std::size_t d = 0; d < variants.size(); ++d) {
            const bool found = std::any_of(views.begin(), views.end(),
                                           [&](const View& v) { return present(d, *v.normalized); });
            if (!found) missing.push_back(names[d]);
        }
        return missing;
    }
};

std::string quoted_list(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", '" : "'") + names[i] + "'";
    return out;
}

FactVerdict grade_fact(const data::EvidenceFact& fact, const MemorySnapshot& snapshot,
                       const std::vector<View>& retrieved_views) {
    FactVerdict v;
    v.fact_id = fact.id;
    const NormalizedDetails details(fact);
    v.method = snapshot.provenance() ? Match::provenance : Match::key_details;

    // Storage: the memories this fact went into.
    std::vector<View> stored;
    if (snapshot.provenance()) {
        std::set<std::size_t> indices;
        for (const auto& message_id : fact.message_ids)
            for (std::size_t i : snapshot.by_source(message_id)) indices.insert(i);
        for (std::size_t i : indices)
            stored.push_back({snapshot.memories()[i].id, &snapshot.normalized_text(i),
                              &snapshot.memories()[i].sources});
    } else {
        for (std::size_t i = 0; i < snapshot.memories().size(); ++i)
            if (details.any_present(snapshot.normalized_text(i)))
                stored.push_back({snapshot.memories()[i].id, &snapshot.normalized_text(i),
                                  &snapshot.memories()[i].sources});
    }
    for (const auto& s : stored) v.stored_ids.push_back(s.id);
    if (stored.empty()) {
        v.stage = Stage::not_stored;
        v.explanation = snapshot.provenance()
                            ? "no stored memory came from the fact's messages"
                            : "no stored memory contains any of the fact's key details";
        return v;
    }

    // Summary: together, the memories it went into keep every key detail.
    v.missing_details = details.missing_in(stored);
    if (!v.missing_details.empty()) {
        v.stage = Stage::summary_error;
        v.explanation = "stored without key detail " + quoted_list(v.missing_details);
        return v;
    }

    // Retrieval: the top k hold the fact's memories with every key detail.
    std::vector<View> hits;
    for (const auto& r : retrieved_views) {
        const bool belongs = snapshot.provenance() ? cites_fact(*r.sources, fact)
                                                   : details.any_present(*r.normalized);
        if (belongs) hits.push_back(r);
    }
    for (const auto& h : hits) v.retrieved_ids.push_back(h.id);
    if (hits.empty()) {
        v.stage = Stage::not_retrieved;
        v.explanation = "none of the fact's memories is in the top k";
        return v;
    }
    v.missing_details = details.missing_in(hits);
    if (!v.missing_details.empty()) {
        v.stage = Stage::not_retrieved;
        v.explanation = "the top k miss the part holding " + quoted_list(v.missing_details);
        return v;
    }
    v.stage = Stage::retrieved;
    v.explanation = "stored faithfully and retrieved";
    return v;
}

}  // namespace

ProbeVerdict grade_memory_side(const data::Probe& probe, const MemorySnapshot& snapshot,
                               const std::vector<memory::Hit>& retrieved) {
    ProbeVerdict verdict;
    if (probe.evidence.empty()) return verdict;

    // Retrieved memories the snapshot does not know (a system may render memories at query time)
    // are judged by their own text.
    std::vector<std::string> own_normalized(retrieved.size());
    std::vector<View> views;
    views.reserve(retrieved.size());
    for (std::size_t i = 0; i < retrieved.size(); ++i) {
        const auto& m = retrieved[i].memory;
        if (auto index = snapshot.index_of(m.id);
            index && snapshot.memories()[*index].text == m.text) {
            views.push_back({m.id, &snapshot.normalized_text(*index), &m.sources});
        } else {
            own_normalized[i] = text::normalize(m.text);
            views.push_back({m.id, &own_normalized[i], &m.sources});
        }
    }

    Stage worst = Stage::retrieved;
    for (const auto& fact : probe.evidence) {
        FactVerdict fv = grade_fact(fact, snapshot, views);
        if (static_cast<int>(fv.stage) < static_cast<int>(worst)) worst = fv.stage;
        verdict.facts.push_back(std::move(fv));
    }
    verdict.stage = worst;
    return verdict;
}

}  // namespace memfail::grade
