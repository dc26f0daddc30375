//! A captured stack's frames by name, file and line, and which of them is the team's own
//! code: the innermost frame that is not the standard library's, the runtime's, a
//! registry crate's or perfshape's own, and the call it made into them.
//!
//! Names come from the binary's symbols and lines from its debug information (a test
//! build has its line tables; a release build without `debug` names the function alone),
//! read where stacks are ([`Stack::frames`](super::Stack::frames)). Naming runs only when
//! a report names the frame, never while a claim measures.

/// One frame of a stack, inlined frames counted as frames of their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Frame {
    /// The function, demangled, without its hash: `shop::audit::append::{{closure}}`.
    pub(crate) function: String,
    /// Its source file, where the debug information gives it.
    pub(crate) file: Option<std::path::PathBuf>,
    /// Its line in that file.
    pub(crate) line: Option<u32>,
}

impl Frame {
    /// Whether this frame is the team's code: a Rust function in a file outside the Rust
    /// toolchain's sources, cargo's registry and git checkouts, and perfshape's own `src/`;
    /// or, where no file is known, outside the standard library, tokio and perfshape.
    fn is_the_teams(&self) -> bool {
        match &self.file {
            // A Rust source (a C library's are `.c` and `.S`) outside the toolchain's, the
            // registry's and perfshape's own.
            Some(file) => {
                let file = file.to_string_lossy();
                let own_src = concat!(env!("CARGO_MANIFEST_DIR"), "/src/");
                file.ends_with(".rs")
                    && !(file.starts_with("/rustc/")
                        || file.contains("/rustlib/src/")
                        || file.starts_with("library/")
                        || file.contains("/.cargo/registry/")
                        || file.contains("/.cargo/git/")
                        || file.contains("/cargo/registry/")
                        || file.starts_with(own_src))
            }
            // A Rust path (a C library's function, `fdatasync`, is none) outside the
            // standard library, tokio and perfshape.
            None => {
                let name = self.function.trim_start_matches('<');
                name.contains("::")
                    && !["std::", "core::", "alloc::", "tokio::", "perfshape::"]
                        .iter()
                        .any(|p| name.starts_with(p))
            }
        }
    }

    /// Whether the frame's function is in one of the crates `own` names.
    fn is_in(&self, own: &[String]) -> bool {
        let name = self.function.trim_start_matches('<');
        name.split_once("::")
            .is_some_and(|(krate, _)| own.iter().any(|own| own == krate))
    }

    /// Whether the frame has the file of a crate's Rust source: the team's, or a registry's —
    /// not the C library's, nor the Rust toolchain's.
    fn has_a_crates_file(&self) -> bool {
        self.file.as_ref().is_some_and(|file| {
            let file = file.to_string_lossy();
            file.ends_with(".rs")
                && !(file.starts_with("/rustc/")
                    || file.contains("/rustlib/src/")
                    || file.starts_with("library/"))
        })
    }

    /// Whether the debug information names the function by its path (`shop::audit::append`)
    /// rather than by the short name a build with line tables alone gives a closure or an
    /// async body (`{async_fn#0}`).
    fn has_a_path(&self) -> bool {
        self.function.contains("::") && !self.function.starts_with('{')
    }

    /// The function as a report names it: without the `{{closure}}` an async function's
    /// body is compiled into.
    pub(crate) fn function_name(&self) -> String {
        let mut name = self.function.as_str();
        while let Some(outer) = name
            .strip_suffix("::{{closure}}")
            .or_else(|| name.strip_suffix("::{closure#0}"))
        {
            name = outer;
        }
        // `<std::fs::File>::sync_data`, a type's own method, reads as its path does.
        if let Some(rest) = name.strip_prefix('<')
            && let Some((ty, method)) = rest.split_once(">::")
            && !ty.contains(" as ")
            && !ty.contains('<')
        {
            return format!("{ty}::{method}");
        }
        name.to_string()
    }

    /// The name a report gives the function: its path, or the short name a closure or an
    /// async body has in a build with line tables alone.
    pub(crate) fn shown_name(&self) -> String {
        if self.has_a_path() {
            self.function_name()
        } else {
            self.function.clone()
        }
    }

    /// `file:line`, relative to the current directory (a test's is its crate's root)
    /// where the file is under it.
    pub(crate) fn place(&self) -> Option<String> {
        let file = lexical(self.file.as_ref()?);
        let shown = std::env::current_dir()
            .ok()
            .and_then(|dir| file.strip_prefix(dir).ok().map(|f| f.to_path_buf()))
            .unwrap_or(file);
        Some(match self.line {
            Some(line) => format!("{}:{line}", shown.display()),
            None => shown.display().to_string(),
        })
    }
}

