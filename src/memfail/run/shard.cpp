// SPDX-License-Identifier: MIT
#include <memfail/run/shard.hpp>

#include <algorithm>
#include <charconv>
#include <numeric>

namespace memfail::run {

Result<ShardSpec> parse_shard(std::string_view text) {
    auto bad = [&](const std::string& why) {
        return make_error(ErrorKind::invalid_input,
                          "--shard wants I/N, the I-th of N parts counted from 1 (e.g. 2/4); got '" +
                              std::string(text) + "': " + why,
                          "--shard");
    };
    const auto slash = text.find('/');
    if (slash == std::string_view::npos) return bad("no '/'");
    auto number = [](std::string_view s, int& out) {
        if (s.empty() || s.size() > 6) return false;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        return ec == std::errc() && end == s.data() + s.size();
    };
    ShardSpec spec;
    if (!number(text.substr(0, slash), spec.index) || !number(text.substr(slash + 1), spec.count))
        return bad("I and N must be whole numbers");
    if (spec.count < 1 || spec.count > 100000) return bad("N must be from 1 to 100000");
    if (spec.index < 1 || spec.index > spec.count) return bad("I must be from 1 to N");
    return spec;
}

std::uint64_t scenario_weight(const data::Scenario& scenario, std::size_t probe_limit) {
    std::uint64_t weight = 1;
    for (const auto& session : scenario.sessions)
        for (const auto& message : session.messages) weight += message.content.size();
    const std::size_t probes =
        probe_limit > 0 ? std::min(probe_limit, scenario.probes.size()) : scenario.probes.size();
    for (std::size_t i = 0; i < probes; ++i) weight += scenario.probes[i].question.size();
    return weight;
}

std::string mode_unit_id(const std::string& scenario_id, const std::string& mode) {
    return mode.empty() || mode == "native" ? scenario_id : scenario_id + "@" + mode;
}

std::vector<int> assign_shards(const std::vector<std::string>& ids, const std::vector<std::uint64_t>& weights,
                               int count) {
    std::vector<std::size_t> order(ids.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (weights[a] != weights[b]) return weights[a] > weights[b];
        return ids[a] < ids[b];
    });
    std::vector<std::uint64_t> load(static_cast<std::size_t>(std::max(count, 1)), 0);
    std::vector<int> part(ids.size(), 0);
    for (std::size_t unit : order) {
        const auto lightest = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        part[unit] = static_cast<int>(lightest);
        load[lightest] += weights[unit];
    }
    return part;
}

}  // namespace memfail::run
