//! **Where in the code**: the stack of a worker thread the kernel saw asleep in a call,
//! read from outside the thread, and the frame in the team's own code that made the call.
//!
//! "Blocked in futex()" reads the same for a std mutex another thread holds, a rayon call
//! awaited by blocking and a `Handle::block_on`; the frames above the call tell them apart
//! and give the line to change. While a sampled worker sleeps in a system call, the kernel
//! gives its stack pointer and instruction pointer (`/proc/self/task/TID/syscall`), and
//! its stack is this process's memory: copied from there
//! ([`Capturer::capture`]), unwound with the executable's and libraries' own
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
mod captured;
mod frames;
mod left;
#[cfg(all(linux_reads, target_arch = "x86_64"))]
mod linux;
#[cfg(all(linux_reads, target_arch = "x86_64"))]
mod modules;
#[cfg(all(linux_reads, target_arch = "x86_64"))]
mod ring;
#[cfg(all(linux_reads, target_arch = "x86_64"))]
mod running;
#[cfg(all(linux_reads, target_arch = "x86_64"))]
mod switches;
#[cfg(all(linux_reads, target_arch = "x86_64"))]
mod unwind;

pub(crate) use capture::{Capturer, unread, unread_computing};
pub(crate) use captured::Stack;
pub(crate) use frames::{Frame, Frames};
pub(crate) use left::{Leaving, Left, reading};

/// Turns the switches' hand-over on or off for this process, so that a measurement compares
/// a watched test with and without it (`watch::tests::watch_cost`).
#[cfg(all(test, linux_reads, target_arch = "x86_64"))]
pub(crate) fn hand_over(on: bool) {
    switches::OFF.store(!on, std::sync::atomic::Ordering::Relaxed);
}

/// Where a stretch of computing ran, from the stacks the kernel sampled in it: the team's
/// frame most of them are under, and the call from it that most of those ran in — "in
/// `argon2::Argon2::hash_password_into`, called from `shop::accounts::register`
/// (src/accounts.rs:41), in 48 of the 53 stacks sampled". `None` where no stack has a
/// frame of the team's.
pub(crate) fn computing_in(stacks: &[Stack]) -> Option<String> {
    let (said, under, sampled) = computed_where(stacks)?;
    Some(format!(
        "{said}, in {under} of the {sampled} stacks sampled"
    ))
}

/// Where a stretch of computing ran, as [`computing_in`] says it, without the counts of
/// stacks: words that do not change from run to run, for a snapshot.
pub(crate) fn computing_shape(stacks: &[Stack]) -> Option<String> {
    computed_where(stacks).map(|(said, _, _)| said)
}

/// The team's frame most of `stacks` ran under and the call from it most of those ran in,
/// in words ("in `via`, called from `function` (place)"); how many stacks that was, and how
/// many were sampled.
fn computed_where(stacks: &[Stack]) -> Option<(String, usize, usize)> {
    use std::collections::{BTreeMap, HashMap};
    let mut named: HashMap<u64, Vec<Frame>> = HashMap::new();
    let mut under: BTreeMap<(String, Option<String>), Vec<Option<String>>> = BTreeMap::new();
    for stack in stacks {
        let frames = Frames(
            capture::addresses(stack)
                .into_iter()
                .flat_map(|a| {
                    named
                        .entry(a)
                        .or_insert_with(|| capture::named(&[a]).0)
                        .clone()
                })
                .collect(),
        );
        if let Some((teams, via)) = frames.the_teams() {
            under
                .entry((teams.shown_name(), teams.place()))
                .or_default()
                .push(via.map(Frame::function_name));
        }
    }
    let ((function, place), vias) = under.into_iter().max_by_key(|(_, vias)| vias.len())?;
    let mut counted: BTreeMap<&Option<String>, usize> = BTreeMap::new();
    for via in &vias {
        *counted.entry(via).or_default() += 1;
    }
    let via = counted
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .and_then(|(via, _)| via.clone());
    let place = place.map(|p| format!(" ({p})")).unwrap_or_default();
    let said = match via {
        Some(via) => format!("in `{via}`, called from `{function}`{place}"),
        None => format!("in `{function}`{place}"),
    };
    Some((said, vias.len(), stacks.len()))
}
