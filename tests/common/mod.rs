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
#[path = "../apps/held.rs"]
pub(crate) mod held;
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

mod decided;
#[allow(unused_imports)]
pub(crate) use decided::decided;
