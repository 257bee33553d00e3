// SPDX-License-Identifier: MIT
// Memory-free strategies over the MemFail datasets, and the thresholds a dataset without tells meets.
#include <memfail/suites/memfail/audit.hpp>
#include <memfail/suites/memfail/common.hpp>

#include <memfail/core/text.hpp>
#include <memfail/figures/table.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

namespace memfail::suites::memfail_suite {

namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::size_t k_frame_words = 5;
constexpr double k_frame_essay_share = 0.05;  // a frame recurs when this share of essays opens a sentence on it
constexpr std::int64_t k_frame_min_essays = 2;
constexpr std::size_t k_top_frames = 5;
const std::string k_name_token = "NAME";

// The five MemFail datasets, in the order they are reported.
const std::vector<std::string>& audited_datasets() {
    static const std::vector<std::string> names = {"conditional_facts_easy", "conditional_facts_hard", "persona_retrieval",
                                                   "long_hop", "coexisting_facts"};
    return names;
}

bool is_conditional(const std::string& d) { return d == "conditional_facts_easy" || d == "conditional_facts_hard"; }

// The strategies a dataset gets, in report order.
std::vector<AuditStrategy> strategies_for(const std::string& d) {
    using S = AuditStrategy;
    if (is_conditional(d)) {
        std::vector<S> out = {S::question_only_cross, S::question_only_within, S::recurring_frames};
        if (d == "conditional_facts_easy") out.push_back(S::easy_rule_named);
        return out;
    }
    if (d == "persona_retrieval")
        return {S::question_only_cross, S::question_only_within, S::names_cross, S::recurring_frames, S::shared_answers};
    if (d == "long_hop")
        return {S::elimination_cross, S::elimination_within, S::question_overlap, S::longest_option, S::recurring_frames};
    if (d == "coexisting_facts") return {S::recurring_frames};
    return {};
}

// ---- Words and names ---------------------------------------------------------------------------

// Length of the UTF-8 apostrophe (U+2019) at `i`, else 0.
std::size_t curly_apostrophe(std::string_view s, std::size_t i) {
    return i + 2 < s.size() && s[i] == '\xE2' && s[i + 1] == '\x80' && s[i + 2] == '\x99' ? 3 : 0;
}

// A byte that belongs to a word: ASCII letters and digits, and any non-ASCII byte except the
// general punctuation block (U+2000-U+206F: dashes, curly quotes), which separates words.
bool word_byte(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) return std::isalnum(c) != 0;
    if (c == 0xE2 && i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) == 0x80 || static_cast<unsigned char>(s[i + 1]) == 0x81))
        return false;
    if ((c & 0xC0) == 0x80) {
        // A continuation byte: part of the character its lead byte opened.
        std::size_t j = i;
        while (j > 0 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) --j;
        return word_byte(s, j);
    }
    return true;
}

struct RawWord {
    std::string text;  // as written, curly apostrophes straightened
    bool opens_sentence = false;
};

std::vector<RawWord> raw_words(std::string_view s) {
    std::vector<RawWord> out;
    bool sentence_start = true;
    std::size_t i = 0;
    while (i < s.size()) {
        if (!word_byte(s, i)) {
            const char c = s[i];
            if (c == '.' || c == '!' || c == '?') sentence_start = true;
            ++i;
            continue;
        }
        RawWord w;
        w.opens_sentence = sentence_start;
        sentence_start = false;
        while (i < s.size()) {
            if (word_byte(s, i)) {
                w.text += s[i++];
                continue;
            }
            // An apostrophe or a hyphen between word characters stays inside the word ("can't",
            // "Ana's", "Hye-jin").
            if (s[i] == '-' && i + 1 < s.size() && word_byte(s, i + 1)) {
                w.text += s[i++];
                continue;
            }
            const std::size_t apostrophe = s[i] == '\'' ? 1 : curly_apostrophe(s, i);
            if (apostrophe > 0 && i + apostrophe < s.size() && word_byte(s, i + apostrophe)) {
                w.text += '\'';
                i += apostrophe;
                continue;
            }
            break;
        }
        out.push_back(std::move(w));
    }
    return out;
}

bool capitalised(const std::string& w) { return !w.empty() && std::isupper(static_cast<unsigned char>(w[0])) != 0; }

// "Ana's" -> "Ana"; "James'" never arrives (a trailing apostrophe separates).
std::string without_possessive(const std::string& w) {
    if (w.size() > 2 && (w.compare(w.size() - 2, 2, "'s") == 0 || w.compare(w.size() - 2, 2, "'S") == 0))
        return w.substr(0, w.size() - 2);
    return w;
}

bool first_person(const std::string& lower) {
    return lower == "i" || lower == "i'm" || lower == "i've" || lower == "i'd" || lower == "i'll";
}

// The capitalised words of `names`, lower-cased, possessive dropped.
std::set<std::string> name_words(const std::vector<std::string>& names) {
    std::set<std::string> out;
    for (const auto& n : names)
        for (const auto& w : raw_words(n))
            if (capitalised(w.text)) out.insert(text::to_lower(without_possessive(w.text)));
    return out;
}

std::vector<std::string> masked_words(std::string_view s, const std::set<std::string>& names) {
    std::vector<std::string> out;
    for (const auto& w : raw_words(s)) {
        const std::string lower = text::to_lower(w.text);
        const bool name = capitalised(w.text) &&
                          ((!w.opens_sentence && !first_person(lower)) || names.count(text::to_lower(without_possessive(w.text))) > 0);
        if (!name) out.push_back(lower);
        else if (out.empty() || out.back() != k_name_token) out.push_back(k_name_token);
    }
    return out;
}

