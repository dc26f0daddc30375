//! The decision rule's error rates, computed by Monte Carlo over synthetic round series
//! with a fixed seed: what the README states, pinned.
//!
//! A round's figure is `true value × exp(σ Z)`: 5 % round-to-round noise is σ = 0.05, with
//! Z normal, or Student-t with 3 degrees of freedom for a machine with occasional far-off
//! rounds. The band is `≥ 1`; "10 % inside" is a true value of 1.1, "25 % outside" one
//! of 0.75.

use perfshape::Verdict;
use perfshape::claim::{Band, DecisionRule};
use proptest::prelude::RngCore;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// Uniform in (0, 1).
fn uniform(rng: &mut TestRng) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// Standard normal (Box–Muller).
fn normal(rng: &mut TestRng) -> f64 {
    let (u, v) = (uniform(rng), uniform(rng));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Student-t with 3 degrees of freedom, scaled to unit variance's neighbourhood (a normal
/// over the root of a chi-square ÷ 3).
fn heavy(rng: &mut TestRng) -> f64 {
    let chi: f64 = (0..3).map(|_| normal(rng).powi(2)).sum();
    normal(rng) / (chi / 3.0).sqrt()
}

/// Verdict counts over `trials` series whose round `i` is `value(i, rng)`.
fn tally(trials: usize, seed: u8, value: impl FnMut(usize, &mut TestRng) -> f64) -> (Tally, f64) {
    tally_by(DecisionRule::default(), trials, seed, value)
}

/// [`tally`] by `rule`.
fn tally_by(
    rule: DecisionRule,
    trials: usize,
    seed: u8,
    mut value: impl FnMut(usize, &mut TestRng) -> f64,
) -> (Tally, f64) {
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
    let band = Band::at_least(1.0);
    let mut counts = Tally::default();
    let mut rounds = 0;
    for _ in 0..trials {
        let (verdict, n) = rule.run(&band, |i| value(i, &mut rng));
        rounds += n;
        match verdict {
            Verdict::Holds => counts.holds += 1,
            Verdict::Broken => counts.broken += 1,
            Verdict::Inconclusive => counts.inconclusive += 1,
        }
    }
    let mean_rounds = rounds as f64 / trials as f64;
    (counts, mean_rounds)
}

#[derive(Debug, Default)]
struct Tally {
    holds: usize,
    broken: usize,
    inconclusive: usize,
}

impl Tally {
    fn rate(&self, count: usize) -> f64 {
        count as f64 / (self.holds + self.broken + self.inconclusive) as f64
    }
    /// A strict gate fails on both broken and inconclusive.
    fn fails(&self) -> f64 {
        self.rate(self.broken + self.inconclusive)
    }
}

const SIGMA: f64 = 0.05;

/// A claim whose true value sits 10 % inside its band, at 5 % noise, fails (broken or
/// inconclusive) in at most 0.1 % of 200,000 trials; it is settled in ~3.4 rounds.
#[test]
fn a_claim_ten_percent_inside_fails_at_most_once_in_a_thousand() {
    let (t, rounds) = tally(200_000, 1, |_, rng| 1.1 * (SIGMA * normal(rng)).exp());
    eprintln!("10% inside, normal 5% noise: {t:?}, {rounds:.2} rounds on average");
    assert!(t.fails() <= 0.001, "fails {:.4}%", 100.0 * t.fails());
    assert!(rounds < 4.0, "{rounds}");
}

/// A claim whose true value sits 25 % outside its band, at 5 % noise, is called broken in
/// at least 99 % of trials (in fact every one, at the third round).
#[test]
fn a_claim_twenty_five_percent_outside_is_broken_at_least_ninety_nine_times_in_a_hundred() {
    let (t, rounds) = tally(20_000, 2, |_, rng| 0.75 * (SIGMA * normal(rng)).exp());
    eprintln!("25% outside, normal 5% noise: {t:?}, {rounds:.2} rounds");
    assert!(t.rate(t.broken) >= 0.99, "broken {:.4}", t.rate(t.broken));
    assert_eq!(t.holds, 0);
    // With heavy-tailed noise too.
    let (t, _) = tally(20_000, 3, |_, rng| 0.75 * (SIGMA * heavy(rng)).exp());
    eprintln!("25% outside, heavy-tailed 5% noise: {t:?}");
    assert!(t.rate(t.broken) >= 0.99, "broken {:.4}", t.rate(t.broken));
    assert_eq!(t.holds, 0);
}

/// A regression in every third round (25 % outside there, 50 % inside elsewhere) is never
/// called holds, whatever the noise; it ends inconclusive, which the strict gate fails.
#[test]
fn a_regression_in_every_third_round_never_holds() {
    // Noiseless, every trial is the same: one each.
    for (seed, sigma, trials) in [(4, SIGMA, 400), (5, 0.01, 400), (6, 0.0, 1)] {
        for phase in 0..3 {
            let (t, _) = tally(trials, seed, |i, rng| {
                let value = if i % 3 == phase { 0.75 } else { 1.5 };
                value * (sigma * normal(rng)).exp()
            });
            eprintln!("every third round regressed (phase {phase}, noise {sigma}): {t:?}");
            assert_eq!(t.holds, 0, "phase {phase}, noise {sigma}");
        }
    }
}

/// What the rule cannot do, measured rather than hidden: a regression that strikes each
/// round at random with probability ⅓ holds when the rounds measured happen to miss it —
/// (⅔)³ ≈ 30 % of the time at three rounds — or show it in no more than one round in six
/// (≈ 44 % in all, to the most rounds the rule takes; 41 % when it stopped at fifteen).
/// The rule for a hold is the one for such a shape.
#[test]
fn a_random_regression_in_a_third_of_rounds_holds_only_when_unseen() {
    let (t, _) = tally(5_000, 7, |_, rng| {
        let value = if uniform(rng) < 1.0 / 3.0 { 0.75 } else { 1.5 };
        value * (SIGMA * normal(rng)).exp()
    });
    eprintln!("random regression in a third of rounds: {t:?}");
    let holds = t.rate(t.holds);
    assert!((0.35..0.48).contains(&holds), "holds {holds:.4}");
}

/// A healthy claim far inside its band with a real machine's noise (1 %) holds at the
/// third round, every time: the rule costs no rounds where the shape is clear.
#[test]
fn a_clear_claim_holds_at_the_third_round() {
    let (t, rounds) = tally(20_000, 8, |_, rng| 1.5 * (0.01 * normal(rng)).exp());
    assert_eq!(t.holds, 20_000, "{t:?}");
    assert_eq!(rounds, 3.0);
}

/// Heavy-tailed noise (occasional far-off rounds) costs false failures: reported, not
/// hidden. At 10 % inside with Student-t(3) noise of scale 5 %, at most 2 % fail.
#[test]
fn heavy_tailed_noise_is_measured() {
    let (t, rounds) = tally(20_000, 9, |_, rng| 1.1 * (SIGMA * heavy(rng)).exp());
    eprintln!("10% inside, heavy-tailed 5% noise: {t:?}, {rounds:.2} rounds");
    assert!(t.fails() <= 0.02, "fails {:.4}", t.fails());
    assert!(t.rate(t.broken) <= 0.001, "broken {:.4}", t.rate(t.broken));
}

/// A machine's occasional far-off round (one in fifteen, 15 % past the band's edge) on a
/// claim that holds with 1 % noise: the rounds outvote it; at most 5 % end inconclusive.
#[test]
fn an_occasional_far_off_round_is_outvoted() {
    let rule = DecisionRule::default();
    let band = Band::within(0.9, 1.6);
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[10; 32]);
    let mut counts = Tally::default();
    for _ in 0..20_000 {
        let (verdict, _) = rule.run(&band, |_| {
            let value = if uniform(&mut rng) < 1.0 / 15.0 {
                1.85
            } else {
                1.3
            };
            value * (0.01 * normal(&mut rng)).exp()
        });
        match verdict {
            Verdict::Holds => counts.holds += 1,
            Verdict::Broken => counts.broken += 1,
            Verdict::Inconclusive => counts.inconclusive += 1,
        }
    }
    eprintln!("one far-off round in fifteen: {counts:?}");
    assert!(counts.fails() <= 0.05, "fails {:.4}", counts.fails());
}

