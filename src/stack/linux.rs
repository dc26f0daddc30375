//! The Linux reads of where in the code, on x86-64: the process's modules and their unwind
//! tables, a sleeping thread's stack copied out of this process's memory, and the
//! unwinding of a copied stack. Everything here is behind one `cfg` (`stack/mod.rs`);
//! [`capture`](super::capture) is the portable front of it.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, FrameAddress, Module, Unwinder};

use super::captured::Stack;
use super::ring::Ring;
use crate::blocked_call::Tid;

/// The most of a stack copied, from its pointer up: the call, the library that made it
/// and the service's frames above it fit many times over — unless a frame holds a large
/// array (a 64 KiB buffer on the stack cut a test's stack short of its caller at 64 KiB);
/// deeper frames (the runtime's) are cut, and the unwinding ends there.
const STACK_BYTES: usize = 128 * 1024;

/// A page, the unit of the copy: a page that is not mapped ends it.
const PAGE: u64 = 4096;

/// The most frames kept of a stack.
const MAX_FRAMES: usize = 96;

type Unwinder64 = UnwinderX86_64<Vec<u8>>;

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

/// The modules loaded when the first capturer was made: their code's places, and the
/// unwinder that knows their tables.
pub(super) struct Modules {
    unwinder: Unwinder64,
    code: Vec<Range<u64>>,
    /// Each module's `.eh_frame_hdr` search table: where its functions start.
    starts: Vec<Starts>,
}

/// A module's functions' starts, from its `.eh_frame_hdr`: the load bias, the header's
/// own address (the table's entries are relative to it) and its bytes.
struct Starts {
    code: Range<u64>,
    bias: u64,
    hdr: u64,
    bytes: Vec<u8>,
}

impl Modules {
    /// Whether `address` is in a loaded module's code.
    fn is_code(&self, address: u64) -> bool {
        self.code.iter().any(|range| range.contains(&address))
    }

