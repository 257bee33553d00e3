// SPDX-License-Identifier: MIT
// mixture: rule routing of units to substores, reciprocal-rank fusion of their retrievals.
#include <memfail/memory/builtin/mixture.hpp>

#include <algorithm>
#include <set>

#include <memfail/core/text.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/memory/builtin/system_store.hpp>

namespace memfail::memory {

namespace {

constexpr double k_rrf_constant = 60.0;  // the usual reciprocal-rank-fusion damping

const std::vector<std::string> k_substores = {"verbatim", "facts", "notes", "graph"};

bool has_any_word(const std::vector<std::string>& words, std::initializer_list<const char*> cues) {
    for (const auto& w : words)
        for (const char* cue : cues)
            if (w == cue) return true;
    return false;
}

}  // namespace

const char* unit_kind_name(UnitKind kind) {
    switch (kind) {
        case UnitKind::conditional: return "conditional";
        case UnitKind::long_text: return "long";
        case UnitKind::preference: return "preference";
        case UnitKind::other: return "other";
    }
    return "other";
}

UnitKind classify_unit(std::string_view text, int long_words) {
    const std::vector<std::string> words = text::words(text::normalize(text));
    // Long descriptive text first: an essay may contain an "if", but splitting it would separate the
    // rule from the person it is about; a store that keeps text whole keeps them together.
    if (static_cast<int>(words.size()) > long_words) return UnitKind::long_text;
    if (has_any_word(words, {"if", "when", "whenever", "unless", "because", "after", "before", "once",
                             "until", "whenever", "so", "makes", "leads", "causes"}))
        return UnitKind::conditional;
    if (has_any_word(words, {"love", "loves", "like", "likes", "prefer", "prefers", "favourite", "favorite",
                             "enjoy", "enjoys", "hate", "hates", "adore", "adores", "craving", "fan"}))
        return UnitKind::preference;
    return UnitKind::other;
}

Result<std::unique_ptr<MemorySystem>> MixtureSystem::create(const Spec& spec, const SystemContext& context) {
    MF_TRY(spec.check_keys({"conditional", "long", "preference", "other", "long_words", "router"}));
    MixtureOptions options;
    const std::pair<const char*, UnitKind> keys[] = {{"conditional", UnitKind::conditional},
                                                     {"long", UnitKind::long_text},
                                                     {"preference", UnitKind::preference},
                                                     {"other", UnitKind::other}};
    for (const auto& [key, kind] : keys) {
        MF_TRY_ASSIGN(options.route[kind], spec.get_choice(key, options.route[kind], k_substores));
    }
    MF_TRY_ASSIGN(const std::int64_t long_words, spec.get_int("long_words", 60));
    if (long_words < 5 || long_words > 10000)
        return make_error(ErrorKind::invalid_input, "option 'long_words' of 'mixture' must be between 5 and 10000");
    options.long_words = static_cast<int>(long_words);
    MF_TRY_ASSIGN(const std::string router, spec.get_choice("router", "rules", {"rules", "llm"}));
    options.llm_router = router == "llm";
    if (options.llm_router) MF_TRY(require_system_model(context, "mixture", "routes with router=llm"));

    std::map<std::string, std::unique_ptr<MemorySystem>> stores;
    for (const auto& [kind, name] : options.route) {
        if (stores.count(name)) continue;
        SystemContext sub = context;
        sub.store_name = context.store_name + "-" + name;  // each substore in its own file
        auto made = make_memory_system(name, sub);
        if (!made) return made.error().with_context("mixture substore '" + name + "'");
        stores.emplace(name, std::move(made).value());
    }
    return std::unique_ptr<MemorySystem>(new MixtureSystem(std::move(options), context.services, std::move(stores)));
}

SystemInfo MixtureSystem::info() {
    return {"mixture",
            "Routes each message by its kind to the store that keeps it best (conditional/causal -> graph, "
            "long text -> verbatim, short preferences -> facts) and fuses their retrievals by reciprocal rank",
            {{"conditional", "graph", "store for conditional and causal statements: verbatim, facts, notes or graph"},
             {"long", "verbatim", "store for messages longer than long_words"},
             {"preference", "facts", "store for short statements of liking or disliking"},
             {"other", "verbatim", "store for everything else"},
             {"long_words", "60", "words above which a message counts as long text"},
             {"router", "rules",
              "rules: route by the word rules in docs/SYSTEMS.md; llm: the --system-model names each message's "
              "kind (one call per session; messages it leaves out fall back to the rules)"}}};
}

std::string MixtureSystem::spec() const {
    Spec s{"mixture", {}};
    s.options["conditional"] = m_options.route.at(UnitKind::conditional);
    s.options["long"] = m_options.route.at(UnitKind::long_text);
    s.options["preference"] = m_options.route.at(UnitKind::preference);
    s.options["other"] = m_options.route.at(UnitKind::other);
    s.options["long_words"] = std::to_string(m_options.long_words);
    s.options["router"] = m_options.llm_router ? "llm" : "rules";
    return s.to_string();
}

Capabilities MixtureSystem::capabilities() const {
    Capabilities caps;
    caps.provenance = true;
    caps.idempotent_store = true;
    for (const auto& [name, store] : m_stores) {
        const Capabilities c = store->capabilities();
        caps.provenance = caps.provenance && c.provenance;
        caps.idempotent_store = caps.idempotent_store && c.idempotent_store;
    }
    return caps;
}

Result<std::vector<UnitKind>> MixtureSystem::classify(const data::Session& session) {
    std::vector<UnitKind> kinds;
    kinds.reserve(session.messages.size());
    for (const auto& message : session.messages) kinds.push_back(classify_unit(message.content, m_options.long_words));
    if (!m_options.llm_router) return kinds;

    const NumberedConversation conversation = number_messages(session);
    if (conversation.shown.empty()) return kinds;
    MF_TRY_ASSIGN(llm::ChatReply reply,
                  ask_system_model(m_services,
                                   llm::prompts::mixture_route(m_services.model, conversation.shown, m_options.long_words),
                                   "mixture"));
    // The model numbers the non-empty messages; map its numbers back to positions in the session.
    std::map<std::string, std::size_t> position_of;
    for (std::size_t i = 0; i < session.messages.size(); ++i) position_of.emplace(session.messages[i].id, i);
    const std::map<std::string, UnitKind> kind_of = {{"conditional", UnitKind::conditional},
                                                     {"long", UnitKind::long_text},
                                                     {"preference", UnitKind::preference},
                                                     {"other", UnitKind::other}};
    try {
        for (const auto& unit : reply.json.value()["units"]) {
            const auto number = unit["message"].get<std::int64_t>();
            const auto kind = kind_of.find(unit["kind"].get<std::string>());
            if (number < 1 || number > static_cast<std::int64_t>(conversation.message_ids.size()) || kind == kind_of.end())
                continue;  // a number or kind that does not exist: the rules decide that message
            kinds[position_of.at(conversation.message_ids[static_cast<std::size_t>(number - 1)])] = kind->second;
        }
    } catch (const std::exception& e) {
        return make_error(ErrorKind::invalid_output, std::string("the routing reply has the wrong shape: ") + e.what());
    }
    return kinds;
}

Result<void> MixtureSystem::store_conversation(const data::Session& session) {
    MF_TRY_ASSIGN(const std::vector<UnitKind> kinds, classify(session));
    std::map<std::string, data::Session> parts;
    for (std::size_t i = 0; i < session.messages.size(); ++i) {
        const auto& message = session.messages[i];
        const std::string& target = m_options.route.at(kinds[i]);
        auto [it, fresh] = parts.try_emplace(target);
        if (fresh) {
            it->second.id = session.id;
            it->second.timestamp = session.timestamp;
        }
        it->second.messages.push_back(message);
    }
    for (auto& [name, part] : parts) {
        auto stored = m_stores.at(name)->store_conversation(part);
        if (!stored) return stored.error().with_context("mixture -> " + name);
    }
    return {};
}

Result<std::vector<Hit>> MixtureSystem::retrieve_memories(std::string_view query,
                                                          const std::vector<data::Message>& history, int k) {
    struct Fused {
        Hit hit;
        double score = 0;
    };
    std::map<std::string, Fused> fused;
    for (const auto& [name, store] : m_stores) {
        MF_TRY_ASSIGN(auto hits, store->retrieve_memories(query, history, k));
        for (std::size_t rank = 0; rank < hits.size(); ++rank) {
            Hit hit = std::move(hits[rank]);
            hit.memory.id = name + "/" + hit.memory.id;
            auto& f = fused[hit.memory.id];
            f.score += 1.0 / (k_rrf_constant + static_cast<double>(rank + 1));
            f.hit = std::move(hit);
        }
    }
    std::vector<Fused> ranked;
    for (auto& [id, f] : fused) ranked.push_back(std::move(f));
    std::stable_sort(ranked.begin(), ranked.end(), [](const Fused& a, const Fused& b) { return a.score > b.score; });
    std::vector<Hit> out;
    for (auto& f : ranked) {
        if (static_cast<int>(out.size()) == k) break;
        f.hit.score = f.score;
        out.push_back(std::move(f.hit));
    }
    return out;
}

Result<std::vector<Memory>> MixtureSystem::all_memories() {
    std::vector<Memory> out;
    for (const auto& [name, store] : m_stores) {
        MF_TRY_ASSIGN(auto memories, store->all_memories());
        for (auto& m : memories) {
            m.id = name + "/" + m.id;
            out.push_back(std::move(m));
        }
    }
    return out;
}

Result<void> MixtureSystem::reset() {
    for (const auto& [name, store] : m_stores) MF_TRY(store->reset());
    return {};
}

}  // namespace memfail::memory
