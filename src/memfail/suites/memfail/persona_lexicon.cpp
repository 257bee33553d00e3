// SPDX-License-Identifier: MIT
// Loading and checking the Persona-Retrieval lexicon (lexicon/persona.json, embedded at build time).
// The Reader keeps the first problem with its JSON path and lets parsing run on with defaults, so
// each part of the file is read by a short function that mirrors it.
#include <memfail/embedded/persona_lexicon.hpp>
#include <memfail/suites/lexicon_reader.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/persona_lexicon.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace memfail::suites::memfail_suite::persona {

namespace {

using nlohmann::json;

using Reader = suites::LexiconReader;

std::string at(const std::string& path, const char* key, std::size_t i) {
    return path + "." + key + "[" + std::to_string(i) + "]";
}

std::size_t count(const std::string& s, const std::string& token) {
    std::size_t n = 0;
    for (std::size_t pos = s.find(token); pos != std::string::npos; pos = s.find(token, pos + token.size())) ++n;
    return n;
}

std::vector<PersonName> read_names(Reader& r, const json& doc, const char* key) {
    std::vector<PersonName> out;
    const json& list = r.array(doc, key, "$");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = at("$", key, i);
        const std::string full = r.str(list[i], "name", path);
        const std::string pronoun = r.str(list[i], "pronoun", path);
        const std::size_t space = full.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 >= full.size() ||
            full.find(' ', space + 1) != std::string::npos)
            r.fail(path + ".name", "must be a first and a last name separated by one space");
        if (pronoun != "she" && pronoun != "he") r.fail(path + ".pronoun", "must be \"she\" or \"he\"");
        if (space != std::string::npos) out.push_back({full.substr(0, space), full.substr(space + 1), pronoun == "she"});
    }
    return out;
}

Flavor read_flavor(Reader& r, const json& j, const std::string& path) {
    Flavor f;
    f.profession = r.str(j, "profession", path);
    f.role = r.str(j, "role", path);
    f.place = r.str(j, "place", path);
    f.interest = r.str(j, "interest", path);
    f.sentences = r.strings(j, "sentences", path);
    f.excludes = r.strings(j, "excludes", path, false);
    return f;
}

// A template stating a fact refers to the person exactly once through {Subj}/{subj} and holds the key.
void check_fact_sentence(Reader& r, const std::string& tmpl, const std::string& path) {
    if (count(tmpl, "{Subj}") + count(tmpl, "{subj}") != 1)
        r.fail(path, "must refer to the person exactly once, through {Subj} or {subj}");
    if (count(tmpl, "{key}") + count(tmpl, "{Key}") != 1) r.fail(path, "must hold {key} exactly once");
}

