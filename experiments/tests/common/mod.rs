//! What the experiments' claims share across test binaries: wiremock's mock, the model's
//! random scenarios, the pools of any size and kind. Each binary uses what it needs.
#![allow(dead_code)]

// The tower-limited service the gate's tests stack as teams do: one of the pools' kinds.
#[path = "../../../tests/common/layers.rs"]
pub(crate) mod layers;
pub(crate) mod model_vs_reality;
pub(crate) mod pools;
pub(crate) mod wiremock;

/// The claim's verdict where every read it needs is made; `None` in the portable build,
/// where a claim that needs a missing read must be inconclusive.
pub(crate) fn decided(checked: &perfshape::Checked) -> Option<perfshape::Verdict> {
    match &checked.report().unread {
        None => Some(checked.verdict()),
        #[cfg(not(perfshape_portable))]
        Some(unread) => panic!("a claim on Linux said a read is missing: {unread}"),
        #[cfg(perfshape_portable)]
        Some(_) => {
            assert_eq!(checked.verdict(), perfshape::Verdict::Inconclusive);
            None
        }
    }
}
