//! The Linux reads of where in the code, on x86-64: a sleeping thread's stack copied out of
//! this process's memory, and the computing workers followed. The process's modules and
//! their unwind tables are in `modules`, the unwinding of a copied stack in `unwind`, the
//! kernel's sampling of a computing worker in `running`. Everything here is behind one
//! `cfg` (`stack/mod.rs`); [`capture`](super::capture) is the portable front of it.

use std::sync::{Arc, OnceLock};

use super::captured::Stack;
use super::modules::MODULES;
use super::running::Running;
use crate::blocked_call::Tid;

/// The most of a stack copied, from its pointer up: the call, the library that made it
/// and the service's frames above it fit many times over — unless a frame holds a large
/// array (a 64 KiB buffer on the stack cut a test's stack short of its caller at 64 KiB);
/// deeper frames (the runtime's) are cut, and the unwinding ends there.
const STACK_BYTES: usize = 128 * 1024;

/// A page, the unit of the copy: a page that is not mapped ends it.
const PAGE: u64 = 4096;

pub(super) struct Inner {
    bytes: Vec<u8>,
    /// The workers followed while they compute, by thread; `None` where the kernel refused
    /// or has not answered yet.
    running: std::collections::HashMap<Tid, Option<Running>>,
    /// Workers' events opened on a thread of their own, as they arrive.
    opened: (
        std::sync::mpsc::Sender<Followed>,
        std::sync::mpsc::Receiver<Followed>,
    ),
}

/// A worker and its events, `None` where the kernel refused them.
type Followed = (Tid, Option<Running>);

impl Default for Inner {
    fn default() -> Self {
        Inner {
            bytes: vec![0; STACK_BYTES],
            running: std::collections::HashMap::new(),
            opened: std::sync::mpsc::channel(),
        }
    }
}

/// Thread `tid` followed by the kernel, or `None` where it refused (the first refusal is
/// kept for the reports).
fn opened(tid: Tid) -> Option<Running> {
    match Running::open(tid) {
        Ok(running) => Some(running),
        Err(why) => {
            let _ = REFUSED.set(why);
            None
        }
    }
}

/// Why a computing worker's stack is not read, where the kernel refused the first time.
pub(super) static REFUSED: OnceLock<String> = OnceLock::new();

impl Inner {
    /// Samples thread `tid`'s computing from now on (tried once a thread), asked of the
    /// kernel here — on the caller's thread as a sampler starts — or, with `later`, on a
    /// thread of its own: opening a thread's events took 4.5 ms once, and a sampler that
    /// waits for it meets none of a short test's requests.
    pub(super) fn follow(&mut self, tid: Tid, later: bool) {
        if self.running.contains_key(&tid) {
            return;
        }
        if !later {
            self.running.insert(tid, opened(tid));
            return;
        }
        // Marked as asked; the answer arrives on the channel.
        self.running.insert(tid, None);
        let sender = self.opened.0.clone();
        let _ = std::thread::Builder::new()
            .name("perfshape-follow".into())
            .spawn(move || {
                let _ = sender.send((tid, opened(tid)));
            });
    }

    /// Thread `tid`'s stacks sampled while it computed since the last call, as copied.
    pub(super) fn computed(&mut self, tid: Tid) -> Vec<Stack> {
        while let Ok((followed, running)) = self.opened.1.try_recv() {
            self.running.insert(followed, running);
        }
        match self.running.get_mut(&tid) {
            Some(Some(running)) => running.drain(),
            _ => Vec::new(),
        }
    }

    /// Thread `tid`'s stack as it sleeps in the call its `syscall` file read as `line`:
    /// the pointers and a copy of the bytes above the stack pointer, still; `None` where
    /// the thread moved on while it was copied, or the modules are not read yet.
    pub(super) fn capture(&mut self, tid: Tid, line: &str) -> Option<Stack> {
        MODULES.get()?;
        let (sp, pc) = pointers(line)?;
        let copied = copy_memory(sp, &mut self.bytes);
        // Still asleep in the same call at the same place: the copy is of a still stack.
        if crate::blocked_call::syscall_line(tid).as_deref() != Some(line) || copied < 8 {
            return None;
        }
        Some(Stack {
            pc,
            sp,
            bp: None,
            bytes: Arc::from(&self.bytes[..copied]),
        })
    }
}

