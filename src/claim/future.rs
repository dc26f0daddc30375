//! `claim.await`: a claim checked from an async test.

use super::{Checked, Claim};
use crate::error::{Error, Result};

/// `claim.await` in an async test (`#[tokio::test]`, either flavour): the check runs on
/// tokio's blocking pool, so a service the test runs on its own runtime keeps being
/// served while the claim measures it. Needs a tokio runtime.
///
/// ```
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target, Verdict};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new().route("/report", get(|| async {
///     tokio::time::sleep(std::time::Duration::from_millis(20)).await;
///     "done"
/// }));
/// let target = Target::serve(PoolSettings::workers(1)?, router)?;
/// let checked = target.get("/report").does_not_block_its_worker().await?;
/// assert_eq!(checked.verdict(), Verdict::Holds);
/// # Ok::<(), perfshape::Error>(())
/// # }).unwrap();
/// ```
impl std::future::IntoFuture for Claim<'static> {
    type Output = Result<Checked>;
    type IntoFuture =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Checked>> + Send + 'static>>;

    fn into_future(mut self) -> Self::IntoFuture {
        // The test's name is its thread's, here, before the check moves to another thread.
        if self.caller.is_none() {
            self.caller = std::thread::current().name().map(str::to_string);
        }
        Box::pin(async move {
            tokio::task::spawn_blocking(move || self.check())
                .await
                .map_err(|e| Error::io("checking a claim", std::io::Error::other(e.to_string())))?
        })
    }
}
