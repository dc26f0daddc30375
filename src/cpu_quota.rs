//! The CPU a cgroup allows this process: a container's CPU limit (a Kubernetes runner pod's
//! `cpu: 1`, `docker run --cpus 1.5`) is a CFS quota on the cgroup the process runs in, not
//! fewer cores. `/proc/stat` still lists every core of the host and counts every process's
//! time on them, so a load the quota starves reads as a machine half idle. What the quota
//! allows, what the cgroup used and how often the kernel throttled it are read here from
//! the cgroup's own files — v2's `cpu.max` and `cpu.stat`, v1's `cpu.cfs_quota_us`,
//! `cpu.cfs_period_us`, `cpu.stat` and `cpuacct.usage` — found through `/proc/self/cgroup`
//! and the mount table (procfs).
//!
//! A quota may sit on an ancestor of the process's cgroup (a pod's limit above its
//! container's): the tightest one on the way to the hierarchy's root is the one that binds,
//! and its usage and throttling are the ones read.

use std::path::{Path, PathBuf};
use std::time::Instant;

/// The cgroup whose CPU quota binds this process, and which kind of files it has.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuQuota {
    /// The CPUs the quota allows: its quota ÷ its period (1.5 for 150 ms in each 100 ms).
    pub cpus: f64,
    dir: PathBuf,
    /// Where v1 keeps the cgroup's CPU time (`cpuacct.usage`); `None` for v2, whose
    /// `cpu.stat` has it.
    cpuacct: Option<PathBuf>,
}

/// A cgroup's counters at one moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuotaReading {
    /// The CPUs the quota allows.
    pub cpus: f64,
    /// The cgroup's CPU time so far, every process in it, in nanoseconds.
    pub used_ns: u64,
    /// Enforcement periods so far (`nr_periods`).
    pub periods: u64,
    /// Periods in which the cgroup used up its quota and was throttled (`nr_throttled`).
    pub throttled: u64,
    /// When it was read.
    pub at: Instant,
}

impl QuotaReading {
    /// The share of the quota used since `earlier` (0 to 1): the cgroup's CPU time ÷ the
    /// quota's CPUs × the time between the readings.
    pub fn used_since(&self, earlier: &QuotaReading) -> Option<f64> {
        let length = self.at.saturating_duration_since(earlier.at).as_secs_f64();
        let used = self.used_ns.checked_sub(earlier.used_ns)? as f64 / 1e9;
        (length > 0.0).then(|| (used / (self.cpus * length)).clamp(0.0, 1.0))
    }

    /// The share of enforcement periods since `earlier` in which the cgroup was throttled,
    /// `None` when no period passed.
    pub fn throttled_since(&self, earlier: &QuotaReading) -> Option<f64> {
        let periods = self.periods.checked_sub(earlier.periods)?;
        let throttled = self.throttled.saturating_sub(earlier.throttled);
        (periods > 0).then(|| (throttled as f64 / periods as f64).clamp(0.0, 1.0))
    }
}

impl CpuQuota {
    /// Cgroups are Linux's: no quota is read elsewhere ([`crate::platform`]).
    #[cfg(not(linux_reads))]
    fn of_this_process() -> Option<CpuQuota> {
        None
    }

    /// The quota binding this process, `None` where there is none (no cgroup CPU limit,
    /// or the files cannot be read).
    #[cfg(linux_reads)]
    fn of_this_process() -> Option<CpuQuota> {
        let me = procfs::process::Process::myself().ok()?;
        let cgroups = me.cgroups().ok()?;
        let mounts = me.mountinfo().ok()?;
        let mut v1_cpu = None;
        let mut v1_cpuacct = None;
        let mut v2 = None;
        for cgroup in &cgroups.0 {
            let has = |name: &str| cgroup.controllers.iter().any(|c| c == name);
            if cgroup.hierarchy == 0 && cgroup.controllers.is_empty() {
                v2 = mounted("cgroup2", None, &cgroup.pathname, &mounts);
            }
            if has("cpu") {
                v1_cpu = mounted("cgroup", Some("cpu"), &cgroup.pathname, &mounts);
            }
            if has("cpuacct") {
                v1_cpuacct = mounted("cgroup", Some("cpuacct"), &cgroup.pathname, &mounts);
            }
        }
        // A v1 cpu controller takes precedence: on a hybrid host the unified hierarchy is
        // mounted but has no cpu controller, and its files say nothing.
        match v1_cpu {
            Some((dir, root)) => binding_v1(&dir, &root, v1_cpuacct),
            None => v2.and_then(|(dir, root)| binding_v2(&dir, &root)),
        }
    }

