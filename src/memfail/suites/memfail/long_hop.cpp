// SPDX-License-Identifier: MIT
// Long-Hop generator: 92 transitive chains of personal facts (K = 1/2/3 hops as 31/32/29), each
// fact its own message, no two facts of one chain in the same session, each chain probed from its
// head with a 5-way multiple-choice question about its terminal anchor. Anchors, people,
// distractors and every template come from lexicon/long_hop.json (long_hop_lexicon.hpp); a share of
// the chains (LongHopSettings::named_share, release 40%) is about a named person named in every fact.
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/common.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/long_hop_lexicon.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace memfail::suites::memfail_suite {

namespace {

constexpr const char* k_dataset = "long_hop";
constexpr const char* k_prefix = "lhp";
constexpr double k_dedup_threshold = 0.7;
constexpr std::array<std::size_t, 3> k_chains_per_hops = {31, 32, 29}; // K = 1, 2, 3
constexpr std::size_t k_choices = 5;

using long_hop::Kind;
using long_hop::k_kind_count;
using long_hop::FactTemplate;
using long_hop::QuestionTemplate;

std::size_t kind_index(Kind k) { return static_cast<std::size_t>(k); }

struct Voice {
    bool named = false;
    std::string name;
    bool female = false;

    std::string possessive() const { return !named ? "my" : female ? "her" : "his"; }
    std::string reflexive() const { return !named ? "myself" : female ? "herself" : "himself"; }
    std::string subject() const { return female ? "she" : "he"; }
    std::string object() const { return female ? "her" : "him"; }
};

std::string in_voice(std::string_view lexicon_text, const Voice& voice) {
    std::string out = text::replace_all(std::string(lexicon_text), "{pos}", voice.possessive());
    return text::replace_all(std::move(out), "{self}", voice.reflexive());
}

// "snack on" -> "snacks on": only the first word agrees with a third-person subject.
std::string third_person(std::string_view verb) {
    const std::size_t space = verb.find(' ');
    const std::string head(verb.substr(0, space));
    const std::string rest = space == std::string_view::npos ? "" : std::string(verb.substr(space));
    auto vowel = [](char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; };
    std::string conj;
    if (head == "have")
        conj = "has";
    else if (head == "do" || head == "go")
        conj = head + "es";
    else if (text::ends_with(head, "s") || text::ends_with(head, "sh") ||
             text::ends_with(head, "ch") || text::ends_with(head, "x") ||
             text::ends_with(head, "z"))
        conj = head + "es";
    else if (head.size() > 1 && head.back() == 'y' && !vowel(head[head.size() - 2]))
        conj = head.substr(0, head.size() - 1) + "ies";
    else
        conj = head + "s";
    return conj + rest;
}

std::string plural_noun(std::string_view noun) {
    const std::string n(noun);
    auto vowel = [](char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; };
    if (text::ends_with(n, "s") || text::ends_with(n, "sh") || text::ends_with(n, "ch") ||
        text::ends_with(n, "x"))
        return n + "es";
    if (n.size() > 1 && n.back() == 'y' && !vowel(n[n.size() - 2]))
        return n.substr(0, n.size() - 1) + "ies";
    return n + "s";
}

struct Anchor {
    Kind kind = Kind::act;
    std::size_t entry = 0; // index into the lexicon list of its kind
    std::string text;
    std::string lead;     // moment: "on rainy afternoons"
    std::string verb;     // thing: "snack on"
    std::string category; // thing: "snack"
    bool plural = false;
    std::string topic;
};

using Vars = std::map<std::string, std::string, std::less<>>;

std::string fill(std::string_view tmpl, const Vars& vars, bool from_plural,
                 bool to_plural = false) {
    std::string out;
    for (std::size_t i = 0; i < tmpl.size(); ++i) {
        const char c = tmpl[i];
        if (c == '{') {
            const std::size_t end = tmpl.find('}', i);
            MF_ASSERT(end != std::string_view::npos, "unclosed placeholder in a Long-Hop template");
            const auto it = vars.find(tmpl.substr(i + 1, end - i - 1));
            MF_ASSERT(it != vars.end(), "Long-Hop template placeholder without a value");
            out += it->second;
            i = end;
        } else if (c == '[' || c == '<') {
            const std::size_t bar = tmpl.find('|', i);
            const std::size_t end = tmpl.find(c == '[' ? ']' : '>', bar);
            MF_ASSERT(bar != std::string_view::npos && end != std::string_view::npos,
                      "malformed agreement choice in a Long-Hop template");
            const bool plural = c == '[' ? from_plural : to_plural;
            out += plural ? tmpl.substr(i + 1, bar - i - 1) : tmpl.substr(bar + 1, end - bar - 1);
            i = end;
        } else {
            out += c;
        }
    }
    return text::capitalize(out);
}

void add_voice_vars(Vars& vars, const Voice& voice) {
    if (!voice.named)
        return;
    vars["N"] = voice.name;
    vars["he"] = voice.subject();
    vars["He"] = text::capitalize(voice.subject());
    vars["his"] = voice.possessive();
    vars["him"] = voice.object();
}

void add_from_vars(Vars& vars, const Anchor& a) {
    vars["a"] = a.text;
    vars["A"] = text::capitalize(a.text);
    if (!a.lead.empty()) {
        vars["lead"] = a.lead;
        vars["Lead"] = text::capitalize(a.lead);
    }
    if (!a.verb.empty()) {
        vars["av"] = a.verb;
        vars["av3"] = third_person(a.verb);
    }
}

struct Chain {
    std::size_t hops = 0;
    Voice voice;
    std::vector<Anchor> anchors;
    std::vector<std::string> facts;
    std::string question;
    std::vector<std::string> distractors;
};

// Content words of a text: what a distractor must not share with the facts of its chain.
std::set<std::string> content_words(std::string_view s) {
    std::set<std::string> out;
    for (auto& w : text::words(s))
        if (w.size() >= 3 && !text::is_stopword(w))
            out.insert(w);
    return out;
}

bool shares_word(const std::set<std::string>& a, const std::set<std::string>& b) {
    for (const auto& w : a)
        if (b.count(w))
            return true;
    return false;
}

// Why a finished chain breaks a Long-Hop construction rule, or empty when it is sound.
std::string chain_problem(const Chain& c, const MinHashDeduper& similarity) {
    const std::size_t n = c.anchors.size();
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            if (i != j && text::contains_phrase(c.anchors[i].text, c.anchors[j].text))
                return "anchor '" + c.anchors[j].text + "' overlaps '" + c.anchors[i].text + "'";
    for (std::size_t f = 0; f < c.facts.size(); ++f) {
        for (std::size_t j = 0; j < n; ++j) {
            const bool borders = j == f || j == f + 1;
            const bool present = text::contains_phrase(c.facts[f], c.anchors[j].text);
            if (borders && !present)
                return "fact " + std::to_string(f + 1) + " lacks its anchor";
            // The head of a named chain is the person, who recurs in every fact as background.
            if (!borders && present && !(j == 0 && c.voice.named))
                return "anchor '" + c.anchors[j].text + "' leaks into fact " +
                       std::to_string(f + 1);
        }
        for (std::size_t g = f + 1; g < c.facts.size(); ++g)
            if (similarity.similarity(c.facts[f], c.facts[g]) >= k_dedup_threshold)
                return "two facts of the chain are near duplicates";
    }
    if (!text::contains_phrase(c.question, c.anchors.front().text))
        return "question lacks the head";
    for (std::size_t j = 1; j < n; ++j)
        if (text::contains_phrase(c.question, c.anchors[j].text))
            return "question names a later anchor";
    return {};
}

class ChainBuilder {
  public:
    explicit ChainBuilder(Rng rng) : m_rng(rng) {
        m_free[kind_index(Kind::person)] = all_indices(long_hop::people().size());
        m_free[kind_index(Kind::moment)] = all_indices(long_hop::moment_anchors().size());
        m_free[kind_index(Kind::act)] = all_indices(long_hop::act_anchors().size());
        m_free[kind_index(Kind::feel)] = all_indices(long_hop::feel_anchors().size());
        m_free[kind_index(Kind::thing)] = all_indices(long_hop::thing_anchors().size());
    }

    // A chain of `hops` hops satisfying every construction rule; its anchors leave the pools.
    Chain build(std::size_t hops, bool named, const MinHashDeduper& similarity) {
        for (int attempt = 0; attempt < 200; ++attempt) {
            Chain c = draft(hops, named);
            if (chain_problem(c, similarity).empty() && apart_from_kept(c))
                return c;
            release(c);
        }
        MF_ASSERT(false, "could not build a sound Long-Hop chain: the lexicon is too small");
        return {};
    }

    // Records a chain that made it into the dataset.
    void commit(const Chain& c) {
        for (const auto& f : c.facts)
            m_kept_facts.push_back(text::normalize(f));
        for (const auto& a : c.anchors)
            m_kept_anchors.push_back(text::normalize(a.text));
    }

  private:
    static std::vector<std::size_t> all_indices(std::size_t n) {
        std::vector<std::size_t> v(n);
        for (std::size_t i = 0; i < n; ++i)
            v[i] = i;
        return v;
    }

    static bool named_thing(std::size_t entry) {
        const auto& t = long_hop::thing_anchors()[entry];
        return !t.category.empty() && t.text.find("{pos}") == std::string::npos;
    }

    std::size_t free_count(Kind k, bool named) const {
        const auto& pool = m_free[kind_index(k)];
        if (k != Kind::thing || !named)
            return pool.size();
        return static_cast<std::size_t>(std::count_if(pool.begin(), pool.end(), named_thing));
    }

    // Picks among `kinds` with weight (free entries x preference), so no pool runs dry early.
    Kind pick_kind(const std::vector<std::pair<Kind, double>>& kinds, bool named) {
        double total = 0;
        for (const auto& [k, w] : kinds)
            total += w * static_cast<double>(free_count(k, named));
        MF_ASSERT(total > 0, "every Long-Hop anchor pool is exhausted");
        double r = m_rng.unit() * total;
        for (const auto& [k, w] : kinds) {
            r -= w * static_cast<double>(free_count(k, named));
            if (r < 0)
                return k;
        }
        for (const auto& [k, w] : kinds)
            if (w > 0 && free_count(k, named) > 0)
                return k;
        return kinds.back().first;
    }

    std::vector<Kind> kinds_for(std::size_t hops, bool named) {
        std::vector<Kind> kinds;
        if (named) {
            kinds = {Kind::person, Kind::thing};
        } else {
            kinds.push_back(pick_kind(
                {{Kind::moment, 3.0}, {Kind::thing, 1.0}, {Kind::act, 0.6}, {Kind::feel, 0.6}},
                false));
        }
        while (kinds.size() < hops + 2) {
            std::vector<std::pair<Kind, double>> next;
            switch (kinds.back()) {
            case Kind::person:
                next = {{Kind::thing, 1.0}};
                break;
            case Kind::moment:
            case Kind::act:
                next = {{Kind::act, 1.0}, {Kind::feel, 1.0}, {Kind::thing, 0.8}};
                break;
            case Kind::feel:
                next = {{Kind::act, 1.0}, {Kind::thing, 0.8}};
                break;
            case Kind::thing:
                next = {{Kind::act, 1.0}, {Kind::feel, 1.0}};
                break;
            }
            // Chains end on something one does or feels; named chains hold one thing, right after
            // the person, since their questions describe it as the person's favorite.
            const bool terminal = kinds.size() == hops + 1;
            if (terminal || named)
                std::erase_if(next, [](const auto& option) { return option.first == Kind::thing; });
            kinds.push_back(pick_kind(next, named));
        }
        return kinds;
    }

    Anchor take(Kind kind, const Voice& voice) {
        auto& pool = m_free[kind_index(kind)];
        std::vector<std::size_t> eligible;
        for (std::size_t i = 0; i < pool.size(); ++i)
            if (kind != Kind::thing || !voice.named || named_thing(pool[i]))
                eligible.push_back(i);
        MF_ASSERT(!eligible.empty(), "a Long-Hop anchor pool is exhausted");
        const std::size_t at = eligible[m_rng.below(eligible.size())];
        Anchor a;
        a.kind = kind;
        a.entry = pool[at];
        pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(at));
        switch (kind) {
        case Kind::person:
            a.text = long_hop::people()[a.entry].name;
            a.topic = "person";
            break;
        case Kind::moment: {
            const auto& m = long_hop::moment_anchors()[a.entry];
            a.text = in_voice(m.text, voice);
            a.lead = std::string(m.prep) + " " + a.text;
            a.plural = m.plural;
            a.topic = m.topic;
            break;
        }
        case Kind::act:
            a.text = in_voice(long_hop::act_anchors()[a.entry].text, voice);
            a.topic = long_hop::act_anchors()[a.entry].topic;
            break;
        case Kind::feel:
            a.text = in_voice(long_hop::feel_anchors()[a.entry].text, voice);
            a.topic = long_hop::feel_anchors()[a.entry].topic;
            break;
        case Kind::thing: {
            const auto& t = long_hop::thing_anchors()[a.entry];
            a.text = in_voice(t.text, voice);
            a.verb = t.verb;
            a.category = t.category;
            a.plural = t.plural;
            a.topic = t.topic;
            break;
        }
        }
        return a;
    }

    // No anchor of a chain may show up in another chain's facts ("blue" in "my blue teapot"), so a
    // question's anchor words lead to one chain only.
    bool apart_from_kept(const Chain& c) const {
        for (const auto& a : c.anchors) {
            const std::string norm = text::normalize(a.text);
            for (const auto& f : m_kept_facts)
                if (text::normalized_contains(f, norm))
                    return false;
        }
        for (const auto& f : c.facts) {
            const std::string norm = text::normalize(f);
            for (const auto& a : m_kept_anchors)
                if (text::normalized_contains(norm, a))
                    return false;
        }
        return true;
    }

    void release(const Chain& c) {
        for (const auto& a : c.anchors)
            m_free[kind_index(a.kind)].push_back(a.entry);
    }

    Chain draft(std::size_t hops, bool named) {
        Chain c;
        c.hops = hops;
        c.voice.named = named && free_count(Kind::person, true) > 0 && free_count(Kind::thing, true) > 0;
        const std::vector<Kind> kinds = kinds_for(hops, c.voice.named);
        if (c.voice.named) {
            c.anchors.push_back(take(Kind::person, c.voice));
            const auto& person = long_hop::people()[c.anchors.back().entry];
            c.voice.name = person.name;
            c.voice.female = person.female;
        }
        for (std::size_t i = c.anchors.size(); i < kinds.size(); ++i)
            c.anchors.push_back(take(kinds[i], c.voice));

        Vars voice_vars;
        add_voice_vars(voice_vars, c.voice);
        // No template twice in one chain and, where the link allows, no relation family twice in a
        // row ("Whenever I ..." then "Whenever I ..."), so the links read differently.
        std::set<const FactTemplate*> used;
        std::string last_family;
        for (std::size_t i = 0; i + 1 < c.anchors.size(); ++i) {
            const Anchor& from = c.anchors[i];
            const Anchor& to = c.anchors[i + 1];
            std::vector<const FactTemplate*> options, fresh_family;
            for (const auto& t : long_hop::lexicon().facts)
                if (t.from == from.kind && t.to == to.kind && t.named == c.voice.named && !used.count(&t))
                    options.push_back(&t);
            MF_ASSERT(!options.empty(), "no Long-Hop template links these anchor kinds");
            // Families first, then a template of the family, so a family with many templates is not
            // favoured over one with few.
            std::vector<std::string> families;
            for (const FactTemplate* t : options)
                if (t->family != last_family &&
                    std::find(families.begin(), families.end(), t->family) == families.end())
                    families.push_back(t->family);
            const std::string family = families.empty() ? last_family : m_rng.pick(families);
            for (const FactTemplate* t : options)
                if (t->family == family)
                    fresh_family.push_back(t);
            const FactTemplate* t = m_rng.pick(fresh_family);
            used.insert(t);
            last_family = t->family;
            Vars vars = voice_vars;
            add_from_vars(vars, from);
            vars["b"] = to.text;
            if (!to.verb.empty())
                vars["bv"] = to.verb;
            if (!to.category.empty()) {
                vars["cat"] = to.category;
                vars["cats"] = plural_noun(to.category);
            }
            c.facts.push_back(fill(t->text, vars, from.plural, to.plural));
        }

        std::vector<const QuestionTemplate*> questions;
        for (const auto& t : long_hop::lexicon().questions)
            if (t.head == kinds.front() && t.terminal == kinds.back() && t.named == c.voice.named)
                questions.push_back(&t);
        MF_ASSERT(!questions.empty(), "no Long-Hop question template for this chain shape");
        Vars vars = voice_vars;
        add_from_vars(vars, c.anchors.front());
        if (c.voice.named)
            vars["cat"] = c.anchors[1].category;
        c.question = fill(m_rng.pick(questions)->text, vars, c.anchors.front().plural);
        c.distractors = pick_distractors(c);
        return c;
    }

    // Four wrong options shaped like the answer (same kind, similar length) and orthogonal to the
    // chain: no shared content word with any fact and no topic the chain touches or implies.
    std::vector<std::string> pick_distractors(const Chain& c) {
        const Anchor& answer = c.anchors.back();
        std::set<std::string> blocked;
        for (const auto& a : c.anchors) {
            blocked.insert(a.topic);
            for (const std::string& r : long_hop::related_topics(a.topic))
                blocked.insert(r);
        }
        std::set<std::string> chain_words = content_words(c.question);
        for (const auto& f : c.facts)
            for (auto& w : content_words(f))
                chain_words.insert(w);
        const std::size_t answer_len = text::words(answer.text).size();

        struct Option {
            std::string text;
            std::string topic;
        };
        std::vector<Option> pool;
        // The same pool the answers come from: every anchor of the answer's kind (other chains'
        // anchors among them), so no option is wrong by where it comes from.
        if (answer.kind == Kind::act)
            for (const auto& d : long_hop::act_anchors())
                pool.push_back({in_voice(d.text, c.voice), d.topic});
        else
            for (const auto& d : long_hop::feel_anchors())
                pool.push_back({in_voice(d.text, c.voice), d.topic});

        // Strict first; widen the length band, then drop the topic filter, only if too few remain.
        for (int relax = 0; relax < 4; ++relax) {
            const std::size_t band = relax == 0 ? 1 : relax == 1 ? 2 : 3;
            std::vector<std::size_t> fit;
            for (std::size_t i = 0; i < pool.size(); ++i) {
                const std::size_t len = text::words(pool[i].text).size();
                const std::size_t diff = len > answer_len ? len - answer_len : answer_len - len;
                if (diff > band)
                    continue;
                if (relax < 3 && blocked.count(pool[i].topic))
                    continue;
                if (shares_word(content_words(pool[i].text), chain_words))
                    continue;
                fit.push_back(i);
            }
            // Distractors also differ from each other in topic and wording, so no two of them are
            // variations of one idea ("calm" and "calm and collected").
            std::vector<std::size_t> order = m_rng.sample_indices(fit.size(), fit.size());
            std::vector<std::string> out;
            std::set<std::string> topics, words;
            for (int pass = 0; pass < 2 && out.size() < k_choices - 1; ++pass)
                for (std::size_t k : order) {
                    const Option& o = pool[fit[k]];
                    const auto w = content_words(o.text);
                    if (out.size() == k_choices - 1 || shares_word(w, words) ||
                        std::find(out.begin(), out.end(), o.text) != out.end())
                        continue;
                    if (pass == 0 && topics.count(o.topic))
                        continue;
                    out.push_back(o.text);
                    topics.insert(o.topic);
                    words.insert(w.begin(), w.end());
                }
            if (out.size() == k_choices - 1)
                return out;
        }
        MF_ASSERT(false, "too few Long-Hop distractors fit a chain");
        return {};
    }

    Rng m_rng;
    std::array<std::vector<std::size_t>, k_kind_count> m_free;
    std::vector<std::string> m_kept_facts;   // normalised, of committed chains
    std::vector<std::string> m_kept_anchors; // normalised, of committed chains
};

} // namespace

