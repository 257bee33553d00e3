// SPDX-License-Identifier: MIT
// AdapterSystem: the MemorySystem interface carried over a Transport with the protocol's codec.
#include <memfail/memory/adapter/adapter_system.hpp>

#include <algorithm>
#include <utility>

namespace memfail::memory::adapter {

using nlohmann::json;

namespace {

// The array field `field` of a result, each item parsed by `parse` (errors name "op: field[i]...").
template <class T, class Parse>
Result<std::vector<T>> items_of(const json& result, const char* field, const std::string& where,
                                Parse parse) {
    const auto it = result.find(field);
    if (it == result.end() || !it->is_array())
        return make_error(
            ErrorKind::protocol,
            std::string("the result has no \"") + field + "\" array" +
                (it == result.end() ? "" : " (it is " + std::string(it->type_name()) + ")"),
            where);
    std::vector<T> out;
    out.reserve(it->size());
    for (std::size_t i = 0; i < it->size(); ++i) {
        auto item = parse((*it)[i], ErrorKind::protocol,
                          std::string(field) + "[" + std::to_string(i) + "]");
        if (!item)
            return item.error().with_context(where);
        out.push_back(std::move(item).value());
    }
    return out;
}

json history_json(const std::vector<data::Message>& history) {
    json out = json::array();
    for (const data::Message& m : history)
        out.push_back(to_json(m));
    return out;
}

// A memory without sources from an adapter that announced the `provenance` operation: ask for them.
Result<void> fill_sources(Transport& transport, Memory& memory) {
    if (!memory.sources.empty())
        return {};
    const std::string where = transport.describe() + ": provenance of '" + memory.id + "'";
    MF_TRY_ASSIGN(const json result, transport.call("provenance", json{{"memory_id", memory.id}}));
    const auto sources = result.find("sources");
    if (sources == result.end() || !sources->is_array())
        return make_error(ErrorKind::protocol, "the result has no \"sources\" array", where);
    for (std::size_t i = 0; i < sources->size(); ++i) {
        const json& id = (*sources)[i];
        if (!id.is_string())
            return make_error(ErrorKind::protocol,
                              "expected a string, got " + std::string(id.type_name()),
                              where + ": sources[" + std::to_string(i) + "]");
        memory.sources.push_back(id.get<std::string>());
    }
    return {};
}

} // namespace

Result<std::unique_ptr<AdapterSystem>> AdapterSystem::connect(std::unique_ptr<Transport> transport,
                                                              std::string spec) {
    MF_ASSERT(transport != nullptr, "AdapterSystem::connect needs a transport");
    std::unique_ptr<AdapterSystem> system(new AdapterSystem(std::move(transport), std::move(spec)));
    const std::string where = system->m_transport->describe() + ": hello";
    MF_TRY_ASSIGN(const json hello,
                  system->m_transport->call("hello", json{{"protocol", k_protocol_version}}));
    const auto version = hello.find("protocol");
    if (version == hello.end() || !version->is_number_integer())
        return make_error(ErrorKind::protocol, "the adapter's hello has no integer \"protocol\"",
                          where);
    if (version->get<std::int64_t>() != k_protocol_version)
        return make_error(ErrorKind::protocol,
                          "the adapter speaks protocol " + version->dump() + "; memfail speaks " +
                              std::to_string(k_protocol_version),
                          where);
    if (const auto name = hello.find("system"); name != hello.end() && name->is_string())
        system->m_system_name = name->get<std::string>();
    const auto caps = hello.find("capabilities");
    if (caps != hello.end() && !caps->is_null()) {
        MF_TRY_ASSIGN(system->m_capabilities,
                      capabilities_from_json(*caps, ErrorKind::protocol, where + ": capabilities"));
        system->m_provenance_op = has_provenance_op(*caps);
    }
    return system;
}

Result<void> AdapterSystem::store_conversation(const data::Session& session) {
    MF_TRY(m_transport->call("store_conversation", json{{"session", to_json(session)}}));
    return {};
}

Result<std::vector<Hit>> AdapterSystem::retrieve_memories(std::string_view query,
                                                          const std::vector<data::Message>& history,
                                                          int k) {
    const std::string where = m_transport->describe() + ": retrieve_memories";
    MF_TRY_ASSIGN(
        const json result,
        m_transport->call("retrieve_memories",
                          json{{"query", query}, {"history", history_json(history)}, {"k", k}}));
    MF_TRY_ASSIGN(std::vector<Hit> hits, items_of<Hit>(result, "memories", where, hit_from_json));
    if (hits.size() > static_cast<std::size_t>(std::max(k, 0)))
        return make_error(ErrorKind::protocol,
                          "the adapter answered " + std::to_string(hits.size()) +
                              " memories when asked for at most k=" + std::to_string(k),
                          where);
    if (m_provenance_op) {
        for (Hit& hit : hits)
            MF_TRY(fill_sources(*m_transport, hit.memory));
    }
    return hits;
}

Result<std::vector<Memory>> AdapterSystem::all_memories() {
    MF_TRY_ASSIGN(const json result, m_transport->call("all_memories", json::object()));
    MF_TRY_ASSIGN(std::vector<Memory> memories,
                  items_of<Memory>(result, "memories", m_transport->describe() + ": all_memories",
                                   memory_from_json));
    if (m_provenance_op) {
        for (Memory& memory : memories)
            MF_TRY(fill_sources(*m_transport, memory));
    }
    return memories;
}

Result<void> AdapterSystem::reset() {
    MF_TRY(m_transport->call("reset", json::object()));
    return {};
}

Result<std::vector<MemoryEvent>> AdapterSystem::history(std::string_view memory_id) {
    if (!m_capabilities.history)
        return make_error(ErrorKind::unsupported,
                          "history is not supported by the adapter (capabilities.history is false)",
                          m_transport->describe());
    MF_TRY_ASSIGN(const json result, m_transport->call("history", json{{"memory_id", memory_id}}));
    return items_of<MemoryEvent>(result, "events", m_transport->describe() + ": history",
                                 event_from_json);
}

Result<std::vector<Memory>> AdapterSystem::state_as_of(std::string_view timestamp) {
    if (!m_capabilities.as_of)
        return make_error(
            ErrorKind::unsupported,
            "state_as_of is not supported by the adapter (capabilities.as_of is false)",
            m_transport->describe());
    MF_TRY_ASSIGN(const json result,
                  m_transport->call("state_as_of", json{{"timestamp", timestamp}}));
    MF_TRY_ASSIGN(std::vector<Memory> memories,
                  items_of<Memory>(result, "memories", m_transport->describe() + ": state_as_of",
                                   memory_from_json));
    if (m_provenance_op) {
        for (Memory& memory : memories)
            MF_TRY(fill_sources(*m_transport, memory));
    }
    return memories;
}

Result<SystemAnswer> AdapterSystem::answer(std::string_view query,
                                           const std::vector<data::Message>& history) {
    if (!m_capabilities.answers)
        return make_error(ErrorKind::unsupported,
                          "answer is not supported by the adapter (capabilities.answer is false)",
                          m_transport->describe());
    MF_TRY_ASSIGN(const json result,
                  m_transport->call("answer",
                                    json{{"query", query}, {"history", history_json(history)}}));
    auto answered = answer_from_json(result, ErrorKind::protocol, "");
    if (!answered)
        return answered.error().with_context(m_transport->describe() + ": answer");
    return answered;
}

Result<std::unique_ptr<Transport>> make_transport(const Spec& spec) {
    if (spec.name == "exec")
        return make_exec_transport(spec);
    if (spec.name == "http")
        return make_http_transport(spec);
    return make_error(ErrorKind::invalid_input,
                      "'" + spec.name +
                          "' is not an adapter transport; use exec:cmd=... or http:url=...");
}

Result<std::unique_ptr<MemorySystem>> make_adapter_system(const Spec& spec, const SystemContext&) {
    // The context's storage folder and models are memfail's: an outside system keeps its own.
    MF_TRY_ASSIGN(std::unique_ptr<Transport> transport, make_transport(spec));
    MF_TRY_ASSIGN(std::unique_ptr<AdapterSystem> system,
                  AdapterSystem::connect(std::move(transport), spec.to_string()));
    return std::unique_ptr<MemorySystem>(std::move(system));
}

SystemInfo exec_system_info() {
    return {"exec",
            "An outside memory system run as a child process speaking the adapter protocol as JSON "
            "lines "
            "on stdin/stdout (docs/ADAPTERS.md); option values cannot contain ','",
            {{"cmd", "",
              "the command to run, split into words like a shell does ('...' and \"...\" group) "
              "but with no "
              "shell: e.g. cmd=python3 my_adapter.py (required)"},
             {"cwd", "", "working folder of the command (default: memfail's)"},
             {"timeout", "30s",
              "longest wait for one answer (ms, s or m; a bare number is seconds); the adapter is "
              "then stopped and restarted on the next call"},
             {"startup_timeout", "60s",
              "longest wait for the first answer (hello) after starting the command"}}};
}

SystemInfo http_system_info() {
    return {
        "http",
        "An outside memory system reached over HTTP: POST <url>/v1/<op> (docs/ADAPTERS.md), or "
        "Mem0's or "
        "Graphiti's own REST server with preset=; option values cannot contain ','",
        {{"url", "", "base URL of the server, e.g. http://127.0.0.1:8420 (required)"},
         {"token_env", "",
          "name of an environment variable holding a bearer token (never printed)"},
         {"timeout", "30s", "longest wait for one answer (ms, s or m; a bare number is seconds)"},
         {"retries", "2",
          "retries of connection errors, timeouts, 408, 429, 502-504 and 500 without an error body, with "
          "backoff (a structured error is final, so a store is never sent twice)"},
         {"preset", "protocol",
          "protocol: memfail's adapter protocol; mem0 or graphiti: speak that server's own REST API"},
         {"user", "memfail", "the Mem0 user_id / Graphiti group_id the presets store under"}}};
}

} // namespace memfail::memory::adapter
