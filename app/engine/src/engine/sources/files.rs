//! Files an owner uploads (PDF, DOCX, HTML, Markdown, text, CSV of questions and answers) and
//! snippets they type: each is a page of the base's one Files or Snippets source, indexed at
//! once. A file uploaded again under the same name replaces the earlier one.

use parley_ingest::{Read, passages};

use super::SourceError;
use super::crawl::PASSAGE_CHARS;
use crate::engine::Engine;
use crate::store::knowledge::NewArticle;
use crate::store::knowledge::sources::{self as store, PageOutcome, PagePassage, Progress, SourceKind};

/// What one uploaded file became.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FileResult {
    pub name: String,
    /// The page id, when the file was indexed.
    pub page_id: Option<String>,
    pub title: Option<String>,
    pub passages: usize,
    /// Why it was refused (naming the file).
    pub error: Option<String>,
}

/// A question and its answer as one passage.
fn snippet_text(question: &str, answer: &str) -> String {
    format!("**{}**\n\n{}", question.trim(), answer.trim())
}

impl Engine {
    /// Indexes uploaded files into the base's Files source; each file succeeds or fails alone
    /// (a refused file changes nothing). One run records the upload in the source's history.
    pub async fn import_files(
        &self,
        knowledge_base_id: &str,
        files: &[(String, Vec<u8>)],
    ) -> Result<Vec<FileResult>, SourceError> {
        let settings = self.settings().crawl.clone();
        let now = self.now_ms();
        let source = store::one_of_kind(self.db(), knowledge_base_id, SourceKind::Files, "Files", now).await?;
        let (_, mut count) = store::pages(self.db(), &source.id, None, 0, 1).await?;
        let run = store::insert_run(self.db(), &source.id, Some(self.process_id()), now).await?;
        let mut results = Vec::with_capacity(files.len());
        let mut progress = Progress::default();
        for (name, bytes) in files {
            let name = clean_name(name);
            let refuse = |error: String| FileResult {
                name: name.clone(),
                page_id: None,
                title: None,
                passages: 0,
                error: Some(error),
            };
            progress.found += 1;
            if bytes.len() > settings.max_file_bytes {
                progress.skipped += 1;
                let limit = settings.max_file_bytes / (1024 * 1024);
                results.push(refuse(format!("{name}: larger than the limit of {limit} MiB")));
                continue;
            }
            let existing = store::page_by_url(self.db(), &source.id, &name).await?;
            if existing.is_none() && count >= settings.max_files {
                progress.skipped += 1;
                results.push(refuse(format!("{name}: the base already holds {} files, the most allowed", count)));
                continue;
            }
            let (file, copy) = (name.clone(), bytes.clone());
            let read = super::crawl::off_thread(move || parley_ingest::read_file(&file, &copy)).await;
            let read = match read.unwrap_or_else(|| {
                Err(parley_ingest::ReadError::Damaged {
                    name: name.clone(),
                    kind: "document",
                    reason: "it took too long to read".into(),
                })
            }) {
                Ok(read) => read,
                Err(e) => {
                    progress.failed += 1;
                    results.push(refuse(e.to_string()));
                    continue;
                }
            };
            let (title, lang, pieces) = match read {
                Read::Document(d) => {
                    let pieces: Vec<String> =
                        passages(&d.markdown, PASSAGE_CHARS).into_iter().map(|p| p.text).collect();
                    (d.title, d.lang, pieces)
                }
                Read::Snippets(pairs) => {
                    let pieces = pairs.iter().map(|s| snippet_text(&s.question, &s.answer)).collect();
                    (name.clone(), None, pieces)
                }
            };
            if pieces.is_empty() {
                progress.failed += 1;
                results.push(refuse(format!("{name}: no text found in the file")));
                continue;
            }
            let body = pieces.join("\n\n");
            let hash = parley_ingest::content_hash(&body);
            let page = store::new_page(self.db(), &source.id, &name, now).await?;
            let article =
                NewArticle { title: title.clone(), category: None, kind: "article".into(), body, source_url: None };
            let stored: Vec<PagePassage> = pieces.into_iter().map(|text| PagePassage { text, url: None }).collect();
            let outcome = PageOutcome {
                status: "indexed",
                title: Some(&title),
                lang: lang.as_deref(),
                content_hash: Some(&hash),
                bytes: Some(bytes.len() as i64),
                ..PageOutcome::default()
            };
            store::index_page(self.db(), &page, knowledge_base_id, &article, &stored, &outcome, now).await?;
            if existing.is_none() {
                count += 1;
            }
            progress.fetched += 1;
            progress.indexed += 1;
            results.push(FileResult {
                name: name.clone(),
                page_id: Some(page.id),
                title: Some(title),
                passages: stored.len(),
                error: None,
            });
        }
        store::report(self.db(), &run.id, self.process_id(), &progress, None, now).await?;
        store::finish_run(self.db(), &run.id, "done", None, self.now_ms()).await?;
        self.services().knowledge.reload().await.map_err(|e| SourceError::Index(e.to_string()))?;
        Ok(results)
    }

