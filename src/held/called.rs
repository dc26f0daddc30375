//! What the kernel saw a held worker blocked in, for a report: the commonest call among the
//! samples of a route's polls (or of the workers outside any response, where a task the
//! requests spawned or a background job held them), with its share of the samples.

use std::sync::{Arc, Mutex};

use super::remedy::Hold;
use crate::blocked_call::{BlockedCall, Seen};
use crate::pool::sampler::{Calls, Place};
use crate::stack::Stack;

/// The samples of a claim's rounds, gathered as they run and read by its report.
#[derive(Clone, Debug, Default)]
pub(crate) struct CallsSampled(Arc<Mutex<Calls>>);

impl CallsSampled {
    /// Counts a run's samples in.
    pub(crate) fn add(&self, calls: &Calls) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .merge(calls);
    }

    /// The samples so far.
    pub(crate) fn get(&self) -> Calls {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The place a route's samples were counted under: its method and its path without the
/// query, as the served router saw the request (`POST /accounts`: its samples and stacks
/// are not `GET /accounts`'s).
pub(crate) fn route(method: &str, path: &str) -> Place {
    Place::Route(crate::pool::sampler::route_key(method, path))
}

/// The call the worker slept in at `route`, in words, and in how many of the samples that
/// caught it waiting, where the sampler caught that call: what a report on a wait leads
/// with ("blocked in fsync() of /var/app/audit.log"). `None` where no sleep was met, or
/// none is read here ([`named`] says which).
pub(crate) fn blocked_in(calls: &Calls, route: &Place) -> Option<(String, Option<(u32, u32)>)> {
    if !crate::blocked_call::available() {
        return None;
    }
    let (seen, _) = held_in(calls, route)?;
    let counted = calls
        .commonest_wait(route)
        .filter(|(sampled, _, _)| *sampled == seen)
        .map(|(_, n, all)| (n, all));
    Some((held_words(calls, route)?, counted))
}

/// The call a held worker slept in at `place`, with the stack it was read at where one
/// was: the longest sleep the kernel handed over as the worker left its CPU
/// ([`crate::stack::Leaving`]), which meets every sleep however short; else the commonest
/// call the sampler caught. `None` where neither met one.
pub(crate) fn held_in<'a>(calls: &'a Calls, place: &Place) -> Option<(Seen, Option<&'a Stack>)> {
    let sampled = calls.commonest_wait(place);
    if let Some(left) = calls.left(place) {
        // The sampler's reading of the same call, where it named the descriptor the poll
        // had closed by its end, says more.
        let seen = match &sampled {
            Some((Seen::Blocked(call), _, _)) if left.call.said_better_by(call) => {
                Seen::Blocked(call.clone())
            }
            _ => Seen::Blocked(left.call.clone()),
        };
        return Some((seen, Some(&left.stack)));
    }
    let (seen, _, _) = sampled?;
    let stack = calls.stack(place, &seen);
    Some((seen, stack))
}

/// [`held_in`] in words, with where in the team's code the call was made where its stack
/// was read: "fdatasync() of /tmp/app/audit.log, called from `shop::audit::append`
/// (src/audit.rs:88) via `std::fs::File::sync_data`".
pub(crate) fn held_words(calls: &Calls, place: &Place) -> Option<String> {
    let (seen, stack) = held_in(calls, place)?;
    let said = words(&seen);
    Some(match stack.and_then(|stack| stack.frames().called_from()) {
        Some(from) => format!("{said}, {from}"),
        None => said,
    })
}

