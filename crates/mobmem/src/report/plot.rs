//! SVG line charts with plotters: a metric against a numeric key, one line per series.

use plotters::prelude::*;

use super::{figure_lines, Figure, Table};
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

pub fn render(table: &Table, figure: &Figure) -> Result<String> {
    let lines = figure_lines(table, figure);
    let series: Vec<(String, Vec<(f64, f64)>)> = lines
        .iter()
        .map(|(name, points)| (name.clone(), points.iter().map(|p| (p.x, p.y)).collect()))
        .collect();
    let mut all: Vec<(f64, f64)> = series.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    // The spread between seeds is drawn too, so the axes take it in.
    all.extend(
        lines
            .iter()
            .flat_map(|(_, p)| p.iter().flat_map(|q| [(q.x, q.lo), (q.x, q.hi)])),
    );
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
    let legend_at = emptiest_corner(&series, (x0, x1), (y0, y1));
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
            .x_desc(&figure.x_label)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| super::short(*y))
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
            // The seeds' spread: a bar from the lowest to the highest seed's value.
            let spread = lines[i].1.iter().filter(|q| q.hi > q.lo);
            chart
                .draw_series(spread.map(|q| {
                    ErrorBar::new_vertical(q.x, q.lo, q.y, q.hi, color.stroke_width(1), 6)
                }))
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

/// The corner where a legend box covers the fewest points of the lines (and midpoints
/// of their segments), so that it hides as little data as possible.
fn emptiest_corner(
    series: &[(String, Vec<(f64, f64)>)],
    xs: (f64, f64),
    ys: (f64, f64),
) -> SeriesLabelPosition {
    let width = 0.28;
    let height = (0.06 * series.len() as f64 + 0.05).min(0.9);
    let mut samples = Vec::new();
    for (_, points) in series {
        samples.extend(points.iter().copied());
        samples.extend(
            points
                .windows(2)
                .map(|w| ((w[0].0 + w[1].0) / 2.0, (w[0].1 + w[1].1) / 2.0)),
        );
    }
    let unit = |(x, y): (f64, f64)| ((x - xs.0) / (xs.1 - xs.0), (y - ys.0) / (ys.1 - ys.0));
    let covered = |right: bool, top: bool| {
        samples
            .iter()
            .map(|&p| unit(p))
            .filter(|&(x, y)| {
                let in_x = if right { x >= 1.0 - width } else { x <= width };
                let in_y = if top { y >= 1.0 - height } else { y <= height };
                in_x && in_y
            })
            .count()
    };
    let corners = [
        (true, true, SeriesLabelPosition::UpperRight),
        (false, true, SeriesLabelPosition::UpperLeft),
        (true, false, SeriesLabelPosition::LowerRight),
        (false, false, SeriesLabelPosition::LowerLeft),
    ];
    let mut best = (usize::MAX, SeriesLabelPosition::UpperRight);
    for (right, top, position) in corners {
        let count = covered(right, top);
        if count < best.0 {
            best = (count, position);
        }
    }
    best.1
}
