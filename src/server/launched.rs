//! A service started the way its `main` starts it: by its own launch function, on a
//! listener perfshape binds and with a shutdown future perfshape resolves.
//!
//! A team whose tests start the service as `launch(listener, shutdown)` — the router private,
//! its state built inside — has no router to hand over. perfshape binds the listener
//! (127.0.0.1, a free port) on the served pool, runs the launch function there, and resolves
//! [`Shutdown`] when the server is dropped. The responses are not wrapped by perfshape's layer,
//! so their polls are not timed one by one; the pool's workers are clocked whole
//! ([`timeline`](crate::pool::timeline)), and the claims decide on that.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::pool::Pool;

/// How long a launch function is given to fail at once (a port refused, a configuration
/// error) before its service is taken as serving.
const FAILS_WITHIN: Duration = Duration::from_millis(100);

/// Resolves when perfshape stops the launched service (the target is dropped): what a
/// launch function passes to `axum::serve(…).with_graceful_shutdown(shutdown)`.
#[derive(Debug)]
pub struct Shutdown(oneshot::Receiver<()>);

impl Future for Shutdown {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // A dropped sender is a stop as much as a sent one.
        Pin::new(&mut self.0).poll(cx).map(|_| ())
    }
}

/// A launched service's stop and its task.
#[derive(Debug)]
pub(crate) struct Launched {
    stop: Option<oneshot::Sender<()>>,
    _task: JoinHandle<std::result::Result<(), String>>,
}

impl Launched {
    /// Runs `launch(listener, shutdown)` on `pool`, and names what it did if it returned
    /// within [`FAILS_WITHIN`]: an error, a panic, or a return before serving.
    pub(crate) fn start<F, Fut, E>(
        pool: &Pool,
        listener: tokio::net::TcpListener,
        launch: F,
    ) -> Result<Launched>
    where
        F: FnOnce(tokio::net::TcpListener, Shutdown) -> Fut + Send + 'static,
        Fut: Future<Output = std::result::Result<(), E>> + Send + 'static,
        E: std::fmt::Display,
    {
        let (stop, stopped) = oneshot::channel();
        let task = pool.handle().spawn(async move {
            launch(listener, Shutdown(stopped))
                .await
                .map_err(|e| format!("{e:#}"))
        });
        let deadline = Instant::now() + FAILS_WITHIN;
        while !task.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if task.is_finished() {
            return Err(Error::Build {
                what: match pool.block_on(task) {
                    Ok(Ok(())) => {
                        "the launch function returned before serving a request".to_string()
                    }
                    Ok(Err(e)) => format!("the launch function returned an error: {e}"),
                    Err(joined) => {
                        format!("the launch function {}", crate::error::join_failure(joined))
                    }
                },
            });
        }
        Ok(Launched {
            stop: Some(stop),
            _task: task,
        })
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