/// One round of the scheduler claim (`src/catalog/scheduler.rs`): the mean spread of 16
/// staggered pairs' ends ÷ the work time, ÷ the model's 0.1. A pair is served in two waves
/// with probability `p` (its ends a work time apart, ±3 %), else one stagger apart with
/// the jitter measured here, pessimistically wide (0.08 × e^{0.5 Z}).
fn pair_spread(rng: &mut TestRng, p: f64) -> f64 {
    let total: f64 = (0..16)
        .map(|_| {
            if uniform(rng) < p {
                (0.03 * normal(rng)).exp()
            } else {
                0.08 * (0.5 * normal(rng)).exp()
            }
        })
        .sum();
    total / 16.0 / 0.1
}

/// The scheduler claim against its band of ≤ 2 × the model (here 2 ÷ the figure, against
/// ≥ 1). With eager hand-off no pair of 448 measured here was served in two waves; even at
/// 2 % of pairs the claim fails in under 1 % of trials. With tokio's default all but 3 of
/// 448 were, and even at 90 % of pairs the claim is broken in at least 99.9 % of trials and
/// never holds. A regression to one pair in five holds in about 1 % of trials (120 of
/// 10,000) and is broken in most: the band's edge sits near a fifth of the pairs.
#[test]
fn staggered_pairs_tell_eager_handoff_from_tokios_default() {
    let (eager, rounds) = tally(10_000, 8, |_, rng| 2.0 / pair_spread(rng, 0.02));
    eprintln!("eager hand-off, 2 % in two waves: {eager:?}, {rounds:.2} rounds on average");
    assert!(eager.fails() <= 0.01, "{eager:?}");
    let (default, rounds) = tally(10_000, 9, |_, rng| 2.0 / pair_spread(rng, 0.9));
    eprintln!("tokio's default, 90 % in two waves: {default:?}, {rounds:.2} rounds on average");
    assert_eq!(default.holds, 0, "{default:?}");
    assert!(default.rate(default.broken) >= 0.999, "{default:?}");
    let (partial, _) = tally(10_000, 10, |_, rng| 2.0 / pair_spread(rng, 0.2));
    eprintln!("a regression, 20 % in two waves: {partial:?}");
    assert!(partial.rate(partial.holds) <= 0.02, "{partial:?}");
    assert!(partial.rate(partial.broken) >= 0.8, "{partial:?}");
}

