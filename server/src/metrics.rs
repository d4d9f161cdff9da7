//! Prometheus metrics: the process-wide recorder behind the `metrics` macros used across the
//! engine, rendered at `GET /metrics` with the gauges read at scrape time (live channels, writer
//! queue, database pools). Series and labels are listed in `docs/operations.md`.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use parley_app::server::state::AppState;

/// Buckets of the `_seconds` histograms: from a fast first token to a long answer.
const SECONDS: [f64; 14] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the recorder (once per process: tests start many servers in one).
pub fn install() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &SECONDS)
            .expect("bucket list is not empty")
            .build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("a metrics recorder was already installed; /metrics shows only the gauges read at scrape");
        }
        // Keeps histograms from growing without limit between scrapes.
        let upkeep = handle.clone();
        std::thread::Builder::new()
            .name("metrics-upkeep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(5));
                    upkeep.run_upkeep();
                }
            })
            .ok();
        handle
    })
}

/// The text exposition, with the gauges that are read rather than counted.
pub fn render(state: &AppState) -> String {
    let engine = &state.engine;
    metrics::gauge!("parley_live_channels").set(engine.hub().live_channels() as f64);
    metrics::gauge!("parley_writer_queue_depth").set(engine.writer_queue_depth() as f64);
    metrics::gauge!("parley_turns_running").set(engine.shutdown_state().running_turns() as f64);
    metrics::gauge!("parley_draining").set(if engine.shutdown_state().is_draining() { 1.0 } else { 0.0 });
    let db = engine.db();
    for (name, pool) in [("read", db.pool()), ("write", db.writer())] {
        let size = pool.size() as f64;
        let idle = pool.num_idle() as f64;
        metrics::gauge!("parley_db_connections", "pool" => name, "state" => "idle").set(idle);
        metrics::gauge!("parley_db_connections", "pool" => name, "state" => "used").set(size - idle);
    }
    install().render()
}