std::string frame_of(std::string_view sentence, const std::set<std::string>& names) {
    const auto words = masked_words(sentence, names);
    std::string frame;
    for (std::size_t i = 0; i < words.size() && i < k_frame_words; ++i) frame += (i ? " " : "") + words[i];
    return frame;
}

// ---- What the files hold -----------------------------------------------------------------------

// One input's scenarios of one dataset: what the within-file strategies call a file.
struct FileView {
    std::string input;
    std::vector<const AuditScenario*> scenarios;
};

struct ProbeRef {
    const AuditScenario* from = nullptr;
    std::size_t index = 0;
    const data::Probe& probe() const { return from->scenario.probes[index]; }
    Error error(const std::string& field, const std::string& message) const {
        return make_error(ErrorKind::invalid_input, message,
                          from->file + ":" + std::to_string(from->line) + ": probes[" + std::to_string(index) + "]" +
                              (field.empty() ? "" : "." + field) + " (" + probe().id + ")");
    }
};

std::vector<ProbeRef> probes_of(const FileView& f) {
    std::vector<ProbeRef> out;
    for (const AuditScenario* s : f.scenarios)
        for (std::size_t i = 0; i < s->scenario.probes.size(); ++i) out.push_back({s, i});
    return out;
}

void add_meta_name(const nlohmann::json& meta, const char* key, std::vector<std::string>& out) {
    const auto it = meta.find(key);
    if (it == meta.end()) return;
    if (it->is_string()) out.push_back(it->get<std::string>());
    else if (it->is_array())
        for (const auto& v : *it)
            if (v.is_string()) out.push_back(v.get<std::string>());
}

// The names a probe's question may hold: meta.entity and meta.distractor.
std::vector<std::string> probe_names(const data::Probe& p) {
    std::vector<std::string> out;
    add_meta_name(p.meta, "entity", out);
    add_meta_name(p.meta, "distractor", out);
    return out;
}

// Every name the file's probes know: their entities and distractors, and a named chain's person.
std::vector<std::string> file_names(const FileView& f) {
    std::vector<std::string> out;
    for (const auto& r : probes_of(f)) {
        const data::Probe& p = r.probe();
        for (auto& n : probe_names(p)) out.push_back(std::move(n));
        const auto chain = p.meta.find("chain");
        if (p.meta.value("voice", std::string()) == "named" && chain != p.meta.end() && chain->is_array() && !chain->empty() &&
            chain->front().is_string())
            out.push_back(chain->front().get<std::string>());
    }
    return out;
}

// Every stored message's text: an essay (Conditional, Persona) or a fact (Long-Hop, Coexisting).
std::vector<std::string_view> essays_of(const FileView& f) {
    std::vector<std::string_view> out;
    for (const AuditScenario* s : f.scenarios)
        for (const auto& session : s->scenario.sessions)
            for (const auto& m : session.messages) out.push_back(m.content);
    return out;
}

// ---- Question-only word model ------------------------------------------------------------------

enum class Features { unigrams, bigrams };  // bigrams: unigrams and bigrams

struct Example {
    std::vector<std::string> words;
    bool label = false;  // yes (Conditional) or misleading (Persona)
};

std::vector<std::string> features_of(const Example& e, Features features) {
    std::vector<std::string> out = e.words;
    if (features == Features::bigrams)
        for (std::size_t i = 0; i + 1 < e.words.size(); ++i) out.push_back(e.words[i] + " " + e.words[i + 1]);
    return out;
}

bool misleading(const data::Probe& p) {
    const auto it = p.meta.find("is_misleading");
    return p.kind == data::ProbeKind::abstain || (it != p.meta.end() && it->is_boolean() && it->get<bool>());
}

Result<std::vector<Example>> examples_of(const FileView& f, const std::string& dataset) {
    std::vector<Example> out;
    for (const auto& r : probes_of(f)) {
        const data::Probe& p = r.probe();
        Example e;
        e.words = masked_words(p.question, name_words(probe_names(p)));
        if (dataset == "persona_retrieval") {
            e.label = misleading(p);
        } else {
            auto yes = answer_polarity(p.answer);
            if (!yes) yes = condition_met(p);
            if (!yes)
                return r.error("answer", "a yes/no probe's answer must open with yes or no (or its meta.condition_met say "
                                         "which), so the audit knows its class");
            e.label = *yes;
        }
        out.push_back(std::move(e));
    }
    return out;
}

// Persona examples whose features are the names the question holds (any person of `names`, in
// full, normalised), unmasked: a generator whose stored people and distractors came from fixed
// lists would let a name alone say whether to abstain.
Result<std::vector<Example>> name_examples_of(const FileView& f, const std::vector<std::string>& names) {
    std::vector<Example> out;
    for (const auto& r : probes_of(f)) {
        const data::Probe& p = r.probe();
        Example e;
        const std::string q = text::normalize(p.question);
        for (const auto& n : names)
            if (text::normalized_contains(q, n)) e.words.push_back(n);
        e.label = misleading(p);
        out.push_back(std::move(e));
    }
    return out;
}

