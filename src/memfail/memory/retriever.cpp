// SPDX-License-Identifier: MIT
// BM25 (FTS5) and hashed-vector retrievers over a memory system's SQLite database.
#include <memfail/memory/retriever.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_map>
#include <utility>

#include <sqlite3.h>

#include <memfail/core/text.hpp>
#include <memfail/memory/text_embedder.hpp>

namespace memfail::memory {

// ---------------------------------------------------------------------------------------------
// BM25

namespace {

// The words a query is searched by: distinct, not stopwords, in query order. The FTS5 expression
// and the RAM search both take them from here, as the order of a score's terms must agree.
std::vector<std::string> bm25_query_words(std::string_view query) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (std::string& word : text::words(query))
        if (!text::is_stopword(word) && seen.insert(word).second) out.push_back(std::move(word));
    return out;
}

}  // namespace

std::string bm25_match_expression(std::string_view query) {
    std::string out;
    for (const std::string& word : bm25_query_words(query)) {
        if (!out.empty()) out += " OR ";
        // A quoted FTS5 string is taken literally (no AND/NOT/NEAR/column syntax); a quote inside
        // it is written twice. normalize() already drops quotes, so this is belt and braces.
        out += '"';
        out += text::replace_all(word, "\"", "\"\"");
        out += '"';
    }
    return out;
}

// Document lengths by rowid. Owners' rowids are small and dense (an INTEGER PRIMARY KEY counting
// up), so a vector indexed by rowid serves them; a hash map took a cache miss per ranked row.
// Rare large rowids go to a map so a stray one cannot allocate gigabytes.
struct Bm25Retriever::Stats {
    static constexpr std::int64_t k_dense_limit = std::int64_t{1} << 24;

    std::vector<std::uint32_t> dense;  // tokens + 1; 0 marks "not indexed"
    std::unordered_map<std::int64_t, std::uint32_t> sparse;
    std::int64_t documents = 0;
    std::int64_t total_tokens = 0;
    std::int64_t scored = 0;  // rows memfail_bm25 has scored, ever
    std::function<bool(std::int64_t)> excluded;  // Bm25Retriever::set_excluded

    void set(std::int64_t rowid, std::uint32_t tokens) {
        if (rowid >= 0 && rowid < k_dense_limit) {
            const auto index = static_cast<std::size_t>(rowid);
            if (index >= dense.size()) dense.resize(std::max(index + 1, dense.size() * 2), 0);
            if (dense[index] == 0) ++documents;
            else total_tokens -= dense[index] - 1;
            dense[index] = tokens + 1;
        } else {
            auto [it, inserted] = sparse.emplace(rowid, tokens);
            if (inserted) ++documents;
            else total_tokens -= std::exchange(it->second, tokens);
        }
        total_tokens += tokens;
    }
    // Takes back set() of a row that was not indexed before it.
    void unset(std::int64_t rowid) {
        const double tokens = length(rowid);
        if (tokens < 0) return;
        if (rowid >= 0 && rowid < k_dense_limit) dense[static_cast<std::size_t>(rowid)] = 0;
        else sparse.erase(rowid);
        --documents;
        total_tokens -= static_cast<std::int64_t>(tokens);
    }
    // The mean row length BM25 normalises by (1 at least).
    double average_length() const {
        return std::max(double(total_tokens) / double(std::max<std::int64_t>(documents, 1)), 1.0);
    }
    // Length of `rowid`, or -1 when it is not indexed.
    double length(std::int64_t rowid) const {
        if (rowid >= 0 && rowid < k_dense_limit) {
            const auto index = static_cast<std::size_t>(rowid);
            return index < dense.size() && dense[index] != 0 ? double(dense[index] - 1) : -1.0;
        }
        auto it = sparse.find(rowid);
        return it == sparse.end() ? -1.0 : double(it->second);
    }
    void clear() {
        dense.clear();
        sparse.clear();
        documents = 0;
        total_tokens = 0;
    }
};

