//! `roce-sim sweep`: one scenario of [`crate::run`] over a range of one
//! parameter, with a Markdown table, a JSON file and charts (goodput and
//! latency percentiles against the parameter) as SVG and PNG.
//!
//! The PNG's text needs a TrueType font: DejaVu Sans, which scripts/setup
//! installs (`fonts-dejavu-core`); `ROCE_FONT` names another file.

use crate::run::{run, Report, Scenario};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

/// What a sweep varies.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Param {
    /// Frames dropped, percent.
    Drop,
    /// Frames duplicated, percent.
    Dup,
    /// Frames reordered, percent.
    Reorder,
    /// Frames corrupted, percent.
    Corrupt,
    /// Message size, bytes.
    Size,
    /// QPs.
    Qps,
    /// Link latency, cycles.
    Latency,
    /// Messages outstanding per QP.
    Depth,
}

impl Param {
    /// Its name and unit, for tables and axes.
    pub fn label(self) -> &'static str {
        match self {
            Param::Drop => "drop rate (%)",
            Param::Dup => "duplicate rate (%)",
            Param::Reorder => "reorder rate (%)",
            Param::Corrupt => "corrupt rate (%)",
            Param::Size => "message size (bytes)",
            Param::Qps => "QPs",
            Param::Latency => "link latency (cycles)",
            Param::Depth => "messages outstanding per QP",
        }
    }

    /// `base` with the parameter set to `v`.
    pub fn apply(self, base: &Scenario, v: f64) -> Result<Scenario, String> {
        let mut s = base.clone();
        let whole = |v: f64| -> Result<u64, String> {
            if v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64 {
                Ok(v as u64)
            } else {
                Err(format!("{}: {v} is not a whole number", self.label()))
            }
        };
        let ppm = |v: f64| -> Result<u32, String> {
            if (0.0..=50.0).contains(&v) {
                Ok((v * 10_000.0).round() as u32)
            } else {
                Err(format!("{}: {v} is not between 0 and 50", self.label()))
            }
        };
        match self {
            Param::Drop => s.link.drop_ppm = ppm(v)?,
            Param::Dup => s.link.dup_ppm = ppm(v)?,
            Param::Reorder => s.link.reorder_ppm = ppm(v)?,
            Param::Corrupt => s.link.corrupt_ppm = ppm(v)?,
            Param::Size => s.size = whole(v)? as u32,
            Param::Qps => s.qps = whole(v)? as u32,
            Param::Latency => s.link.latency = whole(v)?,
            Param::Depth => s.depth = whole(v)? as usize,
        }
        s.validate()?;
        Ok(s)
    }
}

/// One point of a sweep.
pub struct Point {
    /// The parameter's value.
    pub value: f64,
    /// The run's report.
    pub report: Report,
}

/// Runs `base` at every value (each point checked as `run` checks it; the
/// first failure ends the sweep naming the value).
pub fn sweep(
    base: &Scenario,
    param: Param,
    values: &[f64],
    mut each: impl FnMut(&Point),
) -> Result<Vec<Point>, String> {
    let scenarios = values
        .iter()
        .map(|&v| param.apply(base, v))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    for (sc, &value) in scenarios.iter().zip(values) {
        let (report, _) =
            run(sc, None).map_err(|e| format!("at {} = {value}: {e}", param.label()))?;
        let p = Point { value, report };
        each(&p);
        out.push(p);
    }
    Ok(out)
}

/// Retransmitted packets of both NICs.
fn retx(r: &Report) -> u64 {
    r.nics
        .iter()
        .flat_map(|n| n.2.iter())
        .filter(|c| c.0 == "req_retx")
        .map(|c| c.1)
        .sum()
}

