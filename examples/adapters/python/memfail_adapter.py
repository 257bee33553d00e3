#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A memfail adapter skeleton: plug your own memory system into memfail.

Speaks the memfail adapter protocol, version 1 (docs/ADAPTERS.md), over the `exec:` transport:
memfail starts this script, writes one JSON request per line to its stdin and reads one JSON
response per line from its stdout.

    memfail conformance --system 'exec:cmd=python3 examples/adapters/python/memfail_adapter.py'
    memfail run --system 'exec:cmd=python3 examples/adapters/python/memfail_adapter.py'

`--answers` also announces the optional `answer` operation (the system answers a question itself)
with a placeholder answer; see `InMemorySystem.answer`.

The file has two halves:

  * `InMemorySystem` -- the memory system. This is the part you replace: keep the method names
    and the shapes they return, and call your own library inside them (see README.md for Mem0).
  * `serve()` and friends -- the protocol loop. You should not need to touch it: it validates
    requests, turns exceptions into structured errors and keeps stdout clean.

Standard library only; Python 3.9 or newer.
"""

import json
import math
import re
import sys
import traceback

PROTOCOL_VERSION = 1


class AdapterError(Exception):
    """An error answered to memfail as {"error": {"kind": ..., "message": ...}}.

    Kinds: "invalid_request" (malformed parameters), "unsupported" (optional operation not
    offered), "not_found" (unknown memory id), "internal" (anything else).
    """

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


def log(*parts):
    """Logs go to stderr: memfail shows them prefixed with "[adapter] ". Never print to stdout."""
    print(*parts, file=sys.stderr, flush=True)


# =================================================================================================
# The memory system: replace this class with your own.
#
# Inputs are plain dicts and lists, already checked by the protocol loop:
#   session  {"id": str, "timestamp": str, "messages": [{"id": str, "role": str, "content": str}]}
# Outputs are memories:
#   {"id": str, "text": str, "created_at": str, "updated_at": str, "sources": [message ids]}
# (`retrieve_memories` may add "score"; only "id" and "text" are required.)
#
# Optional operations (history, state_as_of, provenance, answer): delete a method, or raise
# AdapterError("unsupported", ...), and memfail is told the operation is unsupported. Keep
# CAPABILITIES in step with what you implement: `memfail conformance` checks that they agree.
# `answer` is for systems that are agents with memory: they answer a question themselves, and
# memfail grades that answer instead of its own test-taker's. It is answered only while
# capabilities["answer"] is true.
# =================================================================================================

# Small words that carry no meaning for matching; without this list "the" would tie everything.
_STOPWORDS = frozenset(
    """a an and are as at be but by did do does for from had has have he her his how i i'm in is it
    its me my of on or our she so that the their them then there they this to was we were what
    when where which who why will with you your""".split()
)


def _terms(text):
    """Lower-case content words with a crude plural strip, so "peanuts" matches "peanut"."""
    out = set()
    for word in re.findall(r"[\w']+", text.lower()):
        word = word.strip("'")
        if not word or word in _STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.add(word)
    return out


class InMemorySystem:
    """Keeps every message word for word and retrieves by word overlap.

    Deliberately simple: it is here to show the shapes, not to be a good memory system. One memory
    per message, with sources=[message id]; ids are stable ("m-1", "m-2", ... in storage order);
    storing the same message twice keeps one copy.
    """

    name = "python-example"
    capabilities = {
        "provenance": True,  # every memory lists the message ids it came from
        "history": False,  # history() below answers "unsupported"
        "as_of": True,  # state_as_of() works
        "provenance_op": True,  # provenance() works
        "idempotent_store": True,  # storing a session twice keeps one copy
        # answer() below is a placeholder: set this true (or pass --answers) only once it is your
        # agent answering, or memfail grades the placeholder's answers as your system's.
        "answer": False,
    }

    def __init__(self):
        self.reset()

    def reset(self):
        self._memories = []  # in storage order
        self._by_message = {}  # message id -> memory, for idempotent storage
        self._by_id = {}

    def store_conversation(self, session):
        for message in session["messages"]:
            if message["id"] in self._by_message:
                continue
            memory = {
                "id": "m-%d" % (len(self._memories) + 1),
                "text": message["content"],
                "created_at": session["timestamp"],
                "updated_at": session["timestamp"],
                "sources": [message["id"]],
            }
            self._memories.append(memory)
            self._by_message[message["id"]] = memory
            self._by_id[memory["id"]] = memory

    def retrieve_memories(self, query, history, k):
        # Score: shared content words, divided by the square root of the memory's length, so a
        # short message that names the query's words beats a long one that mentions them in passing.
        wanted = _terms(query)
        scored = []
        for position, memory in enumerate(self._memories):
            have = _terms(memory["text"])
            shared = len(wanted & have)
            if shared == 0:
                continue
            score = shared / math.sqrt(len(have))
            scored.append((-score, position, memory))
        scored.sort(key=lambda item: (item[0], item[1]))  # best first; ties in storage order
        return [dict(memory, score=round(-neg, 6)) for neg, _, memory in scored[:k]]

    def all_memories(self):
        return [dict(memory) for memory in self._memories]

    def state_as_of(self, timestamp):
        # ISO 8601 timestamps in the same zone compare correctly as strings.
        return [dict(m) for m in self._memories if m["created_at"] <= timestamp]

    def provenance(self, memory_id):
        memory = self._by_id.get(memory_id)
        if memory is None:
            raise AdapterError("not_found", "no memory with id %r" % memory_id)
        return list(memory["sources"])

    def history(self, memory_id):
        # Memories here never change, so there is no history to tell; shown as the way to say so.
        raise AdapterError("unsupported", "this adapter keeps no history of changes")

    def answer(self, query, history):
        # PLACEHOLDER: replace with your agent answering `query` from its memory, given the
        # conversation so far (`history`, possibly empty). Here: the text of the best matching
        # memory, word for word. Return {"answer": str, "confidence": 0..1 (optional),
        # "sources": [ids of the messages the answer rests on] (optional)}.
        best = self.retrieve_memories(query, history, 1)
        if not best:
            return {"answer": "I don't know.", "sources": []}
        return {"answer": best[0]["text"], "confidence": 0.5, "sources": list(best[0]["sources"])}


# =================================================================================================
# The protocol loop: requests in, responses out. You should not need to change anything below.
# =================================================================================================


def _need(params, key, kind, where=None):
    """params[key] checked against a Python type; raises invalid_request naming the field."""
    name = where or key
    if key not in params:
        raise AdapterError("invalid_request", "missing field %r" % name)
    value = params[key]
    # bool is an int in Python; a JSON true is never a valid number here.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise AdapterError("invalid_request", "field %r must be %s" % (name, _type_name(kind)))
    return value


def _type_name(kind):
    return {str: "a string", int: "an integer", list: "an array", dict: "an object"}.get(kind, str(kind))


def _message(value, where):
    if not isinstance(value, dict):
        raise AdapterError("invalid_request", "field %r must be an object" % where)
    return {
        "id": _need(value, "id", str, where + ".id"),
        "role": _need(value, "role", str, where + ".role"),
        "content": _need(value, "content", str, where + ".content"),
    }


def _session(params):
    raw = _need(params, "session", dict)
    messages = _need(raw, "messages", list, "session.messages")
    return {
        "id": _need(raw, "id", str, "session.id"),
        "timestamp": raw.get("timestamp", "") if isinstance(raw.get("timestamp", ""), str) else "",
        "messages": [_message(m, "session.messages[%d]" % i) for i, m in enumerate(messages)],
    }


def _memory_out(memory):
    """Checks what the system returned, so a bug in it is reported here and not as a bad reply."""
    if not isinstance(memory, dict) or not isinstance(memory.get("id"), str) or not isinstance(memory.get("text"), str):
        raise AdapterError("internal", "the memory system returned a memory without a string id and text")
    return memory


def _history(params):
    history = params.get("history", [])
    if not isinstance(history, list):
        raise AdapterError("invalid_request", "field 'history' must be an array")
    return [_message(m, "history[%d]" % i) for i, m in enumerate(history)]


def _answer_out(reply):
    """Checks what the system's answer() returned, as _memory_out does for memories."""
    if not isinstance(reply, dict) or not isinstance(reply.get("answer"), str):
        raise AdapterError("internal", "the system's answer() returned no string \"answer\"")
    confidence = reply.get("confidence")
    if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, (int, float))
                                   or not 0 <= confidence <= 1):
        raise AdapterError("internal", "the system's answer() returned a confidence that is not a number from 0 to 1")
    sources = reply.get("sources", [])
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise AdapterError("internal", "the system's answer() returned sources that are not a list of message ids")
    out = {"answer": reply["answer"], "sources": sources}
    if confidence is not None:
        out["confidence"] = confidence
    return out


