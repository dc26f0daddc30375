//! Linux x86-64: the stack a thread leaves its CPU with, handed over by the kernel at the
//! switch itself — however short the sleep that follows.
//!
//! A sampler that looks every half millisecond meets a 0.3 ms call in about half the polls
//! that make it. The kernel meets every one: a software event counting the thread's context
//! switches (`PERF_COUNT_SW_CONTEXT_SWITCHES`, a sample at each) writes the thread's user
//! registers and the top of its stack into a ring at the moment it leaves its CPU, and the
//! switch records beside them (`context_switch`) say when it left, whether it was
//! preempted, and when it came back. What perf's off-CPU profiling rests on. The switch is
//! the kernel's own code, so the event counts kernel time: `perf_event_paranoid` ≤ 1 (or
//! `CAP_PERFMON`, as a root CI job has) lets a process open it; elsewhere the sampler's
//! reading stands (`Leaving::begin` keeps why).
//!
//! The event is enabled only inside a recorded poll, on the polling thread itself (two
//! `ioctl`s a poll), so a worker's parks and a later timing claim pay nothing.

use std::cell::RefCell;
use std::sync::OnceLock;
use std::time::Duration;

use perf_event_open_sys::bindings as perf;

use super::captured::Stack;
use super::ring::Ring;

/// The ring's data pages: a poll's switches, each with [`SWITCH_STACK`] bytes of stack
/// (a poll that switches more often than the ring holds keeps its first ones).
const RING_PAGES: usize = 32;

/// The top of the stack copied at each switch: the C library's call, the library that
/// made it and the team's frames above it, as a computing worker's samples copy.
const SWITCH_STACK: u32 = 16 * 1024;

/// `SYS_futex`, the number the C library's generic `syscall()` is called with by Rust's
/// locks and parkers.
const FUTEX: i64 = 202;

thread_local! {
    /// The calling thread's switches event, opened at its first recorded poll, or why the
    /// kernel refused it.
    static RING: RefCell<Option<Result<Ring, String>>> = const { RefCell::new(None) };
}

/// Why the kernel refused the switches' event, the first time it did in this process.
pub(super) static REFUSED: OnceLock<String> = OnceLock::new();

/// The longest voluntary sleep a thread took since its ring was enabled, as the kernel
/// handed it over: how long it was off its CPU, its registers and the top of its stack.
pub(super) struct Slept {
    pub(super) off: Duration,
    pub(super) stack: Stack,
    /// The system call's number, where the code before the instruction names it.
    pub(super) nr: Option<i64>,
    /// The call's first argument (a descriptor, a lock's address).
    pub(super) first: u64,
}

/// Turns the hand-over off for this process, so that a measurement compares a watched
/// test with and without it (`watch::tests::watch_cost`, through [`super::hand_over`]).
#[cfg(test)]
pub(super) static OFF: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the calling thread's switches event was asked of the kernel already (opened,
/// or refused): [`enable`] then only enables it.
pub(super) fn asked() -> bool {
    RING.with(|ring| ring.borrow().is_some())
}

/// Asks the kernel for the calling thread's switches event, once a thread: a
/// `perf_event_open` and a ring's `mmap`, which the caller keeps out of the worker's own
/// time ([`crate::pool::timeline`]'s `own_work`).
pub(super) fn ask() {
    RING.with(|ring| {
        ring.borrow_mut().get_or_insert_with(open);
    });
}

/// Enables the calling thread's switches event, opening it at the thread's first call;
/// whether it runs.
pub(super) fn enable() -> bool {
    #[cfg(test)]
    if OFF.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    RING.with(|ring| {
        let mut ring = ring.borrow_mut();
        let ring = ring.get_or_insert_with(open);
        match ring {
            Ok(ring) => {
                ring.skip();
                ring.enable(true);
                true
            }
            Err(why) => {
                let _ = REFUSED.set(why.clone());
                false
            }
        }
    })
}

/// Disables the calling thread's switches event; the longest voluntary sleep in a system
/// call since [`enable`], where `read` asks for it.
pub(super) fn disable(read: bool) -> Option<Slept> {
    RING.with(|ring| {
        let mut ring = ring.borrow_mut();
        let Some(Ok(ring)) = ring.as_mut() else {
            return None;
        };
        ring.enable(false);
        if read { longest(ring) } else { None }
    })
}

