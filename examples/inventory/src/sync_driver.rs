//! Where a build runs rusqlite's synchronous calls: on the async worker itself (the bug),
//! on tokio's blocking pool behind one shared connection, or on a pooled connection.

use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;

use crate::ApiError;

/// One of the three ways to call a synchronous driver from an async handler.
#[derive(Clone)]
pub(crate) enum SyncDriver {
    /// The call runs right here, on the worker that polls the handler: while SQLite waits
    /// (an `fsync`, another thread's lock) nothing else on that worker runs.
    OnWorker(Arc<Mutex<Connection>>),
    /// `spawn_blocking`, on one connection behind a mutex: the worker is free, and the
    /// calls queue behind the connection, one at a time.
    SharedConnection(Arc<Mutex<Connection>>),
    /// A connection from deadpool-sqlite's pool, the call in its `interact` (which runs
    /// it on tokio's blocking pool).
    Pool(deadpool_sqlite::Pool),
}

impl SyncDriver {
    /// Runs `call` on a connection, where this driver runs it.
    pub(crate) async fn call<T, F>(&self, call: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, ApiError> + Send + 'static,
    {
        match self {
            SyncDriver::OnWorker(connection) => {
                let mut connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
                call(&mut connection)
            }
            SyncDriver::SharedConnection(connection) => {
                let connection = Arc::clone(connection);
                tokio::task::spawn_blocking(move || {
                    let mut connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
                    call(&mut connection)
                })
                .await
                .map_err(|e| ApiError::Database(format!("the blocking call failed: {e}")))?
            }
            SyncDriver::Pool(pool) => {
                let connection = pool
                    .get()
                    .await
                    .map_err(|e| ApiError::Database(format!("no connection: {e}")))?;
                connection
                    .interact(call)
                    .await
                    .map_err(|e| ApiError::Database(format!("the pooled call failed: {e}")))?
            }
        }
    }
}
