// SPDX-License-Identifier: MIT
// The published benchmarks' own answer metrics, so memfail's stage breakdown can sit beside the
// numbers their papers report.
//
// LoCoMo (Maharana et al., ACL 2024) scores a prediction by token F1 as its authors' code
// (task_eval/evaluation.py) does: the answer and the prediction are normalised (commas dropped,
// lower case, ASCII punctuation dropped, the words a/an/the/and dropped, whitespace collapsed),
// split on whitespace and each token Porter-stemmed (NLTK's PorterStemmer, its default
// NLTK_EXTENSIONS mode); F1 over the multiset of common tokens. Category 1 (multi-hop) splits the
// prediction and the answer on commas and averages, over the answer's parts, the best F1 of any
// prediction part; category 3 (open-domain) keeps the answer's first ';' alternative; categories
// 2-4 take plain F1; category 5 (adversarial) scores 1 when the lower-cased prediction contains
// "no information available" or "not mentioned", else 0.
//
// Outside ASCII as Python does: lower-casing is Unicode's full case mapping (ICU's root locale, as
// str.lower: "İ" to "i" + U+0307, a final sigma to "ς"); the article rule's word characters are the
// `regex` module's \w (alphabetic, marks, decimal digits, connector punctuation, join controls, by
// ICU's character properties); punctuation dropped is ASCII's only, as string.punctuation.
//
// LongMemEval (Wu et al., ICLR 2025) scores each answer by an LLM judge and reports accuracy per
// question type, their average, the overall accuracy and abstention accuracy: under
// --protocol longmemeval its per-type judge prompts decide (protocol.hpp), otherwise memfail's own
// answer judge stands in for theirs.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memfail::suites::benchmarks {

// NLTK's PorterStemmer().stem(word) (mode NLTK_EXTENSIONS, lower-casing first), over UTF-8.
std::string porter_stem(std::string_view word);

// LoCoMo's normalize_answer(s).
std::string locomo_normalize(std::string_view s);
// LoCoMo's f1_score(prediction, answer): stemmed token F1 in [0, 1].
double locomo_token_f1(std::string_view prediction, std::string_view answer);
// LoCoMo's f1(prediction, answer) for multi-hop: comma-split parts, mean over the answer's parts
// of the best part F1.
double locomo_multi_f1(std::string_view prediction, std::string_view answer);
// The score of one prediction for a question of `category` (1..5), as eval_question_answering
// gives it; empty for any other category (the authors' code raises).
std::optional<double> locomo_score(int category, std::string_view prediction, std::string_view answer);

// "multi-hop", "temporal", "open-domain", "single-hop", "adversarial" for 1..5; "" otherwise.
std::string locomo_category_name(int category);

// LongMemEval's six question types, in the order its authors print them.
const std::vector<std::string>& longmemeval_question_types();

}  // namespace memfail::suites::benchmarks
