//! Tells perfshape how cargo optimised it, and which platform reads it compiles.
//!
//! The default poll budget of the blocking claims is stated for optimised work, and a team's
//! default test profile builds perfshape (and every other dependency, and the service)
//! without optimisations.
//!
//! `linux_reads` is set where `/proc` is read (procfs): on Linux, unless the build asks for
//! the portable fallback with `--cfg perfshape_portable`, which every other platform gets
//! anyway. It is the same condition as the procfs dependency's in Cargo.toml, named once.

fn main() {
    let level = std::env::var("OPT_LEVEL").unwrap_or_else(|_| "0".to_string());
    println!("cargo:rustc-env=PERFSHAPE_OPT_LEVEL={level}");
    println!("cargo::rustc-check-cfg=cfg(linux_reads)");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let portable = std::env::var_os("CARGO_CFG_PERFSHAPE_PORTABLE").is_some();
    if linux && !portable {
        println!("cargo::rustc-cfg=linux_reads");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
