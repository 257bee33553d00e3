// SPDX-License-Identifier: MIT
// Loading and checking the write-integrity lexicon. The schema below is the contract between the
// JSON files and the generator: a key the generator reads is required here, with the placeholders
// its templates must hold (a statement that forgot "{value}" would cite a message that does not
// state its value) and may hold (a typo such as "{vlaue}" is caught here, not in a dataset).
#include <memfail/embedded/writ_lexicon.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/writ/lexicon.hpp>

#include <algorithm>
#include <set>

namespace memfail::suites::writ {

namespace {

using nlohmann::json;

// ---- schema ----------------------------------------------------------------------------------------

struct ListSpec {
    std::string_view key;
    std::size_t min = 1;
    std::vector<std::string_view> required;  // every string holds each of these placeholders
    std::vector<std::string_view> allowed;   // and no placeholder outside required + allowed
};

enum class FieldType { string, integer };

struct FieldSpec {
    std::string_view key;
    FieldType type = FieldType::string;
};

struct TableSpec {
    std::string_view key;
    std::size_t min_entries = 1;
    std::vector<ListSpec> lists;
    std::vector<FieldSpec> fields;
};

struct FileSpec {
    std::string_view file;
    std::vector<ListSpec> pools;
    std::vector<TableSpec> tables;
};

// Shorthands for the table below.
ListSpec words(std::string_view key, std::size_t min) { return {key, min, {}, {}}; }
ListSpec tmpl(std::string_view key, std::size_t min, std::vector<std::string_view> required,
              std::vector<std::string_view> allowed = {}) {
    return {key, min, std::move(required), std::move(allowed)};
}
FieldSpec str(std::string_view key) { return {key, FieldType::string}; }
FieldSpec num(std::string_view key) { return {key, FieldType::integer}; }

const std::vector<FileSpec>& schema() {
    static const std::vector<FileSpec> k_schema = {
        {"people.json",
         {words("first_names", 20), words("last_names", 20), words("relations", 6)},
         {{"nicknames", 8, {words("short", 2)}, {str("given"), str("honorific")}}}},
        {"places.json",
         {words("street_names", 10), words("street_types", 5), words("destinations", 8)},
         {{"cities", 8, {}, {str("city"), str("state")}}}},
        {"filler.json", {words("segues", 3), words("asides", 20)}, {{"exchanges", 30, {}, {str("user"), str("assistant")}}}},
        {"conversation.json",
         {tmpl("ack_value", 3, {"value"}), tmpl("ack_update", 3, {"value"}, {"old"}), words("ack_plain", 3)},
         {}},
        {"attributes.json",
         {},
         {{"attributes",
           4,
           {words("values", 0), tmpl("intro", 2, {"value"}), tmpl("update", 2, {"value"}, {"old"}),
            tmpl("update_indirect", 2, {"value"}), words("ask_current", 1), words("ask_history", 1),
            tmpl("ask_as_of", 1, {"date"}), tmpl("other", 1, {"value", "name"}, {"relation", "relation_cap"})},
           {str("label"), str("value_source")}}}},
        {"provenance.json",
         {},
         {{"figures",
           4,
           {tmpl("state", 2, {"figure"}), tmpl("related", 2, {"other"}), tmpl("repeat", 1, {"figure"}),
            tmpl("ask", 1, {"figure"})},
           {str("keyword"), num("min"), num("max"), num("step")}}}},
        {"constraint.json",
         {},
         {{"constraints",
           4,
           {tmpl("behaviour", 3, {"item"}), words("items", 4), words("decoys", 3), words("safe", 2),
            tmpl("ask", 1, {"options"})},
           {str("label")}}}},
        {"entity.json",
         {words("roles", 6), tmpl("intro", 2, {"full", "short"}, {"role", "role_cap"}), tmpl("mention", 4, {"alias"}),
          tmpl("surname_twin", 1, {"full", "other"}, {"role"}),
          tmpl("person", 2, {"full"}, {"relation", "relation_cap"}), words("twin_roles", 2), words("ask_count", 1),
          tmpl("ask_resolve", 1, {"alias"})},
         {}},
        {"forgetting.json",
         {tmpl("name_intro", 2, {"name"}), words("nicknames", 4), tmpl("one_off", 2, {"nickname"}),
          tmpl("one_off_ack", 1, {"nickname"}), words("ask_name", 1), tmpl("plan", 2, {"value"}),
          tmpl("retract", 2, {"value"}), words("ask_plans", 1)},
         {{"temporary", 2, {tmpl("state", 1, {"value"})}, {num("digits")}}}},
        {"abstention.json",
         {},
         {{"topics",
           4,
           {words("values", 4), tmpl("other", 1, {"value", "name"}, {"relation", "relation_cap"}),
            words("ask_self", 1), tmpl("ask_other", 1, {"name"})},
           {}}}},
        {"multi_hop.json",
         {},
         {{"chains",
           3,
           {words("values", 4), tmpl("fact", 1, {"value", "name"}, {"relation", "relation_cap"}),
            tmpl("link", 1, {"name"}), tmpl("update", 1, {"name", "value"}), words("ask", 1)},
           {}}}},
        {"work_state.json",
         {tmpl("add", 2, {"task"}, {"project"}), tmpl("done", 2, {"task"}), tmpl("dropped", 2, {"task"}),
          tmpl("ask_open", 1, {}, {"project"})},
         {{"projects", 3, {words("tasks", 5)}, {str("label")}}}},
        {"closure.json",
         {tmpl("open", 2, {"item", "status"}), tmpl("close", 2, {"item", "status"}), tmpl("ask", 1, {"item"})},
         {{"items", 4, {}, {str("item")}}}},
        {"lifecycle.json",
         {},
         {{"memberships",
           2,
           {words("values", 4), tmpl("intro", 1, {"value"}), tmpl("update", 1, {"value"}, {"old"}),
            tmpl("retract", 1, {"value"}), tmpl("reintro", 1, {"value"}), words("ask_current", 1),
            words("ask_history", 1)},
           {str("label")}}}},
        {"trust.json",
         {words("recap_request", 2)},
         {{"facts",
           4,
           {words("values", 4), tmpl("user", 1, {"value"}), tmpl("summary", 1, {"wrong"}), words("ask", 1)},
           {}}}},
        {"extraction.json",
         {},
         {{"quantities",
           4,
           {tmpl("user", 1, {"value"}), tmpl("paraphrase", 1, {"rounded"}), words("ask", 1)},
           {str("prefix"), str("suffix"), num("min"), num("max"), num("decimals"), num("round_to")}}}},
        {"correction.json",
         {},
         {{"fields",
           3,
           {tmpl("state", 1, {"value"}), tmpl("slip", 1, {"wrong"}), tmpl("in_message", 1, {"wrong", "value"}),
            tmpl("same_session", 1, {"wrong", "value"}), tmpl("update", 1, {"value"}),
            tmpl("revert", 1, {"wrong", "value"}), words("ask", 1)},
           {num("digits")}}}},
        {"certification.json",
         {},
         {{"licences",
           3,
           {tmpl("intro", 1, {"number", "expiry"}), tmpl("renew", 1, {"number", "expiry"}),
            tmpl("other", 1, {"number", "expiry", "name"}, {"relation", "relation_cap"}), words("ask_current", 1),
            tmpl("ask_as_of", 1, {"date"})},
           {str("label"), str("prefix"), num("digits"), num("valid_years")}}}},
        {"answers.json",
         {tmpl("current", 1, {"value"}), tmpl("history", 1, {"values"}), tmpl("as_of", 1, {"value"}, {"date"}),
          tmpl("provenance", 1, {"figure"}, {"date", "keyword", "source"}), tmpl("constraint", 1, {"option"}, {"label"}),
          tmpl("count", 1, {"count"}, {"groups"}), tmpl("resolve", 1, {"value"}, {"alias"}), words("abstain", 1),
          tmpl("name", 1, {"value"}), tmpl("plans", 1, {"values"}), tmpl("open_tasks", 1, {"values"}),
          tmpl("status", 1, {"value"}), tmpl("licence", 1, {"number", "expiry"}),
          tmpl("multi_hop", 1, {"value"}, {"name"})},
         {}},
    };
    return k_schema;
}

// ---- checking --------------------------------------------------------------------------------------

Error lex_error(std::string_view file, const std::string& path, const std::string& message) {
    return make_error(ErrorKind::invalid_input, "malformed lexicon: " + message, std::string(file) + ": " + path);
}

template <class Spec>
std::string known_keys(const std::vector<Spec>& specs) {
    std::string out;
    for (const auto& s : specs) out += (out.empty() ? "" : ", ") + std::string(s.key);
    return out.empty() ? "none" : out;
}

// Placeholder syntax: "{" [a-z_]+ "}". Any other brace is a typo.
Result<void> check_braces(std::string_view file, const std::string& path, std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '}') return lex_error(file, path, "stray '}' in \"" + std::string(s) + "\"");
        if (s[i] != '{') continue;
        std::size_t j = i + 1;
        while (j < s.size() && ((s[j] >= 'a' && s[j] <= 'z') || s[j] == '_')) ++j;
        if (j == i + 1 || j >= s.size() || s[j] != '}')
            return lex_error(file, path,
                             "malformed placeholder in \"" + std::string(s) + "\" (placeholders are {lower_case})");
        i = j;
    }
    return {};
}