/// What the samples say of a hold `how` at `route` (a task's wait: outside any response),
/// in words: "write() of /tmp/app/audit.log, in 31 of the 40 samples that caught the worker
/// waiting". `None` where nothing at that place was sampled; where the samples are not read
/// on this platform, the sentence says so.
pub(crate) fn named(calls: Option<&Calls>, route: &Place, how: Hold) -> Option<String> {
    if let Some(why) = crate::blocked_call::unread() {
        return Some(why);
    }
    let calls = calls?;
    let place = match how {
        Hold::WaitsInATask => &Place::Outside,
        Hold::Waits | Hold::Computes => route,
    };
    match how {
        Hold::Waits | Hold::WaitsInATask => {
            let outside = match place {
                Place::Outside => " outside any response",
                Place::Route(_) => "",
            };
            let Some((seen, n, all)) = calls.commonest_wait(place) else {
                // No tick met it asleep; the switch did.
                if let Some(left) = calls.left(place) {
                    return Some(format!(
                        "the kernel handed over the worker's stack as it left its CPU{outside}: blocked in {} (off its CPU {} at the longest)",
                        held_words(calls, place)?,
                        super::in_ms(left.off)
                    ));
                }
                // Sampled, but never asleep: the waits are short against the tick.
                let sampled: u32 = calls.at(place).iter().map(|(_, n)| n).sum();
                return (sampled > 0).then(|| {
                    format!(
                        "the samples (every {} ms) caught the worker asleep in none of their {sampled}: its waits are short, and more concurrent requests (.concurrency(n)) give the sampler more of them to meet",
                        crate::pool::sampler::TICK.as_secs_f64() * 1e3
                    )
                });
            };
            let words = match held_in(calls, place) {
                Some((held, _)) if held != seen => {
                    return Some(format!(
                        "the kernel saw it blocked in {}{outside} (the longest sleep as it left its CPU); the samples caught it waiting in {} most, in {n} of the {all} that caught it waiting",
                        held_words(calls, place)?,
                        words(&seen)
                    ));
                }
                _ => held_words(calls, place)?,
            };
            Some(format!(
                "the kernel saw it blocked in {words}, in {n} of the {all} samples that caught the worker waiting{outside}"
            ))
        }
        Hold::Computes => {
            let samples = calls.at(place);
            let all: u32 = samples.iter().map(|(_, n)| n).sum();
            let running = samples
                .iter()
                .find(|(seen, _)| *seen == Seen::Running)
                .map_or(0, |(_, n)| *n);
            (all > 0).then(|| {
                format!(
                    "the kernel saw it running, in no system call, in {running} of {all} samples of its polls: a stretch of computing {}",
                    computing_at(calls, place)
                )
            })
        }
    }
}

/// The call alone, for a report's cause line: the commonest one the worker slept in at
/// its place for a hold `how` that waits; `None` for one that computes, or where nothing
/// was sampled.
pub(crate) fn call(calls: &Calls, route: &Place, how: Hold) -> Option<String> {
    let place = match how {
        Hold::WaitsInATask => &Place::Outside,
        Hold::Waits => route,
        Hold::Computes => return None,
    };
    held_words(calls, place)
}

/// Where a worker computed at `place`, from the stacks the kernel sampled there ("in
/// `core::slice::sort::…`, called from `shop::report` (src/report.rs:30), in 40 of the 44
/// stacks sampled"), or why that is not read here.
pub(crate) fn computing_at(calls: &Calls, place: &Place) -> String {
    match crate::stack::computing_in(calls.computing(place)) {
        Some(said) => said,
        None => match crate::stack::unread_computing() {
            Some(why) => format!("({why})"),
            None => "(no stack sampled of it reached the service's own code)".to_string(),
        },
    }
}

/// The call the worker slept in at `place` ([`held_in`]), in words that do not change from
/// run to run ([`BlockedCall::shape`]), and where in the team's code it was made: what a
/// snapshot of a hold names. `None` where no sleep was met there.
pub(crate) fn shape_at(calls: &Calls, place: &Place) -> Option<String> {
    let (seen, stack) = held_in(calls, place)?;
    let Seen::Blocked(call) = &seen else {
        return None;
    };
    let said = call.shape();
    Some(match stack.and_then(|stack| stack.frames().called_from()) {
        Some(from) => format!("{said}, {from}"),
        None => said,
    })
}

/// The held worker's stacks at `place`, named, for an allow by function to match: those
/// sampled while it ran, for a stretch of `computing`, else those of the calls it slept
/// in — or why they are not read here. Naming reads the binary's debug information: only
/// where an allow asks.
pub(crate) fn held_stacks(
    calls: &Calls,
    place: &Place,
    computing: bool,
) -> Result<Vec<crate::stack::Frames>, String> {
    if computing {
        return match crate::stack::unread_computing() {
            Some(why) => Err(why),
            None => Ok(calls.computing(place).iter().map(|s| s.frames()).collect()),
        };
    }
    match crate::stack::unread() {
        Some(why) => Err(why),
        None => Ok(calls
            .left(place)
            .map(|left| &left.stack)
            .into_iter()
            .chain(
                calls
                    .at(place)
                    .iter()
                    .filter(|(seen, _)| *seen != Seen::Running)
                    .filter_map(|(seen, _)| calls.stack(place, seen)),
            )
            .map(|stack| stack.frames())
            .collect()),
    }
}

