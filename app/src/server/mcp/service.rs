//! The `rmcp` server handler and its three transports: Streamable HTTP (stateless, JSON responses;
//! the HTTP layer authenticates every request and hands over the [`McpAccess`]), HTTP+SSE (the
//! 2024-11-05 transport: one server per event stream, fed by the messages the client posts) and
//! stdio. An SSE or stdio session keeps the token it was opened with and checks it again at every
//! request, so a revoked token stops working at once.
//!
//! Tool calls are logged and counted in the usage ledger like the widget's model calls: provider
//! `mcp`, model = the tool's name, outcome `ok` or `error`, no tokens, the call's latency.

use std::sync::Arc;
use std::time::Instant;

use axum::http::request::Parts;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;

use super::catalogue::{self, Target};
use super::{AuthError, McpAccess, Overrides, authenticate, builtin, format, trending};
use parley_engine::engine::Engine;
use parley_engine::engine::tools::{ToolContext, ToolError};
use parley_engine::store::{new_id, script, usage};

/// Largest MCP request body, in bytes.
const MAX_BODY_BYTES: usize = 256 * 1024;

const INSTRUCTIONS: &str = "Tools of a Parley agent: its knowledge bases, news and the questions its visitors \
    ask. In the `base` feature set call ListAvailableKnowledgeBases before SearchKnowledgeBase; in `detail` each \
    knowledge base has its own SearchKnowledgeBase-<id> tool.";

/// The MCP server of one process; cheap to clone (one per HTTP request).
#[derive(Clone)]
pub struct ParleyMcp {
    engine: Engine,
    http: reqwest::Client,
    /// stdio and SSE: the token (and query settings) the session was opened with. Streamable
    /// HTTP: `None` (the route authenticates every request).
    session: Option<Arc<(String, Overrides)>>,
}

impl ParleyMcp {
    pub fn new(engine: Engine, token: Option<String>) -> Self {
        Self::with_session(engine, token.map(|t| (t, Overrides::default())))
    }

    fn with_session(engine: Engine, session: Option<(String, Overrides)>) -> Self {
        ParleyMcp { engine, http: reqwest::Client::new(), session: session.map(Arc::new) }
    }

    /// Who is calling: from the HTTP request, or the session's token (checked again).
    async fn access(&self, ctx: &RequestContext<RoleServer>) -> Result<Arc<McpAccess>, McpError> {
        if let Some(session) = &self.session {
            let (token, overrides) = session.as_ref();
            return authenticate(&self.engine, token, overrides).await.map(Arc::new).map_err(refused);
        }
        ctx.extensions
            .get::<Parts>()
            .and_then(|parts| parts.extensions.get::<Arc<McpAccess>>())
            .cloned()
            .ok_or_else(|| refused(AuthError::Missing))
    }

    /// A context for registry tools. MCP calls have no visitor, conversation or message: the tools
    /// that need them are not offered (see [`catalogue::VISITOR_BOUND`]).
    fn tool_context(&self, access: &McpAccess) -> ToolContext {
        ToolContext {
            db: self.engine.db().clone(),
            agent: access.agent.clone(),
            conversation_id: String::new(),
            visitor_id: String::new(),
            message_id: format!("mcp-{}", new_id()),
            clock: self.engine.clock().clone(),
            http: self.http.clone(),
            services: self.engine.services().clone(),
        }
    }

    async fn run(&self, ctx: &ToolContext, target: &Target, args: &Value) -> Result<Value, ToolError> {
        match target {
            Target::ListBases => {
                builtin::validate(&builtin::list_bases_schema(), args)?;
                builtin::list_bases(ctx).await
            }
            Target::SearchAny => {
                builtin::validate(&builtin::search_schema(true), args)?;
                let base = builtin::find_base(ctx, args["knowledge_base_id"].as_str().unwrap_or_default()).await?;
                builtin::search(ctx, &base, args).await
            }
            Target::SearchOne(base) => {
                builtin::validate(&builtin::search_schema(false), args)?;
                builtin::search(ctx, base, args).await
            }
            Target::News => {
                builtin::validate(&builtin::news_schema(), args)?;
                builtin::news_for_date(ctx, args).await
            }
            Target::Trending => {
                builtin::validate(&builtin::trending_schema(), args)?;
                trending::trending(&ctx.db, &ctx.agent.id, &ctx.agent.domain, ctx.clock.now_ms()).await.map_err(|e| {
                    tracing::warn!(error = %e, "MCP trending questions");
                    ToolError::Failed("could not read the questions; try again later".into())
                })
            }
            Target::Registry(name) => {
                let tools = self.engine.registry().for_agent(&ctx.agent);
                tools.call(ctx, name, &args.to_string()).await.map(|out| out.result)
            }
        }
    }

    /// Logs a call and writes its usage row.
    async fn record(&self, access: &McpAccess, tool: &str, outcome: &Result<Value, ToolError>, started: Instant) {
        let latency_ms = started.elapsed().as_millis() as u64;
        let (agent, token) = (&access.agent.public_key, &access.token.id);
        match outcome {
            Ok(_) => tracing::info!(%agent, %token, tool, latency_ms, "MCP tool call"),
            Err(e) => tracing::info!(%agent, %token, tool, latency_ms, error = %e, "MCP tool call failed"),
        }
        let row = usage::UsageRecord {
            agent_id: access.agent.id.clone(),
            conversation_id: None,
            message_id: None,
            provider: "mcp".into(),
            model: tool.to_owned(),
            outcome: if outcome.is_ok() { "ok" } else { "error" }.into(),
            latency_ms,
            created_at: self.engine.now_ms(),
            ..Default::default()
        };
        let db = self.engine.db();
        let written = async {
            let mut conn = db.writer().acquire().await?;
            script::run(&mut conn, db.kind(), &[usage::insert_stmt(&row)]).await
        };
        if let Err(e) = written.await {
            tracing::warn!(error = %e, "could not record the usage of an MCP tool call");
        }
    }
}

