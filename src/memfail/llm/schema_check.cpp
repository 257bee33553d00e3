// SPDX-License-Identifier: MIT
// A small JSON-schema validator for reply objects.
#include <memfail/llm/schema_check.hpp>

#include <cmath>
#include <cstdint>

namespace memfail::llm {

namespace {

using nlohmann::json;

bool has_type(const json& value, const std::string& type) {
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "string") return value.is_string();
    if (type == "boolean") return value.is_boolean();
    if (type == "null") return value.is_null();
    if (type == "number") return value.is_number();
    if (type == "integer") {
        if (value.is_number_integer()) return true;
        // 3.0 is an integer in JSON Schema's data model.
        if (value.is_number_float()) {
            const double d = value.get<double>();
            return std::isfinite(d) && std::floor(d) == d;
        }
        return false;
    }
    return true;  // unknown type names do not reject anything
}

std::string type_name(const json& value) {
    if (value.is_number_integer()) return "integer";
    if (value.is_number()) return "number";
    return value.type_name();
}

std::size_t utf8_length(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

std::string brief(const json& value) {
    std::string text = value.dump();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return text;
}

std::string number_text(double d) {
    json j = d;
    if (std::floor(d) == d && std::fabs(d) < 1e15) j = static_cast<std::int64_t>(d);
    return j.dump();
}

// The document local "$ref"s resolve against ("#/$defs/verdict", "#/definitions/x").
thread_local const json* t_root = nullptr;

const json* resolve_ref(const std::string& ref) {
    if (!t_root || ref.empty() || ref[0] != '#') return nullptr;
    try {
        const json& target = t_root->at(json::json_pointer(ref.substr(1)));
        return &target;
    } catch (const json::exception&) {
        return nullptr;
    }
}

std::optional<std::string> check(const json& value, const json& schema, const std::string& path);

std::optional<std::string> fail(const std::string& path, const std::string& problem) {
    return path + ": " + problem;
}

std::optional<std::string> check_type(const json& value, const json& type, const std::string& path) {
    if (type.is_string()) {
        if (has_type(value, type.get<std::string>())) return std::nullopt;
        return fail(path, "expected " + type.get<std::string>() + ", got " + type_name(value));
    }
    if (type.is_array()) {
        std::string names;
        for (const auto& t : type) {
            if (!t.is_string()) continue;
            if (has_type(value, t.get<std::string>())) return std::nullopt;
            names += (names.empty() ? "" : " or ") + t.get<std::string>();
        }
        return fail(path, "expected " + names + ", got " + type_name(value));
    }
    return std::nullopt;
}

std::optional<std::string> check_object(const json& value, const json& schema, const std::string& path) {
    const json* properties = schema.contains("properties") && schema["properties"].is_object()
                                 ? &schema["properties"]
                                 : nullptr;
    if (auto it = schema.find("required"); it != schema.end() && it->is_array()) {
        for (const auto& name : *it) {
            if (name.is_string() && !value.contains(name.get<std::string>()))
                return fail(path + "." + name.get<std::string>(), "missing required property");
        }
    }
    const auto additional = schema.find("additionalProperties");
    for (const auto& [name, child] : value.items()) {
        const std::string child_path = path + "." + name;
        if (properties && properties->contains(name)) {
            if (auto problem = check(child, (*properties)[name], child_path)) return problem;
        } else if (additional != schema.end()) {
            if (additional->is_boolean() && !additional->get<bool>())
                return fail(child_path, "property not allowed by the schema");
            if (additional->is_object()) {
                if (auto problem = check(child, *additional, child_path)) return problem;
            }
        }
    }
    return std::nullopt;
}

std::optional<std::string> check_array(const json& value, const json& schema, const std::string& path) {
    if (auto it = schema.find("minItems"); it != schema.end() && it->is_number()) {
        if (value.size() < it->get<double>())
            return fail(path, "has " + std::to_string(value.size()) + " items, fewer than minItems " +
                                  number_text(it->get<double>()));
    }
    if (auto it = schema.find("maxItems"); it != schema.end() && it->is_number()) {
        if (value.size() > it->get<double>())
            return fail(path, "has " + std::to_string(value.size()) + " items, more than maxItems " +
                                  number_text(it->get<double>()));
    }
    if (auto it = schema.find("items"); it != schema.end() && it->is_object()) {
        for (std::size_t i = 0; i < value.size(); ++i) {
            if (auto problem = check(value[i], *it, path + "[" + std::to_string(i) + "]")) return problem;
        }
    }
    return std::nullopt;
}

std::optional<std::string> check_number(const json& value, const json& schema, const std::string& path) {
    const double d = value.get<double>();
    auto bound = [&](const char* key) -> std::optional<double> {
        auto it = schema.find(key);
        if (it == schema.end() || !it->is_number()) return std::nullopt;
        return it->get<double>();
    };
    if (auto lo = bound("minimum"); lo && d < *lo)
        return fail(path, number_text(d) + " is below the minimum " + number_text(*lo));
    if (auto hi = bound("maximum"); hi && d > *hi)
        return fail(path, number_text(d) + " is above the maximum " + number_text(*hi));
    if (auto lo = bound("exclusiveMinimum"); lo && d <= *lo)
        return fail(path, number_text(d) + " is not above the exclusive minimum " + number_text(*lo));
    if (auto hi = bound("exclusiveMaximum"); hi && d >= *hi)
        return fail(path, number_text(d) + " is not below the exclusive maximum " + number_text(*hi));
    return std::nullopt;
}

std::optional<std::string> check_string(const json& value, const json& schema, const std::string& path) {
    const std::size_t length = utf8_length(value.get_ref<const std::string&>());
    if (auto it = schema.find("minLength"); it != schema.end() && it->is_number() && length < it->get<double>())
        return fail(path, "is " + std::to_string(length) + " characters, shorter than minLength " +
                              number_text(it->get<double>()));
    if (auto it = schema.find("maxLength"); it != schema.end() && it->is_number() && length > it->get<double>())
        return fail(path, "is " + std::to_string(length) + " characters, longer than maxLength " +
                              number_text(it->get<double>()));
    return std::nullopt;
}

std::optional<std::string> check(const json& value, const json& schema, const std::string& path) {
    // `true`/`{}` accept everything, `false` nothing.
    if (schema.is_boolean()) {
        if (schema.get<bool>()) return std::nullopt;
        return fail(path, "not allowed by the schema");
    }
    if (!schema.is_object()) return std::nullopt;
    if (auto it = schema.find("$ref"); it != schema.end() && it->is_string()) {
        const json* target = resolve_ref(it->get<std::string>());
        if (!target) return fail(path, "the schema's $ref " + it->get<std::string>() + " cannot be resolved");
        if (target != &schema) return check(value, *target, path);
    }

    if (auto it = schema.find("type"); it != schema.end()) {
        if (auto problem = check_type(value, *it, path)) return problem;
    }
    if (auto it = schema.find("const"); it != schema.end() && value != *it)
        return fail(path, "expected the constant " + brief(*it) + ", got " + brief(value));
    if (auto it = schema.find("enum"); it != schema.end() && it->is_array()) {
        bool found = false;
        for (const auto& option : *it) found = found || option == value;
        if (!found) return fail(path, brief(value) + " is not one of " + brief(*it));
    }
    if (value.is_object()) {
        if (auto problem = check_object(value, schema, path)) return problem;
    } else if (value.is_array()) {
        if (auto problem = check_array(value, schema, path)) return problem;
    } else if (value.is_number()) {
        if (auto problem = check_number(value, schema, path)) return problem;
    } else if (value.is_string()) {
        if (auto problem = check_string(value, schema, path)) return problem;
    }
    if (auto it = schema.find("allOf"); it != schema.end() && it->is_array()) {
        for (const auto& sub : *it) {
            if (auto problem = check(value, sub, path)) return problem;
        }
    }
    if (auto it = schema.find("anyOf"); it != schema.end() && it->is_array() && !it->empty()) {
        std::optional<std::string> first;
        for (const auto& sub : *it) {
            auto problem = check(value, sub, path);
            if (!problem) return std::nullopt;
            if (!first) first = problem;
        }
        return fail(path, "matches none of the anyOf alternatives (first: " + *first + ")");
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> validate(const nlohmann::json& value, const nlohmann::json& schema,
                                    std::string_view root) {
    const json* saved = t_root;
    t_root = &schema;
    auto problem = check(value, schema, std::string(root));
    t_root = saved;
    return problem;
}

}  // namespace memfail::llm
