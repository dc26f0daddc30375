//! The call that held the worker, named where the kernel says it (Linux): a note synced to
//! a file with `std::fs` names the file, and a cache read behind a std mutex that another
//! thread holds across its rebuild names the lock — each beside its twin, which holds
//! (`tokio::fs`; the rebuild done outside the lock). The cache's readers meet the lock in
//! some rounds and not in others: blocking that comes and goes is blocking.

use perfshape::{Checked, PoolSettings, Result, Target, Verdict};

use crate::common::{decided, journal};

/// The journal service on one worker, writing into a folder of its own.
fn served(brief: bool) -> Result<(Target, tempfile::TempDir)> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let target = Target::serve(
        PoolSettings::workers(1)?,
        journal::app(dir.path().join("journal.log"), brief),
    )?;
    Ok((target, dir))
}

/// `checked` came out `expected` where this build reads what the claim needs; its whole
/// report where it did.
fn expect(checked: &Checked, expected: Verdict) -> Option<String> {
    let verdict = decided(checked)?;
    let report = format!("{:#}", checked.report());
    assert_eq!(verdict, expected, "{report}");
    Some(report)
}

/// `checked` is broken, its cause naming a lock, where this build reads what it needs.
fn expect_a_lock(checked: &Checked) {
    if let Some(report) = expect(checked, Verdict::Broken) {
        let cause = &checked.report().advice().as_ref().expect("a cause").cause;
        assert!(cause.contains("in futex(): a lock"), "{report}");
    }
}

#[test]
fn a_note_synced_with_std_fs_blocks_and_its_report_names_the_file() -> Result {
    let (target, dir) = served(false)?;
    // Each note waits ≈0.1 ms for its sync: 40 at a time give the sampler (every 0.5 ms)
    // dozens of waits to meet where 20 gave it as few as two.
    let checked = target
        .post("/note")
        .concurrency(40)
        .does_not_block_its_worker()
        .check()?;
    if let Some(report) = expect(&checked, Verdict::Broken) {
        let file = dir.path().join("journal.log");
        let cause = &checked.report().advice().as_ref().expect("a cause").cause;
        assert!(
            cause.contains(&format!("of {}", file.display())),
            "the cause names the file: {report}"
        );
        assert!(
            checked
                .report()
                .finding()
                .is_some_and(|f| f.starts_with("blocked in ")),
            "{report}"
        );
    }
    Ok(())
}

#[test]
fn a_note_written_with_tokio_fs_holds() -> Result {
    let (target, _dir) = served(false)?;
    let checked = target
        .post("/note?async=1")
        .does_not_block_its_worker()
        .check()?;
    expect(&checked, Verdict::Holds);
    Ok(())
}

#[test]
fn a_cache_read_behind_a_lock_held_across_the_rebuild_blocks() -> Result {
    let (target, _dir) = served(false)?;
    // 40 at a time: a fan-out of 20 lasted 2 ms, and with a core busy the rebuilder, woken
    // while the fan-out held both cores, took its lock only after it — 23 rounds in a row
    // met no lock. A fan-out as long as the scheduler's delay gives it its turn inside.
    let checked = target
        .get("/cached")
        .concurrency(40)
        .does_not_block_its_worker()
        .check()?;
    expect_a_lock(&checked);
    Ok(())
}

/// A lock another thread holds 5 ms of every 15 ms, read on the worker by a handler that
/// renders for 0.25 ms, at the claim's own concurrency: its rounds meet the holder's
/// windows (a reporter saw rounds in step with such a holder's period meet none of them).
#[test]
fn a_lock_held_a_third_of_the_time_blocks() -> Result {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let target = Target::serve(
        PoolSettings::workers(1)?,
        journal::app_rebuilt_every(
            dir.path().join("journal.log"),
            false,
            std::time::Duration::from_millis(15),
        ),
    )?;
    let checked = target
        .get("/cached/rendered")
        .does_not_block_its_worker()
        .check()?;
    expect_a_lock(&checked);
    Ok(())
}

#[test]
fn a_cache_swapped_in_briefly_holds() -> Result {
    let (target, _dir) = served(true)?;
    let checked = target.get("/cached").does_not_block_its_worker().check()?;
    expect(&checked, Verdict::Holds);
    Ok(())
}

/// Each path of the held app, served on one worker, breaks `does_not_block_its_worker`,
/// and the claim's cause names the line of `tests/apps/held.rs` the path's handler made
/// its call from, and each of the path's words (the call, the library function).
fn causes_name_their_lines(cases: &[(&str, &[&str])]) -> Result {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let app = crate::common::held::app(
        dir.path().join("journal.log"),
        crate::common::held::upstream(),
    );
    let target = Target::serve(PoolSettings::workers(1)?, app)?;
    for &(path, words) in cases {
        let checked = target.get(path).does_not_block_its_worker().check()?;
        let Some(report) = expect(&checked, Verdict::Broken) else {
            continue;
        };
        // Where the kernel's reads are made (the portable build names no call).
        if cfg!(any(perfshape_portable, not(target_os = "linux"))) {
            continue;
        }
        let cause = &checked.report().advice().as_ref().expect("a cause").cause;
        let line = format!(
            "({}:{})",
            crate::common::held::FILE,
            crate::common::held::line_of(path)
        );
        for said in words.iter().chain([&line.as_str()]) {
            assert!(
                cause.contains(said),
                "{path}: the cause names {said}: {report}"
            );
        }
    }
    Ok(())
}

/// Two claims that both see the worker asleep in `futex()` — a std mutex another thread
/// holds, and rayon awaited by blocking — name different frames: the line of each handler
/// in `tests/apps/held.rs`, and the library call it made there.
#[test]
fn two_waits_in_futex_name_their_own_lines() -> Result {
    causes_name_their_lines(&[
        (
            "/mutex",
            &["futex()", "std::sync::poison::mutex::Mutex<T>::lock"],
        ),
        (
            "/rayon",
            &["futex()", "rayon_core::thread_pool::ThreadPool::install"],
        ),
    ])
}

/// Calls shorter than the sampler's tick — a line synced, a 300 µs sleep, a std mutex
/// another thread holds for 1 ms — break the claim, and its cause names the call and the
/// line of `tests/apps/held.rs` that made it: the kernel hands over the worker's stack as
/// it leaves its CPU, however short the sleep.
#[test]
fn calls_shorter_than_the_tick_name_their_lines() -> Result {
    causes_name_their_lines(&[
        ("/line", &["fsync()"]),
        ("/nap", &["clock_nanosleep()"]),
        ("/brief-lock", &["futex()"]),
    ])
}
