//! `assert_shape!`: snapshot a claim's shape, then apply the gate — the last line of every
//! shape test.

#[doc(hidden)]
pub mod snapshot;

/// Where the macro is: the test's file, line and package, for [`snapshot::compared`].
#[doc(hidden)]
#[macro_export]
macro_rules! __assertion {
    () => {
        $crate::__snapshot::Assertion {
            file: ::std::file!(),
            line: ::std::line!(),
            manifest_dir: ::std::env!("CARGO_MANIFEST_DIR"),
        }
    };
}

/// Snapshots a [`Checked`](crate::Checked) claim's [`ShapeSummary`](crate::claim::ShapeSummary)
/// with insta, then applies the gate ([`Checked::gate`](crate::Checked::gate)), panicking
/// with the claim's report where it fails — as insta's own macros panic, so it works in any
/// test: one returning `()`, `perfshape::Result` or `anyhow::Result`.
///
/// In strict mode (the default) the snapshot is always compared, so a regression shows as
/// a snapshot diff (`cargo insta review`) as well as in the claim's report, and the test
/// fails with perfshape's failure, its report printed first; in advisory mode
/// (`PERFSHAPE_GATE=advisory`) a claim that does not hold is reported, not snapshotted,
/// and does not fail the test. The snapshot holds no run's figures, whatever the verdict —
/// the claim, the band, the verdict, and where it does not hold how the worker was held,
/// the call and the line — so it is byte-stable while the shape holds, broken or not. On
/// a first run (no snapshot yet, outside CI), the new snapshot is written and kept, and
/// the test passes.
///
/// `assert_shape!(checked)` names the snapshot after the test; `assert_shape!("name",
/// checked)` names it, for a test with several claims. Needs the `insta` feature (on by
/// default). Where a test wants the failure as a value instead, `checked.gate()?` returns
/// it ([`Error::Gate`](crate::Error::Gate), carrying the reports).
///
/// ```no_run
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target, assert_shape};
///
/// fn report_does_not_block_its_worker() {
///     let router = Router::new().route("/report", get(|| async { "…" }));
///     let target = Target::serve(PoolSettings::workers(1).unwrap(), router).unwrap();
///     let report = target.get("/report");
///     assert_shape!(report.does_not_block_its_worker().check().unwrap());
/// }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "insta")))]
#[macro_export]
macro_rules! assert_shape {
    ($checked:expr $(,)?) => {{
        let checked: &$crate::Checked = &$checked;
        $crate::__snapshot::asserted(checked, $crate::__assertion!(), || {
            $crate::__insta::assert_yaml_snapshot!(checked.summary());
        });
    }};
    ($name:expr, $checked:expr $(,)?) => {{
        let checked: &$crate::Checked = &$checked;
        $crate::__snapshot::asserted(checked, $crate::__assertion!(), || {
            $crate::__insta::assert_yaml_snapshot!($name, checked.summary());
        });
    }};
}

/// Snapshots and gates several claims, reporting **every** one before failing: each
/// snapshot is compared (a mismatch is shown as insta's diff and kept as a `.snap.new`),
/// each claim is gated, and then the test fails once, listing every broken,
/// inconclusive or mismatched claim — where a plain `assert_shape!` per claim would stop
/// at the first. It panics, as `assert_shape!` does, so it works in any test.
///
/// Takes `(name, Checked)` pairs.
///
/// ```no_run
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target, assert_shapes};
///
/// fn the_service_keeps_its_shape() -> anyhow::Result<()> {
///     let router = Router::new()
///         .route("/health", get(|| async { "ok" }))
///         .route("/report", get(|| async { "…" }));
///     let target = Target::serve(PoolSettings::workers(1)?, router)?;
///     let (report, health) = (target.get("/report"), target.get("/health"));
///     assert_shapes!([
///         ("report_does_not_block", report.does_not_block_its_worker().check()?),
///         ("health_keeps_answering", health.keeps_answering_during(&report).check()?),
///     ]);
///     Ok(())
/// }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "insta")))]
#[macro_export]
macro_rules! assert_shapes {
    ($shapes:expr $(,)?) => {{
        let mut failures: ::std::vec::Vec<::std::string::String> = ::std::vec::Vec::new();
        for (name, checked) in $shapes {
            let name: ::std::string::String = name.into();
            let checked: $crate::Checked = checked;
            if checked.snapshot_due() {
                let summary = checked.summary();
                let compared = ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| {
                    $crate::__snapshot::compared($crate::__assertion!(), || {
                        $crate::__insta::assert_yaml_snapshot!(name.as_str(), summary);
                    });
                }));
                if compared.is_err() {
                    failures.push(::std::format!(
                        "snapshot {name:?} does not match (see the diff above)"
                    ));
                }
            }
            if let ::std::result::Result::Err(error) = checked.gate() {
                failures.push(::std::format!("{error:?}"));
            }
        }
        if !failures.is_empty() {
            ::std::panic!("{}", failures.join("\n"));
        }
    }};
}
