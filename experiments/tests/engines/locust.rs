//! Seed 004 on Locust's distributed engine — a master and 2 workers on loopback — judged
//! from Locust's own statistics (`src/catalog/locust.rs`). Needs Locust: `.ci/run`
//! installs it into target/engines-venv; without it the test fails and says how.

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::expect_broken;
use perfshape_experiments::catalog::locust;

/// The claims, and their negative control read from the same Locust run (it must break).
#[test]
fn seed004_from_a_distributed_run() -> Result {
    let (claimed, control) = locust::seed004_from_a_distributed_run_with_control()?;
    expect_broken(&control)?;
    assert_shapes!(claimed);
    Ok(())
}
