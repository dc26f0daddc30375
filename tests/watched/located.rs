//! Where in the code: each kind of call that holds a worker, sent the functional requests
//! its route needs to be decided (three where one cannot tell a call from a brief lock —
//! a lock waited for, a sync of a small file — or where the first sample of a new
//! connection's other end is spent finding it; two for a spawned task's sleep, which a busy
//! machine's sampler can meet in no tick, or meet once with its stack unread; one for a
//! stretch of computing) and watched; the report names the function and the line of
//! `tests/apps/held.rs` that made the call, and the library function it called. The two
//! that sleep in `futex()` — a std mutex another thread holds, rayon awaited by blocking —
//! name different frames.

use perfshape::{PoolSettings, Result, Target};

use crate::common::held;
use crate::{client, get};

/// `path` requested `n` times on the held app; the report is broken, names the call
/// `call`, the line marked for `path` in `held.rs`, and the library function `via` the
/// code there called.
async fn names_the_line(path: &str, n: usize, call: &str, via: &str) -> Result {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let upstream = perfshape::Downstream::to(held::upstream().to_string()).start()?;
    let app = held::app(dir.path().join("journal.log"), upstream.addr());
    let target = Target::serve(PoolSettings::workers(1)?, app)?;
    let watch = target.watch()?;
    let client = client();
    for _ in 0..n {
        get(&client, &target, path).await?;
    }
    crate::assert_names_the_line(&watch.nothing_blocked()?, path, call, Some(via));
    Ok(())
}

#[tokio::test]
async fn a_synced_write_names_its_line() -> Result {
    names_the_line("/fsync", 3, "fdatasync()", "std::fs::File::sync_data").await
}

#[tokio::test]
async fn a_synced_line_names_its_line() -> Result {
    names_the_line("/line", 3, "fsync()", "std::fs::File::sync_all").await
}

#[tokio::test]
async fn a_sleep_shorter_than_the_tick_names_its_line() -> Result {
    names_the_line("/nap", 3, "clock_nanosleep()", "std::thread::").await
}

#[tokio::test]
async fn a_lock_held_a_millisecond_names_its_line() -> Result {
    names_the_line("/brief-lock", 3, "futex()", "std::sync::").await
}

#[tokio::test]
async fn a_socket_read_through_a_downstream_names_its_line() -> Result {
    names_the_line(
        "/socket",
        3,
        "perfshape's Downstream",
        "std::io::Read::read_exact",
    )
    .await
}

#[tokio::test]
async fn a_std_mutex_another_thread_holds_names_its_line() -> Result {
    names_the_line("/mutex", 3, "futex()", "std::sync::").await
}

#[tokio::test]
async fn rayon_awaited_by_blocking_names_its_line() -> Result {
    names_the_line(
        "/rayon",
        3,
        "futex()",
        "rayon_core::thread_pool::ThreadPool::install",
    )
    .await
}

#[tokio::test]
async fn a_spawned_task_that_sleeps_names_its_line() -> Result {
    names_the_line("/spawned", 2, "clock_nanosleep()", "std::thread::").await
}

#[tokio::test]
async fn a_long_stretch_of_computing_names_its_line() -> Result {
    names_the_line(
        "/sort",
        1,
        "computed",
        "core::slice::<impl [T]>::sort_unstable",
    )
    .await
}

/// A stretch this build cannot judge — 10 ms of CPU in one poll, past the optimised budget
/// and under the unoptimised one — is inconclusive, naming the profile line that makes it
/// decisive and the function that computed; in an optimised build it is broken. Its loop
/// spans three lines, and a busy machine's samples fall on any of them: the function and
/// its file are asserted.
#[tokio::test]
async fn a_stretch_this_build_cannot_judge_names_its_line() -> Result {
    let (_dir, target) = held_served()?;
    let watch = target.watch()?;
    get(&client(), &target, "/stretch").await?;
    let checked = watch.nothing_blocked()?;
    let said = format!("{:#}", checked.report());
    let Some(verdict) = crate::decided(&checked) else {
        return Ok(());
    };
    if cfg!(debug_assertions) {
        assert_eq!(verdict, perfshape::Verdict::Inconclusive, "{said}");
        assert!(said.contains("opt-level = 1"), "{said}");
    } else {
        assert_eq!(verdict, perfshape::Verdict::Broken, "{said}");
    }
    if cfg!(all(target_os = "linux", not(perfshape_portable))) {
        let place = format!("`watched::common::held::stretch` ({}", held::FILE);
        assert!(said.contains(&place), "{place}: {said}");
    }
    Ok(())
}

/// The held app served on one worker, its journal in a temporary directory (kept while the
/// test runs), `/socket` asking the echo server directly.
fn held_served() -> Result<(tempfile::TempDir, Target)> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let app = held::app(dir.path().join("journal.log"), held::upstream());
    Ok((dir, Target::serve(PoolSettings::workers(1)?, app)?))
}

/// Reading where in the code never cuts a call short: the calls a signal would interrupt
/// (a sleep, `poll`, `epoll_wait` and a futex wait with timeouts, a socket read with a
/// receive timeout), made on the worker while the watch reads its stacks, return as they
/// would unwatched — none with EINTR — and the report names the line they were made from.
#[tokio::test]
async fn reading_where_cuts_no_call_short() -> Result {
    let (_dir, target) = held_served()?;
    let watch = target.watch()?;
    let client = client();
    for _ in 0..5 {
        let answered = get(&client, &target, "/interruptible").await?;
        let cut_short = answered.text().await.expect("a count");
        assert_eq!(cut_short, "0", "calls cut short (EINTR) while watched");
    }
    let checked = watch.nothing_blocked()?;
    let said = format!("{:#}", checked.report());
    if crate::decided(&checked).is_some() && cfg!(all(target_os = "linux", not(perfshape_portable)))
    {
        assert!(said.contains(&format!("({}:", held::FILE)), "{said}");
    }
    Ok(())
}
