//! tokio's co-scheduling of blocking requests, and eager driver hand-off
//! (`src/catalog/scheduler.rs`, `docs/coscheduling.md`).

use perfshape::catalog::Setup::Claimed;
use perfshape::catalog::scheduler;
use perfshape::{Result, assert_shapes};

#[test]
fn eager_handoff_spreads_a_fan_out_of_blocking_requests() -> Result {
    assert_shapes!(scheduler::eager_handoff_spreads_a_fan_out(Claimed)?);
    Ok(())
}
