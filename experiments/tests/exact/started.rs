//! A service started from a command — a side of `perfshape compare` — is named with its
//! command and last lines when it exits first or never listens, and is stopped (its whole
//! process group) when dropped.

use std::time::Duration;

use perfshape::Target;
use perfshape_experiments::Result;
use perfshape_experiments::external::StartedService;

/// A log file of this test's own.
fn log(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("perfshape-exact-{name}-{}.log", std::process::id()))
}

#[test]
fn a_command_that_exits_first_or_never_listens_is_named() {
    let err = StartedService::start(
        "base",
        "echo 'no such build'; exit 4",
        None,
        Duration::from_secs(10),
        &log("exits"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("the base command `echo 'no such build'; exit 4` exited (exit status: 4) before listening on 127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("no such build"), "its last lines: {err}");
    let err = StartedService::start(
        "candidate",
        "sleep 30",
        None,
        Duration::from_millis(300),
        &log("silent"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("the candidate command `sleep 30` did not listen on 127.0.0.1:")
            && err.contains("within 0.3 s (stopped)"),
        "{err}"
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("an address").port();
    let err = StartedService::start(
        "base",
        "true",
        Some(port),
        Duration::from_secs(1),
        &log("taken"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(&format!(
            "the base command `true` 127.0.0.1:{port} is taken already"
        )),
        "{err}"
    );
}

#[test]
fn a_started_service_listens_on_its_port_and_stops_with_its_children() -> Result {
    // `sleep 0;` makes the shell fork the server rather than become it: the server is the
    // shell's child, which stopping must reach too.
    let service = StartedService::start(
        "base",
        "sleep 0; python3 -m http.server --bind 127.0.0.1 {port}",
        None,
        Duration::from_secs(20),
        &log("python"),
    )?;
    let port = service.port();
    assert!(service.command().ends_with(&format!("127.0.0.1 {port}")));
    Target::url(&service.url())?.checked_get("/")?;
    drop(service);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    assert!(
        std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_err(),
        "nothing listens on {addr} once the service is dropped"
    );
    Ok(())
}
