#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// memfail adapter (protocol 1, exec: transport) around the open-source Memory class of npm mem0ai.
//
// memfail writes one JSON request per line to stdin and reads one JSON answer per line from stdout.
// Configuration comes from MEMFAIL_MEM0_* environment variables or the equivalent --flags (a flag
// wins); see README.md. Everything but protocol lines goes to stderr.

import { mkdtempSync, rmSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const PROTOCOL = 1;
const here = path.dirname(fileURLToPath(import.meta.url));
// Every memory lives under one Mem0 user: memfail resets between scenarios, so one scope is enough.
const USER_ID = "memfail";
const MAX_K = 1000;
// getAll() returns 20 memories unless told otherwise; memfail needs all of them.
const ALL_LIMIT = 1_000_000_000;

// ---- stdout is for protocol lines only --------------------------------------------------------
// mem0ai logs through console.log / console.debug (stdout in Node), which would corrupt the
// protocol stream. Keep a private writer for answers and send everything else to stderr.
const writeAnswer = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, encoding, callback) => process.stderr.write(chunk, encoding, callback);
const log = (...parts) => process.stderr.write(`mem0-adapter: ${parts.join(" ")}\n`);

// ---- configuration ----------------------------------------------------------------------------
const FLAGS = {
  "--embed-url": "MEMFAIL_MEM0_EMBED_URL",
  "--embed-model": "MEMFAIL_MEM0_EMBED_MODEL",
  "--embed-dim": "MEMFAIL_MEM0_EMBED_DIM",
  "--infer": "MEMFAIL_MEM0_INFER",
  "--llm-url": "MEMFAIL_MEM0_LLM_URL",
  "--llm-model": "MEMFAIL_MEM0_LLM_MODEL",
  "--threshold": "MEMFAIL_MEM0_THRESHOLD",
  "--dir": "MEMFAIL_MEM0_DIR",
};

function usage(message) {
  process.stderr.write(
    `mem0-adapter: ${message}\nusage: node adapter.mjs [--embed-url URL] [--embed-model NAME] [--embed-dim N]\n` +
      `       [--infer[=true|false]] [--llm-url URL] [--llm-model NAME] [--threshold X] [--dir PATH]\n` +
      `Each flag may also be given as the environment variable named in README.md.\n`,
  );
  process.exit(2);
}

function readSettings(argv, env) {
  const s = {};
  for (const name of Object.values(FLAGS)) if (env[name] !== undefined && env[name] !== "") s[name] = env[name];
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf("=");
    if (eq > 0) [arg, value] = [arg.slice(0, eq), arg.slice(eq + 1)];
    if (arg === "--help" || arg === "-h") usage("an adapter for memfail; it speaks JSON lines on stdin/stdout");
    const name = FLAGS[arg];
    if (!name) usage(`unknown argument '${argv[i]}'`);
    if (value === undefined) {
      if (arg === "--infer") value = "true";
      else if (i + 1 < argv.length) value = argv[++i];
      else usage(`${arg} needs a value`);
    }
    s[name] = value;
  }
  return s;
}

function parseBool(text, what) {
  const t = String(text).trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(t)) return true;
  if (["0", "false", "no", "off"].includes(t)) return false;
  usage(`${what} must be true or false, not '${text}'`);
}

