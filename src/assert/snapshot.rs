//! An `assert_shape!`'s snapshot: compared after the gate has had its say, so that a
//! failing claim fails with perfshape's report rather than a snapshot's diff; and, on a
//! first run, written and kept, so that a team's first `cargo nextest run` with a new shape
//! test passes and leaves files to review and commit.
//!
//! insta, by default, fails an assertion whose snapshot does not exist yet and writes what
//! it saw beside it as `<name>.snap.new`, for `cargo insta review` — a tool a team adding
//! perfshape may not have. `assert_shape!` keeps that new file as the snapshot instead,
//! where insta wrote one (never in CI: insta writes none there, and a missing snapshot fails
//! as insta's does), and says so. A snapshot that exists and differs is insta's to report,
//! unchanged; so is any run where `INSTA_UPDATE` (or `cargo insta test`) chooses.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where an assertion is, as the macro that makes it sees it (`file!()`, `line!()`,
/// `env!("CARGO_MANIFEST_DIR")` expanded in the test's own crate).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Assertion {
    /// The test's source file, as rustc names it (from the workspace's root).
    pub file: &'static str,
    /// The line of the `assert_shape!` there.
    pub line: u32,
    /// The test's package.
    pub manifest_dir: &'static str,
}

/// `checked`'s snapshot compared by insta's `assert` (where it is due), then the gate: a
/// claim that fails the gate fails the test with its own failure, whatever the snapshot
/// said (insta's diff is printed, and its `.snap.new` kept for review); one that passes it
/// fails where the snapshot differs, as insta's assertion does.
#[doc(hidden)]
pub fn asserted(checked: &crate::Checked, at: Assertion, assert: impl FnOnce()) {
    let compared = if checked.snapshot_due() {
        catch_unwind(AssertUnwindSafe(|| compared(at, assert)))
    } else {
        Ok(())
    };
    if let Err(failed) = checked.gate() {
        panic!("{failed:?}");
    }
    if let Err(panic) = compared {
        resume_unwind(panic);
    }
}

/// Runs insta's `assert`; where it fails only because its snapshot is new and insta wrote
/// it as `.snap.new` (a first run, outside CI), keeps that file as the snapshot and returns.
/// Any other failure is insta's, and goes on unchanged.
#[doc(hidden)]
pub fn compared(at: Assertion, assert: impl FnOnce()) {
    kept_if_new(at, insta_left_it_to_us(), assert);
}

/// [`compared`], where `by_default` says whether insta chose by default.
fn kept_if_new(at: Assertion, by_default: bool, assert: impl FnOnce()) {
    // A file's time is the kernel's coarse clock, which can lag the precise one by a tick.
    let began = SystemTime::now() - std::time::Duration::from_secs(1);
    let Err(panic) = catch_unwind(AssertUnwindSafe(assert)) else {
        return;
    };
    if !by_default {
        resume_unwind(panic);
    }
    match pending(&at, began).as_deref().map(kept) {
        Some(Ok(path)) => eprintln!(
            "perfshape: a new snapshot, written to {} (the first run of this assertion): \
             review it and commit it",
            path.display()
        ),
        Some(Err(e)) => {
            eprintln!("perfshape: could not keep the new snapshot: {e}");
            resume_unwind(panic)
        }
        None => resume_unwind(panic),
    }
}

/// Whether insta chose by default: no `INSTA_UPDATE` but `auto`, and not run by
/// `cargo insta test`, which reviews new snapshots itself.
fn insta_left_it_to_us() -> bool {
    let update = std::env::var("INSTA_UPDATE").unwrap_or_default();
    (update.is_empty() || update == "auto") && std::env::var_os("INSTA_CARGO_INSTA").is_none()
}

/// The `.snap.new` insta wrote for this assertion just now where no `.snap` is: in the
/// `snapshots` folder beside the test's file, naming the file and line in its header. None
/// where there is no such file, or more than one.
fn pending(at: &Assertion, began: SystemTime) -> Option<PathBuf> {
    let file = source(at)?;
    let folder = file.parent()?.join("snapshots");
    // insta names the source from the workspace's root, with `/` on every platform.
    let file_name = file.file_name()?.to_str()?;
    let line = format!("assertion_line: {}", at.line);
    let mut found = std::fs::read_dir(&folder).ok()?.filter_map(|entry| {
        let path = entry.ok()?.path();
        let stem = path.file_name()?.to_str()?.strip_suffix(".snap.new")?;
        let fresh = path.metadata().ok()?.modified().ok()? >= began;
        let text = std::fs::read_to_string(&path).ok()?;
        let ours = header(&text).any(|l| l == line)
            && header(&text).any(|l| {
                l.strip_prefix("source: ")
                    .is_some_and(|source| source.rsplit('/').next() == Some(file_name))
            });
        let snap = folder.join(format!("{stem}.snap"));
        (fresh && ours && !snap.exists()).then_some(path)
    });
    let path = found.next()?;
    found.next().is_none().then_some(path)
}

