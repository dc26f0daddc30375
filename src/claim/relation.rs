//! What a claim relates: two sides as a ratio, one side against its expectation, a figure
//! taken inside one run, or sides in a claimed order — and the per-round figure each gives.

use std::collections::BTreeMap;

use super::Measure;

pub(super) enum Relation<'a> {
    /// A ÷ B.
    Ratio(Measure<'a>, Measure<'a>),
    /// measured ÷ the measure's expectation.
    Bound(Measure<'a>),
    /// The measured figure itself: a ratio taken inside one run (say, a cheap request's
    /// wait ÷ a slow request's time in the same load).
    Figure(Measure<'a>),
    /// Sides listed in the order claimed, largest first; the figure is the smallest
    /// ratio between neighbours.
    Ordering(Vec<Measure<'a>>),
}

impl<'a> Relation<'a> {
    pub(super) fn sides(&mut self) -> Vec<&mut Measure<'a>> {
        match self {
            Relation::Ratio(a, b) => vec![a, b],
            Relation::Bound(m) | Relation::Figure(m) => vec![m],
            Relation::Ordering(sides) => sides.iter_mut().collect(),
        }
    }

    pub(super) fn figure(&self, x: &[f64]) -> f64 {
        match self {
            Relation::Ratio(..) => x[0] / x[1],
            Relation::Bound(m) => x[0] / m.expected.as_ref().map_or(f64::NAN, |e| e.value),
            Relation::Figure(_) => x[0],
            Relation::Ordering(_) => x
                .windows(2)
                .map(|w| w[0] / w[1])
                .fold(f64::INFINITY, f64::min),
        }
    }

    pub(super) fn measures(&self) -> Vec<&Measure<'a>> {
        match self {
            Relation::Ratio(a, b) => vec![a, b],
            Relation::Bound(m) | Relation::Figure(m) => vec![m],
            Relation::Ordering(sides) => sides.iter().collect(),
        }
    }

    /// The figure the sides' expectations give, when every side has one.
    pub(super) fn ideal(&self) -> Option<f64> {
        if matches!(self, Relation::Bound(_) | Relation::Figure(_)) {
            return None;
        }
        let expected: Option<Vec<f64>> = self
            .measures()
            .iter()
            .map(|m| m.expected.as_ref().map(|e| e.value))
            .collect();
        let ideal = self.figure(&expected?);
        (ideal.is_finite() && ideal > 0.0).then_some(ideal)
    }

    /// The settings every side that names them agrees on; a key the sides disagree on is
    /// what tells them apart, and their labels say it.
    pub(super) fn context(&self) -> BTreeMap<String, String> {
        let mut agreed: BTreeMap<String, Option<String>> = BTreeMap::new();
        for measure in self.measures() {
            for (key, value) in &measure.context {
                agreed
                    .entry(key.clone())
                    .and_modify(|v| {
                        if v.as_ref() != Some(value) {
                            *v = None;
                        }
                    })
                    .or_insert_with(|| Some(value.clone()));
            }
        }
        agreed
            .into_iter()
            .filter_map(|(key, value)| Some((key, value?)))
            .collect()
    }

    pub(super) fn kind(&self) -> &'static str {
        match self {
            Relation::Ratio(..) => "ratio",
            Relation::Bound(..) => "bound",
            Relation::Figure(..) => "figure",
            Relation::Ordering(_) => "ordering",
        }
    }

    pub(super) fn describe(&self) -> String {
        let labels = self.labels();
        match self {
            Relation::Ratio(..) => format!("{} ÷ {}", labels[0], labels[1]),
            Relation::Bound(..) => format!("{} ÷ expected", labels[0]),
            Relation::Figure(..) => labels[0].clone(),
            Relation::Ordering(_) => labels.join(" > "),
        }
    }

    /// Each side's label; sides that share a label are told apart by the settings they
    /// do not share (`fan-out → blocking (server pool W=1 B=512)`).
    pub(super) fn labels(&self) -> Vec<String> {
        let measures = self.measures();
        let agreed = self.context();
        measures
            .iter()
            .map(|m| {
                let twins = measures.iter().filter(|o| o.label == m.label).count();
                let own: Vec<String> = m
                    .context
                    .iter()
                    .filter(|(key, _)| !agreed.contains_key(*key))
                    .map(|(key, value)| format!("{key} {value}"))
                    .collect();
                if twins > 1 && !own.is_empty() {
                    format!("{} ({})", m.label, own.join(", "))
                } else {
                    m.label.clone()
                }
            })
            .collect()
    }
}
