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
#[path = "../apps/kv.rs"]
pub(crate) mod kv;
pub(crate) mod layers;
pub(crate) mod model_vs_reality;
pub(crate) mod orders;
pub(crate) mod pools;
#[allow(unreachable_pub)]
#[path = "../apps/process.rs"]
pub(crate) mod process;
// The apps are written as a team writes them, in a crate of their own: public items.
#[allow(unreachable_pub)]
#[path = "../apps/todos.rs"]
pub(crate) mod todos;
pub(crate) mod wiremock;
