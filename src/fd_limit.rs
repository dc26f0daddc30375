//! Enough file descriptors for a large load in one process.
//!
//! A load of N concurrent requests to a server in the same process holds two descriptors
//! per connection (the client's end and the server's), so seed 002's N = 1000 needs over
//! 2,000 where many systems allow 1,024 by default.

#[cfg(unix)]
use crate::error::Error;
use crate::error::Result;

/// Windows has no per-process limit on sockets to raise.
#[cfg(not(unix))]
pub fn ensure_fd_limit(_needed: u64) -> Result<()> {
    Ok(())
}

/// Raises the soft limit on open files to at least `needed` (up to the hard limit), or
/// says how to raise it.
#[cfg(unix)]
pub fn ensure_fd_limit(needed: u64) -> Result<()> {
    let (soft, hard) = rlimit::Resource::NOFILE
        .get()
        .map_err(|e| Error::io("reading the open-files limit", e))?;
    if soft >= needed {
        return Ok(());
    }
    if hard >= needed {
        rlimit::Resource::NOFILE
            .set(needed, hard)
            .map_err(|e| Error::io(format!("raising the open-files limit to {needed}"), e))?;
        return Ok(());
    }
    Err(Error::invalid(
        "open-files limit",
        format!("{soft} (hard limit {hard})"),
        format!(
            "at least {needed} for this load: raise it with `ulimit -n {needed}` (as root if above the hard limit)"
        ),
    ))
}
