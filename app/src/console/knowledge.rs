//! `/admin/knowledge` (bases), `/admin/knowledge/:base` (articles: search, import; its sources
//! are [`super::sources`]) and
//! `/admin/articles/:id` / `/admin/knowledge/:base/new` (the editor with a preview).

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::{use_navigate, use_params_map, use_query_map};

use super::api::knowledge::{
    article, articles, create_knowledge_base, delete_article, embedding_status, knowledge_base, knowledge_bases,
    save_article, update_knowledge_base,
};
use super::fields::{ErrorLine, FieldMessage};
use super::layout::{confirm, go_to};
use super::lists::{AgentChoice, Pager, page_param, query, when};
use super::loaded::Loaded;
use super::types::{ArticleForm, FieldError};

/// `/admin/knowledge`: the knowledge bases, and a form for a new one.
#[component]
pub fn KnowledgePage() -> impl IntoView {
    let version = RwSignal::new(0u64);
    let bases = Resource::new(move || version.get(), |_| knowledge_bases());
    let agent = RwSignal::new(String::new());
    let name = RwSignal::new(String::new());
    let description = RwSignal::new(String::new());
    let topics = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        leptos::task::spawn_local(async move {
            let made = create_knowledge_base(
                agent.get_untracked(),
                name.get_untracked(),
                description.get_untracked(),
                topics.get_untracked(),
            )
            .await;
            match made {
                Ok(_) => {
                    name.set(String::new());
                    description.set(String::new());
                    topics.set(String::new());
                    error.set(None);
                    version.update(|v| *v += 1);
                }
                Err(e) => error.set(Some(e.to_string())),
            }
        });
    };
    view! {
        <h1>"Knowledge"</h1>
        <Embeddings />
        <Loaded resource=bases let:list>
            <table class="c-table" id="bases">
                <thead><tr><th>"Knowledge base"</th><th>"Agent"</th><th>"Articles"</th><th>"Description"</th></tr></thead>
                <tbody>{list.into_iter().map(|b| view! {
                    <tr>
                        <td><A href=format!("/admin/knowledge/{}", b.id)>{b.name}</A></td>
                        <td>{b.agent_name}</td>
                        <td>{b.articles}</td>
                        <td class="c-clip">{b.description}</td>
                    </tr>
                }).collect_view()}</tbody>
            </table>
        </Loaded>
        <form class="c-card c-form" on:submit=create>
            <h2>"New knowledge base"</h2>
            <AgentChoice id="kb-agent" agent />
            <label for="kb-name">"Name"</label>
            <input id="kb-name" required prop:value=name on:input=move |ev| name.set(event_target_value(&ev)) />
            <label for="kb-desc">"Description"</label>
            <input id="kb-desc" prop:value=description on:input=move |ev| description.set(event_target_value(&ev)) />
            <TopicsField id="kb-topics" topics />
            <ErrorLine error />
            <button type="submit" class="c-primary">"Create"</button>
        </form>
    }
}

/// The topics input, with what they are for.
#[component]
fn TopicsField(id: &'static str, topics: RwSignal<String>) -> impl IntoView {
    let hint = format!("{id}-hint");
    view! {
        <label for=id>"Topics"</label>
        <input id=id aria-describedby=hint.clone() prop:value=topics on:input=move |ev| topics.set(event_target_value(&ev)) />
        <p class="c-hint" id=hint>
            "Words and phrases, comma separated, that make a question on-topic (for example: order, refund, delivery). \
             With the base's name, description and article categories they tell the agent's knowledge tools what it covers."
        </p>
    }
}

/// The name, description and topics of a base, editable.
#[component]
fn AboutBase(base: Signal<String>) -> impl IntoView {
    let data = Resource::new(move || base.get(), knowledge_base);
    view! {
        <Loaded resource=data let:b>
            <AboutBaseForm id=b.id name=b.name description=b.description topics=b.topics />
        </Loaded>
    }
}

#[component]
fn AboutBaseForm(id: String, name: String, description: String, topics: String) -> impl IntoView {
    let name = RwSignal::new(name);
    let description = RwSignal::new(description);
    let topics = RwSignal::new(topics);
    let error = RwSignal::new(None::<String>);
    let notice = RwSignal::new(None::<&'static str>);
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let id = id.clone();
        leptos::task::spawn_local(async move {
            let saved =
                update_knowledge_base(id, name.get_untracked(), description.get_untracked(), topics.get_untracked())
                    .await;
            match saved {
                Ok(()) => {
                    error.set(None);
                    notice.set(Some("Saved."));
                }
                Err(e) => {
                    notice.set(None);
                    error.set(Some(e.to_string()));
                }
            }
        });
    };
    view! {
        <form class="c-card c-form" on:submit=save>
            <h2>"About this knowledge base"</h2>
            <label for="kb-edit-name">"Name"</label>
            <input id="kb-edit-name" required prop:value=name on:input=move |ev| name.set(event_target_value(&ev)) />
            <label for="kb-edit-desc">"Description"</label>
            <input id="kb-edit-desc" prop:value=description on:input=move |ev| description.set(event_target_value(&ev)) />
            <TopicsField id="kb-edit-topics" topics />
            <ErrorLine error />
            <p role="status">{move || notice.get()}</p>
            <button type="submit" class="c-primary">"Save"</button>
        </form>
    }
}

