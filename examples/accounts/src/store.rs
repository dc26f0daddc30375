//! The accounts table and the three ways to reach it.

use std::sync::{Arc, Mutex, PoisonError};

use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use serde::{Deserialize, Serialize};

use crate::Build;

/// Connections in the async build's pool.
pub const POOL_SIZE: usize = 5;

/// Accounts [`seed`] creates.
pub const SEEDED: i64 = 200;

/// One account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, QueryableByName)]
pub struct Account {
    /// Its number.
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    /// Who holds it.
    #[diesel(sql_type = Text)]
    pub owner: String,
    /// Its balance, in cents.
    #[diesel(sql_type = BigInt)]
    pub cents: i64,
}

/// The body of `POST /accounts`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NewAccount {
    /// Who holds it.
    pub owner: String,
    /// Its opening balance, in cents.
    pub cents: i64,
}

/// A query failed, or no connection was to be had.
pub type StoreError = String;

/// How the handlers reach the database: what a [`Build`] gives them.
#[derive(Clone)]
pub enum Store {
    /// One diesel connection behind a std mutex, called where the handler runs.
    OnWorker(Arc<Mutex<PgConnection>>),
    /// The same, called on tokio's blocking pool.
    Offloaded(Arc<Mutex<PgConnection>>),
    /// A deadpool pool of tokio-postgres connections.
    Async(deadpool_postgres::Pool),
}

const PAGE: &str = "SELECT id, owner, cents FROM accounts ORDER BY id LIMIT $1";
const ONE: &str = "SELECT id, owner, cents FROM accounts WHERE id = $1";
const OPEN: &str = "INSERT INTO accounts (owner, cents) VALUES ($1, $2) RETURNING id, owner, cents";

impl Store {
    /// The store of `build`, connected to `url` (`postgres://user@host:port/db`).
    pub fn connect(build: Build, url: &str) -> Result<Store, StoreError> {
        let diesel = || {
            PgConnection::establish(url)
                .map(|c| Arc::new(Mutex::new(c)))
                .map_err(|e| format!("connecting to {url}: {e}"))
        };
        Ok(match build {
            Build::OnWorker => Store::OnWorker(diesel()?),
            Build::Offloaded => Store::Offloaded(diesel()?),
            Build::Async => {
                let config: tokio_postgres::Config =
                    url.parse().map_err(|e| format!("{url}: {e}"))?;
                let manager = deadpool_postgres::Manager::new(config, tokio_postgres::NoTls);
                let pool = deadpool_postgres::Pool::builder(manager)
                    .max_size(POOL_SIZE)
                    .build()
                    .map_err(|e| format!("building the pool for {url}: {e}"))?;
                Store::Async(pool)
            }
        })
    }

    /// The first `limit` accounts.
    pub async fn page(&self, limit: i64) -> Result<Vec<Account>, StoreError> {
        match self {
            Store::OnWorker(c) => page(&mut lock(c), limit),
            Store::Offloaded(c) => {
                let c = c.clone();
                offload(move || page(&mut lock(&c), limit)).await
            }
            Store::Async(pool) => {
                let client = pool.get().await.map_err(|e| e.to_string())?;
                let rows = client
                    .query(PAGE, &[&limit])
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(rows.iter().map(account).collect())
            }
        }
    }

    /// One account, if it exists.
    pub async fn one(&self, id: i64) -> Result<Option<Account>, StoreError> {
        match self {
            Store::OnWorker(c) => one(&mut lock(c), id),
            Store::Offloaded(c) => {
                let c = c.clone();
                offload(move || one(&mut lock(&c), id)).await
            }
            Store::Async(pool) => {
                let client = pool.get().await.map_err(|e| e.to_string())?;
                let row = client
                    .query_opt(ONE, &[&id])
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(row.as_ref().map(account))
            }
        }
    }

    /// Opens an account.
    pub async fn open(&self, new: NewAccount) -> Result<Account, StoreError> {
        match self {
            Store::OnWorker(c) => open(&mut lock(c), &new),
            Store::Offloaded(c) => {
                let c = c.clone();
                offload(move || open(&mut lock(&c), &new)).await
            }
            Store::Async(pool) => {
                let client = pool.get().await.map_err(|e| e.to_string())?;
                let row = client
                    .query_one(OPEN, &[&new.owner, &new.cents])
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(account(&row))
            }
        }
    }
}

/// Creates the table and [`SEEDED`] accounts, on a connection of its own.
pub fn seed(url: &str) -> Result<(), StoreError> {
    let mut c = PgConnection::establish(url).map_err(|e| format!("connecting to {url}: {e}"))?;
    diesel::sql_query(
        "CREATE TABLE IF NOT EXISTS accounts (id BIGSERIAL PRIMARY KEY, owner TEXT NOT NULL, cents BIGINT NOT NULL)",
    )
    .execute(&mut c)
    .map_err(|e| e.to_string())?;
    diesel::sql_query(
        "INSERT INTO accounts (owner, cents) SELECT 'owner-' || n, n * 100 FROM generate_series(1, $1) AS n",
    )
    .bind::<BigInt, _>(SEEDED)
    .execute(&mut c)
    .map_err(|e| e.to_string())?;
    Ok(())
}

fn lock(c: &Mutex<PgConnection>) -> std::sync::MutexGuard<'_, PgConnection> {
    c.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn offload<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(call)
        .await
        .map_err(|e| e.to_string())?
}

fn page(c: &mut PgConnection, limit: i64) -> Result<Vec<Account>, StoreError> {
    diesel::sql_query(PAGE)
        .bind::<BigInt, _>(limit)
        .load(c)
        .map_err(|e| e.to_string())
}

fn one(c: &mut PgConnection, id: i64) -> Result<Option<Account>, StoreError> {
    diesel::sql_query(ONE)
        .bind::<BigInt, _>(id)
        .get_result(c)
        .optional()
        .map_err(|e| e.to_string())
}

fn open(c: &mut PgConnection, new: &NewAccount) -> Result<Account, StoreError> {
    diesel::sql_query(OPEN)
        .bind::<Text, _>(&new.owner)
        .bind::<BigInt, _>(new.cents)
        .get_result(c)
        .map_err(|e| e.to_string())
}

fn account(row: &tokio_postgres::Row) -> Account {
    Account {
        id: row.get(0),
        owner: row.get(1),
        cents: row.get(2),
    }
}