/// The switches event of the calling thread, disabled until a poll enables it.
fn open() -> Result<Ring, String> {
    // SAFETY: an all-zero attribute block is the documented starting point.
    let mut attr: perf::perf_event_attr = unsafe { std::mem::zeroed() };
    attr.type_ = perf::PERF_TYPE_SOFTWARE;
    attr.config = u64::from(perf::PERF_COUNT_SW_CONTEXT_SWITCHES);
    attr.__bindgen_anon_1.sample_period = 1;
    attr.sample_type = u64::from(
        perf::PERF_SAMPLE_TIME | perf::PERF_SAMPLE_REGS_USER | perf::PERF_SAMPLE_STACK_USER,
    );
    attr.sample_regs_user = (1 << perf::PERF_REG_X86_SI)
        | (1 << perf::PERF_REG_X86_DI)
        | (1 << perf::PERF_REG_X86_BP)
        | (1 << perf::PERF_REG_X86_SP)
        | (1 << perf::PERF_REG_X86_IP);
    attr.sample_stack_user = SWITCH_STACK;
    // The switch records, with their times: when the thread left and came back.
    attr.set_context_switch(1);
    attr.set_sample_id_all(1);
    // One clock for both ends of a sleep, whichever CPU the thread woke on.
    attr.set_use_clockid(1);
    attr.clockid = libc::CLOCK_MONOTONIC;
    attr.set_disabled(1);
    attr.set_exclude_hv(1);
    Ring::open(&mut attr, 0, RING_PAGES, 1)
}

/// A switch sample's registers and stack: `header, time, abi, si, di, bp, sp, ip, size,
/// data[size], dyn_size` (the registers in the order of their bits; the time is the
/// switch records').
struct Sample {
    si: u64,
    di: u64,
    stack: Stack,
}

fn sample(record: &[u8]) -> Option<Sample> {
    let u64_at = |at: usize| Some(u64::from_le_bytes(record.get(at..at + 8)?.try_into().ok()?));
    if u64_at(16)? == 0 {
        return None;
    }
    let (si, di, bp, sp, pc) = (
        u64_at(24)?,
        u64_at(32)?,
        u64_at(40)?,
        u64_at(48)?,
        u64_at(56)?,
    );
    Some(Sample {
        si,
        di,
        stack: Stack {
            pc,
            sp,
            bp: Some(bp),
            bytes: super::ring::user_stack(record, 64)?,
        },
    })
}

/// The longest voluntary sleep in a system call among the ring's records: a sample, the
/// switch out that follows it (not a preemption) and the switch back in.
fn longest(ring: &mut Ring) -> Option<Slept> {
    let mut pending: Option<Sample> = None;
    let mut out: Option<(u64, Option<Sample>)> = None;
    let mut best: Option<(u64, Sample)> = None;
    ring.read(|kind, misc, record| {
        if kind == perf::PERF_RECORD_SAMPLE {
            pending = sample(record);
        } else if kind == perf::PERF_RECORD_SWITCH {
            let Some(time) = record.get(8..16).and_then(|b| b.try_into().ok()) else {
                return;
            };
            let time = u64::from_le_bytes(time);
            let misc = u32::from(misc);
            if misc & perf::PERF_RECORD_MISC_SWITCH_OUT != 0 {
                let preempted = misc & perf::PERF_RECORD_MISC_SWITCH_OUT_PREEMPT != 0;
                let left = pending.take().filter(|_| !preempted);
                out = Some((time, left));
            } else if let Some((left_at, Some(sample))) = out.take() {
                let off = time.saturating_sub(left_at);
                if best.as_ref().is_none_or(|(longest, _)| off > *longest) {
                    best = Some((off, sample));
                }
            }
        }
    });
    let (off, sample) = best?;
    let code = code_before(sample.stack.pc)?;
    Some(Slept {
        off: Duration::from_nanos(off),
        nr: number(&code, sample.si),
        first: sample.di,
        stack: sample.stack,
    })
}

/// The 16 bytes of code before `pc`, where they end in `syscall` (0f 05): a thread that
/// left its CPU anywhere else was not in a system call (a page fault).
fn code_before(pc: u64) -> Option<[u8; 16]> {
    let mut code = [0u8; 16];
    let copied = super::linux::copy_memory(pc.checked_sub(16)?, &mut code);
    (copied == code.len() && code[14..] == [0x0f, 0x05]).then_some(code)
}

