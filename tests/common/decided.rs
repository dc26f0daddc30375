//! A claim's verdict where every read it needs is made, shared by the gate's tests and
//! the experiments'.

/// The claim's verdict where this build makes every read it needs, else `None`: in the
/// portable build (`PERFSHAPE_PORTABLE=1`, what macOS and Windows get) a claim that needs
/// Linux's `/proc` is inconclusive, naming the read — never another verdict, and never on
/// Linux.
/// A test that expects a verdict checks the rest of its report only where it was decided.
pub(crate) fn decided(checked: &perfshape::Checked) -> Option<perfshape::Verdict> {
    match &checked.report().unread() {
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
