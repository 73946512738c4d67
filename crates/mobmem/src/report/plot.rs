//! SVG figures with plotters: lines with markers over a continuous axis, bars over
//! categories. Each series has its own colour, marker and dash pattern, so that lines
//! lying on one another stay visible; the legend stands to the right of the plot, outside
//! the data; the seeds' spread is drawn as error bars (or a band along long series); each
//! axis writes all its numbers with the same decimals.
//!
//! The SVG is 960 pixels wide, shown at that size in the pages: its fonts (16 px for
//! ticks and legend, 18 px for axis titles) are their size on screen at 100 % zoom.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::numbers::AxisFormat;
use super::{Figure, FigureData, FigurePoint};
use crate::experiments::sensitivity::ClaimSensitivity;
use crate::{Error, Result};

/// Width of every figure, in pixels.
pub const WIDTH: u32 = 960;
const MIN_HEIGHT: u32 = 540;
const FONT: &str = "sans-serif";
const TICK_PX: u32 = 16;
const AXIS_PX: u32 = 18;
const TITLE_PX: u32 = 21;
const NOTE_PX: u32 = 14;
/// A font of `px` pixels on screen: plotters' SVG backend writes font-size as the size
/// asked divided by 1.24.
fn font(px: u32) -> (&'static str, f64) {
    (FONT, px as f64 * 1.24)
}

/// Draws a chart's mesh, configured by the caller, with this module's labels, axis titles
/// and grid lines (light grey major lines, no minor ones).
fn draw_mesh<DB: DrawingBackend>(
    mesh: &mut plotters::chart::MeshStyle<'_, '_, RangedCoordf64, RangedCoordf64, DB>,
    err: impl Fn(String) -> Error,
) -> Result<()> {
    mesh.label_style(font(TICK_PX))
        .axis_desc_style(font(AXIS_PX))
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(TRANSPARENT)
        .draw()
        .map_err(|e| err(e.to_string()))
}

/// Legend rows, in pixels.
const ROW_PX: i32 = 28;
/// Lines with more points than this draw the seeds' spread as a band, and markers on
/// some points only.
pub const BAND_ABOVE_POINTS: usize = 20;
const MAX_MARKERS: usize = 12;

/// Colours that stay apart for colour-blind readers (Okabe and Ito), then others.
const COLORS: [RGBColor; 10] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(140, 86, 75),
    RGBColor(128, 128, 128),
    RGBColor(150, 150, 20),
];
/// Dash patterns (dash, gap) in pixels; `None` is a solid line.
const DASHES: [Option<(i32, i32)>; 4] = [None, Some((12, 6)), Some((3, 4)), Some((20, 5))];
const MARKERS: usize = 9;

/// The style of series `i`: colour and marker differ between the first nine series, and
/// no two of the first ten share colour, dash and marker.
fn style(i: usize) -> (RGBColor, Option<(i32, i32)>, usize) {
    (
        COLORS[i % COLORS.len()],
        DASHES[i % DASHES.len()],
        i % MARKERS,
    )
}

fn plot_err(figure: &Figure) -> impl Fn(String) -> Error + '_ {
    move |e| Error::config(format!("figure {}", figure.id), e)
}

/// Width of `text` at `px` pixels, estimated (sans-serif averages about 0.55 em).
fn text_width(text: &str, px: u32) -> i32 {
    (text.chars().count() as f64 * px as f64 * 0.56).ceil() as i32
}

/// `text` cut to at most `width` pixels at `px`, ending with "…" when cut.
fn fit(text: &str, width: i32, px: u32) -> String {
    if text_width(text, px) <= width {
        return text.to_string();
    }
    let keep = ((width as f64 / (px as f64 * 0.56)) as usize).saturating_sub(1);
    let cut: String = text.chars().take(keep).collect();
    format!("{cut}…")
}

