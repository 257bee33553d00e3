// SPDX-License-Identifier: MIT
// Deterministic storage, summary and retrieval checks, exact or unsure (docs/TAXONOMY.md, "The
// evidence contract"). Every decision reads text only, through the evidence matcher: provenance
// never enters a verdict, so a system gets the same decided verdicts with and without it.
//
// For one evidence fact, over the whole store:
//   held verbatim  ONE memory holds the fact's statements as whole units (sentences or lines, their
//                  labels taken off), each attached to the fact's entity: a statement that
//                  does not name it follows a unit naming it with no other entity named in between.
//   lost           ONE memory holds the statements, all verbatim but some whose only
//                  changes are recognised losses of a detail phrase: removed, negated, hedged,
//                  replaced by another entity, value or phrase of the same kind.
//   contradicting  a unit that is a near copy of a statement (most of its words in order) but not
//                  it, or a copy attached to another entity, that no message of the scenario
//                  explains (a faithful copy of another message is never one).
//   not stored     no memory holds any word stem of what the fact states.
// Verdict: held verbatim and nothing contradicting -> faithful, then retrieved when a memory that
// holds it verbatim (in the text served) is in the top k; held verbatim beside a contradicting copy
// -> unsure; lost (nothing verbatim) -> summary_error; otherwise unsure (the judge's).
#include <memfail/core/text.hpp>
#include <memfail/grade/memory_grader.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace memfail::grade {

namespace ev = evidence;

const char* match_name(Match match) { return match == Match::provenance ? "provenance" : "content"; }

