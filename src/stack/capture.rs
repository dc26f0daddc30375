//! Copying a sleeping thread's stack and unwinding it: Linux on x86-64 only, behind
//! `cfg`; everywhere else [`unread`] says why not and [`Capturer::capture`] reads nothing.
//!
//! The thread is asleep in a system call, so its stack below the kernel's entry is still:
//! its stack pointer and instruction pointer come from its `syscall` file, the bytes above
//! the stack pointer are copied with `process_vm_readv` (this process's memory read as
//! another's would be: a page that is gone fails the read, it never faults), and the file
//! is read again afterwards — a thread that woke meanwhile left a different line, and its
//! copy is dropped. The copy is unwound by framehop against the unwind tables
//! (`.eh_frame_hdr`, `.eh_frame`) of every module loaded when the first stack is read, found
//! through `dl_iterate_phdr` in this process's own memory: no file is opened. Naming the
//! frames ([`symbols`]) reads the binary's debug information, when a report asks.
//!
//! Cost, measured (`capture_cost` in this file's tests): see docs/where.md.

use super::{Frame, Stack};
use crate::blocked_call::Tid;

/// Why where in the code is not read here, or `None` where it is.
pub(crate) fn unread() -> Option<String> {
    if !cfg!(all(linux_reads, target_arch = "x86_64")) {
        return Some(if cfg!(linux_reads) {
            "where in the code is not read here: perfshape unwinds a sleeping worker's stack on x86-64 only".to_string()
        } else {
            format!(
                "where in the code is not read here: {}",
                crate::platform::not_read(
                    "a sleeping worker's stack",
                    "/proc/self/task/TID/syscall and the thread's stack memory"
                )
            )
        });
    }
    if !crate::blocked_call::available() {
        return Some("where in the code is not read here: the kernel refuses this process its threads' /proc/self/task/TID/syscall files (a hardened kernel or container)".to_string());
    }
    None
}

/// Reads stacks on the sampling thread: its unwinding cache and copy buffer, kept from one
/// sample to the next.
#[derive(Default)]
pub(crate) struct Capturer {
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    inner: x86_64::Inner,
}

impl std::fmt::Debug for Capturer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Capturer")
    }
}

impl Capturer {
    /// Reads the process's modules (their code's places and unwind tables, once a process:
    /// ≈1 ms, a few more in a large test binary) on the calling thread — a claim's or a
    /// watch's, as it starts its sampler — so that the sampler never waits for them. A
    /// capture before they are read reads nothing.
    pub(crate) fn prepare() {
        #[cfg(all(linux_reads, target_arch = "x86_64"))]
        let _ = x86_64::modules();
    }

    /// The stack of thread `tid`, asleep in the call its `syscall` file read as `line`;
    /// `None` where the thread moved on while it was copied, or nothing is read here.
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    pub(crate) fn capture(&mut self, tid: Tid, line: &str) -> Option<Stack> {
        self.inner.capture(tid, line)
    }

    /// Nothing is read here ([`unread`] says why).
    #[cfg(not(all(linux_reads, target_arch = "x86_64")))]
    pub(crate) fn capture(&mut self, _tid: Tid, _line: &str) -> Option<Stack> {
        None
    }
}

/// The frames at `address` (ready for lookup), its inlined frames innermost first: the
/// binary's symbols and line tables, read by the `backtrace` crate, which opens the loaded
/// modules' files once and keeps them.
#[cfg(linux_reads)]
pub(super) fn symbols(address: u64) -> Vec<Frame> {
    let mut frames = Vec::new();
    backtrace::resolve(address as *mut std::ffi::c_void, |symbol| {
        frames.push(Frame {
            function: symbol
                .name()
                .map(|name| format!("{name:#}"))
                .unwrap_or_default(),
            file: symbol.filename().map(|f| f.to_path_buf()),
            line: symbol.lineno(),
        });
    });
    frames
}

/// No stack is captured here, so no address is named.
#[cfg(not(linux_reads))]
pub(super) fn symbols(_address: u64) -> Vec<Frame> {
    Vec::new()
}