namespace {

constexpr double k_bm25_k1 = 1.2;
constexpr double k_bm25_b = 0.75;
constexpr double k_min_idf = 1e-6;  // FTS5's floor: a word in most rows still counts a little

double bm25_idf(double rows, double hits) {
    return std::max(std::log((rows - hits + 0.5) / (hits + 0.5)), k_min_idf);
}

// The length normaliser of a row, and what one word adds to its score. memfail_bm25 and
// Bm25Retriever::search share these (and add the terms in query order) so that they agree to the
// bit; the build does not contract floating point (no -ffp-contract=fast, no FMA target).
inline double bm25_norm(double length, double average) {
    return k_bm25_k1 * (1.0 - k_bm25_b + k_bm25_b * length / average);
}
// A row's normaliser; a row without a recorded length counts as average.
double bm25_row_norm(const Bm25Retriever::Stats& stats, std::int64_t rowid, double average) {
    const double known = stats.length(rowid);
    return bm25_norm(known < 0 ? average : known, average);
}
inline double bm25_term(double idf, std::uint32_t tf, double norm) {
    return idf * double(tf) * (k_bm25_k1 + 1.0) / (double(tf) + norm);
}

int count_row(const Fts5ExtensionApi*, Fts5Context*, void* hits) {
    ++*static_cast<std::int64_t*>(hits);
    return SQLITE_OK;
}

// IDF per phrase of the MATCH expression (one phrase per query word, in query order), computed on
// a query's first row.
struct QueryWeights {
    std::vector<double> idf;
};

// memfail_bm25(table): the Okapi BM25 score of the current row, higher is better. Same formula and
// IDF as FTS5's bm25() (which returns it negated), with the row length taken from RAM. An excluded
// row (Bm25Retriever::set_excluded) scores NULL.
void bm25_rank(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* context, int, sqlite3_value**) {
    auto& stats = **static_cast<std::shared_ptr<Bm25Retriever::Stats>*>(api->xUserData(fts));
    auto* weights = static_cast<QueryWeights*>(api->xGetAuxdata(fts, 0));
    if (weights == nullptr) {
        auto fresh = std::make_unique<QueryWeights>();
        sqlite3_int64 rows = 0;
        int rc = api->xRowCount(fts, &rows);
        for (int i = 0; rc == SQLITE_OK && i < api->xPhraseCount(fts); ++i) {
            std::int64_t hits = 0;
            rc = api->xQueryPhrase(fts, i, &hits, &count_row);
            fresh->idf.push_back(bm25_idf(double(rows), double(hits)));
        }
        if (rc != SQLITE_OK) return sqlite3_result_error_code(context, rc);
        weights = fresh.get();
        // On failure xSetAuxdata has already deleted the object.
        rc = api->xSetAuxdata(fts, fresh.release(),
                              [](void* p) { delete static_cast<QueryWeights*>(p); });
        if (rc != SQLITE_OK) return sqlite3_result_error_code(context, rc);
    }

    ++stats.scored;
    // NULL sorts after every score under ORDER BY ... DESC, so an excluded row takes a LIMIT place
    // only when fewer rows than asked for remain, and run_search drops it.
    const sqlite3_int64 rowid = api->xRowid(fts);
    if (stats.excluded && stats.excluded(rowid)) return sqlite3_result_null(context);
    const double norm = bm25_row_norm(stats, rowid, stats.average_length());
    double score = 0;
    for (std::size_t i = 0; i < weights->idf.size(); ++i) {
        Fts5PhraseIter iter;
        int column = 0;
        int offset = 0;
        std::uint32_t tf = 0;
        for (api->xPhraseFirst(fts, static_cast<int>(i), &iter, &column, &offset); column >= 0;
             api->xPhraseNext(fts, &iter, &column, &offset))
            ++tf;
        if (tf > 0) score += bm25_term(weights->idf[i], tf, norm);
    }
    sqlite3_result_double(context, score);
}

fts5_api* fts5_of(sqlite3* db) {
    fts5_api* api = nullptr;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, nullptr) != SQLITE_OK) return nullptr;
    sqlite3_bind_pointer(stmt, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
    sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    return api;
}

// Words of normalised text: single spaces separate them, as unicode61 splits them (it may split a
// few more non-ASCII symbols, which only nudges a length).
std::uint32_t count_tokens(std::string_view normalized) {
    if (normalized.empty()) return 0;
    return static_cast<std::uint32_t>(std::count(normalized.begin(), normalized.end(), ' ') + 1);
}

}  // namespace

// FTS5's own "porter unicode61" tokenizer, as the index uses it, so document frequencies kept in
// RAM are counted per the very tokens FTS5 stores.
struct Bm25Retriever::Tokenizer {
    fts5_tokenizer methods{};
    Fts5Tokenizer* instance = nullptr;
    ~Tokenizer() {
        if (instance != nullptr) methods.xDelete(instance);
    }
    // The distinct tokens of `text`, or nullopt when FTS5 refuses it.
    std::optional<std::vector<std::string>> tokens(std::string_view text, int flags) const {
        std::vector<std::string> out;
        auto collect = [](void* context, int, const char* token, int size, int, int) {
            static_cast<std::vector<std::string>*>(context)->emplace_back(token, static_cast<std::size_t>(size));
            return SQLITE_OK;
        };
        if (methods.xTokenize(instance, &out, flags, text.data(), static_cast<int>(text.size()), collect) != SQLITE_OK)
            return std::nullopt;
        return out;
    }
};

Bm25Retriever::Bm25Retriever(store::Database& db, std::shared_ptr<Stats> stats)
    : m_db(&db),
      m_stats(std::move(stats)),
      m_insert_text("INSERT INTO bm25_index (rowid, text) VALUES (?, ?)"),
      m_insert_length("INSERT INTO bm25_doclen (doc, tokens) VALUES (?, ?)"),
      // rowid breaks ties so equal scores keep one order.
      m_search("SELECT rowid, memfail_bm25(bm25_index) AS s FROM bm25_index "
               "WHERE bm25_index MATCH ? ORDER BY s DESC, rowid LIMIT ?") {}

// The connection keeps the statistics (and so the predicate) alive longer than the retriever:
// forget the owner's predicate, which may point into an object already gone.
Bm25Retriever::~Bm25Retriever() { m_stats->excluded = nullptr; }

void Bm25Retriever::set_excluded(std::function<bool(std::int64_t)> excluded) { m_stats->excluded = std::move(excluded); }