// Multinomial naive Bayes over two classes with Laplace smoothing.
class NaiveBayes {
public:
    void add(const std::vector<std::string>& features, bool label) {
        const auto c = static_cast<std::size_t>(label);
        ++m_docs[c];
        for (const auto& w : features) {
            ++m_counts[w][c];
            ++m_tokens[c];
        }
    }

    // The class of `features`, as if the model had been trained without `held_out` (an example it
    // was trained on, for leave-one-out). Words it never saw count for nothing. A tie (to rounding)
    // goes to the training set's majority class, to "no"/"direct" when that is balanced too. Empty
    // when the training set is.
    std::optional<bool> predict(const std::vector<std::string>& features, const std::vector<std::string>* held_out = nullptr,
                                bool held_label = false) const {
        std::array<double, 2> docs = {static_cast<double>(m_docs[0]), static_cast<double>(m_docs[1])};
        std::array<double, 2> tokens = {static_cast<double>(m_tokens[0]), static_cast<double>(m_tokens[1])};
        std::unordered_map<std::string, std::int64_t> own;
        double vocabulary = static_cast<double>(m_counts.size());
        const auto h = static_cast<std::size_t>(held_label);
        if (held_out) {
            docs[h] -= 1;
            tokens[h] -= static_cast<double>(held_out->size());
            for (const auto& w : *held_out) ++own[w];
            for (const auto& [w, n] : own) {
                const auto& c = m_counts.at(w);
                if (c[0] + c[1] == n) vocabulary -= 1;  // only the held-out example had it
            }
        }
        const double total = docs[0] + docs[1];
        if (total <= 0) return std::nullopt;
        std::array<double, 2> score{};
        for (std::size_t c = 0; c < 2; ++c) {
            if (docs[c] <= 0) {
                score[c] = -std::numeric_limits<double>::infinity();
                continue;
            }
            score[c] = std::log(docs[c] / total);
            for (const auto& w : features) {
                const auto it = m_counts.find(w);
                if (it == m_counts.end()) continue;
                std::array<double, 2> n = {static_cast<double>(it->second[0]), static_cast<double>(it->second[1])};
                if (held_out)
                    if (const auto o = own.find(w); o != own.end()) n[h] -= static_cast<double>(o->second);
                if (n[0] + n[1] <= 0) continue;
                score[c] += std::log((n[c] + 1) / (tokens[c] + vocabulary));
            }
        }
        const double scale = std::max({1.0, std::fabs(score[0]), std::fabs(score[1])});
        if (std::isfinite(score[0]) && std::isfinite(score[1]) && std::fabs(score[1] - score[0]) <= 1e-9 * scale)
            return docs[1] > docs[0];
        return score[1] > score[0];
    }

private:
    std::unordered_map<std::string, std::array<std::int64_t, 2>> m_counts;
    std::array<std::int64_t, 2> m_docs{}, m_tokens{};
};

double majority_share(const std::vector<Example>& tested) {
    std::int64_t yes = 0;
    for (const auto& e : tested) yes += e.label;
    const auto n = static_cast<std::int64_t>(tested.size());
    return n == 0 ? 0 : static_cast<double>(std::max(yes, n - yes)) / static_cast<double>(n);
}

// Accuracy of a model trained on `train` on `tested` (`train` empty: leave-one-out within `tested`),
// with the better of the two feature sets (a model tuned on the data would take it).
std::optional<AuditFigure> word_model(const std::vector<Example>& tested, const std::vector<Example>* train) {
    std::optional<AuditFigure> best;
    for (const Features features : {Features::unigrams, Features::bigrams}) {
        NaiveBayes model;
        for (const auto& e : train ? *train : tested) model.add(features_of(e, features), e.label);
        std::int64_t right = 0, n = 0;
        for (const auto& e : tested) {
            const auto f = features_of(e, features);
            const auto predicted = train ? model.predict(f) : model.predict(f, &f, e.label);
            if (!predicted) continue;
            ++n;
            right += *predicted == e.label;
        }
        if (n == 0) continue;
        AuditFigure fig;
        fig.value = static_cast<double>(right) / static_cast<double>(n);
        fig.chance = majority_share(tested);
        fig.n = n;
        fig.detail = features == Features::unigrams ? "unigrams" : "unigrams+bigrams";
        if (!best || fig.value > best->value + 1e-12) best = std::move(fig);
    }
    return best;
}

// ---- Multiple choice ---------------------------------------------------------------------------

struct Choice {
    std::vector<std::string> options;  // as written
    std::vector<std::string> normalized;
    std::size_t correct = 0;
    std::string question;
};

Result<std::vector<Choice>> choices_of(const FileView& f) {
    std::vector<Choice> out;
    for (const auto& r : probes_of(f)) {
        const data::Probe& p = r.probe();
        if (p.kind != data::ProbeKind::mcq) continue;
        if (p.choices.size() < 2) return r.error("choices", "a multiple-choice probe needs two options or more");
        const std::string letter = p.correct_choice;
        if (letter.size() != 1 || letter[0] < 'A' || static_cast<std::size_t>(letter[0] - 'A') >= p.choices.size())
            return r.error("correct_choice", "'" + letter + "' names none of the " + std::to_string(p.choices.size()) +
                                                 " options (A-" + std::string(1, static_cast<char>('A' + p.choices.size() - 1)) + ")");
        Choice c;
        c.options = p.choices;
        for (const auto& o : p.choices) c.normalized.push_back(text::normalize(o));
        c.correct = static_cast<std::size_t>(letter[0] - 'A');
        c.question = p.question;
        out.push_back(std::move(c));
    }
    return out;
}