Result<std::vector<std::string>> read_list(std::string_view file, const std::string& path, const json& j,
                                           const ListSpec& spec) {
    if (!j.is_array()) return lex_error(file, path, "must be a list of strings");
    if (j.size() < spec.min)
        return lex_error(file, path,
                         "needs at least " + std::to_string(spec.min) + " entries, has " + std::to_string(j.size()));
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const std::string ipath = path + "[" + std::to_string(i) + "]";
        if (!j[i].is_string()) return lex_error(file, ipath, "must be a string");
        std::string s = j[i].get<std::string>();
        if (text::trim(s).empty()) return lex_error(file, ipath, "is empty");
        if (text::trim(s).size() != s.size()) return lex_error(file, ipath, "has leading or trailing spaces");
        if (!seen.insert(s).second) return lex_error(file, ipath, "duplicates an earlier entry (\"" + s + "\")");
        MF_TRY(check_braces(file, ipath, s));
        const std::vector<std::string> held = placeholders(s);
        for (const auto& r : spec.required)
            if (std::find(held.begin(), held.end(), r) == held.end())
                return lex_error(file, ipath, "\"" + s + "\" lacks the placeholder {" + std::string(r) + "}");
        for (const auto& h : held) {
            const bool ok = std::find(spec.required.begin(), spec.required.end(), h) != spec.required.end() ||
                            std::find(spec.allowed.begin(), spec.allowed.end(), h) != spec.allowed.end();
            if (!ok) {
                std::string may;
                for (const auto& r : spec.required) may += " {" + std::string(r) + "}";
                for (const auto& a : spec.allowed) may += " {" + std::string(a) + "}";
                return lex_error(file, ipath,
                                 "\"" + s + "\" holds {" + h + "}, which " + std::string(spec.key) +
                                     " does not fill (it fills:" + (may.empty() ? " nothing" : may) + ")");
            }
        }
        out.push_back(std::move(s));
    }
    return out;
}

