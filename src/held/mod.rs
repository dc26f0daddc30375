//! What a held worker did, in a report's words — shared by the claims and the watch, which
//! both judge a hold: the call it slept in and where in the code (`called`), a downstream
//! met on this machine that hides one (`distance`), what to do about it (`remedy`), and a
//! duration as a report says it (`words`).

pub(crate) mod called;
pub(crate) mod distance;
pub(crate) mod remedy;
mod words;

pub(crate) use words::{in_ms, middle};
