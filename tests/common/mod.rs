//! Claims that need what only tests have (wiremock, proptest, the examples' services),
//! shared by the claims in `tests/shape/` and their negative controls in
//! `tests/controls/`. Each binary uses what it needs.
#![allow(dead_code)]

// The apps are written as a team writes them, in a crate of their own: public items.
#[allow(unreachable_pub)]
#[path = "../apps/handlers.rs"]
pub(crate) mod handlers;
// The apps are written as a team writes them, in a crate of their own: public items.
#[allow(unreachable_pub)]
#[path = "../apps/journal.rs"]
pub(crate) mod journal;
// The apps are written as a team writes them, in a crate of their own: public items.
#[allow(unreachable_pub)]
#[path = "../apps/kv.rs"]
pub(crate) mod kv;
pub(crate) mod layers;
pub(crate) mod orders;
#[allow(unreachable_pub)]
#[path = "../apps/process.rs"]
pub(crate) mod process;
// The apps are written as a team writes them, in a crate of their own: public items.
#[allow(unreachable_pub)]
#[path = "../apps/signin.rs"]
pub(crate) mod signin;
// The apps are written as a team writes them, in a crate of their own: public items.
#[allow(unreachable_pub)]
#[path = "../apps/todos.rs"]
pub(crate) mod todos;
// The apps are written as a team writes them, in a crate of their own: public items.
#[allow(unreachable_pub)]
#[path = "../apps/worker.rs"]
pub(crate) mod worker;

/// The claim's verdict where this build makes every read it needs, else `None`: in the
/// portable build (`PERFSHAPE_PORTABLE=1`, what macOS and Windows get) a claim that needs
/// Linux's `/proc` is inconclusive, naming the read — never another verdict, and never on
/// Linux.
/// A test that expects a verdict checks the rest of its report only where it was decided.
pub(crate) fn decided(checked: &perfshape::Checked) -> Option<perfshape::Verdict> {
    match &checked.report().unread {
        None => Some(checked.verdict()),
        #[cfg(not(perfshape_portable))]
        Some(unread) => panic!("a claim on Linux said a read is missing: {unread}"),
        #[cfg(perfshape_portable)]
        Some(_) => {
            assert_eq!(checked.verdict(), perfshape::Verdict::Inconclusive);
            None
        }
    }
}
