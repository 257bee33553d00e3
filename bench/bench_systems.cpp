// SPDX-License-Identifier: MIT
// Store and retrieve cost of every built-in memory system with model latency taken out, at 1k, 10k
// and 100k memories held.
//
//   build/<dir>/bin/bench_systems [--sizes 1000,10000,100000] [--max N] [--systems verbatim/bm25,facts,...]
//                                 [--queries 300] [--dim 768] [--budget-s 600] [--embeddings random|hashed] [--keep]
//                                 [--store-dir DIR]
//   MEMFAIL_BENCH_MAX=10000 build/<dir>/bin/bench_systems       # the same as --max 10000
//
// The systems get an "instant model": an llm::LlmClient defined here that answers chat calls with
// tools/fake-llm's extractive stand-in (memfail::fake_llm::extractive_reply) and embeddings with
// fake-llm's deterministic vectors, in-process, with no HTTP and no sleeping. The time spent inside
// that client is measured and subtracted, so the figures are the systems' own cost: SQLite, indexes,
// entity resolution, decisions, fusion. The client's share is reported beside them.
//
// Each system stores synthetic conversations (people who move, change jobs and tastes, conditional
// habits, aliases by first name or relation, long descriptive turns; fixed seed, the same sessions
// for every system) into a temporary folder on disk until all_memories() reaches each size, and at
// each size answers a few hundred queries with k=5. The summary gives, per system and size, the
// memories held, store cost per session (median, p95), retrieve latency (median, p99) in wall and
// in CPU time, and each system's CPU p99 over verbatim/bm25's at the same size in this same run; the
// target is a retrieve p99 under 5 ms at 100k memories. A system whose build passes --budget-s is
// stopped and reported with the memories it reached.
//
// --store-dir DIR keeps each system's store in DIR/<system> (the "/" of verbatim/bm25 written as
// "-") and, after each size is measured, writes DIR/<system>/bench-state.json: the sessions stored,
// the memories held, the size and the settings that shape the store. A later run with the same
// DIR and settings reopens that store instead of building it again: it replays the same number of
// synthetic sessions without storing them (so the queries name the same people), measures the
// recorded size at once, skips smaller sizes and grows the store for larger ones. Building graph
// to 100k takes minutes; measuring it again after a change to retrieval then takes seconds. Only
// retrieval changes may be measured this way: a store built by older store code stays as built.
//
// --embeddings hashed makes the instant model answer memfail's hashed vectors instead of
// fake-llm's random ones: similar texts then meet, as with a real embeddings model, so facts find
// more to update and notes more to link.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <extractive.hpp>
#include <fake_llm.hpp>
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/llm/llm_client.hpp>
#include <memfail/memory/embedder.hpp>
#include <memfail/memory/memory_system.hpp>

namespace {

using namespace memfail;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
namespace mem = memfail::memory;

constexpr std::uint64_t k_seed = 20261123;
constexpr int k_top_k = 5;
constexpr double k_target_p99_us = 5000;
constexpr int k_warmup_queries = 10;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time of the calling thread, in seconds. The machines these run on are shared: wall time
// includes the moments another process had the core, CPU time does not, so tail latencies are
// judged on it (wall figures are printed beside them).
double thread_cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// Wall and CPU time of one span of work.
struct Span {
    Clock::time_point wall_start = Clock::now();
    double cpu_start = thread_cpu_seconds();
    double wall() const { return seconds_since(wall_start); }
    double cpu() const { return thread_cpu_seconds() - cpu_start; }
};

// ---------------------------------------------------------------------------------------------
// The instant model.

// Answers like a model would, from the request text, at in-process speed, and keeps the time it
// spent so callers can subtract it. Single-threaded use (the bench stores and retrieves serially).
class InstantModel final : public llm::LlmClient {
public:
    enum class Vectors { random, hashed };

    InstantModel(int dim, Vectors vectors) : m_dim(dim), m_vectors(vectors), m_hashed(dim) {}

    Result<llm::ChatReply> chat(const llm::ChatRequest& request) override {
        const Span span;
        // The request as tools/fake-llm sees it on the wire: the messages array and the
        // response_format.json_schema.name.
        json messages = json::array();
        for (const auto& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
        const std::string schema = request.schema ? request.schema->name : std::string();
        std::optional<json> answer = fake_llm::extractive_reply(schema, messages);
        ++m_chat_calls;
        if (!answer) {
            account(span);
            return make_error(ErrorKind::protocol, "the instant model has no reply for schema '" + schema + "'",
                              "bench_systems");
        }
        llm::ChatReply reply;
        reply.content = answer->dump();
        reply.json = std::move(*answer);
        reply.finish_reason = "stop";
        reply.attempts = 1;
        account(span);
        return reply;
    }

    Result<llm::EmbeddingReply> embed(const llm::EmbeddingRequest& request) override {
        const Span span;
        llm::EmbeddingReply reply;
        reply.vectors.reserve(request.inputs.size());
        for (const auto& text : request.inputs) {
            if (m_vectors == Vectors::random) {
                reply.vectors.push_back(fake_llm::embedding_for(text, m_dim));
            } else {
                std::vector<float> v = m_hashed.embed(text);
                // A model never answers a zero vector; neither does fake-llm.
                if (std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0f; })) v[0] = 1.0f;
                reply.vectors.push_back(std::move(v));
            }
        }
        reply.attempts = 1;
        ++m_embed_calls;
        m_embedded += request.inputs.size();
        account(span);
        return reply;
    }

