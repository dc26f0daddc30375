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
/// default); the test function must return `perfshape::Result`.
///
/// ```no_run
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target, assert_shape};
///
/// fn report_does_not_block_its_worker() -> perfshape::Result {
///     let router = Router::new().route("/report", get(|| async { "…" }));
///     let target = Target::serve(router, PoolSettings::workers(1)?)?;
///     let checked = target.endpoint("/report")?.does_not_block_its_worker().check()?;
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