/// Words of `text` in lines of at most `width` pixels at `px`.
fn wrap(text: &str, width: i32, px: u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if text_width(&candidate, px) > width && !line.is_empty() {
            lines.push(std::mem::take(&mut line));
            line = word.to_string();
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A chart builder on `area` with this module's margins and `figure`'s title: one line as
/// plotters' caption where it fits the area, else wrapped in lines drawn at the area's
/// top, above a margin that holds them (a long title is never cut).
fn titled_builder<'a, 'b, DB: DrawingBackend>(
    figure: &Figure,
    area: &'a DrawingArea<DB, Shift>,
) -> Result<ChartBuilder<'a, 'b, DB>> {
    let (width, _) = area.dim_in_pixel();
    let lines = wrap(&figure.title, width as i32 - 28, TITLE_PX);
    let mut builder = ChartBuilder::on(area);
    if lines.len() <= 1 {
        builder.caption(&figure.title, font(TITLE_PX)).margin(14);
        return Ok(builder);
    }
    let line_px = TITLE_PX as i32 + 6;
    let style = TextStyle::from(font(TITLE_PX).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, line) in lines.iter().enumerate() {
        area.draw(&Text::new(
            line.as_str(),
            (width as i32 / 2, 10 + i as i32 * line_px),
            style.clone(),
        ))
        .map_err(|e| plot_err(figure)(e.to_string()))?;
    }
    builder
        .margin(14)
        .margin_top(14 + 4 + lines.len() as i32 * line_px);
    Ok(builder)
}

/// How a line plot's x axis is drawn beyond the figure's own words: what the
/// command-line plots (`mrc --out`) ask for; the reports draw every figure with the
/// default, linear and unmarked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineAxis {
    /// A logarithmic x axis (every x must be above 0): sizes over several orders of
    /// magnitude each get their share of the width.
    pub log: bool,
    /// Vertical lines at these x values, each labelled (a trace's footprint); one outside
    /// the data's range of x is left out.
    pub marks: Vec<(f64, String)>,
}

/// The SVG of `figure`, drawing `data`.
pub fn render(figure: &Figure, data: &FigureData) -> Result<String> {
    render_with(figure, data, &LineAxis::default())
}

/// [`render`] with a line plot's x axis drawn as `axis` says (bar charts ignore it).
pub fn render_with(figure: &Figure, data: &FigureData, axis: &LineAxis) -> Result<String> {
    let err = plot_err(figure);
    let labels: Vec<&str> = data.lines.iter().map(|(name, _)| name.as_str()).collect();
    let longest = labels
        .iter()
        .map(|l| text_width(l, TICK_PX))
        .max()
        .unwrap_or(0);
    let legend_width = (longest + 70).clamp(170, 320);
    let note = legend_note(data);
    let note_lines = wrap(&note, legend_width - 20, NOTE_PX);
    let legend_height =
        60 + ROW_PX * labels.len() as i32 + 12 + (NOTE_PX as i32 + 4) * note_lines.len() as i32;
    // Bars too many to stand side by side at a readable width lie down instead, one
    // row each, the figure as tall as they need.
    let bars = data
        .categories
        .as_ref()
        .map_or(0, |c| c.len() * data.lines.len().max(1));
    let lying = bars > 0 && (WIDTH as i32 - legend_width - 120) / (bars as i32) < MIN_BAR_PX;
    let mut height = MIN_HEIGHT.max(legend_height as u32 + 20);
    if lying {
        let categories = data.categories.as_ref().map_or(0, Vec::len);
        height = height.max(160 + (bars as i32 * LYING_BAR_PX + categories as i32 * 6) as u32);
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let (plot_area, legend_area) = root.split_horizontally(WIDTH as i32 - legend_width);
        match &data.categories {
            Some(categories) => {
                let axes = bar_axes(figure, data, categories)?;
                if lying {
                    draw_lying_bars(figure, data, &axes, &plot_area, &root)?
                } else {
                    draw_bars(figure, data, &axes, &plot_area, &root)?
                }
            }
            None if *axis == LineAxis::default() => {
                draw_lines(figure, data, &plot_area, &root, None)?
            }
            None => {
                let (logged, marks) = log_x(figure, data, axis)?;
                let shown = Shown {
                    log: axis.log,
                    marks,
                };
                draw_lines(figure, &logged, &plot_area, &root, Some(&shown))?
            }
        }
        draw_legend(data, &legend_area, legend_width, &note_lines, &err)?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// The words under the legend: what the marks and the error bars are.
fn legend_note(data: &FigureData) -> String {
    let longest = data.lines.iter().map(|(_, p)| p.len()).max().unwrap_or(0);
    // Bars always carry error bars; only long lines draw the spread as a band.
    let spread = if longest > BAND_ABOVE_POINTS && data.categories.is_none() {
        "Shaded band"
    } else {
        "Error bars"
    };
    let marks = if data.categories.is_some() {
        "Bars"
    } else {
        "Lines"
    };
    if data.seeds > 1 {
        format!(
            "{marks}: mean of {} seeds. {spread}: lowest to highest seed.",
            data.seeds
        )
    } else {
        format!("{marks}: a single run.")
    }
}

/// The largest magnitude a line plot's axis shows.
const MAX_AXIS_VALUE: f64 = 1e15;

/// Refuses axis ends the axis code cannot lay out ticks between (it does not end).
fn check_axes(figure: &Figure, ends: &[f64]) -> Result<()> {
    match ends.iter().find(|v| v.is_nan() || v.abs() > MAX_AXIS_VALUE) {
        None => Ok(()),
        Some(v) => Err(plot_err(figure)(format!(
            "an axis would reach {v:e}: values beyond ±{MAX_AXIS_VALUE:e} cannot be plotted"
        ))),
    }
}

/// (lowest, highest) of the values and spreads, or None without data.
fn y_extent(lines: &[(String, Vec<FigurePoint>)]) -> Option<(f64, f64)> {
    let values = lines
        .iter()
        .flat_map(|(_, p)| p.iter().flat_map(|q| [q.y, q.lo, q.hi]))
        .filter(|v| v.is_finite());
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    (lo <= hi).then_some((lo, hi))
}

fn axis_format(range: (f64, f64), labels: usize) -> AxisFormat {
    let ticks = RangedCoordf64::from(range.0..range.1).key_points(labels);
    AxisFormat::for_ticks(&ticks)
}

/// A [`LineAxis`] as drawn: whether x is log10 of the data's, and the marks at their
/// drawn x.
struct Shown {
    log: bool,
    marks: Vec<(f64, String)>,
}

/// `data` with x as the axis draws it (log10 of it on a log axis), and the marks' x
/// alike; a log axis refuses x at or below 0.
fn log_x(
    figure: &Figure,
    data: &FigureData,
    axis: &LineAxis,
) -> Result<(FigureData, Vec<(f64, String)>)> {
    let to_axis = |x: f64| -> Result<f64> {
        match axis.log {
            false => Ok(x),
            true if x > 0.0 => Ok(x.log10()),
            true => Err(plot_err(figure)(format!(
                "x = {x} on a log axis: every x must be above 0"
            ))),
        }
    };
    let mut drawn = data.clone();
    for (_, points) in &mut drawn.lines {
        for p in points.iter_mut() {
            p.x = to_axis(p.x)?;
        }
    }
    let marks = axis
        .marks
        .iter()
        .map(|(x, label)| Ok((to_axis(*x)?, label.clone())))
        .collect::<Result<Vec<_>>>()?;
    Ok((drawn, marks))
}

/// A log axis's tick label: the size 10^`v` stands for, to three significant digits,
/// with k, M or G from ten thousand up (`316`, `3162`, `31.6k`, `1M`).
fn log_label(v: f64) -> String {
    let x = 10f64.powf(v);
    let (scaled, suffix) = match x {
        x if x >= 1e9 => (x / 1e9, "G"),
        x if x >= 1e6 => (x / 1e6, "M"),
        x if x >= 1e4 => (x / 1e3, "k"),
        x => (x, ""),
    };
    let digits = match scaled {
        s if s >= 100.0 => 0,
        s if s >= 10.0 => 1,
        _ => 2,
    };
    let text = format!("{scaled:.digits$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text}{suffix}")
}

fn draw_lines<DB: DrawingBackend>(
    figure: &Figure,
    data: &FigureData,
    area: &DrawingArea<DB, Shift>,
    root: &DrawingArea<DB, Shift>,
    shown: Option<&Shown>,
) -> Result<()> {
    let err = plot_err(figure);
    let xs = data.lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.x));
    let (mut x0, mut x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let (mut y0, mut y1) = y_extent(&data.lines).unwrap_or((0.0, 1.0));
    if x0 > x1 {
        (x0, x1) = (0.0, 1.0);
    }
    // Only marks within the data's range are drawn: one far past the sizes drawn would
    // squeeze the curve into a corner of a linear axis.
    let marks: Vec<&(f64, String)> = shown
        .map_or(&[][..], |s| &s.marks[..])
        .iter()
        .filter(|(x, _)| (x0..=x1).contains(x))
        .collect();
    if x1 - x0 < 1e-12 {
        (x0, x1) = (x0 - 0.5, x1 + 0.5);
    }
    // Room for the first and last markers and error bars inside the frame.
    let x_pad = (x1 - x0) * 0.02;
    (x0, x1) = (x0 - x_pad, x1 + x_pad);
    // Fit the data: the differences between policies are the point of these figures
    // (the axis labels show where the range starts).
    let pad = ((y1 - y0) * 0.06).max(y1.abs() * 0.01).max(1e-9);
    (y0, y1) = (y0 - pad, y1 + pad);
    check_axes(figure, &[x0, x1, y0, y1])?;
    let (x_format, y_format) = (axis_format((x0, x1), 10), axis_format((y0, y1), 10));
    let mut chart = titled_builder(figure, area)?
        .x_label_area_size(62)
        .y_label_area_size(92)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| err(e.to_string()))?;
    let log = shown.is_some_and(|s| s.log);
    let x_desc = match log {
        true => format!("{} (log scale)", figure.x_label),
        false => format!("{}{}", figure.x_label, x_format.title_suffix()),
    };
    let y_desc = format!("{}{}", figure.y_label, y_format.title_suffix());
    let x_label = |x: &f64| match log {
        true => log_label(*x),
        false => x_format.label(*x),
    };
    draw_mesh(
        chart
            .configure_mesh()
            .x_labels(10)
            .y_labels(10)
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&x_label)
            .y_label_formatter(&|y| y_format.label(*y)),
        &err,
    )?;
    if data.lines.iter().all(|(_, p)| p.is_empty()) {
        let (w, h) = area.dim_in_pixel();
        let style =
            TextStyle::from(font(AXIS_PX).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new("no data", (w as i32 / 2, h as i32 / 2), style))
            .map_err(|e| err(e.to_string()))?;
        return Ok(());
    }
    let n = data.lines.len();
    // The seeds' spread first, under the lines.
    for (i, (_, points)) in data.lines.iter().enumerate() {
        let (color, _, _) = style(i);
        if points.len() > BAND_ABOVE_POINTS {
            if points.iter().any(|p| p.hi > p.lo) {
                let mut outline: Vec<(f64, f64)> = points.iter().map(|p| (p.x, p.hi)).collect();
                outline.extend(points.iter().rev().map(|p| (p.x, p.lo)));
                chart
                    .draw_series(std::iter::once(Polygon::new(outline, color.mix(0.18))))
                    .map_err(|e| err(e.to_string()))?;
            }
        } else {
            // Side by side where several series have a bar at the same x.
            let offset = (2 * i as i32 - (n as i32 - 1)) * 2;
            for p in points.iter().filter(|p| p.hi > p.lo) {
                let (px, top) = chart.backend_coord(&(p.x, p.hi));
                let (_, bottom) = chart.backend_coord(&(p.x, p.lo));
                error_bar(root, px + offset, top, bottom, color.stroke_width(2))
                    .map_err(|e| err(e.to_string()))?;
            }
        }
    }
    for (i, (_, points)) in data.lines.iter().enumerate() {
        let (color, dash, _) = style(i);
        let line = points.iter().map(|p| (p.x, p.y));
        let stroke = color.stroke_width(2);
        match dash {
            None => chart.draw_series(LineSeries::new(line, stroke)).map(|_| ()),
            Some((on, off)) => chart
                .draw_series(DashedLineSeries::new(line, on, off, stroke))
                .map(|_| ()),
        }
        .map_err(|e| err(e.to_string()))?;
    }
    // Markers last, so that those of lines lying on one another all show; along long
    // lines on a few points, shifted from one series to the next.
    for (i, (_, points)) in data.lines.iter().enumerate() {
        let (color, _, marker) = style(i);
        let step = points.len().div_ceil(MAX_MARKERS).max(1);
        let start = if step > 1 {
            (i * step / n.max(1)) % step
        } else {
            0
        };
        for p in points.iter().skip(start).step_by(step) {
            let at = chart.backend_coord(&(p.x, p.y));
            draw_marker(root, at, marker, color).map_err(|e| err(e.to_string()))?;
        }
    }
    for (x, label) in marks {
        let grey = RGBColor(90, 90, 90);
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                vec![(*x, y0), (*x, y1)],
                6,
                4,
                grey.stroke_width(1),
            )))
            .map_err(|e| err(e.to_string()))?;
        let (px, top) = chart.backend_coord(&(*x, y1));
        let style = TextStyle::from(font(NOTE_PX).into_font())
            .color(&grey)
            .pos(Pos::new(HPos::Right, VPos::Top));
        root.draw(&Text::new(label.clone(), (px - 4, top + 4), style))
            .map_err(|e| err(e.to_string()))?;
    }
    Ok(())
}

