//! The five experiments' tables, gated: every row that has a model agrees with it within
//! [0.9, 1.3] at test scale ([`Experiment::at_test_scale`]), as a claim with rounds, the
//! model counting the per-request overhead calibrated beside the row in each round.

use std::sync::Mutex;
use std::time::Duration;

use super::{Entry, Setup, Shapes, shape};
use crate::error::{Error, Result};
use crate::experiment::{Experiment, ExperimentRow, Workload};
use crate::load::Loads;
use crate::vocab::ServerStrategy;
use perfshape::claim::{Claim, Expected, Measure};

/// This module's entries.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "tables::every_row_agrees_with_the_model",
        control: "twice the work each row claims, judged by the model without its calibrated overhead",
        run: every_row_agrees_with_the_model,
    },
    Entry {
        name: "tables::an_http_aio_fan_out_hides_its_wait",
        control: "400 ms of work where 10 ms is claimed",
        run: an_http_aio_fan_out_hides_its_wait,
    },
];

/// Rows left out of the model's band, each a named finding with a claim of its own.
/// Seed 002's HTTP AIO fan-out of 1000 × 10 ms is bound by the HTTP stack on 2 cores: its
/// wall sits between the model with the calibrated overhead overlapping the wait
/// (1.07–1.24 of it in most runs) and the overhead spent around the wait (1.31–1.38 in
/// one fresh clone's three rounds); [`an_http_aio_fan_out_hides_its_wait`] gates what
/// both readings share.
const FINDINGS: [(&str, &str); 1] = [("seed-002", "http-aio")];

/// The fixtures with a model (seed 003's CPU-bound rows have none).
const FIXTURES: [&str; 4] = [
    "seed-000-why-async.toml",
    "seed-001-client-lifecycle.toml",
    "seed-002-aio-vs-bio.toml",
    "seed-004-jmeter-endpoints.toml",
];

/// Every modelled row of every fixture, at test scale, within [0.9, 1.3] of its model
/// (the tables' "agrees" band): a claim per row, named `<experiment> <row id>`.
pub fn every_row_agrees_with_the_model(setup: Setup) -> Result<Shapes> {
    let mut shapes = Vec::new();
    let fixtures = modelled_fixtures()?;
    for (experiment, row) in claimed_rows(&fixtures) {
        let reading = setup.pick(Reading::Claimed, Reading::RunDoubled);
        let checked = row_agrees(experiment, row, reading, &[], None)?;
        shapes.push(shape(&format!("{} {}", experiment.id, row.id), checked));
    }
    Ok(shapes)
}

/// [`every_row_agrees_with_the_model`]'s claims and their control from the same rounds
/// (the tables' test): each round's measured figure judged again against the model of
/// twice the row's work, its calibrated overhead counted — slowdowns of about ½ against
/// the band [0.9, 1.3]. The catalog's control runs every row at twice its work, a second
/// run of every table (13 s); the same figures on the wrong model prove as well that each
/// claim reads what its row measured.
pub fn every_row_agrees_with_the_model_with_control() -> Result<(Shapes, Shapes)> {
    let (mut claims, mut controls) = (Vec::new(), Vec::new());
    let fixtures = modelled_fixtures()?;
    for (experiment, row) in claimed_rows(&fixtures) {
        let read_wrongly = Mutex::new(Vec::new());
        let checked = row_agrees(experiment, row, Reading::Claimed, &[], Some(&read_wrongly))?;
        let rounds = read_wrongly.into_inner().unwrap_or_else(|e| e.into_inner());
        let control = row_agrees(experiment, row, Reading::ModelDoubled, &rounds, None)?;
        let name = format!("{} {}", experiment.id, row.id);
        claims.push(shape(&name, checked));
        controls.push(shape(&name, control));
    }
    Ok((claims, controls))
}

/// Every fixture with a model, at test scale.
fn modelled_fixtures() -> Result<Vec<Experiment>> {
    FIXTURES
        .iter()
        .map(|file| {
            let path = crate::repository().join("fixtures").join(file);
            Experiment::load(&path)?.at_test_scale()
        })
        .collect()
}

/// The rows of `fixtures` claimed against their model: each has one, and is no named
/// finding.
fn claimed_rows(fixtures: &[Experiment]) -> impl Iterator<Item = (&Experiment, &ExperimentRow)> {
    fixtures
        .iter()
        .flat_map(|experiment| experiment.rows.iter().map(move |row| (experiment, row)))
        .filter(|(experiment, row)| {
            row.workload.model().is_some()
                && !FINDINGS.contains(&(experiment.id.as_str(), row.id.as_str()))
        })
}

/// How a row's measured figure is judged against a model.
#[derive(Clone, Copy)]
enum Reading {
    /// As claimed: the row's model, counting the overhead calibrated in the same round.
    Claimed,
    /// The catalog's control: the row run at twice its work, judged by its model without
    /// the calibrated overhead (slowdowns of about 2).
    RunDoubled,
    /// The tables' test's control: the row as run, judged by the model of twice its work,
    /// the overhead counted (slowdowns of about ½).
    ModelDoubled,
}