double mean_chance(const std::vector<Choice>& choices) {
    double sum = 0;
    for (const auto& c : choices) sum += 1.0 / static_cast<double>(c.options.size());
    return choices.empty() ? 0 : sum / static_cast<double>(choices.size());
}

// Expected accuracy of picking uniformly among `candidates` (indices): 1/|candidates| when the
// right option is among them.
double uniform_among(const std::vector<std::size_t>& candidates, const Choice& c) {
    if (candidates.empty()) return 1.0 / static_cast<double>(c.options.size());
    const bool hit = std::find(candidates.begin(), candidates.end(), c.correct) != candidates.end();
    return hit ? 1.0 / static_cast<double>(candidates.size()) : 0.0;
}

// Wrong options with the number of rows offering each.
std::map<std::string, std::int64_t> wrong_options(const std::vector<Choice>& choices) {
    std::map<std::string, std::int64_t> out;
    for (const auto& c : choices) {
        std::set<std::string> wrong;
        for (std::size_t i = 0; i < c.normalized.size(); ++i)
            if (i != c.correct) wrong.insert(c.normalized[i]);
        for (const auto& w : wrong) ++out[w];
    }
    return out;
}

// Option elimination: the options never seen as a wrong option elsewhere are the candidates.
// `elsewhere` counts wrong options over the other inputs (cross) or over the whole file (within: a
// row's own wrong options are taken out).
AuditFigure elimination(const std::vector<Choice>& choices, const std::map<std::string, std::int64_t>& elsewhere, bool within) {
    AuditFigure fig;
    double sum = 0;
    for (const auto& c : choices) {
        std::set<std::string> own_wrong;
        for (std::size_t i = 0; i < c.normalized.size(); ++i)
            if (i != c.correct) own_wrong.insert(c.normalized[i]);
        std::vector<std::size_t> candidates;
        for (std::size_t i = 0; i < c.normalized.size(); ++i) {
            const auto it = elsewhere.find(c.normalized[i]);
            std::int64_t seen = it == elsewhere.end() ? 0 : it->second;
            if (within && own_wrong.count(c.normalized[i])) --seen;
            if (seen <= 0) candidates.push_back(i);
        }
        sum += uniform_among(candidates, c);
    }
    fig.n = static_cast<std::int64_t>(choices.size());
    fig.value = choices.empty() ? 0 : sum / static_cast<double>(choices.size());
    fig.chance = mean_chance(choices);
    return fig;
}

std::set<std::string> content_words(std::string_view s) {
    std::set<std::string> out;
    for (auto& w : text::words(s))
        if (!text::is_stopword(w)) out.insert(std::move(w));
    return out;
}

// The options scoring highest, ties kept.
template <class Score>
std::vector<std::size_t> best_options(const Choice& c, Score score) {
    std::vector<std::size_t> best;
    std::size_t top = 0;
    for (std::size_t i = 0; i < c.options.size(); ++i) {
        const std::size_t s = score(i);
        if (best.empty() || s > top) {
            best = {i};
            top = s;
        } else if (s == top) {
            best.push_back(i);
        }
    }
    return best;
}

AuditFigure question_overlap(const std::vector<Choice>& choices) {
    AuditFigure fig;
    double sum = 0;
    for (const auto& c : choices) {
        const auto question = content_words(c.question);
        sum += uniform_among(best_options(c, [&](std::size_t i) {
                                 std::size_t shared = 0;
                                 for (const auto& w : content_words(c.options[i])) shared += question.count(w);
                                 return shared;
                             }),
                             c);
    }
    fig.n = static_cast<std::int64_t>(choices.size());
    fig.value = choices.empty() ? 0 : sum / static_cast<double>(choices.size());
    fig.chance = mean_chance(choices);
    return fig;
}