/// The sweep as a Markdown table.
pub fn markdown(param: Param, pts: &[Point]) -> String {
    let mut s = String::new();
    if let Some(p) = pts.first() {
        let _ = writeln!(s, "Base scenario: `{}`\n", p.report.scenario);
    }
    let _ = writeln!(
        s,
        "| {} | goodput (B/cycle) | % of line | Gb/s @ clock | Mmsg/s | latency p50 | p99 | max (cycles) | retransmitted | dropped (link) |",
        param.label()
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
    for p in pts {
        let r = &p.report;
        let _ = writeln!(
            s,
            "| {} | {:.3} | {:.1} | {:.3} | {:.4} | {} | {} | {} | {} | {} |",
            p.value,
            r.bytes_per_cycle(),
            100.0 * r.bytes_per_cycle() / r.line_bytes_per_cycle,
            r.gbps(),
            r.mmsgs(),
            r.latency(50.0),
            r.latency(99.0),
            r.latency(100.0),
            retx(r),
            r.dropped()
        );
    }
    s
}

/// The sweep as JSON: the value and the run's report per point.
pub fn json(param: Param, pts: &[Point]) -> serde_json::Value {
    serde_json::json!({
        "param": param.label(),
        "points": pts.iter().map(|p| serde_json::json!({
            "value": p.value,
            "report": p.report.json(),
        })).collect::<Vec<_>>(),
    })
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    param: Param,
    pts: &[Point],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let title = pts.first().map_or(String::new(), |p| {
        format!(
            "{} swept, other settings: {}",
            param.label(),
            p.report.scenario
        )
    });
    let root = root.titled(&title, ("sans-serif", 13)).map_err(e)?;
    let (left, right) = root.split_horizontally(root.dim_in_pixel().0 / 2);
    let xs: Vec<f64> = pts.iter().map(|p| p.value).collect();
    let (x0, x1) = (
        xs.iter().cloned().fold(f64::INFINITY, f64::min),
        xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    );
    let (x0, x1) = if x0 == x1 {
        (x0 - 1.0, x1 + 1.0)
    } else {
        (x0, x1)
    };
    let line = pts.first().map_or(8.0, |p| p.report.line_bytes_per_cycle);
    // Goodput.
    let mut c = ChartBuilder::on(&left)
        .caption("goodput", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x0..x1, 0.0..line * 1.05)
        .map_err(e)?;
    c.configure_mesh()
        .x_desc(param.label())
        .y_desc("payload bytes per cycle")
        .draw()
        .map_err(e)?;
    let g: Vec<(f64, f64)> = pts
        .iter()
        .map(|p| (p.value, p.report.bytes_per_cycle()))
        .collect();
    c.draw_series(LineSeries::new(g.clone(), BLUE.stroke_width(2)))
        .map_err(e)?
        .label("goodput")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLUE));
    c.draw_series(g.iter().map(|&p| Circle::new(p, 3, BLUE.filled())))
        .map_err(e)?;
    c.draw_series(LineSeries::new(
        vec![(x0, line), (x1, line)],
        BLACK.mix(0.4),
    ))
    .map_err(e)?
    .label("line rate (W/8)")
    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK.mix(0.4)));
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(e)?;
    // Latency.
    let ymax = pts
        .iter()
        .map(|p| p.report.latency(99.0))
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1.1;
    let mut c = ChartBuilder::on(&right)
        .caption("latency, post to completion", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, 0.0..ymax)
        .map_err(e)?;
    c.configure_mesh()
        .x_desc(param.label())
        .y_desc("cycles")
        .draw()
        .map_err(e)?;
    for (pct, color) in [(50.0, GREEN), (90.0, MAGENTA), (99.0, RED)] {
        let v: Vec<(f64, f64)> = pts
            .iter()
            .map(|p| (p.value, p.report.latency(pct) as f64))
            .collect();
        c.draw_series(LineSeries::new(v.clone(), color.stroke_width(2)))
            .map_err(e)?
            .label(format!("p{pct}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        c.draw_series(v.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(e)?;
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)
}

/// The charts as an SVG file (text measured with [`font_path`]).
pub fn svg(param: Param, pts: &[Point], path: &Path) -> Result<(), String> {
    load_font()?;
    let root = SVGBackend::new(path, (1200, 480)).into_drawing_area();
    draw(&root, param, pts)
}

/// The font for PNG text: `ROCE_FONT`, else DejaVu Sans.
pub fn font_path() -> std::path::PathBuf {
    std::env::var_os("ROCE_FONT").map_or_else(
        || "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf".into(),
        Into::into,
    )
}

/// Registers [`font_path`] as plotters' sans-serif (once).
fn load_font() -> Result<(), String> {
    static LOADED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    LOADED.get_or_init(register).clone()
}

fn register() -> Result<(), String> {
    let f = font_path();
    let bytes = std::fs::read(&f).map_err(|e| {
        format!(
            "the charts need a TrueType font: {}: {e} (scripts/setup installs fonts-dejavu-core; ROCE_FONT names another)",
            f.display()
        )
    })?;
    let font: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, font)
        .map_err(|_| format!("{}: not a font ab_glyph can read", f.display()))
}

/// The charts as a PNG file (text drawn with [`font_path`]).
pub fn png(param: Param, pts: &[Point], path: &Path) -> Result<(), String> {
    load_font()?;
    let root = BitMapBackend::new(path, (1200, 480)).into_drawing_area();
    draw(&root, param, pts)
}
