//! The service's SQL on a rusqlite connection: synchronous, so where it runs decides
//! whether a request holds its worker while SQLite waits.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use crate::{Delivery, Item, Movement, NewItem, Stock};

/// The item `sku`, if there is one: a read of a row SQLite's page cache holds.
pub(crate) fn item(connection: &Connection, sku: &str) -> rusqlite::Result<Option<Item>> {
    connection
        .prepare_cached("SELECT sku, name, qty FROM items WHERE sku = ?1")?
        .query_row([sku], |row| {
            Ok(Item {
                sku: row.get(0)?,
                name: row.get(1)?,
                qty: row.get(2)?,
            })
        })
        .optional()
}

/// Up to `limit` items after `after`, in key order.
pub(crate) fn page(
    connection: &Connection,
    after: &str,
    limit: u32,
) -> rusqlite::Result<Vec<Item>> {
    connection
        .prepare_cached("SELECT sku, name, qty FROM items WHERE sku > ?1 ORDER BY sku LIMIT ?2")?
        .query_map((after, limit), |row| {
            Ok(Item {
                sku: row.get(0)?,
                name: row.get(1)?,
                qty: row.get(2)?,
            })
        })?
        .collect()
}

/// A new item with nothing in stock (a unique key, or a constraint error).
pub(crate) fn create(connection: &Connection, new: &NewItem) -> rusqlite::Result<Item> {
    connection
        .prepare_cached("INSERT INTO items (sku, name, qty) VALUES (?1, ?2, 0)")?
        .execute((&new.sku, &new.name))?;
    Ok(Item {
        sku: new.sku.clone(),
        name: new.name.clone(),
        qty: 0,
    })
}

/// Records `movement` of `sku` and updates its stock, in one transaction that commits
/// durably; `None` if there is no such item.
pub(crate) fn record(
    connection: &mut Connection,
    sku: &str,
    movement: &Movement,
) -> rusqlite::Result<Option<Stock>> {
    // IMMEDIATE: take the write lock first, so another writer is waited for (busy_timeout)
    // instead of failing the upgrade from a read.
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let qty: Option<i64> = transaction
        .prepare_cached("UPDATE items SET qty = qty + ?2 WHERE sku = ?1 RETURNING qty")?
        .query_row((sku, movement.delta), |row| row.get(0))
        .optional()?;
    let Some(qty) = qty else {
        return Ok(None);
    };
    transaction
        .prepare_cached("INSERT INTO movements (sku, delta, note) VALUES (?1, ?2, ?3)")?
        .execute((sku, movement.delta, &movement.note))?;
    transaction.commit()?;
    Ok(Some(Stock {
        sku: sku.to_string(),
        qty,
    }))
}

/// Records every line of `delivery` in one durable transaction; the first unknown item's
/// key if there is one (and nothing recorded).
pub(crate) fn deliver(
    connection: &mut Connection,
    delivery: &Delivery,
) -> rusqlite::Result<Result<usize, String>> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut update =
            transaction.prepare_cached("UPDATE items SET qty = qty + ?2 WHERE sku = ?1")?;
        let mut insert = transaction
            .prepare_cached("INSERT INTO movements (sku, delta, note) VALUES (?1, ?2, ?3)")?;
        for line in &delivery.lines {
            if update.execute((&line.sku, line.delta))? == 0 {
                // Dropping the transaction rolls it back.
                return Ok(Err(line.sku.clone()));
            }
            insert.execute((&line.sku, line.delta, &delivery.note))?;
        }
    }
    transaction.commit()?;
    Ok(Ok(delivery.lines.len()))
}

/// Records that `sku` was read, committed durably on its own.
pub(crate) fn audit_read(connection: &Connection, sku: &str) -> rusqlite::Result<()> {
    connection
        .prepare_cached("INSERT INTO reads (sku) VALUES (?1)")?
        .execute([sku])?;
    Ok(())
}
