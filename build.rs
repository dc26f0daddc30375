//! Tells perfshape how cargo optimised it, and which platform reads it compiles.
//!
//! The default poll budget of the blocking claims is stated for optimised work, and a team's
//! default test profile builds perfshape (and every other dependency, and the service)
//! without optimisations.
//!
//! `linux_reads` is set where `/proc` is read (procfs): on Linux, unless the build asks for
//! the portable fallback every other platform gets. It asks in one of two ways:
//! - `PERFSHAPE_PORTABLE=1` in the environment: perfshape alone (its library, tests and
//!   examples, which then see `cfg(perfshape_portable)`) is rebuilt, every dependency kept —
//!   what `.ci/run` does, where `RUSTFLAGS` rebuilt all of them (≈140 s);
//! - `--cfg perfshape_portable` in `RUSTFLAGS`, which also leaves procfs out of the graph,
//!   the same condition as the procfs dependency's in Cargo.toml (`scripts/platforms.sh`
//!   checks the graph that way).

fn main() {
    let level = std::env::var("OPT_LEVEL").unwrap_or_else(|_| "0".to_string());
    println!("cargo:rustc-env=PERFSHAPE_OPT_LEVEL={level}");
    println!("cargo::rustc-check-cfg=cfg(linux_reads)");
    println!("cargo::rustc-check-cfg=cfg(perfshape_portable)");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let in_rustflags = std::env::var_os("CARGO_CFG_PERFSHAPE_PORTABLE").is_some();
    let asked = std::env::var("PERFSHAPE_PORTABLE").is_ok_and(|v| v == "1");
    if asked && !in_rustflags {
        println!("cargo::rustc-cfg=perfshape_portable");
    }
    if linux && !in_rustflags && !asked {
        println!("cargo::rustc-cfg=linux_reads");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PERFSHAPE_PORTABLE");
}
