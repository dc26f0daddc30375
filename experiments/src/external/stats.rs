//! An engine's statistics, per stage (`row@round`): what Locust's JSON or CSV and k6's
//! end-of-test summary say about each stage's requests, read into one form.
//!
//! Readers take only what every format has — requests, failures, mean and slowest
//! latency — and refuse a file that lacks a column, a number or a stage a verdict needs,
//! naming it: no verdict is taken from partial data.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::engine::Engine;
use super::schedule::{Schedule, scenario_name};
use super::scheduled_row::EngineLoad;
use crate::error::{Error, Result};

/// One stage's requests as the engine counted them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StageStats {
    /// Requests sent.
    pub requests: u64,
    /// Of them, failed (an error status or no answer): sent = ok + failed.
    pub failures: u64,
    /// Mean latency, in seconds.
    pub mean_latency: f64,
    /// The slowest request, in seconds.
    pub max_latency: f64,
    /// An open loop's starts the engine dropped because every user was busy (k6's
    /// `dropped_iterations`): planned = sent + dropped. 0 for every other load.
    pub dropped: u64,
}

/// Every stage's statistics from one engine run, keyed by `row@round`.
#[derive(Clone, Debug, Serialize)]
pub struct EngineStats {
    /// The engine.
    pub engine: Engine,
    /// Where the statistics came from (a file name), for errors.
    pub source: String,
    /// Each stage's figures, by request name (`row@round`).
    pub stages: BTreeMap<String, StageStats>,
    /// k6's dropped iterations by scenario name (`s003`: the schedule's fourth stage, see
    /// [`scenario_name`]), which k6 does not tag with the stage; [`EngineStats::for_schedule`]
    /// puts them on their stages.
    pub dropped: BTreeMap<String, u64>,
    /// How long the engine ran, when perfshape ran it ([`LocustRun`](super::LocustRun)).
    #[serde(skip)]
    pub took: Option<std::time::Duration>,
    /// How many statistics files were added up ([`EngineStats::merged`]): 1 for one
    /// engine process, N for N runners' summaries. Claims judged from several say so.
    pub parts: usize,
}

