//! What the experiments' crate (`perfshape-experiments`) and the `perfshape` command reach
//! that a team never writes: hidden from the documentation, not part of the API's promise,
//! as insta's `_cargo_insta_support` is for `cargo-insta`.

pub use crate::claim::shape_lock;
pub use crate::client::{CanaryPlan, Plan, check_url};
pub use crate::error::{check_range, write_with_causes};
pub use crate::evidence::Evidence;
pub use crate::fd_limit::ensure_fd_limit;
pub use crate::outcome::short;
pub use crate::vocab::millis;

use crate::{Endpoint, Result, Target};

/// `target`, its served router called `noun` in reports (`demo service on W=2 B=512`).
pub fn with_noun(target: Target, noun: &'static str) -> Target {
    target.with_noun(noun)
}

/// What `target`'s served router is called in reports: `router` unless renamed.
pub fn noun(target: &Target) -> &'static str {
    target.noun()
}

/// The plan `endpoint`'s loads send, checked.
pub fn plan(endpoint: &Endpoint) -> Result<Plan> {
    endpoint.plan()
}

/// `claim`, its rounds measured elsewhere (an engine's statistics, replayed): the time that
/// measurement took and its physical limit, which its report shows instead of the replay's.
pub fn measured_elsewhere(
    claim: crate::Claim<'_>,
    took: std::time::Duration,
    limit: std::time::Duration,
) -> crate::Claim<'_> {
    claim.measured_elsewhere(took, limit)
}

/// Sends `n` requests of `plan` from `client` as `strategy` says (and the canary's one
/// request `after` the load started), and waits for all of them.
pub fn run_plan(
    client: &crate::client::LoadClient,
    strategy: crate::client::ClientStrategy,
    plan: &Plan,
    n: usize,
    canary: Option<CanaryPlan<'_>>,
) -> Result<crate::load::Run> {
    client.run_plan(strategy, plan, n, canary)
}