Result<LexEntry> read_entry(std::string_view file, const std::string& path, const json& j, const TableSpec& spec) {
    if (!j.is_object()) return lex_error(file, path, "an entry must be an object");
    LexEntry e;
    auto id = j.find("id");
    if (id == j.end() || !id->is_string() || text::trim(id->get<std::string>()).empty())
        return lex_error(file, path + ".id", "every entry needs a non-empty string id");
    e.id = id->get<std::string>();
    for (const auto& item : j.items()) {
        // Named copies, not structured bindings: lambdas below capture them (C++20 allows that for
        // bindings, Clang before 16 does not).
        const std::string& key = item.key();
        const json& value = item.value();
        if (key == "id") continue;
        const std::string kpath = path + "." + key;
        const auto list = std::find_if(spec.lists.begin(), spec.lists.end(), [&](const ListSpec& l) { return l.key == key; });
        if (list != spec.lists.end()) {
            MF_TRY_ASSIGN(e.lists[key], read_list(file, kpath, value, *list));
            continue;
        }
        const auto field =
            std::find_if(spec.fields.begin(), spec.fields.end(), [&](const FieldSpec& f) { return f.key == key; });
        if (field == spec.fields.end())
            return lex_error(file, kpath,
                             "unknown key (" + std::string(spec.key) + " entries hold: id, " + known_keys(spec.lists) +
                                 (spec.fields.empty() ? "" : ", " + known_keys(spec.fields)) + ")");
        if (field->type == FieldType::string && !value.is_string()) return lex_error(file, kpath, "must be a string");
        if (field->type == FieldType::integer && !value.is_number_integer())
            return lex_error(file, kpath, "must be an integer");
        e.fields[key] = value;
    }
    for (const auto& l : spec.lists)
        if (!e.lists.count(l.key)) return lex_error(file, path + "." + std::string(l.key), "required list is missing");
    for (const auto& f : spec.fields)
        if (!e.fields.count(f.key)) return lex_error(file, path + "." + std::string(f.key), "required field is missing");
    return e;
}