/// The stack and instruction pointers at the end of a `syscall` line (`nr a1 … a6 sp pc`).
#[cfg_attr(not(all(linux_reads, target_arch = "x86_64")), allow(dead_code))]
fn pointers(line: &str) -> Option<(u64, u64)> {
    let mut words = line.split_whitespace().rev();
    let hex = |w: &str| u64::from_str_radix(w.trim_start_matches("0x"), 16).ok();
    let pc = hex(words.next()?)?;
    let sp = hex(words.next()?)?;
    (sp != 0 && pc != 0).then_some((sp, pc))
}

#[cfg(all(linux_reads, target_arch = "x86_64"))]
mod x86_64 {
    use std::ops::Range;
    use std::sync::OnceLock;

    use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
    use framehop::{ExplicitModuleSectionInfo, Module, Unwinder};

    use super::{Stack, Tid, pointers};

    /// The most of a stack copied, from its pointer up: the call, the library that made
    /// it and the service's frames above it fit many times over; deeper frames (the
    /// runtime's) are cut, and the unwinding ends there.
    const STACK_BYTES: usize = 64 * 1024;

    /// A page, the unit of the copy: a page that is not mapped ends it.
    const PAGE: u64 = 4096;

    /// The most frames kept of a stack.
    const MAX_FRAMES: usize = 96;

    type Unwinder64 = UnwinderX86_64<Vec<u8>>;

    pub(super) struct Inner {
        cache: CacheX86_64,
        bytes: Vec<u8>,
    }

    impl Default for Inner {
        fn default() -> Self {
            Inner {
                cache: CacheX86_64::new(),
                bytes: vec![0; STACK_BYTES],
            }
        }
    }

    impl Inner {
        pub(super) fn capture(&mut self, tid: Tid, line: &str) -> Option<Stack> {
            let modules = MODULES.get()?;
            let (sp, pc) = pointers(line)?;
            let copied = copy_stack(sp, &mut self.bytes);
            // Still asleep in the same call at the same place: the copy is of a still stack.
            if crate::blocked_call::syscall_line(tid).as_deref() != Some(line) || copied < 8 {
                return None;
            }
            let bytes = &self.bytes[..copied];
            // The kernel gives no frame pointer, and the standard library is built with
            // frame pointers: its frames' rules need one. The C library's call wrapper
            // leaves the register as its caller set it — pointing at a slot of the copy
            // that holds the caller's caller's frame pointer, with a return address above
            // it. Each such slot is tried (the first few, lowest first) and the one that
            // unwinds deepest is kept; the unwinding from none is the floor.
            let mut best = unwind(modules, &mut self.cache, (pc, sp, 0), bytes);
            for bp in frame_pointers(modules, sp, bytes).take(CANDIDATES) {
                let unwound = unwind(modules, &mut self.cache, (pc, sp, bp), bytes);
                if unwound.len() > best.len() {
                    best = unwound;
                }
            }
            (!best.is_empty()).then_some(Stack { addresses: best })
        }
    }

