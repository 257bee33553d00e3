#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the inputs of benchmark_protocols.sh: a LoCoMo file (locomo10.json's schema) and a
# LongMemEval file (its instance schema) whose questions each carry a token "(Qnnn)", and a
# fake-llm script that gives each question a scripted reply (the test-taker) and each LongMemEval
# answer a scripted judge reply. The replies are edge cases of the authors' scoring: formats,
# punctuation, articles, commas, ';' alternatives, numbers, non-ASCII scripts and case, option
# letters, and judge replies that contain "yes" without meaning it. expected.json keeps every raw
# reply for the independent scorer.
import json, re, sys

out = sys.argv[1]

# (category, gold answer, scripted reply). Category 5's gold is the adversarial answer.
LOCOMO = [
    (1, "pottery, camping, painting", "pottery, camping"),
    (1, "Paris, Rome", "rome and paris"),
    (1, "running, swimming", "Running; swimming"),
    (1, "a dog, a cat", "The cat, the dog"),
    (1, "Sweden, Norway, Denmark", "Norway"),
    (1, "books, music", "books, music, films"),
    (1, "hiking, Ïle-de-France", "hiking, ÏLE-DE-FRANCE"),
    (1, "Anna, Björn", "BJÖRN, ANNA"),
    (1, "2019, 2021", "2021, 2019"),
    (1, "tea, coffee", "coffee"),
    (2, "7 May 2023", "May 7, 2023"),
    (2, "2022", "2022"),
    (2, "The week before 9 June 2023", "the week before June 9, 2023"),
    (2, "last year", "2022"),
    (2, "1 January 2020", "On 1 January 2020 she went"),
    (2, "June 2023", "june, 2023"),
    (2, "The Saturday before 25 May 2023", "Saturday before 25 May 2023."),
    (2, "10 March 2024", "10th of March 2024"),
    (2, "summer 2022", "Summer 2022!"),
    (2, "2 weeks ago", "two weeks ago"),
    (3, "Likely no; though she likes reading, she wants to be a counselor", "Likely no"),
    (3, "Yes, since she collects classic children's books", "Yes"),
    (3, "Probably; he loves the outdoors", "probably"),
    (3, "Liberal", "Liberal; she supports LGBTQ rights"),
    (3, "No", "No, she would not"),
    (3, "Somewhat; not sure", "somewhat sure"),
    (4, "Adoption agencies", "She researched adoption agency"),
    (4, "self-care", "Self care"),
    (4, "The Beatles", "beatles"),
    (4, "Melanie's kids", "melanies kids"),
    (4, "U.S.A.", "USA"),
    (4, "1,000 dollars", "1000 dollars"),
    (4, "İstanbul", "istanbul"),
    (4, "ÉCOLE normale", "école NORMALE"),
    (4, "straße", "STRASSE"),
    (4, "ΑΘΉΝΑ", "αθήνα"),
    (4, "Москва", "МОСКВА"),
    (4, "caring and generous", "generously caring"),
    (4, "an apple", "apples"),
    (4, "café – naïve", "cafe naive"),
    (4, "Sweden", "Sweden and Norway, probably Sweden"),
    (4, "the dog's toys", "dogs' toys"),
    (4, "and/or", "and or"),
    (5, "Went on a nature walk or hike", "a"),
    (5, "Went on a nature walk or hike", "b"),
    (5, "Pottery class", "(a)"),
    (5, "Pottery class", "(B)"),
    (5, "A red bicycle", "A"),
    (5, "A red bicycle", "Not mentioned in the conversation"),
    (5, "Her sister", "No information available"),
    (5, "Her sister", "She went with her sister"),
    (5, "Painting", "x"),
    (5, "Painting", "a)"),
    (5, "Jazz music", "(a) Not mentioned in the conversation"),
    (5, "Jazz music", " (b) "),
    (5, "Three cats", "It was not mentioned."),
]

# (question_type, abstention, gold answer, scripted answer, scripted judge reply).
TYPES = ["single-session-user", "single-session-assistant", "single-session-preference", "multi-session",
         "temporal-reasoning", "knowledge-update"]
