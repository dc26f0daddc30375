//! A computing worker sampled by the kernel (x86-64): its registers and the top of its
//! stack every millisecond of its CPU time, written into a ring this process maps.

use super::captured::Stack;
use super::ring::Ring;
use crate::blocked_call::Tid;

/// How often a running worker is sampled: every millisecond of its own CPU time (the
/// kernel's task clock), so a stretch past a 4 ms budget is sampled at least four times.
const RUNNING_PERIOD_NS: u64 = 1_000_000;

/// The ring's data pages (a power of two): drained every 0.5 ms, it holds a few samples.
const RING_PAGES: usize = 16;

/// The top of the stack copied with each sample: the computing function, the library
/// that runs it and the team's frames above it.
const SAMPLED_STACK: u32 = 16 * 1024;

/// A worker thread's computing sampled by the kernel: every [`RUNNING_PERIOD_NS`] of its
/// CPU time, its instruction, stack and frame pointers and the top of its stack are
/// written into a ring this process maps (`perf_event_open`, user space only, which the
/// kernel allows a process on its own threads at `perf_event_paranoid` ≤ 2). Nothing is
/// delivered to the thread: no signal, so no call of the service is cut short.
pub(super) struct Running(Ring);

impl Running {
    /// Samples thread `tid` from now on, or why it cannot be.
    pub(super) fn open(tid: Tid) -> Result<Running, String> {
        use perf_event_open_sys::bindings as perf;
        // SAFETY: an all-zero attribute block is the documented starting point.
        let mut attr: perf::perf_event_attr = unsafe { std::mem::zeroed() };
        attr.type_ = perf::PERF_TYPE_SOFTWARE;
        attr.config = u64::from(perf::PERF_COUNT_SW_TASK_CLOCK);
        attr.__bindgen_anon_1.sample_period = RUNNING_PERIOD_NS;
        attr.sample_type = u64::from(perf::PERF_SAMPLE_REGS_USER | perf::PERF_SAMPLE_STACK_USER);
        attr.sample_regs_user = (1 << perf::PERF_REG_X86_BP)
            | (1 << perf::PERF_REG_X86_SP)
            | (1 << perf::PERF_REG_X86_IP);
        attr.sample_stack_user = SAMPLED_STACK;
        attr.set_exclude_kernel(1);
        attr.set_exclude_hv(1);
        Ring::open(&mut attr, tid, RING_PAGES, 2).map(Running)
    }

    /// The stacks sampled since the last drain, as they were copied.
    pub(super) fn drain(&mut self) -> Vec<Stack> {
        use perf_event_open_sys::bindings as perf;
        let mut stacks = Vec::new();
        self.0.read(|kind, _, record| {
            if kind == perf::PERF_RECORD_SAMPLE
                && let Some(stack) = sampled(record)
            {
                stacks.push(stack);
            }
        });
        stacks
    }
}

/// A sample record's stack, unwound from its registers: `header, abi, bp, sp, ip, size,
/// data[size], dyn_size` (the registers in the order of their bits).
fn sampled(record: &[u8]) -> Option<Stack> {
    let u64_at = |at: usize| Some(u64::from_le_bytes(record.get(at..at + 8)?.try_into().ok()?));
    let abi = u64_at(8)?;
    if abi == 0 {
        return None;
    }
    let (bp, sp, pc) = (u64_at(16)?, u64_at(24)?, u64_at(32)?);
    Some(Stack {
        pc,
        sp,
        bp: Some(bp),
        bytes: super::ring::user_stack(record, 40)?,
    })
}