/// One round of the blocking claim on a router perfshape serves: the allowance used — the
/// larger of the median request's waiting ÷ 5 % of one request alone and its longest poll's
/// CPU ÷ the poll budget — where a handler waits a share `wait` of each request and computes
/// `poll` of the budget in its longest poll. The waiting moves by `sigma` a round (a sleep's
/// overshoot, and the request alone it is divided by: here pessimistically 5 %; the power
/// table's rounds move by 0.5–4 %), the poll's CPU time by a fifth of that.
fn allowance_used(rng: &mut TestRng, wait: f64, poll: f64, sigma: f64) -> f64 {
    let waiting = wait / 0.05 * (sigma * normal(rng)).exp();
    let computing = poll * (sigma / 5.0 * normal(rng)).exp();
    waiting.max(computing).max(0.001)
}

/// The served blocking claim's band, at most 1 of its allowance (here 1 ÷ the figure,
/// against ≥ 1): a handler that never waits and computes half its budget in one poll (gzip
/// of a 64 KiB body, unoptimised) holds in every trial; one that waits 2 ms of 20 (10 %)
/// or computes twice its budget in one poll is broken in every trial; one that waits 2 %
/// holds in every trial. The edge is counted, not hidden: waiting 5 %, at the band itself,
/// holds in 16 % of trials and is broken in 37 % (inconclusive in the rest, after the most
/// rounds the rule takes).
#[test]
fn the_allowance_tells_a_tenth_waited_and_a_long_poll_from_none() {
    let run_of = |trials, seed, wait, poll| {
        tally(trials, seed, |_, rng| {
            1.0 / allowance_used(rng, wait, poll, 0.05)
        })
        .0
    };
    let run = |seed, wait, poll| run_of(10_000, seed, wait, poll);
    let free = run(21, 0.0, 0.5);
    eprintln!("never waits, half the budget in one poll: {free:?}");
    assert!(free.fails() <= 0.001, "{free:?}");
    let tenth = run(22, 0.10, 0.01);
    eprintln!("waits a tenth: {tenth:?}");
    assert_eq!(tenth.broken, 10_000, "{tenth:?}");
    let long = run(23, 0.0, 2.0);
    eprintln!("twice the budget in one poll: {long:?}");
    assert_eq!(long.broken, 10_000, "{long:?}");
    let two = run(24, 0.02, 0.01);
    eprintln!("waits 2 %: {two:?}");
    assert!(two.rate(two.holds) >= 0.999, "{two:?}");
    // At the edge the rounds go on to the most the rule takes: fewer trials.
    let edge = run_of(2_000, 25, 0.05, 0.01);
    eprintln!("waits 5 %, at the band: {edge:?}");
    assert!(edge.rate(edge.holds) <= 0.25, "{edge:?}");
}

