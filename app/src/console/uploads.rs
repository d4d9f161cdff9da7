//! Files an owner uploads into a knowledge base (PDF, DOCX, HTML, Markdown, text, CSV of
//! questions and answers): chosen with a file input or dropped on its zone, sent one request per
//! file (multipart), each listed with what became of it.

use leptos::prelude::*;

use super::types::UPLOAD_MAX_BYTES;

/// The file picker, the drop zone and the results.
#[component]
pub fn Upload(base: Signal<String>, version: RwSignal<u64>) -> impl IntoView {
    let results = RwSignal::new(Vec::<(bool, String)>::new());
    let (done, total) = (RwSignal::new(0usize), RwSignal::new(0usize));
    let over = RwSignal::new(false);
    let on_change = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
            let files = input.files().map(browser::list).unwrap_or_default();
            input.set_value("");
            browser::send(base.get_untracked(), files, results, done, total, version);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (ev, base, version, done, total);
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        over.set(false);
        #[cfg(feature = "hydrate")]
        {
            let files = ev.data_transfer().and_then(|d| d.files()).map(browser::list).unwrap_or_default();
            browser::send(base.get_untracked(), files, results, done, total, version);
        }
    };
    let on_over = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        over.set(true);
    };
    view! {
        <section class="c-card" id="upload" aria-labelledby="upload-title">
            <h2 id="upload-title">"Upload files"</h2>
            <div class="c-drop" class:c-drop-over=move || over.get() on:dragover=on_over
                on:dragleave=move |_| over.set(false) on:drop=on_drop>
                <label for="upload-files">"Choose files (PDF, DOCX, HTML, Markdown, text, CSV of questions and answers)"</label>
                <input id="upload-files" type="file" multiple=true
                    accept=".pdf,.docx,.html,.htm,.md,.markdown,.txt,.csv" on:change=on_change />
                <p class="c-hint">{format!("…or drop them here. Up to {} MiB a file; a file uploaded again under the same name replaces it.", UPLOAD_MAX_BYTES / (1024 * 1024))}</p>
            </div>
            <Show when=move || { total.get() > 0 }>
                <progress max=move || total.get() value=move || done.get() aria-label="Upload progress"></progress>
                <span role="status">{move || format!("{} of {} files sent", done.get(), total.get())}</span>
            </Show>
            <ul id="upload-results">
                {move || results.get().into_iter().map(|(ok, line)| view! {
                    <li class=if ok { "c-ok" } else { "c-error" }>{line}</li>
                }).collect_view()}
            </ul>
        </section>
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    use leptos::prelude::*;

    use crate::console::api::sources::upload_files;
    use crate::console::types::{FileOutcome, UPLOAD_MAX_BYTES};

    /// What one file became, as a line.
    fn outcome_line(o: &FileOutcome) -> (bool, String) {
        match &o.error {
            Some(error) => (false, error.clone()),
            None => {
                let plural = if o.passages == 1 { "" } else { "s" };
                (true, format!("{}: indexed, {} passage{plural}", o.name, o.passages))
            }
        }
    }

    pub fn list(files: web_sys::FileList) -> Vec<web_sys::File> {
        (0..files.length()).filter_map(|i| files.get(i)).collect()
    }

    /// Sends each file in its own request, one after the other, adding its outcome to `results`.
    pub fn send(
        base: String,
        files: Vec<web_sys::File>,
        results: RwSignal<Vec<(bool, String)>>,
        done: RwSignal<usize>,
        total: RwSignal<usize>,
        version: RwSignal<u64>,
    ) {
        if files.is_empty() {
            return;
        }
        results.set(vec![]);
        done.set(0);
        total.set(files.len());
        leptos::task::spawn_local(async move {
            for file in files {
                let name = file.name();
                let lines = if file.size() > UPLOAD_MAX_BYTES as f64 {
                    vec![(false, format!("{name}: larger than the limit of {} MiB", UPLOAD_MAX_BYTES / (1024 * 1024)))]
                } else {
                    match form(&base, &file) {
                        Some(form) => match upload_files(form.into()).await {
                            Ok(outcomes) => outcomes.iter().map(outcome_line).collect(),
                            Err(e) => vec![(false, format!("{name}: {e}"))],
                        },
                        None => vec![(false, format!("{name}: could not read the file"))],
                    }
                };
                results.update(|r| r.extend(lines));
                done.update(|d| *d += 1);
            }
            version.update(|v| *v += 1);
        });
    }

    fn form(base: &str, file: &web_sys::File) -> Option<web_sys::FormData> {
        let form = web_sys::FormData::new().ok()?;
        form.append_with_str("knowledge_base_id", base).ok()?;
        form.append_with_blob_and_filename("file", file, &file.name()).ok()?;
        Some(form)
    }
}
