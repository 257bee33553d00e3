#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Mem0 example adapter (examples/adapters/mem0-node, npm mem0ai) over JSON lines, offline: with
# infer=false every message becomes one memory naming its message id, retrieval respects k and
# ranks the exact message first, reset empties, malformed requests get structured errors, no chat
# model is called and nothing is written outside the adapter's own storage dir. With infer=true a
# scripted model's extraction is stored with the session's message ids as sources.
# Skips (exit 77) when node or the adapter's node_modules are missing: run install.sh there first.
# Usage: mem0_adapter.sh [MEMFAIL [FIXTURES_DIR]] (both ignored; FAKE_LLM names the fake-llm binary).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
adapter_dir="$root/examples/adapters/mem0-node"
# CI sets MEMFAIL_REQUIRE_PEERS=1 (it installs the peers), so there a missing peer fails instead.
skip() {
    if [ "${MEMFAIL_REQUIRE_PEERS:-0}" = 1 ]; then echo "FAIL (MEMFAIL_REQUIRE_PEERS=1): $*" >&2; exit 1; fi
    echo "SKIP: $*" >&2
    exit 77
}
command -v node >/dev/null || skip "node is not installed"
[ -d "$adapter_dir/node_modules/mem0ai" ] || skip "$adapter_dir/node_modules is absent; run $adapter_dir/install.sh first"

fake_llm=${FAKE_LLM:-$root/build/mem0/bin/fake-llm}
[ -x "$fake_llm" ] || { echo "FAIL: FAKE_LLM must name the fake-llm binary (tried $fake_llm)" >&2; exit 1; }

work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Mem0's extraction prompt starts "You are a Memory Extractor"; this script answers it with two
# facts, so infer=true stores something without a model. infer=false must never reach this rule.
cat > "$work/script.json" <<'JSON'
{"rules": [{"name": "mem0-extract", "match": {"contains": "Memory Extractor"},
            "json": {"memory": [{"id": "0", "text": "User keeps a bicycle in the garden shed", "attributed_to": "user"},
                                {"id": "1", "text": "User's sister Alice lives in Lisbon", "attributed_to": "user"}]}}],
 "default": {"reply": "I don't know."}}
JSON
"$fake_llm" --script "$work/script.json" --port 0 --port-file "$work/port" --embedding-dim 64 > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"

mkdir -p "$work/home"
export HOME="$work/home"
export MEMFAIL_MEM0_EMBED_URL="http://127.0.0.1:$(cat "$work/port")/v1"
export MEMFAIL_MEM0_EMBED_DIM=64
unset MEMFAIL_MEM0_DIR MEMFAIL_MEM0_INFER MEM0_TELEMETRY OPENAI_API_KEY

python3 - "$adapter_dir/adapter.mjs" "$work" <<'PY'
import json, os, re, signal, subprocess, sys, time, urllib.request

adapter, work = sys.argv[1], sys.argv[2]
signal.alarm(120)  # a hung adapter fails the test instead of stalling it
base = os.environ["MEMFAIL_MEM0_EMBED_URL"].rsplit("/v1", 1)[0]

def stats():
    return json.load(urllib.request.urlopen(base + "/_fake/stats"))