Result<std::unique_ptr<Bm25Retriever>> Bm25Retriever::open(store::Database& db) {
    // columnsize=0: lengths live in bm25_doclen, so FTS5 need not keep its own copy.
    MF_TRY(db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS bm25_index USING fts5("
                   "text, content='', columnsize=0, tokenize='porter unicode61');"
                   "CREATE TABLE IF NOT EXISTS bm25_doclen ("
                   "doc INTEGER PRIMARY KEY, tokens INTEGER NOT NULL);"));
    fts5_api* api = fts5_of(db.raw());
    if (api == nullptr)
        return make_error(ErrorKind::database, "this SQLite has no FTS5 extension", db.path());
    auto stats = std::make_shared<Stats>();
    // The connection owns one reference to the statistics until it closes.
    auto* handle = new std::shared_ptr<Stats>(stats);
    if (api->xCreateFunction(api, "memfail_bm25", handle, &bm25_rank,
                             [](void* p) { delete static_cast<std::shared_ptr<Stats>*>(p); }) !=
        SQLITE_OK) {
        delete handle;
        return make_error(ErrorKind::database, "cannot register the memfail_bm25 ranking function",
                          db.path());
    }
    auto tokenizer = std::make_shared<Tokenizer>();
    void* tokenizer_data = nullptr;
    const char* tokenizer_args[] = {"unicode61"};
    if (api->xFindTokenizer(api, "porter", &tokenizer_data, &tokenizer->methods) != SQLITE_OK ||
        tokenizer->methods.xCreate(tokenizer_data, tokenizer_args, 1, &tokenizer->instance) != SQLITE_OK)
        return make_error(ErrorKind::database, "cannot open FTS5's porter tokenizer", db.path());
    // Per connection, in its temp schema: nothing is added to the owner's file.
    MF_TRY(db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.bm25_instances USING fts5vocab(main, bm25_index, instance);"));
    std::unique_ptr<Bm25Retriever> retriever(new Bm25Retriever(db, std::move(stats)));
    retriever->m_tokenizer = std::move(tokenizer);
    MF_TRY(retriever->reload());
    return retriever;
}

Result<void> Bm25Retriever::add(std::int64_t rowid, std::string_view text) {
    const std::string normalized = text::normalize(text);
    const std::uint32_t tokens = count_tokens(normalized);
    auto terms = m_tokenizer->tokens(normalized, FTS5_TOKENIZE_DOCUMENT);
    if (!terms) return make_error(ErrorKind::database, "FTS5's tokenizer failed", m_db->path());
    MF_TRY_ASSIGN(store::Statement* const insert, m_insert_text.get(*m_db));
    insert->bind(1, rowid).bind(2, normalized);
    MF_TRY(insert->run());
    MF_TRY_ASSIGN(store::Statement* const length, m_insert_length.get(*m_db));
    length->bind(1, rowid).bind(2, static_cast<std::int64_t>(tokens));
    MF_TRY(length->run());
    m_stats->set(rowid, tokens);
    std::sort(terms->begin(), terms->end());
    post(rowid, *terms, tokens);
    return {};
}

void Bm25Retriever::post(std::int64_t rowid, const std::vector<std::string>& tokens, std::uint32_t length) {
    const auto row = static_cast<std::uint32_t>(m_rowids.size());
    m_rowids.push_back(rowid);
    std::vector<TermStats*>* journal = nullptr;
    if (m_journal) journal = &m_journal->emplace_back();
    for (std::size_t i = 0; i < tokens.size();) {
        std::size_t j = i;
        while (j < tokens.size() && tokens[j] == tokens[i]) ++j;
        TermStats& term = m_terms[tokens[i]];
        const auto tf = static_cast<std::uint32_t>(j - i);
        term.min_length = term.rows.empty() ? length : std::min(term.min_length, length);
        term.max_tf = term.rows.empty() ? tf : std::max(term.max_tf, tf);
        term.rows.push_back(row);
        term.counts.push_back(tf);
        if (journal != nullptr) journal->push_back(&term);  // unordered_map elements never move
        i = j;
    }
}

void Bm25Retriever::begin_changes() {
    m_journal.emplace();
    m_journal_broken = false;
}

void Bm25Retriever::keep_changes() { m_journal.reset(); }

Result<void> Bm25Retriever::undo_changes() {
    if (!m_journal || m_journal_broken) {
        m_journal.reset();
        return reload();
    }
    // Newest first: each row's postings are the last of its terms' lists. The terms keep their
    // highest count and shortest row, which may now be looser than the rows left, never tighter.
    for (auto row = m_journal->rbegin(); row != m_journal->rend(); ++row) {
        const auto number = static_cast<std::uint32_t>(m_rowids.size() - 1);
        for (TermStats* term : *row) {
            MF_ASSERT(!term->rows.empty() && term->rows.back() == number, "BM25 journal out of step");
            term->rows.pop_back();
            term->counts.pop_back();
        }
        m_stats->unset(m_rowids.back());
        m_rowids.pop_back();
    }
    m_journal.reset();
    return {};
}

Result<void> Bm25Retriever::reload() {
    m_journal_broken = m_journal.has_value();  // what it journaled refers to rows now renumbered
    m_stats->clear();
    m_terms.clear();
    m_rowids.clear();
    // Internal row numbers follow rowid order, so each token's postings, listed by fts5vocab in
    // rowid order, come out ascending.
    std::unordered_map<std::int64_t, std::uint32_t> row_of;
    MF_TRY_ASSIGN(store::Statement rows, m_db->prepare("SELECT doc, tokens FROM bm25_doclen ORDER BY doc"));
    MF_TRY(rows.for_each_row([&] {
        const std::int64_t rowid = rows.column_int(0);
        m_stats->set(rowid, static_cast<std::uint32_t>(rows.column_int(1)));
        row_of.emplace(rowid, static_cast<std::uint32_t>(m_rowids.size()));
        m_rowids.push_back(rowid);
    }));
    // One row per token occurrence, by token, then rowid, then position.
    MF_TRY_ASSIGN(store::Statement instances, m_db->prepare("SELECT term, doc FROM temp.bm25_instances"));
    std::string term_text;
    TermStats* term = nullptr;
    std::int64_t doc = -1;
    std::uint32_t tf = 0;
    auto close_row = [&] {
        if (term == nullptr || tf == 0) return;
        auto [it, fresh] = row_of.emplace(doc, static_cast<std::uint32_t>(m_rowids.size()));
        if (fresh) m_rowids.push_back(doc);  // in FTS5 without a length: scored at the average
        term->rows.push_back(it->second);
        term->counts.push_back(tf);
    };
    MF_TRY(instances.for_each_row([&] {
        const std::string_view text = instances.column_text_view(0);
        const std::int64_t row = instances.column_int(1);
        if (term != nullptr && text == term_text && row == doc) {
            ++tf;
            return;
        }
        close_row();
        if (term == nullptr || text != term_text) {
            term_text = std::string(text);
            term = &m_terms[term_text];
        }
        doc = row;
        tf = 1;
    }));
    close_row();
    // Should fts5vocab ever list out of that order, put each posting list right: ascending rows,
    // one entry per row with its counts summed. Then the bounds.
    for (auto& [text, stats] : m_terms) {
        if (!std::is_sorted(stats.rows.begin(), stats.rows.end()) ||
            std::adjacent_find(stats.rows.begin(), stats.rows.end()) != stats.rows.end()) {
            std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
            for (std::size_t i = 0; i < stats.rows.size(); ++i) pairs.emplace_back(stats.rows[i], stats.counts[i]);
            std::sort(pairs.begin(), pairs.end());
            stats.rows.clear();
            stats.counts.clear();
            for (const auto& [row, count] : pairs) {
                if (!stats.rows.empty() && stats.rows.back() == row) stats.counts.back() += count;
                else {
                    stats.rows.push_back(row);
                    stats.counts.push_back(count);
                }
            }
        }
        stats.max_tf = 0;
        stats.min_length = 0;
        for (std::size_t i = 0; i < stats.rows.size(); ++i) {
            const double length = m_stats->length(m_rowids[stats.rows[i]]);
            const auto words = length < 0 ? 0U : static_cast<std::uint32_t>(length);
            stats.max_tf = std::max(stats.max_tf, stats.counts[i]);
            stats.min_length = i == 0 ? words : std::min(stats.min_length, words);
        }
    }
    return {};
}

Result<std::vector<RetrievedRow>> Bm25Retriever::run_search(store::Statement& select) {
    std::vector<RetrievedRow> out;
    const std::int64_t before = m_stats->scored;
    while (true) {
        MF_TRY_ASSIGN(const bool row, select.step());
        if (!row) break;
        if (select.column_is_null(1)) continue;  // excluded (set_excluded): only after every kept row
        out.push_back({select.column_int(0), select.column_double(1)});
    }
    m_last_scored += m_stats->scored - before;
    return out;
}

Result<std::vector<RetrievedRow>> Bm25Retriever::search_exhaustive(std::string_view query, int k) {
    m_last_scored = 0;
    const std::string match = bm25_match_expression(query);
    if (match.empty() || k <= 0) return std::vector<RetrievedRow>{};
    MF_TRY_ASSIGN(store::Statement* const select, m_search.get(*m_db));
    select->bind(1, match).bind(2, static_cast<std::int64_t>(k));
    return run_search(*select);
}

namespace {

// A query word's walk along its token's postings.
struct Bm25Cursor {
    const std::uint32_t* rows = nullptr;  // ascending internal row numbers
    const std::uint32_t* counts = nullptr;
    std::size_t size = 0;
    std::size_t at = 0;
    double idf = 0;
    double bound = 0;  // above anything this word adds to a row's score
    std::uint32_t tf = 0;  // in the row being scored; 0 when absent

    static constexpr std::uint32_t k_end = UINT32_MAX;
    std::uint32_t row() const { return at < size ? rows[at] : k_end; }
    // Moves to the first posting at or after `target` (galloping: cheap for short hops, log for
    // long ones) and returns its count there, or 0.
    std::uint32_t seek(std::uint32_t target) {
        if (at >= size || rows[at] >= target) return at < size && rows[at] == target ? counts[at] : 0;
        std::size_t step = 1, low = at, high = at + 1;
        while (high < size && rows[high] < target) {
            low = high;
            step *= 2;
            high = std::min(size, at + step);
        }
        at = static_cast<std::size_t>(std::lower_bound(rows + low, rows + std::min(high + 1, size), target) - rows);
        return at < size && rows[at] == target ? counts[at] : 0;
    }
};

// Best first: higher score, then lower rowid (search_exhaustive's ORDER BY s DESC, rowid).
bool ranks_before(const RetrievedRow& a, const RetrievedRow& b) {
    return a.score > b.score || (a.score == b.score && a.rowid < b.rowid);
}

}  // namespace

Result<std::vector<RetrievedRow>> Bm25Retriever::search(std::string_view query, int k) {
    m_last_scored = 0;
    if (k <= 0) return std::vector<RetrievedRow>{};
    // The words bm25_match_expression() ORs, in its order, each on its token's postings.
    const double documents = double(m_stats->documents);
    const double average = m_stats->average_length();
    std::vector<Bm25Cursor> words;
    for (const std::string& word : bm25_query_words(query)) {
        const auto tokens = m_tokenizer->tokens(word, FTS5_TOKENIZE_QUERY);
        // A word FTS5 splits (or drops) is a phrase, not one token: let FTS5 score it.
        if (!tokens || tokens->size() != 1) return search_exhaustive(query, k);
        Bm25Cursor cursor;
        const auto it = m_terms.find(tokens->front());
        if (it != m_terms.end() && !it->second.rows.empty()) {
            const TermStats& term = it->second;
            cursor.rows = term.rows.data();
            cursor.counts = term.counts.data();
            cursor.size = term.rows.size();
            cursor.idf = bm25_idf(documents, double(term.df()));
            // The term grows with tf and shrinks with the length: the word's highest count and
            // shortest row bound it. The margin covers rounding.
            const double tf = term.max_tf;
            const double norm = bm25_norm(double(term.min_length), average);
            cursor.bound = cursor.idf * (tf * (k_bm25_k1 + 1.0) / (tf + norm)) * (1.0 + 1e-9) + 1e-12;
        }
        words.push_back(cursor);
    }
    if (words.empty()) return std::vector<RetrievedRow>{};

    // Words by bound, smallest first; `below[i]`: the bounds of the first i added up. The first
    // `optional` of them are non-essential: below[optional] is under the k-th best score so far.
    std::vector<std::size_t> order(words.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return words[a].bound < words[b].bound; });
    std::vector<double> below(words.size() + 1, 0.0);
    for (std::size_t i = 0; i < order.size(); ++i) below[i + 1] = below[i] + words[order[i]].bound;
    std::size_t optional = 0;
    while (optional < order.size() && words[order[optional]].size == 0) ++optional;  // no postings

    std::vector<RetrievedRow> best;  // a heap, worst on top, once it holds k rows
    best.reserve(static_cast<std::size_t>(k) + 1);
    const auto worse = [](const RetrievedRow& a, const RetrievedRow& b) { return ranks_before(a, b); };
    double threshold = -1.0;  // the k-th best score once there are k rows; scores are positive
    const auto& excluded = m_stats->excluded;
    while (optional < order.size()) {
        std::uint32_t row = Bm25Cursor::k_end;
        for (std::size_t i = optional; i < order.size(); ++i) row = std::min(row, words[order[i]].row());
        if (row == Bm25Cursor::k_end) break;
        double reachable = below[optional];
        for (std::size_t i = optional; i < order.size(); ++i) {
            Bm25Cursor& word = words[order[i]];
            word.tf = 0;
            if (word.row() == row) word.tf = word.counts[word.at++];
        }
        const std::int64_t rowid = m_rowids[row];
        if (excluded && excluded(rowid)) continue;
        const double norm = bm25_row_norm(*m_stats, rowid, average);
        for (std::size_t i = optional; i < order.size(); ++i)
            if (words[order[i]].tf > 0) reachable += bm25_term(words[order[i]].idf, words[order[i]].tf, norm);
        // Summed in another order than the score below: a hair of slack so a tie is never lost.
        if (threshold > 0 && reachable * (1.0 + 1e-12) + 1e-12 < threshold) continue;
        for (std::size_t i = 0; i < optional; ++i) words[order[i]].tf = words[order[i]].seek(row);
        double score = 0;
        for (const Bm25Cursor& word : words)
            if (word.tf > 0) score += bm25_term(word.idf, word.tf, norm);
        ++m_last_scored;
        const RetrievedRow candidate{rowid, score};
        if (static_cast<int>(best.size()) < k) {
            best.push_back(candidate);
            std::push_heap(best.begin(), best.end(), worse);
        } else if (ranks_before(candidate, best.front())) {
            std::pop_heap(best.begin(), best.end(), worse);
            best.back() = candidate;
            std::push_heap(best.begin(), best.end(), worse);
        } else {
            continue;
        }
        if (static_cast<int>(best.size()) == k) {
            threshold = best.front().score;
            while (optional < order.size() && below[optional + 1] < threshold) ++optional;
        }
    }
    std::sort(best.begin(), best.end(), ranks_before);
    return best;
}