/// The system call's number, from the code before its `syscall` instruction: the C
/// library's wrappers load it just before (`mov $nr, %eax`, b8 and four bytes), or a few
/// instructions before; its generic `syscall()` shifts its arguments (the last move,
/// `mov 0x8(%rsp), %r9`, right before) — Rust's locks call it for a futex wait, told by its
/// operation (`si`: FUTEX_WAIT or FUTEX_WAIT_BITSET, private or not).
fn number(code: &[u8; 16], si: u64) -> Option<i64> {
    let body = &code[..14];
    if body[9..] == [0xb8, body[10], body[11], 0, 0] {
        return Some(i64::from(u16::from_le_bytes([body[10], body[11]])));
    }
    if body[9..] == [0x4c, 0x8b, 0x4c, 0x24, 0x08] {
        return matches!(si & 0x7f, 0 | 9).then_some(FUTEX);
    }
    // A move a few instructions back: a small number the table knows.
    (0..9).rev().find_map(|at| {
        (body[at] == 0xb8 && body[at + 3] == 0 && body[at + 4] == 0)
            .then(|| i64::from(u16::from_le_bytes([body[at + 1], body[at + 2]])))
            .filter(|&nr| nr < 512)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_number_is_read_off_the_wrappers_code() {
        let mut code = [0x90u8; 16];
        // fdatasync: mov $0x4b, %eax; syscall.
        code[9..].copy_from_slice(&[0xb8, 0x4b, 0, 0, 0, 0x0f, 0x05]);
        assert_eq!(number(&code, 0), Some(0x4b));
        // syscall(): mov 0x8(%rsp), %r9; syscall — a futex wait, and not a wake.
        code[9..].copy_from_slice(&[0x4c, 0x8b, 0x4c, 0x24, 0x08, 0x0f, 0x05]);
        assert_eq!(number(&code, 0x89), Some(FUTEX));
        assert_eq!(number(&code, 0x81), None);
        // mov $0xca, %eax; xor $0x80, %sil; syscall.
        let mut code = [0x90u8; 16];
        code[5..].copy_from_slice(&[0xb8, 0xca, 0, 0, 0, 0x40, 0x80, 0xf6, 0x80, 0x0f, 0x05]);
        assert_eq!(number(&code, 0), Some(0xca));
    }

    /// A thread that sleeps 300 µs inside an enabled stretch is handed over with its sleep,
    /// its call (clock_nanosleep) and this test's frame.
    #[test]
    fn a_short_sleep_is_handed_over_with_its_stack() {
        if !enable() {
            eprintln!("not read here: {:?}", REFUSED.get());
            return;
        }
        let _ = super::super::modules::modules();
        std::thread::sleep(Duration::from_micros(300));
        let slept = disable(true).expect("the sleep");
        assert!(slept.off >= Duration::from_micros(250), "{:?}", slept.off);
        assert_eq!(slept.nr, Some(230), "clock_nanosleep");
        let frames = slept.stack.frames();
        assert!(
            frames
                .0
                .iter()
                .any(|f| f.function.contains("a_short_sleep_is_handed_over")),
            "{frames}"
        );
    }

    /// What the hand-over costs, measured, not asserted: `cargo test --release --lib -p
    /// perfshape switch_cost -- --ignored --nocapture` prints the thread's CPU time per
    /// switch (a 50 µs sleep) with the event disabled and enabled, the two `ioctl`s of a
    /// poll, and reading a poll's longest sleep.
    #[test]
    #[ignore = "a measurement: run it by name"]
    fn switch_cost() {
        use std::time::Instant;
        let cpu = || {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a valid timespec on this stack.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
            Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
        };
        assert!(enable(), "{:?}", REFUSED.get());
        let _ = disable(false);
        let n = 2000u32;
        for on in [false, true] {
            let began = cpu();
            for _ in 0..n {
                if on {
                    enable();
                }
                std::thread::sleep(Duration::from_micros(50));
                if on {
                    let _ = disable(false);
                }
            }
            eprintln!("event {on}: {:?} of CPU a switch", (cpu() - began) / n);
        }
        let began = Instant::now();
        for _ in 0..n {
            enable();
            let _ = disable(false);
        }
        eprintln!("enable and disable: {:?}", began.elapsed() / n);
        let mut read = Duration::ZERO;
        for _ in 0..200 {
            enable();
            std::thread::sleep(Duration::from_micros(50));
            let began = Instant::now();
            std::hint::black_box(disable(true));
            read += began.elapsed();
        }
        eprintln!("a poll's longest sleep read: {:?}", read / 200);
    }
}
