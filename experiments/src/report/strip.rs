//! A claim's rounds against its band: a strip plot, so a broken or inconclusive claim
//! shows at a glance whether it moved (every round outside) or was noisy (rounds on both
//! sides of an edge).

use plotters::prelude::*;

use super::claims::ClaimRecord;
use crate::error::{Error, Result};

const BAND: RGBColor = RGBColor(46, 139, 87);
const OUTSIDE: RGBColor = RGBColor(192, 57, 43);

/// The SVG strip plot of `claim`: one point per round (green inside the band, red
/// outside), the band shaded, the median as a line. Axes: round, and the claim's figure.
pub fn strip_plot(claim: &ClaimRecord) -> Result<String> {
    let values: Vec<(f64, f64, bool)> = claim
        .rounds
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.value.map(|v| ((i + 1) as f64, v, r.inside)))
        .collect();
    let band = claim.band.band();
    let (y0, y1) = y_range(values.iter().map(|v| v.1), band.lo, band.hi);
    let x1 = claim.rounds.len().max(1) as f64 + 0.5;
    let mut svg = String::new();
    let failed = |e: &dyn std::fmt::Display| Error::Plot {
        what: format!("the strip plot of {:?}", claim.name),
        reason: e.to_string(),
    };
    {
        let root = SVGBackend::with_string(&mut svg, (520, 220)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| failed(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(32)
            .y_label_area_size(56)
            .build_cartesian_2d(0.5..x1, y0..y1)
            .map_err(|e| failed(&e))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(claim.rounds.len().clamp(1, 15))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .x_desc("round")
            .y_desc(format!("{} ({})", claim.kind, claim.band.band()))
            .draw()
            .map_err(|e| failed(&e))?;
        let (lo, hi) = (band.lo.max(y0), band.hi.min(y1));
        if lo < hi {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.5, lo), (x1, hi)],
                    BAND.mix(0.15).filled(),
                )))
                .map_err(|e| failed(&e))?;
        }
        if let Some(m) = claim.median.filter(|m| m.is_finite()) {
            chart
                .draw_series(LineSeries::new([(0.5, m), (x1, m)], BLACK.stroke_width(1)))
                .map_err(|e| failed(&e))?;
        }
        chart
            .draw_series(values.iter().map(|&(x, y, inside)| {
                Circle::new((x, y), 4, if inside { BAND } else { OUTSIDE }.filled())
            }))
            .map_err(|e| failed(&e))?;
        root.present().map_err(|e| failed(&e))?;
    }
    Ok(svg)
}

/// The y range that shows every value and the band's finite edges, padded by a tenth.
fn y_range(values: impl Iterator<Item = f64>, lo: f64, hi: f64) -> (f64, f64) {
    let shown: Vec<f64> = values.chain([lo, hi]).filter(|v| v.is_finite()).collect();
    let min = shown.iter().copied().fold(f64::INFINITY, f64::min);
    let max = shown.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !min.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((max - min) * 0.1).max(max.abs() * 0.05).max(1e-9);
    let low = if min >= 0.0 {
        (min - pad).max(0.0)
    } else {
        min - pad
    };
    (low, max + pad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_shows_the_values_and_the_band() {
        let (lo, hi) = y_range([1.0, 1.2].into_iter(), 0.95, f64::INFINITY);
        assert!(lo < 0.95 && hi > 1.2, "{lo} {hi}");
        let (lo, hi) = y_range(std::iter::empty(), f64::NEG_INFINITY, f64::INFINITY);
        assert_eq!((lo, hi), (0.0, 1.0));
    }
}
