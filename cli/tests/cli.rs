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
    assert_eq!(code, Some(3), "could not run");
    assert_eq!(
        stderr.trim(),
        "perfshape: error: cannot reach not a url: not a URL (relative URL without a base)"
    );
    let port = closed_port();
    let (code, stderr) = probe(&format!("http://127.0.0.1:{port}/blocking?ms=20"));
    assert_eq!(code, Some(3), "could not run");
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
    assert_eq!(output.status.code(), Some(3), "could not run");
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
    use perfshape::{Claim, claim::Expected, claim::Measure};
    let dir = fresh_folder("summary");
    Claim::bound(
        "a synthetic claim",
        Measure::value("figure", || Ok(1.0)).expecting(Expected::new(1.0, "one")),
    )
    .within(0.9, 1.1)
    .warmup(0)
    .artifacts_in(&dir)
    .check()
    .expect("a claim decided on synthetic figures")
    .gate()
    .expect("1.0 lies in [0.9, 1.1]");
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
        text.contains(
            "| ✅ holds | a synthetic claim | 1 | [0.9, 1.1] | 10% inside (95.4 floors) | 3 |"
        ),
        "{text}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).expect("the page");
    assert!(html.contains("a synthetic claim"));
}

/// Runs the command with `args` in the package's root, its claims' reports written to
/// `artifacts` (not the suite's folder: these claims are decided on test data); its exit
/// code, stdout and stderr.
fn perfshape(args: &[&str], artifacts: &std::path::Path) -> (Option<i32>, String, String) {
    perfshape_gated(args, artifacts, "strict")
}

