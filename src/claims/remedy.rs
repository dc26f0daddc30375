//! What a report on a blocked worker tells the team to do: the likely cause in their terms
//! and the change that fixes it, for the three ways a handler holds its worker — it waits
//! (or sleeps in the kernel) inside a poll, or it computes a long stretch in one.

use crate::claim::Advice;

/// How a handler held its worker past its allowance, by the criterion that used most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Its polls waited past the allowance, or slept in the kernel in most requests.
    Waits,
    /// One poll computed past the budget.
    Computes,
}

/// The advice for a route (`who`: "the handler", "/export") that holds its worker `how`.
pub(crate) fn for_hold(who: &str, how: Hold) -> Advice {
    match how {
        Hold::Waits => Advice::new(
            format!(
                "{who} makes a synchronous call on the async worker — a sync database driver (diesel, rusqlite, postgres), std::fs, a std mutex another thread holds, std::thread::sleep — and the worker can run nothing else until it returns"
            ),
            "run that call in tokio::task::spawn_blocking (or a pool's interact), or use the async API (sqlx, tokio-postgres, tokio::fs, tokio::sync::Mutex)",
        ),
        Hold::Computes => Advice::new(
            format!(
                "{who} computes a long stretch in one poll — hashing, compression, parsing or serialising a large body, a loop over many rows — and gives its worker back only at the end"
            ),
            "move the stretch into tokio::task::spawn_blocking (or rayon), or split it with tokio::task::yield_now() between pieces of under a millisecond",
        ),
    }
}