/// `/admin/knowledge/:base`: the articles of a base: search, import, new.
#[component]
pub fn KnowledgeBasePage() -> impl IntoView {
    let params = use_params_map();
    let q = use_query_map();
    let base = move || params.read().get("base").unwrap_or_default();
    let search = move || q.read().get("q").unwrap_or_default();
    let page = move || page_param(&q.read());
    let version = RwSignal::new(0u64);
    let list = Resource::new(move || (base(), search(), page(), version.get()), |(b, s, p, _)| articles(b, s, p));
    let typed = RwSignal::new(search());
    let navigate = use_navigate();
    let find = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        navigate(
            &format!("/admin/knowledge/{}{}", base(), query(&[("q", &typed.get_untracked())])),
            Default::default(),
        );
    };
    view! {
        <p><A href="/admin/knowledge">"← Knowledge"</A></p>
        <h1>"Articles"</h1>
        <form class="c-filters" role="search" on:submit=find>
            <label for="k-search">"Search"</label>
            <input id="k-search" type="search" prop:value=typed on:input=move |ev| typed.set(event_target_value(&ev)) />
            <button type="submit">"Search"</button>
            <A href=move || format!("/admin/knowledge/{}/new", base()) attr:class="c-button">"New article"</A>
            <A href=move || format!("/admin/knowledge/{}/sources", base()) attr:class="c-button">"Sources: websites, files, Q&A"</A>
        </form>
        <Import base=Signal::derive(base) version />
        <AboutBase base=Signal::derive(base) />
        <Loaded resource=list let:p>
            <table class="c-table" id="articles">
                <thead><tr><th>"Title"</th><th>"Category"</th><th>"Kind"</th><th>"Updated (UTC)"</th></tr></thead>
                <tbody>{p.items.into_iter().map(|a| view! {
                    <tr>
                        <td><A href=format!("/admin/articles/{}", a.id)>{a.title}</A></td>
                        <td>{a.category.unwrap_or_default()}</td>
                        <td>{a.kind}</td>
                        <td>{when(a.updated_at)}</td>
                    </tr>
                }).collect_view()}</tbody>
            </table>
            <Pager base=format!("/admin/knowledge/{}{}", base(), query(&[("q", &search())])) page=p.page per_page=p.per_page total=p.total />
        </Loaded>
    }
}

