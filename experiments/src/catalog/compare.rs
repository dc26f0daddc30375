//! Two builds of one service compared in the same rounds: the regression gate a team runs
//! on its pull requests, on two demo services standing for main and the pull request.

use super::{Entry, Setup, Shapes, ms, shape};
use crate::error::Result;
use crate::vocab::ServerStrategy::Async;
use perfshape::Endpoint;

/// This module's entries.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "compare::the_same_build_is_no_regression",
        control: "the candidate made 50 % slower (30 ms of work where the base does 20)",
        run: the_same_build_is_no_regression,
    },
    Entry {
        name: "compare::a_faster_build_is_claimed_faster",
        control: "base and candidate swapped",
        run: a_faster_build_is_claimed_faster,
    },
];

/// Two services on identical pools, standing for two builds: main's `/async?ms=base`
/// and the pull request's `/async?ms=candidate`.
fn builds(base: u64, candidate: u64) -> Result<(Endpoint, Endpoint)> {
    let main = crate::demo::target(super::workers(1)?)?.named("main");
    let pull_request = crate::demo::target(super::workers(1)?)?.named("pull request");
    Ok((
        main.request(perfshape::Request::get(Async.path_and_query(ms(base))?)),
        pull_request.request(perfshape::Request::get(
            Async.path_and_query(ms(candidate))?,
        )),
    ))
}

/// The same build on both sides (20 ms of async work each) is at most 10 % slower: the
/// A/A comparison, under the default fan-out of 10.
pub fn the_same_build_is_no_regression(setup: Setup) -> Result<Shapes> {
    let (base, candidate) = builds(20, setup.pick(20, 30))?;
    let checked = candidate
        .compared_with(&base)
        .slower_by_at_most(0.10)
        .check()?;
    Ok(vec![shape("the_same_build_is_no_regression", checked)])
}

/// A build whose handler waits 20 ms where main's waits 30 is at least 20 % faster (the
/// model: 33 %), one request at a time.
pub fn a_faster_build_is_claimed_faster(setup: Setup) -> Result<Shapes> {
    let (base, candidate) = builds(30, 20)?;
    let comparison = candidate.compared_with(&base).single();
    let comparison = match setup {
        Setup::Claimed => comparison,
        Setup::Control => comparison.swapped(),
    };
    let checked = comparison.faster_by_at_least(0.20).check()?;
    Ok(vec![shape("a_faster_build_is_claimed_faster", checked)])
}