// Checks the schema cannot express: how the entries of one file relate to each other.
Result<void> check_semantics(const LexFile& f) {
    if (f.name == "attributes.json") {
        const auto& entries = f.table("attributes");
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const LexEntry& e = entries[i];
            const std::string path = "tables.attributes[" + std::to_string(i) + "]";
            const std::string& source = e.text("value_source");
            if (source == "pool" && e.list("values").size() < 6)
                return lex_error(f.name, path + ".values", "an attribute drawing from its pool needs at least 6 values");
            if (source == "address" && !e.list("values").empty())
                return lex_error(f.name, path + ".values", "an address attribute builds its values; leave values empty");
            if (source != "pool" && source != "address")
                return lex_error(f.name, path + ".value_source", "must be 'pool' or 'address', not '" + source + "'");
        }
        if (std::none_of(entries.begin(), entries.end(), [](const LexEntry& e) { return e.id == "address"; }))
            return lex_error(f.name, "tables.attributes", "the temporal category needs an entry with id 'address'");
    }
    if (f.name == "provenance.json") {
        const auto& entries = f.table("figures");
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const LexEntry& e = entries[i];
            const std::string path = "tables.figures[" + std::to_string(i) + "]";
            if (e.integer("step") <= 0 || e.integer("min") <= 0 || e.integer("max") <= e.integer("min") + 4 * e.integer("step"))
                return lex_error(f.name, path, "needs 0 < min, 0 < step and room for five steps between min and max");
            // The keyword ties an answer to the figure's source, so the question must not give it away.
            const std::string& keyword = e.text("keyword");
            for (std::size_t t = 0; t < e.list("state").size(); ++t)
                if (!text::contains_phrase(e.list("state")[t], keyword))
                    return lex_error(f.name, path + ".state[" + std::to_string(t) + "]",
                                     "does not mention the keyword '" + keyword + "'");
            for (std::size_t t = 0; t < e.list("ask").size(); ++t)
                if (text::contains_phrase(e.list("ask")[t], keyword))
                    return lex_error(f.name, path + ".ask[" + std::to_string(t) + "]",
                                     "gives the keyword '" + keyword + "' away");
        }
    }
    if (f.name == "extraction.json") {
        const auto& entries = f.table("quantities");
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const LexEntry& e = entries[i];
            if (e.integer("decimals") < 0 || e.integer("decimals") > 2 || e.integer("round_to") < 1 ||
                e.integer("min") < 1 || e.integer("max") <= e.integer("min") + e.integer("round_to"))
                return lex_error(f.name, "tables.quantities[" + std::to_string(i) + "]",
                                 "needs decimals 0..2, round_to >= 1 and max > min + round_to");
        }
    }
    if (f.name == "correction.json" || f.name == "certification.json" || f.name == "forgetting.json") {
        const std::string table = f.name == "correction.json" ? "fields"
                                  : f.name == "certification.json" ? "licences"
                                                                   : "temporary";
        const auto& entries = f.table(table);
        for (std::size_t i = 0; i < entries.size(); ++i)
            if (entries[i].integer("digits") < 3 || entries[i].integer("digits") > 9)
                return lex_error(f.name, "tables." + table + "[" + std::to_string(i) + "].digits", "must be 3..9");
    }
    return {};
}

