// SPDX-License-Identifier: MIT
// Shared generator conventions and the dataset/rule dispatch tables.
#include <memfail/suites/memfail/common.hpp>
#include <memfail/suites/memfail/audit.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/rules.hpp>
#include <memfail/core/spec.hpp>
#include <memfail/core/text.hpp>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <set>
#include <string_view>
#include <cstdio>
#include <cstdlib>

namespace memfail::suites::memfail_suite {

std::string session_id(std::size_t number) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "sess-%04zu", number);
    return buffer;
}

std::string message_id(std::size_t session_number, std::size_t message_number) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "msg-%04zu-%zu", session_number, message_number);
    return buffer;
}

std::string session_timestamp(std::size_t number) {
    // Hourly from 2026-01-05T09:00:00Z; day arithmetic stays within 2026 for < 8000 sessions.
    const std::size_t hours = 9 + (number - 1);
    std::size_t day_of_year = 4 + hours / 24;  // Jan 5 is day index 4
    const std::size_t hour = hours % 24;
    static const int k_month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int month = 0;
    while (month < 11 && day_of_year >= static_cast<std::size_t>(k_month_days[month])) {
        day_of_year -= static_cast<std::size_t>(k_month_days[month]);
        ++month;
    }
    char buffer[64];  // room for any size_t, so the compiler can prove nothing is cut
    std::snprintf(buffer, sizeof buffer, "2026-%02d-%02zuT%02zu:00:00Z", month + 1, day_of_year + 1, hour);
    return buffer;
}

std::string probe_id(const std::string& prefix, std::size_t number) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%s-%03zu", prefix.c_str(), number);
    return buffer;
}

data::Scenario make_scenario(const std::string& dataset, std::uint64_t seed) {
    data::Scenario s;
    s.id = dataset + "-seed" + std::to_string(seed);
    s.suite = "memfail";
    s.dataset = dataset;
    s.meta = {{"generator", k_generator_version}, {"seed", seed}};
    return s;
}

std::string add_user_session(data::Scenario& scenario, const std::string& content) {
    const std::size_t number = scenario.sessions.size() + 1;
    data::Session session{session_id(number), session_timestamp(number), {}};
    session.messages.push_back({message_id(number, 1), "user", content});
    scenario.sessions.push_back(std::move(session));
    return scenario.sessions.back().messages.back().id;
}

namespace {

// One fact of a chain: the chain's index and the fact's.
struct ChainFact {
    std::size_t chain = 0;
    std::size_t fact = 0;
};

// The packing of store_chain_facts: per conversation, its facts in message order.
std::vector<std::vector<ChainFact>> pack_chain_facts(const std::vector<std::size_t>& facts_per_chain, Rng rng) {
    constexpr std::size_t k_min = 3, k_max = 5;
    std::vector<ChainFact> facts;
    std::size_t longest = 0;
    for (std::size_t c = 0; c < facts_per_chain.size(); ++c) {
        for (std::size_t f = 0; f < facts_per_chain[c]; ++f) facts.push_back({c, f});
        longest = std::max(longest, facts_per_chain[c]);
    }
    if (facts.empty()) return {};
    const std::size_t sessions = std::max((facts.size() + 3) / 4, longest);
    // A handful of facts cannot fill 3 a conversation: fewer then (an import of a few rows).
    const std::size_t min_size = sessions * k_min <= facts.size() ? k_min : 1;
    MF_ASSERT(sessions * k_max >= facts.size(), "Long-Hop session sizes cannot hold every fact");

    for (int attempt = 0; attempt < 100; ++attempt) {
        // Capacities: as even as possible, then jittered within the bounds so sessions differ in length.
        std::vector<std::size_t> capacity(sessions, facts.size() / sessions);
        for (std::size_t i = 0; i < facts.size() % sessions; ++i) ++capacity[i];
        for (std::size_t i = 0; i < sessions; ++i) {
            const std::size_t a = rng.below(sessions), b = rng.below(sessions);
            if (a != b && capacity[a] > min_size && capacity[b] < k_max) {
                --capacity[a];
                ++capacity[b];
            }
        }
        rng.shuffle(facts);
        // Longest chains first: they are the hardest to spread out.
        std::stable_sort(facts.begin(), facts.end(), [&](const ChainFact& x, const ChainFact& y) {
            return facts_per_chain[x.chain] > facts_per_chain[y.chain];
        });
        std::vector<std::vector<ChainFact>> packed(sessions);
        bool ok = true;
        for (const ChainFact& slot : facts) {
            std::vector<std::size_t> best;
            std::size_t best_room = 0;
            for (std::size_t s = 0; s < sessions; ++s) {
                const std::size_t room = capacity[s] - packed[s].size();
                if (room == 0) continue;
                const bool clash = std::any_of(packed[s].begin(), packed[s].end(),
                                               [&](const ChainFact& o) { return o.chain == slot.chain; });
                if (clash) continue;
                if (room > best_room) {
                    best_room = room;
                    best.clear();
                }
                if (room == best_room) best.push_back(s);
            }
            if (best.empty()) {
                ok = false;
                break;
            }
            packed[best[rng.below(best.size())]].push_back(slot);
        }
        if (!ok) continue;
        for (auto& session : packed) rng.shuffle(session);
        rng.shuffle(packed);
        // Capacities of 1 may leave a conversation empty when the longest chain sets the count.
        packed.erase(std::remove_if(packed.begin(), packed.end(), [](const auto& p) { return p.empty(); }), packed.end());
        return packed;
    }
    MF_ASSERT(false, "could not pack Long-Hop facts into sessions");
    return {};
}

}  // namespace

