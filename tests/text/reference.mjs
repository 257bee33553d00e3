// SPDX-License-Identifier: MIT
// Reference token ids from the npm `tiktoken` package (OpenAI's Rust tiktoken compiled to WASM).
//
//   node reference.mjs <node_modules dir> <input.json>
//
// input.json: {"encodings": ["cl100k_base", ...], "texts": ["...", ...]}
// stdout:     {"tiktoken": "<version>", "ids": {"cl100k_base": [[id, ...], ...], ...}}
// Exit 3 when the package cannot be loaded (the C++ test then skips with this stderr text).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const [modules, input] = process.argv.slice(2);
if (!modules || !input) {
  process.stderr.write("usage: node reference.mjs <node_modules dir> <input.json>\n");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(modules), "noop.js"));
let tiktoken, version;
try {
  tiktoken = require("tiktoken");
  version = JSON.parse(readFileSync(path.join(path.dirname(require.resolve("tiktoken")), "package.json"), "utf8")).version;
} catch (err) {
  process.stderr.write(`the npm package tiktoken is not installed under ${modules} (${err.message}); run scripts/install-deps\n`);
  process.exit(3);
}
const request = JSON.parse(readFileSync(input, "utf8"));
const ids = {};
for (const name of request.encodings) {
  const enc = tiktoken.get_encoding(name);
  // encode_ordinary: special-token text is plain text, as memfail's Tokenizer::encode treats it.
  ids[name] = request.texts.map((text) => Array.from(enc.encode_ordinary(text)));
  enc.free();
}
process.stdout.write(JSON.stringify({ tiktoken: version, ids }));
