-- Search across transcripts, notes and leads (issue 43, part 4): our own tokenizer (Chinese
-- bigrams, English stems) turns each text into terms in Rust; the database keeps the postings and
-- finds the documents holding every term of a query (plain SQL, the same on SQLite and PostgreSQL).
-- `search_docs`: one per indexed row (`id`: the message's, note's or lead's id, or `user:` and the
-- conversation's for the identified user of its visitor; `kind`: `message`, `note`, `lead`, `user`); `body`: the text as indexed (the snippet's source); `version`: the source row's
-- `updated_at` when indexed. Deleting a conversation deletes its documents and their terms.
CREATE TABLE search_docs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    body TEXT NOT NULL,
    version BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX search_docs_by_conversation ON search_docs (conversation_id, created_at);

-- Postings: which documents hold a term (each term once per document).
CREATE TABLE search_terms (
    term TEXT NOT NULL,
    doc_id TEXT NOT NULL REFERENCES search_docs (id) ON DELETE CASCADE,
    PRIMARY KEY (term, doc_id)
);
CREATE INDEX search_terms_by_doc ON search_terms (doc_id);

-- How far the indexer read each source (`messages`, `notes`, `leads`, `users`): the last row read, by
-- `(at, id)`; it reads again from a little before (rows committed late), skipping what it has.
CREATE TABLE search_cursors (
    source TEXT PRIMARY KEY,
    at BIGINT NOT NULL,
    id TEXT NOT NULL
);

-- The indexer reads messages, leads and conversations (for their users) in the order they last changed.
CREATE INDEX messages_by_updated ON messages (updated_at, id);
CREATE INDEX conversations_by_updated ON conversations (updated_at, id);
CREATE INDEX leads_by_updated ON leads (updated_at, id);
CREATE INDEX conversation_notes_by_created ON conversation_notes (created_at, id);
