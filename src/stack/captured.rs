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

impl Stack {
    /// The non-negative 32-bit number at `address`, where the copy holds it: a value the
    /// thread kept on its stack when it was copied (a wait's first descriptor).
    #[cfg_attr(not(all(linux_reads, target_arch = "x86_64")), allow(dead_code))]
    pub(crate) fn int_at(&self, address: u64) -> Option<u64> {
        let at = usize::try_from(address.checked_sub(self.sp)?).ok()?;
        let bytes = self.bytes.get(at..at.checked_add(4)?)?;
        let value = i32::from_le_bytes(bytes.try_into().ok()?);
        u64::try_from(value).ok()
    }
}
