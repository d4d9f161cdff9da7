//! The search index (issue 43, part 4): documents (a message, a note, a lead) with the terms
//! each holds, and the query that finds the conversations whose documents hold every term of a
//! search, limited to what the asking operator may see. Terms come from the engine's tokenizer
//! (Chinese bigrams, English stems), at index and at query time alike; the database only keeps
//! postings `(term, doc)` and intersects them, in SQL that runs unchanged on SQLite and
//! PostgreSQL. Deleting a conversation deletes its documents (foreign keys, `ON DELETE CASCADE`).

use std::collections::HashMap;

use super::script::{self, Arg, Stmt};
use super::{Db, DbError, insert_rows, placeholders};

/// Where documents come from; each has a cursor of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Messages,
    Notes,
    Leads,
    /// The identified user (name, email) of each conversation's visitor, read again whenever
    /// the conversation changes.
    Users,
    /// The details operators set on a contact (name, email, phone), one document per
    /// conversation of the contact (and of those merged into it), read again when they change.
    Contacts,
}

impl Source {
    pub const ALL: [Source; 5] = [Source::Messages, Source::Notes, Source::Leads, Source::Users, Source::Contacts];

    pub fn name(self) -> &'static str {
        match self {
            Source::Messages => "messages",
            Source::Notes => "notes",
            Source::Leads => "leads",
            Source::Users => "users",
            Source::Contacts => "contacts",
        }
    }

    /// The id of the document a row of this source becomes (a user's: one per conversation).
    pub fn doc_id(self, row_id: &str) -> String {
        match self {
            Source::Users => format!("user:{row_id}"),
            Source::Contacts => format!("contact:{row_id}"),
            _ => row_id.to_owned(),
        }
    }

    /// The kind of document a row of this source becomes.
    pub fn kind(self) -> &'static str {
        match self {
            Source::Messages => "message",
            Source::Notes => "note",
            Source::Leads => "lead",
            Source::Users => "user",
            Source::Contacts => "contact",
        }
    }

    /// The rows changed after the cursor (`$1` time, `$2` id), oldest first, `$3` at most; each
    /// as `id, conversation_id, at, created_at` and its texts.
    fn changed_sql(self) -> &'static str {
        match self {
            // Visitors', the assistant's and operators' messages; never system or tool text.
            Source::Messages => {
                "SELECT id, conversation_id, updated_at, created_at, content, NULL, NULL, NULL FROM messages \
                 WHERE (updated_at > $1 OR (updated_at = $1 AND id > $2)) \
                 AND role IN ('visitor', 'assistant', 'operator') ORDER BY updated_at, id LIMIT $3"
            }
            Source::Notes => {
                "SELECT id, conversation_id, created_at, created_at, body, NULL, NULL, NULL FROM conversation_notes \
                 WHERE (created_at > $1 OR (created_at = $1 AND id > $2)) ORDER BY created_at, id LIMIT $3"
            }
            Source::Leads => {
                "SELECT id, conversation_id, updated_at, created_at, name, email, phone, message FROM leads \
                 WHERE (updated_at > $1 OR (updated_at = $1 AND id > $2)) ORDER BY updated_at, id LIMIT $3"
            }
            // A row per conversation of an identified visitor (its id: the conversation's).
            Source::Users => {
                "SELECT c.id, c.id, c.updated_at, c.created_at, COALESCE(eu.name, ''), eu.email, NULL, NULL \
                 FROM conversations c JOIN end_users eu ON eu.visitor_id = c.visitor_id \
                 WHERE (c.updated_at > $1 OR (c.updated_at = $1 AND c.id > $2)) ORDER BY c.updated_at, c.id LIMIT $3"
            }
            // A row per conversation of a contact whose details changed (its id: the
            // conversation's); a merged contact's conversations under the details of the one
            // it was merged into.
            Source::Contacts => {
                "SELECT c.id, c.id, k.contact_at, c.created_at, COALESCE(k.contact_name, ''), k.contact_email, \
                 k.contact_phone, NULL FROM visitors k \
                 JOIN visitors v ON (v.id = k.id OR v.merged_into = k.id) JOIN conversations c ON c.visitor_id = v.id \
                 WHERE k.contact_at IS NOT NULL AND k.merged_into IS NULL \
                 AND (k.contact_at > $1 OR (k.contact_at = $1 AND c.id > $2)) ORDER BY k.contact_at, c.id LIMIT $3"
            }
        }
    }
}

/// A source row that changed: what to index.
#[derive(Clone, Debug, PartialEq)]
pub struct Changed {
    pub id: String,
    pub conversation_id: String,
    /// When it last changed (the cursor's time, the document's version).
    pub at: i64,
    pub created_at: i64,
    /// The text to index (a lead's name, email, phone and message, joined).
    pub body: String,
}