/// The axes of a bar chart, standing or lying.
struct BarAxes {
    /// How many categories (at least one).
    count: usize,
    /// The categories' names as the chart writes them, without the start they all share.
    names: Vec<String>,
    /// The category axis's title, which names that start.
    title: String,
    /// The value axis's ends ([`bar_extent`]).
    extent: (f64, f64),
}

fn bar_axes(figure: &Figure, data: &FigureData, categories: &[String]) -> Result<BarAxes> {
    let (prefix, names) = strip_common_prefix(categories);
    let title = match prefix {
        Some(prefix) => format!("{} (names after “{prefix}”)", figure.x_label),
        None => figure.x_label.clone(),
    };
    Ok(BarAxes {
        count: categories.len().max(1),
        names,
        title,
        extent: bar_extent(figure, data)?,
    })
}

/// A bar between `corners`, filled with `color` and edged in dark grey.
fn bar<C: Clone>(corners: [C; 2], color: RGBColor) -> [Rectangle<C>; 2] {
    [
        Rectangle::new(corners.clone(), color.filled()),
        Rectangle::new(corners, RGBColor(40, 40, 40).stroke_width(1)),
    ]
}

/// The value axis of a bar chart: from zero (bars start there) to past the highest bar or
/// error bar, padded on the side the bars grow to.
fn bar_extent(figure: &Figure, data: &FigureData) -> Result<(f64, f64)> {
    let (lo, hi) = y_extent(&data.lines).unwrap_or((0.0, 1.0));
    let (mut v0, mut v1) = (lo.min(0.0), hi.max(0.0));
    if v1 - v0 < 1e-12 {
        v1 = v0 + 1.0;
    }
    let pad = (v1 - v0) * 0.06;
    if v1 > 0.0 {
        v1 += pad;
    }
    if v0 < 0.0 {
        v0 -= pad;
    }
    check_axes(figure, &[v0, v1])?;
    Ok((v0, v1))
}