const settings = readSettings(process.argv.slice(2), process.env);
const config = {
  embedUrl: settings.MEMFAIL_MEM0_EMBED_URL ?? "http://127.0.0.1:8420/v1",
  embedModel: settings.MEMFAIL_MEM0_EMBED_MODEL ?? "text-embedding-3-small",
  embedDim: undefined,
  infer: settings.MEMFAIL_MEM0_INFER === undefined ? false : parseBool(settings.MEMFAIL_MEM0_INFER, "MEMFAIL_MEM0_INFER"),
  llmUrl: settings.MEMFAIL_MEM0_LLM_URL,
  llmModel: settings.MEMFAIL_MEM0_LLM_MODEL ?? "gpt-4o-mini",
  threshold: undefined,
  dir: settings.MEMFAIL_MEM0_DIR,
};
if (settings.MEMFAIL_MEM0_EMBED_DIM !== undefined) {
  const dim = Number(settings.MEMFAIL_MEM0_EMBED_DIM);
  if (!Number.isInteger(dim) || dim < 1) usage(`MEMFAIL_MEM0_EMBED_DIM must be a positive integer, not '${settings.MEMFAIL_MEM0_EMBED_DIM}'`);
  config.embedDim = dim;
}
if (settings.MEMFAIL_MEM0_THRESHOLD !== undefined) {
  const t = Number(settings.MEMFAIL_MEM0_THRESHOLD);
  if (!(t >= 0 && t <= 1)) usage(`MEMFAIL_MEM0_THRESHOLD must be a number in [0, 1], not '${settings.MEMFAIL_MEM0_THRESHOLD}'`);
  config.threshold = t;
}
if (config.infer && !config.llmUrl) config.llmUrl = config.embedUrl;

// ---- storage ----------------------------------------------------------------------------------
// Mem0's "memory" vector store is SQLite in a file (default ~/.mem0/vector_store.db), and Mem0 keeps
// an anonymous id in $MEM0_DIR/config.json even with telemetry off. Both go to one directory of our
// own, so nothing outside it is touched and `reset` really empties what this adapter sees.
let ownDir = false;
if (!config.dir) {
  config.dir = mkdtempSync(path.join(os.tmpdir(), "memfail-mem0-"));
  ownDir = true;
}
process.env.MEM0_DIR = config.dir;
// mem0ai reads MEM0_TELEMETRY once, when it is imported: set it before the import below.
process.env.MEM0_TELEMETRY = "false";

function cleanup() {
  if (ownDir) {
    ownDir = false;
    try {
      rmSync(config.dir, { recursive: true, force: true });
    } catch {
      // a temp dir left behind is harmless
    }
  }
}

// ---- Mem0 -------------------------------------------------------------------------------------
let Memory;
let mem0Version = "unknown";
try {
  ({ Memory } = await import("mem0ai/oss"));
} catch (e) {
  log(`cannot load mem0ai (${e.message}); run install.sh in ${here}`);
  cleanup();
  process.exit(3);
}
try {
  // mem0ai's "exports" hide package.json: find it above the resolved entry point.
  let dir = path.dirname(fileURLToPath(import.meta.resolve("mem0ai/oss")));
  while (path.basename(dir) !== "mem0ai" && path.dirname(dir) !== dir) dir = path.dirname(dir);
  mem0Version = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).version;
} catch {
  // the version only decorates the system name
}

// A real key if the user has one (a hosted endpoint); local servers accept anything.
const apiKey = process.env.OPENAI_API_KEY || "memfail-local-no-key";
const memory = new Memory({
  version: "v1.1",
  embedder: {
    provider: "openai",
    // embeddingDims is deliberately not passed: Mem0 would send it as the "dimensions" request field,
    // which local servers may refuse. The vector store gets the dimension instead.
    config: { apiKey, baseURL: config.embedUrl, model: config.embedModel },
  },
  vectorStore: {
    provider: "memory",
    config: {
      collectionName: "memories",
      dbPath: path.join(config.dir, "vector_store.db"),
      ...(config.embedDim !== undefined && { dimension: config.embedDim }),
    },
  },
  // With infer=false the LLM is never called; it still points at the local URL so nothing can
  // reach a default host by accident.
  llm: { provider: "openai", config: { apiKey, baseURL: config.infer ? config.llmUrl : config.embedUrl, model: config.llmModel } },
  disableHistory: true,
});
const systemName = `mem0ai@${mem0Version} (infer=${config.infer})`;
log(`${systemName}; embeddings ${config.embedUrl} model ${config.embedModel}` +
    (config.infer ? `; llm ${config.llmUrl} model ${config.llmModel}` : "") + `; storage ${config.dir}`);

// ---- protocol ---------------------------------------------------------------------------------
class ProtocolError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}
const invalid = (message) => new ProtocolError("invalid_request", message);

