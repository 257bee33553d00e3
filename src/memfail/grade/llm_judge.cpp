// SPDX-License-Identifier: MIT
// Judge calls: render inputs, ask, read the schema-checked reply.
#include <memfail/core/text.hpp>
#include <memfail/grade/llm_judge.hpp>
#include <memfail/llm/prompts.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

namespace memfail::grade {

namespace prompts = llm::prompts;
using nlohmann::json;

std::string named_person(const data::Probe& probe) {
    auto it = probe.meta.find("distractor");
    if (it != probe.meta.end() && it->is_string()) return it->get<std::string>();
    return {};
}

namespace {

prompts::JudgedFact judged(const data::EvidenceFact& fact, int number = 0) {
    prompts::JudgedFact f;
    f.number = number;
    f.text = fact.text;
    for (const auto& d : fact.key_details)
        if (!d.variants.empty()) {
            f.key_details.push_back(d.variants.front());
            f.parts.emplace_back(d.name, d.variants.front());
        }
    return f;
}

std::string label_for(std::size_t index) { return "m" + std::to_string(index + 1); }

// Words of a text worth matching on (lower-case, no stopwords).
std::unordered_set<std::string> content_words(const std::string& normalized) {
    std::unordered_set<std::string> out;
    for (auto& w : text::split(normalized, ' '))
        if (w.size() > 2 && !text::is_stopword(w)) out.insert(std::move(w));
    return out;
}

}  // namespace

// Reads a schema-checked reply; a reply that still has the wrong shape becomes an error, never a throw.
template <class F>
auto read_reply(const char* stage, F&& read) -> decltype(read()) {
    try {
        return read();
    } catch (const nlohmann::json::exception& e) {
        return make_error(ErrorKind::invalid_output, std::string("the judge's reply has the wrong shape: ") + e.what(), stage);
    }
}

Result<json> LlmJudge::ask(llm::ChatRequest request) {
    request.temperature = m_options.temperature;
    request.seed = m_options.seed;
    MF_TRY_ASSIGN(llm::ChatReply reply, m_client.chat(request));
    if (!reply.json)
        return make_error(ErrorKind::invalid_output, "the judge's reply carried no JSON object", request.stage);
    return std::move(*reply.json);
}

Result<std::vector<JudgeVerdict>> LlmJudge::storage(const MemorySnapshot& snapshot,
                                                    const std::vector<const data::EvidenceFact*>& facts, Task task) {
    const auto& memories = snapshot.memories();
    std::size_t total_chars = 0;
    for (const auto& m : memories) total_chars += m.text.size();

    // Which memories to show: all of them, or the union of each fact's best lexical candidates.
    std::vector<std::size_t> shown;
    if (total_chars <= m_options.whole_store_chars) {
        shown.resize(memories.size());
        for (std::size_t i = 0; i < shown.size(); ++i) shown[i] = i;
    } else {
        std::set<std::size_t> chosen;
        for (const auto* fact : facts) {
            auto wanted = content_words(text::normalize(fact->text));
            for (const auto& d : fact->key_details)
                for (const auto& v : d.variants)
                    for (auto& w : content_words(text::normalize(v))) wanted.insert(w);
            std::vector<std::pair<std::size_t, std::size_t>> scored;  // (overlap, index)
            for (std::size_t i = 0; i < memories.size(); ++i) {
                std::size_t overlap = 0;
                for (const auto& w : text::split(snapshot.normalized_text(i), ' '))
                    if (wanted.count(w)) ++overlap;
                if (overlap) scored.emplace_back(overlap, i);
            }
            const std::size_t keep = std::min(m_options.candidates_per_fact, scored.size());
            std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep), scored.end(),
                              [](auto& a, auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
            for (std::size_t j = 0; j < keep; ++j) chosen.insert(scored[j].second);
        }
        shown.assign(chosen.begin(), chosen.end());
    }
    std::vector<prompts::LabelledMemory> store;
    std::map<std::string, std::string> id_of_label;
    for (std::size_t i : shown) {
        store.push_back({label_for(i), memories[i].text});
        id_of_label[label_for(i)] = memories[i].id;
    }
    std::vector<prompts::JudgedFact> asked;
    for (std::size_t i = 0; i < facts.size(); ++i) asked.push_back(judged(*facts[i], static_cast<int>(i + 1)));

    MF_TRY_ASSIGN(json reply, ask(task ? prompts::paper_judge_storage(m_options.model, *task, store, asked)
                                       : prompts::judge_storage(m_options.model, store, asked)));
    return read_reply("judge.storage", [&]() -> Result<std::vector<JudgeVerdict>> {
    std::vector<std::optional<JudgeVerdict>> verdicts(facts.size());
    for (const auto& r : reply["results"]) {
        const auto number = r["fact"].get<std::int64_t>();
        if (number < 1 || number > static_cast<std::int64_t>(facts.size())) continue;
        JudgeVerdict v;
        v.passed = r["present"].get<bool>();
        v.reason = r["reason"].get<std::string>();
        for (const auto& label : r["memories"]) {
            auto it = id_of_label.find(label.get<std::string>());
            if (it != id_of_label.end()) v.memory_ids.push_back(it->second);
        }
        verdicts[static_cast<std::size_t>(number - 1)] = std::move(v);
    }
    std::vector<JudgeVerdict> out;
    for (std::size_t i = 0; i < facts.size(); ++i) {
        if (!verdicts[i])
            return make_error(ErrorKind::invalid_output,
                              "the storage judge gave no result for fact " + std::to_string(i + 1) + " ('" +
                                  facts[i]->id + "')",
                              "judge.storage");
        out.push_back(std::move(*verdicts[i]));
    }
    return out;
    });
}

Result<JudgeVerdict> LlmJudge::summary(const data::EvidenceFact& fact, const std::vector<const memory::Memory*>& memories,
                                       Task task) {
    std::vector<prompts::LabelledMemory> shown;
    for (std::size_t i = 0; i < memories.size(); ++i) shown.push_back({label_for(i), memories[i]->text});
    MF_TRY_ASSIGN(json reply, ask(task ? prompts::paper_judge_summary(m_options.model, *task, judged(fact), shown)
                                       : prompts::judge_summary(m_options.model, judged(fact), shown)));
    return read_reply("judge.summary", [&]() -> Result<JudgeVerdict> {
    JudgeVerdict v;
    v.passed = reply["faithful"].get<bool>();
    v.reason = reply["reason"].get<std::string>();
    for (const auto& m : reply["missing"]) v.missing.push_back(m.get<std::string>());
    return v;
    });
}

Result<JudgeVerdict> LlmJudge::retrieval(const data::EvidenceFact& fact, const std::vector<memory::Hit>& retrieved,
                                         Task task, const std::string& question) {
    std::vector<prompts::LabelledMemory> shown;
    for (std::size_t i = 0; i < retrieved.size(); ++i) shown.push_back({label_for(i), retrieved[i].memory.text});
    MF_TRY_ASSIGN(json reply,
                  ask(task ? prompts::paper_judge_retrieval(m_options.model, *task, question, judged(fact), shown)
                           : prompts::judge_retrieval(m_options.model, judged(fact), shown)));
    return read_reply("judge.retrieval", [&]() -> Result<JudgeVerdict> {
    JudgeVerdict v;
    v.passed = reply["present"].get<bool>();
    v.reason = reply["reason"].get<std::string>();
    return v;
    });
}

Result<JudgeVerdict> LlmJudge::answer(const data::Probe& probe, const std::string& reply_text, Task task) {
    std::vector<std::string> expected, facts;
    for (const auto& f : probe.evidence) {
        facts.push_back(f.text);
        if (probe.kind == data::ProbeKind::list)
            for (const auto& d : f.key_details)
                if (d.name != "entity" && !d.variants.empty()) expected.push_back(d.variants.front());
    }
    MF_TRY_ASSIGN(json reply,
                  ask(task ? prompts::paper_judge_answer(m_options.model, *task, probe.question, probe.answer, expected,
                                                         facts, reply_text)
                           : prompts::judge_answer(m_options.model, data::probe_kind_name(probe.kind), probe.question,
                                                   probe.answer, expected, facts, reply_text)));
    return read_reply("judge.answer", [&]() -> Result<JudgeVerdict> {
    JudgeVerdict v;
    v.passed = reply["correct"].get<bool>();
    v.reason = reply["reason"].get<std::string>();
    return v;
    });
}

Result<JudgeVerdict> LlmJudge::abstention(const data::Probe& probe, const std::string& reply_text, Task task,
                                          const std::string& essay) {
    std::string person = named_person(probe);
    if (person.empty()) person = "(the person named in the question)";
    std::string entity;
    if (auto it = probe.meta.find("entity"); it != probe.meta.end() && it->is_string()) entity = it->get<std::string>();
    MF_TRY_ASSIGN(json reply,
                  ask(task && !entity.empty()
                          ? prompts::paper_judge_abstention(m_options.model, probe.question, entity, person, essay,
                                                            reply_text)
                          : prompts::judge_abstention(m_options.model, probe.question, person, reply_text)));
    return read_reply("judge.abstention", [&]() -> Result<JudgeVerdict> {
    JudgeVerdict v;
    v.passed = reply["abstained"].get<bool>();
    v.reason = reply["reason"].get<std::string>();
    return v;
    });
}

}  // namespace memfail::grade
