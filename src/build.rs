//! How cargo built perfshape: its optimisation level, from its build script. A team's
//! default test profile builds perfshape — and every other dependency, and the service —
//! without optimisations, where the same work takes several times longer: what a budget
//! stated in CPU time must allow for, and what every report says.

/// The `opt-level` cargo built perfshape with (`0`, `1`, `2`, `3`, `s`, `z`).
pub(crate) const OPT_LEVEL: &str = env!("PERFSHAPE_OPT_LEVEL");

/// Whether perfshape was built without optimisations.
pub(crate) fn unoptimised() -> bool {
    OPT_LEVEL == "0"
}

/// `perfshape built without optimisations` or `perfshape optimised (opt-level 3)`.
pub(crate) fn describe() -> String {
    if unoptimised() {
        "perfshape built without optimisations".to_string()
    } else {
        format!("perfshape optimised (opt-level {OPT_LEVEL})")
    }
}