const FileSpec* spec_for(std::string_view name) {
    for (const auto& s : schema())
        if (s.file == name) return &s;
    return nullptr;
}

}  // namespace

const std::vector<std::string>& LexEntry::list(std::string_view key) const {
    const auto it = lists.find(key);
    MF_ASSERT(it != lists.end(), "a lexicon entry lacks a list the schema requires");
    return it->second;
}

const std::string& LexEntry::text(std::string_view key) const {
    const auto it = fields.find(key);
    MF_ASSERT(it != fields.end() && it->second.is_string(), "a lexicon entry lacks a string field the schema requires");
    return it->second.get_ref<const std::string&>();
}

std::int64_t LexEntry::integer(std::string_view key) const {
    const auto it = fields.find(key);
    MF_ASSERT(it != fields.end() && it->second.is_number_integer(),
              "a lexicon entry lacks an integer field the schema requires");
    return it->second.get<std::int64_t>();
}

const std::vector<std::string>& LexFile::pool(std::string_view key) const {
    const auto it = pools.find(key);
    MF_ASSERT(it != pools.end(), "a lexicon file lacks a pool the schema requires");
    return it->second;
}

const std::vector<LexEntry>& LexFile::table(std::string_view key) const {
    const auto it = tables.find(key);
    MF_ASSERT(it != tables.end(), "a lexicon file lacks a table the schema requires");
    return it->second;
}

const LexFile& Lexicon::file(std::string_view name) const {
    const auto it = files.find(name);
    MF_ASSERT(it != files.end(), "the lexicon lacks a file the schema requires");
    return it->second;
}