std::vector<std::vector<std::string>> store_chain_facts(data::Scenario& scenario,
                                                        const std::vector<std::vector<std::string>>& chains, Rng rng) {
    std::vector<std::size_t> facts_per_chain;
    std::vector<std::vector<std::string>> message_ids;
    for (const auto& facts : chains) {
        facts_per_chain.push_back(facts.size());
        message_ids.emplace_back(facts.size());
    }
    for (const auto& conversation : pack_chain_facts(facts_per_chain, std::move(rng))) {
        const std::size_t number = scenario.sessions.size() + 1;
        data::Session session{session_id(number), session_timestamp(number), {}};
        for (const ChainFact& slot : conversation) {
            session.messages.push_back({message_id(number, session.messages.size() + 1), "user", chains[slot.chain][slot.fact]});
            message_ids[slot.chain][slot.fact] = session.messages.back().id;
        }
        scenario.sessions.push_back(std::move(session));
    }
    return message_ids;
}

void ask_all_after_last_session(data::Scenario& scenario) {
    if (scenario.sessions.empty()) return;
    for (auto& p : scenario.probes) p.after_session = scenario.sessions.back().id;
}

const std::vector<std::string>& dataset_names() {
    static const std::vector<std::string> k_names = {"conditional_facts_easy", "conditional_facts_hard",
                                                     "coexisting_facts", "persona_retrieval", "long_hop"};
    return k_names;
}

Result<data::Scenario> generate_dataset(const std::string& name, const GenerateOptions& options) {
    if (name == "conditional_facts_easy") return generate_conditional_facts_easy(options);
    if (name == "conditional_facts_hard") return generate_conditional_facts_hard(options);
    if (name == "coexisting_facts") return generate_coexisting_facts(options);
    if (name == "persona_retrieval") return generate_persona_retrieval(options);
    if (name == "long_hop") return generate_long_hop(options);
    std::string hint = did_you_mean(name, dataset_names());
    return make_error(ErrorKind::invalid_input,
                      "unknown dataset '" + name + "'" + (hint.empty() ? "" : " (" + hint + ")") +
                          "; known: conditional_facts_easy, conditional_facts_hard, "
                          "coexisting_facts, persona_retrieval, long_hop");
}

namespace {

Result<double> share_setting(const std::string& key, const std::string& value) {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(v >= 0.0 && v <= 1.0))
        return make_error(ErrorKind::invalid_input, key + " must be a share between 0 and 1 (got '" + value + "')",
                          "--set");
    return v;
}

}  // namespace

