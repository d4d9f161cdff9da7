//! A knowledge base's sources as the console shows them (issue 42): websites crawled, uploaded
//! files and typed snippets, each with its runs and pages.

use serde::{Deserialize, Serialize};

/// How often a website source syncs by itself: `(value, text)`.
pub const SCHEDULE_CHOICES: &[(&str, &str)] =
    &[("off", "Off (sync by hand)"), ("daily", "Daily"), ("weekly", "Weekly")];

/// The statuses a page can have: `(value, text)`; the value `""` is "any".
pub const PAGE_STATUSES: &[(&str, &str)] = &[
    ("", "Any"),
    ("indexed", "Indexed"),
    ("queued", "Queued"),
    ("skipped", "Skipped"),
    ("failed", "Failed"),
    ("gone", "Gone"),
    ("excluded", "Excluded"),
];

/// The largest file the console uploads (the page refuses bigger ones before sending; the server
/// stops reading past it).
pub const UPLOAD_MAX_BYTES: usize = 10 * 1024 * 1024;

/// A source in the base's list (and at the top of its own page).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceItem {
    pub id: String,
    pub knowledge_base_id: String,
    /// `website`, `files` or `snippets`.
    pub kind: String,
    pub name: String,
    /// The start URL of a website (empty for files and snippets).
    pub start_url: String,
    pub path_prefix: String,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub page_limit: u32,
    /// `off`, `daily` or `weekly`.
    pub schedule: String,
    pub next_sync_at: Option<i64>,
    /// How many pages it has, by status.
    pub counts: Vec<(String, i64)>,
    /// Its latest run (the active one while there is one).
    pub last_run: Option<RunItem>,
}

impl SourceItem {
    /// A crawled website (synced, with a schedule).
    pub fn is_website(&self) -> bool {
        self.kind == "website"
    }

    /// A run is queued or running.
    pub fn running(&self) -> bool {
        self.last_run.as_ref().is_some_and(RunItem::active)
    }

    /// The page counts as one line: `12 indexed · 3 skipped`.
    pub fn counts_line(&self) -> String {
        if self.counts.is_empty() {
            return "no pages yet".into();
        }
        self.counts.iter().map(|(status, n)| format!("{n} {status}")).collect::<Vec<_>>().join(" · ")
    }
}

/// One run of a source: a crawl, or an upload of files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunItem {
    pub id: String,
    pub source_id: String,
    /// `queued`, `running`, `done`, `failed` or `cancelled`.
    pub state: String,
    /// Why it failed or was cancelled.
    pub reason: Option<String>,
    /// The page being fetched.
    pub current_url: Option<String>,
    pub found: i64,
    pub fetched: i64,
    pub indexed: i64,
    pub unchanged: i64,
    pub skipped: i64,
    pub failed: i64,
    pub retired: i64,
    pub started_at: i64,
    pub finished_at: Option<i64>,
}

impl RunItem {
    /// Still to end (queued or running).
    pub fn active(&self) -> bool {
        self.state == "queued" || self.state == "running"
    }

    /// The pages the run is through with, whatever became of them.
    pub fn settled(&self) -> i64 {
        self.indexed + self.unchanged + self.skipped + self.failed + self.retired
    }

    /// The counts as one line.
    pub fn counts_line(&self) -> String {
        format!(
            "{} found · {} fetched · {} indexed · {} unchanged · {} skipped · {} failed · {} retired",
            self.found, self.fetched, self.indexed, self.unchanged, self.skipped, self.failed, self.retired
        )
    }

    /// How long it ran (until `now` while it runs): `1 min 05 s`.
    pub fn elapsed(&self, now: i64) -> String {
        let secs = (self.finished_at.unwrap_or(now) - self.started_at).max(0) / 1000;
        if secs < 60 { format!("{secs} s") } else { format!("{} min {:02} s", secs / 60, secs % 60) }
    }
}

/// A website source as the owner types it; the patterns one per line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebsiteForm {
    pub name: String,
    /// A page, or a sitemap (`….xml`).
    pub start_url: String,
    pub path_prefix: String,
    pub include: String,
    pub exclude: String,
    /// A whole number (0 or empty: the default).
    pub page_limit: String,
    pub schedule: String,
}

impl Default for WebsiteForm {
    fn default() -> Self {
        WebsiteForm {
            name: String::new(),
            start_url: String::new(),
            path_prefix: String::new(),
            include: String::new(),
            exclude: String::new(),
            page_limit: "0".into(),
            schedule: "off".into(),
        }
    }
}

impl From<&SourceItem> for WebsiteForm {
    /// The form as the source is now, to edit it.
    fn from(s: &SourceItem) -> Self {
        WebsiteForm {
            name: s.name.clone(),
            start_url: s.start_url.clone(),
            path_prefix: s.path_prefix.clone(),
            include: s.include.join("\n"),
            exclude: s.exclude.join("\n"),
            page_limit: s.page_limit.to_string(),
            schedule: s.schedule.clone(),
        }
    }
}

/// One page (or file, or snippet) of a source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageItem {
    pub id: String,
    pub url: String,
    pub title: Option<String>,
    /// `queued`, `indexed`, `skipped`, `failed`, `gone` or `excluded`.
    pub status: String,
    pub reason: Option<String>,
    pub lang: Option<String>,
    pub fetched_at: Option<i64>,
    /// It has passages in the index.
    pub indexed: bool,
}

impl PageItem {
    /// A URL the browser can open (not a file name or a snippet's key).
    pub fn is_link(&self) -> bool {
        self.url.starts_with("http://") || self.url.starts_with("https://")
    }
}

/// A passage as the agent sees it, with where its citation points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PassageItem {
    pub text: String,
    pub url: Option<String>,
}

/// What became of one uploaded file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileOutcome {
    pub name: String,
    pub title: Option<String>,
    pub passages: usize,
    /// Why it was refused (naming the file).
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_count_and_time_themselves() {
        let run = RunItem {
            state: "running".into(),
            found: 10,
            indexed: 3,
            skipped: 1,
            retired: 1,
            started_at: 1_000,
            ..Default::default()
        };
        assert!(run.active());
        assert_eq!(run.settled(), 5);
        assert_eq!(run.elapsed(66_000), "1 min 05 s");
        assert_eq!(RunItem { finished_at: Some(4_000), ..run }.elapsed(99_000), "3 s");
    }

    #[test]
    fn a_website_fills_its_edit_form() {
        let source = SourceItem {
            kind: "website".into(),
            name: "Docs".into(),
            start_url: "https://example.com/".into(),
            include: vec!["/help/*".into(), "/faq*".into()],
            page_limit: 300,
            schedule: "weekly".into(),
            ..Default::default()
        };
        let form = WebsiteForm::from(&source);
        assert_eq!(form.include, "/help/*\n/faq*");
        assert_eq!((form.exclude.as_str(), form.page_limit.as_str(), form.schedule.as_str()), ("", "300", "weekly"));
    }
}
