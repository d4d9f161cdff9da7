//! The in-memory tantivy index: its schema, building it from the stored chunks, the BM25 query
//! of a search with its filters, and ranking a few loose texts the same way.

use std::collections::{HashMap, HashSet};

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value};
use tantivy::{Index, IndexReader, TantivyDocument, Term, doc};

use super::{SearchError, SearchQuery, tokenizer};
use crate::store::knowledge::ChunkRow;

#[derive(Clone, Copy)]
pub(super) struct Fields {
    chunk: Field,
    agent: Field,
    base: Field,
    category: Field,
    kind: Field,
    title: Field,
    text: Field,
}

pub(super) struct Built {
    pub(super) reader: IndexReader,
    pub(super) fields: Fields,
    pub(super) chunks: HashMap<String, ChunkRow>,
    pub(super) vectors: HashMap<String, Vec<f32>>,
    pub(super) version: (i64, i64),
    /// What each agent's knowledge is about (set after the build, from the bases).
    pub(super) scopes: HashMap<String, std::sync::Arc<super::Scope>>,
}

fn schema() -> (Schema, Fields) {
    let mut sb = Schema::builder();
    let text_options = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer::NAME)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let fields = Fields {
        chunk: sb.add_text_field("chunk", STRING | STORED),
        agent: sb.add_text_field("agent", STRING),
        base: sb.add_text_field("base", STRING),
        category: sb.add_text_field("category", STRING),
        kind: sb.add_text_field("kind", STRING),
        title: sb.add_text_field("title", text_options.clone()),
        text: sb.add_text_field("text", text_options),
    };
    (sb.build(), fields)
}

pub(super) fn build(rows: Vec<ChunkRow>, version: (i64, i64)) -> tantivy::Result<Built> {
    let (schema, f) = schema();
    let index = Index::create_in_ram(schema);
    index.tokenizers().register(tokenizer::NAME, tokenizer::CjkTokenizer);
    let mut writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000)?;
    let mut chunks = HashMap::with_capacity(rows.len());
    let mut vectors = HashMap::new();
    for row in rows {
        writer.add_document(doc!(
            f.chunk => row.id.clone(),
            f.agent => row.agent_id.clone(),
            f.base => row.knowledge_base_id.clone(),
            f.category => row.category.clone().unwrap_or_default(),
            f.kind => row.kind.clone(),
            f.title => title_of(&row).to_owned(),
            f.text => row.text.clone(),
        ))?;
        if let Some(v) = row.embedding.as_deref().and_then(|e| serde_json::from_str::<Vec<f32>>(e).ok()) {
            vectors.insert(row.id.clone(), v);
        }
        chunks.insert(row.id.clone(), row);
    }
    writer.commit()?;
    let reader = index.reader_builder().reload_policy(tantivy::ReloadPolicy::Manual).try_into()?;
    Ok(Built { reader, fields: f, chunks, vectors, version, scopes: HashMap::new() })
}

/// The title a passage is found by. A typed article's chunks are bare text, so each carries the
/// article's title; a file's passages carry their own headings, so its title counts once (on the
/// first); a web page's first passage starts with its `<h1>`, so its title is left out. Otherwise
/// every passage of every page whose title repeats a question's words outranks the one passage
/// that answers it (the crawler's benchmark: 18 of 30 questions found with the title on every
/// passage, 24 with it on the first, 27 without it; stemming and stop words included).
fn title_of(row: &ChunkRow) -> &str {
    match (row.from_source, row.url.is_some()) {
        (0, _) => &row.title,
        (_, true) => "",
        _ if row.ordinal == 0 => &row.title,
        _ => "",
    }
}

/// English words a question is made of that say nothing about what it asks ("how do I …").
const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "any", "are", "at", "be", "by", "can", "do", "doe", "does", "for", "from", "get", "ha",
    "has", "have", "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "s", "that", "the", "there", "thi",
    "this", "to", "t", "wa", "was", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
];

/// The query's distinct terms, without stop words (unless nothing else is left).
fn query_terms(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    let all: Vec<String> =
        tokenizer::terms(text).into_iter().map(|t| t.text).filter(|t| seen.insert(t.clone())).collect();
    let kept: Vec<String> = all.iter().filter(|t| !STOP_WORDS.contains(&String::as_str(t))).cloned().collect();
    if kept.is_empty() { all } else { kept }
}

