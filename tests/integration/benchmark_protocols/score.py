#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The independent scorer of benchmark_protocols.sh: the authors' scoring rules, written here from
# their published code (LoCoMo task_eval/evaluation.py and gpt_utils.py's get_cat_5_answer;
# LongMemEval src/evaluation/evaluate_qa.py and print_qa_metrics.py), applied to the scripted raw
# replies, and compared with the benchmark table memfail printed (report --format csv --table
# benchmark). Uses NLTK's PorterStemmer and the `regex` module, as the authors do.
# Usage: score.py EXPECTED_JSON REQUEST_LOG BENCHMARK_CSV
import csv, json, string, sys
from collections import Counter, defaultdict

import regex
from nltk.stem import PorterStemmer

expected = json.load(open(sys.argv[1]))
log = [json.loads(line) for line in open(sys.argv[2])]
table = list(csv.DictReader(open(sys.argv[3])))
ps = PorterStemmer()


def normalize_answer(s):
    s = s.replace(',', "")
    s = s.lower()
    s = ''.join(ch for ch in s if ch not in set(string.punctuation))
    s = regex.sub(r'\b(a|an|the|and)\b', ' ', s)
    return ' '.join(s.split())


def f1_score(prediction, ground_truth):
    p = [ps.stem(w) for w in normalize_answer(prediction).split()]
    g = [ps.stem(w) for w in normalize_answer(ground_truth).split()]
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def f1_multi(prediction, ground_truth):
    preds = [x.strip() for x in prediction.split(',')]
    golds = [x.strip() for x in ground_truth.split(',')]
    return sum(max(f1_score(p, g) for p in preds) for g in golds) / len(golds)


def cat5_answer(prediction, key):
    prediction = prediction.strip().lower()
    if len(prediction) == 1:
        return key['a'] if 'a' in prediction else key['b']
    if len(prediction) == 3:
        return key['a'] if '(a)' in prediction else key['b']
    return prediction


def options_asked(token):
    # The two options as the request asked them: "(a) X (b) Y." in the test-taker's prompt.
    for entry in log:
        for m in entry.get("messages", []):
            content = m.get("content", "")
            if token in content and "(a) " in content:
                tail = content[content.index(token):]
                a = tail[tail.index("(a) ") + 4:tail.index(" (b) ")]
                b = tail[tail.index(" (b) ") + 5:tail.index(".  Short answer:")]
                return {'a': a, 'b': b}
    raise SystemExit("no adversarial prompt was logged for " + token)


def memfail_score(dataset, slice_name):
    rows = [r for r in table if r["dataset"] == dataset and r["slice"] == slice_name]
    if len(rows) != 1:
        raise SystemExit("memfail's table has %d rows for %s / %s" % (len(rows), dataset, slice_name))
    return float(rows[0]["score"])


failures = []

# LoCoMo: each question's F1 rounded to 3 decimals (evaluate_qa stores round(score, 3)).
names = {1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop", 5: "5 adversarial"}
by_category, everything = defaultdict(list), []
for q in expected["locomo"]:
    c, gold, reply = q["category"], q["gold"], q["reply"]
    prediction = reply.strip()
    if c == 5:
        prediction = cat5_answer(reply, options_asked(q["token"]))
        score = 1 if ('no information available' in prediction.lower() or 'not mentioned' in prediction.lower()) else 0
    elif c == 1:
        score = f1_multi(prediction, gold)
    else:
        if c == 3:
            gold = gold.split(';')[0].strip()
        score = f1_score(prediction, gold)
    score = round(score, 3)
    by_category[c].append(score)
    everything.append(score)
checked = 0
for c, scores in sorted(by_category.items()):
    want = sum(scores) / len(scores)
    got = memfail_score("locomo", names[c])
    checked += 1
    if abs(want - got) > 5e-5:
        failures.append("locomo %s: authors' rules %.6f, memfail %.4f" % (names[c], want, got))
want = sum(everything) / len(everything)
if abs(want - memfail_score("locomo", "all")) > 5e-5:
    failures.append("locomo all: authors' rules %.6f, memfail %s" % (want, memfail_score("locomo", "all")))

# LongMemEval: 'yes' in the judge's reply; per type (abstention questions in their own type),
# task-averaged over the six types, overall, and abstention accuracy over the _abs questions.
type_acc, abstention = defaultdict(list), []
for q in expected["longmemeval"]:
    label = 1 if 'yes' in q["judge"].strip().lower() else 0
    type_acc[q["type"]].append(label)
    if '_abs' in q["question_id"]:
        abstention.append(label)
for t, labels in type_acc.items():
    want = sum(labels) / len(labels)
    if abs(want - memfail_score("longmemeval", t)) > 5e-5:
        failures.append("longmemeval %s: authors' rules %.6f, memfail %s" % (t, want, memfail_score("longmemeval", t)))
task_avg = sum(sum(v) / len(v) for v in type_acc.values()) / len(type_acc)
overall = sum(sum(v) for v in type_acc.values()) / sum(len(v) for v in type_acc.values())
for name, want in [("task-averaged", task_avg), ("overall", overall), ("abstention", sum(abstention) / len(abstention))]:
    if abs(want - memfail_score("longmemeval", name)) > 5e-5:
        failures.append("longmemeval %s: authors' rules %.6f, memfail %s" % (name, want, memfail_score("longmemeval", name)))

for f in failures:
    print("MISMATCH:", f)
print("locomo: %d questions, longmemeval: %d questions, %d mismatches" %
      (len(expected["locomo"]), len(expected["longmemeval"]), len(failures)))
sys.exit(1 if failures else 0)
