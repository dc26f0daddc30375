//! Pools of any size, found: the concurrency-limit claim on pools of sizes between the
//! sweep's doublings, of three kinds — a tower `ConcurrencyLimitLayer`, a served router on
//! k blocking workers, and a Python service (FastAPI's `def` endpoints on anyio's thread
//! limiter, under uvicorn; its default pool of 40 too) — each with its controls, ≈k/2 and
//! ≈2k, broken. And the table in docs/probe.md, 10 runs of every kind and size, behind
//! `--run-ignored only`.
//!
//! Whole seconds of load per pool, and Python: a nextest profile of its own, `cargo nextest
//! run --profile pools`, which `.ci/run` runs after the main suite with FastAPI and uvicorn
//! installed into target/engines-venv (or `PERFSHAPE_PYTHON`).

#[path = "../common/mod.rs"]
mod common;
mod found;
mod table;