/// BM25 scores of chunks that pass the filters, by chunk id.
pub(super) fn full_text(built: &Built, q: &SearchQuery<'_>) -> Result<Vec<(String, f32)>, SearchError> {
    let f = built.fields;
    let terms = query_terms(q.text);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for t in &terms {
        let text = TermQuery::new(Term::from_field_text(f.text, t), IndexRecordOption::WithFreqs);
        let title = TermQuery::new(Term::from_field_text(f.title, t), IndexRecordOption::WithFreqs);
        should.push((Occur::Should, Box::new(text)));
        should.push((Occur::Should, Box::new(BoostQuery::new(Box::new(title), 2.0))));
    }
    let mut must: Vec<(Occur, Box<dyn Query>)> = vec![
        (Occur::Must, Box::new(BooleanQuery::new(should))),
        (Occur::Must, Box::new(TermQuery::new(Term::from_field_text(f.agent, q.agent_id), IndexRecordOption::Basic))),
    ];
    if let Some(bases) = q.knowledge_base_ids {
        let any: Vec<(Occur, Box<dyn Query>)> = bases
            .iter()
            .map(|b| {
                let tq: Box<dyn Query> =
                    Box::new(TermQuery::new(Term::from_field_text(f.base, b), IndexRecordOption::Basic));
                (Occur::Should, tq)
            })
            .collect();
        must.push((Occur::Must, Box::new(BooleanQuery::new(any))));
    }
    if let Some(category) = q.category {
        must.push((
            Occur::Must,
            Box::new(TermQuery::new(Term::from_field_text(f.category, category), IndexRecordOption::Basic)),
        ));
    }
    if let Some(kind) = q.kind {
        must.push((
            Occur::Must,
            Box::new(TermQuery::new(Term::from_field_text(f.kind, kind), IndexRecordOption::Basic)),
        ));
    }
    let query = BooleanQuery::new(must);
    let searcher = built.reader.searcher();
    let top = searcher.search(&query, &TopDocs::with_limit(50).order_by_score())?;
    let mut out = Vec::with_capacity(top.len());
    for (score, address) in top {
        let doc: TantivyDocument = searcher.doc(address)?;
        if let Some(id) = doc.get_first(f.chunk).and_then(|v| v.as_str()) {
            out.push((id.to_owned(), score));
        }
    }
    Ok(out)
}

/// Ranks a handful of short texts (a visitor's memories) against a query with the same BM25
/// index, built on the spot in memory. Returns `(index into texts, score)`, best first.
pub fn rank(texts: &[&str], query: &str, limit: usize) -> tantivy::Result<Vec<(usize, f32)>> {
    let mut sb = Schema::builder();
    let position = sb.add_u64_field("position", tantivy::schema::STORED);
    let text_options = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(tokenizer::NAME).set_index_option(IndexRecordOption::WithFreqs),
    );
    let body = sb.add_text_field("body", text_options);
    let index = Index::create_in_ram(sb.build());
    index.tokenizers().register(tokenizer::NAME, tokenizer::CjkTokenizer);
    let mut writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000)?;
    for (i, t) in texts.iter().enumerate() {
        writer.add_document(doc!(position => i as u64, body => *t))?;
    }
    writer.commit()?;
    let terms: HashSet<String> = tokenizer::terms(query).into_iter().map(|t| t.text).collect();
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let should: Vec<(Occur, Box<dyn Query>)> = terms
        .iter()
        .map(|t| {
            let q: Box<dyn Query> =
                Box::new(TermQuery::new(Term::from_field_text(body, t), IndexRecordOption::WithFreqs));
            (Occur::Should, q)
        })
        .collect();
    let searcher = index.reader()?.searcher();
    let top = searcher.search(&BooleanQuery::new(should), &TopDocs::with_limit(limit.max(1)).order_by_score())?;
    let mut out = Vec::new();
    for (score, address) in top {
        let doc: TantivyDocument = searcher.doc(address)?;
        if let Some(p) = doc.get_first(position).and_then(|v| v.as_u64()) {
            out.push((p as usize, score));
        }
    }
    Ok(out)
}
