//! What a perfshape-served response says about how it was served, on the wire: the server
//! writes it (any router, through its tracing layer) and the load client reads it, so
//! both sides share these names and formats and neither needs the other.

use std::net::SocketAddr;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Response header: the name of the thread that started the handler (`server-0`, ...).
pub const SERVED_BY: &str = "x-perfshape-served-by";
/// Response header: the client end of the connection, as the server saw it.
pub const PEER: &str = "x-perfshape-peer";
/// Response header: [`RuntimeFigures`] when the handler started.
pub const RUNTIME: &str = "x-perfshape-runtime";

/// Response header: [`Held`], how long the handler's future held its worker.
pub const HELD: &str = "x-perfshape-held";

/// Response header: the number the server gave the request, by which a claim finds what
/// the server recorded of the whole response (its body's polls too) once it is written.
pub const SEQ: &str = "x-perfshape-seq";

/// How long a request held its worker: its polls, timed by the layer every
/// perfshape-served router gets. A poll is time its worker cannot run anything else, so an
/// async handler's polls sum to microseconds and a handler that blocks for 2 ms sums to
/// 2 ms — exact, per request, wherever the handler hides it (`std::fs`, a std mutex, a
/// blocking DNS lookup, serde on a big body).
///
/// Where the worker thread's clocks can be read (Linux), each poll is also [`Split`] into
/// computing and waiting: a handler's hold is only a problem when it waits while holding
/// its worker, or computes for a long stretch in one poll.
///
/// ```
/// use std::time::Duration;
/// use perfshape::runtime::Held;
///
/// let held: Held = "polls=3 longest_us=2004 total_us=2010".parse()?;
/// assert_eq!(held.longest, Duration::from_micros(2004));
/// assert_eq!(held.split, None);
/// assert_eq!(held.to_string(), "polls=3 longest_us=2004 total_us=2010");
///
/// let split: Held = "polls=3 longest_us=2004 total_us=2010 cpu_us=60 wait_us=1950 \
///     preempt_us=0 longest_cpu_us=40 slept=1".parse()?;
/// assert_eq!(split.split.map(|s| s.waiting), Some(Duration::from_micros(1950)));
/// assert_eq!(split.split.map(|s| s.slept), Some(1));
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    /// Polls until the response was ready (and, in what the server records, until its
    /// body was written).
    pub polls: u32,
    /// The longest of them.
    #[serde(with = "crate::vocab::millis")]
    pub longest: std::time::Duration,
    /// All of them together: the time the request held its worker.
    #[serde(with = "crate::vocab::millis")]
    pub total: std::time::Duration,
    /// What the polls' time was made of, when the worker thread's clocks were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
}

/// What a request's polls were made of, from the worker thread's own clocks: CPU time,
/// sleep in the kernel while holding the worker, and time the kernel gave the worker's CPU
/// to something else (which is neither the handler computing nor waiting).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    /// CPU time the worker spent in the polls.
    #[serde(with = "crate::vocab::millis")]
    pub computing: std::time::Duration,
    /// Time the worker slept in the kernel inside the polls: a sleep, sync I/O, a lock.
    #[serde(with = "crate::vocab::millis")]
    pub waiting: std::time::Duration,
    /// Time the worker was runnable inside the polls but had no CPU (the machine was busy).
    #[serde(with = "crate::vocab::millis")]
    pub preempted: std::time::Duration,
    /// The most CPU time any one poll used: the longest stretch the handler computed
    /// without giving its worker back.
    #[serde(with = "crate::vocab::millis")]
    pub longest_computing: std::time::Duration,
    /// Polls in which the worker slept in the kernel at all (a voluntary context switch),
    /// however briefly: the mechanism of a wait, which a downstream on the same machine can
    /// answer too fast to show as time. 0 where the switches are not read (off Linux).
    #[serde(default)]
    pub slept: u32,
    /// Polls during which a round trip to another process on this machine (a database on
    /// loopback) was made on one of this process's connections — a query sent and its
    /// answer received: what a sync driver's call does inside the poll, however fast the
    /// answer. Read only while a watch records; 0 elsewhere.
    #[serde(default)]
    pub to_local: u32,
    /// Polls during which tokio handed the worker's core to another thread before the
    /// handler blocked (`tokio::task::block_in_place`): the worker was not held, other
    /// tasks ran on the new thread meanwhile, and such a poll's time is in none of the
    /// figures above.
    #[serde(default)]
    pub handed_off: u32,
    /// Of `waiting`, the time the thread that woke the task (not a worker) spent waiting
    /// for a CPU meanwhile: a lock's holder the machine preempted after it woke the task,
    /// where the worker slept on that lock. Read only while a watch records; zero
    /// elsewhere.
    #[serde(default, with = "crate::vocab::millis")]
    pub held_up: std::time::Duration,
}

impl Held {
    /// Adds one poll of `wall` time, split as `split` says when the clocks were read.
    pub(crate) fn add(&mut self, wall: std::time::Duration, split: Option<Split>) {
        self.merge(&Held {
            polls: 1,
            longest: wall,
            total: wall,
            split,
        });
    }

