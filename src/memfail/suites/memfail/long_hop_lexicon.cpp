// SPDX-License-Identifier: MIT
// Loading and checking the Long-Hop lexicon (lexicon/long_hop.json, embedded at build time). The
// Reader keeps the first problem with its JSON path and lets parsing run on with defaults, so each
// part of the file is read by a short function that mirrors it.
#include <memfail/embedded/long_hop_lexicon.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/lexicon_reader.hpp>
#include <memfail/suites/memfail/long_hop_lexicon.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <set>
#include <utility>

namespace memfail::suites::memfail_suite::long_hop {

namespace {

using nlohmann::json;
using Reader = suites::LexiconReader;

std::string at(const std::string& path, const char* key, std::size_t i) {
    return path + "." + key + "[" + std::to_string(i) + "]";
}

bool has(const std::string& s, const char* token) { return s.find(token) != std::string::npos; }

bool read_bool(Reader& r, const json& obj, const char* key, const std::string& path) {
    const json& v = r.member(obj, key, path);
    if (v.is_boolean()) return v.get<bool>();
    if (!v.is_null()) r.fail(path + "." + key, "must be true or false");
    return false;
}

bool parse_kind(const std::string& s, Kind& out) {
    static const std::array<std::pair<const char*, Kind>, k_kind_count> k_kinds = {
        {{"person", Kind::person}, {"moment", Kind::moment}, {"act", Kind::act}, {"feel", Kind::feel},
         {"thing", Kind::thing}}};
    for (const auto& [name, kind] : k_kinds)
        if (s == name) {
            out = kind;
            return true;
        }
    return false;
}

// Every {token} is one the generator fills; [x|y] and <x|y> are closed and hold one bar.
void check_tokens(Reader& r, const std::string& tmpl, const std::string& path) {
    static const std::set<std::string> k_tokens = {"a",   "A", "b",  "lead", "Lead", "av",  "av3", "bv",
                                                   "N",   "he", "He", "his", "him",  "cat", "cats"};
    for (std::size_t i = 0; i < tmpl.size(); ++i) {
        const char c = tmpl[i];
        if (c == '{') {
            const std::size_t end = tmpl.find('}', i);
            if (end == std::string::npos) return r.fail(path, "has an unclosed '{'");
            const std::string token = tmpl.substr(i + 1, end - i - 1);
            if (!k_tokens.count(token)) return r.fail(path, "has an unknown placeholder {" + token + "}");
            i = end;
        } else if (c == '[' || c == '<') {
            const std::size_t end = tmpl.find(c == '[' ? ']' : '>', i);
            const std::size_t bar = tmpl.find('|', i);
            if (end == std::string::npos || bar == std::string::npos || bar > end ||
                tmpl.find('|', bar + 1) < end)
                return r.fail(path, std::string("has a malformed agreement choice ") + c + "x|y" +
                                        (c == '[' ? ']' : '>'));
            i = end;
        } else if (c == '}' || c == ']' || c == '>' || c == '|') {
            return r.fail(path, std::string("has a stray '") + c + "'");
        }
    }
}

// The token(s) that name the anchor a fact or question starts from, by its kind.
bool names_start(const std::string& tmpl, Kind from) {
    switch (from) {
    case Kind::person: return has(tmpl, "{N}");
    case Kind::moment: return has(tmpl, "{a}") || has(tmpl, "{A}") || has(tmpl, "{lead}") || has(tmpl, "{Lead}");
    default: return has(tmpl, "{a}") || has(tmpl, "{A}");
    }
}

void read_facts(Reader& r, const json& doc, Lexicon& lex) {
    const json& list = r.array(doc, "facts", "$");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = at("$", "facts", i);
        const std::string link = r.str(list[i], "link", path);
        const std::string family = r.str(list[i], "family", path);
        Kind from{}, to{};
        const std::size_t sep = link.find('>');
        if (!link.empty() && (sep == std::string::npos || !parse_kind(link.substr(0, sep), from) ||
                              !parse_kind(link.substr(sep + 1), to) || to == Kind::person || to == Kind::moment))
            r.fail(path + ".link", "must be \"FROM>TO\" with kinds person, moment, act, feel, thing (TO: act, feel or thing)");
        const bool any = list[i].is_object() && (list[i].contains("first_person") || list[i].contains("named"));
        if (!any) r.fail(path, "needs \"first_person\" or \"named\" templates");
        for (const char* voice : {"first_person", "named"}) {
            const bool named = std::string(voice) == "named";
            const auto texts = r.strings(list[i], voice, path, false);
            for (std::size_t t = 0; t < texts.size(); ++t) {
                const std::string tpath = at(path, voice, t);
                const std::string& s = texts[t];
                check_tokens(r, s, tpath);
                if (!names_start(s, from)) r.fail(tpath, "must name the anchor the fact starts from");
                if (!has(s, "{b}")) r.fail(tpath, "must name the anchor the fact leads to, as {b}");
                if (named && !has(s, "{N}")) r.fail(tpath, "a named chain's fact names its person, as {N}");
                if (!named && (has(s, "{N}") || has(s, "{he}") || has(s, "{his}")))
                    r.fail(tpath, "a first-person fact names no other person");
                if (to == Kind::thing && from != Kind::person && !has(s, "{bv}"))
                    r.fail(tpath, "a link to a thing uses the thing's verb, as {bv}");
                if (from == Kind::person && !named) r.fail(tpath, "only a named chain starts from a person");
                if (!s.empty() && s.back() != '.') r.fail(tpath, "a fact is one sentence ending in '.'");
                lex.facts.push_back({from, to, named, family, s});
            }
        }
    }
}

void read_questions(Reader& r, const json& doc, Lexicon& lex) {
    const json& list = r.array(doc, "questions", "$");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = at("$", "questions", i);
        Kind head{}, terminal{};
        const std::string h = r.str(list[i], "head", path), t = r.str(list[i], "terminal", path);
        if (!h.empty() && !parse_kind(h, head)) r.fail(path + ".head", "must be person, moment, act, feel or thing");
        if (!t.empty() && (!parse_kind(t, terminal) || (terminal != Kind::act && terminal != Kind::feel)))
            r.fail(path + ".terminal", "must be act or feel: chains end on something one does or feels");
        const std::string voice = r.str(list[i], "voice", path);
        if (!voice.empty() && voice != "first_person" && voice != "named")
            r.fail(path + ".voice", "must be \"first_person\" or \"named\"");
        const bool named = voice == "named";
        if (named != (head == Kind::person)) r.fail(path, "named questions, and only they, start from a person");
        const auto texts = r.strings(list[i], "templates", path);
        for (std::size_t k = 0; k < texts.size(); ++k) {
            const std::string tpath = at(path, "templates", k);
            check_tokens(r, texts[k], tpath);
            if (!names_start(texts[k], head)) r.fail(tpath, "must name the head of the chain");
            if (has(texts[k], "{b}")) r.fail(tpath, "names only the head, never a later anchor ({b})");
            if (!texts[k].empty() && texts[k].back() != '?') r.fail(tpath, "must end in '?'");
            lex.questions.push_back({head, terminal, named, texts[k]});
        }
    }
}

}  // namespace

