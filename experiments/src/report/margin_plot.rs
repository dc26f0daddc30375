//! Every claim of a run in one picture: its median, the median's confidence interval and
//! its band, one row each on a shared log axis, the nearest edges first — so a reviewer
//! sees at a glance which claims sit close enough to an edge to flip.

use plotters::prelude::*;

use super::claims::ClaimRecord;
use crate::error::{Error, Result};
use perfshape::claim::Verdict;

const BAND: RGBColor = RGBColor(46, 139, 87);
const BROKEN: RGBColor = RGBColor(192, 57, 43);
const INCONCLUSIVE: RGBColor = RGBColor(230, 167, 0);
/// Pixels per claim.
const ROW: u32 = 16;
/// The width of the column of names, and how many characters of a name it shows.
const NAMES: u32 = 380;
const NAME_CHARS: usize = 58;

/// The SVG of `claims` in their order: per row the band shaded (to the axis's end where
/// it is open), the interval as a line and the median as a dot (green holds, red broken,
/// amber inconclusive), on one log axis that shows every median, interval and finite edge.
/// Claims without a median are left out.
pub fn margin_plot(claims: &[ClaimRecord]) -> Result<String> {
    let failed = |e: &dyn std::fmt::Display| Error::Plot {
        what: "the claims' margins".into(),
        reason: e.to_string(),
    };
    let rows: Vec<&ClaimRecord> = claims
        .iter()
        .filter(|c| c.median.is_some_and(|m| m.is_finite() && m > 0.0))
        .collect();
    let (x0, x1) = x_range(&rows);
    let n = rows.len().max(1);
    let height = ROW * n as u32 + 60;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (NAMES + 520, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| failed(&e))?;
        let (names, plot) = root.split_horizontally(NAMES);
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .margin_left(0)
            .x_label_area_size(34)
            .build_cartesian_2d((x0..x1).log_scale(), -0.5..n as f64 - 0.5)
            .map_err(|e| failed(&e))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_desc("the claim's figure (log scale)")
            .x_label_formatter(&|x| perfshape::__support::short(*x))
            .draw()
            .map_err(|e| failed(&e))?;
        // Row 0 at the top.
        let y = |i: usize| (n - 1 - i) as f64;
        for (i, claim) in rows.iter().enumerate() {
            let band = claim.band.band();
            let (lo, hi) = (band.lo.max(x0), band.hi.min(x1));
            if lo < hi {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(lo, y(i) - 0.35), (hi, y(i) + 0.35)],
                        BAND.mix(0.18).filled(),
                    )))
                    .map_err(|e| failed(&e))?;
            }
            if let Some((a, b)) = claim.interval() {
                chart
                    .draw_series(LineSeries::new(
                        [(a.max(x0), y(i)), (b.min(x1), y(i))],
                        BLACK.stroke_width(2),
                    ))
                    .map_err(|e| failed(&e))?;
            }
            let colour = match claim.verdict {
                Verdict::Holds => BAND,
                Verdict::Broken => BROKEN,
                Verdict::Inconclusive => INCONCLUSIVE,
            };
            let median = claim.median.unwrap_or(x0).clamp(x0, x1);
            chart
                .draw_series(std::iter::once(Circle::new(
                    (median, y(i)),
                    4,
                    colour.filled(),
                )))
                .map_err(|e| failed(&e))?;
            // The name in the left column, level with its row.
            let (_, py) = chart.backend_coord(&(x0, y(i)));
            names
                .draw(&Text::new(
                    label(&claim.name),
                    (6, py - 6),
                    ("sans-serif", 11).into_font(),
                ))
                .map_err(|e| failed(&e))?;
        }
        root.present().map_err(|e| failed(&e))?;
    }
    Ok(svg)
}

/// A name cut to what the column shows.
fn label(name: &str) -> String {
    if name.chars().count() <= NAME_CHARS {
        name.to_string()
    } else {
        let cut: String = name.chars().take(NAME_CHARS - 1).collect();
        format!("{cut}…")
    }
}

/// A log range that shows every row's median, interval and finite band edges, with room
/// on both sides (a factor of 1.5).
fn x_range(rows: &[&ClaimRecord]) -> (f64, f64) {
    let mut shown = Vec::new();
    for claim in rows {
        let band = claim.band.band();
        shown.extend([band.lo, band.hi]);
        shown.extend(claim.median);
        if let Some((a, b)) = claim.interval() {
            shown.extend([a, b]);
        }
    }
    let positive = shown.into_iter().filter(|v| v.is_finite() && *v > 0.0);
    let (min, max) = positive.fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !min.is_finite() {
        return (0.1, 10.0);
    }
    (min / 1.5, max * 1.5)
}
