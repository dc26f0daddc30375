//! The orders service's functional tests (`examples/orders/`), written as a team writes
//! them: each calls `spawn_app()` from `helpers.rs` and sends its requests with its own
//! client — no perfshape line in any test. The helper serves the app on perfshape's pool
//! with a watch inside the app it returns: when a test ends, the watch decides, and a
//! route the test called that blocked its worker fails that test.
//!
//! `twins.rs` runs these tests again with the service's blocking ledger client
//! (`ORDERS_LEDGER=blocking`): exactly the tests whose requests reach it must fail, naming
//! the call and the line; with `PERFSHAPE_GATE=advisory` they all pass.

mod health;
mod helpers;
mod orders;
mod report;
mod twins;