fn draw_bars<DB: DrawingBackend>(
    figure: &Figure,
    data: &FigureData,
    axes: &BarAxes,
    area: &DrawingArea<DB, Shift>,
    root: &DrawingArea<DB, Shift>,
) -> Result<()> {
    let err = plot_err(figure);
    let (y0, y1) = axes.extent;
    let y_format = axis_format((y0, y1), 10);
    // The categories' names under the axis: side by side where they fit, every other one
    // a row lower where they would run into each other, else turned upright.
    let (area_width, _) = area.dim_in_pixel();
    let slot = (area_width as i32 - 92 - 28) / axes.count as i32;
    let widest = axes
        .names
        .iter()
        .map(|c| text_width(c, TICK_PX))
        .max()
        .unwrap_or(0);
    let layout = if widest <= slot - 6 {
        Labels::Flat
    } else if widest <= 2 * slot - 10 {
        Labels::Staggered
    } else {
        Labels::Upright(widest.min(180))
    };
    let label_area = match layout {
        Labels::Flat => 62,
        Labels::Staggered => 84,
        Labels::Upright(width) => width + 52,
    };
    let mut chart = titled_builder(figure, area)?
        .x_label_area_size(label_area)
        .y_label_area_size(92)
        .build_cartesian_2d(-0.5..axes.count as f64 - 0.5, y0..y1)
        .map_err(|e| err(e.to_string()))?;
    draw_mesh(
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(10)
            .x_desc(&axes.title)
            .y_desc(format!("{}{}", figure.y_label, y_format.title_suffix()))
            .y_label_formatter(&|y| y_format.label(*y)),
        &err,
    )?;
    let (_, bottom) = chart.backend_coord(&(0.0, y0));
    for (c, label) in axes.names.iter().enumerate() {
        let (px, _) = chart.backend_coord(&(c as f64, y0));
        let text = TextStyle::from(font(TICK_PX).into_font());
        let (text, at, label) = match layout {
            Labels::Flat => (
                text.pos(Pos::new(HPos::Center, VPos::Top)),
                (px, bottom + 8),
                fit(label, slot - 6, TICK_PX),
            ),
            Labels::Staggered => (
                text.pos(Pos::new(HPos::Center, VPos::Top)),
                (px, bottom + 8 + if c % 2 == 1 { 22 } else { 0 }),
                fit(label, 2 * slot - 10, TICK_PX),
            ),
            Labels::Upright(width) => (
                text.transform(FontTransform::Rotate270)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
                (px, bottom + 8),
                fit(label, width, TICK_PX),
            ),
        };
        root.draw(&Text::new(label, at, text))
            .map_err(|e| err(e.to_string()))?;
    }
    let series = data.lines.len().max(1);
    let group = 0.8;
    let width = group / series as f64;
    for (i, (_, points)) in data.lines.iter().enumerate() {
        let (color, _, _) = style(i);
        for p in points {
            let left = p.x - group / 2.0 + i as f64 * width;
            chart
                .draw_series(bar([(left, 0.0), (left + width, p.y)], color))
                .map_err(|e| err(e.to_string()))?;
            if p.hi > p.lo {
                let (px, top) = chart.backend_coord(&(left + width / 2.0, p.hi));
                let (_, low) = chart.backend_coord(&(left + width / 2.0, p.lo));
                error_bar(root, px, top, low, BLACK.stroke_width(2))
                    .map_err(|e| err(e.to_string()))?;
            }
        }
    }
    Ok(())
}

