// SPDX-License-Identifier: MIT
// A MemorySystem that lives outside memfail, reached through the adapter protocol: `exec:` (a child
// process speaking JSON lines) or `http:` (POST <url>/v1/<op>, or a preset for Mem0's or Graphiti's
// own REST server). docs/ADAPTERS.md is the contract.
#pragma once
#include <memory>
#include <string>

#include <memfail/core/spec.hpp>
#include <memfail/memory/adapter/protocol.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::memory::adapter {

// Transports from spec strings (options in docs/ADAPTERS.md). Creating one starts nothing: an exec
// child is started, and `hello` exchanged, on the first call.
Result<std::unique_ptr<Transport>> make_exec_transport(const Spec& spec);
Result<std::unique_ptr<Transport>> make_http_transport(const Spec& spec);
// "exec:..." or "http:..." (any other name: invalid_input).
Result<std::unique_ptr<Transport>> make_transport(const Spec& spec);

class AdapterSystem final : public MemorySystem {
public:
    // Sends `hello`, checks the protocol version and reads the capabilities.
    static Result<std::unique_ptr<AdapterSystem>> connect(std::unique_ptr<Transport> transport, std::string spec);

    std::string spec() const override { return m_spec; }
    Capabilities capabilities() const override {
        Capabilities c = m_capabilities;
        c.external = true;
        return c;
    }
    Result<void> store_conversation(const data::Session& session) override;
    // More than k memories from the adapter is a protocol error (conformance says so too).
    Result<std::vector<Hit>> retrieve_memories(std::string_view query, const std::vector<data::Message>& history,
                                               int k) override;
    Result<std::vector<Memory>> all_memories() override;
    Result<void> reset() override;
    Result<std::vector<MemoryEvent>> history(std::string_view memory_id) override;
    Result<std::vector<Memory>> state_as_of(std::string_view timestamp) override;
    // The `answer` operation; unsupported without a call unless hello announced "answer". A reply
    // whose fields have the wrong type, a confidence outside [0, 1] or more than the bounds of
    // protocol.hpp is a protocol error naming the field ("answer: confidence").
    Result<SystemAnswer> answer(std::string_view query, const std::vector<data::Message>& history) override;
    std::uint64_t generation() const override { return m_transport->restarts(); }

    const std::string& system_name() const { return m_system_name; }  // from hello

private:
    AdapterSystem(std::unique_ptr<Transport> transport, std::string spec) : m_transport(std::move(transport)), m_spec(std::move(spec)) {}

    std::unique_ptr<Transport> m_transport;
    std::string m_spec;
    std::string m_system_name;
    Capabilities m_capabilities;
    bool m_provenance_op = false;
};

// Registry entries ("exec", "http"): make_transport + connect.
Result<std::unique_ptr<MemorySystem>> make_adapter_system(const Spec& spec, const SystemContext& context);
SystemInfo exec_system_info();
SystemInfo http_system_info();

}  // namespace memfail::memory::adapter