/// The test's source file: `file` taken from the first folder, from the package's up, that
/// holds it (rustc names it from the workspace's root, which may be above the package).
fn source(at: &Assertion) -> Option<PathBuf> {
    Path::new(at.manifest_dir)
        .ancestors()
        .map(|folder| folder.join(at.file))
        .find(|path| path.is_file())
}

/// The lines of a snapshot's header, between its two `---`.
fn header(text: &str) -> impl Iterator<Item = &str> {
    text.lines().skip(1).take_while(|line| *line != "---")
}

/// `new` kept as its `.snap`, without the line number insta records only in pending files
/// (a kept snapshot does not change when the test moves).
fn kept(new: &Path) -> std::io::Result<PathBuf> {
    let text = std::fs::read_to_string(new)?;
    let mut fences = 0;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if fences < 2 && line.trim_end() == "---" {
            fences += 1;
        } else if fences == 1 && line.starts_with("assertion_line:") {
            continue;
        }
        out.push_str(line);
    }
    let name = new.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let snap = new.with_file_name(name.trim_end_matches(".new"));
    std::fs::write(&snap, out)?;
    std::fs::remove_file(new)?;
    Ok(snap)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PENDING: &str = "---\nsource: tests/shape.rs\nassertion_line: 12\nexpression: checked.summary()\n---\nclaim: x\nverdict: holds\n";

    #[test]
    fn a_kept_snapshot_loses_only_its_line_number() {
        let dir = std::env::temp_dir().join(format!("perfshape-kept-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let new = dir.join("shape__placing_an_order.snap.new");
        std::fs::write(&new, PENDING).unwrap();
        let snap = kept(&new).unwrap();
        assert_eq!(snap, dir.join("shape__placing_an_order.snap"));
        assert!(!new.exists());
        assert_eq!(
            std::fs::read_to_string(&snap).unwrap(),
            "---\nsource: tests/shape.rs\nexpression: checked.summary()\n---\nclaim: x\nverdict: holds\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A package in a folder of its own, with `tests/shape.rs` and its snapshots' folder.
    fn package(name: &str) -> (PathBuf, Assertion) {
        let dir = std::env::temp_dir().join(format!("perfshape-{name}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("tests/snapshots")).unwrap();
        std::fs::write(dir.join("tests/shape.rs"), "// a test").unwrap();
        let manifest_dir = Box::leak(dir.to_string_lossy().into_owned().into_boxed_str());
        let at = Assertion {
            file: "tests/shape.rs",
            line: 12,
            manifest_dir,
        };
        (dir, at)
    }

    /// What insta does on a first run: writes the pending file, then fails.
    fn insta_on_a_first_run(dir: &Path) -> impl FnOnce() {
        let new = dir.join("tests/snapshots/shape__placing_an_order.snap.new");
        move || {
            std::fs::write(new, PENDING).unwrap();
            panic!("snapshot assertion for 'placing_an_order' failed in line 12");
        }
    }

    #[test]
    fn a_first_run_keeps_the_snapshot_insta_wrote_and_passes() {
        let (dir, at) = package("first-run");
        kept_if_new(at, true, insta_on_a_first_run(&dir));
        let snap = dir.join("tests/snapshots/shape__placing_an_order.snap");
        assert!(
            std::fs::read_to_string(&snap)
                .unwrap()
                .ends_with("verdict: holds\n")
        );
        assert!(!snap.with_extension("snap.new").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_snapshot_that_exists_and_differs_fails_as_insta_does() {
        let (dir, at) = package("differs");
        std::fs::write(
            dir.join("tests/snapshots/shape__placing_an_order.snap"),
            "old",
        )
        .unwrap();
        let failed = catch_unwind(AssertUnwindSafe(|| {
            kept_if_new(at, true, insta_on_a_first_run(&dir));
        }));
        assert!(failed.is_err());
        let snap = dir.join("tests/snapshots/shape__placing_an_order.snap");
        assert_eq!(std::fs::read_to_string(snap).unwrap(), "old");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn where_insta_was_told_what_to_do_a_first_run_fails_as_insta_does() {
        let (dir, at) = package("told");
        let failed = catch_unwind(AssertUnwindSafe(|| {
            kept_if_new(at, false, insta_on_a_first_run(&dir));
        }));
        assert!(failed.is_err());
        assert!(
            !dir.join("tests/snapshots/shape__placing_an_order.snap")
                .exists()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_header_is_read_between_its_fences() {
        let lines: Vec<&str> = header(PENDING).collect();
        assert_eq!(
            lines,
            [
                "source: tests/shape.rs",
                "assertion_line: 12",
                "expression: checked.summary()"
            ]
        );
    }
}