    std::string identity() const override { return "instant://bench_systems"; }

    double seconds() const { return m_seconds; }
    double cpu_seconds() const { return m_cpu_seconds; }
    std::int64_t chat_calls() const { return m_chat_calls; }
    std::int64_t embed_calls() const { return m_embed_calls; }
    std::int64_t embedded() const { return m_embedded; }

private:
    void account(const Span& span) {
        m_seconds += span.wall();
        m_cpu_seconds += span.cpu();
    }

    int m_dim;
    Vectors m_vectors;
    mem::HashedEmbedder m_hashed;
    double m_seconds = 0;
    double m_cpu_seconds = 0;
    std::int64_t m_chat_calls = 0;
    std::int64_t m_embed_calls = 0;
    std::int64_t m_embedded = 0;
};

// ---------------------------------------------------------------------------------------------
// Synthetic conversations.

struct Person {
    std::string first, last, relation;
    bool female = true;
    std::string city, job, company;
    std::string full() const { return first + " " + last; }
    const char* subject() const { return female ? "she" : "he"; }
    const char* object() const { return female ? "her" : "him"; }
    const char* possessive() const { return female ? "her" : "his"; }
};

const std::vector<std::string> k_female = {
    "Priya", "Amara", "Lena", "Sofia", "Ines", "Hana", "Maren", "Chloe", "Yara", "Noor", "Eliza", "Rosa",
    "Mei", "Keiko", "Astrid", "Bianca", "Carmen", "Dalia", "Esther", "Farah", "Greta", "Ilse", "Joana",
    "Kira", "Lucia", "Mira", "Nadia", "Olga", "Paula", "Rania", "Selin", "Tamsin", "Una", "Vera", "Wanda",
    "Ximena", "Zofia", "Aylin", "Beatriz", "Celeste"};
const std::vector<std::string> k_male = {
    "Marco", "Tomas", "Kenji", "Arjun", "Felix", "Omar", "Luca", "Henrik", "Diego", "Samuel", "Bruno",
    "Caspar", "Dmitri", "Emeka", "Faisal", "Gustav", "Hugo", "Ivan", "Jonah", "Kofi", "Leon", "Matteo",
    "Nikhil", "Oscar", "Pedro", "Rafael", "Stefan", "Teodor", "Umar", "Viktor", "Wei", "Yusuf", "Zeno",
    "Anders", "Bastian", "Cyrus", "Dario", "Elias", "Florin", "Goran"};
const std::vector<std::string> k_surnames = {
    "Shah", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Novak", "Costa", "Haddad", "Brennan", "Iyer",
    "Kowalski", "Almeida", "Fischer", "Nakamura", "Petrov", "Rossi", "Sato", "Vargas", "Weber", "Yilmaz",
    "Andersen", "Baptiste", "Castillo", "Dubois", "Eriksen", "Ferreira", "Grant", "Hoffmann", "Ibrahim",
    "Jansen", "Kaur", "Laine", "Mendes", "Nilsen", "Oduya", "Park", "Quinn", "Reyes", "Silva", "Torres",
    "Uchida", "Vidal", "Walsh", "Xu", "Young", "Zimmer", "Abara", "Bauer", "Chen", "Duarte"};
const std::vector<std::string> k_relations = {
    "sister", "brother", "cousin", "colleague", "neighbour", "friend", "manager", "flatmate", "aunt",
    "uncle", "old school friend", "climbing partner", "dentist", "piano teacher", "landlord"};
const std::vector<std::string> k_cities = {
    "Lisbon", "Porto", "Glasgow", "Kyoto", "Osaka", "Toronto", "Lyon", "Bologna", "Krakow", "Tallinn",
    "Valencia", "Seville", "Edinburgh", "Dublin", "Ghent", "Utrecht", "Bergen", "Gothenburg", "Leipzig",
    "Graz", "Ljubljana", "Split", "Thessaloniki", "Izmir", "Marrakesh", "Nairobi", "Accra", "Pune",
    "Hanoi", "Busan", "Sapporo", "Melbourne", "Wellington", "Halifax", "Montreal", "Oaxaca", "Cusco",
    "Valparaiso", "Cordoba", "Bilbao"};
const std::vector<std::string> k_jobs = {
    "nurse", "architect", "engineer", "pastry chef", "pilot", "lawyer", "data analyst", "teacher",
    "marine biologist", "electrician", "editor", "physiotherapist", "interpreter", "accountant",
    "illustrator", "urban planner", "veterinarian", "sound engineer"};
