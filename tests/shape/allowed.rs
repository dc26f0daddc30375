//! A hold the team accepts, allowed by name on a claim: `does_not_block_its_worker` on the
//! sleep twin (2 ms of `std::thread::sleep` on the worker) holds where the call is allowed,
//! listing it; an allow that matches nothing leaves it broken and says so.

use perfshape::{Allow, PoolSettings, Result, Target, Verdict};

use crate::common::handlers;

/// The sleep twin's route, on one worker.
fn the_sleep_twin() -> Result<perfshape::Endpoint> {
    let target = Target::serve(PoolSettings::workers(1)?, handlers::app())?;
    Ok(target.get("/wait?us=2000&ms=5"))
}

#[test]
fn an_allowed_call_holds_the_claim_and_is_listed() -> Result {
    let checked = the_sleep_twin()?
        .allow(Allow::call("clock_nanosleep"))
        .does_not_block_its_worker()
        .check()?;
    if checked.report().unread().is_some() {
        return Ok(());
    }
    let said = format!("{:#}", checked.report());
    assert_eq!(checked.verdict(), Verdict::Holds, "{said}");
    assert!(
        checked
            .report()
            .headline()
            .contains("— allowed by call `clock_nanosleep`: blocked in clock_nanosleep()"),
        "{said}"
    );
    let allowed = &checked.summary().facts["allowed"];
    assert!(
        allowed.starts_with("waits in a call while holding its worker: clock_nanosleep(): a sleep")
            && allowed.ends_with(", allowed by call `clock_nanosleep`"),
        "{allowed}"
    );
    Ok(())
}

#[test]
fn an_allow_that_matches_nothing_leaves_the_claim_broken_and_is_said() -> Result {
    let checked = the_sleep_twin()?
        .allow(Allow::function("shop::config::load"))
        .does_not_block_its_worker()
        .check()?;
    if checked.report().unread().is_some() {
        return Ok(());
    }
    let said = format!("{:#}", checked.report());
    assert_eq!(checked.verdict(), Verdict::Broken, "{said}");
    assert!(
        said.contains("allowed function `shop::config::load`: "),
        "{said}"
    );
    Ok(())
}