JUDGE_REPLIES = ["Yes", "yes.", "No", "no", "YES", "Nope.", "yes, the response is correct", "The answer is no",
                 "Yesterday", "eyes", "  no ", "Correct: yes", "N/A", "Yes!", "no, it misses the date",
                 "I would say yes", "NO.", "not really", "y", "Yes."]
LONGMEMEVAL = []
for i in range(56):
    t = TYPES[i % len(TYPES)]
    abstention = i % 7 == 3
    LONGMEMEVAL.append((t, abstention, "The answer %d" % i, "My answer %d" % i, JUDGE_REPLIES[i % len(JUDGE_REPLIES)]))

rules = []
locomo_qa = []
turns = [
    [{"speaker": "Ann", "dia_id": "D1:1", "text": "I went to the pottery class and then camping."},
     {"speaker": "Ben", "dia_id": "D1:2", "text": "Sounds great, I painted all week."}],
    [{"speaker": "Ann", "dia_id": "D2:1", "text": "We visited Paris and Rome in June 2023."},
     {"speaker": "Ben", "dia_id": "D2:2", "text": "I researched adoption agencies."}],
    [{"speaker": "Ann", "dia_id": "D3:1", "text": "My kids love the Beatles and tea."},
     {"speaker": "Ben", "dia_id": "D3:2", "text": "I moved to Istanbul last year."}],
]
expected = {"locomo": [], "longmemeval": []}
for n, (category, gold, reply) in enumerate(LOCOMO, start=1):
    token = "(Q%03d)" % n
    question = "What about item %s?" % token
    item = {"question": question, "evidence": ["D1:1"], "category": category}
    if category == 5:
        item["adversarial_answer"] = gold
    else:
        item["answer"] = int(gold) if gold.isdigit() else gold
    locomo_qa.append(item)
    rules.append({"match": {"model": "bench-taker", "regex": "Question: " + re.escape(question)}, "reply": reply})
    expected["locomo"].append({"token": token, "category": category, "gold": gold, "reply": reply})
conversation = {"speaker_a": "Ann", "speaker_b": "Ben"}
for s, session in enumerate(turns, start=1):
    conversation["session_%d" % s] = session
    conversation["session_%d_date_time" % s] = ["1:56 pm on 8 May, 2023", "10:00 am on 25 May, 2023",
                                                 "4:30 pm on 9 June, 2023"][s - 1]
json.dump([{"sample_id": "conv-protocol", "conversation": conversation, "qa": locomo_qa}],
          open(out + "/locomo.json", "w"), ensure_ascii=False, indent=1)

instances = []
for n, (t, abstention, gold, answer, judged) in enumerate(LONGMEMEVAL, start=1):
    token = "(Q%03d)" % (500 + n)
    qid = "lme%03d" % n + ("_abs" if abstention else "")
    instances.append({
        "question_id": qid, "question_type": t, "question": "What did I say about thing %s?" % token,
        "answer": gold, "question_date": "2023/05/30 (Tue) 21:56",
        "haystack_session_ids": ["sess-%d" % n], "haystack_dates": ["2023/05/20 (Sat) 10:00"],
        "haystack_sessions": [[{"role": "user", "content": "About thing %s: %s." % (token, gold), "has_answer": True},
                               {"role": "assistant", "content": "Noted."}]],
        "answer_session_ids": ["sess-%d" % n]})
    question = "What did I say about thing %s?" % token
    rules.append({"match": {"model": "bench-judge", "regex": "Question: " + re.escape(question)}, "reply": judged})
    rules.append({"match": {"model": "bench-taker", "regex": "Question: " + re.escape(question)}, "reply": answer})
    expected["longmemeval"].append({"question_id": qid, "type": t, "judge": judged})
json.dump(instances, open(out + "/longmemeval.json", "w"), indent=1)
json.dump({"rules": rules, "default": {"reply": "unscripted"}}, open(out + "/script.json", "w"), ensure_ascii=False)
json.dump(expected, open(out + "/expected.json", "w"), ensure_ascii=False, indent=1)