    /// The quota binding this process, looked for once: a process does not change cgroup
    /// while it measures.
    pub fn binding() -> Option<&'static CpuQuota> {
        static QUOTA: std::sync::OnceLock<Option<CpuQuota>> = std::sync::OnceLock::new();
        QUOTA.get_or_init(CpuQuota::of_this_process).as_ref()
    }

    /// The counters now; `None` when a file cannot be read.
    pub fn read(&self) -> Option<QuotaReading> {
        let stat = std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?;
        let field = |name: &str| {
            stat.lines().find_map(|line| {
                let (key, value) = line.split_once(' ')?;
                (key == name).then(|| value.trim().parse::<u64>().ok())?
            })
        };
        let used_ns = match &self.cpuacct {
            Some(dir) => read_number(&dir.join("cpuacct.usage"))?,
            None => field("usage_usec")?.saturating_mul(1000),
        };
        Some(QuotaReading {
            cpus: self.cpus,
            used_ns,
            periods: field("nr_periods")?,
            throttled: field("nr_throttled")?,
            at: Instant::now(),
        })
    }

    /// The cgroup folder whose quota binds.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The folder of the cgroup at `pathname` in the hierarchy mounted with `fs_type` (and, for
/// v1, the controller `controller` among its options), and the mount's own folder — the
/// highest a quota may be looked for.
#[cfg(linux_reads)]
fn mounted(
    fs_type: &str,
    controller: Option<&str>,
    pathname: &str,
    mounts: &procfs::process::MountInfos,
) -> Option<(PathBuf, PathBuf)> {
    let mount = mounts.iter().find(|m| {
        m.fs_type == fs_type && controller.is_none_or(|c| m.super_options.contains_key(c))
    })?;
    // Inside a cgroup namespace the path is already relative to the mount; outside one a
    // container's mount root is a prefix of it.
    let relative = pathname
        .strip_prefix(mount.root.as_str())
        .unwrap_or(pathname)
        .trim_start_matches('/');
    Some((mount.mount_point.join(relative), mount.mount_point.clone()))
}

/// The tightest v1 quota from `dir` up to `root`.
// Read off Linux only by the tests, on folders they write.
#[cfg_attr(not(linux_reads), allow(dead_code))]
fn binding_v1(dir: &Path, root: &Path, cpuacct: Option<(PathBuf, PathBuf)>) -> Option<CpuQuota> {
    let (found, cpus) = tightest(dir, root, |d| {
        let quota: i64 = read_number(&d.join("cpu.cfs_quota_us"))?;
        let period: i64 = read_number(&d.join("cpu.cfs_period_us"))?;
        (quota > 0 && period > 0).then(|| quota as f64 / period as f64)
    })?;
    // The cpuacct folder of the same cgroup: mounted together with cpu (`cpu,cpuacct`) it
    // is the folder itself, else the same path under cpuacct's own mount.
    let cpuacct = if found.join("cpuacct.usage").is_file() {
        found.clone()
    } else {
        // (A container runtime makes the same path in every v1 hierarchy; where there is
        // none, the cgroup's usage is unknown and the quota is not read.)
        let (_, acct_root) = cpuacct?;
        let candidate = acct_root.join(found.strip_prefix(root).ok()?);
        candidate
            .join("cpuacct.usage")
            .is_file()
            .then_some(candidate)?
    };
    Some(CpuQuota {
        cpus,
        dir: found,
        cpuacct: Some(cpuacct),
    })
}

/// The tightest v2 quota from `dir` up to `root`.
// Read off Linux only by the tests, on folders they write.
#[cfg_attr(not(linux_reads), allow(dead_code))]
fn binding_v2(dir: &Path, root: &Path) -> Option<CpuQuota> {
    let (found, cpus) = tightest(dir, root, |d| {
        parse_cpu_max(&std::fs::read_to_string(d.join("cpu.max")).ok()?)
    })?;
    Some(CpuQuota {
        cpus,
        dir: found,
        cpuacct: None,
    })
}