/// `path` with each `dir/..` taken out, as a module included by `#[path]` is recorded
/// (`tests/watched/../apps/held.rs` is `tests/apps/held.rs`).
fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut kept: Vec<Component<'_>> = Vec::new();
    for part in path.components() {
        match part {
            Component::ParentDir if matches!(kept.last(), Some(Component::Normal(_))) => {
                kept.pop();
            }
            Component::CurDir => {}
            other => kept.push(other),
        }
    }
    kept.iter().collect()
}

impl std::fmt::Display for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.place() {
            Some(place) => write!(f, "{} ({place})", self.function),
            None => f.write_str(&self.function),
        }
    }
}

/// A stack's frames, innermost first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Frames(pub(crate) Vec<Frame>);

impl Frames {
    /// The innermost frame in the team's code, and the frame just inside it — the
    /// library function it called (`std::fs::File::sync_data`) — where there is one.
    pub(crate) fn the_teams(&self) -> Option<(&Frame, Option<&Frame>)> {
        self.the_teams_among(own_crates())
    }

    /// [`Frames::the_teams`], with `own` the crates that are the team's by name.
    fn the_teams_among(&self, own: &[String]) -> Option<(&Frame, Option<&Frame>)> {
        // Where any crate's frame has its file, the team's has: a build's own crates keep
        // their line tables where its dependencies may not (a file-less `rayon_core::…` is a
        // dependency there); where none has, the names alone tell. The C library's and the
        // toolchain's files say nothing of the build's own (a system's glibc has its line
        // tables in a build with `debug = false`).
        let files = self.0.iter().any(Frame::has_a_crates_file);
        // Where no frame has its file, a dependency's frame (`rusqlite::…`) reads as the
        // team's by its name: the crates that are the team's by name come first.
        let own = (!files)
            .then(|| self.0.iter().position(|f| f.is_in(own)))
            .flatten();
        let at = match own {
            Some(at) => at,
            None => self
                .0
                .iter()
                .position(|f| f.is_the_teams() && (f.file.is_some() || !files))?,
        };
        Some((&self.0[at], at.checked_sub(1).map(|inner| &self.0[inner])))
    }

    /// "called from `shop::audit::append` (src/audit.rs:88) via `std::fs::File::sync_data`":
    /// the words a report adds to the call it names; `None` where no frame is the team's.
    pub(crate) fn called_from(&self) -> Option<String> {
        let (frame, via) = self.the_teams()?;
        // A closure or an async body named by its short name is named by its line first.
        let mut said = match (frame.has_a_path(), frame.place()) {
            (true, Some(place)) => format!("called from `{}` ({place})", frame.function_name()),
            (true, None) => format!("called from `{}`", frame.function_name()),
            (false, Some(place)) => format!("called from {place} (`{}`)", frame.function),
            (false, None) => format!("called from `{}`", frame.function),
        };
        if let Some(via) = via {
            said.push_str(&format!(" via `{}`", via.function_name()));
        }
        Some(said)
    }
}

/// The crates that are the team's own by name, for a build without line tables: the
/// package under test (`CARGO_PKG_NAME`, which cargo and nextest set for a test binary) and
/// the test binary's own crate (its file's name before the hash cargo adds, `watched` of
/// `watched-1a2b3c4d`).
fn own_crates() -> &'static [String] {
    static OWN: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| {
        let package = std::env::var("CARGO_PKG_NAME").ok();
        let binary = std::env::current_exe().ok().and_then(|exe| {
            let stem = exe.file_stem()?.to_string_lossy().into_owned();
            Some(match stem.rsplit_once('-') {
                Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => {
                    name.to_string()
                }
                _ => stem,
            })
        });
        package
            .into_iter()
            .chain(binary)
            .map(|name| name.replace('-', "_"))
            .filter(|name| name != "perfshape")
            .collect()
    })
}

/// The most frames a report shows of a stack: the call, the libraries and the team's
/// frames above it fit; the runtime's frames below the task are cut.
const SHOWN: usize = 24;

