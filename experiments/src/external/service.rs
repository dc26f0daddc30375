//! A service started from a shell command for the length of a comparison — the merge
//! base's build and the pull request's, in a CI job where no service runs — given a port,
//! waited for until it listens, and stopped after, its whole process group with it.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::process::{free_port, tail};
use crate::error::{Error, Result};

/// What a command's text has replaced by its port (also given as `$PORT`).
pub const PORT_PLACEHOLDER: &str = "{port}";

/// How long a stopped service may take to leave after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// How often a starting service is tried for a connection.
const POLL: Duration = Duration::from_millis(20);

/// A service this process started: `sh -c COMMAND` in a process group of its own, with
/// `{port}` in the command and `$PORT` in its environment set to a port on 127.0.0.1
/// (free, unless one is given), its output in a log. Dropping it stops the group: SIGTERM,
/// then SIGKILL after 3 s.
///
/// ```no_run
/// use std::time::Duration;
/// use perfshape_experiments::external::StartedService;
///
/// let log = std::env::temp_dir().join("base.log");
/// let base = StartedService::start("base", "perfshape serve --bind 127.0.0.1:{port}", None, Duration::from_secs(30), &log)?;
/// println!("base listens at {}", base.url());
/// # Ok::<(), perfshape_experiments::Error>(())
/// ```
#[derive(Debug)]
pub struct StartedService {
    name: String,
    command: String,
    port: u16,
    log: PathBuf,
    child: Option<Child>,
}

impl StartedService {
    /// Starts `command` as the `name` side (`base`, `candidate`) on `port` (a free one
    /// when `None`) and waits up to `within` for it to accept a TCP connection on
    /// 127.0.0.1. Refused, naming the side and the command, when the port is taken
    /// already, the command exits first (with its last output lines), or it does not
    /// listen in time (then it is stopped).
    pub fn start(
        name: &str,
        command: &str,
        port: Option<u16>,
        within: Duration,
        log: &Path,
    ) -> Result<StartedService> {
        let failed = |what: String| Error::Service {
            name: name.to_string(),
            command: command.to_string(),
            what,
        };
        if command.trim().is_empty() {
            return Err(failed("the command is empty".into()));
        }
        let port = match port {
            Some(port) => {
                // A port in use would answer for the service before it started.
                TcpListener::bind(("127.0.0.1", port))
                    .map_err(|e| failed(format!("127.0.0.1:{port} is taken already ({e})")))?;
                port
            }
            None => free_port()?,
        };
        let text = command.replace(PORT_PLACEHOLDER, &port.to_string());
        let out = std::fs::File::create(log)
            .map_err(|e| Error::io(format!("creating {}", log.display()), e))?;
        let err = out
            .try_clone()
            .map_err(|e| Error::io(format!("opening {}", log.display()), e))?;
        let mut command = group::shell(&text);
        let child = command
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| failed(format!("cannot start {}: {e}", group::SHELL)))?;
        let mut service = StartedService {
            name: name.to_string(),
            command: text,
            port,
            log: log.to_path_buf(),
            child: Some(child),
        };
        service.wait_listening(within)?;
        Ok(service)
    }

    /// Waits until the service accepts a connection, it exits, or `within` passes.
    fn wait_listening(&mut self, within: Duration) -> Result<()> {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let started = Instant::now();
        loop {
            if TcpStream::connect_timeout(&addr, POLL).is_ok() {
                return Ok(());
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|child| child.try_wait().ok().flatten());
            if let Some(status) = exited {
                self.child = None;
                return Err(self.failed(format!(
                    "exited ({status}) before listening on {addr}; {}",
                    tail(&self.log)
                )));
            }
            if started.elapsed() >= within {
                self.stop();
                return Err(self.failed(format!(
                    "did not listen on {addr} within {} s (stopped); {}",
                    within.as_secs_f64(),
                    tail(&self.log)
                )));
            }
            std::thread::sleep(POLL);
        }
    }

    fn failed(&self, what: String) -> Error {
        Error::Service {
            name: self.name.clone(),
            command: self.command.clone(),
            what,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The port it was given.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The command as run (its port filled in).
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Where its output goes.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Stops its process group (SIGTERM, SIGKILL after 3 s) and reaps the shell.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        group::stop(&mut child);
        let _ = child.kill();
        let _ = child.wait();
        // A killed process closes its sockets only when it runs again to exit, which a
        // busy machine delays: wait until nothing answers on the port, so that it is free
        // when this returns. (Not until the group is gone: its orphans stay zombies until
        // init reaps them, sockets long closed.)
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let started = Instant::now();
        while TcpStream::connect_timeout(&addr, POLL).is_ok() && started.elapsed() < GRACE {
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for StartedService {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The shell a command runs in, and stopping what it started: on Unix the shell leads a
/// process group of its own, and the whole group is stopped (SIGTERM, SIGKILL after
/// [`GRACE`]); elsewhere the shell alone is.
mod group {
    use std::process::{Child, Command};

    #[cfg(unix)]
    pub(super) const SHELL: &str = "sh";
    #[cfg(not(unix))]
    pub(super) const SHELL: &str = "cmd";

    /// `text` in the shell, leading a process group of its own.
    #[cfg(unix)]
    pub(super) fn shell(text: &str) -> Command {
        use std::os::unix::process::CommandExt as _;
        let mut command = Command::new(SHELL);
        command.arg("-c").arg(text).process_group(0);
        command
    }

    /// `text` in the shell.
    #[cfg(not(unix))]
    pub(super) fn shell(text: &str) -> Command {
        let mut command = Command::new(SHELL);
        command.arg("/C").arg(text);
        command
    }

    /// Stops the shell's process group: SIGTERM, SIGKILL after the grace, and SIGKILL to
    /// children the shell left behind in it.
    #[cfg(unix)]
    pub(super) fn stop(child: &mut Child) {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        // The group's id is the shell's pid (process_group(0)).
        let group = Pid::from_raw(child.id() as i32);
        let _ = killpg(group, Signal::SIGTERM);
        if super::super::process::wait_bounded(child, super::GRACE).is_none() {
            let _ = killpg(group, Signal::SIGKILL);
        }
        let _ = killpg(group, Signal::SIGKILL);
    }

    /// Stops the shell (its children are not tracked off Unix).
    #[cfg(not(unix))]
    pub(super) fn stop(child: &mut Child) {
        let _ = child.kill();
    }
}