const std::vector<std::string> k_companies = {
    "Northwind", "Bluefin Labs", "Harbour Health", "Cobalt Studio", "Greenline Transit", "Atlas Books",
    "Kestrel Aviation", "Maple & Finch", "Orbit Foods", "Riverside Clinic", "Solstice Energy",
    "Tidewater Press", "Upland Bakery", "Vantage Legal", "Willow Schools"};
const std::vector<std::string> k_foods = {
    "oat milk lattes", "spicy ramen", "sourdough bread", "dark chocolate", "mango sticky rice", "olives",
    "blue cheese", "green curry", "pistachio ice cream", "grilled sardines", "lentil soup", "sushi",
    "falafel wraps", "pecan pie", "kimchi", "roasted beetroot", "espresso", "matcha", "pho", "tiramisu"};
const std::vector<std::string> k_activities = {
    "bouldering", "sea swimming", "trail running", "pottery", "birdwatching", "salsa dancing", "chess",
    "gardening", "photography", "sailing", "cycling to work", "baking bread", "board games", "yoga",
    "watching old films", "karaoke"};
const std::vector<std::string> k_days = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
                                         "Saturday", "Sunday"};
const std::vector<std::string> k_months = {"January", "February", "March", "April", "May", "June", "July",
                                           "August", "September", "October", "November", "December"};
const std::vector<std::string> k_transport = {"tram", "bus", "train", "ferry", "metro", "night bus"};
const std::vector<std::string> k_venues = {
    "the harbour café", "the little bakery on the corner", "the Thai place near the station",
    "the climbing gym", "the public library", "the night market", "the old cinema", "the rooftop bar",
    "the botanical garden", "the community pool"};
const std::vector<std::string> k_hotels = {"Hotel Avenida", "the Grand Central", "Casa Azul", "the Lighthouse Inn",
                                           "Pension Flora", "the Riverside Lodge"};
const std::vector<std::string> k_allergens = {"peanuts", "shellfish", "gluten", "sesame", "kiwi", "dairy"};
const std::vector<std::string> k_allergen_dishes = {"pad thai", "paella", "pizza", "hummus", "fruit salad",
                                                    "cheesecake"};
const std::vector<std::string> k_books = {
    "a novel about a lighthouse keeper", "a history of the spice trade", "a memoir by a mountain guide",
    "a thriller set in Reykjavik", "a cookbook of Persian stews", "a field guide to mushrooms"};
const std::vector<std::string> k_things = {"washing machine", "laptop", "bike chain", "kettle",
                                           "printer", "dishwasher", "car battery", "boiler"};

std::string with_article(const std::string& noun) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(noun.front())));
    const bool vowel = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
    return (vowel ? "an " : "a ") + noun;
}

std::string iso_date(std::int64_t day, int hour) {
    // Days since 2024-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
    std::int64_t z = day + 19723 + 719468;  // 19723: 1970-01-01 .. 2024-01-01
    const std::int64_t era = z / 146097;
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    const std::int64_t d = doy - (153 * mp + 2) / 5 + 1;
    const std::int64_t m = mp < 10 ? mp + 3 : mp - 9;
    const std::int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
    char out[96];  // room for any int64, so the compiler sees no truncation
    std::snprintf(out, sizeof out, "%04lld-%02lld-%02lldT%02d:00:00Z", static_cast<long long>(y),
                  static_cast<long long>(m), static_cast<long long>(d), hour);
    return out;
}

// A user's life told over many sessions. The cast grows as sessions go on; people are named in
// full, by first name, or by relation; they move, change jobs, and the user's tastes flip, so fact
// updates, entity resolution and edge invalidation all have real work.
class Conversations {
public:
    explicit Conversations(std::uint64_t seed) : m_rng(Rng(seed).fork("conversations")) {}

    data::Session next() {
        data::Session session;
        session.id = "s" + std::to_string(m_sessions);
        m_day += m_rng.between(0, 2);
        session.timestamp = iso_date(m_day, static_cast<int>(m_rng.between(7, 22)));
        const auto turns = m_rng.between(3, 7);  // user turns; each gets an assistant reply
        for (std::int64_t t = 0; t < turns; ++t) {
            add(session, "user", user_turn());
            add(session, "assistant", assistant_turn());
        }
        ++m_sessions;
        return session;
    }

    // A question about the world so far, as a test-taker would ask it.
    std::string query(Rng& rng) const {
        const Person& p = m_people[rng.below(m_people.size())];
        switch (rng.below(7)) {
            case 0: return "Where does " + p.full() + " live now?";
            case 1: return "What does my " + p.relation + " " + p.first + " do for work?";
            case 2: return "When is " + p.first + "'s birthday?";
            case 3: return "What happens if it rains on " + rng.pick(k_days) + "?";
            case 4: return "Which foods do I like these days?";
            case 5: return "Where do I usually stay when I visit " + rng.pick(k_cities) + "?";
            default: return "Is " + p.first + " allergic to anything?";
        }
    }

    std::size_t people() const { return m_people.size(); }

private:
    void add(data::Session& session, const char* role, std::string text) {
        session.messages.push_back({session.id + "m" + std::to_string(session.messages.size()), role, std::move(text)});
    }