std::size_t code_points(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

AuditFigure longest_option(const std::vector<Choice>& choices) {
    AuditFigure fig;
    double sum = 0;
    for (const auto& c : choices) sum += uniform_among(best_options(c, [&](std::size_t i) { return code_points(c.options[i]); }), c);
    fig.n = static_cast<std::int64_t>(choices.size());
    fig.value = choices.empty() ? 0 : sum / static_cast<double>(choices.size());
    fig.chance = mean_chance(choices);
    return fig;
}

// ---- The essays' own shapes --------------------------------------------------------------------

AuditFigure recurring_frames(const FileView& f) {
    const auto names = name_words(file_names(f));
    const auto essays = essays_of(f);
    std::map<std::string, std::int64_t> essays_per_frame;
    std::vector<std::vector<std::string>> frames_per_essay;
    for (const auto essay : essays) {
        std::vector<std::string> frames;
        for (const auto& sentence : text::split_sentences(essay)) {
            std::string frame = frame_of(sentence, names);
            if (!frame.empty()) frames.push_back(std::move(frame));
        }
        for (const auto& frame : std::set<std::string>(frames.begin(), frames.end())) ++essays_per_frame[frame];
        frames_per_essay.push_back(std::move(frames));
    }
    const auto needed = std::max<std::int64_t>(
        k_frame_min_essays, static_cast<std::int64_t>(std::ceil(k_frame_essay_share * static_cast<double>(essays.size()) - 1e-9)));
    AuditFigure fig;
    std::int64_t recurring = 0;
    for (const auto& frames : frames_per_essay)
        for (const auto& frame : frames) {
            ++fig.n;
            recurring += essays_per_frame[frame] >= needed;
        }
    fig.value = fig.n == 0 ? 0 : static_cast<double>(recurring) / static_cast<double>(fig.n);
    std::vector<FrameCount> shared;
    for (const auto& [frame, count] : essays_per_frame)
        if (count >= k_frame_min_essays) shared.push_back({frame, count});
    std::stable_sort(shared.begin(), shared.end(), [](const FrameCount& a, const FrameCount& b) { return a.essays > b.essays; });
    if (shared.size() > k_top_frames) shared.resize(k_top_frames);
    fig.top_frames = std::move(shared);
    fig.detail = "recurring: in " + std::to_string(needed) + "+ of " + std::to_string(essays.size()) + " essays";
    return fig;
}

const data::KeyDetail* key_detail(const data::EvidenceFact& f, const std::string& name) {
    for (const auto& kd : f.key_details)
        if (kd.name == name) return &kd;
    return nullptr;
}

bool holds_any(std::string_view normalized_text, const std::vector<std::string>& phrases) {
    for (const auto& p : phrases) {
        const std::string n = text::normalize(p);
        if (!n.empty() && text::normalized_contains(normalized_text, n)) return true;
    }
    return false;
}

// Direct Persona probes whose answer (its `detail` key details, else the answer itself) occurs in
// two essays or more.
AuditFigure shared_answers(const FileView& f) {
    std::vector<std::string> essays;
    for (const auto e : essays_of(f)) essays.push_back(text::normalize(e));
    AuditFigure fig;
    std::int64_t shared = 0;
    for (const auto& r : probes_of(f)) {
        const data::Probe& p = r.probe();
        if (misleading(p)) continue;
        std::vector<std::string> values;
        for (const auto& fact : p.evidence)
            if (const auto* kd = key_detail(fact, "detail")) values.insert(values.end(), kd->variants.begin(), kd->variants.end());
        if (values.empty()) values.push_back(p.answer);
        std::int64_t holding = 0;
        for (const auto& e : essays) holding += holds_any(e, values);
        ++fig.n;
        shared += holding >= 2;
    }
    fig.value = fig.n == 0 ? 0 : static_cast<double>(shared) / static_cast<double>(fig.n);
    return fig;
}

// Easy rules whose rule sentence (the statement holding the condition, else the behaviour) names
// the person (a variant of the `entity` key detail, or meta.entity).
AuditFigure easy_rule_named(const FileView& f) {
    AuditFigure fig;
    std::int64_t named = 0;
    for (const auto& r : probes_of(f)) {
        const data::Probe& p = r.probe();
        if (p.evidence.empty()) {
            ++fig.unknown;
            continue;
        }
        const data::EvidenceFact& fact = p.evidence.front();
        std::vector<std::string> statements = fact.statements;
        if (statements.empty()) statements = text::split_sentences(fact.text);
        std::optional<std::string> rule;
        for (const char* detail : {"condition", "behaviour"}) {
            const auto* kd = key_detail(fact, detail);
            if (!kd) continue;
            for (const auto& s : statements)
                if (holds_any(text::normalize(s), kd->variants)) {
                    rule = s;
                    break;
                }
            if (rule) break;
        }
        if (!rule) {
            ++fig.unknown;
            continue;
        }
        std::vector<std::string> person;
        add_meta_name(p.meta, "entity", person);
        if (const auto* kd = key_detail(fact, "entity")) person.insert(person.end(), kd->variants.begin(), kd->variants.end());
        ++fig.n;
        named += holds_any(text::normalize(*rule), person);
    }
    fig.value = fig.n == 0 ? 0 : static_cast<double>(named) / static_cast<double>(fig.n);
    return fig;
}

// ---- Putting it together -----------------------------------------------------------------------

// input index -> dataset -> its file.
using Grouped = std::vector<std::map<std::string, FileView>>;

std::map<std::string, FileView> group(const AuditInput& input, std::set<std::string>& others) {
    std::map<std::string, FileView> out;
    const auto& known = audited_datasets();
    for (const auto& s : input.scenarios) {
        if (std::find(known.begin(), known.end(), s.scenario.dataset) == known.end()) {
            others.insert(s.scenario.dataset);
            continue;
        }
        auto& f = out[s.scenario.dataset];
        f.input = input.name;
        f.scenarios.push_back(&s);
    }
    return out;
}

// The figure of `strategy` on `file`; `others` are the same dataset's files in the other inputs
// (for the reference: every audited input). Empty when the strategy cannot be computed there.
Result<std::optional<AuditFigure>> figure(AuditStrategy strategy, const std::string& dataset, const FileView& file,
                                          const std::vector<const FileView*>& others) {
    using S = AuditStrategy;
    switch (strategy) {
        case S::question_only_cross: {
            if (others.empty()) return std::optional<AuditFigure>();
            MF_TRY_ASSIGN(auto tested, examples_of(file, dataset));
            std::vector<Example> train;
            for (const FileView* o : others) {
                MF_TRY_ASSIGN(auto more, examples_of(*o, dataset));
                train.insert(train.end(), more.begin(), more.end());
            }
            if (tested.empty() || train.empty()) return std::optional<AuditFigure>();
            return word_model(tested, &train);
        }
        case S::question_only_within: {
            MF_TRY_ASSIGN(auto tested, examples_of(file, dataset));
            return word_model(tested, nullptr);
        }
        case S::names_cross: {
            if (others.empty()) return std::optional<AuditFigure>();
            std::set<std::string> known;
            for (const FileView* v : others)
                for (const auto& n : file_names(*v)) known.insert(text::normalize(n));
            for (const auto& n : file_names(file)) known.insert(text::normalize(n));
            known.erase(std::string());
            const std::vector<std::string> names(known.begin(), known.end());
            MF_TRY_ASSIGN(auto tested, name_examples_of(file, names));
            std::vector<Example> train;
            for (const FileView* o : others) {
                MF_TRY_ASSIGN(auto more, name_examples_of(*o, names));
                train.insert(train.end(), more.begin(), more.end());
            }
            if (tested.empty() || train.empty()) return std::optional<AuditFigure>();
            return word_model(tested, &train);
        }
        case S::elimination_cross:
        case S::elimination_within:
        case S::question_overlap:
        case S::longest_option: {
            MF_TRY_ASSIGN(auto choices, choices_of(file));
            if (choices.empty()) return std::optional<AuditFigure>();
            if (strategy == S::question_overlap) return std::optional<AuditFigure>(question_overlap(choices));
            if (strategy == S::longest_option) return std::optional<AuditFigure>(longest_option(choices));
            if (strategy == S::elimination_within) return std::optional<AuditFigure>(elimination(choices, wrong_options(choices), true));
            if (others.empty()) return std::optional<AuditFigure>();
            std::vector<Choice> elsewhere;
            for (const FileView* o : others) {
                MF_TRY_ASSIGN(auto more, choices_of(*o));
                elsewhere.insert(elsewhere.end(), more.begin(), more.end());
            }
            return std::optional<AuditFigure>(elimination(choices, wrong_options(elsewhere), false));
        }
        case S::recurring_frames: {
            AuditFigure fig = recurring_frames(file);
            if (fig.n == 0) return std::optional<AuditFigure>();
            return std::optional<AuditFigure>(std::move(fig));
        }
        case S::shared_answers: {
            AuditFigure fig = shared_answers(file);
            if (fig.n == 0) return std::optional<AuditFigure>();
            return std::optional<AuditFigure>(std::move(fig));
        }
        case S::easy_rule_named: {
            AuditFigure fig = easy_rule_named(file);
            if (fig.n == 0) return std::optional<AuditFigure>();
            return std::optional<AuditFigure>(std::move(fig));
        }
    }
    return std::optional<AuditFigure>();
}

std::vector<AuditVerdict> thresholds() {
    using S = AuditStrategy;
    std::vector<AuditVerdict> out(5);
    out[0].name = "question_only";
    out[0].label = "question-only words";
    out[0].strategies = {S::question_only_cross, S::question_only_within, S::names_cross};
    out[0].limit = 0.60;
    out[0].datasets = {"conditional_facts_easy", "conditional_facts_hard", "persona_retrieval"};
    out[1].name = "option_elimination";
    out[1].label = "option elimination";
    out[1].strategies = {S::elimination_cross, S::elimination_within};
    out[1].limit = 0.40;
    out[1].datasets = {"long_hop"};
    out[2].name = "recurring_frames";
    out[2].label = "recurring sentence frames";
    out[2].strategies = {S::recurring_frames};
    out[2].limit = 0.05;
    out[2].datasets = {"conditional_facts_easy", "conditional_facts_hard", "persona_retrieval"};
    out[3].name = "easy_rules_named";
    out[3].label = "Easy rules naming their person";
    out[3].strategies = {S::easy_rule_named};
    out[3].at_most = false;
    out[3].limit = 0.90;
    out[3].datasets = {"conditional_facts_easy"};
    // A direct answer found in several essays can be answered from the pool of answers without
    // the person's essay (the release: 26 of 143 direct answers, 18%).
    out[4].name = "shared_answers";
    out[4].label = "direct answers in 2+ essays";
    out[4].strategies = {S::shared_answers};
    out[4].limit = 0.30;
    out[4].datasets = {"persona_retrieval"};
    return out;
}

bool misses(const AuditVerdict& v, double value) {
    constexpr double k_eps = 1e-12;
    return v.at_most ? value > v.limit + k_eps : value < v.limit - k_eps;
}

std::string pct(double fraction) { return report::percent(fraction); }

std::string limit_text(const AuditVerdict& v) { return std::string(v.at_most ? "<= " : ">= ") + pct(v.limit) + "%"; }

ordered_json figure_json(AuditStrategy strategy, const AuditFigure& f) {
    ordered_json j = {{"value", 100.0 * f.value},
                      {"chance", f.chance ? ordered_json(100.0 * *f.chance) : ordered_json(nullptr)},
                      {"n", f.n}};
    if (!f.detail.empty()) j["detail"] = f.detail;
    if (f.unknown > 0) j["unknown"] = f.unknown;
    if (strategy == AuditStrategy::recurring_frames) {
        ordered_json frames = ordered_json::array();
        for (const auto& t : f.top_frames) frames.push_back({{"frame", t.frame}, {"essays", t.essays}});
        j["top_frames"] = frames;
    }
    return j;
}

// "62.0 (chance 50.0, n 6)", "12.5 (n 540)".
std::string figure_cell(const AuditFigure& f) {
    return pct(f.value) + " (" + (f.chance ? "chance " + pct(*f.chance) + ", " : std::string()) + "n " + std::to_string(f.n) + ")";
}

std::string frames_line(const AuditFigure& f) {
    std::string out;
    for (const auto& t : f.top_frames) out += (out.empty() ? "" : ", ") + ("\"" + t.frame + "\" " + std::to_string(t.essays));
    return out.empty() ? "no frame opens sentences in two essays" : out;
}

}  // namespace

