//! Giving memory back after a burst. glibc's allocator keeps what a burst of streams freed in its
//! arenas (the process stays at its peak size for as long as it runs); once no answer stream has
//! been open for a little while, [`spawn_trimmer`] asks it to return the free pages to the system
//! (`malloc_trim`). It runs only after streams were open and while none is, so a busy server never
//! pays for it. The `parley` binary allocates Rust's memory with jemalloc, which gives pages back
//! by itself (see main.rs); what still comes from glibc's malloc is the C code's (SQLite's page
//! caches and statements), and in the tests, which use the library with the system allocator,
//! everything. Other allocators (musl, other systems) return memory by themselves or not at all:
//! there it does nothing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// How often the trimmer looks; memory comes back within about twice this after a burst.
const EVERY: Duration = Duration::from_secs(5);

static OPEN: AtomicUsize = AtomicUsize::new(0);
/// A stream was open since the last trim.
static BUSY_SINCE_TRIM: AtomicBool = AtomicBool::new(false);

/// An answer stream opened (counted until [`stream_closed`]).
pub fn stream_opened() {
    OPEN.fetch_add(1, Ordering::Relaxed);
    BUSY_SINCE_TRIM.store(true, Ordering::Relaxed);
}

pub fn stream_closed() {
    OPEN.fetch_sub(1, Ordering::Relaxed);
}

/// Starts the task that trims the allocator once the streams are over.
pub fn spawn_trimmer() {
    tokio::spawn(async {
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut quiet_ticks = 0u32;
        loop {
            tick.tick().await;
            if OPEN.load(Ordering::Relaxed) > 0 {
                quiet_ticks = 0;
                continue;
            }
            quiet_ticks += 1;
            // One quiet interval first: a lull between two waves of a burst is not its end.
            if quiet_ticks >= 2 && BUSY_SINCE_TRIM.swap(false, Ordering::Relaxed) {
                let started = std::time::Instant::now();
                let released = trim();
                tracing::debug!(released, took_ms = started.elapsed().as_millis() as u64, "gave free memory back");
            }
        }
    });
}

/// Returns the allocator's free pages to the system; true when some were released.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() -> bool {
    // SAFETY: `malloc_trim` only walks and shrinks glibc's own heap under its locks; it takes no
    // pointer from us and is safe to call from any thread at any time.
    unsafe { libc::malloc_trim(0) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() -> bool {
    false
}
