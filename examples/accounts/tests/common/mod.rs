//! The accounts service as its tests serve it: a throwaway PostgreSQL cluster, seeded, the
//! service's build connected to it directly or through a downstream proxy at production's
//! distance, and the router on one worker of perfshape's.

#![allow(dead_code)]

mod cluster;

use std::time::Duration;

use accounts::{Build, Store};
use perfshape::runtime::Proxy;
use perfshape::{Downstream, Endpoint, PoolSettings, Target};

pub(crate) use cluster::Cluster;

/// Production's distance to its database, one way: a query's round trip through the proxy
/// takes 2 ms longer than on loopback, as in a service whose database is in the next zone.
pub(crate) const DISTANCE: Duration = Duration::from_millis(1);

/// A served build, and what it needs kept alive.
pub(crate) struct Served {
    /// The router on one worker.
    pub(crate) target: Target,
    /// The proxy between the service and its database, if any.
    pub(crate) proxy: Option<Proxy>,
    /// The cluster; dropped last, after the service's connections.
    pub(crate) cluster: Cluster,
}

/// `build` on one worker, its database `distance` away (`None`: on loopback, directly).
pub(crate) fn served(build: Build, distance: Option<Duration>) -> Served {
    let cluster = Cluster::start().unwrap_or_else(|e| panic!("{e}"));
    accounts::seed(&cluster.url()).unwrap_or_else(|e| panic!("{e}"));
    let proxy = distance.map(|latency| {
        Downstream::to(format!("127.0.0.1:{}", cluster.port))
            .latency(latency)
            .start()
            .unwrap_or_else(|e| panic!("{e}"))
    });
    let url = match &proxy {
        Some(proxy) => cluster.url_at(&proxy.addr().to_string()),
        None => cluster.url(),
    };
    let store = Store::connect(build, &url).unwrap_or_else(|e| panic!("{e}"));
    let target = Target::serve(
        PoolSettings::workers(1).expect("one worker"),
        accounts::app(store),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Served {
        target,
        proxy,
        cluster,
    }
}

/// A page of 20 accounts: one `SELECT … LIMIT 20`.
pub(crate) fn list(target: &Target) -> Endpoint {
    target.get("/accounts?limit=20")
}

/// Opening an account: a JSON `POST`, an `INSERT … RETURNING` that commits.
pub(crate) fn create(target: &Target) -> Endpoint {
    target
        .post("/accounts")
        .json(&serde_json::json!({ "owner": "ada", "cents": 1250 }))
}