data::Scenario generate_long_hop(const GenerateOptions& options) {
    const Rng root(options.seed);
    Rng order_rng = root.fork("long_hop/order");
    Rng choice_rng = root.fork("long_hop/choices");
    ChainBuilder builder(root.fork("long_hop/chains"));
    MinHashDeduper deduper(k_dedup_threshold);

    // The plan: every chain's hop count and voice. Named chains are an exact share of each hop
    // count, so the named share holds for every K and every seed.
    const LongHopSettings& settings = options.long_hop;
    struct Planned {
        std::size_t hops = 0;
        bool named = false;
    };
    std::vector<Planned> hop_plan;
    for (std::size_t k = 0; k < k_chains_per_hops.size(); ++k) {
        const auto named = static_cast<std::size_t>(
            std::lround(settings.named_share * static_cast<double>(k_chains_per_hops[k])));
        for (std::size_t i = 0; i < k_chains_per_hops[k]; ++i)
            hop_plan.push_back({k + 1, i < named});
    }
    order_rng.shuffle(hop_plan);

    // Fact-level dedup: a chain with any fact close to an already kept fact is dropped wholesale
    // and replaced by a fresh chain of the same length, so the hop counts stay exact.
    std::vector<Chain> chains;
    std::size_t candidates = 0, drafted = 0;
    for (const auto& [hops, named] : hop_plan) {
        for (;;) {
            Chain c = builder.build(hops, named, deduper);
            ++drafted;
            std::size_t clash = c.facts.size();
            for (std::size_t f = 0; f < c.facts.size() && clash == c.facts.size(); ++f)
                if (!deduper.collides(c.facts[f]).empty())
                    clash = f;
            if (clash < c.facts.size()) {
                ++candidates;
                deduper.offer("draft-" + std::to_string(drafted) + "-f" + std::to_string(clash + 1),
                              c.facts[clash]);
                continue;
            }
            const std::string pid = probe_id(k_prefix, chains.size() + 1);
            for (std::size_t f = 0; f < c.facts.size(); ++f)
                deduper.keep(pid + "-f" + std::to_string(f + 1), c.facts[f]);
            candidates += c.facts.size();
            builder.commit(c);
            chains.push_back(std::move(c));
            break;
        }
    }

    data::Scenario s = make_scenario(k_dataset, options.seed);
    // The settings are part of what the file is, so they travel with it.
    s.meta["settings"] = {{"long_hop.named_share", settings.named_share}};
    std::vector<std::vector<std::string>> chain_facts;
    for (const auto& c : chains) chain_facts.push_back(c.facts);
    const auto fact_messages = store_chain_facts(s, chain_facts, root.fork("long_hop/sessions"));

    // Correct letters cycle through A-E in a shuffled order, so every letter is right equally
    // often.
    std::vector<std::size_t> correct_at(chains.size());
    for (std::size_t i = 0; i < correct_at.size(); ++i)
        correct_at[i] = i % k_choices;
    choice_rng.shuffle(correct_at);

    for (std::size_t c = 0; c < chains.size(); ++c) {
        const Chain& chain = chains[c];
        data::Probe p;
        p.id = probe_id(k_prefix, c + 1);
        p.question = chain.question;
        p.kind = data::ProbeKind::mcq;
        p.answer = chain.anchors.back().text;
        std::vector<std::string> wrong = chain.distractors;
        choice_rng.shuffle(wrong);
        for (std::size_t k = 0, w = 0; k < k_choices; ++k)
            p.choices.push_back(k == correct_at[c] ? p.answer : wrong[w++]);
        p.correct_choice = std::string(1, static_cast<char>('A' + correct_at[c]));
        nlohmann::json anchor_texts = nlohmann::json::array();
        for (std::size_t f = 0; f < chain.facts.size(); ++f) {
            data::EvidenceFact fact;
            fact.id = p.id + "-f" + std::to_string(f + 1);
            fact.text = chain.facts[f];
            fact.message_ids = {fact_messages[c][f]};
            fact.key_details = {{"anchor_" + std::to_string(f + 1), {chain.anchors[f].text}, data::DetailRole::identity},
                                {"anchor_" + std::to_string(f + 2), {chain.anchors[f + 1].text}, data::DetailRole::identity}};
            fact.statements = {chain.facts[f]};
            p.evidence.push_back(std::move(fact));
        }
        for (const auto& a : chain.anchors)
            anchor_texts.push_back(a.text);
        p.meta = {{"hops", chain.hops},
                  {"chain", anchor_texts},
                  {"voice", chain.voice.named ? "named" : "first_person"}};
        s.probes.push_back(std::move(p));
    }
    ask_all_after_last_session(s);
    record_dedup(s, "fact", deduper, candidates);
    return s;
}

} // namespace memfail::suites::memfail_suite