/// [`perfshape`] under the gate mode `gate` (`PERFSHAPE_GATE`).
fn perfshape_gated(
    args: &[&str],
    artifacts: &std::path::Path,
    gate: &str,
) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_perfshape"))
        .args(args)
        .env("PERFSHAPE_ARTIFACTS", artifacts)
        .env("PERFSHAPE_GATE", gate)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("the perfshape binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `perfshape judge` decides seed 004's claims from a k6 summary and from Locust's CSV,
/// given the schedule flags the script was written with; with other flags it names the
/// stages that do not match instead of judging.
#[test]
fn the_judge_command_reads_k6_and_locust_statistics() {
    let dir = fresh_folder("judge");
    // Each captured with its schedule: k6's loops at its least, 1000 ms; Locust's at 600.
    for (stats, loop_ms, sent) in [
        (
            "experiments/tests/data/engines/k6-seed004-summary.json",
            "1000",
            3814,
        ),
        (
            "experiments/tests/data/engines/locust-seed004_stats.csv",
            "600",
            2217,
        ),
    ] {
        let (code, stdout, stderr) = perfshape(
            &[
                "judge",
                "fixtures/seed-004-jmeter-endpoints.toml",
                stats,
                "--test-scale",
                "--loop-ms",
                loop_ms,
            ],
            &dir,
        );
        assert_eq!(code, Some(0), "{stats}: {stderr}");
        assert!(
            stdout.contains("| seed-004 throughput in the published order, from ")
                && stdout.contains(" | holds | "),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("sent {sent} = ok {sent} + failed 0")),
            "{stdout}"
        );
    }
    let (code, _, stderr) = perfshape(
        &[
            "judge",
            "fixtures/seed-004-jmeter-endpoints.toml",
            "experiments/tests/data/engines/k6-seed004-summary.json",
            "--test-scale",
            "--rounds",
            "5",
        ],
        &dir,
    );
    assert_eq!(code, Some(3), "could not run");
    assert!(
        stderr.contains("k6-seed004-summary.json: no requests for 8 of 20 stages: "),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `perfshape export k6` writes a script naming every stage and refuses one k6 would
/// refuse; `perfshape locust --print-commands` writes the locustfile and prints the
/// master's and workers' commands, running nothing; both engine commands refuse a dead
/// host at once.
#[test]
fn the_export_and_locust_commands_write_their_scripts() {
    let dir = fresh_folder("export");
    let script = dir.join("seed004.js");
    let (code, _, stderr) = perfshape(
        &[
            "export",
            "k6",
            "fixtures/seed-004-jmeter-endpoints.toml",
            "--out",
            script.to_str().expect("UTF-8"),
        ],
        &dir,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let text = std::fs::read_to_string(&script).expect("the script");
    assert_eq!(
        text.matches("executor: 'constant-vus', vus: 100").count(),
        12
    );
    // Loops shorter than k6 runs are refused before a script is written, naming the flag
    // (the README's command once wrote --loop-ms 600, and k6 refused all 12 scenarios).
    let short = dir.join("short.js");
    let (code, _, stderr) = perfshape(
        &[
            "export",
            "k6",
            "fixtures/seed-004-jmeter-endpoints.toml",
            "--test-scale",
            "--loop-ms",
            "600",
            "--out",
            short.to_str().expect("UTF-8"),
        ],
        &dir,
    );
    assert_eq!(code, Some(3), "could not run");
    assert!(
        stderr.contains("row \"blocking\" is a closed loop of 600 ms")
            && stderr.contains("--loop-ms"),
        "{stderr}"
    );
    assert!(!short.exists());

    let port = closed_port();
    // `perfshape k6` refuses a dead host before k6 starts.
    let (code, _, stderr) = perfshape(
        &[
            "k6",
            "fixtures/seed-004-jmeter-endpoints.toml",
            "--host",
            &format!("http://127.0.0.1:{port}"),
            "--test-scale",
            "--loop-ms",
            "1000",
        ],
        &dir,
    );
    assert_eq!(code, Some(3), "could not run");
    assert!(
        stderr.contains(&format!("cannot reach http://127.0.0.1:{port}")),
        "{stderr}"
    );
    let (code, _, stderr) = perfshape(
        &[
            "locust",
            "fixtures/seed-004-jmeter-endpoints.toml",
            "--host",
            &format!("http://127.0.0.1:{port}"),
            "--print-commands",
        ],
        &dir,
    );
    assert_eq!(code, Some(3), "could not run");
    assert!(
        stderr.contains(&format!(
            "cannot reach http://127.0.0.1:{port}: connect to 127.0.0.1:{port}"
        )),
        "{stderr}"
    );
    // A host that accepts connections: the locustfile is written, the commands printed,
    // each naming `locust` as the load machines' PATH finds it (nothing runs here, so
    // Locust need not be installed here: the suite runs with PERFSHAPE_LOCUST unset too).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let host = format!("http://{}", listener.local_addr().expect("an address"));
    let locust_dir = dir.join("locust");
    let (code, stdout, stderr) = perfshape(
        &[
            "locust",
            "fixtures/seed-004-jmeter-endpoints.toml",
            "--host",
            &host,
            "--dir",
            locust_dir.to_str().expect("UTF-8"),
            "--print-commands",
            "--master-bind",
            "0.0.0.0",
        ],
        &dir,
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(locust_dir.join("locustfile.py").is_file());
    assert!(
        stdout.contains("\nlocust -f locustfile.py --headless"),
        "{stdout}"
    );
    assert!(
        stdout.contains("--master --master-bind-host 0.0.0.0"),
        "{stdout}"
    );
    assert!(stdout.contains("--expect-workers 2"), "{stdout}");
    assert!(
        stdout.contains(
            "\nlocust -f locustfile.py --worker --master-host MASTER_HOST --master-port 5557"
        ),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("--host {host}")), "{stdout}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Locust's statistics of seed 004 (experiments/tests/data/engines/) with `row`'s request count in
/// `round` set to `count`, written into `dir`: the same run, made to say something else.
fn stats_with(dir: &std::path::Path, name: &str, edits: &[(&str, u32)]) -> String {
    let original = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../experiments/tests/data/engines/locust-seed004_stats.csv"
    ))
    .expect("the captured statistics");
    let edited: Vec<String> = original
        .lines()
        .map(|line| {
            let mut cells: Vec<String> = line.split(',').map(str::to_string).collect();
            if let Some(&(_, count)) = edits.iter().find(|(stage, _)| cells[1] == *stage) {
                cells[2] = count.to_string();
            }
            cells.join(",")
        })
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, edited.join("\n") + "\n").expect("written");
    path.to_str().expect("UTF-8").to_string()
}

/// Every deciding command's exit status: 0 every claim holds, 1 a claim is broken, 2 none
/// broken but one inconclusive, 3 could not run — a bad flag included, which clap alone
/// would end with 2. An advisory gate names what does not hold and exits 0.
#[test]
fn the_exit_status_tells_holds_broken_inconclusive_and_could_not_run_apart() {
    let dir = fresh_folder("exit");
    let judge = |stats: &str, gate: &str| {
        let fixture = "fixtures/seed-004-jmeter-endpoints.toml";
        let args = ["judge", fixture, stats, "--test-scale", "--loop-ms", "600"];
        perfshape_gated(&args, &dir, gate)
    };
    let (code, _, stderr) = judge(
        "experiments/tests/data/engines/locust-seed004_stats.csv",
        "strict",
    );
    assert_eq!(code, Some(0), "every claim holds: {stderr}");

    // The async row as slow as the blocking one in every round: the order is broken.
    let slow = [("async@0", 97), ("async@1", 97), ("async@2", 97)];
    let broken = stats_with(&dir, "broken.csv", &slow);
    let (code, stdout, stderr) = judge(&broken, "strict");
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains(" | broken | "), "{stdout}");
    let (code, _, stderr) = judge(&broken, "advisory");
    assert_eq!(code, Some(0), "advisory: {stderr}");
    assert!(stderr.contains("advisory gate"), "{stderr}");

    // One round of three slow: the rounds disagree, and three are all there are.
    let straddling = stats_with(&dir, "straddling.csv", &[("async@1", 150)]);
    let (code, stdout, stderr) = judge(&straddling, "strict");
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    assert!(stdout.contains(" | inconclusive | "), "{stdout}");
    assert!(!stdout.contains(" | broken | "), "{stdout}");

    // Statistics that are not there, and a flag that does not exist.
    let (code, _, stderr) = judge("no-such-stats.csv", "strict");
    assert_eq!(code, Some(3), "{stderr}");
    let (code, _, stderr) = perfshape(&["judge", "--no-such-flag"], &dir);
    assert_eq!(code, Some(3), "{stderr}");
    let (code, stdout, _) = perfshape(&["--help"], &dir);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("3  could not run"), "{stdout}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `perfshape compare` refuses bad input at once, exit 3: a share it cannot read, a side
/// nobody listens on (the URL and the connect error), a command that exits before it
/// listens (its command and last lines) — and starts nothing it does not stop.
#[test]
fn the_compare_command_refuses_bad_input_at_once() {
    let dir = fresh_folder("compare-bad");
    let (code, _, stderr) = perfshape(
        &[
            "compare",
            "http://127.0.0.1:1/",
            "http://127.0.0.1:1/",
            "--tolerance",
            "ten",
        ],
        &dir,
    );
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("\"ten\": expected a percentage (10%) or a fraction (0.10)"),
        "{stderr}"
    );
    let port = closed_port();
    let dead = format!("http://127.0.0.1:{port}/report");
    let (code, _, stderr) = perfshape(&["compare", &dead, &dead], &dir);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "perfshape: error: cannot reach {dead}: connecting to 127.0.0.1:{port}"
        )),
        "{stderr}"
    );
    let (code, _, stderr) = perfshape(
        &[
            "compare",
            "--base-cmd",
            "echo 'cannot open build/main'; exit 7",
            "--candidate-cmd",
            "true",
        ],
        &dir,
    );
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("perfshape: error: the base command `echo 'cannot open build/main'; exit 7` exited (exit status: 7) before listening on 127.0.0.1:")
            && stderr.contains("cannot open build/main"),
        "{stderr}"
    );
    let (code, _, stderr) = perfshape(&["compare", "--base-cmd", "true"], &dir);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("--candidate-cmd"), "{stderr}");
    // The request's parts are read before anything starts.
    let (code, _, stderr) = perfshape(&["compare", &dead, &dead, "-H", "authorization"], &dir);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("\"authorization\": expected NAME: VALUE"),
        "{stderr}"
    );
    let (code, _, stderr) = perfshape(
        &[
            "compare",
            &dead,
            &dead,
            "--method",
            "post",
            "--json-body",
            "{\"delta\": 1,",
        ],
        &dir,
    );
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("invalid value '{\"delta\": 1,' for '--json-body <JSON>': not JSON: EOF while parsing a value at line 1 column 12"),
        "{stderr}"
    );
}