def _optional(system, name):
    method = getattr(system, name, None)
    if method is None:
        raise AdapterError("unsupported", "operation %r is not supported by %s" % (name, system.name))
    return method


def handle(system, op, params):
    """One operation -> its result object. Raises AdapterError for anything memfail should hear."""
    if not isinstance(params, dict):
        raise AdapterError("invalid_request", "params must be an object")
    if op == "hello":
        return {"protocol": PROTOCOL_VERSION, "system": system.name, "capabilities": dict(system.capabilities)}
    if op == "store_conversation":
        system.store_conversation(_session(params))
        return {}
    if op == "retrieve_memories":
        query = _need(params, "query", str)
        k = _need(params, "k", int)
        if k < 0:
            raise AdapterError("invalid_request", "field 'k' must not be negative")
        history = _history(params)
        memories = system.retrieve_memories(query, history, k)
        return {"memories": [_memory_out(m) for m in memories[:k]]}
    if op == "all_memories":
        return {"memories": [_memory_out(m) for m in system.all_memories()]}
    if op == "reset":
        system.reset()
        return {}
    if op == "history":
        memory_id = _need(params, "memory_id", str)
        return {"events": list(_optional(system, "history")(memory_id))}
    if op == "state_as_of":
        timestamp = _need(params, "timestamp", str)
        return {"memories": [_memory_out(m) for m in _optional(system, "state_as_of")(timestamp)]}
    if op == "provenance":
        memory_id = _need(params, "memory_id", str)
        return {"sources": list(_optional(system, "provenance")(memory_id))}
    if op == "answer":
        # Announced or not, like every optional operation: memfail only asks when it is announced.
        if not system.capabilities.get("answer"):
            raise AdapterError("unsupported", "operation 'answer' is not supported by %s" % system.name)
        query = _need(params, "query", str)
        return _answer_out(_optional(system, "answer")(query, _history(params)))
    raise AdapterError("unsupported", "unknown operation %r" % op)