const char* audit_strategy_name(AuditStrategy strategy) {
    switch (strategy) {
        case AuditStrategy::question_only_cross: return "question_only_cross";
        case AuditStrategy::names_cross: return "names_cross";
        case AuditStrategy::question_only_within: return "question_only_within";
        case AuditStrategy::elimination_cross: return "elimination_cross";
        case AuditStrategy::elimination_within: return "elimination_within";
        case AuditStrategy::question_overlap: return "question_overlap";
        case AuditStrategy::longest_option: return "longest_option";
        case AuditStrategy::recurring_frames: return "recurring_frames";
        case AuditStrategy::shared_answers: return "shared_answers";
        case AuditStrategy::easy_rule_named: return "easy_rule_named";
    }
    return "unknown";
}

const char* audit_strategy_label(AuditStrategy strategy) {
    switch (strategy) {
        case AuditStrategy::question_only_cross: return "question-only words (other inputs)";
        case AuditStrategy::names_cross: return "names in the question (other inputs)";
        case AuditStrategy::question_only_within: return "question-only words (leave-one-out)";
        case AuditStrategy::elimination_cross: return "option elimination (other inputs)";
        case AuditStrategy::elimination_within: return "option elimination (same file)";
        case AuditStrategy::question_overlap: return "option sharing most question words";
        case AuditStrategy::longest_option: return "longest option";
        case AuditStrategy::recurring_frames: return "recurring sentence frames";
        case AuditStrategy::shared_answers: return "direct answers in 2+ essays";
        case AuditStrategy::easy_rule_named: return "Easy rules naming their person";
    }
    return "unknown";
}