Result<LexFile> parse_lexicon_file(std::string_view name, std::string_view content) {
    const FileSpec* spec = spec_for(name);
    if (!spec) {
        std::string known;
        for (const auto& s : schema()) known += (known.empty() ? "" : ", ") + std::string(s.file);
        return lex_error(name, "(file)", "no schema for this file (known files: " + known + ")");
    }
    json j = json::parse(content.begin(), content.end(), nullptr, false);
    if (j.is_discarded()) return lex_error(name, "(file)", "not valid JSON");
    if (!j.is_object()) return lex_error(name, "(file)", "must be a JSON object");
    LexFile f;
    f.name = std::string(name);
    for (const auto& item : j.items())
        if (item.key() != "about" && item.key() != "pools" && item.key() != "tables")
            return lex_error(name, item.key(), "unknown key (a lexicon file holds about, pools and tables)");
    const auto about = j.find("about");
    if (about == j.end() || !about->is_string() || text::trim(about->get<std::string>()).empty())
        return lex_error(name, "about", "say in a sentence or two what the file is for");
    f.about = about->get<std::string>();

    const auto pools = j.find("pools");
    if (pools == j.end() || !pools->is_object()) return lex_error(name, "pools", "must be an object (may be empty)");
    for (const auto& item : pools->items()) {
        const std::string& key = item.key();
        const json& value = item.value();
        const auto it = std::find_if(spec->pools.begin(), spec->pools.end(), [&](const ListSpec& l) { return l.key == key; });
        if (it == spec->pools.end())
            return lex_error(name, "pools." + key, "unknown pool (this file's pools: " + known_keys(spec->pools) + ")");
        MF_TRY_ASSIGN(f.pools[key], read_list(name, "pools." + key, value, *it));
    }
    for (const auto& l : spec->pools)
        if (!f.pools.count(l.key)) return lex_error(name, "pools." + std::string(l.key), "required pool is missing");

    const auto tables = j.find("tables");
    if (tables == j.end() || !tables->is_object()) return lex_error(name, "tables", "must be an object (may be empty)");
    for (const auto& item : tables->items()) {
        const std::string& key = item.key();
        const json& value = item.value();
        const auto it =
            std::find_if(spec->tables.begin(), spec->tables.end(), [&](const TableSpec& t) { return t.key == key; });
        const std::string tpath = "tables." + key;
        if (it == spec->tables.end())
            return lex_error(name, tpath, "unknown table (this file's tables: " + known_keys(spec->tables) + ")");
        if (!value.is_array()) return lex_error(name, tpath, "must be a list of entries");
        if (value.size() < it->min_entries)
            return lex_error(name, tpath,
                             "needs at least " + std::to_string(it->min_entries) + " entries, has " +
                                 std::to_string(value.size()));
        std::set<std::string> ids;
        std::vector<LexEntry> entries;
        for (std::size_t i = 0; i < value.size(); ++i) {
            const std::string epath = tpath + "[" + std::to_string(i) + "]";
            MF_TRY_ASSIGN(LexEntry e, read_entry(name, epath, value[i], *it));
            if (!ids.insert(e.id).second) return lex_error(name, epath + ".id", "duplicate id '" + e.id + "'");
            entries.push_back(std::move(e));
        }
        f.tables[key] = std::move(entries);
    }
    for (const auto& t : spec->tables)
        if (!f.tables.count(t.key)) return lex_error(name, "tables." + std::string(t.key), "required table is missing");
    MF_TRY(check_semantics(f));
    return f;
}

Result<Lexicon> parse_lexicon(const std::vector<std::pair<std::string, std::string>>& files) {
    Lexicon lex;
    for (const auto& [name, content] : files) {
        MF_TRY_ASSIGN(LexFile f, parse_lexicon_file(name, content));
        lex.files[name] = std::move(f);
    }
    for (const auto& s : schema())
        if (!lex.files.count(s.file)) return lex_error(s.file, "(file)", "the file is missing from the lexicon");
    return lex;
}

const Result<Lexicon>& writ_lexicon() {
    static const Result<Lexicon> k_lexicon = [] {
        std::vector<std::pair<std::string, std::string>> files;
        for (const auto& f : embedded::writ_lexicon::files())
            files.emplace_back(std::string(f.name), std::string(f.content));
        return parse_lexicon(files);
    }();
    return k_lexicon;
}

std::vector<std::string> embedded_lexicon_files() {
    std::vector<std::string> out;
    for (const auto& f : embedded::writ_lexicon::files()) out.emplace_back(f.name);
    return out;
}

std::vector<std::string> placeholders(std::string_view s) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '{') continue;
        const std::size_t end = s.find('}', i);
        if (end == std::string_view::npos) break;
        out.emplace_back(s.substr(i + 1, end - i - 1));
        i = end;
    }
    return out;
}

std::string fill(std::string_view tmpl, const Vars& vars) {
    std::string out;
    out.reserve(tmpl.size() + 32);
    for (std::size_t i = 0; i < tmpl.size(); ++i) {
        if (tmpl[i] != '{') {
            out += tmpl[i];
            continue;
        }
        const std::size_t end = tmpl.find('}', i);
        MF_ASSERT(end != std::string_view::npos, "unterminated placeholder in a lexicon template");
        const std::string_view key = tmpl.substr(i + 1, end - i - 1);
        const auto it = std::find_if(vars.begin(), vars.end(), [&](const auto& v) { return v.first == key; });
        MF_ASSERT(it != vars.end(), "a lexicon template holds a placeholder the generator does not fill");
        out += it->second;
        i = end;
    }
    return out;
}

}  // namespace memfail::suites::writ
