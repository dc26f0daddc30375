//! The portable build for the experiments' own tests: `PERFSHAPE_PORTABLE=1` gives them
//! `cfg(perfshape_portable)`, as the gate's build script gives its own tests, so that a test
//! shared by both crates (`tests/common/decided.rs`) reads the same build alike. (The
//! gate's library itself, its Linux reads left out, is what the variable rebuilds.)

fn main() {
    println!("cargo::rustc-check-cfg=cfg(perfshape_portable)");
    let in_rustflags = std::env::var_os("CARGO_CFG_PERFSHAPE_PORTABLE").is_some();
    let asked = std::env::var("PERFSHAPE_PORTABLE").is_ok_and(|v| v == "1");
    if asked && !in_rustflags {
        println!("cargo::rustc-cfg=perfshape_portable");
    }
    println!("cargo:rerun-if-env-changed=PERFSHAPE_PORTABLE");
    println!("cargo:rerun-if-changed=build.rs");
}