Result<void> Bm25Retriever::clear() {
    MF_TRY(m_db->exec("INSERT INTO bm25_index(bm25_index) VALUES ('delete-all');"
                      "DELETE FROM bm25_doclen;"));
    m_stats->clear();
    m_terms.clear();
    m_rowids.clear();
    m_journal_broken = m_journal.has_value();
    return {};
}

Result<std::int64_t> Bm25Retriever::count() {
    return m_stats->documents;
}

// ---------------------------------------------------------------------------------------------
// Hashed vectors
//
// Why IDF is applied on the query side only: stored vectors hold plain (sublinear) term
// frequencies, L2-normalised, and never change after they are written. Document frequencies are
// kept per bucket, and a query's weights are multiplied by idf(bucket) as of the moment it is
// asked. Since the query norm is the same for every candidate, the ranking equals that of
// sum(idf_b * q_b * d_b): a TF-IDF inner product with the corpus statistics of today. Had IDF
// been baked into the stored vectors, every vector would go stale as the corpus grew (the IDF of
// a word changes with each new document), and keeping them right would mean re-embedding and
// re-indexing the whole store on every write.

namespace {

constexpr const char* k_schema =
    "CREATE TABLE IF NOT EXISTS hashed_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    // Native float32 order: every platform memfail targets is little-endian.
    "CREATE TABLE IF NOT EXISTS hashed_vectors (doc INTEGER PRIMARY KEY, vector BLOB NOT NULL);"
    "CREATE TABLE IF NOT EXISTS hashed_df (bucket INTEGER PRIMARY KEY, df INTEGER NOT NULL);";

double idf(std::int64_t documents, std::int64_t df) {
    // The BM25 form: positive even for a bucket in every document, finite for an unseen one.
    const double n = static_cast<double>(documents);
    const double d = static_cast<double>(df);
    return std::log(1.0 + (n - d + 0.5) / (d + 0.5));
}

}  // namespace