    // A person to talk about: usually someone already known, sometimes someone new.
    Person& someone() {
        if (m_people.empty() || m_rng.chance(0.12)) {
            Person p;
            p.female = m_rng.chance(0.5);
            p.first = m_rng.pick(p.female ? k_female : k_male);
            p.last = m_rng.pick(k_surnames);
            p.relation = m_rng.pick(k_relations);
            if (p.female && p.relation == "brother") p.relation = "sister";
            if (!p.female && p.relation == "sister") p.relation = "brother";
            if (p.female && p.relation == "uncle") p.relation = "aunt";
            if (!p.female && p.relation == "aunt") p.relation = "uncle";
            p.city = m_rng.pick(k_cities);
            p.job = m_rng.pick(k_jobs);
            p.company = m_rng.pick(k_companies);
            m_people.push_back(std::move(p));
            m_just_met = true;
            return m_people.back();
        }
        m_just_met = false;
        // Recent acquaintances come up more often, as in a real chat history.
        const std::size_t n = m_people.size();
        const std::size_t back = std::min<std::size_t>(n - 1, m_rng.below(std::min<std::size_t>(n, 40)));
        return m_rng.chance(0.7) ? m_people[n - 1 - back] : m_people[m_rng.below(n)];
    }

    // How a known person is referred to: in full, by first name, or as "my sister".
    std::string name_of(const Person& p) {
        if (m_just_met) return "my " + p.relation + " " + p.full();
        switch (m_rng.below(4)) {
            case 0: return p.full();
            case 1:
            case 2: return p.first;
            default: return "my " + p.relation + " " + p.first;
        }
    }

    std::string user_turn() {
        switch (m_rng.below(13)) {
            case 0: {  // a move: the old city stops being true
                Person& p = someone();
                const std::string from = p.city;
                std::string to = m_rng.pick(k_cities);
                if (to == from) to = k_cities[(std::find(k_cities.begin(), k_cities.end(), to) - k_cities.begin() + 1) % k_cities.size()];
                p.city = to;
                return text::capitalize(name_of(p)) + " moved from " + from + " to " + to + " last month.";
            }
            case 1: {
                Person& p = someone();
                return text::capitalize(name_of(p)) + " lives in " + p.city + " and works as " + with_article(p.job) +
                       " at " + p.company + ".";
            }
            case 2: {  // a new job
                Person& p = someone();
                p.job = m_rng.pick(k_jobs);
                p.company = m_rng.pick(k_companies);
                return text::capitalize(name_of(p)) + " just started a new job as " + with_article(p.job) + " at " +
                       p.company + ".";
            }
            case 3: {  // the user's taste, which may flip later
                const std::string& food = m_rng.pick(k_foods);
                bool& likes = m_likes[food];
                likes = m_rng.chance(0.6);
                return likes ? "I really love " + food + " lately."
                             : "Honestly, I can't stand " + food + " anymore; I hate the taste now.";
            }
            case 4: {
                Person& p = someone();
                return text::capitalize(name_of(p)) + " enjoys " + m_rng.pick(k_activities) + " more than anything.";
            }
            case 5: {  // a conditional habit
                Person& p = someone();
                return "If it rains on " + m_rng.pick(k_days) + ", " + name_of(p) + " takes the " +
                       m_rng.pick(k_transport) + " to work instead of cycling.";
            }
            case 6: {
                const std::string& city = m_rng.pick(k_cities);
                return "Whenever I visit " + city + ", I stay at " + m_rng.pick(k_hotels) + " near the old town.";
            }
            case 7: {
                Person& p = someone();
                const std::size_t a = m_rng.below(k_allergens.size());
                return "Because " + name_of(p) + " is allergic to " + k_allergens[a] + ", " + p.subject() +
                       " never orders " + k_allergen_dishes[a] + ".";
            }
            case 8: {
                Person& p = someone();
                return text::capitalize(name_of(p)) + "'s birthday is on " + std::to_string(m_rng.between(1, 28)) +
                       " " + m_rng.pick(k_months) + ", so I need to find " + p.object() + " a present.";
            }
            case 9: {
                Person& p = someone();
                return "We are meeting " + name_of(p) + " at " + m_rng.pick(k_venues) + " on " + m_rng.pick(k_days) +
                       " at " + std::to_string(m_rng.between(5, 9)) + " in the evening.";
            }
            case 10: return "I finally finished reading " + m_rng.pick(k_books) + ".";
            case 11: return "The " + m_rng.pick(k_things) + " broke again this morning, which ruined my plans.";
            default: {  // long descriptive text, kept whole by the stores that split by kind
                Person& p = someone();
                const std::string& activity = m_rng.pick(k_activities);
                return "Let me tell you about last weekend. I took the early train to " + p.city + " to see " +
                       name_of(p) + ", and we spent the whole of Saturday wandering around the markets, trying "
                       "every stall that sold " + m_rng.pick(k_foods) + ". In the afternoon " + p.subject() +
                       " took me " + activity + " for the first time, which was harder than I expected but a lot "
                       "of fun. We ended the day at " + m_rng.pick(k_venues) + " talking about " + p.possessive() +
                       " new job as " + with_article(p.job) + " until it got dark and the place closed.";
            }
        }
    }