Result<void> apply_settings(const std::map<std::string, std::string>& params, GenerateOptions& options) {
    PersonaSettings& persona = options.persona;
    ConditionalSettings& cond = options.conditional;
    // The settings that are a share between 0 and 1, by key.
    const std::vector<std::pair<std::string, double*>> shares = {
        {"persona.pronoun_share", &persona.pronoun_share},
        {"persona.multi_sentence_share", &persona.multi_sentence_share},
        {"persona.context_share", &persona.context_share},
        {"long_hop.named_share", &options.long_hop.named_share},
        {"conditional.name_reuse", &cond.name_reuse},
        {"conditional.easy_paraphrase_share", &cond.easy_paraphrase_share},
        {"conditional.hard_paraphrase_share", &cond.hard_paraphrase_share},
        {"conditional.easy_loose_share", &cond.easy_loose_share},
        {"conditional.hard_loose_share", &cond.hard_loose_share},
        {"conditional.role_share", &cond.role_share},
        {"conditional.easy_rule_named_share", &cond.easy_rule_named_share},
        {"conditional.easy_name_share", &cond.easy_name_share},
    };
    std::vector<std::string> keys = {"persona.name_pool", "persona.distinct_names", "conditional.paraphrase_share",
                                     "conditional.easy_min_sentences", "conditional.easy_max_sentences",
                                     "conditional.hard_min_sentences", "conditional.hard_max_sentences"};
    for (const auto& share : shares) keys.push_back(share.first);
    std::sort(keys.begin(), keys.end());
    for (const auto& param : params) {
        // Not a structured binding in the loop: clang 14 cannot capture one in the lambda.
        const std::string& key = param.first;
        const std::string& value = param.second;
        const auto share = std::find_if(shares.begin(), shares.end(), [&key](const auto& s) { return s.first == key; });
        if (share != shares.end()) {
            MF_TRY_ASSIGN(*share->second, share_setting(key, value));
        } else if (key == "persona.name_pool") {
            char* end = nullptr;
            const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
            if (value.empty() || value[0] == '-' || end != value.c_str() + value.size() || n == 0 || n > 100000)
                return make_error(ErrorKind::invalid_input,
                                  "persona.name_pool must be a whole number of names, at least 1 (got '" + value + "')",
                                  "--set");
            persona.name_pool = static_cast<std::size_t>(n);
        } else if (key == "persona.distinct_names") {
            if (value != "true" && value != "false")
                return make_error(ErrorKind::invalid_input,
                                  "persona.distinct_names must be true or false (got '" + value + "')", "--set");
            persona.distinct_names = value == "true";
        } else if (key == "conditional.paraphrase_share") {  // both variants at once
            MF_TRY_ASSIGN(cond.easy_paraphrase_share, share_setting(key, value));
            cond.hard_paraphrase_share = cond.easy_paraphrase_share;
        } else if (key == "conditional.easy_min_sentences" || key == "conditional.easy_max_sentences" ||
                   key == "conditional.hard_min_sentences" || key == "conditional.hard_max_sentences") {
            // The validator's bounds: Easy essays have 5-8 sentences, Hard ones 8-12.
            const bool hard = key.find("hard") != std::string::npos;
            const std::size_t low = hard ? 8 : 5, high = hard ? 12 : 8;
            char* end = nullptr;
            const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
            if (value.empty() || value[0] == '-' || end != value.c_str() + value.size() || n < low || n > high)
                return make_error(ErrorKind::invalid_input,
                                  key + " must be a whole number of sentences from " + std::to_string(low) + " to " +
                                      std::to_string(high) + " (got '" + value + "')",
                                  "--set");
            if (key == "conditional.easy_min_sentences") cond.easy_min_sentences = static_cast<std::size_t>(n);
            else if (key == "conditional.easy_max_sentences") cond.easy_max_sentences = static_cast<std::size_t>(n);
            else if (key == "conditional.hard_min_sentences") cond.hard_min_sentences = static_cast<std::size_t>(n);
            else cond.hard_max_sentences = static_cast<std::size_t>(n);
        } else {
            const std::string hint = did_you_mean(key, keys);
            std::string known;
            for (const auto& k : keys) known += (known.empty() ? "" : ", ") + k;
            return make_error(ErrorKind::invalid_input,
                              "unknown setting '" + key + "' for the MemFail datasets" +
                                  (hint.empty() ? std::string() : " (" + hint + ")") + "; known: " + known,
                              "--set");
        }
    }
    // 100 rows, one name each.
    if (persona.distinct_names && persona.name_pool < 100)
        return make_error(ErrorKind::invalid_input,
                          "persona.distinct_names needs persona.name_pool of at least 100 (one name per essay; got " +
                              std::to_string(persona.name_pool) + ")",
                          "--set");
    if (cond.easy_min_sentences > cond.easy_max_sentences || cond.hard_min_sentences > cond.hard_max_sentences)
        return make_error(ErrorKind::invalid_input,
                          "conditional.*_min_sentences must not exceed the matching *_max_sentences", "--set");
    return {};
}

void record_dedup(data::Scenario& scenario, const std::string& key, const MinHashDeduper& deduper,
                  std::size_t candidates) {
    nlohmann::json drops = nlohmann::json::array();
    for (const auto& d : deduper.drops())
        drops.push_back({{"id", d.id}, {"kept", d.kept_id}, {"jaccard", d.jaccard}});
    scenario.meta["dedup"] = {{"method", "minhash-lsh word-3-shingles"},
                              {"key", key},
                              {"threshold", deduper.threshold()},
                              {"candidates", candidates},
                              {"kept", candidates - deduper.drops().size()},
                              {"dropped", drops}};
}

