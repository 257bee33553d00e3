// SPDX-License-Identifier: MIT
// Whether an answer declines (says it has nothing to answer with), read clause by clause through
// the evidence matcher's tokens with the phrases of lexicon/declines.json: the benchmarks' own
// wording ("Not mentioned in the conversation", "No information available", "You did not mention
// this information", "Unknown; not provided by the user") and what answer models write ("I don't
// have that information"). A decline is an abstention only when it is all the answer says: a
// clause that goes on to answer, or a guess ("I'm not sure, but probably Paris"), is not one.
#pragma once
#include <string>
#include <string_view>

namespace memfail::grade {

struct DeclineReading {
    bool declines = false;  // some clause declines
    bool wholly = false;    // every clause that says anything declines: nothing but a decline
    bool guesses = false;   // the answer also leans toward an answer ("probably", "I think")
    std::string phrase;     // the first declining clause as written, for reasons
};

DeclineReading read_decline(std::string_view answer);

// An abstention the rules can prove: the answer wholly declines and guesses nothing.
inline bool is_plain_abstention(const DeclineReading& r) { return r.wholly && !r.guesses; }

}  // namespace memfail::grade
