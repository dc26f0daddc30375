//! The ledger's service in its two builds.

use std::net::SocketAddr;

use tonic::{Request, Response, Status};

use crate::core;
use crate::generated::ledger_server::Ledger;
use crate::messages::{Entry, Ping, Pong, Recorded};

/// Where recording an entry calls the core's sync client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    /// On the async worker that polls the call: the worker waits out the core's round trip
    /// and serves nothing else meanwhile (the bug).
    SyncOnWorker,
    /// On tokio's blocking pool (`spawn_blocking`): the worker is free while it waits (the
    /// fix).
    Offloaded,
}

impl std::fmt::Display for Build {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Build::SyncOnWorker => "sync_on_worker",
            Build::Offloaded => "offloaded",
        })
    }
}

/// The ledger's service: `build` records each entry at the core.
#[derive(Clone, Debug)]
pub struct LedgerService {
    build: Build,
    core: SocketAddr,
}

impl LedgerService {
    /// The service in `build`, its core at `core`.
    pub fn new(build: Build, core: SocketAddr) -> LedgerService {
        LedgerService { build, core }
    }
}

#[tonic::async_trait]
impl Ledger for LedgerService {
    async fn record(&self, request: Request<Entry>) -> Result<Response<Recorded>, Status> {
        let Entry { account, cents } = request.into_inner();
        if account.is_empty() {
            return Err(Status::invalid_argument("an entry names its account"));
        }
        let core = self.core;
        let seq = match self.build {
            Build::SyncOnWorker => core::append(core, &account, cents),
            Build::Offloaded => {
                tokio::task::spawn_blocking(move || core::append(core, &account, cents))
                    .await
                    .map_err(|e| Status::internal(format!("the store's call panicked: {e}")))?
            }
        }
        .map_err(|e| Status::unavailable(format!("the ledger's core: {e}")))?;
        Ok(Response::new(Recorded { seq }))
    }

    async fn health(&self, _request: Request<Ping>) -> Result<Response<Pong>, Status> {
        Ok(Response::new(Pong { serving: true }))
    }
}
