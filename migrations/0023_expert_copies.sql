-- A coordinator's own copy of an expert (issue 18: expert teams per coordinator). `agent_id` is
-- the coordinator that has it and `based_on` the shared expert it stands in for there (its tool
-- keeps that expert's name, `invoke_<based_on>`, so the coordinator's prompt and tool choice
-- stay valid). Both NULL: an expert of the product, shared by every coordinator.
ALTER TABLE experts ADD COLUMN agent_id TEXT;
ALTER TABLE experts ADD COLUMN based_on TEXT;