    /// Adds `other`'s polls: the same response's body, polled after its future's were
    /// counted.
    pub(crate) fn merge(&mut self, other: &Held) {
        if other.polls == 0 {
            return;
        }
        let first = self.polls == 0;
        self.polls = self.polls.saturating_add(other.polls);
        self.longest = self.longest.max(other.longest);
        self.total += other.total;
        // A request is split only when every one of its polls was.
        self.split = match (first, self.split, other.split) {
            (true, _, theirs) => theirs,
            (false, Some(sum), Some(more)) => Some(Split {
                computing: sum.computing + more.computing,
                waiting: sum.waiting + more.waiting,
                preempted: sum.preempted + more.preempted,
                longest_computing: sum.longest_computing.max(more.longest_computing),
                slept: sum.slept.saturating_add(more.slept),
                to_local: sum.to_local.saturating_add(more.to_local),
                handed_off: sum.handed_off.saturating_add(more.handed_off),
                held_up: sum.held_up + more.held_up,
            }),
            _ => None,
        };
    }
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "polls={} longest_us={} total_us={}",
            self.polls,
            self.longest.as_micros(),
            self.total.as_micros()
        )?;
        if let Some(split) = self.split {
            write!(
                f,
                " cpu_us={} wait_us={} preempt_us={} longest_cpu_us={}",
                split.computing.as_micros(),
                split.waiting.as_micros(),
                split.preempted.as_micros(),
                split.longest_computing.as_micros()
            )?;
            if split.slept > 0 {
                write!(f, " slept={}", split.slept)?;
            }
            if split.to_local > 0 {
                write!(f, " to_local={}", split.to_local)?;
            }
            if split.handed_off > 0 {
                write!(f, " handed_off={}", split.handed_off)?;
            }
            if !split.held_up.is_zero() {
                write!(f, " held_up_us={}", split.held_up.as_micros())?;
            }
        }
        Ok(())
    }
}

impl FromStr for Held {
    type Err = crate::Error;

    fn from_str(text: &str) -> crate::Result<Self> {
        let us = std::time::Duration::from_micros;
        let split = match key_values(
            text,
            [
                "cpu_us",
                "wait_us",
                "preempt_us",
                "longest_cpu_us",
                "slept",
                "to_local",
                "handed_off",
                "held_up_us",
            ],
        ) {
            [
                Some(cpu),
                Some(wait),
                Some(preempt),
                Some(longest),
                slept,
                to_local,
                handed_off,
                held_up,
            ] => Some(Split {
                computing: us(cpu),
                waiting: us(wait),
                preempted: us(preempt),
                longest_computing: us(longest),
                slept: slept.map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
                to_local: to_local.map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
                handed_off: handed_off.map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
                held_up: us(held_up.unwrap_or(0)),
            }),
            _ => None,
        };
        match key_values(text, ["polls", "longest_us", "total_us"]) {
            [Some(polls), Some(longest), Some(total)] => Ok(Held {
                polls: u32::try_from(polls).unwrap_or(u32::MAX),
                longest: us(longest),
                total: us(total),
                split,
            }),
            _ => Err(crate::Error::invalid(
                HELD,
                text,
                "polls=N longest_us=N total_us=N [cpu_us=N wait_us=N preempt_us=N longest_cpu_us=N [slept=N] [to_local=N] [handed_off=N] [held_up_us=N]]",
            )),
        }
    }
}

/// Stable tokio runtime metrics, read when a handler starts: the tokio counterpart of the
/// thread-pool figures ASP.NET reported in seed 000.
///
/// ```
/// use perfshape::runtime::RuntimeFigures;
///
/// let figures: RuntimeFigures = "workers=2 alive=5 queue=0".parse()?;
/// assert_eq!(figures.num_alive_tasks, 5);
/// assert_eq!(figures.to_string(), "workers=2 alive=5 queue=0");
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeFigures {
    /// Worker threads in the runtime.
    pub num_workers: usize,
    /// Tasks alive in the runtime (connections and spawned work).
    pub num_alive_tasks: usize,
    /// Tasks waiting in the global (injection) queue.
    pub global_queue_depth: usize,
}

impl std::fmt::Display for RuntimeFigures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "workers={} alive={} queue={}",
            self.num_workers, self.num_alive_tasks, self.global_queue_depth
        )
    }
}

impl FromStr for RuntimeFigures {
    type Err = crate::Error;

    fn from_str(text: &str) -> crate::Result<Self> {
        match key_values(text, ["workers", "alive", "queue"]).map(|v| v.map(|v| v as usize)) {
            [
                Some(num_workers),
                Some(num_alive_tasks),
                Some(global_queue_depth),
            ] => Ok(RuntimeFigures {
                num_workers,
                num_alive_tasks,
                global_queue_depth,
            }),
            _ => Err(crate::Error::invalid(
                RUNTIME,
                text,
                "workers=N alive=N queue=N",
            )),
        }
    }
}

/// The figures of a header written as `key=N key=N …`, in the order of `keys` (unknown keys
/// ignored, a missing or unparsable one `None`).
fn key_values<const K: usize>(text: &str, keys: [&str; K]) -> [Option<u64>; K] {
    let mut figures = [None; K];
    for pair in text.split_whitespace() {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if let Some(slot) = keys.iter().position(|k| *k == key) {
            figures[slot] = value.parse().ok();
        }
    }
    figures
}

/// The peer header's value as an address, when it is one.
pub(crate) fn parse_peer(value: &str) -> Option<SocketAddr> {
    value.parse().ok()
}