    /// The frames from `pc`, `sp` and `bp` over the copy `bytes` (taken at `sp`).
    fn unwind(
        modules: &Modules,
        cache: &mut CacheX86_64,
        (pc, sp, bp): (u64, u64, u64),
        bytes: &[u8],
    ) -> Vec<u64> {
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

    /// How many slots that may hold a frame pointer are tried.
    const CANDIDATES: usize = 8;

    /// The word at `address` of the copy `bytes` taken at `sp`.
    fn word(bytes: &[u8], sp: u64, address: u64) -> Option<u64> {
        let at = usize::try_from(address.checked_sub(sp)?).ok()?;
        Some(u64::from_le_bytes(
            bytes.get(at..at.checked_add(8)?)?.try_into().ok()?,
        ))
    }

    /// The slots of the copy that look like a frame's base: a return address into loaded
    /// code above it, and in it the next frame's base (higher in the copy) or the end of
    /// the chain (zero). Lowest first.
    fn frame_pointers<'a>(
        modules: &'a Modules,
        sp: u64,
        bytes: &'a [u8],
    ) -> impl Iterator<Item = u64> + 'a {
        let end = sp + bytes.len() as u64;
        (0..bytes.len().saturating_sub(16) as u64)
            .step_by(8)
            .map(move |offset| sp + offset)
            .filter(move |&slot| {
                let (Some(saved), Some(returns)) =
                    (word(bytes, sp, slot), word(bytes, sp, slot + 8))
                else {
                    return false;
                };
                modules.is_code(returns) && (saved == 0 || (saved > slot && saved < end))
            })
    }

    /// The modules loaded when the first capturer was made: their code's places, and the
    /// unwinder that knows their tables.
    pub(super) struct Modules {
        unwinder: Unwinder64,
        code: Vec<Range<u64>>,
    }

    impl Modules {
        /// Whether `address` is in a loaded module's code.
        fn is_code(&self, address: u64) -> bool {
            self.code.iter().any(|range| range.contains(&address))
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
            let mut unwinder = Unwinder64::new();
            for module in loaded {
                unwinder.add_module(module.into_module());
            }
            Modules { unwinder, code }
        })
    }

    /// Copies this process's memory from `sp` up into `into`, a page at a time; how many
    /// bytes it copied (the copy ends at the first page that is not mapped).
    fn copy_stack(sp: u64, into: &mut [u8]) -> usize {
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
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread asleep in `std::thread::sleep` for a second, and its kernel id.
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    fn sleeper() -> (Tid, std::thread::JoinHandle<()>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            tx.send(crate::blocked_call::current().expect("a tid"))
                .unwrap();
            std::thread::sleep(std::time::Duration::from_secs(1));
        });
        let tid = rx.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        (tid, handle)
    }

    /// A thread asleep in `std::thread::sleep` is unwound through the standard library
    /// (built with frame pointers) up to this test's closure, and named there.
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    #[test]
    fn a_sleeping_thread_is_unwound_to_the_code_that_slept() {
        if unread().is_some() {
            return;
        }
        let (tid, handle) = sleeper();
        let line = crate::blocked_call::syscall_line(tid).expect("its syscall file");
        let _ = x86_64::modules();
        let stack = Capturer::default()
            .capture(tid, &line)
            .expect("the sleeping thread's stack");
        let frames = stack.frames();
        assert!(
            frames.0.iter().any(|f| f.function.contains("sleeper")),
            "{frames}"
        );
        handle.join().unwrap();
    }

    /// What a capture costs, measured, not asserted: `cargo test --release --lib -p
    /// perfshape capture_cost -- --ignored --nocapture` prints reading the modules (once a
    /// process: their places and unwind tables copied), a capture, and naming the frames
    /// the first time (which reads the binary's debug information) and after.
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    #[test]
    #[ignore = "a measurement: run it by name"]
    fn capture_cost() {
        use std::time::Instant;
        let (tid, handle) = sleeper();
        let line = crate::blocked_call::syscall_line(tid).expect("its syscall file");
        let began = Instant::now();
        let _ = x86_64::modules();
        let first = began.elapsed();
        let mut capturer = Capturer::default();
        let stack = capturer.capture(tid, &line).expect("a stack");
        let n = 200;
        let began = Instant::now();
        for _ in 0..n {
            std::hint::black_box(capturer.capture(tid, &line));
        }
        let each = began.elapsed() / n;
        let began = Instant::now();
        let frames = stack.frames();
        let named_first = began.elapsed();
        let began = Instant::now();
        std::hint::black_box(stack.frames());
        let named = began.elapsed();
        eprintln!(
            "the modules read in {first:?}; each capture {each:?}; {} frames named first in {named_first:?}, after in {named:?}",
            frames.0.len()
        );
        handle.join().unwrap();
    }

    #[test]
    fn the_pointers_are_the_last_two_words_of_a_call() {
        let line = "202 0x7f3a2c0 0x80 0x0 0x0 0x0 0x0 0x7ffd1a2b3c40 0x7f3a1b2c3d4e";
        assert_eq!(pointers(line), Some((0x7ffd1a2b3c40, 0x7f3a1b2c3d4e)));
        assert_eq!(pointers("running"), None);
        assert_eq!(pointers("-1 0x0 0x0"), None);
    }
}
