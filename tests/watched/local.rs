//! A route that asks another process on this machine directly — as a sync database driver
//! asks a loopback database — answers before its worker sleeps long enough to show: the
//! watch is never a pass there, and where it cannot tell it names the process and the
//! `Downstream` line that makes it decisive. The process is this test binary itself, run
//! again as an echo server ([`echo_server`]), so that the rule is gated wherever the suite
//! runs, with nothing but Rust.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::routing::get as route_get;
use perfshape::{PoolSettings, Result, Target, Verdict};

use crate::common::process;
use crate::{client, decided, get};

/// The variable that makes [`echo_server`] serve rather than refuse.
const ECHO: &str = "PERFSHAPE_TEST_ECHO_SERVER";

/// Run by [`echo`] alone, as a process of its own: echoes four bytes at a time on
/// each connection, until its standard input closes.
#[test]
#[ignore = "the echo server `local::a_process_met_directly_is_never_a_pass` starts"]
fn echo_server() {
    assert!(
        std::env::var_os(ECHO).is_some(),
        "run by local::a_process_met_directly_is_never_a_pass only"
    );
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    println!(
        "listening on {}",
        listener.local_addr().expect("its address")
    );
    std::io::stdout().flush().expect("said");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut word = [0u8; 4];
                while stream.read_exact(&mut word).is_ok() && stream.write_all(&word).is_ok() {}
            });
        }
    });
    // Until the test that started it lets go.
    let _ = std::io::stdin().read(&mut [0u8; 1]);
}

/// This binary run again as [`echo_server`], a process of its own, stopped when dropped.
fn echo() -> process::Served {
    let mut command = Command::new(std::env::current_exe().expect("this test binary"));
    command
        .args(["--exact", "local::echo_server", "--ignored", "--nocapture"])
        .env(ECHO, "1");
    process::Served::start(command)
}

#[tokio::test]
async fn a_process_met_directly_is_never_a_pass() -> Result {
    let echo = echo();
    let addr: SocketAddr = echo.base.parse().expect("the echo server's address");
    // One connection kept, as a sync driver's is, and asked on the worker.
    let connection = Arc::new(Mutex::new(
        TcpStream::connect(addr).expect("the echo server answers"),
    ));
    let app = Router::new().route(
        "/lookup",
        route_get(move || {
            let connection = Arc::clone(&connection);
            async move {
                let mut stream = connection.lock().unwrap_or_else(|p| p.into_inner());
                stream.write_all(b"find").expect("asked");
                let mut answer = [0u8; 4];
                stream.read_exact(&mut answer).expect("answered");
                String::from_utf8_lossy(&answer).into_owned()
            }
        }),
    );
    let target = Target::serve(PoolSettings::workers(1)?, app)?;
    let watch = target.watch()?;
    let client = client();
    for _ in 0..3 {
        get(&client, &target, "/lookup").await?;
    }
    let checked = watch.nothing_blocked()?;
    let said = format!("{:#}", checked.report());
    // Where the look for local processes is made: Linux's `/proc`, not the portable build
    // (what macOS and Windows get), whose watch sees no short sleep and no connection.
    if cfg!(any(perfshape_portable, not(target_os = "linux"))) {
        return Ok(());
    }
    match decided(&checked) {
        None | Some(Verdict::Broken) => {}
        Some(Verdict::Inconclusive) => {
            let process = format!("{addr} (");
            assert!(
                said.contains(&process) && said.contains("Downstream::to("),
                "the process at {addr} and the Downstream line: {said}"
            );
        }
        Some(verdict) => {
            panic!("a sync call to a process on this machine came out {verdict:?}: {said}")
        }
    }
    Ok(())
}