HashedRetriever::HashedRetriever(store::Database& db, HashedRetrieverOptions options)
    : m_db(&db),
      m_options(options),
      m_embedder(options.dim),
      m_index(VectorIndexOptions{.dim = options.dim, .large = LargeIndex::columns, .hnsw_threshold = options.hnsw_threshold}),
      m_df(static_cast<std::size_t>(options.dim), 0),
      m_insert_vector("INSERT INTO hashed_vectors (doc, vector) VALUES (?, ?)"),
      m_upsert_df("INSERT INTO hashed_df (bucket, df) VALUES (?, ?) "
                  "ON CONFLICT(bucket) DO UPDATE SET df = excluded.df") {}

Result<std::unique_ptr<HashedRetriever>> HashedRetriever::open(store::Database& db,
                                                               HashedRetrieverOptions options) {
    MF_ASSERT(options.dim > 0, "hashed retriever needs a positive dimension");
    MF_TRY(db.exec(k_schema));
    std::unique_ptr<HashedRetriever> retriever(new HashedRetriever(db, options));

    MF_TRY_ASSIGN(store::Statement get_dim,
                  db.prepare("SELECT value FROM hashed_meta WHERE key = 'dim'"));
    MF_TRY_ASSIGN(const bool has_dim, get_dim.step());
    const std::string dim_text = std::to_string(options.dim);
    if (!has_dim || get_dim.column_text(0) != dim_text) {
        // Vectors of another width cannot be searched with this one: drop them so the owner
        // re-indexes its rows (count() is 0 afterwards).
        MF_TRY(db.exec("DELETE FROM hashed_vectors; DELETE FROM hashed_df;"));
        MF_TRY_ASSIGN(store::Statement put_dim,
                      db.prepare("INSERT OR REPLACE INTO hashed_meta (key, value) VALUES ('dim', ?)"));
        put_dim.bind(1, dim_text);
        MF_TRY(put_dim.run());
    }
    MF_TRY(retriever->reload());
    return retriever;
}

