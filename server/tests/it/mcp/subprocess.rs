//! The MCP server from another process: the `parley mcp-stdio` subcommand with the Rust SDK's
//! client over stdio, and the Python SDK (`mcp` from PyPI, `tests/mcp_client.py`) over HTTP.

use super::*;

#[tokio::test]
async fn mcp_stdio_subcommand_serves_the_same_tools() {
    let app = spawn_app().await;
    let (agent, base) = agent_with_content(&app, "mcp-s").await;
    let t = token(&app, &agent, FeatureSet::Detail, OutputFormat::Text).await;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
        .args(["mcp-stdio", "--token", &t])
        .env("DATABASE_URL", &app.database_url)
        .env("PARLEY_DATA_DIR", app.dir.path())
        .env("RUST_LOG", "warn")
        .env_remove("PARLEY_MCP_FEATURE_SET")
        .env_remove("PARLEY_MCP_OUTPUT_FORMAT")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start parley mcp-stdio");
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = ().serve((stdout, stdin)).await.expect("initialize over stdio");
    let listed = tool_names(&client).await;
    let own = format!("SearchKnowledgeBase-{}", &base.id[..8]);
    assert_eq!(listed[0], own);
    assert_sep_986(&listed);
    let found = text(&call(&client, &own, json!({"query": "优才 条件"})).await);
    assert!(found.contains("1. **QMAS — eligibility**") && found.contains("<https://www.immd.gov.hk/qmas>"), "{found}");
    client.cancel().await.unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait()).await.expect("exits").unwrap();
    assert!(status.success());

    let refused = tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
        .args(["mcp-stdio", "--token", "pm_wrong"])
        .env("DATABASE_URL", &app.database_url)
        // The secret key that opens the database's provider keys.
        .env("PARLEY_DATA_DIR", app.dir.path())
        .env("RUST_LOG", "off")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not valid"));
}

/// A client that is not ours: the official Python SDK (`mcp` on PyPI) lists the tools and calls
/// them against the running server, over Streamable HTTP. Skipped, saying so, when the package is
/// not installed (unless `PARLEY_PYTHON_MCP=required`, which `test.sh` sets after installing it).
#[tokio::test]
async fn mcp_python_sdk_client_lists_and_calls_tools() {
    python_client_check("/mcp", "mcp_python_sdk_client_lists_and_calls_tools").await;
}

/// The same client over the HTTP+SSE transport (`/sse/mcp`), as the seed's client configuration
/// (`transportType: "sse"`) connects.
#[tokio::test]
async fn mcp_python_sdk_client_over_the_sse_transport() {
    python_client_check("/sse/mcp", "mcp_python_sdk_client_over_the_sse_transport").await;
}

async fn python_client_check(path: &str, test: &str) {
    let required = std::env::var("PARLEY_PYTHON_MCP").is_ok_and(|v| v == "required");
    let has_sdk =
        std::process::Command::new("python3").args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    if !has_sdk {
        assert!(!required, "PARLEY_PYTHON_MCP=required but `python3 -c 'import mcp'` fails");
        eprintln!("SKIPPED {test}: the Python `mcp` package is not installed (python3 -m pip install mcp)");
        return;
    }
    let app = spawn_app().await;
    let (agent, _) = agent_with_content(&app, "mcp-p").await;
    let t = token(&app, &agent, FeatureSet::Base, OutputFormat::Raw).await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client.py");
    let out = tokio::process::Command::new("python3")
        .args([script, &app.url(&format!("{path}?token={t}")), "优才 条件"])
        .output()
        .await
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "python client failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("a JSON report");
    assert_eq!(report["server"], "parley");
    assert!(report["tools"].as_array().unwrap().contains(&json!("GetTrendingQuestions")));
    assert_eq!(report["search_top_title"], "QMAS — eligibility");
    assert_eq!(report["bad_call_is_error"], true);
}