const char* kind_name(Kind k) {
    switch (k) {
    case Kind::person: return "person";
    case Kind::moment: return "moment";
    case Kind::act: return "act";
    case Kind::feel: return "feel";
    case Kind::thing: return "thing";
    }
    return "?";
}

Result<Lexicon> parse_lexicon(const std::string& file, const std::string& content) {
    Reader r(file);
    json doc = json::parse(content, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return make_error(ErrorKind::invalid_input, "is not a JSON object", file);
    Lexicon lex;
    const json& anchors = r.member(doc, "anchors", "$");
    const std::string apath = "$.anchors";
    const json& moments = r.array(anchors, "moments", apath);
    for (std::size_t i = 0; i < moments.size(); ++i) {
        const std::string p = at(apath, "moments", i);
        lex.moments.push_back({r.str(moments[i], "prep", p), r.str(moments[i], "text", p),
                               read_bool(r, moments[i], "plural", p), r.str(moments[i], "topic", p)});
    }
    auto read_simple = [&](const json& obj, const char* key, const std::string& path, std::vector<ActEntry>& out) {
        const json& list = r.array(obj, key, path);
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string p = at(path, key, i);
            out.push_back({r.str(list[i], "text", p), r.str(list[i], "topic", p)});
        }
    };
    read_simple(anchors, "acts", apath, lex.acts);
    read_simple(anchors, "feelings", apath, lex.feels);
    const json& things = r.array(anchors, "things", apath);
    for (std::size_t i = 0; i < things.size(); ++i) {
        const std::string p = at(apath, "things", i);
        ThingEntry t{r.str(things[i], "text", p), r.str(things[i], "verb", p), r.str(things[i], "category", p, false),
                     read_bool(r, things[i], "plural", p), r.str(things[i], "topic", p)};
        // Named chains open with "his favorite <category>": no "{pos}" that would read "his his".
        if (!t.category.empty() && has(t.text, "{pos}"))
            r.fail(p + ".category", "a thing with a category is a named chain's favorite; its text holds no {pos}");
        lex.things.push_back(std::move(t));
    }

    const json& people = r.array(doc, "people", "$");
    std::set<std::string> names;
    for (std::size_t i = 0; i < people.size(); ++i) {
        const std::string p = at("$", "people", i);
        const std::string name = r.str(people[i], "name", p);
        const std::string pronoun = r.str(people[i], "pronoun", p);
        if (!name.empty() && (name.find(' ') != std::string::npos || !std::isupper(static_cast<unsigned char>(name[0]))))
            r.fail(p + ".name", "must be one capitalised first name");
        if (!names.insert(name).second) r.fail(p + ".name", "'" + name + "' is listed twice");
        if (pronoun != "she" && pronoun != "he") r.fail(p + ".pronoun", "must be \"she\" or \"he\"");
        lex.people.push_back({name, pronoun == "she"});
    }

    const json& related = r.array(doc, "related_topics", "$");
    for (std::size_t i = 0; i < related.size(); ++i) {
        const json& pair = related[i];
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) {
            r.fail(at("$", "related_topics", i), "must be a pair of topics [\"exercise\", \"tired\"]");
            continue;
        }
        const std::string a = pair[0].get<std::string>(), b = pair[1].get<std::string>();
        lex.related[a].push_back(b);
        lex.related[b].push_back(a);
    }
    read_facts(r, doc, lex);
    read_questions(r, doc, lex);

    // Anchors are distinct across kinds (a chain's anchors lead to it alone). A wrong option is
    // another anchor of the answer's kind, so it may be stored in another chain: what makes it
    // wrong is the chain, not where the option comes from.
    std::set<std::string> seen;
    auto unique = [&](const std::string& text, const std::string& path) {
        if (!text.empty() && !seen.insert(text::normalize(text)).second) r.fail(path, "'" + text + "' is listed twice");
    };
    for (std::size_t i = 0; i < lex.moments.size(); ++i) unique(lex.moments[i].text, at(apath, "moments", i) + ".text");
    for (std::size_t i = 0; i < lex.acts.size(); ++i) unique(lex.acts[i].text, at(apath, "acts", i) + ".text");
    for (std::size_t i = 0; i < lex.feels.size(); ++i) unique(lex.feels[i].text, at(apath, "feelings", i) + ".text");
    for (std::size_t i = 0; i < lex.things.size(); ++i) unique(lex.things[i].text, at(apath, "things", i) + ".text");

    // Every link and chain shape the generator builds has a template.
    auto covered = [&](Kind from, Kind to, bool named) {
        for (const auto& f : lex.facts)
            if (f.from == from && f.to == to && f.named == named) return true;
        return false;
    };
    const std::pair<Kind, Kind> first_person_links[] = {
        {Kind::moment, Kind::act}, {Kind::moment, Kind::feel}, {Kind::moment, Kind::thing}, {Kind::act, Kind::act},
        {Kind::act, Kind::feel},   {Kind::act, Kind::thing},   {Kind::feel, Kind::act},     {Kind::feel, Kind::thing},
        {Kind::thing, Kind::act},  {Kind::thing, Kind::feel}};
    const std::pair<Kind, Kind> named_links[] = {{Kind::person, Kind::thing}, {Kind::thing, Kind::act},
                                                 {Kind::thing, Kind::feel},   {Kind::act, Kind::act},
                                                 {Kind::act, Kind::feel},     {Kind::feel, Kind::act}};
    for (const auto& [from, to] : first_person_links)
        if (!covered(from, to, false))
            r.fail("$.facts", std::string("has no first_person template for the link ") + kind_name(from) + ">" + kind_name(to));
    for (const auto& [from, to] : named_links)
        if (!covered(from, to, true))
            r.fail("$.facts", std::string("has no named template for the link ") + kind_name(from) + ">" + kind_name(to));
    auto asked = [&](Kind head, Kind terminal, bool named) {
        for (const auto& q : lex.questions)
            if (q.head == head && q.terminal == terminal && q.named == named) return true;
        return false;
    };
    for (Kind head : {Kind::moment, Kind::act, Kind::feel, Kind::thing, Kind::person})
        for (Kind terminal : {Kind::act, Kind::feel})
            if (!asked(head, terminal, head == Kind::person))
                r.fail("$.questions", std::string("has no question for a chain from ") + kind_name(head) + " to " +
                                          kind_name(terminal));
    if (r.error()) return *r.error();
    return lex;
}

