//! A service in a process of its own, for claims by URL whose service's CPU is read apart
//! from the load client's: the command must print `listening on <base URL>` (anywhere in a
//! line of its standard output) and serve until its standard input closes. It is stopped
//! by its process id when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A running service of this program's, and the URL it listens at.
pub struct Served {
    child: Child,
    /// Where it listens: `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Served {
    /// Starts `command` and waits for the line saying where it listens.
    ///
    /// # Panics
    /// When the command cannot start or ends without saying where it listens: a test's
    /// own setup failing, named.
    pub fn start(mut command: Command) -> Served {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the service's command starts");
        let stdout = child.stdout.take().expect("piped");
        let base = BufReader::new(stdout)
            .lines()
            .map_while(std::io::Result::ok)
            // libtest prints its own "test … ..." before a test's first line.
            .find_map(|line| {
                let (_, base) = line.split_once("listening on ")?;
                Some(base.trim().to_string())
            })
            .expect("the service says where it listens");
        Served { child, base }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
