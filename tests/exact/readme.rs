//! The documentation's code that cannot compile on its own — a test on a service with a
//! database, which needs the service and a cluster — is a test of the repository verbatim,
//! so what a reader copies is what runs. (The newcomer's crate the README's blocks make,
//! `shop`, is built and run from the README by `scripts/readme-crate.py`, in CI.)

/// The test of a service with a database in docs/production-distance.md is
/// `examples/accounts/tests/first.rs` from its first `use` to the end of its test function,
/// byte for byte.
#[test]
fn the_database_test_in_the_docs_is_the_accounts_example_verbatim() {
    let readme = include_str!("../../docs/production-distance.md");
    let test = include_str!("../../examples/accounts/tests/first.rs");
    let block = readme
        .split("```rust,ignore\n")
        .skip(1)
        .map(|after| after.split_once("```").expect("the block's end").0)
        .find(|block| block.contains("Downstream::to"))
        .expect("the docs' test on a database, marked `rust,ignore`");
    assert!(block.starts_with("use "), "{block}");
    assert!(
        test.contains(block),
        "the docs' test on a database differs from examples/accounts/tests/first.rs:\n{block}"
    );
}
