// SPDX-License-Identifier: MIT
// Local JSON-schema validation: each supported keyword accepts and rejects, with the path named.
#include <gtest/gtest.h>

#include <memfail/llm/schema_check.hpp>

namespace memfail::llm {
namespace {

using nlohmann::json;

const json k_schema = json::parse(R"({
  "type": "object",
  "properties": {
    "verdict": {"type": "string", "enum": ["yes", "no"]},
    "score": {"type": "integer", "minimum": 0, "maximum": 5},
    "note": {"type": ["string", "null"], "minLength": 2, "maxLength": 5},
    "items": {"type": "array", "minItems": 1, "maxItems": 2,
              "items": {"type": "object", "properties": {"id": {"const": 1}}, "required": ["id"]}},
    "choice": {"anyOf": [{"type": "boolean"}, {"type": "string", "enum": ["A", "B"]}]},
    "ref": {"$ref": "#/$defs/letter"}
  },
  "required": ["verdict"],
  "additionalProperties": false,
  "$defs": {"letter": {"type": "string", "enum": ["A", "B", "C"]}}
})");

std::string problem(const json& value) {
    auto p = validate(value, k_schema);
    return p ? *p : "";
}

TEST(SchemaCheck, AcceptsValidValues) {
    EXPECT_EQ(problem({{"verdict", "yes"}}), "");
    EXPECT_EQ(problem({{"verdict", "no"}, {"score", 5}, {"note", nullptr}, {"items", {{{"id", 1}}}},
                       {"choice", "B"}, {"ref", "C"}}),
              "");
    EXPECT_EQ(problem({{"verdict", "no"}, {"score", 3.0}, {"choice", false}}), "");  // 3.0 is an integer
}

TEST(SchemaCheck, NamesTheFirstProblemWithItsPath) {
    EXPECT_EQ(problem({{"unexpected", true}}), "reply.verdict: missing required property");
    EXPECT_EQ(problem(json::array()), "reply: expected object, got array");
    EXPECT_EQ(problem({{"verdict", "maybe"}}), R"(reply.verdict: "maybe" is not one of ["yes","no"])");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"extra", 1}}), "reply.extra: property not allowed by the schema");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"score", 6}}), "reply.score: 6 is above the maximum 5");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"score", -1}}), "reply.score: -1 is below the minimum 0");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"score", 1.5}}), "reply.score: expected integer, got number");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"note", 3}}), "reply.note: expected string or null, got integer");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"note", "x"}}), "reply.note: is 1 characters, shorter than minLength 2");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"note", "éééééé"}}),
              "reply.note: is 6 characters, longer than maxLength 5");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"note", "ééé"}}), "");  // characters, not bytes
    EXPECT_EQ(problem({{"verdict", "yes"}, {"items", json::array()}}),
              "reply.items: has 0 items, fewer than minItems 1");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"items", {{{"id", 1}}, {{"id", 1}}, {{"id", 1}}}}}),
              "reply.items: has 3 items, more than maxItems 2");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"items", {{{"id", 1}}, {{"id", 2}}}}}),
              "reply.items[1].id: expected the constant 1, got 2");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"items", {json::object()}}}), "reply.items[0].id: missing required property");
    EXPECT_EQ(problem({{"verdict", "yes"}, {"ref", "D"}}), R"(reply.ref: "D" is not one of ["A","B","C"])");
    const std::string any = problem({{"verdict", "yes"}, {"choice", "C"}});
    EXPECT_EQ(any.rfind("reply.choice: matches none of the anyOf alternatives", 0), 0u) << any;
}

TEST(SchemaCheck, AdditionalPropertiesMayBeASchema) {
    const json schema = {{"type", "object"}, {"additionalProperties", {{"type", "number"}}}};
    EXPECT_FALSE(validate({{"a", 1}, {"b", 2.5}}, schema));
    EXPECT_EQ(*validate({{"a", "x"}}, schema, "answer"), "answer.a: expected number, got string");
}

TEST(SchemaCheck, BooleanSchemas) {
    EXPECT_FALSE(validate(42, true));
    EXPECT_TRUE(validate(42, false));
    EXPECT_FALSE(validate(json::object(), json::object()));
}

}  // namespace
}  // namespace memfail::llm
