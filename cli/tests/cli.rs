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

/// A fresh, empty folder under the system's temporary folder.
fn fresh_folder(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("perfshape-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// `perfshape report` on a folder with nothing of a run in it says so, naming the folder,
/// instead of writing an empty report that looks like a green run.
#[test]
fn the_report_command_refuses_a_folder_without_a_run() {
    let dir = fresh_folder("empty");
    let output = Command::new(env!("CARGO_BIN_EXE_perfshape"))
        .arg("report")
        .arg(&dir)
        .output()
        .expect("the perfshape binary runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "perfshape: error: invalid report folder: {}",
            dir.display()
        )),
        "{stderr}"
    );
    assert!(!dir.join("report.html").exists());
}

/// With `$GITHUB_STEP_SUMMARY` set, the claims' table is appended to that file (after what
/// an earlier step wrote) and the HTML page is written beside the claims.
#[test]
fn the_report_command_appends_to_the_job_summary() {
    use perfshape::{Claim, Expected, Measure};
    let dir = fresh_folder("summary");
    Claim::bound(
        "a synthetic claim",
        Measure::value("figure", || Ok(1.0)).expecting(Expected::new(1.0, "one")),
    )
    .within(0.9, 1.1)
    .warmup(0)
    .artifacts_in(&dir)
    .check()
    .expect("a claim decided on synthetic figures");
    let summary = dir.join("step-summary.md");
    std::fs::write(&summary, "earlier step\n").expect("written");
    let output = Command::new(env!("CARGO_BIN_EXE_perfshape"))
        .arg("report")
        .arg(&dir)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .expect("the perfshape binary runs");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        output.stdout.is_empty(),
        "printed only without a job summary"
    );
    let text = std::fs::read_to_string(&summary).expect("the summary");
    assert!(
        text.starts_with("earlier step\n### perfshape: 1 claim — 0 broken, 0 inconclusive, 1 hold"),
        "{text}"
    );
    assert!(
        text.contains("| ✅ holds | a synthetic claim | 1 | [0.9, 1.1] | 3 |"),
        "{text}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).expect("the page");
    assert!(html.contains("a synthetic claim"));
}