    /// Where the function holding `address` starts: the last entry at or before it in its
    /// module's `.eh_frame_hdr` search table (sorted, as the linker writes it), where the
    /// table is of the shape linkers write (4-byte entries relative to the header).
    fn function_start(&self, address: u64) -> Option<u64> {
        const DATAREL_SDATA4: u8 = 0x3b;
        const UDATA4: u8 = 0x03;
        let starts = self.starts.iter().find(|s| s.code.contains(&address))?;
        let bytes = &starts.bytes;
        if bytes.get(2) != Some(&UDATA4) || bytes.get(3) != Some(&DATAREL_SDATA4) {
            return None;
        }
        let count = u32::from_le_bytes(bytes.get(8..12)?.try_into().ok()?) as usize;
        let entry = |i: usize| -> Option<u64> {
            let at = 12 + i * 8;
            let offset = i32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?);
            Some(starts.bias + starts.hdr.checked_add_signed(i64::from(offset))?)
        };
        // The first entry past `address`, and the one before it.
        let (mut low, mut high) = (0, count);
        while low < high {
            let middle = (low + high) / 2;
            if entry(middle)? <= address {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        entry(low.checked_sub(1)?)
    }
}

static MODULES: OnceLock<Modules> = OnceLock::new();

/// The process's modules, read once.
pub(super) fn modules() -> &'static Modules {
    MODULES.get_or_init(|| {
        let loaded = loaded();
        let code = loaded
            .iter()
            .map(|m| m.bias + m.text.start..m.bias + m.text.end)
            .collect();
        let starts = loaded
            .iter()
            .filter_map(|m| {
                let (svma, bytes) = m.eh_frame_hdr.as_ref()?;
                Some(Starts {
                    code: m.bias + m.text.start..m.bias + m.text.end,
                    bias: m.bias,
                    hdr: svma.start,
                    bytes: bytes.clone(),
                })
            })
            .collect();
        let mut unwinder = Unwinder64::new();
        for module in loaded {
            unwinder.add_module(module.into_module());
        }
        Modules {
            unwinder,
            code,
            starts,
        }
    })
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

/// One loaded module's code and unwind tables, as its program headers place them.
struct Loaded {
    name: String,
    /// The load bias: where address 0 of the module's own addresses is.
    bias: u64,
    /// Its executable segments, in the module's own addresses.
    text: Range<u64>,
    eh_frame_hdr: Option<(Range<u64>, Vec<u8>)>,
    eh_frame: Option<(Range<u64>, Vec<u8>)>,
}

/// Every module loaded now, its code's place and its unwind tables copied out of
/// memory.
fn loaded() -> Vec<Loaded> {
    let mut loaded: Vec<Loaded> = Vec::new();
    // SAFETY: the callback only reads the program headers the loader hands it, and the
    // mapped segments they describe, while the loader holds them in place.
    unsafe {
        libc::dl_iterate_phdr(Some(each), (&raw mut loaded).cast());
    }
    loaded.retain(|m| m.text.start < m.text.end);
    loaded
}

impl Loaded {
    /// The module as the unwinder takes it.
    fn into_module(self) -> Module<Vec<u8>> {
        let (eh_frame_hdr_svma, eh_frame_hdr) = self.eh_frame_hdr.unzip();
        let (eh_frame_svma, eh_frame) = self.eh_frame.unzip();
        Module::new(
            self.name,
            self.bias + self.text.start..self.bias + self.text.end,
            self.bias,
            ExplicitModuleSectionInfo {
                base_svma: 0,
                text_svma: Some(self.text),
                eh_frame_hdr_svma,
                eh_frame_hdr,
                eh_frame_svma,
                eh_frame,
                ..Default::default()
            },
        )
    }
}

/// `dl_iterate_phdr`'s callback: one module's segments into the list `data` points at.
unsafe extern "C" fn each(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY: `info` is the loader's, valid for this call; `data` is the list passed in.
    let (info, loaded) = unsafe { (&*info, &mut *data.cast::<Vec<Loaded>>()) };
    if info.dlpi_phdr.is_null() {
        return 0;
    }
    // SAFETY: the loader gives `dlpi_phnum` headers at `dlpi_phdr`.
    let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let bias = info.dlpi_addr;
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated name, the loader's.
        unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    // The lowest start and highest end of the executable segments, widened from an
    // empty range.
    let (mut start, mut end) = (u64::MAX, 0);
    for header in headers {
        if header.p_type == libc::PT_LOAD && header.p_flags & libc::PF_X != 0 {
            start = start.min(header.p_vaddr);
            end = end.max(header.p_vaddr + header.p_memsz);
        }
    }
    let mut module = Loaded {
        name,
        bias,
        text: start..end,
        eh_frame_hdr: None,
        eh_frame: None,
    };
    if let Some(hdr) = headers.iter().find(|h| h.p_type == libc::PT_GNU_EH_FRAME) {
        let svma = hdr.p_vaddr..hdr.p_vaddr + hdr.p_memsz;
        // SAFETY: the segment is mapped for as long as the module is loaded.
        let bytes = unsafe {
            std::slice::from_raw_parts((bias + hdr.p_vaddr) as *const u8, hdr.p_memsz as usize)
        }
        .to_vec();
        module.eh_frame = eh_frame_at(&svma, &bytes)
            .and_then(|start| {
                // `.eh_frame` runs to the end of the loaded segment that holds it.
                headers
                    .iter()
                    .filter(|h| h.p_type == libc::PT_LOAD)
                    .find(|h| (h.p_vaddr..h.p_vaddr + h.p_filesz).contains(&start))
                    .map(|h| start..h.p_vaddr + h.p_filesz)
            })
            .map(|range| {
                // SAFETY: within a loaded segment's file-backed bytes, mapped.
                let bytes = unsafe {
                    std::slice::from_raw_parts(
                        (bias + range.start) as *const u8,
                        (range.end - range.start) as usize,
                    )
                }
                .to_vec();
                (range, bytes)
            });
        module.eh_frame_hdr = Some((svma, bytes));
    }
    loaded.push(module);
    0
}

/// Where `.eh_frame` begins, from its header's pointer: encoded relative to the
/// pointer's own place as a signed 4-byte number (what linkers write), or absolute.
fn eh_frame_at(hdr: &Range<u64>, bytes: &[u8]) -> Option<u64> {
    const PCREL_SDATA4: u8 = 0x1b;
    const DATAREL_SDATA4: u8 = 0x3b;
    const ABSPTR: u8 = 0x00;
    const UDATA8: u8 = 0x04;
    let encoding = *bytes.get(1)?;
    let field = hdr.start + 4;
    match encoding {
        PCREL_SDATA4 => {
            let offset = i32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?);
            field.checked_add_signed(i64::from(offset))
        }
        DATAREL_SDATA4 => {
            let offset = i32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?);
            hdr.start.checked_add_signed(i64::from(offset))
        }
        ABSPTR | UDATA8 => Some(u64::from_le_bytes(bytes.get(4..12)?.try_into().ok()?)),
        _ => None,
    }
}

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
