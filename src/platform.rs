//! Which platform this build reads the machine on, and the words for a read it does not make.
//!
//! perfshape measures fully on Linux, where `/proc` gives the machine's CPU, each thread's
//! time on a run queue, a cgroup's CPU quota and the process behind a local port. Elsewhere it
//! builds and runs the same claims with what the platform has — a worker thread's own CPU
//! clock on every Unix — and a claim that needs a missing read is inconclusive, saying which
//! read and where it is made. Each read sits behind `cfg(linux_reads)` (set by `build.rs`) in
//! the module of its concern: `thread_clock` (the run queue), `usage` (the machine's
//! and the pools' CPU), `cpu_quota`, `service_process`.
//!
//! `PERFSHAPE_PORTABLE=1` in the build's environment (or `--cfg perfshape_portable` in
//! `RUSTFLAGS`) compiles those fallbacks on Linux too, so that CI builds and runs what a Mac
//! runs (`.ci/run`; `build.rs` says how the two differ).

/// The platform as a report names it.
pub(crate) const NAME: &str = if cfg!(linux_reads) {
    "Linux"
} else if cfg!(target_os = "linux") {
    "this portable build (PERFSHAPE_PORTABLE=1)"
} else if cfg!(target_os = "macos") {
    "macOS"
} else if cfg!(windows) {
    "Windows"
} else {
    "this platform"
};

/// `"{what} is not read on macOS (Linux reads it: {how})"`: why a claim that needs the read
/// is inconclusive here.
pub(crate) fn not_read(what: &str, how: &str) -> String {
    let on = if cfg!(target_os = "linux") {
        "in"
    } else {
        "on"
    };
    format!("{what} is not read {on} {NAME}; perfshape reads it on Linux ({how})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_read_names_the_read_the_platform_and_where_it_is_made() {
        let said = not_read("the machine's CPU", "/proc/stat");
        assert!(said.starts_with("the machine's CPU is not read "), "{said}");
        assert!(
            said.contains(NAME) && said.ends_with("(/proc/stat)"),
            "{said}"
        );
    }
}