/// One round of the blocking claim from outside (by URL) on one worker at its default
/// N = 20: a handler that holds its worker for a share `b` of a request makes
/// the fan-out take 1 + 19 b request times, plus the client's own cost of sending 20
/// (`overhead`, 0.13 of a request: what a free handler reads here, 0.7 %); each side's
/// time moves by `sigma` a round (here pessimistically 5 %, four times the 1.3 % floor
/// measured). The figure is the estimated share, (ratio − 1) ÷ 19.
fn held_share(rng: &mut TestRng, b: f64, sigma: f64) -> f64 {
    let overhead = 0.13;
    let fan_out = (1.0 + 19.0 * b + overhead) * (sigma * normal(rng)).exp();
    let alone = (sigma * normal(rng)).exp();
    ((fan_out / alone - 1.0) / 19.0).max(0.001)
}

/// The blocking claim's band, ≤ 5 % held (here 0.05 ÷ the figure, against ≥ 1): a handler
/// that gives its worker back (b = 0) or offloads its blocking part fails in under 1 % of
/// trials even at 5 % noise per side; one that holds its worker for 2 ms of 20 (10 %) is
/// broken in at least 99 % and never holds (10,000 of 10,000 broken). Between them the
/// band's edge is counted, not hidden: 2 % held holds in every trial; 5 % held, which the
/// client's overhead lifts to a reading of 5.7 %, is broken in 93 % and holds in under 1 %
/// (the power table measured 18 and 20 of 20 broken, quiet and busy).
#[test]
fn the_held_share_tells_a_tenth_held_from_none() {
    let (free, rounds) = tally(10_000, 11, |_, rng| 0.05 / held_share(rng, 0.0, 0.05));
    eprintln!("none held: {free:?}, {rounds:.2} rounds on average");
    assert!(free.fails() <= 0.01, "{free:?}");
    let (tenth, rounds) = tally(10_000, 12, |_, rng| 0.05 / held_share(rng, 0.10, 0.05));
    eprintln!("a tenth held: {tenth:?}, {rounds:.2} rounds on average");
    assert_eq!(tenth.holds, 0, "{tenth:?}");
    assert!(tenth.rate(tenth.broken) >= 0.99, "{tenth:?}");
    let (two, _) = tally(10_000, 13, |_, rng| 0.05 / held_share(rng, 0.02, 0.05));
    eprintln!("2 % held: {two:?}");
    assert!(two.rate(two.holds) >= 0.9, "{two:?}");
    let (five, _) = tally(10_000, 14, |_, rng| 0.05 / held_share(rng, 0.05, 0.05));
    eprintln!("5 % held: {five:?}");
    assert!(five.rate(five.holds) <= 0.5, "{five:?}");
}

