//! Durations in reports and JSON are milliseconds (floats), the unit every table uses:
//! `#[serde(with = "crate::vocab::millis")]`, or `millis::opt` for an `Option<Duration>`.

use std::time::Duration;

/// A duration as a float of milliseconds.
pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

/// A float of milliseconds (finite, ≥ 0) as a duration.
pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let ms = <f64 as serde::Deserialize>::deserialize(d)?;
    if ms.is_finite() && ms >= 0.0 {
        Ok(Duration::from_secs_f64(ms / 1e3))
    } else {
        Err(serde::de::Error::custom(format!(
            "{ms} ms is not a duration (allowed: a finite number ≥ 0)"
        )))
    }
}

/// The same for an optional duration (`null` when absent).
pub mod opt {
    use std::time::Duration;

    /// An optional duration as a float of milliseconds, or `null`.
    pub fn serialize<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    /// A float of milliseconds, or `null`, as an optional duration.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        let ms = <Option<f64> as serde::Deserialize>::deserialize(d)?;
        ms.map(|ms| super::deserialize(serde::de::value::F64Deserializer::new(ms)))
            .transpose()
    }
}