/// Many markdown files at once, one server call per file, with progress and per-file errors.
#[component]
fn Import(base: Signal<String>, version: RwSignal<u64>) -> impl IntoView {
    let done = RwSignal::new(0usize);
    let total = RwSignal::new(0usize);
    let failures = RwSignal::new(Vec::<String>::new());
    let on_files = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
            let Some(list) = input.files() else { return };
            let files: Vec<web_sys::File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
            input.set_value("");
            done.set(0);
            total.set(files.len());
            failures.set(vec![]);
            let base = base.get_untracked();
            leptos::task::spawn_local(async move {
                for file in files {
                    let name = file.name();
                    let text = wasm_bindgen_futures::JsFuture::from(file.text()).await.ok().and_then(|t| t.as_string());
                    let outcome = match text {
                        Some(text) => super::api::knowledge::import_article(base.clone(), name.clone(), text)
                            .await
                            .map(|_| ())
                            .map_err(|e| e.to_string()),
                        None => Err(format!("{name}: could not read the file")),
                    };
                    if let Err(e) = outcome {
                        failures.update(|f| f.push(e));
                    }
                    done.update(|d| *d += 1);
                }
                version.update(|v| *v += 1);
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (ev, base, version);
    };
    view! {
        <div class="c-card">
            <label for="k-import">"Import markdown files (front matter: title, category, kind, source_url)"</label>
            <input id="k-import" type="file" accept=".md,text/markdown" multiple=true on:change=on_files />
            <Show when=move || { total.get() > 0 }>
                <progress max=move || total.get() value=move || done.get() aria-label="Import progress"></progress>
                <span role="status">{move || format!("{} of {} imported", done.get() - failures.with(|f| f.len()).min(done.get()), total.get())}</span>
            </Show>
            <ul class="c-errors">{move || failures.get().into_iter().map(|f| view! { <li class="c-error">{f}</li> }).collect_view()}</ul>
        </div>
    }
}

/// `/admin/articles/:id` and `/admin/knowledge/:base/new`: the article editor.
#[component]
pub fn ArticlePage() -> impl IntoView {
    let params = use_params_map();
    let data = Resource::new(
        move || (params.read().get("id"), params.read().get("base")),
        |(id, base)| async move {
            match id {
                Some(id) => article(id).await,
                None => Ok(ArticleForm {
                    knowledge_base_id: base.unwrap_or_default(),
                    kind: "article".into(),
                    ..Default::default()
                }),
            }
        },
    );
    view! {
        <Loaded resource=data let:form>
            <ArticleEditor form />
        </Loaded>
    }
}

#[component]
fn ArticleEditor(form: ArticleForm) -> impl IntoView {
    let back = format!("/admin/knowledge/{}", form.knowledge_base_id);
    let is_new = form.id.is_none();
    let f = RwSignal::new(form);
    let errors = RwSignal::new(Vec::<FieldError>::new());
    let notice = RwSignal::new(None::<String>);
    let back2 = back.clone();
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let back = back2.clone();
        leptos::task::spawn_local(async move {
            match save_article(f.get_untracked()).await {
                Ok(s) if s.errors.is_empty() => {
                    errors.set(vec![]);
                    if is_new { go_to(&back) } else { notice.set(Some("Saved.".into())) }
                }
                Ok(s) => errors.set(s.errors),
                Err(e) => notice.set(Some(e.to_string())),
            }
        });
    };
    let back3 = back.clone();
    let remove = move |_| {
        let Some(id) = f.with_untracked(|f| f.id.clone()) else { return };
        if !confirm("Delete this article? The agent will no longer find it.") {
            return;
        }
        let back = back3.clone();
        leptos::task::spawn_local(async move {
            match delete_article(id).await {
                Ok(()) => go_to(&back),
                Err(e) => notice.set(Some(e.to_string())),
            }
        });
    };
    view! {
        <p><A href=back>"← Articles"</A></p>
        <h1>{if is_new { "New article" } else { "Edit article" }}</h1>
        <form class="c-form c-card" on:submit=save novalidate=true>
            <label for="ar-title">"Title"</label>
            <input id="ar-title" prop:value=move || f.with(|f| f.title.clone()) on:input=move |ev| f.update(|f| f.title = event_target_value(&ev)) />
            <FieldMessage errors field="title" />
            <label for="ar-category">"Category (e.g. QMAS, GEP, IANG, TTPS, CIES, TECHTAS)"</label>
            <input id="ar-category" prop:value=move || f.with(|f| f.category.clone()) on:input=move |ev| f.update(|f| f.category = event_target_value(&ev)) />
            <FieldMessage errors field="category" />
            <label for="ar-kind">"Kind"</label>
            <select id="ar-kind" on:change=move |ev| f.update(|f| f.kind = event_target_value(&ev))>
                <option value="article" selected=move || f.with(|f| f.kind == "article")>"Article"</option>
                <option value="experience" selected=move || f.with(|f| f.kind == "experience")>"System experience"</option>
            </select>
            <FieldMessage errors field="kind" />
            <label for="ar-source">"Source URL"</label>
            <input id="ar-source" type="url" prop:value=move || f.with(|f| f.source_url.clone()) on:input=move |ev| f.update(|f| f.source_url = event_target_value(&ev)) />
            <FieldMessage errors field="source_url" />
            <div class="c-split">
                <div>
                    <label for="ar-body">"Markdown"</label>
                    <textarea id="ar-body" rows="18" prop:value=move || f.with(|f| f.body.clone()) on:input=move |ev| f.update(|f| f.body = event_target_value(&ev))></textarea>
                    <FieldMessage errors field="body" />
                </div>
                <div>
                    <span class="c-label">"Preview"</span>
                    <div class="c-md c-preview-md" inner_html=move || f.with(|f| parley_widget::markdown::render(&f.body).into_string())></div>
                </div>
            </div>
            {move || notice.get().map(|n| view! { <p class="c-notice" role="status">{n}</p> })}
            <div class="c-actions">
                <button type="submit" class="c-primary">"Save"</button>
                <Show when=move || !is_new>
                    <button type="button" class="c-danger" on:click=remove.clone()>"Delete"</button>
                </Show>
            </div>
        </form>
    }
}

/// The background embedding's progress, read again every 3 seconds until every passage has its
/// vector.
#[component]
fn Embeddings() -> impl IntoView {
    let tick = RwSignal::new(0u64);
    let status = Resource::new(move || tick.get(), |_| embedding_status());
    Effect::new(move |_| {
        if let Ok(handle) =
            set_interval_with_handle(move || tick.update(|t| *t += 1), std::time::Duration::from_secs(3))
        {
            on_cleanup(move || handle.clear());
        }
    });
    let line = move || {
        status.get().and_then(Result::ok).map(|s| {
            let text = if !s.configured {
                "Semantic search is off: set PARLEY_EMBEDDINGS_BASE_URL to blend embeddings into knowledge search.".to_owned()
            } else if s.embedded >= s.chunks {
                format!("Semantic search: all {} passages have their embedding.", s.chunks)
            } else {
                let error = s.last_error.map(|e| format!(" The last attempt failed ({e}); it is tried again every few seconds.")).unwrap_or_default();
                format!(
                    "Semantic search: {} of {} passages have their embedding; the rest are being embedded in the background.{error}",
                    s.embedded, s.chunks
                )
            };
            view! { <p class="c-hint" id="embeddings">{text}</p> }
        })
    };
    view! { <Transition>{line}</Transition> }
}
