//! The ledger's messages, prost's (what `prost-build` writes from a `.proto`).

/// An entry to record: cents moved on an account.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Entry {
    /// The account's id; an entry with none is refused (INVALID_ARGUMENT).
    #[prost(string, tag = "1")]
    pub account: String,
    /// Cents, positive in and negative out.
    #[prost(int64, tag = "2")]
    pub cents: i64,
}

/// An entry recorded: its sequence number in the ledger.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Recorded {
    /// The core's sequence number for the entry.
    #[prost(uint64, tag = "1")]
    pub seq: u64,
}

/// The health check's request.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Ping {}

/// The health check's answer.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Pong {
    /// Always true: the service answered.
    #[prost(bool, tag = "1")]
    pub serving: bool,
}
