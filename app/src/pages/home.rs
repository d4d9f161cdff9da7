//! `/`: what this server is and where to look.

use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn HomePage() -> impl IntoView {
    view! {
        <Title text="Parley" />
        <main class="home">
            <h1>"Parley"</h1>
            <p>"An embeddable AI chat widget: streaming answers, tools with rich blocks, and people who can take over."</p>
            <h2>"Embed it"</h2>
            <pre><code>"<script src=\"http://127.0.0.1:3000/widget.js\" data-agent=\"demo-help\" async></script>"</code></pre>
            <p>
                "The demo host page (started by " <code>"./run.sh"</code> ") embeds it from another origin: "
                <a href="http://127.0.0.1:3001/">"http://127.0.0.1:3001/"</a>
            </p>
            <p>"Try the panel on its own: " <a href="/embed/demo-help">"help center"</a> " · "
                <a href="/embed/demo-immigration">"immigration consulting"</a></p>
        </main>
    }
}
