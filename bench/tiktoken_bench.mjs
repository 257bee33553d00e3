// SPDX-License-Identifier: MIT
// Peer measurement for bench_tokenizer: encode throughput of the npm `tiktoken` package (OpenAI's
// Rust tiktoken compiled to WASM) on the same bytes, under node.
//
//   node tiktoken_bench.mjs <node_modules dir> <encoding> <text file> <runs> [more text files...]
//
// stdout, one line per text file: {"tiktoken": version, "encoding", "file", "bytes", "tokens",
// "load_s", "median_s", "runs_s": [...]} (the encoding is loaded once, load_s is that load)
// Exit 3 when the package cannot be loaded.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const [modules, encoding, file, runsArg, ...more] = process.argv.slice(2);
const runs = Math.max(1, Number.parseInt(runsArg ?? "5", 10));
const require = createRequire(path.join(path.resolve(modules ?? "."), "noop.js"));
let tiktoken, version;
try {
  tiktoken = require("tiktoken");
  version = JSON.parse(readFileSync(path.join(path.dirname(require.resolve("tiktoken")), "package.json"), "utf8")).version;
} catch (err) {
  process.stderr.write(`the npm package tiktoken is not installed under ${modules} (${err.message})\n`);
  process.exit(3);
}
const t0 = process.hrtime.bigint();
const enc = tiktoken.get_encoding(encoding);
const loadS = Number(process.hrtime.bigint() - t0) / 1e9;
for (const name of [file, ...more]) {
  const text = readFileSync(name, "utf8");
  let tokens = enc.encode_ordinary(text).length;  // warm-up run, also the count to compare
  const times = [];
  for (let i = 0; i < runs; ++i) {
    const start = process.hrtime.bigint();
    const ids = enc.encode_ordinary(text);
    times.push(Number(process.hrtime.bigint() - start) / 1e9);
    if (ids.length !== tokens) tokens = -1;  // would mean a nondeterministic encoder
  }
  const sorted = [...times].sort((a, b) => a - b);
  process.stdout.write(JSON.stringify({
    tiktoken: version, encoding, file: name, bytes: Buffer.byteLength(text, "utf8"), tokens,
    load_s: loadS, median_s: sorted[Math.floor(sorted.length / 2)], runs_s: times,
  }) + "\n");
}
enc.free();
