-- The visitor's language and the owner's look (issue 15). `language`: the panel's language,
-- `auto` (the visitor's browser languages decide), `en`, `zh-Hans` or `zh-Hant`. `look`: the
-- look beyond colour and side as one JSON object — text colour on the colour, colour scheme,
-- launcher icon and label, panel width and height, input placeholder, starter questions;
-- '{}' means every default (the look agents had before).
ALTER TABLE agents ADD COLUMN language TEXT NOT NULL DEFAULT 'auto';
ALTER TABLE agents ADD COLUMN look TEXT NOT NULL DEFAULT '{}';
