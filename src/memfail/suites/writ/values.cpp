// SPDX-License-Identifier: MIT
#include <memfail/suites/writ/values.hpp>

#include <memfail/core/text.hpp>
#include <memfail/grade/evidence.hpp>

#include <algorithm>
#include <string_view>

namespace memfail::suites::writ {

std::string lead_of(const std::string& text) {
    std::size_t end = text.size();
    for (const char* sep : {"(", ";", " \u2014 ", " -- "}) end = std::min(end, text.find(sep));
    return std::string(text::trim(std::string_view(text).substr(0, end)));
}

bool same_lead(const std::string& a, const std::string& b) {
    const std::string la = grade::evidence::canonical(lead_of(a));
    return !la.empty() && la == grade::evidence::canonical(lead_of(b));
}

std::vector<std::string> id_words(const std::string& id) {
    std::string spaced = id;
    for (char& c : spaced)
        if (c == '-' || c == '.' || c == ':') c = '_';
    std::vector<std::string> out;
    for (const auto& w : text::split(spaced, '_')) {
        const std::string c = grade::evidence::canonical(w);
        if (c.size() < 3 || grade::evidence::is_function_word(c)) continue;
        if (out.empty() && (c == "task" || c == "checklist" || c == "deadline" || c == "team" || c == "member" ||
                            c == "item" || c == "user"))
            continue;
        out.push_back(c);
    }
    return out;
}

}  // namespace memfail::suites::writ
