-- Images parked before they are sent (issue 41): the address they came from (an IPv6 address by
-- its /64), so that parked bytes can be capped per address and overall.
ALTER TABLE attachments ADD COLUMN client_ip TEXT;
CREATE INDEX attachments_parked ON attachments (client_ip) WHERE message_id IS NULL;