function requireString(object, field, where) {
  const value = object[field];
  if (value === undefined || value === null) throw invalid(`${where}${field}: required field is missing`);
  if (typeof value !== "string") throw invalid(`${where}${field}: must be a string, got ${JSON.stringify(value)}`);
  return value;
}

function parseSession(session) {
  if (session === undefined || session === null) throw invalid("session: required field is missing");
  if (typeof session !== "object" || Array.isArray(session)) throw invalid("session: must be an object");
  const id = requireString(session, "id", "session.");
  const timestamp = requireString(session, "timestamp", "session.");
  if (!Array.isArray(session.messages)) throw invalid("session.messages: must be an array");
  const messages = session.messages.map((m, i) => {
    const where = `session.messages[${i}].`;
    if (typeof m !== "object" || m === null || Array.isArray(m)) throw invalid(`${where.slice(0, -1)}: must be an object`);
    return { id: requireString(m, "id", where), role: requireString(m, "role", where), content: requireString(m, "content", where) };
  });
  return { id, timestamp, messages };
}

// Mem0 skips system messages and refuses blank ones; keep what it would store.
const storable = (m) => m.role !== "system" && m.content.trim() !== "";

// The message ids a Mem0 memory came from, read back from the metadata we stored with it.
function sourcesOf(metadata = {}) {
  if (typeof metadata.message_id === "string") return [metadata.message_id];
  if (Array.isArray(metadata.message_ids)) return metadata.message_ids.filter((s) => typeof s === "string");
  return [];
}

function toMemory(item, withScore) {
  const metadata = item.metadata ?? {};
  const out = { id: String(item.id), text: item.memory ?? "" };
  // The conversation's time, not the wall clock at which Mem0 wrote the row.
  const created = typeof metadata.timestamp === "string" ? metadata.timestamp : item.createdAt;
  if (created) out.created_at = created;
  out.sources = sourcesOf(metadata);
  if (withScore && typeof item.score === "number" && Number.isFinite(item.score)) out.score = item.score;
  return out;
}

async function allMemories() {
  const { results } = await memory.getAll({ filters: { user_id: USER_ID }, topK: ALL_LIMIT });
  return results.map((item) => toMemory(item, false));
}

const operations = {
  async hello(params) {
    if (params.protocol === undefined || params.protocol === null) throw invalid("protocol: required field is missing");
    if (!Number.isInteger(params.protocol)) throw invalid(`protocol: must be an integer, got ${JSON.stringify(params.protocol)}`);
    return {
      protocol: PROTOCOL,
      system: systemName,
      capabilities: { provenance: true, history: false, as_of: false, provenance_op: true, idempotent_store: false, answer: false },
    };
  },

  async store_conversation(params) {
    const session = parseSession(params.session);
    const messages = session.messages.filter(storable);
    if (messages.length === 0) return {};
    if (!config.infer) {
      // One add() per message: Mem0 attaches one metadata object to everything an add() call
      // stores, so this is the only way each memory can name the message it holds.
      for (const m of messages) {
        await memory.add([{ role: m.role, content: m.content }], {
          userId: USER_ID,
          infer: false,
          metadata: { message_id: m.id, session_id: session.id, timestamp: session.timestamp, role: m.role },
        });
      }
    } else {
      // Mem0 extracts facts from the whole session at once and does not say which message each
      // came from: every memory it writes names all the session's messages it was shown.
      await memory.add(messages.map((m) => ({ role: m.role, content: m.content })), {
        userId: USER_ID,
        infer: true,
        metadata: { message_ids: messages.map((m) => m.id), session_id: session.id, timestamp: session.timestamp },
      });
    }
    return {};
  },

  async retrieve_memories(params) {
    const query = requireString(params, "query", "");
    if (params.history !== undefined && params.history !== null && !Array.isArray(params.history))
      throw invalid("history: must be an array");
    if (params.k === undefined || params.k === null) throw invalid("k: required field is missing");
    if (!Number.isInteger(params.k)) throw invalid(`k: must be an integer, got ${JSON.stringify(params.k)}`);
    // Clamped like memfail's own server: k=0 or a huge k are answerable.
    const k = Math.min(Math.max(params.k, 1), MAX_K);
    // Mem0's search takes no conversation history: the query alone is searched.
    const options = { filters: { user_id: USER_ID }, topK: k };
    if (config.threshold !== undefined) options.threshold = config.threshold;
    const { results } = await memory.search(query, options);
    return { memories: results.slice(0, k).map((item) => toMemory(item, true)) };
  },

  async all_memories() {
    return { memories: await allMemories() };
  },

  async reset() {
    await memory.reset();
    const left = await allMemories();
    if (left.length !== 0) {
      // Should not happen (reset drops the table); fall back to deleting one by one.
      await memory.deleteAll({ userId: USER_ID });
      const still = await allMemories();
      if (still.length !== 0) throw new ProtocolError("internal", `reset left ${still.length} memories behind`);
    }
    return {};
  },

  async provenance(params) {
    const id = requireString(params, "memory_id", "");
    const item = await memory.get(id);
    if (!item) throw new ProtocolError("not_found", `no memory with id '${id}'`);
    return { sources: sourcesOf(item.metadata) };
  },
};

