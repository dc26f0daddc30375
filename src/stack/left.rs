//! The portable front of a worker's switches off its CPU: around a recorded poll, the
//! kernel hands over the stack the worker left its CPU with at each sleep
//! ([`switches`](super::switches), Linux x86-64), and the longest sleep in a system call is
//! kept with its call named — what a report names for a hold however short, where the
//! sampler's tick met none of it.

use std::cell::RefCell;
use std::time::Duration;

use super::captured::Stack;
use crate::blocked_call::{BlockedCall, Reader};

/// The longest sleep in a system call a worker took inside one poll, as the kernel handed
/// it over at the switch: the call, how long the worker was off its CPU, and its stack.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Left {
    /// The call it slept in, named as the sampler names one.
    pub(crate) call: BlockedCall,
    /// How long it was off its CPU.
    pub(crate) off: Duration,
    /// Its stack as it left.
    pub(crate) stack: Stack,
}

thread_local! {
    /// The calling thread's names for descriptors and sockets, kept from poll to poll.
    static READER: RefCell<Reader> = RefCell::new(Reader::default());
}

/// A recorded poll's switches, from its start: [`Leaving::end`] ends them.
#[derive(Debug)]
pub(crate) struct Leaving(bool);

impl Leaving {
    /// Whether the calling thread is ready for [`Leaving::begin`]: its event asked of the
    /// kernel already (always, where none is read).
    pub(crate) fn ready() -> bool {
        #[cfg(all(linux_reads, target_arch = "x86_64"))]
        return super::switches::asked();
        #[cfg(not(all(linux_reads, target_arch = "x86_64")))]
        true
    }

    /// Asks the kernel for the calling thread's event, once a thread — perfshape's own
    /// work, which a caller on a worker keeps out of the worker's run (an `perf_event_open`
    /// slept a worker 11 ms once, on a machine busy with a build, and read as the
    /// service's hold outside every response).
    pub(crate) fn prepare() {
        #[cfg(all(linux_reads, target_arch = "x86_64"))]
        super::switches::ask();
    }

    /// Has the kernel hand over the calling thread's stack at each switch from now on,
    /// where it may.
    pub(crate) fn begin() -> Leaving {
        #[cfg(all(linux_reads, target_arch = "x86_64"))]
        return Leaving(super::switches::enable());
        #[cfg(not(all(linux_reads, target_arch = "x86_64")))]
        Leaving(false)
    }

    /// Stops the hand-over; where the poll `slept` (a voluntary switch, off its CPU past
    /// the clocks' floor), its longest sleep in a system call, named.
    pub(crate) fn end(self, slept: bool) -> Option<Left> {
        if !self.0 {
            return None;
        }
        #[cfg(all(linux_reads, target_arch = "x86_64"))]
        {
            let slept = super::switches::disable(slept)?;
            let call = match slept.nr {
                Some(nr) => READER.with(|r| {
                    r.borrow_mut()
                        .name_copied(nr, slept.first, |address| slept.stack.int_at(address))
                }),
                None => BlockedCall::Other("a system call".to_string()),
            };
            Some(Left {
                call,
                off: slept.off,
                stack: slept.stack,
            })
        }
        #[cfg(not(all(linux_reads, target_arch = "x86_64")))]
        {
            let _ = slept;
            None
        }
    }
}

/// How a short hold's stack is read here, in a report's detail: at each switch, or only
/// by the sampler's tick — and why.
pub(crate) fn reading() -> String {
    if let Some(why) = super::unread() {
        return why;
    }
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    if let Some(why) = super::switches::REFUSED.get() {
        return format!(
            "a held worker's stack is read by the sampler every 0.5 ms only, so a call shorter than that may go unnamed: {why}"
        );
    }
    "a held worker's stack is handed over by the kernel at each switch off its CPU inside a poll"
        .to_string()
}
