//! One build of the inventory service on a port, for `perfshape compare` (which starts
//! two of these): `inventory BUILD PORT [DATABASE]`, the database a fresh file in a temporary
//! folder unless one is named. Served on tokio's default runtime, as the service would be.

use std::net::SocketAddr;

use inventory::{Build, Database, Store, app};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage =
        "usage: serve BUILD PORT [DATABASE] (BUILD: on-worker, shared-connection, pool, sqlx)";
    let build: Build = args.next().ok_or(usage)?.parse()?;
    let port: u16 = args.next().ok_or(usage)?.parse()?;
    let folder = tempfile::tempdir()?;
    let path = args
        .next()
        .map_or_else(|| folder.path().join("inventory.db"), Into::into);
    let store = Store::open(build, &Database::create(&path)?)?;
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await?;
    eprintln!(
        "inventory ({build}) on http://{}, database {}",
        listener.local_addr()?,
        path.display()
    );
    axum::serve(listener, app(store)).await?;
    Ok(())
}