const unsupported = {
  history: "history is not supported: the adapter runs Mem0 with disableHistory",
  state_as_of: "state_as_of is not supported: Mem0 keeps no past states",
  answer: "answer is not supported: Mem0 stores and retrieves memories; memfail's test-taker answers from them",
};

// A failure inside Mem0 or its HTTP client, said in one line, with the endpoint when it is one.
function describeFailure(e) {
  let message = e && e.message ? e.message : String(e);
  const cause = e && e.cause && e.cause.message ? ` (${e.cause.message})` : "";
  if (e && (e.name === "APIConnectionError" || /Connection error/i.test(message)))
    message = `cannot reach the OpenAI-compatible endpoint (embeddings ${config.embedUrl}${config.infer ? `, llm ${config.llmUrl}` : ""}): ${message}`;
  return (message + cause).replace(/\s+/g, " ").trim();
}

async function handle(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (e) {
    return { id: null, error: { kind: "invalid_request", message: `the request is not JSON: ${e.message}` } };
  }
  if (typeof request !== "object" || request === null || Array.isArray(request))
    return { id: null, error: { kind: "invalid_request", message: "the request is not a JSON object" } };
  const id = request.id ?? null;
  const op = request.op;
  const params = request.params ?? {};
  try {
    if (typeof op !== "string") throw invalid("op: must be a string");
    if (typeof params !== "object" || Array.isArray(params)) throw invalid("params: must be an object");
    if (unsupported[op]) throw new ProtocolError("unsupported", unsupported[op]);
    if (!Object.hasOwn(operations, op))
      throw new ProtocolError("unsupported", `unknown operation '${op}'; operations: ${Object.keys(operations).join(", ")}`);
    const started = process.hrtime.bigint();
    const result = await operations[op](params);
    if (process.env.MEMFAIL_MEM0_TIMING)
      log(`${op} took ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(1)} ms`);
    return { id, result };
  } catch (e) {
    if (e instanceof ProtocolError) return { id, error: { kind: e.kind, message: e.message } };
    const message = describeFailure(e);
    log(`${op} failed: ${message}`);
    return { id, error: { kind: "internal", message } };
  }
}

// Requests are answered strictly one at a time, in order: each waits for the one before it.
let queue = Promise.resolve();
const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  if (line.trim() === "") return;
  queue = queue.then(async () => {
    const answer = await handle(line);
    await new Promise((resolve) => writeAnswer(JSON.stringify(answer) + "\n", resolve));
  });
});
input.on("close", () => {
  queue.then(() => {
    cleanup();
    process.exit(0);
  });
});
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
  process.on(signal, () => {
    cleanup();
    process.exit(0);
  });
}
process.on("exit", cleanup);
// memfail went away (closed the pipe): nothing more can be answered.
process.stdout.on("error", () => {
  cleanup();
  process.exit(0);
});
