//! A throwaway PostgreSQL cluster for one test binary: `initdb` into a temporary
//! directory, `pg_ctl start` on a free port of 127.0.0.1, stopped and removed on drop.
//!
//! The server binaries are found on `PATH`, else in `PG_BIN`, else in the newest
//! `/usr/lib/postgresql/*/bin` (Debian's layout). PostgreSQL refuses to run as root: run
//! as root, the cluster is made and started as the `postgres` user (`runuser`), its
//! directory handed to that user.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;

/// A running cluster; its superuser `accounts` uses the database `postgres` `initdb` made.
pub(crate) struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    /// Kept for its drop: removes the directory.
    _dir: tempfile::TempDir,
    as_postgres: bool,
    /// The port it listens on, on 127.0.0.1.
    pub(crate) port: u16,
}

impl Cluster {
    /// Makes and starts a cluster; the error names the step that failed and what it said.
    pub(crate) fn start() -> Result<Cluster, String> {
        let bin = server_binaries()?;
        let dir = tempfile::Builder::new()
            .prefix("perfshape-pg-")
            .tempdir()
            .map_err(|e| format!("a temporary directory for PostgreSQL: {e}"))?;
        let data = dir.path().join("data");
        // SAFETY: `geteuid` only reads the calling process's effective user id.
        let as_postgres = unsafe { libc_geteuid() } == 0;
        if as_postgres {
            run(Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(dir.path()))?;
        }
        let port = free_port()?;
        let mut cluster = Cluster {
            bin,
            data,
            _dir: dir,
            as_postgres,
            port,
        };
        let data = cluster.data.clone();
        cluster.pg("initdb", |c| {
            c.arg("-D").arg(&data).args([
                "-A",
                "trust",
                "-U",
                "accounts",
                "--no-sync",
                "-E",
                "UTF8",
            ])
        })?;
        let socket_dir = cluster._dir.path().to_path_buf();
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50",
            socket_dir.display()
        );
        let log = cluster._dir.path().join("log");
        cluster.pg("pg_ctl", |c| {
            c.arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(&log)
                .args(["-o", &options, "-w", "-t", "30", "start"])
        })?;
        Ok(cluster)
    }

    /// `127.0.0.1:PORT`, where it listens.
    pub(crate) fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `postgres://accounts@127.0.0.1:PORT/postgres`.
    pub(crate) fn url(&self) -> String {
        self.url_at(&format!("127.0.0.1:{}", self.port))
    }

    /// The URL with `addr` (`host:port`) in place of the cluster's.
    pub(crate) fn url_at(&self, addr: &str) -> String {
        format!("postgres://accounts@{addr}/postgres")
    }

    /// Runs one of the server's programs, as `postgres` when run as root — on the CPUs
    /// `PG_CPUS` names (`taskset -c`), where it is set: how docs/production-distance.md
    /// pinned why a sync driver on loopback reads no wait when the database shares the
    /// worker's CPU.
    fn pg(
        &mut self,
        program: &str,
        args: impl FnOnce(&mut Command) -> &mut Command,
    ) -> Result<(), String> {
        let path = self.bin.join(program);
        let mut command = match std::env::var("PG_CPUS") {
            Ok(cpus) => {
                let mut c = Command::new("taskset");
                c.args(["-c", &cpus]);
                c
            }
            Err(_) => Command::new("env"),
        };
        if self.as_postgres {
            command.args(["runuser", "-u", "postgres", "--"]);
        }
        command.arg(&path);
        run(args(&mut command))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data.clone();
        let _ = self.pg("pg_ctl", |c| {
            c.arg("-D")
                .arg(&data)
                .args(["-m", "immediate", "-w", "stop"])
        });
    }
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("running {command:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// The directory of `initdb` and `pg_ctl`.
fn server_binaries() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file());
    if let Some(dir) = on_path {
        return Ok(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "PostgreSQL's server binaries (initdb, pg_ctl) are not on PATH, in PG_BIN or in /usr/lib/postgresql/*/bin: install PostgreSQL (apt-get install postgresql) to run these tests".to_string()
    })
}

/// A port nobody listens on now.
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("a free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("a free port: {e}"))
}

unsafe extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}