std::string HashedRetriever::serving() const { return signature() + " " + m_index.describe(); }

std::string HashedRetriever::signature() const {
    return "hashed:dim=" + std::to_string(m_options.dim);
}

Result<void> HashedRetriever::add(std::int64_t rowid, std::string_view text) {
    const std::vector<HashedFeature> features = m_embedder.features(text);
    std::vector<float> vector = densify(features, m_options.dim);
    l2_normalize(vector);

    MF_TRY_ASSIGN(store::Statement* const insert, m_insert_vector.get(*m_db));
    insert->bind(1, rowid).bind_blob(2, vector.data(), vector.size() * sizeof(float));
    MF_TRY(insert->run());

    for (const HashedFeature& f : features) {
        ++m_df[f.bucket];
        m_dirty.insert(f.bucket);
    }
    ++m_documents;
    m_index.add(rowid, vector);
    return {};
}

Result<void> HashedRetriever::flush() {
    if (m_dirty.empty()) return {};
    MF_TRY_ASSIGN(store::Statement* const upsert, m_upsert_df.get(*m_db));
    for (const std::uint32_t bucket : m_dirty) {
        upsert->bind(1, static_cast<std::int64_t>(bucket)).bind(2, m_df[bucket]);
        MF_TRY(upsert->run());
    }
    m_dirty.clear();
    return {};
}

Result<void> HashedRetriever::reload() {
    m_index.clear();
    std::fill(m_df.begin(), m_df.end(), 0);
    m_dirty.clear();
    m_documents = 0;

    MF_TRY_ASSIGN(store::Statement df_rows, m_db->prepare("SELECT bucket, df FROM hashed_df"));
    while (true) {
        MF_TRY_ASSIGN(const bool row, df_rows.step());
        if (!row) break;
        const std::int64_t bucket = df_rows.column_int(0);
        if (bucket < 0 || bucket >= m_options.dim)
            return make_error(ErrorKind::database,
                              "hashed_df holds bucket " + std::to_string(bucket) +
                                  " outside dim=" + std::to_string(m_options.dim),
                              m_db->path());
        m_df[static_cast<std::size_t>(bucket)] = df_rows.column_int(1);
    }

    // Insertion order, so a reopened store builds the same HNSW graph as the original.
    MF_TRY_ASSIGN(store::Statement vectors,
                  m_db->prepare("SELECT doc, vector FROM hashed_vectors ORDER BY doc"));
    const std::size_t bytes = static_cast<std::size_t>(m_options.dim) * sizeof(float);
    std::vector<float> vector(static_cast<std::size_t>(m_options.dim));
    while (true) {
        MF_TRY_ASSIGN(const bool row, vectors.step());
        if (!row) break;
        const std::string_view blob = vectors.column_blob(1);
        if (blob.size() != bytes)
            return make_error(ErrorKind::database,
                              "hashed vector of row " + std::to_string(vectors.column_int(0)) +
                                  " has " + std::to_string(blob.size()) + " bytes, expected " +
                                  std::to_string(bytes),
                              m_db->path());
        std::memcpy(vector.data(), blob.data(), bytes);
        m_index.add(vectors.column_int(0), vector);
        ++m_documents;
    }
    return {};
}

