//! Tells perfshape how cargo optimised it: the default poll budget of the blocking claims
//! is stated for optimised work, and a team's default test profile builds perfshape (and
//! every other dependency, and the service) without optimisations.

fn main() {
    let level = std::env::var("OPT_LEVEL").unwrap_or_else(|_| "0".to_string());
    println!("cargo:rustc-env=PERFSHAPE_OPT_LEVEL={level}");
    println!("cargo:rerun-if-changed=build.rs");
}
