//! The same SQL on sqlx's SQLite pool: each connection runs SQLite on a thread of its own,
//! and the handler awaits its answer without holding its worker.

use sqlx::{Row, SqlitePool};

use crate::{Delivery, Item, Movement, NewItem, Stock};

fn item_of(row: sqlx::sqlite::SqliteRow) -> Result<Item, sqlx::Error> {
    Ok(Item {
        sku: row.try_get(0)?,
        name: row.try_get(1)?,
        qty: row.try_get(2)?,
    })
}

/// The item `sku`, if there is one.
pub(crate) async fn item(pool: &SqlitePool, sku: &str) -> Result<Option<Item>, sqlx::Error> {
    sqlx::query("SELECT sku, name, qty FROM items WHERE sku = ?1")
        .bind(sku)
        .fetch_optional(pool)
        .await?
        .map(item_of)
        .transpose()
}

/// Up to `limit` items after `after`, in key order.
pub(crate) async fn page(
    pool: &SqlitePool,
    after: &str,
    limit: u32,
) -> Result<Vec<Item>, sqlx::Error> {
    sqlx::query("SELECT sku, name, qty FROM items WHERE sku > ?1 ORDER BY sku LIMIT ?2")
        .bind(after)
        .bind(limit)
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(item_of)
        .collect()
}

/// A new item with nothing in stock.
pub(crate) async fn create(pool: &SqlitePool, new: &NewItem) -> Result<Item, sqlx::Error> {
    sqlx::query("INSERT INTO items (sku, name, qty) VALUES (?1, ?2, 0)")
        .bind(&new.sku)
        .bind(&new.name)
        .execute(pool)
        .await?;
    Ok(Item {
        sku: new.sku.clone(),
        name: new.name.clone(),
        qty: 0,
    })
}

/// Records `movement` of `sku` and updates its stock in one durable transaction; `None`
/// if there is no such item. The transaction's first statement writes, so SQLite takes
/// the write lock there and a busy writer is waited for (busy_timeout).
pub(crate) async fn record(
    pool: &SqlitePool,
    sku: &str,
    movement: &Movement,
) -> Result<Option<Stock>, sqlx::Error> {
    let mut transaction = pool.begin().await?;
    let qty: Option<i64> =
        sqlx::query_scalar("UPDATE items SET qty = qty + ?2 WHERE sku = ?1 RETURNING qty")
            .bind(sku)
            .bind(movement.delta)
            .fetch_optional(&mut *transaction)
            .await?;
    let Some(qty) = qty else {
        return Ok(None);
    };
    sqlx::query("INSERT INTO movements (sku, delta, note) VALUES (?1, ?2, ?3)")
        .bind(sku)
        .bind(movement.delta)
        .bind(&movement.note)
        .execute(&mut *transaction)
        .await?;
    transaction.commit().await?;
    Ok(Some(Stock {
        sku: sku.to_string(),
        qty,
    }))
}

/// Records every line of `delivery` in one durable transaction; the first unknown item's
/// key if there is one (and nothing recorded).
pub(crate) async fn deliver(
    pool: &SqlitePool,
    delivery: &Delivery,
) -> Result<Result<usize, String>, sqlx::Error> {
    let mut transaction = pool.begin().await?;
    for line in &delivery.lines {
        let updated = sqlx::query("UPDATE items SET qty = qty + ?2 WHERE sku = ?1")
            .bind(&line.sku)
            .bind(line.delta)
            .execute(&mut *transaction)
            .await?;
        if updated.rows_affected() == 0 {
            // Dropping the transaction rolls it back.
            return Ok(Err(line.sku.clone()));
        }
        sqlx::query("INSERT INTO movements (sku, delta, note) VALUES (?1, ?2, ?3)")
            .bind(&line.sku)
            .bind(line.delta)
            .bind(&delivery.note)
            .execute(&mut *transaction)
            .await?;
    }
    transaction.commit().await?;
    Ok(Ok(delivery.lines.len()))
}

/// Records that `sku` was read, committed durably on its own.
pub(crate) async fn audit_read(pool: &SqlitePool, sku: &str) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO reads (sku) VALUES (?1)")
        .bind(sku)
        .execute(pool)
        .await?;
    Ok(())
}
