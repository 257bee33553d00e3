#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a LongMemEval-shaped file of synthetic haystacks, for the scale benchmark.

  longmemeval_synth.py OUT.json [--instances 500] [--tokens 115000] [--seed 7]

Each instance has the published fields (question_id, question_type, question, answer,
question_date, haystack_session_ids, haystack_dates, haystack_sessions, answer_session_ids) and a
haystack of about --tokens cl100k_base tokens (1.08 a word for this vocabulary, measured) in sessions of user/assistant turns; one turn of one
session states the answer (has_answer: true), as in the S variant (about 115k tokens a question).
Question types and abstention ids (_abs) are spread as in the release. Written as it goes: memory
stays small whatever the size.
"""
import argparse
import json
import random

TYPES = ["single-session-user", "single-session-assistant", "single-session-preference",
         "temporal-reasoning", "knowledge-update", "multi-session"]
WORDS = ("the a of and to in is was that for it with as on at by this from they we she he you were had have "
         "will would could morning river garden letter station window market winter question answer memory "
         "system record meeting doctor teacher village kitchen journey evening quietly always never often "
         "almost suddenly together slowly again later walked wrote remembered forgot carried opened noticed "
         "promised borrowed bright heavy narrow patient ordinary careful distant familiar strange recipe "
         "budget flight hotel museum concert bicycle library weekend project deadline colleague neighbour "
         "sister brother cousin birthday holiday coffee tea breakfast dinner lunch soup bread train ticket").split()
THINGS = ["a blue ceramic teapot", "a vintage road bike", "a pottery class", "a trip to Lisbon",
          "a golden retriever named Biscuit", "a new job at the observatory", "a sourdough starter",
          "a marathon in October", "a rooftop garden", "a second-hand piano"]


def sentence(rng, lo=8, hi=22):
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).capitalize() + "."


def turn_text(rng, sentences):
    return " ".join(sentence(rng) for _ in range(sentences))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--instances", type=int, default=500)
    p.add_argument("--tokens", type=int, default=115000, help="haystack tokens per instance (about)")
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    rng = random.Random(a.seed)
    words_per_instance = int(a.tokens / 1.08)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("[")
        for i in range(a.instances):
            qtype = TYPES[i % len(TYPES)]
            abstain = i % 17 == 0
            qid = f"synth{i:05d}" + ("_abs" if abstain else "")
            thing = rng.choice(THINGS)
            sessions, ids, dates, answer_ids = [], [], [], []
            words, s = 0, 0
            answer_session = None
            while words < words_per_instance:
                turns = []
                for t in range(rng.randint(4, 12)):
                    text = turn_text(rng, rng.randint(2, 7))
                    turns.append({"role": "user" if t % 2 == 0 else "assistant", "content": text})
                    words += text.count(" ") + 1
                sessions.append(turns)
                ids.append(f"{qid}_s{s}")
                dates.append(f"2023/{1 + s // 28 % 12:02d}/{1 + s % 28:02d} (Mon) {9 + s % 10:02d}:{s % 60:02d}")
                s += 1
            if not abstain:
                answer_session = rng.randrange(len(sessions))
                turn = rng.randrange(0, len(sessions[answer_session]), 2)
                sessions[answer_session][turn] = {"role": "user", "has_answer": True,
                                                  "content": f"By the way, I finally got {thing} last week. "
                                                             + turn_text(rng, 2)}
                answer_ids.append(ids[answer_session])
            item = {"question_id": qid, "question_type": qtype,
                    "question": "What did I finally get last week?",
                    "answer": thing if not abstain else "The information provided is not enough.",
                    "question_date": "2023/12/30 (Sat) 10:00",
                    "haystack_session_ids": ids, "haystack_dates": dates, "haystack_sessions": sessions,
                    "answer_session_ids": answer_ids}
            if i:
                f.write(",")
            f.write(json.dumps(item, ensure_ascii=False))
        f.write("]")


if __name__ == "__main__":
    main()