std::string_view embedded_lexicon_text() {
    const auto* f = embedded::long_hop_lexicon::find("long_hop.json");
    MF_ASSERT(f, "long_hop.json is embedded in memfail_suites");
    return f->content;
}

const Lexicon& lexicon() {
    static const Lexicon k_lexicon = [] {
        Result<Lexicon> parsed = parse_lexicon("long_hop.json", std::string(embedded_lexicon_text()));
        if (!parsed) {
            const std::string why = "the Long-Hop lexicon is invalid: " + parsed.error().describe();
            assert_fail("long-hop lexicon", why.c_str(), __FILE__, __LINE__);
        }
        return std::move(parsed).value();
    }();
    return k_lexicon;
}

std::span<const MomentEntry> moment_anchors() { return lexicon().moments; }
std::span<const ActEntry> act_anchors() { return lexicon().acts; }
std::span<const FeelEntry> feel_anchors() { return lexicon().feels; }
std::span<const ThingEntry> thing_anchors() { return lexicon().things; }
std::span<const PersonEntry> people() { return lexicon().people; }

std::span<const std::string> related_topics(std::string_view topic) {
    const auto& related = lexicon().related;
    const auto it = related.find(topic);
    if (it == related.end()) return {};
    return it->second;
}

std::size_t anchor_lexicon_size() {
    const Lexicon& lex = lexicon();
    return lex.moments.size() + lex.acts.size() + lex.feels.size() + lex.things.size();
}

}  // namespace memfail::suites::memfail_suite::long_hop
