//! A sign-in form whose `POST /login` answers `303 See Other` (tests/apps/signin.rs): the
//! claims judge the request they name — the POST, whose answer is the redirect — and not
//! the page the redirect points to. With its password hash verified inline, the worker
//! computes 30 ms in one poll, and both claims break; with it on the blocking pool, both
//! hold, and each report names the redirect.

use std::time::Duration;

use perfshape::{PoolSettings, Result, Target, Verdict, assert_shape};

use crate::common::signin::{self, Verify};

fn serve(verify: Verify) -> Result<Target> {
    serve_costing(verify, signin::VERIFY)
}

fn serve_costing(verify: Verify, cost: Duration) -> Result<Target> {
    Target::serve_with(PoolSettings::workers(1)?, move || async move {
        Ok::<_, std::convert::Infallible>(signin::app_costing(verify, cost).await)
    })
}

fn sign_in(target: &Target) -> perfshape::Endpoint {
    target
        .post("/login")
        .form(&[("username", "ada"), ("password", "lovelace")])
}

const REDIRECT: &str = "303 See Other, a redirect";

#[test]
fn a_hash_verified_inline_behind_a_redirect_blocks_its_worker() -> Result {
    let target = serve(Verify::Inline)?;
    let checked = sign_in(&target).does_not_block_its_worker().check()?;
    let Some(verdict) = crate::common::decided(&checked) else {
        return Ok(());
    };
    let report = checked.report();
    assert_eq!(verdict, Verdict::Broken, "{report:#}");
    assert!(
        report
            .finding()
            .is_some_and(|f| f.contains("computes 30 ms in one poll")),
        "the report says it computes in one poll: {report:#}"
    );
    let answer = &report.facts()["POST /login answers"];
    assert!(answer.starts_with(REDIRECT), "{answer}");
    Ok(())
}

#[test]
fn the_sign_in_page_waits_while_a_hash_is_verified_inline() -> Result {
    let target = serve(Verify::Inline)?;
    let page = target.get("/login");
    let checked = page.keeps_answering_during(&sign_in(&target)).check()?;
    let Some(verdict) = crate::common::decided(&checked) else {
        return Ok(());
    };
    let report = checked.report();
    assert_eq!(verdict, Verdict::Broken, "{report:#}");
    assert!(
        !report
            .explanation()
            .iter()
            .any(|l| l.contains("no worker was blocked")),
        "{report:#}"
    );
    assert!(report.facts()["POST /login answers"].starts_with(REDIRECT));
    Ok(())
}

#[test]
fn a_hash_verified_on_the_blocking_pool_does_not_block_its_worker() -> Result {
    let target = serve(Verify::Offloaded)?;
    let sign_in = sign_in(&target);
    assert_shape!(sign_in.does_not_block_its_worker().check()?);
    assert_shape!(
        "keeps_answering",
        target
            .get("/login")
            .keeps_answering_during(&sign_in)
            .check()?
    );
    Ok(())
}

/// A verification of 250 ms (a memory-hard hash at production's parameters, built without
/// optimisations, takes 400 ms) on the blocking pool: the rounds are sized to the route —
/// four requests, not twenty — so that the nine quiet rounds a hold needs fit the default
/// budget, whatever the route's time. Sent twenty at a time (`.concurrency(20)`), it
/// measured seven rounds in 22.9 s, its budget out, inconclusive; in rounds of four, nine
/// rounds in ≈8 s.
#[test]
fn a_250_ms_hash_on_the_blocking_pool_holds_within_the_default_budget() -> Result {
    let target = serve_costing(Verify::Offloaded, Duration::from_millis(250))?;
    let checked = sign_in(&target).does_not_block_its_worker().check()?;
    let report = checked.report();
    // Four requests a round, said in the evidence (the snapshot states the rule).
    assert!(
        report
            .evidence()
            .iter()
            .any(|e| e.contains("over the median 4 concurrent POST /login")),
        "{report:#}"
    );
    assert_shape!(checked);
    Ok(())
}
