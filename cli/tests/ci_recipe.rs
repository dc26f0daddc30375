//! The CI recipe a team copies (`docs/ci.md`) must work with this version: its workflow is
//! read from the page, and every perfshape command, flag and environment variable it uses
//! must exist here — a renamed verb or variable fails this test, not a team's first job.

use std::path::Path;
use std::process::Command;

/// The first fenced block of `language` in `page`.
fn block<'p>(page: &'p str, language: &str) -> &'p str {
    let open = format!("```{language}\n");
    let start = page
        .find(&open)
        .map(|i| i + open.len())
        .expect("the block is there");
    let end = page[start..].find("```").expect("the block is closed") + start;
    &page[start..end]
}

/// Every `run:` command of a workflow: single-line values, and `run: |` blocks.
fn run_commands(workflow: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut lines = workflow.lines().peekable();
    while let Some(line) = lines.next() {
        let Some((_, value)) = line.split_once("run: ") else {
            continue;
        };
        if value.trim() != "|" {
            commands.push(value.trim().to_string());
            continue;
        }
        let indent = |l: &str| l.len() - l.trim_start().len();
        let base = indent(line);
        while let Some(next) = lines.next_if(|l| l.trim().is_empty() || indent(l) > base) {
            if !next.trim().is_empty() {
                commands.push(next.trim().to_string());
            }
        }
    }
    commands
}

/// `key: value` pairs of the workflow's `env:` maps.
fn env_names(workflow: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside: Option<usize> = None;
    for line in workflow.lines() {
        let indent = line.len() - line.trim_start().len();
        let text = line.trim();
        if text.starts_with('#') || text.is_empty() {
            continue;
        }
        match inside {
            Some(at) if indent > at => {
                if let Some((name, _)) = text.split_once(':') {
                    names.push(name.to_string());
                }
            }
            _ => inside = (text == "env:").then_some(indent),
        }
    }
    names
}

fn perfshape(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_perfshape"))
        .args(args)
        .output()
        .expect("the command runs")
}

#[test]
fn the_ci_recipe_uses_only_what_this_version_has() {
    let page_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/ci.md");
    let page = std::fs::read_to_string(&page_path).expect("docs/ci.md");
    let workflow = block(&page, "yaml");
    let commands = run_commands(workflow);
    assert!(commands.len() >= 2, "{commands:?}");

    // The gate: nextest with the profile the page defines.
    let gate = commands
        .iter()
        .find(|c| c.starts_with("cargo nextest run"))
        .expect("the workflow runs nextest");
    let profile = gate
        .split_whitespace()
        .skip_while(|w| *w != "--profile")
        .nth(1)
        .expect("a named profile");
    let nextest = block(&page, "toml");
    assert!(
        nextest.contains(&format!("[profile.{profile}]")),
        "the page defines the {profile} profile:\n{nextest}"
    );

    // Every perfshape command: its verb and flags exist (`--help` of the verb).
    let mut checked = 0;
    for command in &commands {
        let Some((_, args)) = command.split_once(" -- ") else {
            continue;
        };
        let words: Vec<&str> = args.split_whitespace().collect();
        let verb = words[0];
        let help = perfshape(&[verb, "--help"]);
        assert!(
            help.status.success(),
            "`perfshape {verb}` is not a command of this version: {}",
            String::from_utf8_lossy(&help.stderr)
        );
        let text = String::from_utf8_lossy(&help.stdout);
        for flag in words.iter().filter(|w| w.starts_with("--")) {
            assert!(
                text.contains(flag),
                "`perfshape {verb}` has no {flag}:\n{text}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 1, "the workflow runs perfshape: {commands:?}");

    // Every variable it sets is one perfshape reads, with a value it accepts.
    let names = env_names(workflow);
    assert!(
        names.contains(&"PERFSHAPE_ARTIFACTS".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&perfshape::claim::GATE_ENV.to_string()),
        "{names:?}"
    );
    for name in names.iter().filter(|n| n.starts_with("PERFSHAPE_")) {
        assert!(
            ["PERFSHAPE_ARTIFACTS", perfshape::claim::GATE_ENV].contains(&name.as_str()),
            "{name} is not a variable perfshape reads"
        );
    }
    let gate_value = workflow
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix(&format!("{}: ", perfshape::claim::GATE_ENV))
        })
        .expect("the gate mode is set");
    assert!(
        perfshape::claim::GateMode::parse(gate_value).is_ok(),
        "PERFSHAPE_GATE: {gate_value}"
    );
}
