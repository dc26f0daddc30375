//! The model against reality on small random scenarios (`tests/common/model_vs_reality.rs`).

use perfshape_experiments::catalog::Setup::Claimed;

use crate::common::model_vs_reality::small_random_scenarios;

#[test]
fn the_model_predicts_small_random_scenarios() -> perfshape_experiments::Result {
    let checked = small_random_scenarios(Claimed)?;
    let verdicts: Vec<String> = checked
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c.summary().expected.unwrap_or_default(),
                c.verdict()
            )
        })
        .collect();
    // With a fixed seed the cases, and while they hold the verdicts, are the same every run.
    insta::assert_yaml_snapshot!(verdicts);
    for c in &checked {
        c.gate()?;
    }
    Ok(())
}
