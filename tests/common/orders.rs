//! The orders example (`examples/orders/`) as a team would gate it: the report handler
//! must not block its worker, and /health must keep answering while the report runs.

#[path = "../../examples/orders/service.rs"]
#[allow(dead_code)]
mod service;

use perfshape::{PoolSettings, Result, Target};

#[allow(unused_imports)]
pub(crate) use service::{Ledger, TOKEN};

/// The orders service with `ledger`, on one worker.
pub(crate) fn orders(ledger: Ledger) -> Result<Target> {
    Target::serve(PoolSettings::workers(1)?, service::app(ledger))
}
