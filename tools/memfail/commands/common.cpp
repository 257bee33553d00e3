// SPDX-License-Identifier: MIT
// Shared CLI helpers.
#include <commands/common.hpp>

#include <algorithm>

#include <memfail/core/error.hpp>
#include <memfail/core/text.hpp>

namespace memfail::cli {

void progress_line(const std::string& line) { std::fprintf(stderr, "memfail: %s\n", line.c_str()); }

std::vector<int> parse_int_list(const std::string& input, const std::string& option) {
    std::vector<int> out;
    for (const auto& part : text::split(input, ',')) {
        const std::string item(text::trim(part));
        if (item.empty()) continue;
        try {
            std::size_t used = 0;
            const int v = std::stoi(item, &used);
            if (used != item.size()) throw std::invalid_argument("trailing");
            if (std::find(out.begin(), out.end(), v) != out.end())
                throw Fatal(make_error(ErrorKind::invalid_input,
                                       option + " lists " + item + " twice; give each value once"));
            out.push_back(v);
        } catch (const Fatal&) {
            throw;
        } catch (const std::exception&) {
            throw Fatal(make_error(ErrorKind::invalid_input,
                                   option + " takes whole numbers separated by commas; '" + item + "' is not one"));
        }
    }
    if (out.empty()) throw Fatal(make_error(ErrorKind::invalid_input, option + " needs at least one value"));
    return out;
}

std::vector<std::string> parse_name_list(const std::vector<std::string>& items) {
    std::vector<std::string> out;
    for (const auto& item : items)
        for (const auto& part : text::split(item, ',')) {
            const std::string name(text::trim(part));
            if (!name.empty()) out.push_back(name);
        }
    return out;
}

}  // namespace memfail::cli
