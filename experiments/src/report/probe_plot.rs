//! The probe's curve: throughput and mean latency against concurrency, the knee marked.

use plotters::prelude::*;

use crate::error::{Error, Result};
use perfshape::probe::ProbeReport;

const THROUGHPUT: RGBColor = RGBColor(46, 139, 87);
const LATENCY: RGBColor = RGBColor(41, 98, 255);
const KNEE: RGBColor = RGBColor(192, 57, 43);

/// The SVG of `report`: throughput (left axis, green) and mean latency (right axis, blue)
/// at each concurrency (doubling, so the axis is logarithmic), and a red line at the
/// concurrency where throughput stopped growing, if it did.
pub fn probe_plot(report: &ProbeReport) -> Result<String> {
    let failed = |e: &dyn std::fmt::Display| Error::Plot {
        what: format!("the probe of {}", report.url),
        reason: e.to_string(),
    };
    let c_max = report
        .steps
        .iter()
        .map(|s| s.concurrency as f64)
        .fold(2.0, f64::max);
    let t_max = report
        .steps
        .iter()
        .map(|s| s.throughput)
        .fold(1e-9, f64::max)
        * 1.15;
    let latency = |s: &perfshape::probe::ProbeStep| s.mean_latency.as_secs_f64() * 1e3;
    let l_max = report.steps.iter().map(latency).fold(1e-9, f64::max) * 1.15;
    // Ticks at the concurrencies tried, not at a log axis's 1..10 minors.
    let steps: Vec<f64> = report.steps.iter().map(|s| s.concurrency as f64).collect();
    let x_range = || {
        (1.0..c_max * 1.1)
            .log_scale()
            .with_key_points(steps.clone())
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| failed(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .caption(
                format!("probe of {}", report.url),
                ("sans-serif", 14).into_font(),
            )
            .x_label_area_size(34)
            .y_label_area_size(60)
            .right_y_label_area_size(60)
            .build_cartesian_2d(x_range(), 0.0..t_max)
            .map_err(|e| failed(&e))?
            .set_secondary_coord(x_range(), 0.0..l_max);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .x_desc("concurrency (callers in a closed loop)")
            .y_desc("throughput (requests/s)")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()
            .map_err(|e| failed(&e))?;
        chart
            .configure_secondary_axes()
            .y_desc("mean latency (ms)")
            .draw()
            .map_err(|e| failed(&e))?;
        // Each curve a line with a ring at every concurrency tried, and its legend entry.
        let points = |figure: &dyn Fn(&perfshape::probe::ProbeStep) -> f64| -> Vec<(f64, f64)> {
            report
                .steps
                .iter()
                .map(|s| (s.concurrency as f64, figure(s)))
                .collect()
        };
        chart
            .draw_series(
                LineSeries::new(points(&|s| s.throughput), THROUGHPUT.stroke_width(2))
                    .point_size(4),
            )
            .map_err(|e| failed(&e))?
            .label("throughput (left axis)")
            .legend(legend_line(THROUGHPUT));
        chart
            .draw_secondary_series(
                LineSeries::new(points(&latency), LATENCY.stroke_width(2)).point_size(3),
            )
            .map_err(|e| failed(&e))?
            .label("mean latency (right axis)")
            .legend(legend_line(LATENCY));
        if let Some(knee) = report.stops_growing_at {
            let knee = knee as f64;
            chart
                .draw_series(LineSeries::new(
                    [(knee, 0.0), (knee, t_max)],
                    KNEE.stroke_width(1),
                ))
                .map_err(|e| failed(&e))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    match report.limit {
                        perfshape::probe::Limit::Cpu => {
                            " stops growing: the machine's CPU".to_string()
                        }
                        perfshape::probe::Limit::LoadClient => {
                            " stops growing: the load client".to_string()
                        }
                        perfshape::probe::Limit::Pool => {
                            format!(" stops growing: a pool of ≈{:.1}", report.pool_estimate)
                        }
                        perfshape::probe::Limit::NotAttributed | perfshape::probe::Limit::None => {
                            format!(
                                " stops growing: not attributed (≈{:.1})",
                                report.pool_estimate
                            )
                        }
                    },
                    (knee, t_max * 0.95),
                    ("sans-serif", 12).into_font().color(&KNEE),
                )))
                .map_err(|e| failed(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(|e| failed(&e))?;
        root.present().map_err(|e| failed(&e))?;
    }
    Ok(svg)
}

/// A legend entry: a short line in `colour`.
fn legend_line(colour: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2))
}
