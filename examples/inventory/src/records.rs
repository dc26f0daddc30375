//! What the API takes and returns.

use serde::{Deserialize, Serialize};

/// An item and its stock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// The key.
    pub sku: String,
    /// What it is called.
    pub name: String,
    /// How many are in stock.
    pub qty: i64,
}

/// `POST /items`: a new item, with nothing in stock.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NewItem {
    /// The key, unique.
    pub sku: String,
    /// What it is called.
    pub name: String,
}

/// `POST /items/{sku}/movements`: stock in (positive) or out (negative), with a note.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Movement {
    /// How many came in (or, negative, went out).
    pub delta: i64,
    /// Why: a delivery, an order.
    pub note: String,
}

/// The stock after a movement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stock {
    /// The item.
    pub sku: String,
    /// How many are in stock now.
    pub qty: i64,
}

/// `POST /deliveries`: a delivery note's lines, recorded in one transaction.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Delivery {
    /// The note, kept with each line's movement.
    pub note: String,
    /// What came in, item by item.
    pub lines: Vec<Line>,
}

/// One line of a delivery.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Line {
    /// The item.
    pub sku: String,
    /// How many came in.
    pub delta: i64,
}

/// What a delivery recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivered {
    /// How many lines.
    pub lines: usize,
}
