//! The inventory's claims on each build, as the team's CI runs them, with the verdicts:
//! `cargo run --release -p inventory --example gate`. Each claim prints its report on
//! stderr as it is decided — a headline when it holds, everything when it does not — and
//! the sync driver's claims come out broken.

use std::error::Error;

use inventory::{Build, Database, Store, TOKEN, app};
use perfshape::{Checked, PoolSettings, Target};
use serde_json::json;

/// The team's three claims on `build`: recording a stock movement never blocks its worker,
/// neither does looking up an item, and no route of the traffic does.
fn claims(build: Build, folder: &std::path::Path) -> Result<[Checked; 3], Box<dyn Error>> {
    let database = Database::create(folder.join(format!("{build}.db")))?;
    let store = Store::open(build, &database)?;
    let target = Target::serve(PoolSettings::workers(1)?, app(store))?.named(build.name());
    let movement = target
        .post("/items/sku-0001/movements")
        .json(&json!({ "delta": 1, "note": "delivery" }))
        .bearer_auth(TOKEN);
    let lookup = target.get("/items/sku-0042");
    let mix = target.mix([
        (target.get("/health"), 2),
        (lookup.clone(), 4),
        (target.get("/items?after=sku-0100&limit=20"), 2),
        (movement.clone(), 2),
    ]);
    Ok([
        movement
            .does_not_block_its_worker()
            .evidence(database.disk_evidence()?)
            .check()?,
        lookup.does_not_block_its_worker().check()?,
        mix.none_blocks_its_worker().check()?,
    ])
}

fn main() -> Result<(), Box<dyn Error>> {
    let folder = tempfile::tempdir()?;
    for build in Build::ALL {
        println!("{build}:");
        for checked in claims(build, folder.path())? {
            println!("  {}: {}", checked.report().name(), checked.verdict());
        }
    }
    Ok(())
}
