// SPDX-License-Identifier: MIT
// Local JSON-schema validation of model replies: servers without structured output (and strict
// servers with bugs) can return anything, so every schema reply is checked here before use.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace memfail::llm {

// The first problem of `value` against `schema`, as "<path>: <problem>" with the path rooted at
// `root` ("reply.items[2].verdict: missing required property"); nullopt when valid.
// Supported keywords (the subset structured-output schemas use): type (a name or a list of names),
// properties, required, additionalProperties (false or a schema), items, enum, const, minItems,
// maxItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, anyOf,
// allOf and local $ref ("#/$defs/name"). Unknown keywords are ignored, as JSON Schema says.
std::optional<std::string> validate(const nlohmann::json& value, const nlohmann::json& schema,
                                    std::string_view root = "reply");

}  // namespace memfail::llm