/// One round of the blocking claim's third criterion on one worker at its default N = 20:
/// the share of the requests whose polls slept in the kernel at all ÷ half, where each
/// request's polls sleep with probability `p`, independently.
fn slept_used(rng: &mut TestRng, p: f64) -> f64 {
    slept_used_of(rng, p, 20, 1)
}

/// [`slept_used`] for a mix: the largest over `routes` routes of `n` requests each.
fn slept_used_of(rng: &mut TestRng, p: f64, n: usize, routes: usize) -> f64 {
    (0..routes)
        .map(|_| {
            let slept = (0..n).filter(|_| uniform(rng) < p).count();
            (slept as f64 / n as f64 / 0.5).max(0.001)
        })
        .fold(0.0, f64::max)
}

/// The sleep criterion (at most half the requests' polls may sleep), on its own: correct
/// handlers slept in 0–12 % of their requests in the suite (an allocator's lock, sqlx's
/// SQLite channel), and fail in none of 10,000 trials at 2, 12 or 25 %; a sync call that
/// sleeps in every request, or in nine requests of ten, is broken in every trial. What it cannot catch is counted too: a sync driver on loopback
/// whose worker the kernel preempts for the database instead of letting it sleep (slept in
/// 3–35 % of requests here) is not broken by this criterion (at 35 %: 99.7 % hold) — the
/// downstream proxy is the way to test it.
#[test]
fn the_sleep_share_tells_a_sync_call_in_every_request_from_now_and_then() {
    let run = |seed, p| tally(10_000, seed, |_, rng| 1.0 / slept_used(rng, p)).0;
    for (seed, p, most) in [(31, 0.02, 0.0), (32, 0.12, 0.0), (33, 0.25, 0.001)] {
        let t = run(seed, p);
        eprintln!("correct, sleeps in {:.0} % of requests: {t:?}", p * 100.0);
        assert!(t.fails() <= most, "{p}: {t:?}");
    }
    let every = run(34, 1.0);
    eprintln!("a sync call in every request: {every:?}");
    assert_eq!(every.broken, 10_000, "{every:?}");
    let most = run(35, 0.9);
    eprintln!("a sync call that sleeps in nine requests of ten: {most:?}");
    assert!(most.rate(most.broken) >= 0.99, "{most:?}");
    let loopback = run(36, 0.35);
    eprintln!("a sync driver on loopback, preempted more than asleep: {loopback:?}");
    assert!(loopback.rate(loopback.holds) >= 0.9, "{loopback:?}");
}

/// The same criterion in a mix, where each route gets only its share of the fan-out: the
/// inventory's traffic (weights 2, 4, 2, 2 at N = 20) sends its smaller routes 4 requests
/// a round, so one sleep reads as half the allowance. Its routes slept in 0–6 % of their
/// requests (sqlx's movement route the most); at 5 % no trial of 10,000 fails, at 12 % at
/// most 0.2 % come out inconclusive and none broken; a route sleeping in nine requests of
/// ten is broken in 99.9 % of trials (4 requests leave it a few holds in 10,000).
#[test]
fn the_sleep_share_over_four_requests_a_route_still_tells_them_apart() {
    let run = |seed, p| tally(10_000, seed, |_, rng| 1.0 / slept_used_of(rng, p, 4, 4)).0;
    let five = run(41, 0.05);
    eprintln!("a mix of four routes, 4 requests each, sleeping in 5 %: {five:?}");
    assert_eq!(five.holds, 10_000, "{five:?}");
    let twelve = run(42, 0.12);
    eprintln!("the same at 12 %: {twelve:?}");
    assert_eq!(twelve.broken, 0, "{twelve:?}");
    assert!(twelve.rate(twelve.inconclusive) <= 0.002, "{twelve:?}");
    let most = tally(10_000, 43, |_, rng| {
        1.0 / slept_used_of(rng, 0.9, 4, 1).max(slept_used_of(rng, 0.05, 4, 3))
    })
    .0;
    eprintln!("one route of four sleeping in nine requests of ten: {most:?}");
    assert!(most.rate(most.broken) >= 0.999, "{most:?}");
}