impl EngineStats {
    /// Reads a statistics file, telling the format from its content: a JSON array is
    /// Locust's `--json-file`, a JSON object with `metrics` k6's summary, a CSV with a
    /// `Request Count` column Locust's `_stats.csv`.
    pub fn read(path: &Path) -> Result<EngineStats> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("reading the statistics {source}"), e))?;
        let trimmed = text.trim_start();
        if trimmed.starts_with('[') || trimmed.starts_with('{') {
            let json: Value = serde_json::from_str(&text).map_err(|e| Error::Statistics {
                source_name: source.clone(),
                what: format!("not valid JSON: {e}"),
            })?;
            if json.is_array() {
                EngineStats::from_locust_json(&source, &json)
            } else {
                EngineStats::from_k6_summary(&source, &json)
            }
        } else {
            EngineStats::from_locust_csv(&source, &text)
        }
    }

    /// Reads several statistics files of one run and adds them up: the summaries of
    /// k6-operator's runners, each of which offered its share of every stage (requests
    /// and failures summed, means weighted by their requests, the largest maximum).
    pub fn read_all(paths: &[impl AsRef<Path>]) -> Result<EngineStats> {
        let parts = paths
            .iter()
            .map(|p| EngineStats::read(p.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        EngineStats::added_up(parts)
    }

    /// Several runs' statistics added up, stage by stage ([`EngineStats::merged`]);
    /// refused when there are none.
    pub fn added_up(parts: impl IntoIterator<Item = EngineStats>) -> Result<EngineStats> {
        let mut parts = parts.into_iter();
        let first = parts
            .next()
            .ok_or_else(|| Error::invalid("statistics files", "none", "at least one file"))?;
        parts.try_fold(first, EngineStats::merged)
    }

    /// This run's statistics and `other`'s, of the same engine, added up stage by stage.
    pub fn merged(mut self, other: EngineStats) -> Result<EngineStats> {
        if other.engine != self.engine {
            return Err(Error::Statistics {
                source_name: other.source,
                what: format!(
                    "{} statistics cannot be added to {}'s {}",
                    other.engine.name(),
                    self.source,
                    self.engine.name()
                ),
            });
        }
        for (name, theirs) in other.stages {
            self.stages
                .entry(name)
                .and_modify(|ours| {
                    let requests = ours.requests + theirs.requests;
                    let weighted = ours.mean_latency * ours.requests as f64
                        + theirs.mean_latency * theirs.requests as f64;
                    ours.mean_latency = weighted / requests.max(1) as f64;
                    ours.requests = requests;
                    ours.failures += theirs.failures;
                    ours.max_latency = ours.max_latency.max(theirs.max_latency);
                    ours.dropped += theirs.dropped;
                })
                .or_insert(theirs);
        }
        for (scenario, dropped) in other.dropped {
            *self.dropped.entry(scenario).or_default() += dropped;
        }
        self.source = format!("{} + {}", self.source, other.source);
        self.parts += other.parts;
        Ok(self)
    }

    /// Locust's `--json-file` output: a list of entries with `name`, `num_requests`,
    /// `num_failures`, `total_response_time` and `max_response_time` (milliseconds).
    pub fn from_locust_json(source: &str, json: &Value) -> Result<EngineStats> {
        let missing = |what: String| Error::Statistics {
            source_name: source.to_string(),
            what,
        };
        let entries = json
            .as_array()
            .ok_or_else(|| missing("not a list of Locust's stats entries".into()))?;
        let mut stages = BTreeMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let field = |key: &str| -> Result<f64> {
                entry.get(key).and_then(Value::as_f64).ok_or_else(|| {
                    missing(format!(
                        "entry {i} has no number {key:?} (Locust's --json-file)"
                    ))
                })
            };
            let name = entry
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| missing(format!("entry {i} has no \"name\"")))?;
            let requests = field("num_requests")? as u64;
            let failures = field("num_failures")? as u64;
            let total_ms = field("total_response_time")?;
            let max_ms = field("max_response_time")?;
            stages.insert(
                name.to_string(),
                StageStats {
                    requests,
                    failures,
                    mean_latency: total_ms / 1e3 / requests.max(1) as f64,
                    max_latency: max_ms / 1e3,
                    dropped: 0,
                },
            );
        }
        Ok(EngineStats {
            engine: Engine::Locust,
            source: source.to_string(),
            stages,
            dropped: BTreeMap::new(),
            took: None,
            parts: 1,
        })
    }

    /// Locust's `_stats.csv`: columns `Name`, `Request Count`, `Failure Count`,
    /// `Average Response Time` and `Max Response Time` (milliseconds); the `Aggregated`
    /// row is skipped.
    pub fn from_locust_csv(source: &str, text: &str) -> Result<EngineStats> {
        let missing = |what: String| Error::Statistics {
            source_name: source.to_string(),
            what,
        };
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| missing(format!("not a CSV file: {e}")))?
            .iter()
            .map(str::to_string)
            .collect();
        let column = |name: &str| {
            header.iter().position(|h| h == name).ok_or_else(|| {
                missing(format!(
                    "no column {name:?} (expected Locust's _stats.csv; its columns: {})",
                    header.join(", ")
                ))
            })
        };
        let (name, count, failed, mean, max) = (
            column("Name")?,
            column("Request Count")?,
            column("Failure Count")?,
            column("Average Response Time")?,
            column("Max Response Time")?,
        );
        let mut stages = BTreeMap::new();
        for record in reader.records() {
            let record = record.map_err(|e| missing(format!("malformed CSV: {e}")))?;
            let line = record.position().map_or(0, |p| p.line());
            let cell = |i: usize, what: &str| -> Result<f64> {
                record
                    .get(i)
                    .and_then(|c| c.trim().parse::<f64>().ok())
                    .ok_or_else(|| missing(format!("line {line}: no number in {what:?}")))
            };
            let row_name = record.get(name).unwrap_or_default();
            if row_name == "Aggregated" {
                continue;
            }
            stages.insert(
                row_name.to_string(),
                StageStats {
                    requests: cell(count, "Request Count")? as u64,
                    failures: cell(failed, "Failure Count")? as u64,
                    mean_latency: cell(mean, "Average Response Time")? / 1e3,
                    max_latency: cell(max, "Max Response Time")? / 1e3,
                    dropped: 0,
                },
            );
        }
        Ok(EngineStats {
            engine: Engine::Locust,
            source: source.to_string(),
            stages,
            dropped: BTreeMap::new(),
            took: None,
            parts: 1,
        })
    }

    /// k6's end-of-test summary, as `handleSummary` receives it (`metrics.<name>.values`)
    /// or as `--summary-export` writes it (`metrics.<name>` flat). Each stage is a
    /// submetric `{stage:row@round}` of `http_reqs` (`count`), `http_req_failed` (`passes`:
    /// the requests that failed) and `http_req_duration` (`avg`, `max`, milliseconds); an
    /// open loop's `dropped_iterations{scenario:sNNN}` (`count`) is kept by scenario. The
    /// exported script's thresholds make k6 keep them all.
    pub fn from_k6_summary(source: &str, json: &Value) -> Result<EngineStats> {
        let missing = |what: String| Error::Statistics {
            source_name: source.to_string(),
            what,
        };
        let metrics = json
            .get("metrics")
            .and_then(Value::as_object)
            .ok_or_else(|| missing("no \"metrics\" object (expected k6's summary)".into()))?;
        let mut stages = BTreeMap::new();
        let mut dropped = BTreeMap::new();
        for (key, metric) in metrics {
            if let Some(scenario) = key
                .strip_prefix("dropped_iterations{scenario:")
                .and_then(|rest| rest.strip_suffix('}'))
            {
                let values = metric.get("values").unwrap_or(metric);
                let count = values
                    .get("count")
                    .and_then(Value::as_f64)
                    .ok_or_else(|| missing(format!("metric {key:?} has no number \"count\"")))?;
                dropped.insert(scenario.to_string(), count as u64);
                continue;
            }
            let Some(stage) = key
                .strip_prefix("http_reqs{stage:")
                .and_then(|rest| rest.strip_suffix('}'))
            else {
                continue;
            };
            let value = |metric: &str, field: &str| -> Result<f64> {
                let name = format!("{metric}{{stage:{stage}}}");
                let object = metrics
                    .get(&name)
                    .ok_or_else(|| missing(format!("no metric {name:?}")))?;
                let values = object.get("values").unwrap_or(object);
                values
                    .get(field)
                    .and_then(Value::as_f64)
                    .ok_or_else(|| missing(format!("metric {name:?} has no number {field:?}")))
            };
            stages.insert(
                stage.to_string(),
                StageStats {
                    requests: value("http_reqs", "count")? as u64,
                    failures: value("http_req_failed", "passes")? as u64,
                    mean_latency: value("http_req_duration", "avg")? / 1e3,
                    max_latency: value("http_req_duration", "max")? / 1e3,
                    dropped: 0,
                },
            );
        }
        Ok(EngineStats {
            engine: Engine::K6,
            source: source.to_string(),
            stages,
            dropped,
            took: None,
            parts: 1,
        })
    }

    /// Each of `schedule`'s stages' statistics, in schedule order; refused, naming them,
    /// when stages are missing, a counted stage lacks requests, or any request failed.
    pub fn for_schedule(&self, schedule: &Schedule) -> Result<Vec<StageStats>> {
        let mut found = Vec::with_capacity(schedule.stages.len());
        let mut missing = Vec::new();
        let mut failed = Vec::new();
        let mut short = Vec::new();
        for (index, stage) in schedule.stages.iter().enumerate() {
            let name = schedule.request_name(stage);
            let arrival = matches!(schedule.rows[stage.row].load, EngineLoad::Arrival { .. });
            let dropped = if arrival {
                let scenario = scenario_name(index);
                match self.dropped.get(&scenario) {
                    Some(&dropped) => dropped,
                    None => {
                        missing.push(format!(
                            "{name} (an open loop: no dropped_iterations{{scenario:{scenario}}})"
                        ));
                        continue;
                    }
                }
            } else {
                0
            };
            match self.stages.get(&name) {
                None => missing.push(name),
                Some(stats) if stats.requests == 0 => missing.push(name),
                Some(&stats) => {
                    let stats = StageStats { dropped, ..stats };
                    if stats.failures > 0 {
                        failed.push(format!(
                            "{name}: {} of {} failed (ok {})",
                            stats.failures,
                            stats.requests,
                            stats.requests - stats.failures.min(stats.requests)
                        ));
                    }
                    if let Some(planned) = schedule.planned_requests(stage.row) {
                        if stats.requests + stats.dropped != planned as u64 {
                            short.push(match arrival {
                                true => format!(
                                    "{name}: {} sent + {} dropped of {planned}",
                                    stats.requests, stats.dropped
                                ),
                                false => format!("{name}: {} of {planned}", stats.requests),
                            });
                        }
                    }
                    found.push(stats);
                }
            }
        }
        let refuse = |what: String| {
            Err(Error::Statistics {
                source_name: self.source.clone(),
                what,
            })
        };
        if !missing.is_empty() {
            return refuse(format!(
                "no requests for {} of {} stages: {} (the {} run's requests are named row@round)",
                missing.len(),
                schedule.stages.len(),
                missing.join(", "),
                self.engine.name()
            ));
        }
        let planned: std::collections::BTreeSet<String> = schedule
            .stages
            .iter()
            .map(|s| schedule.request_name(s))
            .collect();
        let extra: Vec<&str> = self
            .stages
            .keys()
            .filter(|name| !planned.contains(*name))
            .map(String::as_str)
            .collect();
        if !extra.is_empty() {
            return refuse(format!(
                "stages the schedule does not have: {} (judge with the schedule flags the \
                 script was written with: rows, rounds, scale, loop duration)",
                extra.join(", ")
            ));
        }
        if !short.is_empty() {
            return refuse(format!(
                "stages sent other than their planned requests: {}",
                short.join(", ")
            ));
        }
        if !failed.is_empty() {
            return refuse(format!(
                "requests failed, so no figure is taken: {}",
                failed.join("; ")
            ));
        }
        Ok(found)
    }
}
