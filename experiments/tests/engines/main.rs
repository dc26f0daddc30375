//! Real load engines: seed 004 offered by Locust (a master and 2 workers) and by k6 (one
//! process, and split between two with `--execution-segment`) to perfshape's demo service,
//! each judged from the engine's own statistics and snapshotted; and each engine accepting
//! the scripts perfshape writes for it. Their negative controls are in `tests/controls/`.
//! Every test that needs an engine is here: the main suite runs with Rust alone.
//!
//! An engine run is whole seconds of load (k6 runs no scenario under 1 s), so this binary
//! has a nextest profile of its own, `cargo nextest run --profile engines`, which `.ci/run`
//! runs after the main suite; it shares the `shape` group's one-at-a-time slot. It needs
//! Locust and k6: `.ci/run` installs both into target/engines-venv; without them a test
//! fails and says how to install them.

mod failures;
mod k6;
mod locust;
mod scripts;