def _answer(request_id, system, op, params):
    try:
        return {"id": request_id, "result": handle(system, op, params)}
    except AdapterError as e:
        return {"id": request_id, "error": {"kind": e.kind, "message": e.message}}
    except NotImplementedError as e:
        return {"id": request_id, "error": {"kind": "unsupported", "message": str(e) or "not implemented"}}
    except Exception as e:  # a bug or a failure inside the memory system: report it, keep serving
        log("%s failed:\n%s" % (op, traceback.format_exc()))
        return {"id": request_id, "error": {"kind": "internal", "message": "%s: %s" % (type(e).__name__, e)}}


def serve(system, stdin=None, stdout=None):
    """Answers requests from stdin until it closes."""
    stdin = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    # Anything the memory system prints would corrupt the protocol stream: send it to stderr.
    sys.stdout = sys.stderr
    for raw in stdin:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            continue
        request_id = None
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request must be a JSON object")
            request_id = request.get("id")
            op = request.get("op")
            if not isinstance(op, str):
                raise ValueError("a request needs a string 'op'")
            response = _answer(request_id, system, op, request.get("params", {}))
        except ValueError as e:  # not JSON, or not a request
            log("bad request line: %s" % e)
            response = {"id": request_id, "error": {"kind": "invalid_request", "message": str(e)}}
        # ensure_ascii keeps the line pure ASCII; json.dumps never emits a raw newline.
        out.write(json.dumps(response).encode("utf-8") + b"\n")
        out.flush()


def main():
    system = InMemorySystem()
    if "--answers" in sys.argv[1:]:  # try the answer operation with the placeholder answer()
        system.capabilities = dict(system.capabilities, answer=True)
    if "--not-idempotent" in sys.argv[1:]:  # declare a store that keeps a copy per store (resume tests)
        system.capabilities = dict(system.capabilities, idempotent_store=False)
    log("%s: protocol %d, reading requests on stdin" % (system.name, PROTOCOL_VERSION))
    try:
        serve(system)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
