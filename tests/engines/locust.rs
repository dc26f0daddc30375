//! Seed 004 on Locust's distributed engine — a master and 2 workers on loopback — judged
//! from Locust's own statistics (`src/catalog/locust.rs`). Needs Locust: `.ci/run`
//! installs it into target/engines-venv; without it the test fails and says how.

use perfshape::catalog::Setup::Claimed;
use perfshape::catalog::locust;
use perfshape::{Result, assert_shapes};

#[test]
fn seed004_from_a_distributed_run() -> Result {
    assert_shapes!(locust::seed004_from_a_distributed_run(Claimed)?);
    Ok(())
}