/// Narrowest a standing bar may be, in pixels; below, the bars lie down.
const MIN_BAR_PX: i32 = 8;
/// Height of a lying bar, in pixels.
const LYING_BAR_PX: i32 = 10;

/// Bars lying down: a row of bars per category, the first at the top, its name to the
/// left; the values along the bottom axis.
fn draw_lying_bars<DB: DrawingBackend>(
    figure: &Figure,
    data: &FigureData,
    axes: &BarAxes,
    area: &DrawingArea<DB, Shift>,
    root: &DrawingArea<DB, Shift>,
) -> Result<()> {
    let err = plot_err(figure);
    let (x0, x1) = axes.extent;
    let rows = Rows {
        names: &axes.names,
        max_names_px: 200,
        gap_px: 48,
        x_labels: 8,
        x_title: &figure.y_label,
        y_title: Some(&axes.title),
    };
    let mut chart = row_chart(figure, area, root, &rows, (x0, x1))?;
    // Category c's row is centred on count - 1 - c: the first at the top.
    let row = |c: usize| (axes.count - 1 - c) as f64;
    let series = data.lines.len().max(1);
    let group = 0.8;
    let height = group / series as f64;
    for (i, (_, points)) in data.lines.iter().enumerate() {
        let (color, _, _) = style(i);
        for p in points {
            // The first series on top within its row.
            let top = row(p.x.round().max(0.0) as usize) + group / 2.0 - i as f64 * height;
            let bottom = top - height;
            chart
                .draw_series(bar([(0.0, bottom), (p.y, top)], color))
                .map_err(|e| err(e.to_string()))?;
            if p.hi > p.lo {
                let middle = (top + bottom) / 2.0;
                let (left, py) = chart.backend_coord(&(p.lo, middle));
                let (right, _) = chart.backend_coord(&(p.hi, middle));
                let style = BLACK.stroke_width(2);
                let whisker = |x: i32| PathElement::new(vec![(x, py - 3), (x, py + 3)], style);
                for element in [
                    PathElement::new(vec![(left, py), (right, py)], style),
                    whisker(left),
                    whisker(right),
                ] {
                    root.draw(&element).map_err(|e| err(e.to_string()))?;
                }
            }
        }
    }
    Ok(())
}

/// The rows of a chart of horizontal bars: their names, and its axes.
struct Rows<'a> {
    names: &'a [String],
    /// The names' column is as wide as the widest name, 40 px to this.
    max_names_px: i32,
    /// Room between the names and the axis, px.
    gap_px: i32,
    x_labels: usize,
    x_title: &'a str,
    y_title: Option<&'a str>,
}

/// A chart of one row per name over x in `x0..x1`, row c (the first at the top) centred
/// on y = rows - 1 - c, its mesh drawn and each name right-aligned left of the y axis.
fn row_chart<'a, DB: DrawingBackend>(
    figure: &Figure,
    area: &'a DrawingArea<DB, Shift>,
    root: &DrawingArea<DB, Shift>,
    rows: &Rows<'_>,
    (x0, x1): (f64, f64),
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let err = plot_err(figure);
    let count = rows.names.len().max(1);
    let x_format = axis_format((x0, x1), rows.x_labels);
    let widest = (rows.names.iter())
        .map(|c| text_width(c, TICK_PX))
        .max()
        .unwrap_or(0);
    let names_px = widest.clamp(40, rows.max_names_px);
    let mut chart = titled_builder(figure, area)?
        .x_label_area_size(62)
        .y_label_area_size(names_px + rows.gap_px)
        .build_cartesian_2d(x0..x1, -0.5..count as f64 - 0.5)
        .map_err(|e| err(e.to_string()))?;
    let x_label = |x: &f64| x_format.label(*x);
    let mut mesh = chart.configure_mesh();
    mesh.disable_y_mesh()
        .y_labels(0)
        .x_labels(rows.x_labels)
        .x_desc(format!("{}{}", rows.x_title, x_format.title_suffix()))
        .x_label_formatter(&x_label);
    if let Some(title) = rows.y_title {
        mesh.y_desc(title);
    }
    draw_mesh(&mut mesh, &err)?;
    for (c, name) in rows.names.iter().enumerate() {
        let (left, py) = chart.backend_coord(&(x0, (count - 1 - c) as f64));
        let text =
            TextStyle::from(font(TICK_PX).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(
            fit(name, names_px, TICK_PX),
            (left - 8, py),
            text,
        ))
        .map_err(|e| err(e.to_string()))?;
    }
    Ok(chart)
}

