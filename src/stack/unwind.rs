//! The unwinding of a copied stack (x86-64): from the registers the kernel gave, with the
//! modules' unwind tables, and — where the C library's wrapper leaves no trusted frame
//! pointer — from the slots above the stop that hold a return address.

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64};
use framehop::{FrameAddress, Unwinder};

use super::captured::Stack;
use super::modules::{MODULES, Modules};

/// The most frames kept of a stack.
const MAX_FRAMES: usize = 96;

/// The code addresses of `stack`'s frames, innermost first — the instruction, then each
/// caller's return address, ready for lookup (one byte back, into the calling
/// instruction); none before the modules are read.
///
/// A sleeping thread's frame pointer is not given by the kernel, and the standard library
/// is built with frame pointers: its frames' rules need one. The C library's call wrapper
/// leaves the register as its caller set it — pointing at the base of the frame the
/// unwinding stopped in, which that function's prologue fixes; where the prologue is of
/// another shape, the slots with a return address above them are tried and the deepest
/// unwinding kept. The unwinding from none is the floor.
pub(super) fn addresses(stack: &Stack) -> Vec<u64> {
    let Some(modules) = MODULES.get() else {
        return Vec::new();
    };
    let mut cache = CacheX86_64::new();
    let (pc, sp, bytes) = (stack.pc, stack.sp, &stack.bytes[..]);
    if let Some(bp) = stack.bp {
        return unwind(modules, &mut cache, Regs { pc, sp, bp }, bytes);
    }
    let floor = unwind(modules, &mut cache, Regs { pc, sp, bp: 0 }, bytes);
    // The frame the unwinding stopped in needs the frame pointer, and its base is fixed by
    // its function's prologue: the stack pointer at the return into it, plus what the
    // prologue pushed after `mov rbp, rsp` and the locals it reserved (the function's start
    // from its module's `.eh_frame_hdr`). A slot left by an earlier call looks the same
    // (tokio took the same std mutex a moment before) but lies elsewhere.
    if let Some((stopped, stopped_sp)) = stopped(modules, &mut cache, pc, sp, bytes) {
        // The slot the stopped function's prologue puts its base at, where a return address
        // after a call sits above it.
        let base = modules
            .function_start(stopped - 1)
            .and_then(|start| below_base(modules, start))
            .and_then(|size| stopped_sp.checked_add(size))
            .filter(|&slot| {
                word(bytes, sp, slot + 8).is_some_and(|returns| {
                    modules.is_code(returns) && after_a_call(modules, returns)
                })
            });
        if let Some(bp) = base {
            let unwound = unwind(modules, &mut cache, Regs { pc, sp, bp }, bytes);
            if unwound.len() > floor.len() {
                return unwound;
            }
        }
    }
    // No base found (an indirect call, a prologue of another shape): the deepest
    // unwinding of the first slots tried.
    let mut best = floor;
    for bp in frame_pointers(modules, sp, bytes).take(CANDIDATES) {
        let unwound = unwind(modules, &mut cache, Regs { pc, sp, bp }, bytes);
        if unwound.len() > best.len() {
            best = unwound;
        }
    }
    best
}

/// Where the unwinding from no frame pointer stopped: the return address into the frame
/// that needs one, and the stack pointer there (the caller's, just after the call).
fn stopped(
    modules: &Modules,
    cache: &mut CacheX86_64,
    pc: u64,
    sp: u64,
    bytes: &[u8],
) -> Option<(u64, u64)> {
    let mut read = |address: u64| word(bytes, sp, address).ok_or(());
    let mut regs = UnwindRegsX86_64::new(pc, sp, 0);
    let mut address = FrameAddress::from_instruction_pointer(pc);
    let mut last = None;
    for _ in 0..MAX_FRAMES {
        match modules
            .unwinder
            .unwind_frame(address, &mut regs, cache, &mut read)
        {
            Ok(Some(returns)) => {
                last = Some((returns, regs.sp()));
                address = FrameAddress::from_return_address(returns)?;
            }
            _ => break,
        }
    }
    last
}

