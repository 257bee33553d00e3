// SPDX-License-Identifier: MIT
// WRIT's values as its authors write them: a value often carries an annotation after its lead
// ("$120K base (user stated as current salary)", "123 Main Street, Springfield, IL (dock /
// receiving; ...)"). The importer and the suite's rules read the lead the same way.
#pragma once
#include <string>
#include <vector>

namespace memfail::suites::writ {

// What a text value says before an annotation: up to the first "(", ";", " -- " or an em dash
// between spaces, trimmed.
std::string lead_of(const std::string& text);

// Whether two text values have the same lead in the evidence matcher's canonical form.
bool same_lead(const std::string& a, const std::string& b);

// The words an event's id names it by, canonical: its parts between '_', '-', '.' and ':' of three
// letters or more that are no function words, less a generic first word ("analytics", "tracking"
// of "task_analytics_tracking").
std::vector<std::string> id_words(const std::string& id);

}  // namespace memfail::suites::writ
