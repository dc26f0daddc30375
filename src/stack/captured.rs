//! A stack as it was captured: the registers and the bytes above the stack pointer, copied
//! while the thread slept (or when the kernel sampled it computing) and nothing more — the
//! sampler's tick stays a copy — unwound and named only when a report asks
//! ([`capture`](super::capture)).

use std::sync::Arc;

/// A captured stack: the instruction and stack pointers, the frame pointer where it was
/// read (the kernel's samples of a computing thread give it; a sleeping thread's `syscall`
/// file does not), and the stack's bytes from the stack pointer up.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Stack {
    pub(super) pc: u64,
    pub(super) sp: u64,
    pub(super) bp: Option<u64>,
    pub(super) bytes: Arc<[u8]>,
}