type ChangedRow = (String, String, i64, i64, String, Option<String>, Option<String>, Option<String>);

/// Up to `limit` rows of `source` that changed after `(at, id)`, oldest first.
pub async fn changed(db: &Db, source: Source, after: (i64, &str), limit: i64) -> Result<Vec<Changed>, DbError> {
    let rows: Vec<ChangedRow> = sqlx::query_as(source.changed_sql())
        .bind(after.0)
        .bind(after.1)
        .bind(limit)
        .fetch_all(&mut *db.read().await?)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, conversation_id, at, created_at, first, a, b, c)| {
            let body = std::iter::once(first)
                .chain([a, b, c].into_iter().flatten())
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" · ");
            Changed { id, conversation_id, at, created_at, body }
        })
        .collect())
}

/// Where the indexer stopped reading `source`: `(0, "")` before its first run.
pub async fn cursor(db: &Db, source: Source) -> Result<(i64, String), DbError> {
    let row: Option<(i64, String)> = sqlx::query_as("SELECT at, id FROM search_cursors WHERE source = $1")
        .bind(source.name())
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(row.unwrap_or((0, String::new())))
}

/// The versions of those of `ids` that are indexed.
pub async fn versions(db: &Db, ids: &[&str]) -> Result<HashMap<String, i64>, DbError> {
    let mut out = HashMap::new();
    for chunk in ids.chunks(500) {
        let list = placeholders(1, chunk.len());
        let sql = format!("SELECT id, version FROM search_docs WHERE id IN {}", &list[..]);
        let mut q = sqlx::query_as::<_, (String, i64)>(&sql);
        for id in chunk {
            q = q.bind(*id);
        }
        out.extend(q.fetch_all(&mut *db.read().await?).await?);
    }
    Ok(out)
}

/// A document to (re)index, with its distinct terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Doc {
    pub id: String,
    pub kind: &'static str,
    pub conversation_id: String,
    pub body: String,
    pub version: i64,
    pub created_at: i64,
    pub terms: Vec<String>,
}

/// Replaces the documents `docs` (and drops `gone`: rows now without text), and moves the
/// cursor of `source` to `cursor`, in one transaction.
pub async fn put(
    db: &Db,
    source: Source,
    docs: Vec<Doc>,
    gone: &[String],
    cursor: (i64, String),
) -> Result<(), DbError> {
    let mut stmts = Vec::new();
    let replaced: Vec<&String> = docs.iter().map(|d| &d.id).chain(gone).collect();
    for chunk in replaced.chunks(500) {
        let list = placeholders(1, chunk.len());
        let args: Vec<Arg> = chunk.iter().map(|id| Arg::from(*id)).collect();
        stmts.push(Stmt::new(format!("DELETE FROM search_terms WHERE doc_id IN {list}"), args.clone()));
        stmts.push(Stmt::new(format!("DELETE FROM search_docs WHERE id IN {list}"), args));
    }
    let mut doc_rows = Vec::with_capacity(docs.len());
    let mut term_rows = Vec::new();
    for d in docs {
        for t in d.terms {
            term_rows.push(vec![Arg::from(t), Arg::from(&d.id)]);
        }
        doc_rows.push(vec![
            Arg::from(d.id),
            Arg::from(d.kind),
            Arg::from(d.conversation_id),
            Arg::from(d.body),
            Arg::from(d.version),
            Arg::from(d.created_at),
        ]);
    }
    // Two replicas' runs may overlap (a run longer than the job's period): the second one's
    // rows are already there.
    let inserts = insert_rows("search_docs (id, kind, conversation_id, body, version, created_at)", 6, doc_rows, 100)
        .into_iter()
        .chain(insert_rows("search_terms (term, doc_id)", 2, term_rows, 500));
    stmts.extend(inserts.map(|mut s| {
        s.sql.push_str(" ON CONFLICT DO NOTHING");
        s
    }));
    stmts.push(Stmt::new(
        "INSERT INTO search_cursors (source, at, id) VALUES ($1, $2, $3) \
         ON CONFLICT (source) DO UPDATE SET at = excluded.at, id = excluded.id",
        vec![Arg::from(source.name()), Arg::from(cursor.0), Arg::from(cursor.1)],
    ));
    for s in &mut stmts {
        script::repair(s);
    }
    let mut conn = db.writer().acquire().await?;
    script::run(&mut conn, db.kind(), &stmts).await
}

