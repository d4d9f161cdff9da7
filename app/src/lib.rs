//! The Parley Leptos application, shared by server-side rendering and hydration: routes, the
//! home page and the console pages, and their server functions. Server-only code lives in
//! [`server`]. The embed page (the widget's iframe) is not here: it has its own, much smaller
//! browser bundle (`parley-embed`), served by the server crate.

#![recursion_limit = "256"]

pub mod console;
pub mod pages;

#[cfg(feature = "ssr")]
pub mod serve;
#[cfg(feature = "ssr")]
pub mod server;

use leptos::prelude::*;
use leptos_meta::{MetaTags, Stylesheet, provide_meta_context};
use leptos_router::components::{ParentRoute, Route, Router, Routes};
use leptos_router::path;

use pages::home::HomePage;

/// The HTML document around the app.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <link rel="icon" href="data:," />
                <AutoReload options=options.clone() />
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// The application's routes.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    console::render_once::provide();
    view! {
        <Stylesheet id="parley" href="/pkg/parley.css" />
        <Router>
            <Routes fallback=|| view! { <p class="not-found">"Page not found."</p> }>
                <Route path=path!("/") view=HomePage />
                <Route path=path!("/admin/login") view=console::login::LoginPage />
                <ParentRoute path=path!("/admin") view=console::layout::ConsoleLayout>
                    <Route path=path!("") view=console::dashboard::DashboardPage />
                    <Route path=path!("conversations") view=console::inbox_list::ConversationsPage />
                    <Route path=path!("conversations/:id") view=console::conversations::ConversationPage />
                    <Route path=path!("contacts") view=console::contacts::ContactsPage />
                    <Route path=path!("contacts/:id") view=console::contacts::ContactPage />
                    <Route path=path!("leads") view=console::records::LeadsPage />
                    <Route path=path!("orders") view=console::records::OrdersPage />
                    <Route path=path!("account") view=console::records::AccountPage />
                    <Route path=path!("agents") view=console::agents::AgentsPage />
                    <Route path=path!("agents/new") view=console::agents::AgentEditPage />
                    <Route path=path!("agents/:id") view=console::agents::AgentEditPage />
                    <Route path=path!("agents/:id/embed") view=console::agents::EmbedSnippetPage />
                    <Route path=path!("agents/:id/versions") view=console::versions::AgentVersionsPage />
                    <Route path=path!("agents/:id/tests") view=console::answer_tests::AgentTestsPage />
                    <Route path=path!("agents/:id/tests/:run") view=console::answer_tests::AgentTestRunPage />
                    <Route path=path!("knowledge") view=console::knowledge::KnowledgePage />
                    <Route path=path!("knowledge/:base") view=console::knowledge::KnowledgeBasePage />
                    <Route path=path!("knowledge/:base/new") view=console::knowledge::ArticlePage />
                    <Route path=path!("knowledge/:base/sources") view=console::sources::SourcesPage />
                    <Route path=path!("sources/:id") view=console::source_page::SourcePage />
                    <Route path=path!("articles/:id") view=console::knowledge::ArticlePage />
                    <Route path=path!("tokens") view=console::tokens::TokensPage />
                    <Route path=path!("identity") view=console::identity::IdentityPage />
                    <Route path=path!("audit") view=console::audit::AuditPage />
                    <Route path=path!("reports") view=console::reports::ReportsPage />
                    <Route path=path!("search") view=console::search::SearchPage />
                    <Route path=path!("webhooks") view=console::webhooks::WebhooksPage />
                    <Route path=path!("teams") view=console::inbox_admin::TeamsPage />
                    <Route path=path!("labels") view=console::inbox_admin::LabelsPage />
                    <Route path=path!("unanswered") view=console::answers::UnansweredPage />
                    <Route path=path!("replies") view=console::answers::SavedRepliesPage />
                    <Route path=path!("hours") view=console::hours::HoursPage />
                    <Route path=path!("engage") view=console::engage::EngagePage />
                    <Route path=path!("notifications") view=console::notifications::NotificationsPage />
                    <Route path=path!("models") view=console::models::ModelsPage />
                    <Route path=path!("experts") view=console::experts::ExpertsPage />
                    <Route path=path!("experts/:name") view=console::experts::ExpertEditPage />
                    <Route path=path!("tools") view=console::http_tools::HttpToolsPage />
                    <Route path=path!("tools/:id") view=console::http_tools::HttpToolEditPage />
                </ParentRoute>
            </Routes>
        </Router>
    }
}