/// A tornado plot of one claim's value at each end of each assumed constant: per
/// constant a row, a bar from the value as shipped (the upright line) to the value at
/// the low end and one to the value at the high end; an end that changes the verdict is
/// outlined in red and named so in the legend's note.
pub fn render_tornado(claim: &ClaimSensitivity) -> Result<String> {
    let figure = Figure {
        id: format!("sensitivity-{}", claim.id),
        title: format!("{}: value at each end of each assumed constant", claim.id),
        x: String::new(),
        x_label: String::new(),
        x_scale: 1.0,
        series: String::new(),
        lines: Vec::new(),
        filter: Vec::new(),
        metric: String::new(),
        y_label: claim.unit.clone(),
        normalize_to: None,
    };
    let err = plot_err(&figure);
    // Rows: constants in the file's order, each with its low and high end.
    // Per constant its key, and at each end the claim's value and whether the verdict
    // changes there.
    type Ends = [Option<(f64, bool)>; 2];
    let mut rows: Vec<(String, Ends)> = Vec::new();
    for pair in claim.ends.chunks(2) {
        let at = |i: usize| {
            let end = pair.get(i)?;
            let o = end.outcome.as_ref()?;
            o.mean.is_finite().then(|| (o.mean, end.flips(&claim.base)))
        };
        rows.push((pair[0].key.clone(), [at(0), at(1)]));
    }
    let base = claim.base.mean;
    let values = (rows.iter())
        .flat_map(|(_, ends)| ends.iter().flatten().map(|(v, _)| *v))
        .chain(base.is_finite().then_some(base));
    let (mut x0, mut x1) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    let pad = ((x1 - x0) * 0.08)
        .max(x1.abs().max(x0.abs()) * 1e-3)
        .max(1e-12);
    let (x0, x1) = (x0 - pad, x1 + pad);
    check_axes(&figure, &[x0, x1])?;
    let count = rows.len().max(1);
    let height = MIN_HEIGHT.max(140 + 44 * count as u32);
    let legend_width = 230;
    let note = "Blue: the constant's low end; orange: its high end. A red outline: that end \
changes the verdict.";
    let note_lines = wrap(note, legend_width - 20, NOTE_PX);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let (area, legend) = root.split_horizontally(WIDTH as i32 - legend_width);
        let names: Vec<String> = rows.iter().map(|(k, _)| k.clone()).collect();
        let layout = Rows {
            names: &names,
            max_names_px: 260,
            gap_px: 20,
            x_labels: 6,
            x_title: &claim.unit,
            y_title: None,
        };
        let mut chart = row_chart(&figure, &area, &root, &layout, (x0, x1))?;
        let row = |c: usize| (count - 1 - c) as f64;
        for (c, (_, ends)) in rows.iter().enumerate() {
            for (i, end) in ends.iter().enumerate() {
                let Some((value, flips)) = end else { continue };
                let (color, _, _) = style(i);
                // Low end above the row's middle, high end below it.
                let top = row(c) + 0.35 - i as f64 * 0.35;
                let bottom = top - 0.33;
                let from = if base.is_finite() { base } else { x0 };
                let corners = [(from, bottom), (*value, top)];
                let edge = if *flips {
                    RGBColor(200, 0, 0).stroke_width(3)
                } else {
                    RGBColor(40, 40, 40).stroke_width(1)
                };
                chart
                    .draw_series([
                        Rectangle::new(corners, color.filled()),
                        Rectangle::new(corners, edge),
                    ])
                    .map_err(|e| err(e.to_string()))?;
            }
        }
        if base.is_finite() {
            chart
                .draw_series([PathElement::new(
                    vec![(base, -0.5), (base, count as f64 - 0.5)],
                    BLACK.stroke_width(2),
                )])
                .map_err(|e| err(e.to_string()))?;
        }
        let style_note = TextStyle::from(font(NOTE_PX).into_font());
        for (i, line) in note_lines.iter().enumerate() {
            legend
                .draw(&Text::new(
                    line.as_str(),
                    (10, 60 + i as i32 * (NOTE_PX as i32 + 4)),
                    style_note.clone(),
                ))
                .map_err(|e| err(e.to_string()))?;
        }
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// How the categories' names are laid under a bar chart.
#[derive(Clone, Copy)]
enum Labels {
    Flat,
    Staggered,
    /// Turned upright, at most this many pixels long.
    Upright(i32),
}

/// The longest start that every label shares, up to and with a separator ('.', '-', '_',
/// '/', ' '), and the labels without it; `None` and the labels as they are when there is
/// no such start (or a label would be left empty, or there is a single label).
fn strip_common_prefix(labels: &[String]) -> (Option<String>, Vec<String>) {
    let unchanged = (None, labels.to_vec());
    let Some(first) = labels.first() else {
        return unchanged;
    };
    if labels.len() < 2 {
        return unchanged;
    }
    let mut common = first.len();
    for l in &labels[1..] {
        common = common.min(
            first
                .char_indices()
                .zip(l.chars())
                .take_while(|((_, a), b)| a == b)
                .map(|((i, a), _)| i + a.len_utf8())
                .last()
                .unwrap_or(0),
        );
    }
    let cut = first[..common]
        .rfind(['.', '-', '_', '/', ' '])
        .map_or(0, |i| i + 1);
    if cut == 0 || labels.iter().any(|l| l.len() <= cut) {
        return unchanged;
    }
    (
        Some(first[..cut].to_string()),
        labels.iter().map(|l| l[cut..].to_string()).collect(),
    )
}

/// A vertical error bar with whiskers, in pixels.
fn error_bar<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    x: i32,
    top: i32,
    bottom: i32,
    style: ShapeStyle,
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.draw(&PathElement::new(vec![(x, top), (x, bottom)], style))
        .map_err(e)?;
    for y in [top, bottom] {
        root.draw(&PathElement::new(vec![(x - 4, y), (x + 4, y)], style))
            .map_err(e)?;
    }
    Ok(())
}