FactType read_fact_type(Reader& r, const json& j, const std::string& path) {
    FactType t;
    t.id = r.str(j, "id", path);
    t.sentences = r.strings(j, "sentences", path);
    for (std::size_t i = 0; i < t.sentences.size(); ++i) check_fact_sentence(r, t.sentences[i], at(path, "sentences", i));
    const json& pairs = r.member(j, "pairs", path);
    if (!pairs.is_array()) r.fail(path + ".pairs", "must be a list of [statement, reason] pairs");
    for (std::size_t i = 0; pairs.is_array() && i < pairs.size(); ++i) {
        const std::string ppath = at(path, "pairs", i);
        if (!pairs[i].is_array() || pairs[i].size() != 2 || !pairs[i][0].is_string() || !pairs[i][1].is_string()) {
            r.fail(ppath, "must be two strings: the sentence stating the fact, then its reason or detail");
            continue;
        }
        std::array<std::string, 2> p = {pairs[i][0].get<std::string>(), pairs[i][1].get<std::string>()};
        check_fact_sentence(r, p[0], ppath + "[0]");
        if (count(p[1], "{Subj}") + count(p[1], "{subj}") + count(p[1], "{key}") + count(p[1], "{Key}") != 0)
            r.fail(ppath + "[1]", "the second sentence uses pronouns only and does not repeat {key}");
        t.pairs.push_back(std::move(p));
    }
    t.questions = r.strings(j, "questions", path);
    for (std::size_t i = 0; i < t.questions.size(); ++i) {
        if (count(t.questions[i], "{name}") != 1) r.fail(at(path, "questions", i), "must name the person once, as {name}");
        if (count(t.questions[i], "{key}") + count(t.questions[i], "{Key}") + count(t.questions[i], "{extra}") != 0)
            r.fail(at(path, "questions", i), "must not hold the answer ({key} or {extra})");
    }
    t.answer = r.str(j, "answer", path);
    std::string all_templates = t.answer;
    for (const auto& s : t.sentences) all_templates += s;
    for (const auto& p : t.pairs) all_templates += p[0] + p[1];
    for (const auto& q : t.questions) all_templates += q;
    const bool needs_cue = all_templates.find("{cue}") != std::string::npos;
    const bool needs_extra = all_templates.find("xtra}") != std::string::npos;
    const json& instances = r.array(j, "instances", path);
    for (std::size_t i = 0; i < instances.size(); ++i) {
        const std::string ipath = at(path, "instances", i);
        FactInstance inst;
        inst.key = r.str(instances[i], "key", ipath);
        inst.details = r.strings(instances[i], "details", ipath);
        inst.cue = r.str(instances[i], "cue", ipath, needs_cue);
        inst.extra = r.str(instances[i], "extra", ipath, needs_extra);
        inst.tag = r.str(instances[i], "tag", ipath, false);
        for (std::size_t d = 0; d < inst.details.size(); ++d)
            if (!text::contains_phrase(inst.key, inst.details[d]))
                r.fail(at(ipath, "details", d), "must be a phrase of the key '" + inst.key + "'");
        t.instances.push_back(std::move(inst));
    }
    return t;
}

// A detail identifies its own instance's answer: a detail phrase found in another instance's key,
// cue or clause (normalised, on word boundaries) would put that answer into other essays too, so
// a direct answer would be found in two essays (`datasets audit`, shared_answers): refused, naming
// the detail's JSON path and the instance holding it.
void check_details_distinct(Reader& r, const std::vector<FactType>& types) {
    struct Text {
        std::string normalized;
        std::string path;
        std::size_t type = 0, instance = 0;
    };
    std::vector<Text> texts;
    for (std::size_t t = 0; t < types.size(); ++t)
        for (std::size_t i = 0; i < types[t].instances.size(); ++i) {
            const FactInstance& inst = types[t].instances[i];
            const std::string path = at(at("$", "fact_types", t), "instances", i);
            for (const auto& [field, value] : {std::pair<const char*, const std::string*>{"key", &inst.key},
                                               {"cue", &inst.cue},
                                               {"extra", &inst.extra}})
                if (!value->empty()) texts.push_back({text::normalize(*value), path + "." + field, t, i});
        }
    for (std::size_t t = 0; t < types.size(); ++t)
        for (std::size_t i = 0; i < types[t].instances.size(); ++i) {
            const FactInstance& inst = types[t].instances[i];
            for (std::size_t d = 0; d < inst.details.size(); ++d) {
                const std::string detail = text::normalize(inst.details[d]);
                for (const Text& other : texts) {
                    if ((other.type == t && other.instance == i) || !text::normalized_contains(other.normalized, detail))
                        continue;
                    r.fail(at(at(at("$", "fact_types", t), "instances", i), "details", d),
                           "'" + inst.details[d] + "' also occurs in " + other.path +
                               ": a detail must be found in its own instance only");
                    break;
                }
            }
        }
}

}  // namespace

