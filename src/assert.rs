//! `assert_shape!`: snapshot a claim's shape, then apply the gate — the last line of every
//! shape test.

/// Snapshots a [`Checked`](crate::Checked) claim's [`ShapeSummary`](crate::claim::ShapeSummary)
/// with insta, then applies the gate (`?` on [`Checked::gate`](crate::Checked::gate)).
///
/// In strict mode (the default) the snapshot is always compared, so a regression shows as
/// a snapshot diff (`cargo insta review`) as well as in the claim's report; in advisory
/// mode (`PERFSHAPE_GATE=advisory`) a claim that does not hold is reported, not
/// snapshotted, and does not fail the test. The snapshot holds no raw timing while the
/// claim holds, so it is byte-stable on any machine where the shape holds.
///
/// `assert_shape!(checked)` names the snapshot after the test; `assert_shape!("name",
/// checked)` names it, for a test with several claims. Needs the `insta` feature (on by
/// default); the test function returns `perfshape::Result`, or any result whose error
/// converts from [`Error`](crate::Error) (`anyhow::Result`, `Box<dyn Error>`).
///
/// ```no_run
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target, assert_shape};
///
/// fn report_does_not_block_its_worker() -> perfshape::Result {
///     let router = Router::new().route("/report", get(|| async { "…" }));
///     let target = Target::serve(router, PoolSettings::workers(1)?)?;
///     let checked = target.checked_get("/report")?.does_not_block_its_worker().check()?;
///     assert_shape!(checked);
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! assert_shape {
    ($checked:expr $(,)?) => {{
        let checked: &$crate::Checked = &$checked;
        if checked.snapshot_due() {
            $crate::__insta::assert_yaml_snapshot!(checked.summary());
        }
        checked.gate()?;
    }};
    ($name:expr, $checked:expr $(,)?) => {{
        let checked: &$crate::Checked = &$checked;
        if checked.snapshot_due() {
            $crate::__insta::assert_yaml_snapshot!($name, checked.summary());
        }
        checked.gate()?;
    }};
}

/// Snapshots and gates several claims, reporting **every** one before failing: each
/// snapshot is compared (a mismatch is shown as insta's diff and kept as a `.snap.new`),
/// each claim is gated, and then the test fails once, listing every broken,
/// inconclusive or mismatched claim — where a plain `assert_shape!` per claim would stop
/// at the first.
///
/// Takes `(name, Checked)` pairs; works in a test returning `anyhow::Result` too.
///
/// ```no_run
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target, assert_shapes};
///
/// fn the_service_keeps_its_shape() -> anyhow::Result<()> {
///     let router = Router::new()
///         .route("/health", get(|| async { "ok" }))
///         .route("/report", get(|| async { "…" }));
///     let target = Target::serve(router, PoolSettings::workers(1)?)?;
///     let (report, health) = (target.get("/report"), target.get("/health"));
///     assert_shapes!([
///         ("report_does_not_block", report.does_not_block_its_worker().check()?),
///         ("health_keeps_answering", health.keeps_answering_during(&report).check()?),
///     ]);
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! assert_shapes {
    ($shapes:expr $(,)?) => {{
        let mut failures: ::std::vec::Vec<::std::string::String> = ::std::vec::Vec::new();
        let mut reports: ::std::vec::Vec<$crate::claim::ClaimReport> = ::std::vec::Vec::new();
        for (name, checked) in $shapes {
            let name: ::std::string::String = name.into();
            let checked: $crate::Checked = checked;
            if checked.snapshot_due() {
                let summary = checked.summary();
                let compared = ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| {
                    $crate::__insta::assert_yaml_snapshot!(name.as_str(), summary);
                }));
                if compared.is_err() {
                    failures.push(::std::format!(
                        "snapshot {name:?} does not match (see the diff above)"
                    ));
                }
            }
            if let ::std::result::Result::Err(error) = checked.gate() {
                failures.push(error.to_string());
                reports.extend(error.reports().iter().cloned());
            }
        }
        if !failures.is_empty() {
            return ::std::result::Result::Err(::std::convert::Into::into($crate::Error::Gate {
                message: failures.join("\n\n"),
                reports,
            }));
        }
    }};
}