const char* unsure_name(Unsure unsure) {
    switch (unsure) {
        case Unsure::none: return "none";
        case Unsure::storage: return "storage";
        case Unsure::summary: return "summary";
        case Unsure::retrieval: return "retrieval";
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

// ---- ScenarioEvidence ----------------------------------------------------------------------------

void ScenarioEvidence::add_probe(const data::Probe& probe) {
    for (const auto& fact : probe.evidence)
        for (const auto& d : fact.key_details) {
            for (const auto& v : d.variants) {
                const std::string c = ev::canonical(v);
                if (!c.empty()) m_detail_phrases[d.name].insert(c);
            }
            if (d.name != "entity" || d.variants.empty()) continue;
            const std::string key = ev::canonical(d.variants.front());
            if (key.empty()) continue;
            // Not a structured binding: clang 14 cannot capture one in the lambda below.
            const auto emplaced = m_entity_ids.try_emplace(key, static_cast<int>(m_entity_ids.size()));
            if (!emplaced.second) continue;
            const auto it = emplaced.first;
            for (const auto& v : d.variants) {
                ev::Tokens t = ev::tokens(v);
                if (t.empty()) continue;
                m_entity_canon.insert(ev::join(t));
                const auto same = [&](const auto& e) { return e.first == t && e.second == it->second; };
                auto& possessive = m_by_possessive[t.back() + "s"];
                if (std::none_of(possessive.begin(), possessive.end(), same)) possessive.emplace_back(t, it->second);
                auto& list = m_by_first_token[t.front()];
                if (std::none_of(list.begin(), list.end(), same)) list.emplace_back(std::move(t), it->second);
            }
        }
}

ScenarioEvidence::ScenarioEvidence(const std::vector<const data::Probe*>& probes) {
    for (const auto* p : probes) add_probe(*p);
}

ScenarioEvidence::ScenarioEvidence(const data::Scenario& scenario) {
    for (const auto& p : scenario.probes) add_probe(p);
    m_messages.emplace(scenario);
    for (const auto& session : scenario.sessions)
        for (const auto& message : session.messages) {
            const auto units = ev::units(message.content);
            std::vector<const ev::Tokens*> refs;
            for (const auto& u : units) refs.push_back(&u.tokens);
            const auto sc = scopes(refs);
            for (std::size_t i = 0; i < units.size(); ++i) {
                auto& known = m_message_units[units[i].canon];
                if (std::find(known.begin(), known.end(), sc[i]) == known.end()) known.push_back(sc[i]);
            }
        }
}

std::vector<int> ScenarioEvidence::named(const ev::Tokens& unit) const {
    std::vector<int> out;
    for (std::size_t k = 0; k < unit.size(); ++k) {
        auto it = m_by_first_token.find(unit[k]);
        if (it == m_by_first_token.end()) continue;
        for (const auto& [variant, id] : it->second) {
            if (k + variant.size() > unit.size()) continue;
            const auto at = unit.begin() + static_cast<std::ptrdiff_t>(k);
            if (std::equal(variant.begin(), variant.end(), at)) out.push_back(id);
        }
    }
    // A possessive names its person: the canonical form drops the apostrophe ("Alaric's" reads
    // "alarics"), so a name's last word with an "s" glued on counts too.
    for (std::size_t k = 0; k < unit.size(); ++k) {
        const std::string& w = unit[k];
        if (w.size() < 3 || w.back() != 's') continue;
        auto it = m_by_possessive.find(w);
        if (it == m_by_possessive.end()) continue;
        for (const auto& [variant, id] : it->second) {
            if (variant.size() > k + 1) continue;
            const auto from = unit.begin() + static_cast<std::ptrdiff_t>(k + 1 - variant.size());
            if (std::equal(variant.begin(), variant.end() - 1, from)) out.push_back(id);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

int ScenarioEvidence::entity_id(const data::KeyDetail& entity) const {
    if (entity.variants.empty()) return -1;
    auto it = m_entity_ids.find(ev::canonical(entity.variants.front()));
    return it == m_entity_ids.end() ? -1 : it->second;
}

std::vector<std::vector<int>> ScenarioEvidence::scopes(const std::vector<const ev::Tokens*>& units) const {
    std::vector<std::vector<int>> out(units.size());
    std::vector<int> current;
    for (std::size_t i = 0; i < units.size(); ++i) {
        auto n = named(*units[i]);
        if (!n.empty()) current = std::move(n);
        out[i] = current;
    }
    return out;
}

bool ScenarioEvidence::explained(const std::string& canon, const std::vector<int>& scope) const {
    if (scope.empty()) return m_message_units.count(canon) > 0;
    return stated_with_scope(canon, scope);
}

bool ScenarioEvidence::stated_with_scope(const std::string& canon, const std::vector<int>& scope) const {
    auto it = m_message_units.find(canon);
    return it != m_message_units.end() && std::find(it->second.begin(), it->second.end(), scope) != it->second.end();
}

bool ScenarioEvidence::is_detail_phrase(const std::string& name, const std::string& canon) const {
    auto it = m_detail_phrases.find(name);
    return it != m_detail_phrases.end() && it->second.count(canon) > 0;
}

// ---- MemorySnapshot ------------------------------------------------------------------------------

MemorySnapshot::MemorySnapshot(std::vector<memory::Memory> memories, bool provenance)
    : m_memories(std::move(memories)), m_provenance(provenance) {
    m_normalized.reserve(m_memories.size());
    for (std::size_t i = 0; i < m_memories.size(); ++i) {
        m_normalized.push_back(text::normalize(m_memories[i].text));
        for (const auto& source : m_memories[i].sources) m_by_source[source].push_back(i);
        m_by_id.emplace(m_memories[i].id, i);
    }
}

const MemorySnapshot::Analysis& MemorySnapshot::analysis() const {
    std::call_once(*m_analysed, [this] {
        auto a = std::make_unique<Analysis>();
        a->memory_units.resize(m_memories.size());
        for (std::size_t i = 0; i < m_memories.size(); ++i) {
            std::set<std::string> stems;
            auto units = ev::units(m_memories[i].text);
            for (std::size_t pos = 0; pos < units.size(); ++pos) {
                auto& u = units[pos];
                for (const auto& t : u.tokens) stems.insert(ev::stem(t));
                auto [it, inserted] = a->unit_ids.try_emplace(u.canon, static_cast<std::uint32_t>(a->units.size()));
                if (inserted) {
                    std::set<std::string> distinct(u.tokens.begin(), u.tokens.end());
                    for (const auto& t : distinct) a->token_units[t].push_back(it->second);
                    a->units.push_back(std::move(u));
                    a->occurrences.emplace_back();
                }
                a->memory_units[i].push_back(it->second);
                a->occurrences[it->second].emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(pos));
            }
            for (const auto& st : stems) a->stem_memories[st].push_back(static_cast<std::uint32_t>(i));
        }
        m_analysis = std::move(a);
    });
    return *m_analysis;
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

std::optional<std::uint32_t> MemorySnapshot::find_unit(const std::string& canon) const {
    const auto& ids = analysis().unit_ids;
    auto it = ids.find(canon);
    if (it == ids.end()) return std::nullopt;
    return it->second;
}

const std::vector<std::uint32_t>& MemorySnapshot::units_with(const std::string& token) const {
    static const std::vector<std::uint32_t> k_none;
    const auto& units = analysis().token_units;
    auto it = units.find(token);
    return it == units.end() ? k_none : it->second;
}

const std::vector<std::uint32_t>& MemorySnapshot::memories_with_stem(const std::string& stem) const {
    static const std::vector<std::uint32_t> k_none;
    const auto& memories = analysis().stem_memories;
    auto it = memories.find(stem);
    return it == memories.end() ? k_none : it->second;
}

bool cites_fact(const std::vector<std::string>& sources, const data::EvidenceFact& fact) {
    for (const auto& s : sources)
        if (std::find(fact.message_ids.begin(), fact.message_ids.end(), s) != fact.message_ids.end())
            return true;
    return false;
}

bool detail_present(const data::KeyDetail& detail, std::string_view text) {
    const ev::Tokens hay = ev::tokens(text);
    for (const auto& variant : detail.variants)
        if (ev::contains(hay, ev::tokens(variant))) return true;
    return false;
}

namespace {

// A fact prepared for matching: details and statements in canonical tokens once.
struct PreparedFact {
    struct Detail {
        std::string name;
        data::DetailRole role;
        std::vector<ev::Tokens> variants;
    };
    struct Span {
        std::size_t detail, begin, end;
    };
    struct Statement {
        ev::Tokens tokens;
        std::string canon;
        std::vector<Span> spans;  // where each detail's variant sits in it
        bool names_entity = false;
    };
    // A group of statements held together in one memory, in order: the fact's statements, or, for
    // a fact listing none, each cited message's sentences.
    std::vector<std::vector<Statement>> groups;
    std::vector<Detail> details;
    std::vector<std::size_t> content;  // identity details saying what is stated (not "entity")
    int entity = -1;                   // ScenarioEvidence id; -1: no entity to attach to
    std::vector<std::string> identity_stems;
    bool from_messages = false;
    bool complete = true;

    PreparedFact(const data::EvidenceFact& fact, const ScenarioEvidence& scenario) : complete(fact.details_complete) {
        for (const auto& d : fact.key_details) {
            Detail prepared{d.name, d.effective_role(), {}};
            for (const auto& v : d.variants)
                if (auto t = ev::tokens(v); !t.empty()) prepared.variants.push_back(std::move(t));
            if (d.name == "entity") entity = scenario.entity_id(d);
            details.push_back(std::move(prepared));
        }
        for (std::size_t i = 0; i < details.size(); ++i)
            if (details[i].role == data::DetailRole::identity && details[i].name != "entity") content.push_back(i);
        std::vector<std::string> raw;
        for (const auto& s : fact.statements)
            for (auto& u : ev::split_units(s)) raw.push_back(std::move(u));
        if (!raw.empty()) {
            groups.emplace_back();
            for (const auto& r : raw) add_statement(groups.back(), r);
        } else if (const auto* messages = scenario.messages()) {
            for (const auto& id : fact.message_ids)
                if (const auto* m = messages->message(id)) {
                    groups.emplace_back();
                    for (const auto& u : ev::split_units(m->content)) add_statement(groups.back(), u);
                    if (groups.back().empty()) groups.pop_back();
                }
            from_messages = !groups.empty();
        }
        std::set<std::string> stems;
        const auto add_stems = [&](const ev::Tokens& t) {
            for (const auto& w : t)
                if (!ev::is_function_word(w)) stems.insert(ev::stem(w));
        };
        for (std::size_t d : content)
            for (const auto& v : details[d].variants) add_stems(v);
        if (stems.empty())
            for (const auto& g : groups)
                for (const auto& st : g) add_stems(st.tokens);
        identity_stems.assign(stems.begin(), stems.end());
    }

    void add_statement(std::vector<Statement>& group, const std::string& raw) {
        Statement st;
        st.tokens = ev::tokens(raw);
        if (st.tokens.empty()) return;
        st.canon = ev::join(st.tokens);
        for (std::size_t d = 0; d < details.size(); ++d)
            for (const auto& v : details[d].variants)
                for (std::size_t at : ev::find_all(st.tokens, v)) {
                    st.spans.push_back({d, at, at + v.size()});
                    if (details[d].name == "entity") st.names_entity = true;
                }
        group.push_back(std::move(st));
    }

    bool present(std::size_t detail, const ev::Tokens& t) const {
        for (const auto& v : details[detail].variants)
            if (ev::contains(t, v)) return true;
        return false;
    }
};

// How a unit that is not a statement relates to it.
enum class CopyKind { none, lost, variant };
struct Copy {
    CopyKind kind = CopyKind::none;
    std::vector<std::string> lost_details;  // for `lost`: the details lost
};

// A unit `u` against statement `st`: a near copy (most of its words in order) is `lost` when every
// change is a recognised loss of a detail phrase, else a `variant` (the judge's); anything else none.
Copy classify(const PreparedFact& fact, const PreparedFact::Statement& st, const ev::Tokens& u,
              const ScenarioEvidence& scenario) {
    Copy out;
    const std::size_t n = st.tokens.size();
    if (n < 3) return out;
    const ev::Alignment al = ev::align(st.tokens, u);
    if (al.common < 3 || static_cast<double>(al.common) < 0.3 * static_cast<double>(n)) return out;
    const bool near = static_cast<double>(al.common) >= 0.6 * static_cast<double>(n);
    const ev::Lexicon& lex = ev::lexicon();

    // Which statement positions belong to a detail span (the first span covering each).
    std::vector<int> span_of(n, -1);
    for (std::size_t s = 0; s < st.spans.size(); ++s)
        for (std::size_t p = st.spans[s].begin; p < st.spans[s].end; ++p)
            if (span_of[p] < 0) span_of[p] = static_cast<int>(s);
    // Otherwise verbatim: every deleted token lies in a detail span, or is a function word in a run
    // of deleted tokens that reaches one ("when the" before a removed "kettle is boiling").
    std::set<std::size_t> touched;
    for (std::size_t p = 0; p < n; ++p)
        if (!al.kept[p] && span_of[p] >= 0) touched.insert(static_cast<std::size_t>(span_of[p]));
    for (std::size_t p = 0; p < n; ++p) {
        if (al.kept[p] || span_of[p] >= 0) continue;
        bool reaches = false;
        if (ev::is_function_word(st.tokens[p]))
            for (int dir : {-1, 1}) {
                for (auto q = static_cast<std::ptrdiff_t>(p) + dir; q >= 0 && q < static_cast<std::ptrdiff_t>(n); q += dir) {
                    const auto qq = static_cast<std::size_t>(q);
                    if (al.kept[qq]) break;
                    if (span_of[qq] >= 0) {
                        reaches = true;
                        break;
                    }
                    if (!ev::is_function_word(st.tokens[qq])) break;
                }
            }
        if (!reaches) {
            if (near) out.kind = CopyKind::variant;
            return out;
        }
    }
    out.kind = CopyKind::variant;
    // Insertions: next to a touched span they are its replacement; elsewhere only operator words.
    std::map<std::size_t, ev::Tokens> replacement;
    bool operator_loss = false;
    for (std::size_t p = 0; p <= n; ++p) {
        const auto& ins = al.inserted[p];
        if (ins.empty()) continue;
        std::optional<std::size_t> next_to;
        for (std::size_t s : touched)
            if (p >= st.spans[s].begin && p <= st.spans[s].end) next_to = s;
        if (next_to) {
            auto& r = replacement[*next_to];
            r.insert(r.end(), ins.begin(), ins.end());
            continue;
        }
        bool loss = false;
        for (const auto& w : ins) {
            if (lex.is_negator(w) || lex.is_hedge(w)) loss = true;
            else if (!lex.operator_glue.count(w)) return out;  // an addition the rules cannot read
        }
        if (!loss) return out;
        operator_loss = true;
    }
    if (touched.empty() && !operator_loss) return out;
    // Still this fact: what it states (its content details) is kept, and at most two details changed.
    if (touched.size() > 2) return out;
    for (std::size_t d : fact.content)
        if (!fact.present(d, u)) return out;
    std::vector<std::string> lost;
    for (std::size_t s : touched) {
        const auto& span = st.spans[s];
        const auto& detail = fact.details[span.detail];
        const ev::Tokens& r = replacement[s];
        bool loss = false;
        if (r.empty()) {
            // Removed: lost only when the detail is nowhere else in the unit (not moved).
            loss = !fact.present(span.detail, u);
        } else {
            const std::string rc = ev::join(r);
            const bool is_variant = std::any_of(detail.variants.begin(), detail.variants.end(),
                                                [&](const ev::Tokens& v) { return ev::join(v) == rc; });
            if (is_variant) return out;  // another accepted wording of the same detail
            bool operator_words = true, has_operator = false;
            for (const auto& w : r) {
                if (lex.is_negator(w) || lex.is_hedge(w)) has_operator = true;
                else if (!lex.operator_glue.count(w)) operator_words = false;
            }
            if (has_operator && (operator_words || fact.present(span.detail, r))) loss = true;  // negated or hedged
            else if (detail.name == "entity" && (scenario.is_entity_phrase(rc) || lex.indefinite_persons.count(rc)))
                loss = true;  // another person, or no one in particular
            else if (scenario.is_detail_phrase(detail.name, rc)) loss = true;  // another phrase of its kind
            else if (std::all_of(r.begin(), r.end(), [](const std::string& w) { return !w.empty() && std::isdigit(static_cast<unsigned char>(w[0])); }))
                loss = true;  // another value
        }
        if (!loss) return out;
        lost.push_back(detail.name);
    }
    out.kind = CopyKind::lost;
    if (lost.empty()) lost.push_back("the statement's meaning");
    out.lost_details = std::move(lost);
    return out;
}

// The analysis of one fact over a store: who holds it verbatim, who lost it, who contradicts it.
struct Analysis {
    std::vector<std::size_t> holders;         // memories holding every group verbatim and attached
    std::vector<std::size_t> lost;            // memories holding it with recognised losses only
    std::vector<std::string> lost_details;
    std::vector<std::size_t> contradicting;   // memories with an unexplained near or misfiled copy
    std::vector<std::size_t> content_holders; // memories holding every content detail
    bool any_identity = false;
    bool near_copy = false;
};

class Analyser {
public:
    Analyser(const PreparedFact& fact, const MemorySnapshot& snapshot, const ScenarioEvidence& scenario)
        : m_fact(fact), m_snapshot(snapshot), m_scenario(scenario) {}

    Analysis run() {
        Analysis a;
        const std::size_t count = m_snapshot.memories().size();
        // Nothing to look for proves nothing absent.
        a.any_identity = m_fact.identity_stems.empty();
        for (const auto& s : m_fact.identity_stems)
            if (!m_snapshot.memories_with_stem(s).empty()) a.any_identity = true;
        // Near copies and lost copies of each statement, by unit.
        std::set<std::size_t> lost_candidates;
        for (std::size_t g = 0; g < m_fact.groups.size(); ++g)
            for (std::size_t s = 0; s < m_fact.groups[g].size(); ++s) {
                const auto& st = m_fact.groups[g][s];
                for (std::uint32_t u : candidate_units(st)) {
                    const auto& unit = m_snapshot.unit(u);
                    if (unit.canon == st.canon) {
                        // A copy under a negating frame contradicts it.
                        for (const auto& occ : m_snapshot.occurrences(u))
                            if (negated_memory(occ.first)) {
                                a.near_copy = true;
                                add(a.contradicting, occ.first);
                            }
                        // An exact copy filed under someone else is a contradicting copy.
                        if (st.names_entity || m_fact.entity < 0) continue;
                        for (const auto& [m, pos] : m_snapshot.occurrences(u)) {
                            const auto& sc = scopes(m)[pos];
                            if (!sc.empty() && !in_scope(sc) && !m_scenario.explained(unit.canon, sc))
                                add(a.contradicting, m);
                        }
                        continue;
                    }
                    Copy c = classify(m_fact, st, unit.tokens, m_scenario);
                    if (c.kind == CopyKind::none) continue;
                    m_copies[{g, s}][u] = c;
                    for (const auto& [m, pos] : m_snapshot.occurrences(u)) {
                        if (m_scenario.explained(unit.canon, scopes(m)[pos])) continue;
                        a.near_copy = true;
                        add(a.contradicting, m);
                        if (c.kind == CopyKind::lost) lost_candidates.insert(m);
                    }
                }
            }
        // Verbatim holders: memories holding a group's first statement exactly.
        std::set<std::size_t> holder_candidates;
        if (!m_fact.groups.empty() && !m_fact.groups.front().empty())
            if (auto u = m_snapshot.find_unit(m_fact.groups.front().front().canon))
                for (const auto& occ : m_snapshot.occurrences(*u)) holder_candidates.insert(occ.first);
        for (std::size_t m : holder_candidates)
            if (!negated_memory(m) && holds_all(m, false)) a.holders.push_back(m);
        for (std::size_t m : lost_candidates) {
            std::vector<std::string> details;
            if (holds_all(m, true, &details)) {
                a.lost.push_back(m);
                for (auto& d : details)
                    if (std::find(a.lost_details.begin(), a.lost_details.end(), d) == a.lost_details.end())
                        a.lost_details.push_back(d);
            }
        }
        // Memories holding every content detail (the judge reads them).
        if (!m_fact.content.empty()) {
            const auto& first = m_fact.details[m_fact.content.front()];
            std::set<std::size_t> seen;
            for (const auto& v : first.variants) {
                if (v.empty()) continue;
                std::string rarest;
                std::size_t best = SIZE_MAX;
                for (const auto& w : v)
                    if (auto n = m_snapshot.memories_with_stem(ev::stem(w)).size(); n < best) {
                        best = n;
                        rarest = w;
                    }
                for (std::uint32_t m : m_snapshot.memories_with_stem(ev::stem(rarest))) {
                    if (m >= count || !seen.insert(m).second) continue;
                    if (holds_content(m)) a.content_holders.push_back(m);
                }
            }
        }
        return a;
    }

private:
    static void add(std::vector<std::size_t>& v, std::size_t m) {
        if (std::find(v.begin(), v.end(), m) == v.end()) v.push_back(m);
    }

    bool in_scope(const std::vector<int>& scope) const {
        return m_fact.entity >= 0 && std::find(scope.begin(), scope.end(), m_fact.entity) != scope.end();
    }

    // A memory opening with a negating frame over a message's text ("It is not true that <the
    // message>"): every unit of it stands under the frame, so none holds a statement verbatim. The
    // message itself may open with words the frame is made of ("As it happens, ...", "In the north,
    // ..."), so every point after the negator where the frame could end is tried.
    bool negated_memory(std::size_t m) {
        auto it = m_negated.find(m);
        if (it != m_negated.end()) return it->second;
        bool negated = false;
        const auto& ids = m_snapshot.units_of(m);
        if (!ids.empty()) {
            const ev::Tokens& t = m_snapshot.unit(ids.front()).tokens;
            const ev::Lexicon& lex = ev::lexicon();
            std::size_t first_negator = t.size();
            std::size_t k = 0;
            for (; k < t.size(); ++k) {
                if (lex.is_negator(t[k])) first_negator = std::min(first_negator, k);
                else if (!lex.operator_glue.count(t[k])) break;
            }
            for (std::size_t from = first_negator + 1; !negated && from <= k && k < t.size(); ++from) {
                const ev::Tokens tail(t.begin() + static_cast<std::ptrdiff_t>(from), t.end());
                negated = m_scenario.explained(ev::join(tail), {});
            }
        }
        return m_negated.emplace(m, negated).first->second;
    }

    // Attached as its own message has it: the message itself names someone else nearer (its text is
    // the ground truth, so a copy of it is faithful).
    // The unit sits with the attachment its own message gives it (attached to no one included: a
    // sentence its message states before naming anyone may open a memory).
    bool as_in_message(const std::string& canon, const std::vector<int>& scope) const {
        return m_scenario.stated_with_scope(canon, scope);
    }

    const std::vector<std::vector<int>>& scopes(std::size_t m) {
        auto it = m_scopes.find(m);
        if (it != m_scopes.end()) return it->second;
        std::vector<const ev::Tokens*> refs;
        for (std::uint32_t u : m_snapshot.units_of(m)) refs.push_back(&m_snapshot.unit(u).tokens);
        return m_scopes.emplace(m, m_scenario.scopes(refs)).first->second;
    }

    // Distinct units that may be near copies of a statement: those holding one of its rarest
    // tokens, enough of them that a unit sharing 60% of its tokens must hold one.
    std::vector<std::uint32_t> candidate_units(const PreparedFact::Statement& st) const {
        std::vector<std::pair<std::size_t, std::string>> by_rarity;
        std::set<std::string> distinct(st.tokens.begin(), st.tokens.end());
        for (const auto& t : distinct)
            if (auto n = m_snapshot.units_with(t).size(); n > 0) by_rarity.emplace_back(n, t);
        std::sort(by_rarity.begin(), by_rarity.end());
        const std::size_t r = std::min(by_rarity.size(), static_cast<std::size_t>(0.4 * static_cast<double>(st.tokens.size())) + 1);
        std::set<std::uint32_t> out;
        for (std::size_t k = 0; k < r; ++k)
            for (std::uint32_t u : m_snapshot.units_with(by_rarity[k].second)) out.insert(u);
        // An otherwise verbatim copy keeps every token outside the detail spans: the rarest two of
        // those find it whatever the details lost.
        std::vector<bool> in_span(st.tokens.size(), false);
        for (const auto& sp : st.spans)
            for (std::size_t p = sp.begin; p < sp.end; ++p) in_span[p] = true;
        std::vector<std::pair<std::size_t, std::string>> outside;
        for (std::size_t p = 0; p < st.tokens.size(); ++p)
            if (auto k = m_snapshot.units_with(st.tokens[p]).size(); !in_span[p] && k > 0) outside.emplace_back(k, st.tokens[p]);
        std::sort(outside.begin(), outside.end());
        for (std::size_t k = 0; k < std::min<std::size_t>(2, outside.size()); ++k)
            for (std::uint32_t u : m_snapshot.units_with(outside[k].second)) out.insert(u);
        return {out.begin(), out.end()};
    }

    // Every group in memory m, each statement attached to the entity (at any position: a fact's
    // statements are listed in the order that states it, which need not be its message's order);
    // with `allow_lost`, statements may be lost copies (at least one must be), their lost details
    // collected.
    bool holds_all(std::size_t m, bool allow_lost, std::vector<std::string>* lost_details = nullptr) {
        const auto& ids = m_snapshot.units_of(m);
        const auto& sc = scopes(m);
        bool any_lost = false;
        for (std::size_t g = 0; g < m_fact.groups.size(); ++g) {
            const auto& group = m_fact.groups[g];
            for (std::size_t s = 0; s < group.size(); ++s) {
                const auto& st = group[s];
                // About the entity: named in the statement, attached to it where it sits, or as its
                // own message has it. A fact from messages is held the same way: its message's
                // sentences re-ordered so that a pronoun sentence leaves its person (opens the memory,
                // or follows another person's name) are not that message held.
                const auto attached = [&](std::size_t p) {
                    return st.names_entity || m_fact.entity < 0 || in_scope(sc[p]) || as_in_message(st.canon, sc[p]);
                };
                const auto lost_copy = [&](std::size_t p) -> const Copy* {
                    if (!allow_lost) return nullptr;
                    auto gs = m_copies.find({g, s});
                    if (gs == m_copies.end()) return nullptr;
                    auto c = gs->second.find(ids[p]);
                    return c == gs->second.end() || c->second.kind != CopyKind::lost ? nullptr : &c->second;
                };
                bool found = false;
                for (std::size_t p = 0; p < ids.size() && !found; ++p) {
                    if (!attached(p)) continue;
                    if (m_snapshot.unit(ids[p]).canon == st.canon) {
                        found = true;
                    } else if (const Copy* c = lost_copy(p)) {
                        found = true;
                        any_lost = true;
                        if (lost_details)
                            for (const auto& d : c->lost_details) lost_details->push_back(d);
                    }
                }
                // A message's group held by another memory: this memory is not its holder.
                if (!found) return false;
            }
        }
        return !allow_lost || any_lost;
    }

    bool holds_content(std::size_t m) const {
        for (std::size_t d : m_fact.content) {
            bool found = false;
            for (std::uint32_t u : m_snapshot.units_of(m))
                if (m_fact.present(d, m_snapshot.unit(u).tokens)) {
                    found = true;
                    break;
                }
            if (!found) return false;
        }
        return true;
    }

    const PreparedFact& m_fact;
    const MemorySnapshot& m_snapshot;
    const ScenarioEvidence& m_scenario;
    std::map<std::size_t, std::vector<std::vector<int>>> m_scopes;
    std::map<std::size_t, bool> m_negated;
    std::map<std::pair<std::size_t, std::size_t>, std::map<std::uint32_t, Copy>> m_copies;
};

// A fact from messages (no statements listed) is held when every cited message is held verbatim by
// some memory; the analysis above checks one memory per call, so it is run per message group.
Analysis analyse(const PreparedFact& fact, const MemorySnapshot& snapshot, const ScenarioEvidence& scenario) {
    if (!fact.from_messages || fact.groups.size() <= 1) return Analyser(fact, snapshot, scenario).run();
    Analysis all;
    bool every_group_held = true;
    for (const auto& group : fact.groups) {
        PreparedFact one = fact;
        one.groups = {group};
        Analysis a = Analyser(one, snapshot, scenario).run();
        all.any_identity = all.any_identity || a.any_identity;
        all.near_copy = all.near_copy || a.near_copy;
        if (a.holders.empty()) every_group_held = false;
        using List = std::vector<std::size_t> Analysis::*;
        for (List v : {&Analysis::holders, &Analysis::lost, &Analysis::contradicting, &Analysis::content_holders})
            for (std::size_t m : a.*v)
                if (std::find((all.*v).begin(), (all.*v).end(), m) == (all.*v).end()) (all.*v).push_back(m);
        for (auto& d : a.lost_details) all.lost_details.push_back(d);
    }
    if (!every_group_held) all.holders.clear();
    return all;
}

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
    std::string out = "held otherwise verbatim, but key detail " + quoted_list(missing) + " is removed, negated or changed";
    if (entity) out += " (the fact is attached to someone else or no one)";
    else if (!identity) out += " (a qualifier of the fact is lost)";
    return out;
}

// Served texts that differ from the snapshot's copy (or are unknown to it), as their own store.
struct Served {
    std::vector<std::size_t> snapshot_indices;  // served memories the snapshot holds as served
    std::optional<MemorySnapshot> own;           // the others, by their served text
};

Served read_served(const MemorySnapshot& snapshot, const std::vector<memory::Hit>& retrieved) {
    Served s;
    std::vector<memory::Memory> own;
    for (const auto& hit : retrieved) {
        const auto& m = hit.memory;
        if (auto index = snapshot.index_of(m.id); index && snapshot.memories()[*index].text == m.text)
            s.snapshot_indices.push_back(*index);
        else
            own.push_back(m);
    }
    if (!own.empty()) s.own.emplace(std::move(own), snapshot.provenance());
    return s;
}

FactVerdict grade_fact(const data::EvidenceFact& fact, const PreparedFact& prepared, const MemorySnapshot& snapshot,
                       const Served& served, const ScenarioEvidence& scenario) {
    FactVerdict v;
    v.fact_id = fact.id;
    v.method = snapshot.provenance() ? Match::provenance : Match::content;
    const Analysis a = analyse(prepared, snapshot, scenario);
    const auto id_of = [&](std::size_t m) { return snapshot.memories()[m].id; };
    {
        std::vector<std::size_t> shown;
        for (const auto* list : {&a.holders, &a.lost, &a.contradicting, &a.content_holders})
            for (std::size_t m : *list)
                if (std::find(shown.begin(), shown.end(), m) == shown.end()) shown.push_back(m);
        constexpr std::size_t k_max_shown = 64;
        if (shown.size() > k_max_shown) shown.resize(k_max_shown);
        for (std::size_t m : shown) v.stored_ids.push_back(id_of(m));
    }

    if (snapshot.memories().empty() || (!a.any_identity && a.holders.empty() && a.lost.empty())) {
        v.stage = Stage::not_stored;
        v.explanation = snapshot.memories().empty() ? "the store is empty"
                                                    : "no memory holds any word of what the fact states";
        return v;
    }

    // A fact placed only among several messages (no statements, its details incomplete: a source
    // that cites the fact by its text and its session, not its message) says where it may have been
    // said, not what says it: a memory holding or serving one of those messages proves nothing of it.
    // Only a store holding none of their words decides (not stored, above); the rest is the judge's.
    if (prepared.from_messages && prepared.groups.size() > 1 && !prepared.complete) {
        v.stage = Stage::unverified;
        v.unsure = Unsure::storage;
        v.placed_only = true;
        v.explanation = "the fact is placed only among " + std::to_string(prepared.groups.size()) +
                        " messages, not in one; only a judge can tell whether a memory holds it and whether the top k "
                        "brings it back";
        return v;
    }

    // Retrieval, judged on what was served: a memory holding the fact verbatim (as served) in the top k.
    std::optional<Analysis> own;
    if (served.own) own = analyse(prepared, *served.own, scenario);
    bool verbatim_served = std::any_of(served.snapshot_indices.begin(), served.snapshot_indices.end(), [&](std::size_t i) {
        return std::find(a.holders.begin(), a.holders.end(), i) != a.holders.end();
    });
    if (own && !own->holders.empty()) verbatim_served = true;
    const bool served_differs = own && (!own->contradicting.empty() || !own->lost.empty());
    for (std::size_t i : served.snapshot_indices)
        if (std::find(v.stored_ids.begin(), v.stored_ids.end(), id_of(i)) != v.stored_ids.end())
            v.retrieved_ids.push_back(id_of(i));
    if (own)
        for (std::size_t i : own->holders) v.retrieved_ids.push_back(served.own->memories()[i].id);
    v.retrieval_checked = !served_differs;
    v.retrieved = verbatim_served && !served_differs;
    if (!v.retrieved && !served_differs) {
        // For a fact the judge may call faithful: its memories among the top k holding every key detail.
        std::vector<const ev::Tokens*> top;
        for (std::size_t i : served.snapshot_indices)
            if (std::find(v.stored_ids.begin(), v.stored_ids.end(), id_of(i)) != v.stored_ids.end())
                for (std::uint32_t u : snapshot.units_of(i)) top.push_back(&snapshot.unit(u).tokens);
        bool all = !top.empty() && !prepared.details.empty();
        for (std::size_t d = 0; d < prepared.details.size() && all; ++d)
            all = std::any_of(top.begin(), top.end(), [&](const ev::Tokens* t) { return prepared.present(d, *t); });
        if (all && a.holders.empty()) v.retrieved = true;
    }
    v.retrieval_explanation = v.retrieved ? "stored faithfully and retrieved"
                              : served_differs
                                  ? "a text served in the top k differs from the stored copy and is a changed copy of the fact"
                                  : "no memory holding the fact verbatim is in the top k";

    if (!a.holders.empty() && a.contradicting.empty()) {
        v.verbatim_copy = true;
        if (served_differs) {
            v.stage = Stage::unverified;
            v.unsure = Unsure::retrieval;
            v.explanation = "held verbatim, but " + v.retrieval_explanation + "; only a judge can tell what the reader saw";
            return v;
        }
        v.stage = v.retrieved ? Stage::retrieved : Stage::not_retrieved;
        v.explanation = v.retrieval_explanation;
        return v;
    }
    if (!a.holders.empty()) {
        v.stage = Stage::unverified;
        v.unsure = Unsure::summary;
        v.explanation = "held verbatim, but the store also holds a changed copy of it (negated, hedged, reworded or filed "
                        "under someone else); only a judge can tell which the system will use";
        return v;
    }
    if (!a.lost.empty()) {
        v.stage = Stage::summary_error;
        v.missing_details = a.lost_details;
        v.explanation = summary_error_reason(prepared, a.lost_details);
        return v;
    }
    v.stage = Stage::unverified;
    if (a.content_holders.empty() && !a.near_copy) {
        v.unsure = Unsure::storage;
        v.explanation = "no memory holds the fact's statements or all its content words; only a judge can tell whether "
                        "one holds it in other words";
    } else {
        v.unsure = Unsure::summary;
        v.explanation = prepared.complete
                            ? "the fact is held in other words or split across memories; only a judge can tell whether "
                              "its meaning is kept (negated, hedged, merged, attached to someone else)"
                            : "the listed key details are kept, but the fact's details are incomplete; only a judge can "
                              "tell whether it is kept";
    }
    if (!v.retrieved) v.explanation += "; also, " + v.retrieval_explanation;
    return v;
}

}  // namespace

ProbeVerdict grade_memory_side(const data::Probe& probe, const MemorySnapshot& snapshot,
                               const std::vector<memory::Hit>& retrieved, const ScenarioEvidence* scenario) {
    ProbeVerdict verdict;
    if (probe.evidence.empty()) return verdict;
    std::optional<ScenarioEvidence> own_scenario;
    if (!scenario) scenario = &own_scenario.emplace(std::vector<const data::Probe*>{&probe});
    const Served served = read_served(snapshot, retrieved);
    std::vector<Stage> stages;
    for (const auto& fact : probe.evidence) {
        const PreparedFact prepared(fact, *scenario);
        FactVerdict fv = grade_fact(fact, prepared, snapshot, served, *scenario);
        stages.push_back(fv.stage);
        verdict.facts.push_back(std::move(fv));
    }
    verdict.stage = combine_fact_stages(stages);
    return verdict;
}

}  // namespace memfail::grade
