//! A ledger as a gRPC service on tonic, in two builds: recording an entry calls the ledger's
//! core (its store) with a sync client — on the async worker (the bug), or on tokio's
//! blocking pool (the fix). A team's gRPC service as perfshape gates it: served on a
//! constrained pool over HTTP/2 (`Routes::into_axum_router`), or running on tonic's own
//! server and measured by URL.

pub mod core;
pub mod messages;
mod service;

pub use service::{Build, LedgerService};

/// The server side tonic-build generated from `build.rs`'s description.
pub mod generated {
    #![allow(missing_docs, unreachable_pub, clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/ledger.Ledger.rs"));
}

/// The ledger's routes as an axum `Router`, as a team serves a tonic service beside its
/// other routes (or hands it to perfshape): `build` records its entries at `core`.
pub fn router(build: Build, core: std::net::SocketAddr) -> axum::Router {
    tonic::service::Routes::new(generated::ledger_server::LedgerServer::new(
        LedgerService::new(build, core),
    ))
    .into_axum_router()
}

/// Serves the ledger on tonic's own server at `listener` until the process ends, as the
/// service's `main` does: what perfshape measures from outside, by URL. Nagle is off on
/// every connection, as tonic's `serve(addr)` sets it: on a listener of one's own it is not,
/// and twenty calls multiplexed on one HTTP/2 connection then took 5× one call, their small
/// frames held back for the client's ACKs.
pub async fn serve(
    build: Build,
    core: std::net::SocketAddr,
    listener: tokio::net::TcpListener,
) -> Result<(), tonic::transport::Error> {
    tonic::transport::Server::builder()
        .add_service(generated::ledger_server::LedgerServer::new(
            LedgerService::new(build, core),
        ))
        .serve_with_incoming(
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true)),
        )
        .await
}