/// Marker `kind` centred on `at`, in pixels: filled and hollow circles, squares,
/// triangles, a diamond, a cross and a plus.
fn draw_marker<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    kind: usize,
    color: RGBColor,
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let stroke = color.stroke_width(2);
    let outline = |points: Vec<(i32, i32)>| {
        let mut closed = points.clone();
        closed.push(points[0]);
        PathElement::new(closed, stroke)
    };
    match kind {
        0 => root
            .draw(&Circle::new((x, y), 5, color.filled()))
            .map_err(e),
        1 => root
            .draw(&outline(vec![
                (x - 5, y - 5),
                (x + 5, y - 5),
                (x + 5, y + 5),
                (x - 5, y + 5),
            ]))
            .map_err(e),
        2 => root
            .draw(&Polygon::new(
                vec![(x, y - 7), (x + 6, y + 4), (x - 6, y + 4)],
                color.filled(),
            ))
            .map_err(e),
        3 => root
            .draw(&outline(vec![
                (x, y - 7),
                (x + 7, y),
                (x, y + 7),
                (x - 7, y),
            ]))
            .map_err(e),
        4 => {
            root.draw(&PathElement::new(
                vec![(x - 5, y - 5), (x + 5, y + 5)],
                stroke,
            ))
            .map_err(e)?;
            root.draw(&PathElement::new(
                vec![(x - 5, y + 5), (x + 5, y - 5)],
                stroke,
            ))
            .map_err(e)
        }
        5 => root
            .draw(&Rectangle::new(
                [(x - 4, y - 4), (x + 4, y + 4)],
                color.filled(),
            ))
            .map_err(e),
        6 => root.draw(&Circle::new((x, y), 6, stroke)).map_err(e),
        7 => root
            .draw(&Polygon::new(
                vec![(x, y + 7), (x + 6, y - 4), (x - 6, y - 4)],
                color.filled(),
            ))
            .map_err(e),
        _ => {
            root.draw(&PathElement::new(vec![(x - 6, y), (x + 6, y)], stroke))
                .map_err(e)?;
            root.draw(&PathElement::new(vec![(x, y - 6), (x, y + 6)], stroke))
                .map_err(e)
        }
    }
}