impl std::fmt::Display for Frames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, frame) in self.0.iter().take(SHOWN).enumerate() {
            if i > 0 {
                f.write_str(" ← ")?;
            }
            write!(f, "{frame}")?;
        }
        if self.0.len() > SHOWN {
            write!(f, " ← … {} more", self.0.len() - SHOWN)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(function: &str, file: Option<&str>) -> Frame {
        Frame {
            function: function.to_string(),
            file: file.map(Into::into),
            line: Some(7),
        }
    }

    /// A build without line tables: the package's own frame, not the dependency's whose
    /// name reads like a team's.
    #[test]
    fn without_files_the_packages_own_frame_is_the_teams() {
        let frames = Frames(vec![
            frame("fdatasync", None),
            frame("rusqlite::Connection::execute_batch", None),
            frame("rusqlite::transaction::Transaction::commit", None),
            frame("inventory::queries::record", None),
            frame("tokio::runtime::task::core::Core<T,S>::poll", None),
        ]);
        let frames = Frames(
            frames
                .0
                .into_iter()
                .map(|f| Frame { line: None, ..f })
                .collect(),
        );
        let (teams, via) = frames
            .the_teams_among(&["inventory".to_string()])
            .expect("the team's frame");
        assert_eq!(teams.function, "inventory::queries::record");
        assert_eq!(
            via.map(|f| f.function.as_str()),
            Some("rusqlite::transaction::Transaction::commit")
        );
        // With no crate known by name, the innermost frame outside std and tokio.
        let (first, _) = frames.the_teams_among(&[]).expect("a frame");
        assert_eq!(first.function, "rusqlite::Connection::execute_batch");
    }

    #[test]
    fn the_teams_frame_is_the_innermost_outside_the_toolchain_and_the_registry() {
        let frames = Frames(vec![
            frame("fdatasync", None),
            frame(
                "<std::fs::File>::sync_data",
                Some("/rustc/abc/library/std/src/fs.rs"),
            ),
            frame(
                "shop::audit::append::{{closure}}",
                Some("/home/team/shop/src/audit.rs"),
            ),
            frame(
                "tokio::runtime::task::core::Core<T,S>::poll",
                Some(
                    "/home/team/.cargo/registry/src/index.crates.io-1/tokio-1.48.0/src/runtime/task/core.rs",
                ),
            ),
        ]);
        let (teams, via) = frames.the_teams().expect("the team's frame");
        assert_eq!(teams.function_name(), "shop::audit::append");
        assert_eq!(
            via.map(Frame::function_name).as_deref(),
            Some("std::fs::File::sync_data")
        );
        let said = frames.called_from().expect("said");
        assert!(
            said.starts_with("called from `shop::audit::append` (")
                && said.ends_with("audit.rs:7) via `std::fs::File::sync_data`"),
            "{said}"
        );
    }

    #[test]
    fn a_path_through_parent_folders_is_shown_without_them() {
        let mut f = frame(
            "shop::held::mutex",
            Some("tests/watched/../common/../apps/held.rs"),
        );
        f.line = Some(93);
        assert_eq!(f.place().as_deref(), Some("tests/apps/held.rs:93"));
    }

    #[test]
    fn a_closure_known_by_its_short_name_is_named_by_its_line() {
        let frames = Frames(vec![
            frame(
                "__GI___fsync",
                Some("./io/../sysdeps/unix/sysv/linux/fsync.c"),
            ),
            frame("{closure#0}", Some("/home/team/shop/src/driver.rs")),
        ]);
        let said = frames.called_from().expect("said");
        assert!(
            said.starts_with("called from /home/team/shop/src/driver.rs:7 (`{closure#0}`)"),
            "{said}"
        );
    }

    /// A build with `debug = false` (a CI's, often) names its frames from the symbols alone:
    /// the system C library's line tables, which it still has, do not make the team's
    /// file-less frame a dependency's.
    #[test]
    fn a_build_without_line_tables_is_named_by_its_symbols() {
        let frames = Frames(vec![
            frame(
                "__GI___clock_nanosleep",
                Some("sysdeps/unix/sysv/linux/clock_nanosleep.c"),
            ),
            frame("std::thread::functions::sleep", None),
            frame("shop::place::{{closure}}", None),
            frame(
                "<F as axum::handler::Handler<(M,T1),S>>::call::{{closure}}",
                None,
            ),
        ]);
        let said = frames.called_from().expect("said");
        assert_eq!(
            said,
            "called from `shop::place` via `std::thread::functions::sleep`"
        );
    }

    #[test]
    fn perfshape_s_own_source_is_never_the_teams() {
        let own = concat!(env!("CARGO_MANIFEST_DIR"), "/src/server/trace.rs");
        let frames = Frames(vec![frame("perfshape::server::trace::stamp", Some(own))]);
        assert_eq!(frames.the_teams(), None);
    }

    /// This very function's frame, captured by the `backtrace` crate and named here: the
    /// names and lines are read from this test binary.
    #[cfg(linux_reads)]
    #[test]
    fn a_frame_of_this_binary_is_named_with_its_file() {
        let mut addresses = Vec::new();
        backtrace::trace(|frame| {
            addresses.push(frame.ip() as u64);
            addresses.len() < 3
        });
        let frames = crate::stack::capture::named(&addresses);
        assert!(
            frames.0.iter().any(|f| f
                .function
                .contains("a_frame_of_this_binary_is_named_with_its_file")),
            "{frames}"
        );
    }
}