/// The postings joined for `n` terms (`$1`…`$n`) to their documents (`d`) and conversations
/// (`c`) that the console user `$visible` may see. `CROSS JOIN` keeps SQLite's join order (the
/// first term drives; the caller puts the rarest first); PostgreSQL plans it as any inner join.
fn matching(n: usize, visible: usize) -> String {
    let mut from = String::from("search_terms t1");
    let mut cond = String::from("t1.term = $1");
    for i in 2..=n {
        from.push_str(&format!(" CROSS JOIN search_terms t{i}"));
        cond.push_str(&format!(" AND t{i}.term = ${i} AND t{i}.doc_id = t1.doc_id"));
    }
    format!(
        "FROM {from} CROSS JOIN search_docs d CROSS JOIN conversations c \
         WHERE {cond} AND d.id = t1.doc_id AND c.id = d.conversation_id AND c.trial = 0 AND {}",
        super::console::visible(visible)
    )
}

/// How many documents hold each term (to start from the rarest), at most `cap` counted each.
pub async fn frequencies(db: &Db, terms: &[String], cap: i64) -> Result<HashMap<String, i64>, DbError> {
    let mut out = HashMap::new();
    let mut conn = db.read().await?;
    for t in terms {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM (SELECT 1 FROM search_terms WHERE term = $1 LIMIT $2) x")
            .bind(t)
            .bind(cap)
            .fetch_one(&mut *conn)
            .await?;
        out.insert(t.clone(), n);
    }
    Ok(out)
}

crate::store::row_struct! {
    /// A conversation that matched, with its latest matching time and how many documents matched.
    #[derive(Clone, Debug, PartialEq)]
    pub struct HitConversation {
        pub conversation_id: String,
        pub agent_id: String,
        pub agent_name: String,
        pub status: String,
        pub last_at: i64,
        pub hits: i64,
    }
}

crate::store::row_struct! {
    /// A matching document.
    #[derive(Clone, Debug, PartialEq)]
    pub struct HitDoc {
        pub id: String,
        pub kind: String,
        pub conversation_id: String,
        pub body: String,
        pub created_at: i64,
    }
}

/// One page of the conversations whose documents hold every one of `terms` (at least one,
/// rarest first) that `visible_to` may see (`None`: everything), latest match first; and how many
/// there are in all.
pub async fn conversations(
    db: &Db,
    terms: &[String],
    visible_to: Option<&str>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<HitConversation>, i64), DbError> {
    let n = terms.len();
    let from = matching(n, n + 1);
    let count_sql = format!("SELECT COUNT(DISTINCT d.conversation_id) {from}");
    let page_sql = format!(
        "SELECT h.conversation_id, c.agent_id, a.name AS agent_name, c.status, h.last_at, h.hits FROM \
         (SELECT d.conversation_id, MAX(d.created_at) AS last_at, COUNT(*) AS hits {from} \
          GROUP BY d.conversation_id ORDER BY last_at DESC, d.conversation_id LIMIT ${} OFFSET ${}) h \
         JOIN conversations c ON c.id = h.conversation_id JOIN agents a ON a.id = c.agent_id \
         ORDER BY h.last_at DESC, h.conversation_id",
        n + 2,
        n + 3
    );
    let mut conn = db.read().await?;
    let mut count = sqlx::query_scalar::<_, i64>(&count_sql);
    let mut page = sqlx::query_as::<_, HitConversation>(&page_sql);
    for t in terms {
        count = count.bind(t);
        page = page.bind(t);
    }
    let total = count.bind(visible_to).fetch_one(&mut *conn).await?;
    if total == 0 {
        return Ok((Vec::new(), 0));
    }
    let rows = page.bind(visible_to).bind(limit).bind(offset).fetch_all(&mut *conn).await?;
    Ok((rows, total))
}

/// The latest `per` matching documents of each of the conversations `ids`.
pub async fn docs(
    db: &Db,
    terms: &[String],
    visible_to: Option<&str>,
    ids: &[String],
    per: i64,
) -> Result<Vec<HitDoc>, DbError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let n = terms.len();
    let list: Vec<String> = (0..ids.len()).map(|i| format!("${}", n + 3 + i)).collect();
    let sql = format!(
        "SELECT id, kind, conversation_id, body, created_at FROM \
         (SELECT d.id, d.kind, d.conversation_id, d.body, d.created_at, \
          ROW_NUMBER() OVER (PARTITION BY d.conversation_id ORDER BY d.created_at DESC, d.id) AS rn \
          {} AND d.conversation_id IN ({})) x WHERE rn <= ${} ORDER BY conversation_id, created_at DESC, id",
        matching(n, n + 1),
        list.join(","),
        n + 2
    );
    let mut q = sqlx::query_as::<_, HitDoc>(&sql);
    for t in terms {
        q = q.bind(t);
    }
    q = q.bind(visible_to).bind(per);
    for id in ids {
        q = q.bind(id);
    }
    q.fetch_all(&mut *db.read().await?).await
}