Result<Lexicon> parse_lexicon(const std::string& file, const std::string& content) {
    Reader r(file);
    json doc = json::parse(content, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return make_error(ErrorKind::invalid_input, "is not a JSON object", file);
    Lexicon lex;
    lex.entity_names = read_names(r, doc, "entity_names");
    lex.distractor_names = read_names(r, doc, "distractor_names");
    lex.intros = r.strings(doc, "intros", "$");
    for (std::size_t i = 0; i < lex.intros.size(); ++i)
        if (count(lex.intros[i], "{Name}") != 1) r.fail(at("$", "intros", i), "must name the person in full once, as {Name}");
    lex.fillers = r.strings(doc, "fillers", "$");
    for (std::size_t i = 0; i < lex.fillers.size(); ++i)
        if (lex.fillers[i].find("{Name}") != std::string::npos || lex.fillers[i].find("{First}") != std::string::npos)
            r.fail(at("$", "fillers", i), "a filler refers to the person by pronoun or role only");
    const json& flavors = r.array(doc, "flavors", "$");
    for (std::size_t i = 0; i < flavors.size(); ++i) lex.flavors.push_back(read_flavor(r, flavors[i], at("$", "flavors", i)));
    const json& types = r.array(doc, "fact_types", "$");
    for (std::size_t i = 0; i < types.size(); ++i) lex.fact_types.push_back(read_fact_type(r, types[i], at("$", "fact_types", i)));

    // Distractors are strangers: no first or last name of theirs is any stored person's.
    std::set<std::string> entity_tokens;
    for (const auto& n : lex.entity_names) {
        entity_tokens.insert(text::normalize(n.first));
        entity_tokens.insert(text::normalize(n.last));
    }
    for (std::size_t i = 0; i < lex.distractor_names.size(); ++i) {
        const auto& d = lex.distractor_names[i];
        if (entity_tokens.count(text::normalize(d.first)) || entity_tokens.count(text::normalize(d.last)))
            r.fail(at("$", "distractor_names", i), "'" + d.full() + "' shares a name with an entity name");
    }
    check_details_distinct(r, lex.fact_types);
    if (r.error()) return *r.error();
    return lex;
}

const Lexicon& lexicon() {
    static const Lexicon k_lexicon = [] {
        const auto* f = embedded::persona_lexicon::find("persona.json");
        MF_ASSERT(f, "persona.json is embedded in memfail_suites");
        Result<Lexicon> parsed = parse_lexicon("persona.json", std::string(f->content));
        if (!parsed) {
            const std::string why = "the Persona lexicon is invalid: " + parsed.error().describe();
            assert_fail("persona lexicon", why.c_str(), __FILE__, __LINE__);
        }
        return std::move(parsed).value();
    }();
    return k_lexicon;
}

std::string render(const std::string& tmpl, const Bindings& b) {
    // Pronouns and names of the person, applied to the template and to the fact's own clauses.
    const auto person_tokens = [&b](std::string out) {
        if (!b.person) return out;
        const bool f = b.person->female;
        out = text::replace_all(out, "{Name}", b.person->full());
        out = text::replace_all(out, "{name}", b.person->full());
        out = text::replace_all(out, "{First}", b.person->first);
        out = text::replace_all(out, "{himself}", f ? "herself" : "himself");
        out = text::replace_all(out, "{He}", f ? "She" : "He");
        out = text::replace_all(out, "{he}", f ? "she" : "he");
        out = text::replace_all(out, "{His}", f ? "Her" : "His");
        out = text::replace_all(out, "{his}", f ? "her" : "his");
        out = text::replace_all(out, "{him}", f ? "her" : "him");
        return out;
    };
    std::string out = tmpl;
    if (b.fact) {
        const std::string key = person_tokens(b.fact->key);
        const std::string extra = person_tokens(b.fact->extra);
        out = text::replace_all(out, "{Key}", text::capitalize(key));
        out = text::replace_all(out, "{key}", key);
        out = text::replace_all(out, "{cue}", b.fact->cue);
        out = text::replace_all(out, "{Extra}", text::capitalize(extra));
        out = text::replace_all(out, "{extra}", extra);
    }
    if (b.flavor) {
        out = text::replace_all(out, "{Role}", text::capitalize(b.flavor->role));
        out = text::replace_all(out, "{role}", b.flavor->role);
        out = text::replace_all(out, "{place}", b.flavor->place);
        out = text::replace_all(out, "{interest}", b.flavor->interest);
        out = text::replace_all(out, "{profession}", b.flavor->profession);
    }
    if (b.person) {
        const bool f = b.person->female;
        std::string subj;
        switch (b.reference) {
            case Reference::name: subj = b.person->first; break;
            case Reference::pronoun: subj = f ? "she" : "he"; break;
            case Reference::role: subj = b.flavor ? b.flavor->role : (f ? "she" : "he"); break;
        }
        out = text::replace_all(out, "{Subj}", text::capitalize(subj));
        out = text::replace_all(out, "{subj}", subj);
    }
    return person_tokens(out);
}

}  // namespace memfail::suites::memfail_suite::persona