/// The command that starts the demo service on one worker, at compare's `{port}`.
fn serve_demo() -> String {
    format!(
        "{} serve --workers 1 --bind 127.0.0.1:{{port}}",
        env!("CARGO_BIN_EXE_perfshape")
    )
}

/// `--method`, `-H` and `--json-body` shape the request both sides are sent: the demo
/// service answers a POST to /health with 405, named before any load.
#[test]
fn the_compare_command_sends_the_method_asked_for() {
    let dir = fresh_folder("compare-method");
    let serve = serve_demo();
    let (code, stdout, stderr) = perfshape(
        &[
            "compare",
            "--base-cmd",
            &serve,
            "--candidate-cmd",
            &serve,
            "--path",
            "/health",
            "--method",
            "post",
            "-H",
            "authorization: Bearer t",
            "--json-body",
            "{\"delta\": 1}",
        ],
        &dir,
    );
    assert_eq!(code, Some(3), "{stdout}{stderr}");
    assert!(
        stderr.contains("the base's POST /health (")
            && stderr.contains("answered 405 in 1 of 1 requests"),
        "{stderr}"
    );
}

/// The whole command on two started builds, timed (the `shape` group runs it alone): the
/// same build on both sides holds (exit 0); a candidate whose handler waits 30 ms where
/// the base's waits 20 is broken (exit 1), one line per endpoint.
#[test]
fn timed_compare_of_two_started_builds() {
    let dir = fresh_folder("compare-timed");
    let serve = serve_demo();
    let (code, stdout, stderr) = perfshape(
        &[
            "compare",
            "--base-cmd",
            &serve,
            "--candidate-cmd",
            &serve,
            "--path",
            "/async?ms=20",
            "--path",
            "/offload?ms=20",
        ],
        &dir,
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "one line per endpoint: {stdout}");
    assert!(
        lines[0].starts_with("holds        /async?ms=20: the candidate is "),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("holds        /offload?ms=20: "),
        "{stdout}"
    );
    let base = perfshape_experiments::external::StartedService::start(
        "base",
        &serve,
        None,
        std::time::Duration::from_secs(20),
        &dir.join("base.log"),
    )
    .expect("the demo service starts");
    let (base_url, candidate_url) = (
        format!("{}/async?ms=20", base.url()),
        format!("{}/async?ms=30", base.url()),
    );
    let (code, stdout, stderr) = perfshape(&["compare", &base_url, &candidate_url], &dir);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("broken       /async?ms=20 vs /async?ms=30: the candidate is "),
        "{stdout}"
    );
}