/// The claim that `row` agrees with its model as `reading` judges it; its first rounds'
/// figures `replayed` (another reading of rounds already measured), and with `read_wrongly`
/// each round's figure also as [`Reading::ModelDoubled`] reads it, for the control.
fn row_agrees(
    experiment: &Experiment,
    row: &ExperimentRow,
    reading: Reading,
    replayed: &[f64],
    read_wrongly: Option<&Mutex<Vec<f64>>>,
) -> Result<perfshape::claim::Checked> {
    let run_row = match reading {
        Reading::RunDoubled => ExperimentRow {
            workload: doubled(&row.workload),
            ..row.clone()
        },
        Reading::Claimed | Reading::ModelDoubled => row.clone(),
    };
    let metric = experiment.metric;
    let slowdown = Measure::value("slowdown vs model", move || {
        let measured = experiment.measure_row(&run_row)?;
        if let Some(summary) = &measured.summary
            && summary.failed > 0
        {
            return Err(perfshape::Error::gate(format!(
                "{} {}: {} of {} requests failed",
                experiment.id, row.id, summary.failed, summary.sent
            )));
        }
        let against = |reading| {
            let (workload, overhead) = match reading {
                Reading::Claimed => (row.workload.clone(), measured.overhead),
                Reading::RunDoubled => (row.workload.clone(), Duration::ZERO),
                Reading::ModelDoubled => (doubled(&row.workload), measured.overhead),
            };
            let model = workload
                .model()
                .map(|m| m.with_overhead(overhead).predict())
                .transpose()?
                .ok_or_else(|| Error::gate(format!("{} {} has no model", experiment.id, row.id)))?;
            Ok::<_, Error>(metric.slowdown(measured.figure, metric.of(&model)))
        };
        if let Some(wrongly) = read_wrongly {
            let figure = against(Reading::ModelDoubled)?;
            wrongly
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(figure);
        }
        Ok(against(reading)?)
    })
    .replaying(replayed.iter().copied())
    .expecting(Expected::new(
        1.0,
        "the model, counting the per-request overhead calibrated in the same round",
    ));
    Ok(Claim::bound(
        &format!("{} {}: {} ÷ model", experiment.id, row.id, row.label),
        slowdown,
    )
    .within(0.9, 1.3)
    .warmup(0)
    .context("scale", &experiment.scale)
    .check()?)
}

/// `workload` with twice its work (a mixed handler's two parts each doubled).
fn doubled(workload: &Workload) -> Workload {
    match workload {
        Workload::Http(scenario) => {
            let mut scenario = scenario.clone();
            scenario.work *= 2;
            if let ServerStrategy::Mixed { block, wait } = scenario.server {
                scenario.server = ServerStrategy::Mixed {
                    block: block * 2,
                    wait: wait * 2,
                };
            }
            Workload::Http(scenario)
        }
        Workload::InProcess {
            strategy,
            pool,
            n,
            work,
        } => Workload::InProcess {
            strategy: *strategy,
            pool: *pool,
            n: *n,
            work: *work * 2,
        },
        other => other.clone(),
    }
}

/// Seed 002's HTTP AIO row as its own claim: an async fan-out of 1000 requests of 10 ms
/// on 2 cores takes no longer than the same fan-out with no work plus the 10 ms, and at
/// least 65 % of that — the machine turning 1000 requests over (26–49 ms here), not the
/// wait, sets the wall, and the wait hides in it. Whether the stack's work overlaps the
/// wait fully (the ratio's floor, about 0.8) or not at all (1.0) is the part the rounds
/// could not separate; the band holds both, with room for a round's noise. Its control is
/// a wait of 400 ms claimed as 10, which lands at about 4: a 100 ms wait landed at 1.3–1.8,
/// under one noise floor (the idle fan-out's wall moves by a quarter from round to round)
/// from the band's edge.
pub fn an_http_aio_fan_out_hides_its_wait(setup: Setup) -> Result<Shapes> {
    let target = crate::demo::target(super::workers(8)?)?;
    let work = super::ms(10);
    let fan_out = |work| {
        target
            .scenario()
            .server(ServerStrategy::Async)
            .client(perfshape::client::ClientStrategy::FanOut)
            .requests(1000)
            .work(work)
    };
    let claimed = fan_out(work);
    let loaded = match setup {
        Setup::Claimed => target.load(claimed)?,
        Setup::Control => target.load_claiming(fan_out(super::ms(400)), claimed)?,
    };
    let idle = target.load(fan_out(Duration::ZERO))?;
    let idle_plus_work = Measure::duration("the same with no work, plus the work", move || {
        Ok(idle.run()?.wall + work)
    });
    let checked = Claim::ratio(
        "an async fan-out of 1000 × 10 ms ÷ (the same with no work + 10 ms)",
        loaded.wall(),
        idle_plus_work,
    )
    .within(0.65, 1.2)
    .check()?;
    Ok(vec![shape("an_http_aio_fan_out_hides_its_wait", checked)])
}