fn refused(e: AuthError) -> McpError {
    match e {
        AuthError::Db(e) => {
            tracing::error!(error = %e, "database error while checking an MCP token");
            McpError::internal_error("the server cannot check tokens right now", None)
        }
        other => McpError::invalid_request(other.to_string(), None),
    }
}

fn internal(e: impl std::fmt::Display) -> McpError {
    tracing::error!(error = %e, "MCP request failed");
    McpError::internal_error("something went wrong on the server", None)
}

impl ServerHandler for ParleyMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("parley", env!("CARGO_PKG_VERSION"))
                    .with_title("Parley")
                    .with_description("The tools of a Parley chat agent"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let access = self.access(&context).await?;
        let tools = catalogue::build(&self.engine, &access).await.map_err(internal)?;
        tracing::debug!(agent = %access.agent.public_key, tools = tools.len(), "MCP tools/list");
        Ok(ListToolsResult::with_all_items(tools.into_iter().map(|t| t.tool).collect()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let started = Instant::now();
        let access = self.access(&context).await?;
        let tools = catalogue::build(&self.engine, &access).await.map_err(internal)?;
        let name = request.name.to_string();
        let name = name.as_str();
        let Some(tool) = tools.into_iter().find(|t| t.tool.name == name) else {
            tracing::info!(agent = %access.agent.public_key, tool = name, "MCP call of an unknown tool");
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`; call tools/list for the tools"),
                None,
            ));
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        let ctx = self.tool_context(&access);
        let timeout = self.engine.settings().tool_timeout;
        let outcome =
            tokio::time::timeout(timeout, self.run(&ctx, &tool.target, &args)).await.unwrap_or(Err(ToolError::Timeout));
        self.record(&access, name, &outcome, started).await;
        let result = match &outcome {
            Ok(value) => CallToolResult::success(vec![ContentBlock::text(format::result(
                access.output,
                tool.target.shape(),
                value,
            ))]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format::error(access.output, e))]),
        };
        Ok(result.into())
    }
}

/// The Streamable HTTP service for `/mcp`. Stateless (no sessions: any replica can answer any
/// request) with plain JSON answers. The `Host` check against DNS rebinding is off: every request
/// must carry a token, which a rebinding page does not have, and the public host name is the
/// deployment's to choose.
pub fn http_service(engine: Engine) -> StreamableHttpService<ParleyMcp, NeverSessionManager> {
    let server = ParleyMcp::new(engine, None);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .disable_allowed_hosts()
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    StreamableHttpService::new(move || Ok(server.clone()), Arc::new(NeverSessionManager::default()), config)
}

/// Serves one session of the HTTP+SSE transport (protocol 2024-11-05) in the background: the
/// client's messages (posted to the message endpoint) arrive on `incoming`, the server's go out on
/// `outgoing` (the event stream). It ends when the client goes (`incoming` closes), the stream is
/// dropped, or `stop` is cancelled. `token` was checked by the route; it is checked again at every
/// request.
pub fn serve_sse_session(
    engine: Engine,
    token: String,
    overrides: Overrides,
    incoming: futures::channel::mpsc::Receiver<rmcp::model::ClientJsonRpcMessage>,
    outgoing: futures::channel::mpsc::Sender<rmcp::model::ServerJsonRpcMessage>,
    stop: tokio_util::sync::CancellationToken,
) {
    use rmcp::ServiceExt;
    let server = ParleyMcp::with_session(engine, Some((token, overrides)));
    tokio::spawn(async move {
        match server.serve_with_ct((outgoing, incoming), stop).await {
            Ok(running) => {
                if let Err(e) = running.waiting().await {
                    tracing::debug!(error = %e, "an MCP SSE session ended");
                }
            }
            Err(e) => tracing::info!(error = %e, "an MCP SSE session ended before its handshake"),
        }
    });
}

/// Serves MCP on stdin/stdout until the client closes it. Fails at once on a bad token.
pub async fn serve_stdio(engine: Engine, token: String) -> Result<(), String> {
    let access = authenticate(&engine, &token, &Overrides::default()).await.map_err(|e| e.to_string())?;
    tracing::info!(agent = %access.agent.public_key, feature_set = access.feature_set.as_str(), "serving MCP on stdio");
    // A server process refreshes the knowledge index in its background jobs; this one does it here.
    let knowledge = engine.services().clone();
    let refresh = tokio::spawn(async move {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(10)).await;
            if let Err(e) = knowledge.knowledge.refresh_if_changed().await {
                tracing::warn!(error = %e, "refreshing the knowledge index");
            }
        }
    });
    let running = rmcp::serve_server(ParleyMcp::new(engine, Some(token)), rmcp::transport::stdio())
        .await
        .map_err(|e| format!("MCP handshake failed: {e}"))?;
    let stopped = running.waiting().await;
    refresh.abort();
    stopped.map_err(|e| format!("the MCP server stopped: {e}"))?;
    Ok(())
}
