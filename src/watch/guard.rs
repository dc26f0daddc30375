//! A watch installed once, in a team's test helper: held by the app the helper returns, it
//! decides when the test ends — when the app is dropped — and fails that test where a route
//! it called blocked its worker, with no line in the test.

use super::{NONE_REACHED, Watch};
use crate::claim::Checked;
use crate::error::{Error, Result};
use crate::vocab::Allow;

/// A [`Watch`] that decides when it is dropped, and fails the test that dropped it where
/// the watch does not hold: what a test helper (`spawn_app()`) keeps in the app it returns,
/// so that every test that calls the helper is watched. Made by
/// [`Watch::gate_on_drop`].
///
/// When dropped it decides once, as [`Watch::nothing_blocked`] with its
/// [`gate`](crate::Checked::gate) does: a broken or inconclusive watch (strict, the default)
/// panics with its report, failing the test; `PERFSHAPE_GATE=advisory` prints it and
/// passes. It never decides in a test that is already failing (a panic unwinding), nor in
/// one whose requests never reached the target (a test that sends none), and its wait at
/// the end is bounded (a second at most, for responses still being written). A test may
/// decide early and read the report with [`nothing_blocked`](Self::nothing_blocked); the
/// guard then decides nothing more.
///
/// ```
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target, WatchGuard};
///
/// /// The app a test helper returns: its address, and the watch inside it.
/// struct TestApp {
///     address: String,
///     _watch: WatchGuard,
/// }
///
/// fn spawn_app() -> perfshape::Result<TestApp> {
///     let router = Router::new().route("/health", get(|| async { "ok" }));
///     let target = Target::serve(PoolSettings::workers(1)?, router)?;
///     Ok(TestApp {
///         address: target.url_of("/")?.trim_end_matches('/').to_string(),
///         _watch: target.watch()?.gate_on_drop(),
///     })
/// }
///
/// #[tokio::main] // #[tokio::test], in a test
/// async fn main() -> perfshape::Result {
///     let app = spawn_app()?;
///     let answered = reqwest::get(format!("{}/health", app.address)).await.expect("an answer");
///     assert_eq!(answered.status(), 200);
///     Ok(()) // `app` is dropped here: the watch decides, and this test holds
/// }
/// ```
#[derive(Debug)]
#[must_use = "a guard decides when it is dropped: keep it for as long as the test runs (in the app the helper returns)"]
pub struct WatchGuard {
    watch: Option<Watch>,
}

impl Watch {
    /// This watch, deciding when it is dropped ([`WatchGuard`]): installed once in a test
    /// helper, it fails each test whose requests blocked a worker, with no line in the
    /// test.
    pub fn gate_on_drop(self) -> WatchGuard {
        WatchGuard { watch: Some(self) }
    }
}

impl WatchGuard {
    /// Accepts a hold by name, as [`Watch::allow`] does: for one test, where the helper's
    /// watch allows what every test accepts.
    pub fn allow(mut self, allow: Allow) -> WatchGuard {
        self.watch = self.watch.take().map(|watch| watch.allow(allow));
        self
    }

    /// Decides now, as [`Watch::nothing_blocked`]: the report to read, and to gate
    /// (`.gate()?`, or [`assert_shape!`](crate::assert_shape)); the guard decides nothing
    /// when dropped.
    pub fn nothing_blocked(mut self) -> Result<Checked> {
        self.watch
            .take()
            .expect("a guard holds its watch until it decides")
            .nothing_blocked()
    }
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        let Some(watch) = self.watch.take() else {
            return;
        };
        // A test that fails already fails with its own message; a second panic would abort.
        if std::thread::panicking() {
            return;
        }
        match watch.nothing_blocked() {
            Ok(checked) => {
                if let Err(failed) = checked.gate() {
                    panic!("{failed:?}");
                }
            }
            // A test that sent the target nothing has nothing to decide.
            Err(Error::Invalid { field, .. }) if field == NONE_REACHED => {}
            Err(error) => panic!("perfshape: the watch could not decide: {error}"),
        }
    }
}
