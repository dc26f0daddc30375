//! The command refuses bad input at once, before any load, and names what is wrong.

use std::process::Command;

/// A port on 127.0.0.1 that nobody listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("an address").port()
}

/// `perfshape probe` parses and connects before it sends anything: a typo or a dead host
/// fails at once with the parse or connect error.
#[test]
fn the_probe_command_refuses_a_bad_url_at_once() {
    let probe = |url: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_perfshape"))
            .args(["probe", url])
            .output()
            .expect("the perfshape binary runs");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = probe("not a url");
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr.trim(),
        "perfshape: error: cannot reach not a url: not a URL (relative URL without a base)"
    );
    let port = closed_port();
    let (code, stderr) = probe(&format!("http://127.0.0.1:{port}/blocking?ms=20"));
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with(&format!(
            "perfshape: error: cannot reach http://127.0.0.1:{port}/blocking?ms=20: connecting to 127.0.0.1:{port}"
        )),
        "{stderr}"
    );
}
