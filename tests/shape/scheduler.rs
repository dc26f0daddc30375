//! tokio's co-scheduling of blocking requests, and eager driver hand-off
//! (`src/catalog/scheduler.rs`, `docs/coscheduling.md`).

use perfshape::catalog::Setup::Claimed;
use perfshape::catalog::scheduler;
use perfshape::{Result, assert_shapes};

#[test]
fn eager_handoff_serves_a_later_blocking_request_at_once() -> Result {
    assert_shapes!(scheduler::eager_handoff_serves_a_later_request_at_once(
        Claimed
    )?);
    Ok(())
}
