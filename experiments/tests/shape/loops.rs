//! Open and closed loops, and the probe (`src/catalog/loops.rs`).

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::loops;

#[test]
fn an_open_loop_sees_the_queue_a_closed_client_would_hide() -> Result {
    assert_shapes!(loops::an_open_loop_sees_the_queue(Claimed)?);
    Ok(())
}

#[test]
fn the_probe_finds_the_pool_of_a_blocking_server() -> Result {
    assert_shapes!(loops::the_probe_finds_the_pool(Claimed)?);
    Ok(())
}

#[test]
fn the_probe_says_what_limits_it() -> Result {
    assert_shapes!(loops::the_probe_says_what_limits_it(Claimed)?);
    Ok(())
}

/// A concurrency claim whose plateau is the machine's CPU, not the service's, takes no
/// verdict: `/health` (no work) on 2 workers, served and loaded on 2 cores, "behaves like
/// a pool of ≈2" is inconclusive, its reason naming the CPU — never held or broken on a
/// figure that measures perfshape and the machine. Probed up to 64: a plateau is found only
/// with two stalled steps after it, and this one sits at 4 to 16 callers (the load client
/// and the server batch more per wake-up as callers grow, so throughput still rose ≥ 20 %
/// per doubling up to 8 or 16 in 3 of 8 runs): up to the default 16, those runs found no
/// plateau and the lower bound ≈5.5 broke "≈2" instead.
#[test]
fn a_plateau_of_the_cpu_is_no_verdict_about_a_pool() -> Result {
    let target = perfshape_experiments::demo::target(perfshape::PoolSettings::workers(2)?)?;
    let checked = target
        .checked_get("/health")?
        .concurrency_limit()
        .up_to(64)
        .about(2.0)
        .check()?;
    let report = checked.report();
    let Some(verdict) = crate::common::decided(&checked) else {
        return Ok(());
    };
    assert_eq!(verdict, perfshape::Verdict::Inconclusive, "{report}");
    assert!(
        report
            .reason()
            .contains("perfshape or the machine was the limit, not the service"),
        "{}",
        report.reason()
    );
    // Where the machine's CPU is read, the plateau is named as the CPU's; a portable build
    // reads none, and names the load client where its workers were saturated (88 % busy
    // in one CI run) — a limit of perfshape's, never the service's.
    #[cfg(not(perfshape_portable))]
    assert!(
        report.reason().contains("limited by CPU"),
        "{}",
        report.reason()
    );
    #[cfg(perfshape_portable)]
    assert!(
        report.reason().contains("limited by CPU")
            || report.reason().contains("the load client was the limit at")
                && report.reason().contains("the machine's CPU not read"),
        "{}",
        report.reason()
    );
    Ok(())
}