    /// Adds a question-and-answer snippet to the base (its Snippets source), indexed at once.
    pub async fn add_snippet(
        &self,
        knowledge_base_id: &str,
        question: &str,
        answer: &str,
    ) -> Result<String, SourceError> {
        let (question, answer) = (question.trim(), answer.trim());
        let mut errors = Vec::new();
        if question.is_empty() || question.chars().count() > 500 {
            errors.push(parley_protocol::FieldError::new("question", "A question of 1 to 500 characters."));
        }
        if answer.is_empty() || answer.chars().count() > 5_000 {
            errors.push(parley_protocol::FieldError::new("answer", "An answer of 1 to 5,000 characters."));
        }
        if !errors.is_empty() {
            return Err(SourceError::Invalid(errors));
        }
        let now = self.now_ms();
        let source = store::one_of_kind(self.db(), knowledge_base_id, SourceKind::Snippets, "Snippets", now).await?;
        let (_, count) = store::pages(self.db(), &source.id, None, 0, 1).await?;
        if count >= self.settings().crawl.max_files {
            return Err(SourceError::Invalid(vec![parley_protocol::FieldError::new(
                "question",
                "This base holds the most snippets allowed; delete some first.",
            )]));
        }
        let page = store::new_page(self.db(), &source.id, &format!("snippet:{}", crate::store::new_id()), now).await?;
        let text = snippet_text(question, answer);
        let hash = parley_ingest::content_hash(&text);
        let article = NewArticle {
            title: question.to_owned(),
            category: None,
            kind: "article".into(),
            body: answer.to_owned(),
            source_url: None,
        };
        let outcome = PageOutcome {
            status: "indexed",
            title: Some(question),
            content_hash: Some(&hash),
            ..PageOutcome::default()
        };
        store::index_page(
            self.db(),
            &page,
            knowledge_base_id,
            &article,
            &[PagePassage { text, url: None }],
            &outcome,
            now,
        )
        .await?;
        self.services().knowledge.reload().await.map_err(|e| SourceError::Index(e.to_string()))?;
        Ok(page.id)
    }
}

/// A file's name without any folder part, trimmed, at most 200 characters.
fn clean_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name).trim();
    let base: String = base.chars().filter(|c| !c.is_control()).take(200).collect();
    if base.is_empty() { "file".into() } else { base }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_their_folders() {
        assert_eq!(clean_name("C:\\Users\\me\\Price list.pdf"), "Price list.pdf");
        assert_eq!(clean_name("../../etc/passwd"), "passwd");
        assert_eq!(clean_name("  "), "file");
        assert_eq!(snippet_text(" Q? ", " A. "), "**Q?**\n\nA.");
    }
}
