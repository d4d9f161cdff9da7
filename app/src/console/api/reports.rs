//! Reports (administrators only; issue 45, part 1): the figures of a period compared with the
//! one before, and the choices of the page's filters. The same report is exported as CSV and
//! JSON at `/admin/reports.csv` and `/admin/reports.json` (`server/src/routes/exports.rs`).

use leptos::prelude::*;
use leptos::server_fn::codec::Json;
// `wire::Report`: the server function below is itself called `Report` (its generated type).
use parley_widget::protocol::report::{self as wire, ReportQuery};

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
// `Choices`: the server function `report_options` is itself the type `ReportOptions`.
use crate::console::types::ReportOptions as Choices;

/// The report `query` asks for; a wrong field comes back as that field's error.
#[server(input = Json)]
pub async fn report(query: ReportQuery) -> Result<wire::Report, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    Ok(state.engine.report(&query).await?)
}

/// Agents, teams, operators and each agent's published versions, for the filters.
#[server]
pub async fn report_options() -> Result<Choices, ConsoleError> {
    use parley_engine::store::{agents, teams, users};
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let all = agents::list(db).await?;
    let mut versions = Vec::with_capacity(all.len());
    for a in &all {
        let mut numbers: Vec<i64> = agents::versions::list(db, &a.id).await?.into_iter().map(|v| v.version).collect();
        numbers.sort_unstable_by(|a, b| b.cmp(a));
        versions.push((a.id.clone(), numbers));
    }
    Ok(Choices {
        agents: all.into_iter().map(|a| (a.id, a.name)).collect(),
        teams: teams::list(db).await?.into_iter().map(|t| (t.id, t.name)).collect(),
        operators: users::list(db).await?.into_iter().map(|u| (u.id, u.name)).collect(),
        versions,
    })
}
