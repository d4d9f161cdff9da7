//! A tool context on a real (temporary SQLite) database, for the tools' unit tests.

use std::sync::Arc;

use super::ToolContext;
use crate::engine::Services;
use crate::engine::clock::ManualClock;
use crate::engine::knowledge::Knowledge;
use crate::engine::payments::{PayLinks, Payments};
use crate::store::knowledge::{self as kstore, NewArticle};
use crate::store::{self, visitors};

pub struct TestCtx {
    pub ctx: ToolContext,
    pub clock: Arc<ManualClock>,
    _dir: tempfile::TempDir,
}

/// A context for a fresh agent, visitor and conversation.
pub async fn context() -> TestCtx {
    let (db, agent, dir) = store::testing::db_with_agent().await;
    let clock = ManualClock::new();
    let visitor =
        visitors::create(&db, &agent.id, &visitors::new_token(), None, &Default::default(), 0).await.expect("visitor");
    sqlx::query(
        "INSERT INTO conversations (id, agent_id, visitor_id, status, lead_submitted, created_at, updated_at) \
         VALUES ('conv-1', $1, $2, 'bot', 0, 0, 0)",
    )
    .bind(&agent.id)
    .bind(&visitor.id)
    .execute(db.writer())
    .await
    .expect("conversation");
    let services = Services {
        knowledge: Knowledge::new(db.clone(), None),
        payments: Payments::sandbox(PayLinks::new("http://parley.test", b"link-key"), None),
        public_url: "http://parley.test".into(),
    };
    let ctx = ToolContext {
        db,
        agent: Arc::new(agent),
        conversation_id: "conv-1".into(),
        visitor_id: visitor.id,
        message_id: "msg-1".into(),
        clock: clock.clone(),
        http: reqwest::Client::new(),
        services: Arc::new(services),
    };
    TestCtx { ctx, clock, _dir: dir }
}

impl TestCtx {
    /// Adds articles `(title, category, kind, body)` to a knowledge base of the agent.
    pub async fn knowledge(&self, articles: &[(&str, &str, &str, &str)]) {
        let base = kstore::BaseFields { name: "Test", ..Default::default() };
        self.knowledge_in(&base, articles).await;
    }

    /// Adds articles `(title, category, kind, body)` to a new knowledge base `base` of the agent.
    pub async fn knowledge_in(&self, base: &kstore::BaseFields<'_>, articles: &[(&str, &str, &str, &str)]) {
        let kb = kstore::create_base(&self.ctx.db, &self.ctx.agent.id, base, 0).await.expect("kb");
        let articles: Vec<NewArticle> = articles
            .iter()
            .map(|(title, category, kind, body)| NewArticle {
                title: (*title).into(),
                category: Some((*category).into()),
                kind: (*kind).into(),
                body: (*body).into(),
                source_url: Some(format!("https://www.immd.gov.hk/{}", category.to_lowercase())),
            })
            .collect();
        self.ctx.services.knowledge.add_articles(&kb.id, &articles, 0).await.expect("articles");
    }
}