    std::string assistant_turn() {
        switch (m_rng.below(6)) {
            case 0: return "That sounds lovely. How are you feeling about it?";
            case 1: return "Thanks for telling me; I'll keep that in mind.";
            case 2: return "Good to know. Is there anything you would like me to remind you about?";
            case 3: return "Noted. " + m_rng.pick(k_cities) + " is beautiful at this time of year.";
            case 4: return "That must have been frustrating. Do you want help planning the rest of the week?";
            default:
                return "Here is a plan that might help: start the morning with a short walk, keep the afternoon "
                       "free for the errands that cannot wait, book a table at " + m_rng.pick(k_venues) +
                       " for the evening, and leave Sunday completely open so you can rest. If the weather turns, "
                       "swap the walk for " + m_rng.pick(k_activities) + " indoors and move the errands to "
                       "Monday; nothing on the list is urgent enough to spoil the weekend for.";
        }
    }

    Rng m_rng;
    std::int64_t m_sessions = 0;
    std::int64_t m_day = 0;
    std::vector<Person> m_people;
    std::map<std::string, bool> m_likes;
    bool m_just_met = false;
};

// ---------------------------------------------------------------------------------------------
// Measurement.

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto index = static_cast<std::size_t>(std::ceil(p * double(v.size()))) - 1;
    return v[std::min(index, v.size() - 1)];
}

struct Settings {
    std::vector<std::size_t> sizes = {1'000, 10'000, 100'000};
    std::vector<std::string> systems = {"verbatim/bm25", "verbatim/embed", "facts", "notes", "graph", "mixture"};
    int queries = 300;
    int dim = 768;
    double budget_s = 600;
    InstantModel::Vectors vectors = InstantModel::Vectors::random;
    std::size_t max = 0;  // 0: no cap
    bool keep = false;    // leave the stores on disk for inspection
    std::string store_dir;  // --store-dir: stores kept and reused there
};

const std::map<std::string, std::string> k_specs = {
    {"verbatim/bm25", "verbatim:retriever=bm25"}, {"verbatim/embed", "verbatim:retriever=embed"},
    {"facts", "facts"}, {"notes", "notes"}, {"graph", "graph"}, {"mixture", "mixture"}};

struct Point {  // one system at one size
    std::size_t held = 0;
    std::int64_t sessions = 0;
    std::vector<double> store_own_ms;  // per session stored since the previous size
    double store_wall_s = 0, store_model_s = 0;
    std::vector<double> retrieve_own_us;      // wall
    std::vector<double> retrieve_own_cpu_us;  // CPU of this thread
    std::vector<double> retrieve_model_us;
    std::vector<std::pair<double, std::string>> slowest;  // CPU us and query, the tail of retrieval
    double build_s = 0;  // wall time of the whole build so far, checks included
    double embeds_per_query = 0;  // embedding calls the instant model answered per retrieval
};

struct Outcome {
    std::map<std::size_t, Point> points;
    std::string stopped;  // why the build ended before the largest size; empty when it did not
    std::size_t held_at_stop = 0;
    std::int64_t chat_calls = 0, embed_calls = 0;
};

constexpr const char* k_usage =
    "usage: bench_systems [--sizes 1000,10000,100000] [--max N] [--systems a,b] "
    "[--queries 300] [--dim 768] [--budget-s 600] [--embeddings random|hashed] [--keep]\n"
    "                     [--store-dir DIR]\n"
    "systems: verbatim/bm25 verbatim/embed facts notes graph mixture\n"
    "Store and retrieve cost of each built-in system with an instant in-process model, at each size\n"
    "(bench/README.md explains every column). --store-dir DIR keeps the built stores there and reuses\n"
    "them on the next run; --keep keeps the temporary ones.\n";

[[noreturn]] void usage_exit(const std::string& why) {
    std::fprintf(stderr, "bench_systems: %s\n%s", why.c_str(), k_usage);
    std::exit(2);
}

std::vector<std::string> comma_list(const std::string& value) {
    std::vector<std::string> out;
    std::stringstream in(value);
    for (std::string part; std::getline(in, part, ',');)
        if (!part.empty()) out.push_back(part);
    return out;
}

Settings parse(int argc, char** argv) {
    Settings s;
    if (const char* max = std::getenv("MEMFAIL_BENCH_MAX")) s.max = std::strtoull(max, nullptr, 10);
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(k_usage, stdout);
            std::exit(0);
        }
        if (arg == "--keep") {
            s.keep = true;
            continue;
        }
        if (i + 1 >= argc) usage_exit("missing value for " + arg);
        const std::string value = argv[++i];
        if (arg == "--sizes") {
            s.sizes.clear();
            for (const auto& v : comma_list(value)) s.sizes.push_back(std::strtoull(v.c_str(), nullptr, 10));
        } else if (arg == "--max") {
            s.max = std::strtoull(value.c_str(), nullptr, 10);
        } else if (arg == "--systems") {
            s.systems = comma_list(value);
        } else if (arg == "--queries") {
            s.queries = std::atoi(value.c_str());
        } else if (arg == "--dim") {
            s.dim = std::atoi(value.c_str());
        } else if (arg == "--budget-s") {
            s.budget_s = std::atof(value.c_str());
        } else if (arg == "--store-dir") {
            s.store_dir = value;
        } else if (arg == "--embeddings") {
            if (value != "random" && value != "hashed") usage_exit("--embeddings is random or hashed");
            s.vectors = value == "random" ? InstantModel::Vectors::random : InstantModel::Vectors::hashed;
        } else {
            usage_exit("unknown option " + arg);
        }
    }
    if (s.max > 0) std::erase_if(s.sizes, [&](std::size_t size) { return size > s.max; });
    std::sort(s.sizes.begin(), s.sizes.end());
    s.sizes.erase(std::unique(s.sizes.begin(), s.sizes.end()), s.sizes.end());
    if (s.sizes.empty() || s.sizes.front() == 0) usage_exit("no sizes to measure");
    if (s.queries < 1 || s.dim < 8 || s.budget_s <= 0) usage_exit("bad --queries, --dim or --budget-s");
    for (const auto& name : s.systems)
        if (!k_specs.count(name)) usage_exit("unknown system " + name);
    return s;
}

