// SPDX-License-Identifier: MIT
#include <memfail/suites/import_json.hpp>

namespace memfail::suites::import_json {

using nlohmann::json;

std::string at(const std::string& base, std::string_view key) {
    return base.empty() ? std::string(key) : base + "." + std::string(key);
}
std::string at(const std::string& base, std::size_t index) { return base + "[" + std::to_string(index) + "]"; }

std::string compact(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string as_text(const json& v) {
    if (v.is_null()) return {};
    if (v.is_string()) return v.get_ref<const std::string&>();
    return compact(v);
}

std::string shown(const json& v) {
    std::string s = v.is_string() ? v.get_ref<const std::string&>() : compact(v);
    if (s.size() > 60) {
        std::size_t cut = 57;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
        s = s.substr(0, cut) + "...";
    }
    return v.is_string() ? "'" + s + "'" : s;
}

const char* type_name(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::object: return "an object";
        case json::value_t::array: return "a list";
        case json::value_t::string: return "a string";
        case json::value_t::boolean: return "a boolean";
        case json::value_t::number_integer:
        case json::value_t::number_unsigned:
        case json::value_t::number_float: return "a number";
        default: return "an unknown value";
    }
}

bool deeper_than(const json& v, std::size_t limit, std::size_t depth) {
    if (!v.is_structured()) return false;
    if (depth + 1 > limit) return true;
    for (const auto& child : v)
        if (deeper_than(child, limit, depth + 1)) return true;
    return false;
}

std::string parser_message(const std::string& what) {
    std::string_view m = what;
    if (!m.empty() && m.front() == '[')
        if (const std::size_t end = m.find("] "); end != std::string_view::npos) m.remove_prefix(end + 2);
    std::string out;
    for (const char c : m) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) {
            out += c;
        } else {
            static const char* hex = "0123456789ABCDEF";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        }
    }
    return out;
}

}  // namespace memfail::suites::import_json
