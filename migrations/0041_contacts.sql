-- Contacts (issue 43, part 5): a contact is a visitor row that stands for itself (`acts_as` NULL):
-- an anonymous visitor, or an identified user's row. Operators may set a name, an email and a
-- phone number (shown before what the host site or a lead said); the page keeps what the host
-- page last set with `Parley.setContext`; each browser's row keeps coarse facts from its first
-- request. A merged contact's row acts as the contact it was merged into.
ALTER TABLE visitors ADD COLUMN contact_name TEXT;
ALTER TABLE visitors ADD COLUMN contact_email TEXT;
ALTER TABLE visitors ADD COLUMN contact_phone TEXT;
-- When an operator last changed the contact (ms; also set by a merge): the search indexer's cursor.
ALTER TABLE visitors ADD COLUMN contact_at BIGINT;
-- The last `Parley.setContext` object the host page sent with a message (JSON).
ALTER TABLE visitors ADD COLUMN attributes TEXT;
-- From the request that made the row: the User-Agent (at most 300 characters), the first
-- Accept-Language tag, and the country a trusted proxy named (`PARLEY_COUNTRY_HEADER`).
ALTER TABLE visitors ADD COLUMN user_agent TEXT;
ALTER TABLE visitors ADD COLUMN language TEXT;
ALTER TABLE visitors ADD COLUMN country TEXT;
-- Which contact this one was merged into, by whom and when (the row then acts as that contact).
ALTER TABLE visitors ADD COLUMN merged_into TEXT;
ALTER TABLE visitors ADD COLUMN merged_at BIGINT;
CREATE INDEX visitors_by_contact_at ON visitors (contact_at);
CREATE INDEX visitors_by_merged_into ON visitors (merged_into);
CREATE INDEX visitors_by_agent_seen ON visitors (agent_id, last_seen_at);
CREATE INDEX leads_by_visitor ON leads (visitor_id, created_at);
CREATE INDEX orders_by_visitor ON orders (visitor_id, created_at);