bool audit_applies(const std::string& dataset) {
    const auto& known = audited_datasets();
    return std::find(known.begin(), known.end(), dataset) != known.end();
}

std::vector<std::string> audit_words(std::string_view text, const std::vector<std::string>& names) {
    return masked_words(text, name_words(names));
}

std::string sentence_frame(std::string_view sentence, const std::vector<std::string>& names) {
    return frame_of(sentence, name_words(names));
}

bool AuditReport::passed() const {
    return std::all_of(verdicts.begin(), verdicts.end(), [](const AuditVerdict& v) { return v.passed(); });
}

Result<AuditReport> audit_datasets(const std::vector<AuditInput>& inputs, const std::optional<AuditInput>& reference) {
    AuditReport report;
    std::set<std::string> others;
    Grouped grouped;
    for (const auto& input : inputs) {
        report.inputs.push_back(input.name);
        grouped.push_back(group(input, others));
    }
    std::map<std::string, FileView> ref;
    if (reference) {
        report.reference = reference->name;
        ref = group(*reference, others);
    }
    for (const auto& d : others)
        report.notes.push_back(d.empty() ? "scenarios without a dataset name are left out"
                                         : "'" + d + "' is not one of the five MemFail datasets: no strategy applies, left out");
    for (const auto& dataset : audited_datasets()) {
        std::vector<const FileView*> files;
        for (const auto& g : grouped)
            if (const auto it = g.find(dataset); it != g.end()) files.push_back(&it->second);
        const auto in_ref = ref.find(dataset);
        if (files.empty()) {
            if (in_ref != ref.end())
                report.notes.push_back(dataset + " is in the reference only: nothing audited to set it beside");
            continue;
        }
        AuditDataset out;
        out.dataset = dataset;
        for (const AuditStrategy strategy : strategies_for(dataset)) {
            AuditStrategyResult result;
            result.strategy = strategy;
            for (const FileView* f : files) {
                std::vector<const FileView*> rest;
                for (const FileView* o : files)
                    if (o != f) rest.push_back(o);
                MF_TRY_ASSIGN(auto fig, figure(strategy, dataset, *f, rest));
                if (fig) result.inputs.push_back({f->input, std::move(*fig)});
            }
            if (in_ref != ref.end()) {
                MF_TRY_ASSIGN(auto fig, figure(strategy, dataset, in_ref->second, files));
                result.reference = std::move(fig);
            }
            if (!result.inputs.empty() || result.reference) out.strategies.push_back(std::move(result));
        }
        const auto strategies = strategies_for(dataset);
        const bool has_cross = std::find(strategies.begin(), strategies.end(), AuditStrategy::question_only_cross) != strategies.end() ||
                               std::find(strategies.begin(), strategies.end(), AuditStrategy::elimination_cross) != strategies.end();
        if (files.size() < 2 && has_cross)
            report.notes.push_back(dataset + ": the cross-input strategies need it in two inputs or more (" +
                                   std::to_string(files.size()) + " audited)" +
                                   (in_ref != ref.end() ? "; on the reference they are trained on the audited input" : ""));
        report.datasets.push_back(std::move(out));
    }
    report.verdicts = thresholds();
    for (auto& v : report.verdicts)
        for (const auto& d : report.datasets) {
            if (std::find(v.datasets.begin(), v.datasets.end(), d.dataset) == v.datasets.end()) continue;
            for (const auto& s : d.strategies) {
                if (std::find(v.strategies.begin(), v.strategies.end(), s.strategy) == v.strategies.end()) continue;
                for (const auto& f : s.inputs) {
                    ++v.checked;
                    if (misses(v, f.figure.value)) v.misses.push_back({d.dataset, f.input, s.strategy, f.figure.value});
                }
            }
        }
    return report;
}

