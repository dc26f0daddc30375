//! A nightly import beside the service: a thread that writes batches of stock counts
//! through the service's shared connection, holding its mutex for each batch and its
//! durable commit. A handler that takes the same mutex on its worker waits there while a
//! batch runs; an offloaded one waits on the blocking pool instead.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, TransactionBehavior};

use crate::SEEDED_ITEMS;

/// How many stock counts one batch writes.
const BATCH: usize = 2000;
/// The pause between batches, the connection free.
const PAUSE: Duration = Duration::from_micros(500);

/// A running import; stopped (and joined) when dropped.
pub struct Import {
    stop: Arc<AtomicBool>,
    figures: Arc<Figures>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Figures {
    batches: AtomicU64,
    held_ns: AtomicU64,
}

impl Import {
    /// Starts importing through `connection`.
    pub fn start(connection: Arc<Mutex<Connection>>) -> Import {
        let stop = Arc::new(AtomicBool::new(false));
        let figures = Arc::new(Figures::default());
        let thread = {
            let (stop, figures) = (Arc::clone(&stop), Arc::clone(&figures));
            std::thread::spawn(move || {
                let mut round = 0i64;
                while !stop.load(Ordering::Relaxed) {
                    let held = Instant::now();
                    {
                        let mut connection =
                            connection.lock().unwrap_or_else(PoisonError::into_inner);
                        // An import that fails stops; the service's requests go on.
                        if batch(&mut connection, round).is_err() {
                            return;
                        }
                    }
                    let held = held.elapsed().as_nanos() as u64;
                    figures.held_ns.fetch_add(held, Ordering::Relaxed);
                    figures.batches.fetch_add(1, Ordering::Relaxed);
                    round += 1;
                    std::thread::sleep(PAUSE);
                }
            })
        };
        Import {
            stop,
            figures,
            thread: Some(thread),
        }
    }

    /// How many batches it has committed, and how long it held the connection for each
    /// on average.
    pub fn batches(&self) -> (u64, Duration) {
        let batches = self.figures.batches.load(Ordering::Relaxed);
        let held = self.figures.held_ns.load(Ordering::Relaxed);
        (batches, Duration::from_nanos(held / batches.max(1)))
    }
}

impl Drop for Import {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One batch: `BATCH` items' counts set, committed durably.
fn batch(connection: &mut Connection, round: i64) -> rusqlite::Result<()> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut update = transaction.prepare_cached("UPDATE items SET qty = ?2 WHERE sku = ?1")?;
        for i in 0..BATCH {
            let n = (round as usize * BATCH + i) % SEEDED_ITEMS;
            update.execute((format!("sku-{n:04}"), 100 + round % 7))?;
        }
    }
    transaction.commit()
}