/// A round of a claim about a hold on a served router, where the handler meets a shape that
/// comes and goes (a lock another thread holds half the time) with probability `met` a
/// round: such a round waits a third of each request; any other waits none and computes a
/// hundredth of its budget.
fn met_or_quiet(rng: &mut TestRng, met: f64) -> f64 {
    let wait = if uniform(rng) < met { 0.3 } else { 0.0 };
    allowance_used(rng, wait, 0.01, 0.05)
}

/// The rule for a claim about a hold ([`DecisionRule::for_a_hold`]): the quiet rounds do
/// not outvote the ones that met a shape that comes and goes. Met in a third of the rounds,
/// it is broken in at least 90 % of trials and holds in at most 5 % (the default rule held
/// such a series in 42 %: above); met in half, broken in at least 99 %. A correct service
/// with no far round holds in every trial, at the ninth round; with a far round one time in
/// fifty (a preempted lock holder, a page to map) at most 1 % fail, and one time in twenty
/// at most 6 %.
#[test]
fn a_shape_met_in_a_third_of_a_holds_rounds_breaks_it() {
    let rule = DecisionRule::for_a_hold();
    let run = |seed, met| tally_by(rule, 20_000, seed, |_, rng| 1.0 / met_or_quiet(rng, met));
    let (third, rounds) = run(51, 1.0 / 3.0);
    eprintln!("met in a third of the rounds: {third:?}, {rounds:.2} rounds on average");
    assert!(third.rate(third.broken) >= 0.9, "{third:?}");
    assert!(third.rate(third.holds) <= 0.05, "{third:?}");
    let (half, rounds) = run(52, 0.5);
    eprintln!("met in half the rounds: {half:?}, {rounds:.2} rounds on average");
    assert!(half.rate(half.broken) >= 0.99, "{half:?}");
    let (none, rounds) = run(53, 0.0);
    eprintln!("never met: {none:?}, {rounds:.2} rounds on average");
    assert_eq!(none.holds, 20_000, "{none:?}");
    assert_eq!(rounds, 9.0);
    let (rare, rounds) = run(54, 0.02);
    eprintln!("a far round one time in fifty: {rare:?}, {rounds:.2} rounds on average");
    assert!(rare.fails() <= 0.01, "{rare:?}");
    let (twentieth, rounds) = run(55, 0.05);
    eprintln!("a far round one time in twenty: {twentieth:?}, {rounds:.2} rounds on average");
    assert!(twentieth.fails() <= 0.06, "{twentieth:?}");
    // As a lock met in some rounds reads on this machine: quiet rounds anywhere from 0.001
    // to 0.3 of the allowance, met ones 1.8 to 5 — a spread of the rounds so wide that no
    // round is 3 of them past the band (the default rule's far rounds), yet the shape is
    // there.
    let (wide, rounds) = tally_by(rule, 20_000, 56, |_, rng| {
        let used = if uniform(rng) < 1.0 / 3.0 {
            1.8 + 3.2 * uniform(rng)
        } else {
            (0.001f64.ln() + uniform(rng) * (0.3f64 / 0.001).ln()).exp()
        };
        1.0 / used
    });
    eprintln!("met in a third of the rounds, quiet ones spread wide: {wide:?}, {rounds:.2} rounds");
    assert!(wide.rate(wide.broken) >= 0.9, "{wide:?}");
    assert!(wide.rate(wide.holds) <= 0.05, "{wide:?}");
}

