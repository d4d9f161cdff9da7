-- Issue 18: the knowledge tools work for any agent. A base's `topics` are words and phrases
-- (comma or line separated) that mark a question as belonging to its field: the off-topic check
-- counts a question that names one as on-topic, and the tools' descriptions for the model are
-- written from the bases' names, descriptions and categories. The demo immigration base gets the
-- terms the check used to have built in, so it behaves as before.
ALTER TABLE knowledge_bases ADD COLUMN topics TEXT NOT NULL DEFAULT '';
UPDATE knowledge_bases SET topics = '移民, 签证, 簽證, 香港, 入境, 居留, 永居, 永久居民, 身份, 优才, 優才, 专才, 專才, 高才, 投资移民, 科技人才, 留学, 毕业生, 工作签, 续签, 受养人, 家属, QMAS, GEP, IANG, TTPS, CIES, TechTAS, visa, immigration, Hong Kong, residency, permanent resident, work permit, talent'
WHERE name = '香港移民知识库';
