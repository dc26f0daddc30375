//! A kernel sample ring of one thread's perf event: opened with `perf_event_open` on the
//! thread, mapped into this process, and read record by record. The events that write
//! into it — a computing worker's samples ([`linux`](super::linux)), a worker's switches
//! off its CPU (`switches`) — choose what a record holds.

use perf_event_open_sys::bindings as perf;

/// A mapped ring of one event: its descriptor, the mapping (a metadata page, then
/// `pages` data pages) and a buffer a record that wraps around the ring's end is
/// joined in.
pub(super) struct Ring {
    fd: std::os::fd::OwnedFd,
    base: *mut u8,
    len: usize,
    page: usize,
    pages: usize,
    record: Vec<u8>,
}

// SAFETY: the mapping is owned by this value alone and only read through `&mut self`.
unsafe impl Send for Ring {}

impl Ring {
    /// Opens `attr` on thread `tid` (0: the calling thread) with a ring of `pages` data
    /// pages (a power of two), or why the kernel refused, in a report's words: the event
    /// is one `perf_event_paranoid` allows up to `paranoid`.
    pub(super) fn open(
        attr: &mut perf::perf_event_attr,
        tid: i32,
        pages: usize,
        paranoid: u8,
    ) -> Result<Ring, String> {
        use std::os::fd::{AsRawFd, FromRawFd};
        attr.size = std::mem::size_of::<perf::perf_event_attr>() as u32;
        // SAFETY: a valid attribute block; the descriptor returned is owned below.
        let fd = unsafe {
            perf_event_open_sys::perf_event_open(
                attr,
                tid,
                -1,
                -1,
                libc::c_ulong::from(perf::PERF_FLAG_FD_CLOEXEC),
            )
        };
        if fd < 0 {
            return Err(refused(std::io::Error::last_os_error(), paranoid));
        }
        // SAFETY: `fd` was just returned by the kernel and is owned by nothing else.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = page * (1 + pages);
        // SAFETY: a shared mapping of the event's ring, as perf_event_open(2) describes it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(format!(
                "the kernel's sample ring could not be mapped ({}; perf_event_mlock_kb bounds what a process without CAP_IPC_LOCK maps)",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Ring {
            fd,
            base: base.cast(),
            len,
            page,
            pages,
            record: Vec::new(),
        })
    }

    /// The kernel's metadata page.
    fn meta(&self) -> *mut perf::perf_event_mmap_page {
        self.base.cast()
    }

    /// Forgets every record written so far: the next read begins after them.
    pub(super) fn skip(&mut self) {
        let meta = self.meta();
        // SAFETY: the first page of the mapping is the kernel's metadata page; the tail is
        // this reader's to write, after the head it moves to was read.
        let head = unsafe { std::ptr::read_volatile(&raw const (*meta).data_head) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::AcqRel);
        // SAFETY: as above.
        unsafe { std::ptr::write_volatile(&raw mut (*meta).data_tail, head) };
    }

    /// Enables or disables the event (an `ioctl`): a disabled one writes nothing.
    pub(super) fn enable(&mut self, on: bool) {
        use std::os::fd::AsRawFd;
        let fd = self.fd.as_raw_fd();
        // SAFETY: `fd` is this ring's open perf event; the argument is unused (0).
        unsafe {
            if on {
                perf_event_open_sys::ioctls::ENABLE(fd, 0);
            } else {
                perf_event_open_sys::ioctls::DISABLE(fd, 0);
            }
        }
    }

    /// Hands each record written since the last read to `each` — its type, its `misc`
    /// bits and the whole record, header included — and frees their room in the ring.
    pub(super) fn read(&mut self, mut each: impl FnMut(u32, u16, &[u8])) {
        let meta = self.meta();
        // SAFETY: the head is read before the data it covers (acquire), and the tail
        // written after (release).
        let head = unsafe { std::ptr::read_volatile(&raw const (*meta).data_head) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        // SAFETY: as above.
        let mut tail = unsafe { std::ptr::read_volatile(&raw const (*meta).data_tail) };
        let size = (self.pages * self.page) as u64;
        // SAFETY: the data pages follow the metadata page, `size` bytes of them.
        let data = unsafe { std::slice::from_raw_parts(self.base.add(self.page), size as usize) };
        while tail + 8 <= head {
            let at = |offset: u64| data[((tail + offset) % size) as usize];
            let kind = u32::from_le_bytes([at(0), at(1), at(2), at(3)]);
            let misc = u16::from_le_bytes([at(4), at(5)]);
            let length = u64::from(u16::from_le_bytes([at(6), at(7)]));
            if length < 8 || tail + length > head {
                break;
            }
            // The record, in one copy or two where it wraps around the ring's end.
            let (start, length) = ((tail % size) as usize, length as usize);
            let first = length.min(size as usize - start);
            self.record.clear();
            self.record.extend_from_slice(&data[start..start + first]);
            self.record.extend_from_slice(&data[..length - first]);
            each(kind, misc, &self.record);
            tail += length as u64;
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        // SAFETY: the tail is this reader's to write.
        unsafe { std::ptr::write_volatile(&raw mut (*meta).data_tail, tail) };
    }
}

/// A sample record's user stack at byte `at`: `size, data[size], dyn_size`, the bytes the
/// kernel copied (`dyn_size` of them).
pub(super) fn user_stack(record: &[u8], at: usize) -> Option<std::sync::Arc<[u8]>> {
    let u64_at = |at: usize| Some(u64::from_le_bytes(record.get(at..at + 8)?.try_into().ok()?));
    let size = usize::try_from(u64_at(at)?).ok()?;
    let bytes = record.get(at + 8..at + 8 + size)?;
    let copied = usize::try_from(u64_at(at + 8 + size)?).ok()?.min(size);
    Some(std::sync::Arc::from(&bytes[..copied]))
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open`, unmapped once; the descriptor closes after.
        unsafe { libc::munmap(self.base.cast(), self.len) };
        let _ = &self.fd;
    }
}

/// Why `perf_event_open` refused, in a report's words.
fn refused(error: std::io::Error, allowed: u8) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unread".into());
    match error.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => format!(
            "perf_event_open refused ({error}; perf_event_paranoid = {paranoid}: {allowed} or less, or CAP_PERFMON, lets a process {}; a container's seccomp profile may refuse it whatever the setting)",
            if allowed >= 2 {
                "sample its own threads"
            } else {
                "have its threads' switches off their CPU sampled (the switch is the kernel's)"
            }
        ),
        Some(libc::ENOENT | libc::ENOSYS | libc::EOPNOTSUPP) => {
            format!("this kernel has no software perf events ({error})")
        }
        _ => format!("perf_event_open failed ({error})"),
    }
}
