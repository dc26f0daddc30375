//! A journal service whose handlers block in the ways the kernel names: a note appended and
//! synced to a file with `std::fs` on the worker (its twin: `tokio::fs`), and a cache read
//! behind a std mutex that a rebuilder thread holds across its whole rebuild (its twin: the
//! rebuild done outside the lock, which is then held only to swap the result in).
//!
//! `?async=1` on `POST /note` is the fix; [`app`]'s `brief` the cache's.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use serde::Deserialize;
use tokio::io::AsyncWriteExt;

/// How often the rebuilder rebuilds the cache.
pub const REBUILD_EVERY: Duration = Duration::from_millis(10);

/// How long one rebuild takes (a read of its source): under the lock, or outside it.
pub const REBUILD: Duration = Duration::from_millis(5);

/// `?async=1` writes the note with `tokio::fs`.
#[derive(Debug, Default, Deserialize)]
pub struct Mode {
    #[serde(rename = "async")]
    asynchronous: Option<u8>,
}

#[derive(Clone)]
struct Journal {
    path: Arc<PathBuf>,
    cache: Arc<Mutex<Vec<u64>>>,
}

/// The routes `POST /note`, `GET /cached` and `GET /health`, journaling into `path`; the
/// cache's rebuilder holds its lock for the whole rebuild, or (`brief`) only to swap.
/// The rebuilder thread ends once the router is dropped.
pub fn app(path: PathBuf, brief: bool) -> Router {
    app_rebuilt_every(path, brief, REBUILD_EVERY)
}

/// [`app`] with the cache rebuilt `every` so often (each rebuild [`REBUILD`] long): a lock
/// held a third of the time at 15 ms.
pub fn app_rebuilt_every(path: PathBuf, brief: bool, every: Duration) -> Router {
    let cache = Arc::new(Mutex::new(vec![1, 2, 3]));
    spawn_rebuilder(Arc::downgrade(&cache), brief, every);
    Router::new()
        .route("/note", post(note))
        .route("/cached", get(cached))
        .route("/cached/rendered", get(rendered))
        .route("/health", get(|| async { "ok" }))
        .with_state(Journal {
            path: Arc::new(path),
            cache,
        })
}

/// Appends one line to the journal and syncs it to disk, as an audit trail must.
async fn note(
    State(journal): State<Journal>,
    Query(mode): Query<Mode>,
) -> Result<&'static str, StatusCode> {
    let line = b"{\"user\":\"ada\",\"did\":\"login\"}\n";
    let failed = |_| StatusCode::INTERNAL_SERVER_ERROR;
    if mode.asynchronous == Some(1) {
        let mut file = tokio::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&*journal.path)
            .await
            .map_err(failed)?;
        file.write_all(line).await.map_err(failed)?;
        file.sync_data().await.map_err(failed)?;
    } else {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&*journal.path)
            .map_err(failed)?;
        file.write_all(line).map_err(failed)?;
        file.sync_data().map_err(failed)?;
    }
    Ok("noted")
}

/// Reads the cache: a lock taken for a moment, unless the rebuilder holds it.
async fn cached(State(journal): State<Journal>) -> String {
    let cache = journal.cache.lock().unwrap_or_else(|p| p.into_inner());
    format!("{}", cache.iter().sum::<u64>())
}

/// Reads the cache as [`cached`] does, then renders the page for 0.25 ms of the worker's
/// CPU: a request as long as a team's JSON page in a build without optimisations.
async fn rendered(State(journal): State<Journal>) -> String {
    let sum: u64 = journal
        .cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .sum();
    let start = super::handlers::thread_cpu();
    let mut x = sum;
    while super::handlers::thread_cpu().saturating_sub(start) < Duration::from_micros(250) {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
    }
    x.to_string()
}

fn spawn_rebuilder(cache: Weak<Mutex<Vec<u64>>>, brief: bool, every: Duration) {
    std::thread::spawn(move || {
        let mut generation = 0u64;
        loop {
            std::thread::sleep(every.saturating_sub(REBUILD));
            let Some(cache) = cache.upgrade() else {
                return;
            };
            generation += 1;
            if brief {
                // Rebuilt outside the lock; the lock is held only to swap it in.
                std::thread::sleep(REBUILD);
                let fresh = vec![generation, 2, 3];
                *cache.lock().unwrap_or_else(|p| p.into_inner()) = fresh;
            } else {
                // Rebuilt under the lock: every reader waits for the whole rebuild.
                let mut held = cache.lock().unwrap_or_else(|p| p.into_inner());
                std::thread::sleep(REBUILD);
                *held = vec![generation, 2, 3];
            }
        }
    });
}