std::filesystem::path fresh_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "memfail-bench-systems-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
        std::perror("mkdtemp");
        std::exit(1);
    }
    return pattern;
}

// What --store-dir records next to a kept store: enough to reopen it and ask the same queries.
struct StoreState {
    std::int64_t sessions = 0;
    std::size_t held = 0;
    std::size_t size = 0;  // the size it was measured at
};

// The settings a kept store must have been built with to be reused.
json store_settings(const std::string& name, const Settings& settings) {
    return {{"system", name},
            {"spec", k_specs.at(name)},
            {"seed", k_seed},
            {"dim", settings.dim},
            {"embeddings", settings.vectors == InstantModel::Vectors::random ? "random" : "hashed"}};
}

std::filesystem::path kept_store_dir(const std::string& name, const Settings& settings) {
    std::string folder = name;
    std::replace(folder.begin(), folder.end(), '/', '-');
    return std::filesystem::path(settings.store_dir) / folder;
}

// The state of a store kept in `dir` by an earlier run with these settings, if there is one.
std::optional<StoreState> read_store_state(const std::filesystem::path& dir, const std::string& name,
                                           const Settings& settings) {
    std::ifstream in(dir / "bench-state.json");
    if (!in) return std::nullopt;
    const json state = json::parse(in, nullptr, false);
    if (state.is_discarded() || !state.is_object() || state.value("settings", json()) != store_settings(name, settings))
        return std::nullopt;
    StoreState out;
    out.sessions = state.value("sessions", std::int64_t{0});
    out.held = state.value("held", std::size_t{0});
    out.size = state.value("size", std::size_t{0});
    if (out.sessions <= 0 || out.size == 0) return std::nullopt;
    return out;
}

void write_store_state(const std::filesystem::path& dir, const std::string& name, const Settings& settings,
                       const StoreState& state) {
    std::ofstream out(dir / "bench-state.json");
    out << json{{"settings", store_settings(name, settings)},
                {"sessions", state.sessions},
                {"held", state.held},
                {"size", state.size}}
               .dump(2)
        << "\n";
}

