//! The service's data, reached the way its build reaches it.

use std::sync::{Arc, Mutex};

use deadpool_sqlite::{Hook, HookError, Runtime};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::database::CONNECTION_SETTINGS;
use crate::sync_driver::SyncDriver;
use crate::{
    ApiError, Build, Database, Delivery, Error, Item, Movement, NewItem, Stock, queries,
    sqlx_queries,
};

/// How many connections the pooled builds open at most (deadpool's and sqlx's pools): as
/// many as a 2-core machine has cores. SQLite admits one writer at a time, so more
/// connections add threads, not throughput — threads that compete with the tokio workers
/// for the cores. sqlx's connection threads hand rows to the worker through a channel
/// behind a std mutex; with 8 connections on 2 cores a holder was often preempted, and the
/// worker slept on that mutex for milliseconds (docs/inventory.md).
pub const POOL_SIZE: usize = 2;

/// The store a build's handlers share (cheap to clone).
#[derive(Clone)]
pub struct Store {
    build: Build,
    access: Access,
    audited: bool,
}

#[derive(Clone)]
enum Access {
    Sync(SyncDriver),
    Sqlx(sqlx::SqlitePool),
}

impl Store {
    /// The store of `build` on `database`. The pooled builds open their connections as
    /// requests need them; the file, its settings and its schema were checked when the
    /// database was created.
    pub fn open(build: Build, database: &Database) -> Result<Store, Error> {
        let access = match build {
            Build::OnWorker => Access::Sync(SyncDriver::OnWorker(Arc::new(Mutex::new(
                database.connect()?,
            )))),
            Build::SharedConnection => Access::Sync(SyncDriver::SharedConnection(Arc::new(
                Mutex::new(database.connect()?),
            ))),
            Build::Pool => Access::Sync(SyncDriver::Pool(deadpool(database)?)),
            Build::Sqlx => Access::Sqlx(sqlx_pool(database)),
        };
        Ok(Store {
            build,
            access,
            audited: false,
        })
    }

    /// The same store, recording every lookup (`GET /items/{sku}`) in an audit table, each
    /// in a durable commit of its own: a read that writes, as a compliance rule may ask.
    #[must_use]
    pub fn audited(self) -> Store {
        Store {
            audited: true,
            ..self
        }
    }

    /// The build.
    pub fn build(&self) -> Build {
        self.build
    }

    pub(crate) async fn item(&self, sku: String) -> Result<Option<Item>, ApiError> {
        match &self.access {
            Access::Sync(driver) => {
                let audited = self.audited;
                driver
                    .call(move |c| {
                        if audited {
                            queries::audit_read(c, &sku)?;
                        }
                        Ok(queries::item(c, &sku)?)
                    })
                    .await
            }
            Access::Sqlx(pool) => {
                if self.audited {
                    sqlx_queries::audit_read(pool, &sku).await?;
                }
                Ok(sqlx_queries::item(pool, &sku).await?)
            }
        }
    }

    pub(crate) async fn page(&self, after: String, limit: u32) -> Result<Vec<Item>, ApiError> {
        match &self.access {
            Access::Sync(driver) => {
                driver
                    .call(move |c| Ok(queries::page(c, &after, limit)?))
                    .await
            }
            Access::Sqlx(pool) => Ok(sqlx_queries::page(pool, &after, limit).await?),
        }
    }

    pub(crate) async fn create(&self, new: NewItem) -> Result<Item, ApiError> {
        match &self.access {
            Access::Sync(driver) => driver.call(move |c| Ok(queries::create(c, &new)?)).await,
            Access::Sqlx(pool) => Ok(sqlx_queries::create(pool, &new).await?),
        }
    }

    pub(crate) async fn record(
        &self,
        sku: String,
        movement: Movement,
    ) -> Result<Option<Stock>, ApiError> {
        match &self.access {
            Access::Sync(driver) => {
                driver
                    .call(move |c| Ok(queries::record(c, &sku, &movement)?))
                    .await
            }
            Access::Sqlx(pool) => Ok(sqlx_queries::record(pool, &sku, &movement).await?),
        }
    }

    pub(crate) async fn deliver(&self, delivery: Delivery) -> Result<usize, ApiError> {
        let recorded = match &self.access {
            Access::Sync(driver) => {
                driver
                    .call(move |c| Ok(queries::deliver(c, &delivery)?))
                    .await?
            }
            Access::Sqlx(pool) => sqlx_queries::deliver(pool, &delivery).await?,
        };
        recorded.map_err(ApiError::NotFound)
    }
}

/// deadpool-sqlite's pool, each new connection given the service's settings.
fn deadpool(database: &Database) -> Result<deadpool_sqlite::Pool, Error> {
    let failed = |reason: String| Error::Pool {
        path: database.path().to_path_buf(),
        reason,
    };
    deadpool_sqlite::Config::new(database.path())
        .builder(Runtime::Tokio1)
        .map_err(|e| failed(e.to_string()))?
        .max_size(POOL_SIZE)
        .post_create(Hook::async_fn(|connection, _| {
            Box::pin(async move {
                connection
                    .interact(|c| c.execute_batch(&CONNECTION_SETTINGS.join(";")))
                    .await
                    .map_err(|e| HookError::message(e.to_string()))?
                    .map_err(|e| HookError::message(e.to_string()))
            })
        }))
        .build()
        .map_err(|e| failed(e.to_string()))
}

/// sqlx's pool on the same file and settings, opened lazily. No idle timeout and no
/// lifetime, so that it spawns no maintenance task: it needs no runtime until the first
/// request, which the server's runtime serves.
fn sqlx_pool(database: &Database) -> sqlx::SqlitePool {
    let options = SqliteConnectOptions::new()
        .filename(database.path())
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .busy_timeout(std::time::Duration::from_secs(5));
    SqlitePoolOptions::new()
        .max_connections(POOL_SIZE as u32)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_lazy_with(options)
}
