-- Knowledge from the owner's own content (issue 42): a knowledge base's sources (a website, a
-- set of uploaded files, typed question-and-answer snippets), the pages a source holds, and its
-- runs (one crawl or import each).
--
-- `kind`: `website`, `files` or `snippets`. `settings` is JSON: the start URL or sitemap URL and
-- the scope rules of a website (see `store/knowledge/sources.rs`). `schedule`: `off`, `daily`,
-- `weekly`; `next_sync_at` is when a scheduled run is due (NULL: none).
CREATE TABLE knowledge_sources (
    id TEXT PRIMARY KEY,
    knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    settings TEXT NOT NULL DEFAULT '{}',
    schedule TEXT NOT NULL DEFAULT 'off',
    next_sync_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX knowledge_sources_by_base ON knowledge_sources (knowledge_base_id);

-- One run of a source. `state`: `queued`, `running`, `done`, `failed`, `cancelled`. `owner` is
-- the process running it (a `processes` row); a run whose owner's lease expired is taken over
-- and resumes from its pages still `queued`. The counts are what the console's progress shows.
CREATE TABLE source_runs (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES knowledge_sources (id) ON DELETE CASCADE,
    state TEXT NOT NULL,
    owner TEXT,
    reason TEXT,
    current_url TEXT,
    found BIGINT NOT NULL DEFAULT 0,
    fetched BIGINT NOT NULL DEFAULT 0,
    indexed BIGINT NOT NULL DEFAULT 0,
    unchanged BIGINT NOT NULL DEFAULT 0,
    skipped BIGINT NOT NULL DEFAULT 0,
    failed BIGINT NOT NULL DEFAULT 0,
    retired BIGINT NOT NULL DEFAULT 0,
    started_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    finished_at BIGINT
);
CREATE INDEX source_runs_by_source ON source_runs (source_id, started_at);
CREATE INDEX source_runs_by_state ON source_runs (state);

-- A page (or file) of a source, once per URL. `status`: `queued` (to fetch in run `run_id`),
-- `indexed`, `unchanged`, `skipped`, `failed`, `gone` (retired: its passages deleted),
-- `excluded` (by the owner: never fetched again). `reason` says why a page was skipped, failed
-- or retired. `etag`/`last_modified` make a re-sync's requests conditional; `content_hash`
-- finds the same content under two URLs. `article_id` is the article its passages belong to.
CREATE TABLE source_pages (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES knowledge_sources (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    run_id TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    depth BIGINT NOT NULL DEFAULT 0,
    title TEXT,
    lang TEXT,
    etag TEXT,
    last_modified TEXT,
    content_hash TEXT,
    bytes BIGINT,
    article_id TEXT,
    fetched_at BIGINT,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX source_pages_by_url ON source_pages (source_id, url);
CREATE INDEX source_pages_by_run ON source_pages (run_id, status);
CREATE INDEX source_pages_by_hash ON source_pages (source_id, content_hash);

-- Articles made from a source's page (NULL: written by hand). A chunk's `url` is where its
-- citation points: the page with a text fragment that scrolls to the passage.
ALTER TABLE articles ADD COLUMN source_id TEXT;
CREATE INDEX articles_by_source ON articles (source_id);
ALTER TABLE chunks ADD COLUMN url TEXT;
