//! The portable front of where in the code: what a sampler keeps ([`Capturer`]), why
//! nothing is read on a platform ([`unread`], [`unread_computing`]), and a stack's frames
//! by name ([`Stack::frames`]). The reads themselves — a sleeping thread's stack copied
//! while its `syscall` file stays the same, a computing one sampled by the kernel, the
//! unwinding against the modules' own tables — are Linux x86-64's, in `linux.rs`; naming
//! the frames ([`symbols`]) reads the binary's debug information, when a report asks.
//!
//! Cost, measured (`capture_cost` in this file's tests): see docs/where.md.

use super::captured::Stack;
use super::frames::{Frame, Frames};
use crate::blocked_call::Tid;

/// Why where in the code is not read here, or `None` where it is.
pub(crate) fn unread() -> Option<String> {
    if !cfg!(all(linux_reads, target_arch = "x86_64")) {
        return Some(if cfg!(linux_reads) {
            "where in the code is not read here: perfshape unwinds a sleeping worker's stack on x86-64 only".to_string()
        } else {
            format!(
                "where in the code is not read here: {}",
                crate::platform::not_read(
                    "a sleeping worker's stack",
                    "/proc/self/task/TID/syscall and the thread's stack memory"
                )
            )
        });
    }
    crate::blocked_call::unread().map(|why| format!("where in the code is not read here: {why}"))
}

/// Why where a worker computed is not read here, or `None` where it is (so far: the
/// kernel may refuse its sampling when the first worker is followed).
pub(crate) fn unread_computing() -> Option<String> {
    if !cfg!(linux_reads) {
        return Some(format!(
            "where in the code is not read here: {}",
            crate::platform::not_read(
                "a computing worker's stack",
                "the kernel's sampling of its own threads, perf_event_open"
            )
        ));
    }
    if let Some(why) = unread() {
        return Some(why);
    }
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    if let Some(why) = super::linux::REFUSED.get() {
        return Some(format!(
            "where in the code a worker computed is not read here: {why}"
        ));
    }
    None
}

/// Reads stacks on the sampling thread: its copy buffer and the workers it follows, kept
/// from one sample to the next.
#[derive(Default)]
pub(crate) struct Capturer {
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    inner: super::linux::Inner,
}

impl std::fmt::Debug for Capturer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Capturer")
    }
}

impl Stack {
    /// The frames' names, files and lines, inlined frames expanded.
    pub(crate) fn frames(&self) -> Frames {
        named(&addresses(self))
    }
}

/// The code addresses of `stack`'s frames, innermost first, ready for lookup: unwound
/// from its copy here; none where stacks are not read.
pub(super) fn addresses(_stack: &Stack) -> Vec<u64> {
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    return super::unwind::addresses(_stack);
    #[cfg(not(all(linux_reads, target_arch = "x86_64")))]
    Vec::new()
}

/// The frames at `addresses` (innermost first, ready for lookup), each address's inlined
/// frames innermost first; an address no symbol covers is left out.
pub(super) fn named(addresses: &[u64]) -> Frames {
    Frames(
        addresses
            .iter()
            .flat_map(|&address| symbols(address))
            .collect(),
    )
}

/// The frames at `address` (ready for lookup), its inlined frames innermost first: the
/// binary's symbols and line tables, read by the `backtrace` crate, which opens the loaded
/// modules' files once and keeps them.
#[cfg(linux_reads)]
pub(super) fn symbols(address: u64) -> Vec<Frame> {
    let mut frames = Vec::new();
    backtrace::resolve(address as *mut std::ffi::c_void, |symbol| {
        frames.push(Frame {
            function: symbol
                .name()
                .map(|name| format!("{name:#}"))
                .unwrap_or_default(),
            file: symbol.filename().map(|f| f.to_path_buf()),
            line: symbol.lineno(),
        });
    });
    frames
}

/// No stack is captured here, so no address is named.
#[cfg(not(linux_reads))]
pub(super) fn symbols(_address: u64) -> Vec<Frame> {
    Vec::new()
}