class Adapter:
    def __init__(self, *args):
        self.stderr = open(os.path.join(work, "adapter-stderr.txt"), "a+")
        self.p = subprocess.Popen(["node", adapter, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.stderr, text=True)
        self.next_id = 0
        self.times = {}
    def raw(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        answer = self.p.stdout.readline()
        assert answer, "the adapter closed stdout; stderr:\n" + open(self.stderr.name).read()
        return json.loads(answer)
    def call(self, op, params):
        self.next_id += 1
        started = time.perf_counter()
        answer = self.raw(json.dumps({"id": self.next_id, "op": op, "params": params}))
        if "result" in answer:
            self.times.setdefault(op, []).append(time.perf_counter() - started)
        assert answer.get("id") == self.next_id, f"{op}: answer id {answer.get('id')} != {self.next_id}"
        return answer
    def ok(self, op, params):
        answer = self.call(op, params)
        assert "result" in answer, f"{op} failed: {answer}"
        return answer["result"]
    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=30) == 0, "the adapter did not exit cleanly at end of input"

session = {"id": "s1", "timestamp": "2026-03-01T09:00:00Z", "messages": [
    {"id": "s1-m1", "role": "user", "content": "I keep my bicycle in the garden shed."},
    {"id": "s1-m2", "role": "assistant", "content": "Noted: the bicycle lives in the shed."},
    {"id": "s1-m3", "role": "user", "content": "My sister Alice moved to Lisbon last spring."},
    {"id": "s1-m4", "role": "user", "content": "   "},
]}
stored = {m["id"]: m["content"] for m in session["messages"] if m["content"].strip()}

# ---- infer=false --------------------------------------------------------------------------------
a = Adapter()
hello = a.ok("hello", {"protocol": 1})
assert hello["protocol"] == 1 and hello["system"].startswith("mem0ai@3.3.1"), hello
caps = hello["capabilities"]
assert caps["provenance"] is True and caps["history"] is False and caps["as_of"] is False, caps
assert a.ok("reset", {}) == {}
assert a.ok("store_conversation", {"session": session}) == {}

memories = a.ok("all_memories", {})["memories"]
by_source = {tuple(m["sources"]): m for m in memories}
assert sorted(by_source) == sorted((i,) for i in stored), f"one memory per non-blank message expected: {memories}"
for (mid,), m in by_source.items():
    assert m["text"] == stored[mid] and m["created_at"] == session["timestamp"], m
assert len({m["id"] for m in memories}) == len(memories), "memory ids are not unique"
assert [m["id"] for m in a.ok("all_memories", {})["memories"]] == [m["id"] for m in memories], "ids changed"

# The fake server's vectors are hashes with no meaning, so only an exact text is sure to be near.
for mid in ("s1-m1", "s1-m3"):
    hits = a.ok("retrieve_memories", {"query": stored[mid], "history": [], "k": 2})["memories"]
    assert 1 <= len(hits) <= 2, f"k=2 gave {len(hits)}: {hits}"
    assert hits[0]["sources"] == [mid] and hits[0]["text"] == stored[mid], hits
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True), f"scores not best first: {scores}"
    assert {h["id"] for h in hits} <= {m["id"] for m in memories}, "retrieve returned an unknown id"
one = a.ok("retrieve_memories", {"query": stored["s1-m2"], "history": [], "k": 1})["memories"]
assert len(one) == 1 and one[0]["sources"] == ["s1-m2"], one
assert a.ok("provenance", {"memory_id": by_source[("s1-m3",)]["id"]}) == {"sources": ["s1-m3"]}

def error_kind(answer):
    assert "error" in answer and set(answer["error"]) >= {"kind", "message"}, answer
    return answer["error"]["kind"]
assert error_kind(a.call("retrieve_memories", {"query": "x", "history": [], "k": "x"})) == "invalid_request"
assert error_kind(a.call("store_conversation", {})) == "invalid_request"
assert error_kind(a.call("history", {"memory_id": "x"})) == "unsupported"
assert error_kind(a.call("state_as_of", {"timestamp": "2026-03-01T09:00:00Z"})) == "unsupported"
assert error_kind(a.call("no_such_op", {})) == "unsupported"
assert error_kind(a.call("provenance", {"memory_id": "no-such-memory"})) == "not_found"
garbage = a.raw("this is not json")
assert garbage["id"] is None and error_kind(garbage) == "invalid_request", garbage
assert len(a.ok("all_memories", {})["memories"]) == len(stored), "an error changed the memory"

assert a.ok("reset", {}) == {}
assert a.ok("all_memories", {})["memories"] == [], "reset left memories behind"
assert a.ok("retrieve_memories", {"query": stored["s1-m1"], "history": [], "k": 3})["memories"] == []
a.close()

log = open(a.stderr.name).read()
storage = re.search(r"storage (\S+)", log)
assert storage, "the adapter did not log its storage dir:\n" + log
assert not os.path.exists(storage.group(1)), f"the temp storage dir {storage.group(1)} was left behind"
assert not os.path.exists(os.path.join(os.environ["HOME"], ".mem0")), "mem0ai wrote under ~/.mem0"
assert stats()["chat"] == 0, "infer=false called the chat model"

for op in ("store_conversation", "retrieve_memories", "all_memories", "reset"):
    t = sorted(a.times[op])
    print(f"mem0 adapter {op}: {len(t)} calls, median {t[len(t) // 2] * 1000:.1f} ms")

# ---- infer=true: the scripted model extracts two facts ------------------------------------------
b = Adapter("--infer")
assert b.ok("hello", {"protocol": 1})["system"].endswith("(infer=true)")
b.ok("store_conversation", {"session": session})
extracted = b.ok("all_memories", {})["memories"]
assert sorted(m["text"] for m in extracted) == ["User keeps a bicycle in the garden shed",
                                                 "User's sister Alice lives in Lisbon"], extracted
for m in extracted:
    assert m["sources"] == list(stored), f"infer=true sources should be the session's stored messages: {m}"
b.ok("reset", {})
assert b.ok("all_memories", {})["memories"] == []
b.close()
assert stats()["chat"] == 1, f"infer=true made {stats()['chat']} chat calls for one session"
PY
echo "mem0 adapter: ok"
