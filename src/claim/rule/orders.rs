//! The rule's order statistics: for `n` rounds, which of them bound the third a hold needs
//! inside the band and the median's interval a break needs outside it — functions of `n`
//! alone, from the binomial distribution, so that no shape is assumed for the noise.

use std::sync::OnceLock;

use super::{BROKEN_CONFIDENCE, HOLD_QUANTILE, MAX_ROUNDS, hold_confidence};

/// P(Binomial(n, p) ≥ j).
fn binomial_at_least(n: usize, p: f64, j: usize) -> f64 {
    (j..=n)
        .map(|i| choose(n, i) * p.powi(i as i32) * (1.0 - p).powi((n - i) as i32))
        .sum()
}

fn choose(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// The rule's order statistics for `n` rounds: `j` for the hold ([`order_for_quantile`] at
/// [`HOLD_QUANTILE`], [`hold_confidence`]) and `k` for the median's interval
/// ([`order_for_median`] at [`BROKEN_CONFIDENCE`]). They depend on `n` alone and cost
/// O(n³) each, so those up to [`ORDERS_KEPT`] rounds are computed once: the suite's Monte
/// Carlo decides a few hundred thousand series (it spent most of its time here).
pub(super) fn orders(n: usize) -> (usize, usize) {
    static KEPT: OnceLock<Vec<(usize, usize)>> = OnceLock::new();
    let compute = |n| {
        (
            order_for_quantile(n, HOLD_QUANTILE, hold_confidence(n)),
            order_for_median(n, BROKEN_CONFIDENCE),
        )
    };
    match KEPT
        .get_or_init(|| (0..=ORDERS_KEPT).map(compute).collect())
        .get(n)
    {
        Some(&kept) => kept,
        None => compute(n),
    }
}

/// The most rounds whose order statistics are kept ([`orders`]): every default rule's.
const ORDERS_KEPT: usize = MAX_ROUNDS;

/// The largest `j` such that the `j`-th lowest of `n` rounds lies below the `q`-quantile
/// with probability ≥ `confidence` (0 when even the lowest does not).
fn order_for_quantile(n: usize, q: f64, confidence: f64) -> usize {
    (1..=n)
        .take_while(|&j| binomial_at_least(n, q, j) >= confidence)
        .last()
        .unwrap_or(0)
}

/// The largest `k` such that `[x(k), x(n+1−k)]` covers the median with probability ≥
/// `confidence`, at least 1 (the whole range).
fn order_for_median(n: usize, confidence: f64) -> usize {
    let coverage = |k: usize| 1.0 - 2.0 * (1.0 - binomial_at_least(n, 0.5, k));
    (1..=n.div_ceil(2))
        .take_while(|&k| k == 1 || coverage(k) >= confidence)
        .last()
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::super::HOLD_CONFIDENCE;
    use super::*;

    #[test]
    fn order_statistics_match_the_binomial_tables() {
        // n → (j for the third at 70 %, k for the median at 75 %)
        let table = [
            (3, 1, 1),
            (5, 1, 1),
            (7, 2, 2),
            (9, 2, 3),
            (11, 3, 4),
            (15, 4, 5),
        ];
        for (n, j, k) in table {
            assert_eq!(
                order_for_quantile(n, HOLD_QUANTILE, HOLD_CONFIDENCE),
                j,
                "n = {n}"
            );
            assert_eq!(order_for_median(n, BROKEN_CONFIDENCE), k, "n = {n}");
        }
        assert_eq!(order_for_quantile(2, HOLD_QUANTILE, HOLD_CONFIDENCE), 0);
    }
}