/// How far below its frame pointer a function's frame reaches once its prologue ran:
/// the registers pushed after `mov rbp, rsp` and the locals `sub rsp, n` reserved —
/// read from the function's first instructions (`endbr64`, `push rbp`, `mov rbp, rsp`,
/// pushes, `sub rsp`). `None` for a prologue of another shape.
fn below_base(modules: &Modules, start: u64) -> Option<u64> {
    if !(modules.is_code(start) && modules.is_code(start + 31)) {
        return None;
    }
    // SAFETY: `start..start + 32` lies in a loaded module's code (both ends checked).
    let code = unsafe { std::slice::from_raw_parts(start as *const u8, 32) };
    let mut at = 0;
    if code.starts_with(&[0xF3, 0x0F, 0x1E, 0xFA]) {
        at += 4;
    }
    if code.get(at) != Some(&0x55) || code.get(at + 1..at + 4) != Some(&[0x48, 0x89, 0xE5]) {
        return None;
    }
    at += 4;
    let mut pushed = 0;
    loop {
        match code.get(at..)? {
            [0x50..=0x57, ..] => at += 1,
            [0x41, 0x50..=0x57, ..] => at += 2,
            _ => break,
        }
        pushed += 8;
    }
    let reserved = match code.get(at..)? {
        [0x48, 0x83, 0xEC, n, ..] => u64::from(*n),
        [0x48, 0x81, 0xEC, a, b, c, d, ..] => u64::from(u32::from_le_bytes([*a, *b, *c, *d])),
        _ => 0,
    };
    Some(pushed + reserved)
}

/// The registers an unwinding starts from: the instruction, stack and frame pointers (a
/// frame pointer of 0 where none is trusted).
#[derive(Clone, Copy)]
struct Regs {
    pc: u64,
    sp: u64,
    bp: u64,
}

/// The frames from `regs` over the copy `bytes` (taken at its stack pointer).
fn unwind(modules: &Modules, cache: &mut CacheX86_64, regs: Regs, bytes: &[u8]) -> Vec<u64> {
    let Regs { pc, sp, bp } = regs;
    let mut read = |address: u64| word(bytes, sp, address).ok_or(());
    let mut frames =
        modules
            .unwinder
            .iter_frames(pc, UnwindRegsX86_64::new(pc, sp, bp), cache, &mut read);
    let mut addresses = Vec::new();
    while let Ok(Some(frame)) = frames.next() {
        addresses.push(frame.address_for_lookup());
        if addresses.len() == MAX_FRAMES {
            break;
        }
    }
    addresses
}

/// How many slots that may hold a frame pointer are tried: the one that is (the register
/// the wrapper left) lies above the calls made before this one from the same frames, and
/// each of those left a slot that looks the same and unwinds to the same callers, minus
/// the frames between — all are tried, and the deepest unwinding kept.
const CANDIDATES: usize = 64;

/// The word at `address` of the copy `bytes` taken at `sp`.
fn word(bytes: &[u8], sp: u64, address: u64) -> Option<u64> {
    let at = usize::try_from(address.checked_sub(sp)?).ok()?;
    Some(u64::from_le_bytes(
        bytes.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// The slots of the copy that look like a frame's base: above it, a return address into
/// loaded code, just after a call instruction. What the slot itself holds (the caller's
/// frame pointer) is not asked: a caller built without frame pointers uses the register
/// for anything. Lowest first.
fn frame_pointers<'a>(
    modules: &'a Modules,
    sp: u64,
    bytes: &'a [u8],
) -> impl Iterator<Item = u64> + 'a {
    (0..bytes.len().saturating_sub(16) as u64)
        .step_by(8)
        .map(move |offset| sp + offset)
        .filter(move |&slot| {
            word(bytes, sp, slot + 8)
                .is_some_and(|returns| modules.is_code(returns) && after_a_call(modules, returns))
        })
}

/// Whether the instruction before `address` (in a loaded module's code, checked first) is
/// a call: `call rel32` (E8), or `call` through a register or memory (FF /2, two to seven
/// bytes) — what a return address follows and a stale number in a stack slot seldom does.
fn after_a_call(modules: &Modules, address: u64) -> bool {
    let byte = |back: u64| -> Option<u8> {
        let at = address.checked_sub(back)?;
        // SAFETY: `at` lies in a loaded module's code, mapped readable for as long as the
        // module is loaded (those read here are the executable and the libraries it links,
        // never unloaded).
        modules
            .is_code(at)
            .then(|| unsafe { std::ptr::read(at as *const u8) })
    };
    if byte(5) == Some(0xE8) {
        return true;
    }
    // FF with a ModRM byte whose reg field is 2: 2 bytes (register), 3 (disp8 or SIB), 4
    // (SIB and disp8), 6 (disp32 or rip-relative), 7 (SIB and disp32).
    [2u64, 3, 4, 6, 7].iter().any(|&length| {
        byte(length) == Some(0xFF) && byte(length - 1).is_some_and(|modrm| modrm & 0x38 == 0x10)
    })
}