std::string audit_text(const AuditReport& report) {
    std::string out = "memfail datasets audit: " + std::to_string(report.inputs.size()) + " input(s): " +
                      text::join(report.inputs, ", ") + "\nreference: " + (report.reference ? *report.reference : "none") + "\n";
    for (const auto& d : report.datasets) {
        report::Table t;
        t.title = d.dataset;
        t.columns = {{"strategy", report::Align::left}, {"input", report::Align::left}, {"accuracy %", report::Align::right},
                     {"chance %", report::Align::right}, {"n", report::Align::right}, {"reference", report::Align::left}};
        std::vector<std::string> frame_notes;
        for (const auto& s : d.strategies) {
            const std::string ref = s.reference ? figure_cell(*s.reference) : "-";
            if (s.inputs.empty()) t.rows.push_back({audit_strategy_label(s.strategy), "-", "-", "-", "-", ref});
            for (const auto& f : s.inputs)
                t.rows.push_back({audit_strategy_label(s.strategy), f.input, pct(f.figure.value),
                                  f.figure.chance ? pct(*f.figure.chance) : "-", std::to_string(f.figure.n), ref});
            if (s.strategy != AuditStrategy::recurring_frames) continue;
            for (const auto& f : s.inputs)
                frame_notes.push_back("most shared frames (essays), " + f.input + ": " + frames_line(f.figure));
            if (s.reference) frame_notes.push_back("most shared frames (essays), reference: " + frames_line(*s.reference));
        }
        t.notes = std::move(frame_notes);
        out += "\n" + report::render_text(t);
    }
    if (!report.datasets.empty())
        out += "\n(accuracy %: the strategy's expected accuracy; for frames, direct answers and Easy rules, the share "
               "they count. chance %: the majority class, or 1/options.)\n";
    for (const auto& n : report.notes) out += "note: " + n + "\n";
    out += "\n";
    std::size_t missed = 0;
    for (const auto& v : report.verdicts) {
        out += std::string(v.passed() ? "PASS" : "FAIL") + "  " + v.label + " " + limit_text(v) + " (" +
               text::join(v.datasets, ", ") + "): ";
        if (v.checked == 0) out += "no figure to check";
        else if (v.passed()) out += "all " + std::to_string(v.checked) + " figure(s) within";
        else {
            ++missed;
            out += std::to_string(v.misses.size()) + " of " + std::to_string(v.checked) + " figure(s) " +
                   (v.at_most ? "over" : "under") + ": ";
            for (std::size_t i = 0; i < v.misses.size(); ++i) {
                const auto& m = v.misses[i];
                out += (i ? "; " : "") + m.dataset + " " + m.input + " " + audit_strategy_name(m.strategy) + " " + pct(m.value);
            }
        }
        out += "\n";
    }
    out += missed == 0 ? "audit: PASS\n"
                       : "audit: FAIL (" + std::to_string(missed) + " of " + std::to_string(report.verdicts.size()) +
                             " thresholds missed)\n";
    return out;
}

ordered_json audit_json(const AuditReport& report) {
    ordered_json j;
    j["inputs"] = report.inputs;
    j["reference"] = report.reference ? ordered_json(*report.reference) : ordered_json(nullptr);
    ordered_json datasets = ordered_json::array();
    for (const auto& d : report.datasets) {
        ordered_json strategies = ordered_json::array();
        for (const auto& s : d.strategies) {
            ordered_json inputs = ordered_json::array();
            for (const auto& f : s.inputs) {
                ordered_json e = {{"input", f.input}};
                e.update(figure_json(s.strategy, f.figure));
                inputs.push_back(std::move(e));
            }
            strategies.push_back({{"strategy", audit_strategy_name(s.strategy)},
                                  {"label", audit_strategy_label(s.strategy)},
                                  {"inputs", inputs},
                                  {"reference", s.reference ? figure_json(s.strategy, *s.reference) : ordered_json(nullptr)}});
        }
        datasets.push_back({{"dataset", d.dataset}, {"strategies", strategies}});
    }
    j["datasets"] = datasets;
    ordered_json verdicts = ordered_json::array();
    for (const auto& v : report.verdicts) {
        ordered_json strategies = ordered_json::array();
        for (const auto s : v.strategies) strategies.push_back(audit_strategy_name(s));
        ordered_json missed = ordered_json::array();
        for (const auto& m : v.misses)
            missed.push_back({{"dataset", m.dataset}, {"input", m.input}, {"strategy", audit_strategy_name(m.strategy)},
                              {"value", 100.0 * m.value}});
        verdicts.push_back({{"name", v.name},
                            {"label", v.label},
                            {"strategies", strategies},
                            {"datasets", v.datasets},
                            {"comparison", v.at_most ? "at_most" : "at_least"},
                            {"limit", 100.0 * v.limit},
                            {"checked", v.checked},
                            {"passed", v.passed()},
                            {"misses", missed}});
    }
    j["verdicts"] = verdicts;
    j["notes"] = report.notes;
    j["passed"] = report.passed();
    return j;
}

}  // namespace memfail::suites::memfail_suite