fn draw_legend<DB: DrawingBackend>(
    data: &FigureData,
    area: &DrawingArea<DB, Shift>,
    width: i32,
    note_lines: &[String],
    err: &impl Fn(String) -> Error,
) -> Result<()> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| err(e.to_string());
    let left = 8;
    let text_left = left + 52;
    let mut y = 60;
    let text_style =
        |px: u32| TextStyle::from(font(px).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (name, points)) in data.lines.iter().enumerate() {
        let (color, dash, marker) = style(i);
        if data.categories.is_some() {
            for swatch in bar([(left + 12, y - 8), (left + 32, y + 8)], color) {
                area.draw(&swatch).map_err(e)?;
            }
        } else {
            let sample = vec![(left, y), (left + 44, y)];
            match dash {
                None => area
                    .draw(&PathElement::new(sample, color.stroke_width(2)))
                    .map_err(e)?,
                Some((on, off)) => area
                    .draw(&DashedPathElement::new(
                        sample,
                        on,
                        off,
                        color.stroke_width(2),
                    ))
                    .map_err(e)?,
            }
            draw_marker(area, (left + 22, y), marker, color).map_err(err)?;
        }
        let mut label = fit(name, width - text_left - 6, TICK_PX);
        if points.is_empty() {
            label = fit(&format!("{name} (no data)"), width - text_left - 6, TICK_PX);
        }
        area.draw(&Text::new(label, (text_left, y), text_style(TICK_PX)))
            .map_err(e)?;
        y += ROW_PX;
    }
    y += 12;
    for line in note_lines {
        area.draw(&Text::new(
            line.clone(),
            (left, y),
            text_style(NOTE_PX).color(&RGBColor(70, 70, 70)),
        ))
        .map_err(e)?;
        y += NOTE_PX as i32 + 4;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A figure of one series `s` of metric `m` over `x`, titled `title`, for the tests.
    fn test_figure(title: &str, x_label: &str) -> Figure {
        Figure {
            id: "t".into(),
            title: title.into(),
            x: "x".into(),
            x_label: x_label.into(),
            x_scale: 1.0,
            series: "s".into(),
            lines: vec!["s".into()],
            filter: vec![],
            metric: "m".into(),
            y_label: "y".into(),
            normalize_to: None,
        }
    }

    #[test]
    fn text_is_fitted_and_wrapped() {
        assert_eq!(fit("short", 200, 16), "short");
        let cut = fit("a very long series name indeed", 100, 16);
        assert!(cut.ends_with('…') && text_width(&cut, 16) <= 110, "{cut}");
        let lines = wrap(
            "Lines: mean of 5 seeds. error bars: lowest to highest seed.",
            150,
            14,
        );
        assert!(lines.len() > 1 && lines.iter().all(|l| text_width(l, 14) <= 150));
    }

    #[test]
    fn axes_too_wide_to_draw_are_an_error_not_an_endless_loop() {
        let figure = Figure {
            id: "wide".into(),
            lines: vec![],
            ..test_figure("wide", "x")
        };
        let point = |x: f64, y: f64| FigurePoint { x, y, lo: y, hi: y };
        for (a, b) in [
            (point(0.5, 1.0), point(1e308, 2.0)),
            (point(0.5, 1.0), point(1.0, 1e300)),
        ] {
            let data = FigureData {
                categories: None,
                lines: vec![("s".into(), vec![a, b])],
                seeds: 1,
            };
            let e = render(&figure, &data).unwrap_err().to_string();
            assert!(
                e.contains("figure wide") && e.contains("cannot be plotted"),
                "{e}"
            );
        }
        let data = FigureData {
            categories: Some(vec!["a".into(), "b".into()]),
            lines: vec![("s".into(), vec![point(0.0, 1.0), point(1.0, -1e200)])],
            seeds: 1,
        };
        assert!(render(&figure, &data).is_err());
    }

    /// A log axis draws sizes by their log10 and labels ticks with the sizes; a mark within
    /// the sizes drawn is a labelled line, one beyond them is left out; an x at or below 0
    /// on a log axis is an error naming it. Without options the SVG is the plain render's.
    #[test]
    fn log_axes_and_marks() {
        let figure = test_figure("curve", "size");
        let point = |x: f64, y: f64| FigurePoint { x, y, lo: y, hi: y };
        let data = |xs: &[f64]| FigureData {
            categories: None,
            lines: vec![("s".into(), xs.iter().map(|&x| point(x, 1.0 / x)).collect())],
            seeds: 1,
        };
        let sizes = data(&[10.0, 100.0, 1000.0, 10000.0]);
        let plain = render(&figure, &sizes).unwrap();
        assert_eq!(
            render_with(&figure, &sizes, &LineAxis::default()).unwrap(),
            plain
        );
        let axis = LineAxis {
            log: true,
            marks: vec![
                (5000.0, "footprint: 5000 pages".into()),
                (50000.0, "past the sizes".into()),
            ],
        };
        let logged = render_with(&figure, &sizes, &axis).unwrap();
        assert!(logged.contains("size (log scale)"), "{logged}");
        assert!(logged.contains("footprint: 5000 pages"), "{logged}");
        assert!(!logged.contains("past the sizes"), "{logged}");
        // Ticks name sizes, not their logarithms: 1000 is a tick of 10..10000 in log10.
        assert!(logged.contains("\n1000\n"), "{logged}");
        for (v, label) in [
            (2.0, "100"),
            (2.5, "316"),
            (4.5, "31.6k"),
            (6.0, "1M"),
            (6.5, "3.16M"),
        ] {
            assert_eq!(log_label(v), label);
        }
        let e = render_with(&figure, &data(&[0.0, 10.0]), &axis).unwrap_err();
        assert!(e.to_string().contains("x = 0 on a log axis"), "{e}");
    }

    /// A title wider than the plot is wrapped, never cut: every word is in the SVG, on
    /// more than one line, and the plot starts below it; a short title is one line.
    #[test]
    fn a_long_title_is_wrapped_whole() {
        let title = "memory saved: kernel default, the scan-time advisor, smart_scan, the 6.11 \
                     merge order, and some more words to be sure";
        let figure = |title: &str| test_figure(title, "x");
        let point = |x: f64, y: f64| FigurePoint { x, y, lo: y, hi: y };
        for categories in [None, Some(vec!["a".to_string(), "b".to_string()])] {
            let data = FigureData {
                categories,
                lines: vec![("s".into(), vec![point(0.0, 1.0), point(1.0, 2.0)])],
                seeds: 1,
            };
            let svg = render(&figure(title), &data).unwrap();
            assert!(!svg.contains('…'), "nothing is cut");
            let title_texts: Vec<&str> = (svg.split("<text").skip(1))
                .filter(|t| {
                    title.split_whitespace().take(2).all(|w| t.contains(w)) || t.contains("sure")
                })
                .collect();
            assert_eq!(title_texts.len(), 2, "two lines: {title_texts:?}");
            for word in title.split_whitespace() {
                assert!(svg.contains(word), "{word}");
            }
            let short = render(&figure("short"), &data).unwrap();
            assert_eq!(short.matches("short").count(), 1, "{short}");
        }
    }

    /// Bars too many to stand at a readable width lie down, the figure as tall as they
    /// need, every category named once; a few bars still stand in the usual frame.
    #[test]
    fn many_bars_lie_down_and_few_stand() {
        let figure = Figure {
            id: "bars".into(),
            x: "app".into(),
            lines: vec![],
            y_label: "ms".into(),
            ..test_figure("per app", "app")
        };
        let data = |apps: usize| {
            let categories: Vec<String> = (0..apps).map(|a| format!("name{a:02}x")).collect();
            let lines = (0..3)
                .map(|s| {
                    let points = (0..apps)
                        .map(|a| FigurePoint {
                            x: a as f64,
                            y: 100.0 + (a * 3 + s) as f64,
                            lo: 90.0,
                            hi: 120.0,
                        })
                        .collect();
                    (format!("series {s}"), points)
                })
                .collect();
            FigureData {
                categories: Some(categories),
                lines,
                seeds: 2,
            }
        };
        let height = |svg: &str| -> u32 {
            let at = svg.find("height=\"").unwrap() + 8;
            svg[at..].split('"').next().unwrap().parse().unwrap()
        };
        let many = render(&figure, &data(40)).unwrap();
        assert!(
            height(&many) >= 40 * 3 * LYING_BAR_PX as u32,
            "{}",
            height(&many)
        );
        for a in 0..40 {
            assert_eq!(many.matches(&format!("name{a:02}x")).count(), 1, "{a}");
        }
        let few = render(&figure, &data(4)).unwrap();
        assert_eq!(height(&few), MIN_HEIGHT);
        // Bars have error bars, however many there are, on the figure and in its caption.
        for (svg, apps) in [(&many, 40), (&few, 4)] {
            assert!(svg.contains("Error bars") && !svg.contains("Shaded band"));
            assert!(
                data(apps).caption().contains("the error bars span"),
                "{apps}"
            );
        }
    }

    #[test]
    fn a_shared_start_of_the_categories_is_said_once() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (prefix, rest) =
            strip_common_prefix(&names(&["com.example.app01", "com.example.app02"]));
        assert_eq!(prefix.as_deref(), Some("com.example."));
        assert_eq!(rest, names(&["app01", "app02"]));
        assert_eq!(strip_common_prefix(&names(&["browser", "camera"])).0, None);
        let (prefix, rest) = strip_common_prefix(&names(&["a.b", "a.b.c"]));
        assert_eq!(
            (prefix.as_deref(), rest),
            (Some("a."), names(&["b", "b.c"]))
        );
        assert_eq!(strip_common_prefix(&names(&["x.1"])).0, None);
    }
}