/// Copies this process's memory from `from` up into `into`, a page at a time; how many
/// bytes it copied (the copy ends at the first page that is not mapped, never faults).
pub(super) fn copy_memory(sp: u64, into: &mut [u8]) -> usize {
    let mut remote = Vec::with_capacity(into.len() / PAGE as usize + 1);
    let end = sp.saturating_add(into.len() as u64);
    let mut at = sp;
    while at < end {
        let next = ((at / PAGE) + 1) * PAGE;
        let to = next.min(end);
        remote.push(libc::iovec {
            iov_base: at as *mut libc::c_void,
            iov_len: (to - at) as usize,
        });
        at = to;
    }
    let local = libc::iovec {
        iov_base: into.as_mut_ptr().cast(),
        iov_len: into.len(),
    };
    // SAFETY: the kernel writes at most `into.len()` bytes into `into` (one local iovec
    // of its size); the remote ranges are checked by the kernel, which stops at the
    // first one not mapped (EFAULT) instead of faulting.
    let read = unsafe {
        libc::process_vm_readv(
            libc::getpid(),
            &local,
            1,
            remote.as_ptr(),
            remote.len() as libc::c_ulong,
            0,
        )
    };
    usize::try_from(read).unwrap_or(0)
}

/// The stack and instruction pointers at the end of a `syscall` line (`nr a1 … a6 sp pc`).
fn pointers(line: &str) -> Option<(u64, u64)> {
    let mut words = line.split_whitespace().rev();
    let hex = |w: &str| u64::from_str_radix(w.trim_start_matches("0x"), 16).ok();
    let pc = hex(words.next()?)?;
    let sp = hex(words.next()?)?;
    (sp != 0 && pc != 0).then_some((sp, pc))
}

#[cfg(test)]
mod tests {
    use super::super::modules::modules;
    use super::*;

    /// What following a computing thread costs, measured, not asserted: `cargo test --lib
    /// -p perfshape following_cost -- --ignored --nocapture` prints a thread's loop rate
    /// for a second unfollowed and a second followed (the kernel copies its registers and
    /// 16 KiB of its stack every millisecond of its CPU), and the reader's time per sample
    /// drained.
    #[test]
    #[ignore = "a measurement: run it by name"]
    fn following_cost() {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::time::{Duration, Instant};
        let _ = modules();
        for followed in [false, true] {
            let stop = std::sync::Arc::new(AtomicBool::new(false));
            let loops = std::sync::Arc::new(AtomicU64::new(0));
            let (tx, rx) = std::sync::mpsc::channel();
            let worker = {
                let (stop, loops) = (stop.clone(), loops.clone());
                std::thread::spawn(move || {
                    tx.send(crate::blocked_call::current().unwrap()).unwrap();
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        n = std::hint::black_box(n.wrapping_add(1));
                    }
                    loops.store(n, Ordering::Relaxed);
                })
            };
            let tid = rx.recv().unwrap();
            let mut running = followed.then(|| Running::open(tid).expect("perf_event_open"));
            let (began, mut samples, mut draining) = (Instant::now(), 0, Duration::ZERO);
            while began.elapsed() < Duration::from_secs(1) {
                std::thread::sleep(Duration::from_micros(500));
                if let Some(running) = running.as_mut() {
                    let t = Instant::now();
                    samples += running.drain().len();
                    draining += t.elapsed();
                }
            }
            stop.store(true, Ordering::Relaxed);
            worker.join().unwrap();
            eprintln!(
                "followed {followed}: {} loops in 1 s; {samples} samples, drained in {:?} each",
                loops.load(Ordering::Relaxed),
                draining / samples.max(1) as u32
            );
        }
    }

    #[test]
    fn the_pointers_are_the_last_two_words_of_a_call() {
        let line = "202 0x7f3a2c0 0x80 0x0 0x0 0x0 0x0 0x7ffd1a2b3c40 0x7f3a1b2c3d4e";
        assert_eq!(pointers(line), Some((0x7ffd1a2b3c40, 0x7f3a1b2c3d4e)));
        assert_eq!(pointers("running"), None);
        assert_eq!(pointers("-1 0x0 0x0"), None);
    }
}
