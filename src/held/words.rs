//! Durations as a report says them, and the median duration of a claim's rounds.

use std::time::Duration;

/// The median of `values` (the upper one of an even count), zero when there are none.
pub(crate) fn middle(values: impl IntoIterator<Item = Duration>) -> Duration {
    let mut values: Vec<Duration> = values.into_iter().collect();
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// `2.0 ms`, `0.06 ms`, `24 ms`: a duration as a report says it.
pub(crate) fn in_ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else if ms >= 1.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}