/// v2's `cpu.max`: "max 100000" (no quota) or "150000 100000" (1.5 CPUs).
fn parse_cpu_max(text: &str) -> Option<f64> {
    let mut words = text.split_whitespace();
    let quota = words.next()?.parse::<f64>().ok()?;
    let period = words.next()?.parse::<f64>().ok()?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

/// The folder with the fewest CPUs by `cpus` on the way from `dir` up to `root`.
fn tightest(
    dir: &Path,
    root: &Path,
    cpus: impl Fn(&Path) -> Option<f64>,
) -> Option<(PathBuf, f64)> {
    let mut best: Option<(PathBuf, f64)> = None;
    let mut at = Some(dir);
    while let Some(d) = at {
        if let Some(c) = cpus(d)
            && best.as_ref().is_none_or(|(_, b)| c < *b)
        {
            best = Some((d.to_path_buf(), c));
        }
        if d == root {
            break;
        }
        at = d.parent().filter(|p| p.starts_with(root));
    }
    best
}

/// A quota's CPUs as a person writes them: `1 CPU`, `1.5 CPUs`, `0.25 CPUs`.
pub fn cpus_in_words(cpus: f64) -> String {
    let number = format!("{cpus:.2}");
    let number = number.trim_end_matches('0').trim_end_matches('.');
    format!("{number} {}", if number == "1" { "CPU" } else { "CPUs" })
}

/// A cgroup file holding one number (`cpu.cfs_quota_us` may hold -1: no quota).
fn read_number<T: std::str::FromStr>(path: &Path) -> Option<T> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::create_dir_all(dir).expect("a folder");
        std::fs::write(dir.join(name), text).expect("written");
    }

    #[test]
    fn v2_reads_the_tightest_quota_on_the_way_up_and_its_counters() {
        let root = tempfile::tempdir().expect("a folder");
        let pod = root.path().join("kubepods/pod1");
        let container = pod.join("ctr");
        write(root.path(), "cpu.max", "max 100000\n");
        write(&pod, "cpu.max", "100000 100000\n");
        write(&container, "cpu.max", "150000 100000\n");
        write(
            &pod,
            "cpu.stat",
            "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 40\nnr_throttled 10\nthrottled_usec 900000\n",
        );
        let quota = binding_v2(&container, root.path()).expect("a quota");
        assert_eq!((quota.cpus, quota.dir()), (1.0, pod.as_path()));
        let reading = quota.read().expect("its counters");
        assert_eq!(
            (reading.used_ns, reading.periods, reading.throttled),
            (2_500_000_000, 40, 10)
        );
    }

    #[test]
    fn no_quota_is_none() {
        let root = tempfile::tempdir().expect("a folder");
        write(root.path(), "cpu.max", "max 100000\n");
        assert_eq!(binding_v2(root.path(), root.path()), None);
        write(root.path(), "cpu.cfs_quota_us", "-1\n");
        write(root.path(), "cpu.cfs_period_us", "100000\n");
        assert_eq!(binding_v1(root.path(), root.path(), None), None);
    }

    #[test]
    fn v1_reads_the_quota_and_the_cpuacct_usage_beside_it() {
        let root = tempfile::tempdir().expect("a folder");
        let ci = root.path().join("ci");
        write(&ci, "cpu.cfs_quota_us", "100000\n");
        write(&ci, "cpu.cfs_period_us", "100000\n");
        write(
            &ci,
            "cpu.stat",
            "nr_periods 20\nnr_throttled 5\nthrottled_time 123\n",
        );
        write(&ci, "cpuacct.usage", "1000000000\n");
        let quota = binding_v1(&ci, root.path(), None).expect("a quota");
        assert_eq!(quota.cpus, 1.0);
        let then = quota.read().expect("read");
        write(&ci, "cpuacct.usage", "1500000000\n");
        write(
            &ci,
            "cpu.stat",
            "nr_periods 30\nnr_throttled 10\nthrottled_time 456\n",
        );
        let mut now = quota.read().expect("read again");
        now.at = then.at + std::time::Duration::from_secs(1);
        assert_eq!(now.used_since(&then), Some(0.5));
        assert_eq!(now.throttled_since(&then), Some(0.5));
    }

    #[test]
    fn cpus_read_as_a_person_writes_them() {
        assert_eq!(cpus_in_words(1.0), "1 CPU");
        assert_eq!(cpus_in_words(1.5), "1.5 CPUs");
        assert_eq!(cpus_in_words(0.25), "0.25 CPUs");
        assert_eq!(cpus_in_words(2.0), "2 CPUs");
    }

    #[test]
    fn cpu_max_parses_a_quota_and_refuses_max() {
        assert_eq!(parse_cpu_max("150000 100000\n"), Some(1.5));
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max(""), None);
    }
}
