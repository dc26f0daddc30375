//! **Where in the code**: the stack of a worker thread the kernel saw asleep in a call,
//! read from outside the thread, and the frame in the team's own code that made the call.
//!
//! "Blocked in futex()" reads the same for a std mutex another thread holds, a rayon call
//! awaited by blocking and a `Handle::block_on`; the frames above the call tell them apart
//! and give the line to change. While a sampled worker sleeps in a system call, the kernel
//! gives its stack pointer and instruction pointer (`/proc/self/task/TID/syscall`), and
//! its stack is this process's memory: copied from there
//! ([`capture`](capture::capture)), unwound with the executable's and libraries' own
//! unwind tables (framehop, the unwinder samply uses), and named only when a report asks
//! ([`Frames`]: the symbols and lines of the binary's debug information, through the
//! `backtrace` crate). Nothing is sent to the thread — no signal, no ptrace — so no call of
//! the service returns early (EINTR) because it was read; a thread that woke while its
//! stack was copied is read again at the next sample, never unwound from torn bytes.
//!
//! Where it is not read — another operating system, the portable build, an architecture
//! other than x86-64, a kernel that hides the `syscall` file — a report says so in its
//! detail ("where in the code is not read here: …"), never as an error or a verdict.
//!
//! A stretch of computing holds its worker in no system call; the kernel gives no stack
//! for it here, and a report on one says where to look instead.

mod capture;
mod frames;

pub(crate) use capture::{Capturer, unread};
pub(crate) use frames::{Frame, Frames};

/// A captured stack: the code addresses of its frames, innermost first — the call's own
/// instruction, then each caller's return address, ready for lookup (one byte back, into
/// the calling instruction).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Stack {
    addresses: Vec<u64>,
}

impl Stack {
    /// The frames' names, files and lines, inlined frames expanded.
    pub(crate) fn frames(&self) -> Frames {
        Frames::of(&self.addresses)
    }
}
