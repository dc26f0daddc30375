//! The modules this process has loaded (x86-64): their code's places, where their
//! functions start, and the unwinder that knows their `.eh_frame` tables — read once, when
//! the first capturer is made.

use std::ops::Range;
use std::sync::OnceLock;

use framehop::x86_64::UnwinderX86_64;
use framehop::{ExplicitModuleSectionInfo, Module, Unwinder};

type Unwinder64 = UnwinderX86_64<Vec<u8>>;

/// The modules loaded when the first capturer was made: their code's places, and the
/// unwinder that knows their tables.
pub(super) struct Modules {
    pub(super) unwinder: Unwinder64,
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
    pub(super) fn is_code(&self, address: u64) -> bool {
        self.code.iter().any(|range| range.contains(&address))
    }

    /// Where the function holding `address` starts: the last entry at or before it in its
    /// module's `.eh_frame_hdr` search table (sorted, as the linker writes it), where the
    /// table is of the shape linkers write (4-byte entries relative to the header).
    pub(super) fn function_start(&self, address: u64) -> Option<u64> {
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

pub(super) static MODULES: OnceLock<Modules> = OnceLock::new();

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