Result<std::vector<RetrievedRow>> HashedRetriever::search(std::string_view query, int k) {
    std::vector<RetrievedRow> out;
    if (k <= 0) return out;
    std::vector<HashedFeature> features = m_embedder.features(query);
    for (HashedFeature& f : features)
        f.weight *= static_cast<float>(idf(m_documents, m_df[f.bucket]));
    std::vector<float> vector = densify(features, m_options.dim);
    if (!l2_normalize(vector)) return out;  // nothing to match on
    for (const VectorMatch& match : m_index.search(vector, k)) out.push_back({match.id, match.score});
    return out;
}

Result<void> HashedRetriever::clear() {
    MF_TRY(m_db->exec("DELETE FROM hashed_vectors; DELETE FROM hashed_df;"));
    m_index.clear();
    std::fill(m_df.begin(), m_df.end(), 0);
    m_dirty.clear();
    m_documents = 0;
    return {};
}

Result<std::int64_t> HashedRetriever::count() { return m_documents; }

}  // namespace memfail::memory

// ---- EmbeddingRetriever --------------------------------------------------------------------------


namespace memfail::memory {

namespace {

constexpr const char* k_embedding_schema = R"sql(
CREATE TABLE IF NOT EXISTS embed_vectors (doc INTEGER PRIMARY KEY, vector BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS embed_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

}  // namespace

EmbeddingRetriever::EmbeddingRetriever(store::Database& db, std::unique_ptr<TextEmbedder> embedder,
                                       std::size_t hnsw_threshold)
    : m_db(&db), m_embedder(std::move(embedder)), m_hnsw_threshold(hnsw_threshold),
      m_insert_vector("INSERT INTO embed_vectors (doc, vector) VALUES (?, ?)") {}

EmbeddingRetriever::~EmbeddingRetriever() = default;

Result<std::unique_ptr<EmbeddingRetriever>> EmbeddingRetriever::open(store::Database& db,
                                                                     std::unique_ptr<TextEmbedder> embedder,
                                                                     std::size_t hnsw_threshold) {
    MF_ASSERT(embedder != nullptr, "an embedding retriever needs an embedder");
    MF_TRY(db.exec(k_embedding_schema));
    std::unique_ptr<EmbeddingRetriever> retriever(new EmbeddingRetriever(db, std::move(embedder), hnsw_threshold));
    MF_TRY_ASSIGN(store::Statement get, db.prepare("SELECT value FROM embed_meta WHERE key = 'embedder'"));
    MF_TRY_ASSIGN(const bool has, get.step());
    const std::string signature = retriever->m_embedder->signature();
    if (!has || get.column_text(0) != signature) {
        MF_TRY(db.exec("DELETE FROM embed_vectors;"));
        MF_TRY_ASSIGN(store::Statement put, db.prepare("INSERT OR REPLACE INTO embed_meta (key, value) VALUES ('embedder', ?)"));
        put.bind(1, signature);
        MF_TRY(put.run());
    }
    MF_TRY(retriever->reload());
    return retriever;
}

std::string EmbeddingRetriever::signature() const { return "embed:" + m_embedder->signature(); }

std::string EmbeddingRetriever::serving() const {
    return signature() + (m_index ? " " + m_index->describe() : std::string(" (no vectors yet)"));
}

void EmbeddingRetriever::index_vector(std::int64_t rowid, const std::vector<float>& vector) {
    if (!m_index) {
        VectorIndexOptions options;
        options.dim = static_cast<int>(vector.size());
        options.large = m_embedder->sparse() ? LargeIndex::columns : LargeIndex::hnsw;
        options.hnsw_threshold = m_hnsw_threshold;
        m_index.emplace(options);
    }
    m_index->add(rowid, vector);
    ++m_documents;
}

Result<void> EmbeddingRetriever::add(std::int64_t rowid, std::string_view text) {
    m_pending.emplace_back(rowid, std::string(text));
    return {};
}

Result<void> EmbeddingRetriever::flush() {
    if (m_pending.empty()) return {};
    std::vector<std::string> texts;
    texts.reserve(m_pending.size());
    for (const auto& [rowid, text] : m_pending) texts.push_back(text);
    MF_TRY_ASSIGN(auto vectors, m_embedder->embed(texts));
    if (vectors.size() != m_pending.size())
        return make_error(ErrorKind::internal, "the embedder returned a vector count unlike its input");
    if (m_index && !vectors.empty() && static_cast<int>(vectors.front().size()) != m_index->dim())
        return make_error(ErrorKind::protocol,
                          "embeddings changed dimension from " + std::to_string(m_index->dim()) + " to " +
                              std::to_string(vectors.front().size()),
                          m_embedder->signature());
    for (std::size_t i = 0; i < vectors.size(); ++i) {
        MF_TRY_ASSIGN(store::Statement* const insert, m_insert_vector.get(*m_db));
        insert->bind(1, m_pending[i].first).bind_blob(2, vectors[i].data(), vectors[i].size() * sizeof(float));
        MF_TRY(insert->run());
        index_vector(m_pending[i].first, vectors[i]);
        if (m_journal) m_journal->push_back(Change{m_pending[i].first, {}});
    }
    m_pending.clear();
    return {};
}

Result<void> EmbeddingRetriever::reload() {
    m_journal_broken = m_journal.has_value();
    m_index.reset();
    m_documents = 0;
    m_pending.clear();
    MF_TRY_ASSIGN(store::Statement rows, m_db->prepare("SELECT doc, vector FROM embed_vectors ORDER BY doc"));
    std::vector<float> vector;
    while (true) {
        MF_TRY_ASSIGN(const bool row, rows.step());
        if (!row) break;
        const std::string_view blob = rows.column_blob(1);
        if (blob.empty() || blob.size() % sizeof(float) != 0 ||
            (m_index && blob.size() != static_cast<std::size_t>(m_index->dim()) * sizeof(float)))
            return make_error(ErrorKind::database,
                              "embedding of row " + std::to_string(rows.column_int(0)) + " has " +
                                  std::to_string(blob.size()) + " bytes, unlike the others",
                              m_db->path());
        vector.resize(blob.size() / sizeof(float));
        std::memcpy(vector.data(), blob.data(), blob.size());
        index_vector(rows.column_int(0), vector);
    }
    return {};
}

Result<std::vector<RetrievedRow>> EmbeddingRetriever::search(std::string_view query, int k) {
    std::vector<RetrievedRow> out;
    if (k <= 0 || !m_index || m_index->size() == 0) return out;
    MF_TRY_ASSIGN(auto vectors, m_embedder->embed({std::string(query)}));
    if (vectors.size() != 1 || static_cast<int>(vectors[0].size()) != m_index->dim())
        return make_error(ErrorKind::protocol, "the query embedding does not match the stored dimension",
                          m_embedder->signature());
    for (const VectorMatch& match : m_index->search(vectors[0], k)) out.push_back({match.id, match.score});
    return out;
}

Result<bool> EmbeddingRetriever::remove(std::int64_t rowid) {
    const auto pending = std::find_if(m_pending.begin(), m_pending.end(),
                                      [&](const auto& queued) { return queued.first == rowid; });
    if (pending != m_pending.end()) {
        m_pending.erase(pending);
        return true;
    }
    std::vector<float> removed;
    if (m_journal) {
        MF_TRY_ASSIGN(store::Statement* const select, m_select_vector.get(*m_db));
        select->bind(1, rowid);
        MF_TRY_ASSIGN(const bool held, select->step());
        if (!held) return false;
        const std::string_view blob = select->column_blob(0);
        removed.resize(blob.size() / sizeof(float));
        std::memcpy(removed.data(), blob.data(), removed.size() * sizeof(float));
    }
    MF_TRY_ASSIGN(store::Statement* const erase, m_delete_vector.get(*m_db));
    erase->bind(1, rowid);
    MF_TRY(erase->run());
    if (m_db->changes() == 0) return false;
    if (m_index) m_index->remove(rowid);
    --m_documents;
    if (m_journal) m_journal->push_back(Change{rowid, std::move(removed)});
    return true;
}

Result<void> EmbeddingRetriever::clear() {
    MF_TRY(m_db->exec("DELETE FROM embed_vectors;"));
    m_index.reset();
    m_documents = 0;
    m_pending.clear();
    m_journal_broken = m_journal.has_value();
    return {};
}

void EmbeddingRetriever::begin_changes() {
    m_journal.emplace();
    m_journal_broken = false;
    m_index_at_begin = m_index.has_value();
    m_approximate_at_begin = m_index && m_index->is_approximate();
}

void EmbeddingRetriever::keep_changes() { m_journal.reset(); }

Result<void> EmbeddingRetriever::undo_changes() {
    m_pending.clear();
    // A journal that cannot be replayed, or an index that moved to HNSW in between (it moves at
    // most a few thousand vectors, so reading them back is cheap): re-read SQLite.
    const bool moved = m_index && m_index->is_approximate() && !m_approximate_at_begin;
    if (!m_journal || m_journal_broken || moved) {
        m_journal.reset();
        return reload();
    }
    if (!m_index_at_begin) {
        m_index.reset();  // created by this transaction's first vector
        m_documents = 0;
    } else {
        for (auto change = m_journal->rbegin(); change != m_journal->rend(); ++change) {
            if (change->removed.empty()) {
                if (m_index->remove(change->rowid)) --m_documents;
            } else {
                m_index->add(change->rowid, change->removed);
                ++m_documents;
            }
        }
    }
    m_journal.reset();
    return {};
}

Result<std::int64_t> EmbeddingRetriever::count() { return m_documents + static_cast<std::int64_t>(m_pending.size()); }

}  // namespace memfail::memory