// Answers `queries` questions about the conversations so far; own time excludes the model's.
Result<void> measure_retrieval(mem::MemorySystem& system, InstantModel& model, const Conversations& world,
                               int queries, std::size_t size, Point& point) {
    Rng rng = Rng(k_seed).fork("queries").fork(std::to_string(size));
    std::int64_t embeds = 0;
    for (int q = -k_warmup_queries; q < queries; ++q) {
        const std::string query = world.query(rng);
        const double model_before = model.seconds();
        const double model_cpu_before = model.cpu_seconds();
        const std::int64_t embeds_before = model.embed_calls();
        const Span span;
        MF_TRY_ASSIGN(auto hits, system.retrieve_memories(query, {}, k_top_k));
        const double wall = span.wall();
        const double cpu = span.cpu();
        const double in_model = model.seconds() - model_before;
        if (q < 0) continue;  // warm-up: statements prepared, pages cached, as in a running harness
        embeds += model.embed_calls() - embeds_before;
        point.retrieve_own_us.push_back((wall - in_model) * 1e6);
        point.retrieve_own_cpu_us.push_back((cpu - (model.cpu_seconds() - model_cpu_before)) * 1e6);
        point.slowest.emplace_back(point.retrieve_own_cpu_us.back(), query);
        point.retrieve_model_us.push_back(in_model * 1e6);
    }
    point.embeds_per_query = double(embeds) / double(queries);
    // Only the tail is worth naming: it is what a p99 is made of.
    const std::size_t tail = std::min<std::size_t>(point.slowest.size(), std::max(3, queries / 100));
    std::partial_sort(point.slowest.begin(), point.slowest.begin() + static_cast<std::ptrdiff_t>(tail),
                      point.slowest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    point.slowest.resize(tail);
    return {};
}

// Grows one system to each size in turn, measuring as it goes.
Outcome run_system(const std::string& name, const Settings& settings) {
    Outcome outcome;
    InstantModel model(settings.dim, settings.vectors);
    const bool kept = !settings.store_dir.empty();
    std::optional<StoreState> reused;
    std::filesystem::path dir;
    if (kept) {
        dir = kept_store_dir(name, settings);
        reused = read_store_state(dir, name, settings);
        std::error_code ec;
        // A store without a matching state file is of unknown shape: start it again.
        if (!reused) std::filesystem::remove_all(dir, ec);
        std::filesystem::create_directories(dir, ec);
        if (ec) {
            outcome.stopped = "cannot create " + dir.string() + ": " + ec.message();
            return outcome;
        }
    } else {
        dir = fresh_dir();
    }
    mem::SystemContext context;
    context.storage_dir = dir.string();
    context.store_name = "bench";
    context.services.client = &model;
    context.services.model = "instant";
    context.services.embed_model = "instant-embed";
    auto made = mem::make_memory_system(k_specs.at(name), context);
    if (!made) {
        outcome.stopped = "cannot start: " + made.error().describe();
        return outcome;
    }
    std::unique_ptr<mem::MemorySystem> system = std::move(made).value();

    Conversations world(k_seed);
    const auto build_start = Clock::now();
    std::int64_t sessions = 0;
    std::size_t held = 0;
    std::int64_t next_check = 1;  // sessions stored when all_memories() is next counted
    if (reused) {
        // The world as it was when the store was kept: the same sessions, not stored again.
        for (; sessions < reused->sessions; ++sessions) (void)world.next();
        held = reused->held;
        next_check = sessions + 1;
        std::fprintf(stderr, "  reusing the store in %s: %zu held after %lld sessions\n", dir.c_str(), held,
                     static_cast<long long>(sessions));
    }
    for (const std::size_t size : settings.sizes) {
        if (reused && size < reused->size) {
            std::fprintf(stderr, "  %-15s %7zu skipped: the reused store is already past it\n", name.c_str(), size);
            continue;
        }
        Point point;
        const std::int64_t first_session = sessions;
        while (held < size) {
            if (seconds_since(build_start) > settings.budget_s) {
                char why[160];
                std::snprintf(why, sizeof why, "build budget of %.0f s spent after %lld sessions", settings.budget_s,
                              static_cast<long long>(sessions));
                outcome.stopped = why;
                outcome.held_at_stop = held;
                break;
            }
            const data::Session session = world.next();
            const double model_before = model.seconds();
            const auto start = Clock::now();
            auto stored = system->store_conversation(session);
            const double wall = seconds_since(start);
            if (!stored) {
                outcome.stopped = "store failed: " + stored.error().describe();
                outcome.held_at_stop = held;
                break;
            }
            const double in_model = model.seconds() - model_before;
            point.store_own_ms.push_back((wall - in_model) * 1e3);
            point.store_wall_s += wall;
            point.store_model_s += in_model;
            ++sessions;
            if (sessions < next_check) continue;
            // Counting everything held is itself O(n): count rarely while far from the size, every
            // session near it, so the counting never dominates the build.
            auto all = system->all_memories();
            if (!all) {
                outcome.stopped = "all_memories failed: " + all.error().describe();
                break;
            }
            held = all->size();
            const double per_session = held > 0 ? double(held) / double(sessions) : 1.0;
            const double remaining = held < size ? double(size - held) / per_session : 0;
            next_check = sessions + std::max<std::int64_t>(1, static_cast<std::int64_t>(remaining / 2));
        }
        if (!outcome.stopped.empty()) break;
        point.held = held;
        point.sessions = sessions;
        point.build_s = seconds_since(build_start);
        if (auto measured = measure_retrieval(*system, model, world, settings.queries, size, point); !measured) {
            outcome.stopped = "retrieve failed: " + measured.error().describe();
            break;
        }
        std::fprintf(stderr,
                     "  %-15s %7zu held after %6lld sessions (%lld this step) in %6.1f s; store own p50 %.2f ms, "
                     "max %.0f ms; retrieve own p50 %.0f us, cpu p99 %.0f us, %.2f embeddings/query; %zu people\n",
                     name.c_str(), held, static_cast<long long>(sessions),
                     static_cast<long long>(sessions - first_session), point.build_s,
                     percentile(point.store_own_ms, 0.5), percentile(point.store_own_ms, 1.0),
                     percentile(point.retrieve_own_us, 0.5), percentile(point.retrieve_own_cpu_us, 0.99),
                     point.embeds_per_query, world.people());
        for (const auto& [cpu_us, query] : point.slowest)
            std::fprintf(stderr, "    slow: %6.0f us cpu  %s\n", cpu_us, query.c_str());
        if (kept) write_store_state(dir, name, settings, StoreState{sessions, held, size});
        outcome.points[size] = std::move(point);
    }
    outcome.chat_calls = model.chat_calls();
    outcome.embed_calls = model.embed_calls();
    system.reset();
    if (settings.keep || kept) {
        std::fprintf(stderr, "  kept the store in %s\n", dir.c_str());
    } else {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    return outcome;
}

}  // namespace

int main(int argc, char** argv) {
    const Settings settings = parse(argc, argv);
    std::printf("bench_systems: sizes");
    for (const auto size : settings.sizes) std::printf(" %zu", size);
    std::printf("; k=%d, %d queries per size; instant model (extractive replies, %s %d-d embeddings); build budget "
                "%.0f s per system\n",
                k_top_k, settings.queries,
                settings.vectors == InstantModel::Vectors::random ? "fake-llm random" : "hashed", settings.dim,
                settings.budget_s);
    std::fflush(stdout);

    std::map<std::string, Outcome> outcomes;
    for (const auto& name : settings.systems) {
        std::fprintf(stderr, "%s (%s)\n", name.c_str(), k_specs.at(name).c_str());
        outcomes[name] = run_system(name, settings);
        const Outcome& o = outcomes[name];
        std::fprintf(stderr, "  %lld chat calls, %lld embedding calls%s%s\n", static_cast<long long>(o.chat_calls),
                     static_cast<long long>(o.embed_calls), o.stopped.empty() ? "" : "; stopped: ", o.stopped.c_str());
    }

    // The summary: own costs (the instant model's time subtracted), the model's share beside them.
    // Retrieval shows wall time and this thread's CPU time; the ratio and the target use CPU time,
    // which another job on the shared cores cannot inflate.
    std::printf("\n%-15s %7s %7s %7s | %8s %8s %6s | %8s %8s %8s %8s %7s | %7s %4s\n", "system", "size", "held",
                "sessions", "store", "store", "model", "retr", "retr", "cpu", "cpu", "model", "cpu p99", "5 ms");
    std::printf("%-15s %7s %7s %7s | %8s %8s %6s | %8s %8s %8s %8s %7s | %7s %4s\n", "", "", "", "", "p50 ms",
                "p95 ms", "share", "p50 us", "p99 us", "p50 us", "p99 us", "p50 us", "/bm25", "");
    for (const auto size : settings.sizes) {
        double base_p99 = 0;
        if (auto it = outcomes.find("verbatim/bm25"); it != outcomes.end() && it->second.points.count(size))
            base_p99 = percentile(it->second.points.at(size).retrieve_own_cpu_us, 0.99);
        for (const auto& name : settings.systems) {
            const Outcome& o = outcomes[name];
            const auto it = o.points.find(size);
            if (it == o.points.end() && o.stopped.empty()) {
                std::printf("%-15s %7zu   skipped: the reused store (--store-dir) is past this size\n", name.c_str(),
                            size);
                continue;
            }
            if (it == o.points.end()) {
                std::printf("%-15s %7zu   not reached: %zu held when it stopped (%s)\n", name.c_str(), size,
                            o.held_at_stop, o.stopped.c_str());
                continue;
            }
            const Point& p = it->second;
            const double cpu_p99 = percentile(p.retrieve_own_cpu_us, 0.99);
            const double share = p.store_wall_s > 0 ? 100.0 * p.store_model_s / p.store_wall_s : 0;
            char ratio[16] = "-";
            if (base_p99 > 0) std::snprintf(ratio, sizeof ratio, "%.2f", cpu_p99 / base_p99);
            // A reused store (--store-dir) stored nothing this run: no store figures, not zeros.
            char store[40];
            std::snprintf(store, sizeof store, "%8s %8s %6s", "-", "-", "-");
            if (!p.store_own_ms.empty())
                std::snprintf(store, sizeof store, "%8.2f %8.2f %5.1f%%", percentile(p.store_own_ms, 0.5),
                              percentile(p.store_own_ms, 0.95), share);
            std::printf("%-15s %7zu %7zu %7lld | %s | %8.0f %8.0f %8.0f %8.0f %7.0f | %7s %4s\n",
                        name.c_str(), size, p.held, static_cast<long long>(p.sessions), store,
                        percentile(p.retrieve_own_us, 0.5),
                        percentile(p.retrieve_own_us, 0.99), percentile(p.retrieve_own_cpu_us, 0.5), cpu_p99,
                        percentile(p.retrieve_model_us, 0.5), ratio, cpu_p99 > k_target_p99_us ? "OVER" : "ok");
        }
    }
    const std::size_t largest = settings.sizes.back();
    for (const auto& name : settings.systems) {
        const Outcome& o = outcomes[name];
        if (auto it = o.points.find(largest); it != o.points.end()) {
            const double cpu_p99 = percentile(it->second.retrieve_own_cpu_us, 0.99);
            if (largest >= 100'000 && cpu_p99 > k_target_p99_us)
                std::printf("FLAG: %s: retrieve p99 at %zu memories is %.1f ms of CPU, over the 5 ms target\n",
                            name.c_str(), largest, cpu_p99 / 1000.0);
        }
        if (!o.stopped.empty())
            std::printf("STOPPED: %s at %zu memories: %s\n", name.c_str(), o.held_at_stop, o.stopped.c_str());
    }
    std::fflush(stdout);
    return 0;
}
