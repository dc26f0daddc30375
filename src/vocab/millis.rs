//! Durations in reports and JSON are milliseconds (floats), the unit every table uses:
//! `#[serde(with = "crate::vocab::millis")]`, or `millis::opt` for an `Option<Duration>`.

use std::time::Duration;

pub(crate) fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

/// The same for an optional duration (`null` when absent).
pub(crate) mod opt {
    use std::time::Duration;

    pub(crate) fn serialize<S: serde::Serializer>(
        d: &Option<Duration>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::serialize(d, s),
            None => s.serialize_none(),
        }
    }
}