void check_dataset_rules(const data::Scenario& s, std::size_t line, std::vector<data::Violation>& out) {
    if (s.dataset == "conditional_facts_easy") check_conditional_facts_rules(s, false, line, out);
    else if (s.dataset == "conditional_facts_hard") check_conditional_facts_rules(s, true, line, out);
    else if (s.dataset == "coexisting_facts") check_coexisting_facts_rules(s, line, out);
    else if (s.dataset == "persona_retrieval") check_persona_retrieval_rules(s, line, out);
    else if (s.dataset == "long_hop") check_long_hop_rules(s, line, out);
}

std::optional<bool> condition_met(const data::Probe& p) {
    const auto it = p.meta.find("condition_met");
    if (it == p.meta.end()) return std::nullopt;
    if (it->is_boolean()) return it->get<bool>();
    if (it->is_string()) {
        const std::string v = text::normalize(it->get<std::string>());
        if (v == "yes" || v == "true") return true;
        if (v == "no" || v == "false") return false;
    }
    return std::nullopt;
}

namespace {

// Openers that fit a sentence in any tense, assert rather than hedge ("rumour has it" would make a
// rule hearsay), end in a comma (the sentence after them reads as it was written) and hold no
// conditional, exclusive or negating word ("if", "when", "only", "never", "except", "no"), so a rule
// sentence keeps its meaning and a Hard essay its lack of connectives.
constexpr std::string_view k_openers[] = {
    "By all accounts,", "As it happens,", "In truth,", "Truth be told,", "Oddly enough,", "Funnily enough,",
    "Admittedly,", "Of course,", "For the record,", "Without a doubt,", "As everyone knows,", "Indeed,",
    "In fact,", "In short,", "In fairness,", "To be fair,", "Curiously,", "Tellingly,", "Incidentally,",
    "As it turns out,", "Sure enough,", "Interestingly,", "Needless to say,", "Strangely,", "Happily,",
    "Predictably,", "Unsurprisingly,", "Simply put,", "To put it plainly,", "Certainly,", "Frankly,",
    "As anyone nearby knows,", "Notably,", "Remarkably,", "By common consent,", "As luck would have it,",
    "Plainly,", "Fittingly,", "For what it is worth,", "Above all,", "Evidently,", "Naturally,"};

bool is_letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '\''; }

// "The local lord" -> "the local lord", unless it opens with a name or "I".
std::string after_opener(const std::string& sentence, const std::vector<std::string>& names) {
    if (sentence.empty()) return sentence;
    std::size_t end = 0;
    while (end < sentence.size() && is_letter(sentence[end])) ++end;
    const std::string first = sentence.substr(0, end);
    for (const auto& n : names)
        if (!n.empty() && sentence.rfind(n, 0) == 0) return sentence;
    if (first == "I" || first.rfind("I'", 0) == 0) return sentence;
    std::string out = sentence;
    out[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
    return out;
}

}  // namespace

std::optional<bool> answer_polarity(const std::string& answer) {
    const auto words = text::words(answer);
    if (words.empty()) return std::nullopt;
    if (words[0] == "yes") return true;
    if (words[0] == "no") return false;
    return std::nullopt;
}

std::vector<std::string> FrameVariation::vary(std::vector<std::string> sentences, const std::vector<std::string>& names,
                                              Rng& rng) const {
    std::map<std::string, std::size_t> here;  // frames this essay has taken (counted once per essay)
    auto essays_with = [&](const std::string& frame) {
        const auto it = m_essays.find(frame);
        return (it == m_essays.end() ? 0 : it->second) + (here.count(frame) ? 0 : 1);
    };
    for (auto& s : sentences) {
        std::string frame = sentence_frame(s, names);
        if (essays_with(frame) > m_limit) {
            std::vector<std::size_t> order(std::size(k_openers));
            for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
            rng.shuffle(order);
            for (const auto i : order) {
                std::string varied = std::string(k_openers[i]) + " " + after_opener(s, names);
                std::string vframe = sentence_frame(varied, names);
                if (essays_with(vframe) > m_limit) continue;
                s = std::move(varied);
                frame = std::move(vframe);
                break;
            }
        }
        here[frame] = 1;
    }
    return sentences;
}

void FrameVariation::commit(const std::vector<std::string>& sentences, const std::vector<std::string>& names) {
    std::set<std::string> frames;
    for (const auto& s : sentences) frames.insert(sentence_frame(s, names));
    for (const auto& f : frames) ++m_essays[f];
}

}  // namespace memfail::suites::memfail_suite