impl Capturer {
    /// Reads the process's modules (their code's places and unwind tables, once a process:
    /// ≈1 ms, a few more in a large test binary) on the calling thread — a claim's or a
    /// watch's, as it starts its sampler — so that the sampler never waits for them. A
    /// capture before they are read reads nothing.
    pub(crate) fn prepare() {
        #[cfg(all(linux_reads, target_arch = "x86_64"))]
        let _ = crate::stack::modules::modules();
    }

    /// The stack of thread `tid`, asleep in the call its `syscall` file read as `line`;
    /// `None` where the thread moved on while it was copied, or nothing is read here.
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    pub(crate) fn capture(&mut self, tid: Tid, line: &str) -> Option<Stack> {
        self.inner.capture(tid, line)
    }

    /// Nothing is read here ([`unread`] says why).
    #[cfg(not(all(linux_reads, target_arch = "x86_64")))]
    pub(crate) fn capture(&mut self, _tid: Tid, _line: &str) -> Option<Stack> {
        None
    }

    /// Has the kernel sample thread `tid`'s stack while it computes, from now on (tried
    /// once a thread; a refusal is kept for the reports, [`unread_computing`]): asked here,
    /// or with `later` on a thread of its own, so that a sampler's tick never waits for it.
    pub(crate) fn follow(&mut self, _tid: Tid, _later: bool) {
        #[cfg(all(linux_reads, target_arch = "x86_64"))]
        self.inner.follow(_tid, _later);
    }

    /// The stacks the kernel sampled of thread `tid` while it computed, since the last
    /// call; none where it is not followed.
    pub(crate) fn computed(&mut self, _tid: Tid) -> Vec<Stack> {
        #[cfg(all(linux_reads, target_arch = "x86_64"))]
        return self.inner.computed(_tid);
        #[cfg(not(all(linux_reads, target_arch = "x86_64")))]
        Vec::new()
    }
}

#[cfg(all(test, linux_reads, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// A thread asleep in `std::thread::sleep` for a second, and its kernel id.
    fn sleeper() -> (Tid, std::thread::JoinHandle<()>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            tx.send(crate::blocked_call::current().expect("a tid"))
                .unwrap();
            std::thread::sleep(std::time::Duration::from_secs(1));
        });
        let tid = rx.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        (tid, handle)
    }

    /// A thread asleep in `std::thread::sleep` is unwound through the standard library
    /// (built with frame pointers) up to this test's closure, and named there.
    #[test]
    fn a_sleeping_thread_is_unwound_to_the_code_that_slept() {
        if unread().is_some() {
            return;
        }
        let (tid, handle) = sleeper();
        let line = crate::blocked_call::syscall_line(tid).expect("its syscall file");
        let _ = crate::stack::modules::modules();
        let stack = Capturer::default()
            .capture(tid, &line)
            .expect("the sleeping thread's stack");
        let frames = stack.frames();
        assert!(
            frames.0.iter().any(|f| f.function.contains("sleeper")),
            "{frames}"
        );
        handle.join().unwrap();
    }

    /// What a capture costs, measured, not asserted: `cargo test --release --lib -p
    /// perfshape capture_cost -- --ignored --nocapture` prints reading the modules (once a
    /// process: their places and unwind tables copied), a capture (the copy the sampler
    /// makes), and unwinding and naming the frames the first time (which reads the binary's
    /// debug information) and after.
    #[test]
    #[ignore = "a measurement: run it by name"]
    fn capture_cost() {
        use std::time::Instant;
        let (tid, handle) = sleeper();
        let line = crate::blocked_call::syscall_line(tid).expect("its syscall file");
        let began = Instant::now();
        let _ = crate::stack::modules::modules();
        let first = began.elapsed();
        let mut capturer = Capturer::default();
        let stack = capturer.capture(tid, &line).expect("a stack");
        let n = 200;
        let began = Instant::now();
        for _ in 0..n {
            std::hint::black_box(capturer.capture(tid, &line));
        }
        let each = began.elapsed() / n;
        let began = Instant::now();
        let frames = stack.frames();
        let named_first = began.elapsed();
        let began = Instant::now();
        std::hint::black_box(stack.frames());
        let named = began.elapsed();
        eprintln!(
            "the modules read in {first:?}; each capture (a copy) {each:?}; {} frames unwound and named first in {named_first:?}, after in {named:?}",
            frames.0.len()
        );
        handle.join().unwrap();
    }
}
