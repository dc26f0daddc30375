//! The endpoint claims a user writes, on the demo service's strategies.

use super::{Entry, Setup, Shapes, ms, shape};
use crate::demo::DemoRoutes;
use crate::error::Result;
use crate::vocab::ServerStrategy::{Async, Blocking, Lock, Offload};

/// This module's entries.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "endpoints::waiting_handlers_do_not_block_their_worker",
        control: "a blocking sleep and a std mutex held across a wait, where waits are claimed",
        run: waiting_handlers_do_not_block_their_worker,
    },
    Entry {
        name: "endpoints::an_async_handler_is_faster_than_a_blocking_one",
        control: "the async handler made blocking",
        run: an_async_handler_is_faster_than_a_blocking_one,
    },
];

/// Handlers that give their worker back while they wait (async, offloaded) do not block
/// it: 10 concurrent requests on one worker take about one request's time.
pub fn waiting_handlers_do_not_block_their_worker(setup: Setup) -> Result<Shapes> {
    let target = crate::demo::target(super::workers(1)?)?;
    let mut shapes = Vec::new();
    for (claimed, control) in [(Async, Blocking), (Offload, Lock)] {
        let checked = target
            .demo_endpoint(setup.pick(claimed, control), ms(20))?
            .does_not_block_its_worker()
            .check()?;
        shapes.push(shape(
            &format!("{}_does_not_block", claimed.name()),
            checked,
        ));
    }
    Ok(shapes)
}

/// On one worker, an async handler under a fan-out of 10 is at least 3× faster than a
/// blocking one (the model: 10×).
pub fn an_async_handler_is_faster_than_a_blocking_one(setup: Setup) -> Result<Shapes> {
    let target = crate::demo::target(super::workers(1)?)?;
    let fast = target.demo_endpoint(setup.pick(Async, Blocking), ms(10))?;
    let slow = target.demo_endpoint(Blocking, ms(10))?;
    let checked = fast.faster_than(&slow, 3.0).check()?;
    Ok(vec![shape(
        "an_async_handler_is_faster_than_a_blocking_one",
        checked,
    )])
}
