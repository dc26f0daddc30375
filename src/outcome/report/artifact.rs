//! A report's raw figures, written as JSON where a folder of CI artifacts keeps them: a
//! name that says which test wrote which, stable across runs and machines.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::ClaimReport;

impl ClaimReport {
    /// Writes the report to `dir` as `<test>--<claim>-<key>.json`: the test that made it
    /// (`caller`, its thread's name, as libtest and nextest name a test's thread; left out
    /// where it is `main`, a tokio worker's or unknown), so that a folder of CI artifacts says which test wrote
    /// which, and a key that hashes the claim's name, its context (the target, named or
    /// described) and the test: two targets with the same path, or one claim made in two
    /// tests, do not overwrite each other. A second report under the same name in one
    /// process gets `-2`, `-3`, … A failure to write is reported on stderr and does not
    /// change the verdict.
    pub(crate) fn write_artifact(&mut self, dir: &std::path::Path, caller: Option<&str>) {
        let mut key = format!("{}\n{}", self.name, caller.unwrap_or_default());
        for (k, v) in &self.context {
            let _ = write!(key, "\n{k}={v}");
        }
        let test = caller
            .filter(|name| *name != "main" && !name.starts_with("tokio-"))
            .map(|name| format!("{}--", slug(name)))
            .unwrap_or_default();
        let mut stem = format!("{test}{}", slug(&self.name));
        // A file's name has 255 bytes at most: the slugs are ASCII, the key 9 and ".json" 5
        // more, and "-2" … room enough.
        stem.truncate(200);
        let stem = format!("{stem}-{:08x}", fnv1a(&key) as u32);
        let path = unclaimed(dir, &stem);
        let written = std::fs::create_dir_all(dir).and_then(|()| {
            let json = serde_json::to_vec_pretty(&*self).map_err(std::io::Error::other)?;
            std::fs::write(&path, json)
        });
        match written {
            Ok(()) => self.artifact = Some(path),
            Err(e) => eprintln!("perfshape: could not write {}: {e}", path.display()),
        }
    }
}

/// `dir/stem.json`, or `dir/stem-2.json`, … when this process has written that one.
fn unclaimed(dir: &std::path::Path, stem: &str) -> PathBuf {
    static WRITTEN: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut written = WRITTEN.lock().unwrap_or_else(|p| p.into_inner());
    let path = (1..)
        .map(|k| match k {
            1 => dir.join(format!("{stem}.json")),
            k => dir.join(format!("{stem}-{k}.json")),
        })
        .find(|path| !written.contains(path))
        .expect("an unbounded range has a free name");
    written.push(path.clone());
    path
}

/// FNV-1a, 64 bits: a hash that is the same on every machine and Rust release (std's
/// hasher is not promised to be), so an artifact's name is stable across runs.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Where raw figures go: `$PERFSHAPE_ARTIFACTS`, else `<target dir>/perfshape`, where the
/// target dir is `$CARGO_TARGET_DIR` or the `target` folder the running binary lives in.
///
/// A relative `$PERFSHAPE_ARTIFACTS` (or `$CARGO_TARGET_DIR`) is taken from the folder that holds that `target`
/// folder — the workspace's root — not from the test's working directory: cargo and
/// nextest run each package's tests in the package's own folder, and a workspace whose
/// members all write to `target/perfshape/suite` means the one under its root.
pub fn artifact_dir() -> PathBuf {
    let binary_target = || {
        std::env::current_exe().ok().and_then(|exe| {
            exe.ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "target"))
                .map(PathBuf::from)
        })
    };
    if let Some(dir) = std::env::var_os("PERFSHAPE_ARTIFACTS") {
        let dir = PathBuf::from(dir);
        let root = binary_target().and_then(|t| t.parent().map(PathBuf::from));
        return match root {
            Some(root) if dir.is_relative() => root.join(dir),
            _ => dir,
        };
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        // A relative target dir is cargo's, from where cargo ran — the workspace's root —
        // not from the package folder a test runs in.
        let dir = PathBuf::from(dir);
        let root = binary_target().and_then(|t| t.parent().map(PathBuf::from));
        return match root {
            Some(root) if dir.is_relative() => root.join(dir).join("perfshape"),
            _ => dir.join("perfshape"),
        };
    }
    binary_target()
        .map(|t| t.join("perfshape"))
        .unwrap_or_else(|| PathBuf::from("target").join("perfshape"))
}

fn slug(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_matches('-').to_string()
}
