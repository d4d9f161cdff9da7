-- The assessment facts `collect_assessment_info` gathered in a conversation (one JSON object,
-- later calls adding to and correcting earlier ones), and a copy on each assessment order made
-- in it, so the order shows whom it assesses even if the conversation goes on.
ALTER TABLE conversations ADD COLUMN assessment TEXT;
ALTER TABLE orders ADD COLUMN facts TEXT;
