//! The README's code that cannot compile on its own — a first test on a service with a
//! database, which needs the service and a cluster — is a test of the repository verbatim,
//! so what a reader copies is what runs.

/// The first shape test in the README is `examples/accounts/tests/first.rs` from its first
/// `use` to the end of its test function, byte for byte.
#[test]
fn the_readmes_first_test_is_the_accounts_example_verbatim() {
    let readme = include_str!("../../README.md");
    let test = include_str!("../../examples/accounts/tests/first.rs");
    let (_, after) = readme
        .split_once("```rust,ignore\n")
        .expect("the README's first test, marked `rust,ignore`");
    let (block, _) = after.split_once("```").expect("the block's end");
    assert!(block.starts_with("use "), "{block}");
    assert!(
        test.contains(block),
        "the README's first test differs from examples/accounts/tests/first.rs:\n{block}"
    );
}
