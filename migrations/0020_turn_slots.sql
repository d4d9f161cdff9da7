-- Replicas (issue 14): the process that may number a conversation's events now — the one running
-- its turn, or writing an operator's reply or a status change outside a turn. Taken with one
-- conditional UPDATE (free, held by this process, or held by a process whose lease expired) and
-- given back in the stream writer's transaction after the events it numbered, so whoever takes it
-- next finds every earlier event stored. `slot_token` tells one holding from the next.
ALTER TABLE conversations ADD COLUMN slot_process TEXT;
ALTER TABLE conversations ADD COLUMN slot_token TEXT;