/// The served blocking claim decides by the rule for a hold: the allowance's edges of
/// [`the_allowance_tells_a_tenth_waited_and_a_long_poll_from_none`] under it — a handler that
/// never waits holds in every trial, one that waits a tenth is broken in every trial.
#[test]
fn the_rule_for_a_hold_keeps_the_allowances_edges() {
    let rule = DecisionRule::for_a_hold();
    let run = |seed, wait, poll| {
        tally_by(rule, 10_000, seed, |_, rng| {
            1.0 / allowance_used(rng, wait, poll, 0.05)
        })
        .0
    };
    let free = run(61, 0.0, 0.5);
    eprintln!("for a hold, never waits: {free:?}");
    assert!(free.fails() <= 0.001, "{free:?}");
    let tenth = run(62, 0.10, 0.01);
    eprintln!("for a hold, waits a tenth: {tenth:?}");
    assert_eq!(tenth.broken, 10_000, "{tenth:?}");
    let two = run(63, 0.02, 0.01);
    eprintln!("for a hold, waits 2 %: {two:?}");
    assert!(two.rate(two.holds) >= 0.999, "{two:?}");
}

/// One round of an A/A comparison on a busy machine: the same build on both sides, against
/// `≤ 1.1` (here 1.1 ÷ the ratio, against ≥ 1), the ratio moving by Student-t(3) noise of
/// scale `sigma`, and one round in ten 25 % off (the other core's build took the CPU
/// during one side).
fn busy_a_a(rng: &mut TestRng, sigma: f64) -> f64 {
    let far = if uniform(rng) < 0.1 { 1.25 } else { 1.0 };
    1.1 / (far * (sigma * heavy(rng)).exp())
}

/// The rounds go on while they straddle the band and the budget lasts: an A/A comparison
/// on a busy machine, which fifteen rounds left inconclusive in 17 % of trials at 6 %
/// noise and 33 % at 9 %, settles — at most 2 % and 15 % fail (broken or inconclusive);
/// a candidate 15 % slower is broken in at least 97 % (86 % at fifteen rounds).
#[test]
fn a_noisy_comparison_settles_where_fifteen_rounds_did_not() {
    let fifteen = DecisionRule {
        max_rounds: 15,
        ..DecisionRule::default()
    };
    for (sigma, seed, now_at_most, then_at_least) in [(0.06, 9, 0.02, 0.1), (0.09, 10, 0.15, 0.25)]
    {
        let (t, rounds) = tally(5_000, seed, |_, rng| busy_a_a(rng, sigma));
        let (then, _) = tally_by(fifteen, 5_000, seed, |_, rng| busy_a_a(rng, sigma));
        eprintln!(
            "A/A on a busy machine, {sigma} noise: {t:?}, {rounds:.1} rounds; at fifteen rounds {then:?}"
        );
        assert!(t.fails() <= now_at_most, "fails {:.4}", t.fails());
        assert!(then.fails() >= then_at_least, "then {:.4}", then.fails());
        assert!(t.rate(t.broken) <= 0.03, "broken {:.4}", t.rate(t.broken));
    }
    let slower = |_: usize, rng: &mut TestRng| 1.1 / (1.15 * (0.06 * normal(rng)).exp());
    let (t, _) = tally(5_000, 11, slower);
    let (then, _) = tally_by(fifteen, 5_000, 11, slower);
    eprintln!("15 % slower at 6 % noise: {t:?}; at fifteen rounds {then:?}");
    assert!(t.rate(t.broken) >= 0.97, "broken {:.4}", t.rate(t.broken));
    assert!(t.rate(t.holds) <= 0.02, "holds {:.4}", t.rate(t.holds));
}
