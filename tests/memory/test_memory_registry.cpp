// SPDX-License-Identifier: MIT
// Spec parsing, errors and listing of the built-in memory systems; the none system.
#include <algorithm>

#include <gtest/gtest.h>

#include <memfail/memory/memory_system.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::ok;

Error error_of(std::string_view spec) {
    auto made = make_memory_system(spec, SystemContext{});
    EXPECT_FALSE(made.has_value()) << spec;
    return made ? Error{} : made.error();
}

TEST(Registry, DefaultsGiveCanonicalSpecs) {
    EXPECT_EQ(ok(make_memory_system("verbatim", {}))->spec(), "verbatim:chunk=turn,retriever=bm25,roles=all");
    EXPECT_EQ(ok(make_memory_system("verbatim:retriever=hashed", {}))->spec(),
              "verbatim:chunk=turn,dim=512,retriever=hashed,roles=all");
    EXPECT_EQ(ok(make_memory_system(" verbatim : roles=user , chunk=sentence", {}))->spec(),
              "verbatim:chunk=sentence,retriever=bm25,roles=user");
    EXPECT_EQ(ok(make_memory_system("none", {}))->spec(), "none");
    EXPECT_EQ(ok(make_memory_system("oracle", {}))->spec(), "oracle:respect_k=false,stage=all");
}

TEST(Registry, CanonicalSpecRoundTrips) {
    for (const char* spec : {"verbatim:dim=64,retriever=hashed,chunk=sentence", "none",
                             "oracle:stage=summary,over.chunk=sentence,respect_k=true"}) {
        const std::string canonical = ok(make_memory_system(spec, {}))->spec();
        EXPECT_EQ(ok(make_memory_system(canonical, {}))->spec(), canonical) << spec;
    }
}

TEST(Registry, UnknownSystemSuggestsTheClosestName) {
    const Error e = error_of("verbatin:chunk=turn");
    EXPECT_EQ(e.kind, ErrorKind::invalid_input);
    EXPECT_NE(e.message.find("unknown memory system 'verbatin'"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("did you mean 'verbatim'?"), std::string::npos) << e.message;

    const Error far = error_of("mem0");
    EXPECT_EQ(far.message.find("did you mean"), std::string::npos) << far.message;
    EXPECT_NE(far.message.find("verbatim, facts, notes, graph, mixture, none, oracle"), std::string::npos) << far.message;
}

TEST(Registry, UnknownOptionSuggestsTheClosestOption) {
    const Error e = error_of("verbatim:chunks=turn");
    EXPECT_EQ(e.kind, ErrorKind::invalid_input);
    EXPECT_NE(e.message.find("did you mean 'chunk'?"), std::string::npos) << e.message;
    EXPECT_NE(error_of("oracle:stag=all").message.find("did you mean 'stage'?"), std::string::npos);
    EXPECT_NE(error_of("none:k=3").message.find("unknown option 'k'"), std::string::npos);
}

TEST(Registry, BadValuesAreRejected) {
    EXPECT_NE(error_of("verbatim:chunk=paragraph").message.find("turn, sentence"), std::string::npos);
    EXPECT_NE(error_of("verbatim:retriever=bm52").message.find("did you mean 'bm25'?"), std::string::npos);
    EXPECT_NE(error_of("verbatim:dim=64").message.find("retriever=hashed"), std::string::npos);
    EXPECT_NE(error_of("verbatim:retriever=hashed,dim=4").message.find("between"), std::string::npos);
    EXPECT_NE(error_of("verbatim:retriever=hashed,dim=lots").message.find("whole number"),
              std::string::npos);
    EXPECT_NE(error_of("oracle:respect_k=maybe").message.find("true or false"), std::string::npos);
    EXPECT_EQ(error_of("verbatim:chunk").kind, ErrorKind::invalid_input);
    EXPECT_EQ(error_of(":chunk=turn").kind, ErrorKind::invalid_input);
}

TEST(Registry, OracleInnerOptionsAreChecked) {
    EXPECT_NE(error_of("oracle:stage=all,over=verbatim").message.find("stage=retrieval"),
              std::string::npos);
    EXPECT_NE(error_of("oracle:over.chunk=sentence").message.find("stage=retrieval"), std::string::npos);
    EXPECT_NE(error_of("oracle:stage=retrieval,over=oracle").message.find("another oracle"),
              std::string::npos);
    EXPECT_NE(error_of("oracle:stage=retrieval,over.chnk=sentence").message.find("did you mean 'chunk'?"),
              std::string::npos);
    EXPECT_NE(error_of("oracle:stage=summary,over=verbatm").message.find("did you mean 'verbatim'?"),
              std::string::npos);
    EXPECT_EQ(ok(make_memory_system("oracle:stage=retrieval,over=none", {}))->spec(),
              "oracle:over=none,respect_k=false,stage=retrieval");
}

TEST(Registry, ListsEverySystemWithItsOptions) {
    const std::vector<SystemInfo> systems = list_memory_systems();
    std::vector<std::string> names;
    for (const SystemInfo& s : systems) {
        names.push_back(s.name);
        EXPECT_FALSE(s.summary.empty()) << s.name;
        for (const OptionInfo& o : s.options) EXPECT_FALSE(o.help.empty()) << s.name << "." << o.name;
    }
    EXPECT_EQ(names, (std::vector<std::string>{"verbatim", "facts", "notes", "graph", "mixture", "none", "oracle", "ledger",
                                              "exec", "http"}));

    auto find_option = [&](const std::string& system, const std::string& option) -> const OptionInfo* {
        for (const SystemInfo& s : systems)
            if (s.name == system)
                for (const OptionInfo& o : s.options)
                    if (o.name == option) return &o;
        return nullptr;
    };
    for (const auto& [system, option, fallback] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"verbatim", "chunk", "turn"},
             {"verbatim", "retriever", "bm25"},
             {"verbatim", "dim", "512"},
             {"verbatim", "roles", "all"},
             {"oracle", "stage", "all"},
             {"oracle", "over", "verbatim"},
             {"oracle", "respect_k", "false"},
             {"facts", "extract", "published"},  // extract=careful is the tuned variant, never the default
             {"graph", "extract", "published"}}) {
        const OptionInfo* info = find_option(system, option);
        ASSERT_NE(info, nullptr) << system << "." << option;
        EXPECT_EQ(info->default_value, fallback) << system << "." << option;
    }
    // Every listed verbatim option is accepted with its default value.
    Spec spec{"verbatim", {}};
    for (const SystemInfo& s : systems)
        if (s.name == "verbatim")
            for (const OptionInfo& o : s.options)
                if (o.name != "dim") spec.options[o.name] = o.default_value;
    EXPECT_TRUE(make_memory_system(spec, {}).has_value());
}

TEST(NoneSystem, RemembersNothing) {
    auto none = ok(make_memory_system("none", {}));
    ok(none->store_conversation(test::session(
        "s1", "2026-03-01T09:00:00Z", {test::user("m1", "My cat is called Miso.")})));
    EXPECT_TRUE(ok(none->all_memories()).empty());
    EXPECT_TRUE(ok(none->retrieve_memories("What is my cat called?", {}, 5)).empty());
    EXPECT_TRUE(none->capabilities().provenance);
    EXPECT_FALSE(none->capabilities().uses_ground_truth);
    ok(none->reset());
    EXPECT_EQ(none->history("m1#0").error().kind, ErrorKind::unsupported);
}

}  // namespace
}  // namespace memfail::memory
