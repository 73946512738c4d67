//! SVG line charts with plotters: a metric against memory size, one line per policy.

use plotters::prelude::*;

use super::{figure_value, Figure};
use crate::experiments::Results;
use crate::{Error, Result};

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

type Series = (String, Vec<(f64, f64)>);

/// The points of each policy of a figure: (memory % of footprint, value).
pub fn figure_series(results: &Results, figure: &Figure) -> Vec<Series> {
    figure
        .policies
        .iter()
        .map(|policy| {
            let points = results
                .series(&figure.workload, policy)
                .into_iter()
                .filter_map(|row| {
                    figure_value(results, figure, row)
                        .map(|v| (row.point.memory_fraction * 100.0, v))
                })
                .filter(|(_, v)| v.is_finite())
                .collect();
            (policy.clone(), points)
        })
        .collect()
}

pub fn render(results: &Results, figure: &Figure) -> Result<String> {
    let series = figure_series(results, figure);
    let all: Vec<(f64, f64)> = series.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    let plot_err = |e: String| Error::config(format!("figure {}", figure.id), e);
    let (mut x0, mut x1) = all.iter().fold((f64::MAX, f64::MIN), |(a, b), (x, _)| {
        (a.min(*x), b.max(*x))
    });
    let (mut y0, mut y1) = all.iter().fold((f64::MAX, f64::MIN), |(a, b), (_, y)| {
        (a.min(*y), b.max(*y))
    });
    if all.is_empty() {
        (x0, x1, y0, y1) = (0.0, 100.0, 0.0, 1.0);
    }
    if x1 - x0 < 1e-9 {
        x1 = x0 + 1.0;
    }
    // Fit the data: the differences between policies are the point of these figures
    // (the axis labels show where the range starts).
    let pad = ((y1 - y0) * 0.08).max(y1.abs() * 0.01).max(1e-9);
    y1 += pad;
    y0 -= pad;
    // The legend goes to the corner farthest from where the lines end.
    let ends: Vec<f64> = series
        .iter()
        .filter_map(|(_, p)| p.last().map(|&(_, y)| y))
        .collect();
    let ends_high = ends.iter().sum::<f64>() / ends.len().max(1) as f64 > (y0 + y1) / 2.0;
    let legend_at = if ends_high {
        SeriesLabelPosition::LowerRight
    } else {
        SeriesLabelPosition::UpperRight
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 440)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot_err(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&figure.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| plot_err(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("memory (% of footprint)")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_desc(&figure.y_label)
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(|e| plot_err(e.to_string()))?;
        for (i, (policy, points)) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| plot_err(e.to_string()))?
                .label(policy.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| plot_err(e.to_string()))?;
        }
        chart
            .configure_series_labels()
            .position(legend_at)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(|e| plot_err(e.to_string()))?;
        root.present().map_err(|e| plot_err(e.to_string()))?;
    }
    Ok(svg)
}
