//! `parley test-agent`: runs an agent's answer tests (issue 45, part 2) in this process, against
//! the published agent or its draft, with a progress bar; prints each case's checks and exits
//! with an error when a case failed (for a deploy script or CI).

use std::time::Duration;

use anyhow::Context;
use parley_engine::engine::answer_tests::{Target, TestError};
use parley_engine::store::agents;
use parley_engine::store::answer_tests as store;
use parley_server::Config;

#[derive(clap::Args)]
pub struct TestAgent {
    /// Public key of the agent.
    #[arg(long)]
    agent: String,
    /// Test the agent's draft instead of the published version.
    #[arg(long)]
    draft: bool,
    /// Print the results as JSON (one object per case) instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn test_agent(config: Config, a: TestAgent) -> anyhow::Result<()> {
    let engine = parley_server::cli_engine(&config).await?;
    let agent = agents::by_public_key(engine.db(), &a.agent)
        .await?
        .with_context(|| format!("no agent with key {}", a.agent))?;
    engine.register_process().await.context("taking this process's lease")?;
    engine.spawn_lease_keeper();
    let target = if a.draft { Target::Draft } else { Target::Published };
    let run_id = match engine.start_answer_tests(&agent.id, target, None).await {
        Ok(id) => id,
        Err(TestError::Db(e)) => return Err(e.into()),
        Err(e) => {
            engine.release_process().await;
            anyhow::bail!("{e}")
        }
    };
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cases  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let run = loop {
        let run = store::run(engine.db(), &agent.id, &run_id).await?.context("the run is gone")?;
        bar.set_length(run.total as u64);
        bar.set_position(run.done as u64);
        bar.set_message(format!("{} passed", run.passed));
        if !run.is_active() {
            break run;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    bar.finish_and_clear();
    engine.release_process().await;
    let results = store::results(engine.db(), &run_id).await?;
    for r in &results {
        if a.json {
            let checks: Vec<_> = r
                .checks
                .iter()
                .map(|c| serde_json::json!({"check": c.check.describe(), "passed": c.passed, "detail": c.detail}))
                .collect();
            let tools: Vec<&str> = r.tool_calls.iter().map(|c| c.name.as_str()).collect();
            let line = serde_json::json!({
                "case": r.name, "passed": r.passed, "answer": r.answer, "status": r.status, "tools": tools,
                "sources": r.sources, "cost_usd": r.cost_usd, "ms": r.duration_ms, "checks": checks, "error": r.error,
            });
            println!("{line}");
            continue;
        }
        println!("{} {}  (${:.6}, {} ms)", if r.passed { "PASS" } else { "FAIL" }, r.name, r.cost_usd, r.duration_ms);
        if let Some(error) = &r.error {
            println!("    {error}");
        }
        for c in &r.checks {
            println!("    {} {} — {}", if c.passed { "✓" } else { "✗" }, c.check.describe(), c.detail);
        }
    }
    let version = match target {
        Target::Published => format!("version {}", run.version),
        Target::Draft => format!("the draft (from version {})", run.version),
    };
    if !a.json {
        println!(
            "{}: {} of {} passed on {version}; {}; ${:.6}",
            agent.name, run.passed, run.total, run.status, run.cost_usd
        );
    }
    if run.status != "done" {
        anyhow::bail!("the run ended {}{}", run.status, run.error.map(|e| format!(": {e}")).unwrap_or_default());
    }
    if run.passed < run.total {
        anyhow::bail!("{} of {} cases failed", run.total - run.passed, run.total);
    }
    Ok(())
}
