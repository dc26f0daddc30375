//! tokio's co-scheduling of blocking requests, and eager driver hand-off
//! (`src/catalog/scheduler.rs`, `docs/coscheduling.md`).

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::scheduler;

#[test]
fn eager_handoff_serves_a_later_blocking_request_at_once() -> Result {
    assert_shapes!(scheduler::eager_handoff_serves_a_later_request_at_once(
        Claimed
    )?);
    Ok(())
}
