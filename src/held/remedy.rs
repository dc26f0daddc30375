//! What a report on a blocked worker tells the team to do: the likely cause in their terms
//! and the change that fixes it, for the ways a route holds its worker — it waits (or sleeps
//! in the kernel) inside a poll, a task it spawned or another task on the worker does, or it
//! computes a long stretch in one poll.

use crate::claim::Advice;

/// How a handler held its worker past its allowance, by the criterion that used most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Its polls waited past the allowance, or slept in the kernel in most requests.
    Waits,
    /// One poll computed past the budget.
    Computes,
    /// The worker waited outside the route's own polls: in a task its requests spawned, or
    /// another task on the worker (a background job).
    WaitsInATask,
}

/// The advice for a route (`who`: "the handler", "/export") that holds its worker `how`;
/// `call`, the call the kernel saw the worker sleep in ([`called::call`](super::called::call)),
/// is named in the cause where it was sampled, in place of the list of likely ones.
pub(crate) fn for_hold(who: &str, how: Hold, call: Option<String>) -> Advice {
    let likely = "a sync database driver (diesel, rusqlite, postgres), std::fs, a std mutex another thread holds, std::thread::sleep";
    let what = match &call {
        Some(call) => format!("in {call}"),
        None => likely.to_string(),
    };
    match how {
        Hold::Waits => Advice::new(
            format!(
                "{who} makes a synchronous call on the async worker — {what} — and the worker can run nothing else until it returns"
            ),
            "run that call in tokio::task::spawn_blocking (or a pool's interact), or use the async API (sqlx, tokio-postgres, tokio::fs, tokio::sync::Mutex); tokio::task::block_in_place keeps it on the task but hands the worker's core to another thread first (multi-thread runtime only)",
        ),
        Hold::WaitsInATask => Advice::new(
            format!(
                "while {who} ran, the worker slept in the kernel outside its own polls{}: a task its requests spawned (a fire-and-forget write, an audit log) or a background job on the same workers makes a synchronous call, and the worker can run nothing else until it returns",
                call.as_deref()
                    .map(|c| format!(", in {c}"))
                    .unwrap_or_default()
            ),
            "in that task, run the call in tokio::task::spawn_blocking or use the async API; the report's reading with no load says whether a background job does it whatever the requests",
        ),
        Hold::Computes => Advice::new(
            format!(
                "{who} computes a long stretch in one poll — hashing, compression, parsing or serialising a large body, a loop over many rows — and gives its worker back only at the end"
            ),
            "move the stretch into tokio::task::spawn_blocking (or rayon), wrap it in tokio::task::block_in_place (multi-thread runtime only), or split it with tokio::task::yield_now() between pieces of under a millisecond",
        ),
    }
}
