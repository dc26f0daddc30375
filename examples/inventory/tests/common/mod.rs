//! What the inventory's tests share: a build served on one worker over a fresh database
//! file, the requests a team would send it, and the disk's own `fsync` time.

#![allow(dead_code)]

use inventory::{Build, Database, Store, TOKEN, app};
use perfshape::{Endpoint, Mix, PoolSettings, Result, Target};
use serde_json::json;
use tempfile::TempDir;

/// A build of the service, served on one worker, and the folder its database lives in
/// (removed when this drops).
pub(crate) struct Served {
    /// The served service.
    pub(crate) target: Target,
    /// The database.
    pub(crate) database: Database,
    /// The database's folder.
    pub(crate) folder: TempDir,
}

/// `build` on a fresh database file in a temporary folder, on one tokio worker and the
/// default 512 blocking threads. (The store goes to the server whole: the last handle to a
/// deadpool pool must drop inside a tokio runtime, where the server drops its own, and a
/// plain `#[test]` has none.)
pub(crate) fn served(build: Build) -> Result<Served> {
    served_with(build, |store| store)
}

/// As [`served`], the store changed by `change` first ([`Store::audited`]).
pub(crate) fn served_with(build: Build, change: impl FnOnce(Store) -> Store) -> Result<Served> {
    let folder = TempDir::new().expect("a temporary folder");
    let database = Database::create(folder.path().join("inventory.db")).expect("the database");
    let store = change(Store::open(build, &database).expect("the store"));
    // Named for the build, so that each build's claims are told apart in their reports.
    let target = Target::serve(PoolSettings::workers(1)?, app(store))?.named(build.name());
    Ok(Served {
        target,
        database,
        folder,
    })
}

/// `POST /items/sku-0001/movements`: one came in, with the writes' token.
pub(crate) fn movement(target: &Target) -> Endpoint {
    target
        .post("/items/sku-0001/movements")
        .json(&json!({ "delta": 1, "note": "delivery" }))
        .bearer_auth(TOKEN)
}

/// How many lines a delivery note has: its transaction computes for milliseconds, long
/// enough for the fan-out's timing from outside to see where its requests queue.
pub(crate) const NOTE_LINES: usize = 1000;

/// `POST /deliveries`: a note of [`NOTE_LINES`] lines, recorded in one transaction.
pub(crate) fn delivery_note(target: &Target) -> Endpoint {
    let lines: Vec<_> = (0..NOTE_LINES)
        .map(|i| json!({ "sku": format!("sku-{:04}", i), "delta": 2 }))
        .collect();
    target
        .post("/deliveries")
        .json(&json!({ "note": "delivery note", "lines": lines }))
        .bearer_auth(TOKEN)
}

/// `GET /items/sku-0042`: one row, from SQLite's page cache.
pub(crate) fn lookup(target: &Target) -> Endpoint {
    target.get("/items/sku-0042")
}

/// `GET /items?after=sku-0100&limit=20`: a page of the list.
pub(crate) fn page(target: &Target) -> Endpoint {
    target.get("/items?after=sku-0100&limit=20")
}

/// The service's traffic as it comes: /health ×2, a lookup ×4, a page ×2, a movement ×2.
pub(crate) fn traffic(target: &Target) -> Mix {
    target.mix([
        (target.get("/health"), 2),
        (lookup(target), 4),
        (page(target), 2),
        (movement(target), 2),
    ])
}

/// The evidence line for a claim on a write: the disk's own `fsync` time.
pub(crate) fn fsync_evidence(served: &Served) -> String {
    served
        .database
        .disk_evidence()
        .expect("the disk's fsync time")
}