/// What was seen, in words: a connection to a running [`Downstream`](crate::Downstream)
/// proxy is named as the proxy, with where it forwards to.
pub(crate) fn words(seen: &Seen) -> String {
    if let Seen::Blocked(BlockedCall::Socket {
        call,
        remote: Some(remote),
        ..
    }) = seen
        && let Some(proxy) = crate::downstream::proxy_at(*remote)
    {
        return format!("{call}() on its connection to {proxy}");
    }
    seen.to_string()
}

/// How many samples were taken at `route` and outside any response, and of what: the
/// detail behind a named call, or why none was named — or, where nothing is sampled here,
/// why.
pub(crate) fn tally(calls: &Calls, route: &Place) -> String {
    if let Some(why) = crate::blocked_call::unread() {
        return format!("the workers were not sampled: {why}");
    }
    let of = |place: &Place| {
        let samples = calls.at(place);
        let all: u32 = samples.iter().map(|(_, n)| n).sum();
        let running: u32 = samples
            .iter()
            .filter(|(seen, _)| *seen == Seen::Running)
            .map(|(_, n)| n)
            .sum();
        (all, running)
    };
    let ((in_polls, running), (outside, running_outside)) = (of(route), of(&Place::Outside));
    let said = format!(
        "the workers were sampled every {} ms while any ran: {in_polls} times in its polls ({running} running, {} asleep in the kernel), {outside} outside any response ({running_outside} running, {} asleep)",
        crate::pool::sampler::TICK.as_secs_f64() * 1e3,
        in_polls - running,
        outside - running_outside
    );
    said
}

/// The whole stack of the commonest wait at `route` and outside any response, where one
/// was read, or why none is read here: the detail behind a named call
/// (`PERFSHAPE_REPORT=full`, the JSON). Named only for a report that is not a hold: naming
/// frames reads the binary's debug information.
pub(crate) fn stacks(calls: &Calls, route: &Place) -> Vec<String> {
    let mut lines = Vec::new();
    let mut slept = false;
    for place in [route, &Place::Outside] {
        let Some((seen, stack)) = held_in(calls, place) else {
            continue;
        };
        slept = true;
        if let Some(stack) = stack {
            lines.push(format!(
                "the worker's stack in {} {}: {}",
                words(&seen),
                match place {
                    Place::Outside => "outside any response",
                    Place::Route(_) => "in its polls",
                },
                stack.frames()
            ));
        }
    }
    if slept {
        lines.push(crate::stack::reading());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocked_call::BlockedCall;

    #[test]
    fn a_wait_is_named_by_its_commonest_call_at_its_place() {
        if !crate::blocked_call::available() {
            let said = named(None, &route("GET", "/x"), Hold::Waits).unwrap();
            assert!(said.contains("not read"), "{said}");
            return;
        }
        let mut calls = Calls::default();
        let file = BlockedCall::File {
            call: "write",
            path: "/tmp/audit.log".into(),
        };
        calls.add(route("GET", "/order"), Seen::Blocked(file), 31);
        calls.add(route("GET", "/order"), Seen::Blocked(BlockedCall::Lock), 9);
        calls.add(route("GET", "/order"), Seen::Running, 12);
        calls.add(Place::Outside, Seen::Blocked(BlockedCall::Sleep), 5);
        let said = named(Some(&calls), &route("GET", "/order?n=1"), Hold::Waits).unwrap();
        assert_eq!(
            said,
            "the kernel saw it blocked in write() of /tmp/audit.log, in 31 of the 40 samples that caught the worker waiting"
        );
        let said = named(Some(&calls), &route("GET", "/order"), Hold::WaitsInATask).unwrap();
        assert!(
            said.contains("clock_nanosleep(): a sleep, in 5 of the 5"),
            "{said}"
        );
        assert_eq!(
            call(&calls, &route("GET", "/order"), Hold::Waits).as_deref(),
            Some("write() of /tmp/audit.log")
        );
        assert_eq!(call(&calls, &route("GET", "/order"), Hold::Computes), None);
        let said = named(Some(&calls), &route("GET", "/order"), Hold::Computes).unwrap();
        assert!(
            said.contains("running, in no system call, in 12 of 52"),
            "{said}"
        );
        assert_eq!(
            named(Some(&calls), &route("GET", "/none"), Hold::Waits),
            None
        );
    }
}
