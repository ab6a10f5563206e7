//! Charts of what passlab measured, drawn with plotters as SVG and PNG.
//!
//! A [`Chart`] holds the data of one figure and its title; it is built from
//! a result ([`Chart::timing`], [`Chart::ir_size`], [`Chart::runtime`],
//! [`Chart::compile_vs_runtime`]) and rendered with [`Chart::svg`] or
//! [`Chart::png`]. Titles say what was measured, axes carry units, and time
//! axes pick ns, µs, ms or s by the largest value.
//!
//! Text is drawn with DejaVu Sans, built into the binary (the `dejavu` crate)
//! and rasterised by plotters' `ab_glyph` backend, so a PNG is legible on a
//! machine with no fonts installed; an SVG names `sans-serif` and leaves
//! the glyphs to its viewer; no system fonts are read. PNGs are encoded
//! with the `png` crate. Point labels are placed so that they do not
//! overlap.
//!
//! This module knows nothing of where a chart is shown: front ends put the
//! bytes in a notebook or a file.
//!
//! ```
//! use passlab::chart::Chart;
//! let c = Chart::bars("two numbers", "value (s)", vec![("a".into(), 1.0), ("b".into(), 2.0)]);
//! assert!(c.svg().unwrap().starts_with("<svg"));
//! assert!(c.png().unwrap().starts_with(b"\x89PNG"));
//! ```

#![forbid(unsafe_code)]

use crate::instrument::{SizePoint, TimingReport};
use crate::jit::Comparison;
use crate::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::sync::Once;

/// One figure: a title and its data (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub title: String,
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// Horizontal bars, first on top: (label, seconds).
    TimeBars {
        axis: String,
        bars: Vec<(String, f64)>,
    },
    /// Plain horizontal bars (label, value), first on top.
    Bars {
        axis: String,
        bars: Vec<(String, f64)>,
    },
    /// Horizontal bars made of parts (label, one value per part), first on
    /// top; the parts' names and colours.
    Stacked {
        axis: String,
        bars: Vec<(String, Vec<f64>)>,
        parts: Vec<(String, (u8, u8, u8))>,
    },
    /// A step line of a count over passes run, with the passes that changed it.
    Steps {
        passes: usize,
        /// (x, y) corners of the step line, reduced for long series.
        line: Vec<(f64, f64)>,
        /// (x, count after, change) for each pass that changed the count.
        marks: Vec<(f64, f64, i64)>,
        /// The largest changes, labelled: (x, count after, label).
        labels: Vec<(f64, f64, String)>,
    },
    /// Vertical bars with error bars: (label, median s, stdev s, note).
    Runtime {
        bars: Vec<(String, f64, f64, String)>,
    },
    /// Labelled points: (label, compile s, runtime s).
    Scatter { points: Vec<(String, f64, f64)> },
    /// Step lines, one per series (label, (x, y) points), and labelled
    /// horizontal reference lines.
    Lines {
        x_axis: String,
        y_axis: String,
        lines: Vec<(String, Vec<(f64, f64)>)>,
        refs: Vec<(String, f64)>,
    },
}

/// How many of the largest IR-size changes [`Chart::ir_size`] labels.
const LABELLED_CHANGES: usize = 6;
/// Above this many corners a step line is reduced to per-bucket extremes.
const MAX_CORNERS: usize = 4000;

impl Chart {
    /// Horizontal bars of plain values, first on top (`axis` names the
    /// values and their unit).
    pub fn bars(title: &str, axis: &str, bars: Vec<(String, f64)>) -> Chart {
        Chart {
            title: title.to_string(),
            kind: Kind::Bars {
                axis: axis.to_string(),
                bars,
            },
        }
    }

    /// `:plot remarks`: the remarks `r` recorded in run `run` (default the
    /// last) by pass, as [`Chart::remarks`] draws them, titled with the
    /// run and its total. The message says why not (no run recorded, or no
    /// such run).
    pub fn remarks_of_run(
        r: &crate::instrument::Remarks,
        run: Option<usize>,
        top: usize,
    ) -> std::result::Result<Chart, String> {
        let runs = r.runs();
        let n = run.unwrap_or(runs.len());
        let Some(label) = n.checked_sub(1).and_then(|i| runs.get(i)) else {
            return Err(if runs.is_empty() {
                "no remarks recorded yet: the remarks instrument records them during :run"
                    .to_string()
            } else {
                format!(
                    "run={n}: {} runs recorded, numbered 1 to {}",
                    runs.len(),
                    runs.len()
                )
            });
        };
        let counts = crate::instrument::remark_counts(
            &r.of_run(n),
            &crate::instrument::RemarkFilter::default(),
        );
        let total: usize = counts.iter().map(|c| c.1.iter().sum::<usize>()).sum();
        Ok(Chart::remarks(
            &format!("remarks by pass, run {n} ({}): {total}", label.label),
            &counts,
            top,
        ))
    }

    /// Optimization remarks by the pass that made them, one bar per pass
    /// (the `top` most remarked, then the others as one), each split by
    /// kind in the colours the annotated source uses.
    pub fn remarks(title: &str, counts: &[(String, [usize; 4])], top: usize) -> Chart {
        let top = top.max(1);
        let mut bars: Vec<(String, Vec<f64>)> = counts
            .iter()
            .take(top)
            .map(|(p, c)| (p.clone(), c.iter().map(|&n| n as f64).collect()))
            .collect();
        if counts.len() > top {
            let mut rest = vec![0.0; 4];
            for (_, c) in &counts[top..] {
                for (r, n) in rest.iter_mut().zip(c) {
                    *r += *n as f64;
                }
            }
            bars.push((format!("other ({} passes)", counts.len() - top), rest));
        }
        let parts = crate::instrument::RemarkKind::NAMES
            .iter()
            .zip([(29, 122, 58), (192, 57, 43), (90, 107, 128), (142, 68, 173)])
            .map(|(n, c)| (n.to_string(), c))
            .collect();
        Chart {
            title: title.to_string(),
            kind: Kind::Stacked {
                axis: "remarks (green: passed, red: missed, grey: analysis, purple: failure)"
                    .into(),
                bars,
                parts,
            },
        }
    }

    /// Pass timing: the `top` passes by self time (summed per name, as
    /// LLVM's `-time-passes`), then one bar for all the others.
    pub fn timing(report: &TimingReport, top: usize) -> Chart {
        let rows = report.flat();
        let total = report.total().as_secs_f64();
        let top = top.max(1);
        let mut bars: Vec<(String, f64)> = rows
            .iter()
            .take(top)
            .map(|r| {
                (
                    format!("{} ×{}", r.name, r.count),
                    r.self_time.as_secs_f64(),
                )
            })
            .collect();
        if rows.len() > top {
            let rest = &rows[top..];
            bars.push((
                format!("other ({} passes)", rest.len()),
                rest.iter().map(|r| r.self_time.as_secs_f64()).sum(),
            ));
        }
        Chart {
            title: format!(
                "pass timing: self time of the top {} of {} passes ({} in all)",
                top.min(rows.len()),
                rows.len(),
                seconds(total)
            ),
            kind: Kind::TimeBars {
                axis: "self time".into(),
                bars,
            },
        }
    }

    /// The module's instruction count across a pipeline, one step per pass
    /// run, with a mark where a pass changed it and the largest changes
    /// labelled with the pass and its target.
    pub fn ir_size(series: &[SizePoint]) -> Chart {
        let start = series
            .first()
            .map_or(0, |p| (p.instructions as i64 - p.delta).max(0) as u64);
        let end = series.last().map_or(start, |p| p.instructions);
        let mut corners = vec![(0.0, start as f64)];
        let mut marks = Vec::new();
        let mut previous = start;
        for (i, p) in series.iter().enumerate() {
            if p.instructions != previous {
                let x = i as f64 + 1.0;
                corners.push((x, previous as f64));
                corners.push((x, p.instructions as f64));
                marks.push((
                    x,
                    p.instructions as f64,
                    p.instructions as i64 - previous as i64,
                ));
                previous = p.instructions;
            }
        }
        corners.push((series.len() as f64, previous as f64));
        let mut largest: Vec<usize> = (0..marks.len()).collect();
        largest.sort_by_key(|&i| std::cmp::Reverse(marks[i].2.unsigned_abs()));
        let labels = largest
            .into_iter()
            .take(LABELLED_CHANGES)
            .map(|i| {
                let (x, y, d) = marks[i];
                let p = &series[x as usize - 1];
                let target = if p.target.is_empty() {
                    String::new()
                } else {
                    format!(" on {}", p.target)
                };
                (x, y, format!("{}{target} {d:+}", p.pass))
            })
            .collect();
        Chart {
            title: format!(
                "IR size across the pipeline: {start} → {end} instructions over {} passes ({} changed it)",
                series.len(),
                marks.len()
            ),
            kind: Kind::Steps {
                passes: series.len(),
                line: reduce(corners),
                marks,
                labels,
            },
        }
    }

    /// Runtime per call of each compared pipeline: median with ± one
    /// standard deviation, and the speedup against the first.
    pub fn runtime(c: &Comparison) -> Chart {
        let base = c.entries.first().map(|e| e.time.median().as_secs_f64());
        let repeats = c.entries.first().map_or(0, |e| e.time.per_call.len());
        let bars = c
            .entries
            .iter()
            .map(|e| {
                let median = e.time.median().as_secs_f64();
                let speedup = base.map_or(String::new(), |b| format!("{:.2}x", b / median));
                (
                    e.pipeline.clone(),
                    median,
                    e.time.stdev().as_secs_f64(),
                    speedup,
                )
            })
            .collect();
        Chart {
            title: format!(
                "{}: runtime per call by pipeline (median ± stdev of {repeats} repeats)",
                c.function
            ),
            kind: Kind::Runtime { bars },
        }
    }

    /// Compile time (pipeline plus JIT) against runtime per call, one
    /// labelled point per compared pipeline.
    pub fn compile_vs_runtime(c: &Comparison) -> Chart {
        Chart {
            title: format!(
                "{}: compile time vs runtime per call, by pipeline",
                c.function
            ),
            kind: Kind::Scatter {
                points: c
                    .entries
                    .iter()
                    .map(|e| {
                        (
                            e.pipeline.clone(),
                            e.compile.as_secs_f64(),
                            e.time.median().as_secs_f64(),
                        )
                    })
                    .collect(),
            },
        }
    }

    /// Lines of `y` against `x`, drawn as steps (a best-so-far value holds
    /// until the next improvement), one colour per series with a legend,
    /// and dashed horizontal reference lines with their labels.
    pub fn lines(
        title: &str,
        x_axis: &str,
        y_axis: &str,
        lines: Vec<(String, Vec<(f64, f64)>)>,
        refs: Vec<(String, f64)>,
    ) -> Chart {
        Chart {
            title: title.to_string(),
            kind: Kind::Lines {
                x_axis: x_axis.to_string(),
                y_axis: y_axis.to_string(),
                lines,
                refs,
            },
        }
    }

    /// The size in pixels (the SVG's too).
    pub fn size(&self) -> (u32, u32) {
        match &self.kind {
            Kind::TimeBars { bars, .. } | Kind::Bars { bars, .. } => {
                (1000, 130 + 30 * bars.len().max(1) as u32)
            }
            Kind::Stacked { bars, .. } => (1000, 130 + 30 * bars.len().max(1) as u32),
            Kind::Runtime { bars } => (1000, 150 + 44 * bars.len().max(1) as u32),
            _ => (1000, 600),
        }
    }

    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String> {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, self.size()).into_drawing_area();
            self.draw(&root).map_err(|m| self.error(m))?;
            root.present().map_err(|e| self.error(e.to_string()))?;
        }
        Ok(out)
    }

    /// The chart as a PNG image.
    pub fn png(&self) -> Result<Vec<u8>> {
        let (w, h) = self.size();
        let mut pixels = vec![0u8; w as usize * h as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
            self.draw(&root).map_err(|m| self.error(m))?;
            root.present().map_err(|e| self.error(e.to_string()))?;
        }
        encode_png(w, h, &pixels).map_err(|e| self.error(e))
    }

    /// Writes the chart to `path`: SVG for `.svg`, PNG for `.png`.
    pub fn write(&self, path: &str) -> Result<()> {
        let bytes = match std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
        {
            Some(e) if e.eq_ignore_ascii_case("svg") => self.svg()?.into_bytes(),
            Some(e) if e.eq_ignore_ascii_case("png") => self.png()?,
            _ => {
                return Err(Error::Invalid(format!(
                    "cannot tell the chart format of '{path}'; name it .svg or .png"
                )))
            }
        };
        crate::folder::write_file(std::path::Path::new(path), bytes, "writing a chart")
    }

    fn error(&self, message: String) -> Error {
        Error::Chart {
            title: self.title.clone(),
            message,
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        register_fonts();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        match &self.kind {
            Kind::TimeBars { axis, bars } => time_bars(root, &self.title, axis, bars),
            Kind::Bars { axis, bars } => {
                let labels: Vec<String> = bars
                    .iter()
                    .map(|(_, v)| match v.fract() == 0.0 {
                        true => format!("{v:.0}"),
                        false => format!("{v:.prec$}", prec = decimals(*v)),
                    })
                    .collect();
                horizontal_bars(root, &self.title, &HBars::plain(axis, bars, &labels))
            }
            Kind::Stacked { axis, bars, parts } => {
                stacked_bars(root, &self.title, axis, bars, parts)
            }
            Kind::Steps {
                passes,
                line,
                marks,
                labels,
            } => steps(root, &self.title, *passes, line, marks, labels),
            Kind::Runtime { bars } => runtime_bars(root, &self.title, bars),
            Kind::Scatter { points } => scatter(root, &self.title, points),
            Kind::Lines {
                x_axis,
                y_axis,
                lines,
                refs,
            } => step_lines(root, &self.title, x_axis, y_axis, lines, refs),
        }
    }
}

/// Times as bars along `axis`, in the unit that suits the longest.
fn time_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    axis: &str,
    bars: &[(String, f64)],
) -> Result<(), String> {
    let max = bars.iter().map(|b| b.1).fold(0.0, f64::max);
    let (unit, scale) = time_unit(max);
    let scaled: Vec<(String, f64)> = bars.iter().map(|(l, v)| (l.clone(), v * scale)).collect();
    let labels: Vec<String> = scaled
        .iter()
        .map(|(_, v)| format!("{v:.prec$}", prec = decimals(*v)))
        .collect();
    let axis = format!("{axis} ({unit})");
    horizontal_bars(root, title, &HBars::plain(&axis, &scaled, &labels))
}

/// Bars of stacked `parts` (name, colour) along `axis`, each labelled with
/// its parts' values.
fn stacked_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    axis: &str,
    bars: &[(String, Vec<f64>)],
    parts: &[(String, (u8, u8, u8))],
) -> Result<(), String> {
    let totals: Vec<(String, f64)> = bars
        .iter()
        .map(|(l, v)| (l.clone(), v.iter().sum()))
        .collect();
    let labels: Vec<String> = bars
        .iter()
        .map(|(_, v)| {
            let shown: Vec<String> = v
                .iter()
                .zip(parts)
                .filter(|(n, _)| **n > 0.0)
                .map(|(n, (name, _))| format!("{n} {name}"))
                .collect();
            shown.join(", ")
        })
        .collect();
    let stack = Stack {
        values: bars.iter().map(|b| b.1.clone()).collect(),
        colours: parts
            .iter()
            .map(|p| RGBColor(p.1 .0, p.1 .1, p.1 .2))
            .collect(),
    };
    let h = HBars {
        stack: Some(&stack),
        ..HBars::plain(axis, &totals, &labels)
    };
    horizontal_bars(root, title, &h)
}

/// Runtimes per call (name, median, stdev, result) as bars with error
/// bars, in the unit that suits the longest.
fn runtime_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    bars: &[(String, f64, f64, String)],
) -> Result<(), String> {
    let max = bars.iter().map(|b| b.1 + b.2).fold(0.0, f64::max);
    let (unit, scale) = time_unit(max);
    let scaled: Vec<(String, f64)> = bars.iter().map(|b| (b.0.clone(), b.1 * scale)).collect();
    let errors: Vec<f64> = bars.iter().map(|b| b.2 * scale).collect();
    let labels: Vec<String> = bars
        .iter()
        .map(|b| {
            let v = b.1 * scale;
            format!("{v:.prec$} {unit}  {}", b.3, prec = decimals(v))
        })
        .collect();
    let axis = format!("runtime per call, median ± stdev ({unit})");
    let h = HBars {
        errors: Some(&errors),
        ..HBars::plain(&axis, &scaled, &labels)
    };
    horizontal_bars(root, title, &h)
}

/// Draws passlab's logo on `root`, `size` pixels square: "pl" in white on
/// the charts' blue.
fn draw_logo<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, size: u32) -> Result<(), String> {
    root.fill(&RGBColor(49, 104, 178))
        .map_err(|e| e.to_string())?;
    let style = ("sans-serif", size as f64 * 0.55)
        .into_font()
        .style(FontStyle::Bold)
        .color(&WHITE)
        .pos(Pos::new(HPos::Center, VPos::Center));
    let c = size as i32 / 2;
    root.draw(&Text::new("pl", (c, c), style))
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

fn logo_error(message: String) -> Error {
    Error::Chart {
        title: "passlab logo".into(),
        message,
    }
}

/// passlab's logo, `size` pixels square, as PNG (for the Jupyter
/// kernelspec).
pub fn logo_png(size: u32) -> Result<Vec<u8>> {
    let mut pixels = vec![0u8; size as usize * size as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (size, size)).into_drawing_area();
        register_fonts();
        draw_logo(&root, size).map_err(logo_error)?;
    }
    encode_png(size, size, &pixels).map_err(logo_error)
}

/// passlab's logo as SVG (the kernelspec's `logo-svg.svg`, which launchers
/// scale to any size).
pub fn logo_svg() -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (64, 64)).into_drawing_area();
        draw_logo(&root, 64).map_err(logo_error)?;
    }
    Ok(out)
}

/// RGB pixels as a PNG file.
fn encode_png(w: u32, h: u32, pixels: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Best);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(pixels).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

fn register_fonts() {
    static FONTS: Once = Once::new();
    FONTS.call_once(|| {
        // The fonts are valid TrueType files, so registering cannot fail;
        // if it did, plotters would report a missing font when drawing.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
        let _ = plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

fn caption() -> TextStyle<'static> {
    ("sans-serif", 20).into_font().style(FontStyle::Bold).into()
}

fn small() -> TextStyle<'static> {
    ("sans-serif", 14).into()
}

fn axis_desc() -> TextStyle<'static> {
    ("sans-serif", 16).into()
}

/// The unit and factor for times whose largest is `max` seconds.
fn time_unit(max: f64) -> (&'static str, f64) {
    if max >= 1.0 {
        ("s", 1.0)
    } else if max >= 1e-3 {
        ("ms", 1e3)
    } else if max >= 1e-6 {
        ("µs", 1e6)
    } else {
        ("ns", 1e9)
    }
}

/// A duration in seconds, in its own unit, for titles.
fn seconds(s: f64) -> String {
    let (unit, scale) = time_unit(s);
    let v = s * scale;
    format!("{v:.prec$} {unit}", prec = decimals(v))
}

fn decimals(v: f64) -> usize {
    if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    }
}

/// A step line with at most about [`MAX_CORNERS`] corners: past that, each
/// bucket of x keeps its first, lowest, highest and last points, so every
/// extreme stays visible.
fn reduce(corners: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if corners.len() <= MAX_CORNERS {
        return corners;
    }
    let buckets = MAX_CORNERS / 4;
    let xmax = corners.last().map_or(1.0, |c| c.0).max(1.0);
    let mut out = Vec::with_capacity(MAX_CORNERS);
    let mut i = 0;
    while i < corners.len() {
        let b = ((corners[i].0 / xmax) * buckets as f64) as usize;
        let mut j = i;
        while j < corners.len() && ((corners[j].0 / xmax) * buckets as f64) as usize == b {
            j += 1;
        }
        let chunk = &corners[i..j];
        let lo = chunk
            .iter()
            .cloned()
            .fold(chunk[0], |a, c| if c.1 < a.1 { c } else { a });
        let hi = chunk
            .iter()
            .cloned()
            .fold(chunk[0], |a, c| if c.1 > a.1 { c } else { a });
        let mut picked = vec![chunk[0], lo, hi, chunk[chunk.len() - 1]];
        picked.sort_by(|a, b| a.0.total_cmp(&b.0));
        out.extend(picked);
        i = j;
    }
    out
}

/// The parts of stacked bars: per bar, one value per part, and each
/// part's colour.
struct Stack {
    values: Vec<Vec<f64>>,
    colours: Vec<RGBColor>,
}

/// A horizontal bar chart's content: `bars` (name, value) along `axis`,
/// each followed by its text in `values`, with error bars (`errors`) or
/// stacked parts (`stack`) if given.
struct HBars<'a> {
    axis: &'a str,
    bars: &'a [(String, f64)],
    values: &'a [String],
    errors: Option<&'a [f64]>,
    stack: Option<&'a Stack>,
}

impl<'a> HBars<'a> {
    /// Bars without error bars or parts.
    fn plain(axis: &'a str, bars: &'a [(String, f64)], values: &'a [String]) -> HBars<'a> {
        HBars {
            axis,
            bars,
            values,
            errors: None,
            stack: None,
        }
    }

    /// Bar `i`'s error (0: none).
    fn error(&self, i: usize) -> f64 {
        self.errors.and_then(|e| e.get(i)).copied().unwrap_or(0.0)
    }

    /// The x axis's end, and whether the bars are counts (every value
    /// whole, no error bars), which get whole ticks.
    fn x_end(&self) -> (f64, bool) {
        let max = (0..self.bars.len())
            .map(|i| self.bars[i].1 + self.error(i))
            .fold(0.0, f64::max);
        let counts = self.errors.is_none() && self.bars.iter().all(|b| b.1.fract() == 0.0);
        let xmax = match (max > 0.0, counts) {
            (false, _) => 1.0,
            (true, false) => max * 1.3,
            (true, true) => (max * 1.3).ceil().max(max + 1.0),
        };
        (xmax, counts)
    }

    /// Bar `i` (of `total`) as segments: (from, to, colour); one segment,
    /// in `colour`, unless stacked.
    fn segments(&self, i: usize, total: f64, colour: RGBColor) -> Vec<(f64, f64, RGBColor)> {
        match self.stack {
            Some(st) => {
                let mut at = 0.0;
                st.values[i]
                    .iter()
                    .zip(&st.colours)
                    .filter(|(v, _)| **v > 0.0)
                    .map(|(v, c)| {
                        at += v;
                        (at - v, at, *c)
                    })
                    .collect()
            }
            None => vec![(0.0, total, colour)],
        }
    }
}

/// Draws `h`'s bars, one row each, the first at the top.
fn horizontal_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    h: &HBars,
) -> Result<(), String> {
    let bars = h.bars;
    // One bar gets an empty row under it: plotters' segmented range needs
    // two rows to draw one.
    let n = bars.len().max(2) as i32;
    let (xmax, counts) = h.x_end();
    let ticks = if xmax <= 10.0 { xmax as usize + 1 } else { 10 };
    let widest = bars.iter().map(|b| b.0.chars().count()).max().unwrap_or(4);
    let mut chart = ChartBuilder::on(root)
        .caption(title, caption())
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size((widest as u32 * 8 + 20).min(420))
        .build_cartesian_2d(0f64..xmax, (0..n - 1).into_segmented())
        .map_err(|e| e.to_string())?;
    let names: Vec<&str> = bars.iter().map(|b| b.0.as_str()).collect();
    let label = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(i) => names
            .get((n - 1 - *i) as usize)
            .map_or(String::new(), |s| s.to_string()),
        _ => String::new(),
    };
    let whole = |x: &f64| format!("{x:.0}");
    let mut mesh = chart.configure_mesh();
    mesh.disable_y_mesh()
        .y_labels(bars.len().max(1))
        .y_label_formatter(&label)
        .x_desc(h.axis)
        .label_style(small())
        .axis_desc_style(axis_desc());
    if counts {
        mesh.x_labels(ticks).x_label_formatter(&whole);
    }
    mesh.draw().map_err(|e| e.to_string())?;
    let colour = RGBColor(49, 104, 178);
    chart
        .draw_series(bars.iter().enumerate().flat_map(|(i, (_, v))| {
            let y = n - 1 - i as i32;
            h.segments(i, *v, colour)
                .into_iter()
                .map(move |(from, to, c)| {
                    let mut r = Rectangle::new(
                        [
                            (from, SegmentValue::Exact(y)),
                            (to, SegmentValue::Exact(y + 1)),
                        ],
                        c.filled(),
                    );
                    r.set_margin(4, 4, 0, 0);
                    r
                })
        }))
        .map_err(|e| e.to_string())?;
    // Where each bar's error bar starts and ends (its value ± its error).
    let ends: Vec<_> = bars
        .iter()
        .enumerate()
        .map(|(i, (_, v))| {
            let y = SegmentValue::CenterOf(n - 1 - i as i32);
            let e = h.error(i);
            (
                chart.backend_coord(&((v - e).max(0.0), y.clone())),
                chart.backend_coord(&(v + e, y)),
            )
        })
        .collect();
    bar_values(root, h, &ends)
}

/// Where a bar's error bar starts and ends, in pixels (the end is where its
/// text goes).
type BarEnds = ((i32, i32), (i32, i32));

/// Each bar's error bar (from and to, in pixels: `ends`) if it has one,
/// and its text after it.
fn bar_values<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    h: &HBars,
    ends: &[BarEnds],
) -> Result<(), String> {
    let style = small().pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (&(lo, hi), text)) in ends.iter().zip(h.values).enumerate() {
        if h.error(i) > 0.0 {
            for path in [
                vec![lo, hi],
                vec![(lo.0, lo.1 - 7), (lo.0, lo.1 + 7)],
                vec![(hi.0, hi.1 - 7), (hi.0, hi.1 + 7)],
            ] {
                root.draw(&PathElement::new(path, BLACK.stroke_width(2)))
                    .map_err(|e| e.to_string())?;
            }
        }
        root.draw(&Text::new(
            format!(" {text}"),
            (hi.0 + 4, hi.1),
            style.clone(),
        ))
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn steps<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    passes: usize,
    line: &[(f64, f64)],
    marks: &[(f64, f64, i64)],
    labels: &[(f64, f64, String)],
) -> Result<(), String> {
    let lo = line.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let hi = line.iter().map(|p| p.1).fold(0.0, f64::max);
    let pad = ((hi - lo) * 0.12).max(1.0);
    let ymin = (lo - pad).max(0.0);
    let xmax = (passes as f64).max(1.0);
    let mut chart = ChartBuilder::on(root)
        .caption(title, caption())
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..xmax * 1.02, ymin..hi + pad)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(format!("passes run, in order ({passes})"))
        .y_desc("instructions in the module")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(small())
        .axis_desc_style(axis_desc())
        .draw()
        .map_err(|e| e.to_string())?;
    let blue = RGBColor(49, 104, 178);
    chart
        .draw_series(LineSeries::new(line.iter().cloned(), blue.stroke_width(2)))
        .map_err(|e| e.to_string())?
        .label("instructions after each pass")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], blue.stroke_width(2)));
    let grew = RGBColor(200, 60, 40);
    let shrank = RGBColor(30, 150, 70);
    chart
        .draw_series(
            marks
                .iter()
                .filter(|m| m.2 < 0)
                .map(|&(x, y, _)| Circle::new((x, y), 3, shrank.filled())),
        )
        .map_err(|e| e.to_string())?
        .label("a pass removed instructions")
        .legend(move |(x, y)| Circle::new((x + 10, y), 4, shrank.filled()));
    chart
        .draw_series(
            marks
                .iter()
                .filter(|m| m.2 > 0)
                .map(|&(x, y, _)| Circle::new((x, y), 3, grew.filled())),
        )
        .map_err(|e| e.to_string())?
        .label("a pass added instructions")
        .legend(move |(x, y)| Circle::new((x + 10, y), 4, grew.filled()));
    let mut placer = Placer::default();
    for (x, y, text) in labels {
        let p = chart.backend_coord(&(*x, *y));
        let at = placer.place(root, text, p, 20, *x > xmax * 0.6)?;
        root.draw(&PathElement::new(
            vec![p, (p.0, at.1 + if at.1 < p.1 { 2 } else { -14 })],
            BLACK.mix(0.5).stroke_width(1),
        ))
        .map_err(|e| e.to_string())?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(small())
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(())
}

fn scatter<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    points: &[(String, f64, f64)],
) -> Result<(), String> {
    let xmax = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let ymax = points.iter().map(|p| p.2).fold(0.0, f64::max);
    let (xunit, xs) = time_unit(xmax);
    let (yunit, ys) = time_unit(ymax);
    let xtop = if xmax > 0.0 { xmax * xs * 1.3 } else { 1.0 };
    let ytop = if ymax > 0.0 { ymax * ys * 1.2 } else { 1.0 };
    let mut chart = ChartBuilder::on(root)
        .caption(title, caption())
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..xtop, 0f64..ytop)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(format!("compile time: pipeline + JIT ({xunit})"))
        .y_desc(format!("runtime per call, median ({yunit})"))
        .label_style(small())
        .axis_desc_style(axis_desc())
        .draw()
        .map_err(|e| e.to_string())?;
    let colour = RGBColor(200, 60, 40);
    chart
        .draw_series(
            points
                .iter()
                .map(|(_, x, y)| Circle::new((x * xs, y * ys), 5, colour.filled())),
        )
        .map_err(|e| e.to_string())?;
    let mut placer = Placer::default();
    for (label, x, y) in points {
        let p = chart.backend_coord(&(x * xs, y * ys));
        placer.place(root, label, p, 8, x * xs > xtop * 0.6)?;
    }
    Ok(())
}

const SERIES: [RGBColor; 5] = [
    RGBColor(49, 104, 178),
    RGBColor(200, 60, 40),
    RGBColor(40, 150, 80),
    RGBColor(150, 80, 180),
    RGBColor(220, 140, 20),
];

fn step_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_axis: &str,
    y_axis: &str,
    lines: &[(String, Vec<(f64, f64)>)],
    refs: &[(String, f64)],
) -> Result<(), String> {
    let (lo, hi, pad) = y_span(lines, refs);
    let xmax = lines
        .iter()
        .flat_map(|(_, l)| l.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(root)
        .caption(title, caption())
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(0f64..xmax * 1.12, (lo - pad)..(hi + pad))
        .map_err(|e| e.to_string())?;
    let whole = hi - lo > 20.0;
    chart
        .configure_mesh()
        .x_desc(x_axis)
        .y_desc(y_axis)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| {
            if whole {
                format!("{v:.0}")
            } else {
                format!("{v:.3}")
            }
        })
        .light_line_style(WHITE)
        .label_style(small())
        .axis_desc_style(axis_desc())
        .draw()
        .map_err(|e| e.to_string())?;
    let grey = RGBColor(120, 120, 120);
    let mut placer = Placer::default();
    for (label, y) in refs {
        let mut x = 0.0;
        while x < xmax * 1.12 {
            let end = (x + xmax * 0.015).min(xmax * 1.12);
            chart
                .draw_series(LineSeries::new([(x, *y), (end, *y)], grey.stroke_width(1)))
                .map_err(|e| e.to_string())?;
            x += xmax * 0.03;
        }
        let p = chart.backend_coord(&(xmax * 1.12, *y));
        placer.place(root, label, p, 2, true)?;
    }
    for (i, (label, points)) in lines.iter().enumerate() {
        let colour = SERIES[i % SERIES.len()];
        chart
            .draw_series(LineSeries::new(
                step_corners(points),
                colour.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?
            .label(label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    if !lines.is_empty() {
        chart
            .configure_series_labels()
            .label_font(small())
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The lowest and highest y of `lines` and `refs` (0 and 1 if there are
/// none), and the padding the chart leaves around them.
fn y_span(lines: &[(String, Vec<(f64, f64)>)], refs: &[(String, f64)]) -> (f64, f64, f64) {
    let ys = lines
        .iter()
        .flat_map(|(_, l)| l.iter().map(|p| p.1))
        .chain(refs.iter().map(|r| r.1));
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.01).max(1e-9);
    (lo, hi, pad)
}

/// A line through `points` as steps: each value held until the next x.
fn step_corners(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut corners = Vec::with_capacity(points.len() * 2);
    for w in points.windows(2) {
        corners.push(w[0]);
        corners.push((w[1].0, w[0].1));
    }
    if let Some(last) = points.last() {
        corners.push(*last);
    }
    corners
}

/// Places labels near points so that they do not overlap each other:
/// above the point first, then further up or down.
#[derive(Default)]
struct Placer {
    taken: Vec<(i32, i32, i32, i32)>,
}

impl Placer {
    /// Draws `text` near pixel `p` (`gap` pixels above it, leftwards if
    /// `left`) where it overlaps no earlier label; returns its baseline
    /// anchor.
    fn place<DB: DrawingBackend>(
        &mut self,
        root: &DrawingArea<DB, Shift>,
        text: &str,
        p: (i32, i32),
        gap: i32,
        left: bool,
    ) -> Result<(i32, i32), String> {
        let style = small().pos(Pos::new(
            if left { HPos::Right } else { HPos::Left },
            VPos::Bottom,
        ));
        let (w, h) = root
            .estimate_text_size(text, &style)
            .map_err(|e| e.to_string())?;
        let (w, h) = (w as i32 + 4, h as i32 + 2);
        let x0 = if left { p.0 - 4 - w } else { p.0 + 4 };
        let mut chosen = (p.0 + if left { -4 } else { 4 }, p.1 - gap);
        for k in 0..12 {
            // 0, one line up, one down, two up, two down, …
            let m = (k + 1) / 2;
            let y = p.1 - gap + if k % 2 == 1 { -m * h } else { m * h };
            let b = (x0, y - h, x0 + w, y);
            let free = self
                .taken
                .iter()
                .all(|t| b.2 <= t.0 || t.2 <= b.0 || b.3 <= t.1 || t.3 <= b.1);
            if free {
                chosen.1 = y;
                self.taken.push(b);
                break;
            }
        }
        root.draw(&Text::new(text.to_string(), chosen, style))
            .map_err(|e| e.to_string())?;
        Ok(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remarks_chart_is_of_a_recorded_run() {
        let r = crate::instrument::Remarks::new();
        assert_eq!(
            Chart::remarks_of_run(&r, None, 15).err().as_deref(),
            Some("no remarks recorded yet: the remarks instrument records them during :run")
        );
        r.add_run("O2 on m", Vec::new());
        r.add_run("O3 on m", Vec::new());
        let c = Chart::remarks_of_run(&r, None, 15).unwrap();
        assert_eq!(c.title, "remarks by pass, run 2 (O3 on m): 0");
        let c = Chart::remarks_of_run(&r, Some(1), 15).unwrap();
        assert_eq!(c.title, "remarks by pass, run 1 (O2 on m): 0");
        for n in [0, 3] {
            assert_eq!(
                Chart::remarks_of_run(&r, Some(n), 15).err(),
                Some(format!("run={n}: 2 runs recorded, numbered 1 to 2"))
            );
        }
    }

    #[test]
    fn counts_have_whole_ticks_and_labels() {
        let texts = |svg: String| -> Vec<String> {
            svg.split("<text")
                .skip(1)
                .filter_map(|t| {
                    Some(
                        t.split_once('>')?
                            .1
                            .split_once("</text>")?
                            .0
                            .trim()
                            .to_string(),
                    )
                })
                .collect()
        };
        let t = texts(
            Chart::bars("findings", "programs", vec![("a (miscompile)".into(), 1.0)])
                .svg()
                .unwrap(),
        );
        assert!(
            t.iter().filter(|x| *x == "1").count() >= 2,
            "the bar's label and a tick: {t:?}"
        );
        assert!(
            !t.iter().any(|x| x.contains('.')),
            "no fractions of a count: {t:?}"
        );
        let t = texts(
            Chart::bars("t", "ms", vec![("x".into(), 0.25)])
                .svg()
                .unwrap(),
        );
        assert!(
            t.iter().any(|x| x == "0.25"),
            "fractions keep their decimals: {t:?}"
        );
    }

    #[test]
    fn units_follow_the_largest_value() {
        assert_eq!(time_unit(2.0), ("s", 1.0));
        assert_eq!(time_unit(0.002).0, "ms");
        assert_eq!(time_unit(2e-6).0, "µs");
        assert_eq!(time_unit(2e-9).0, "ns");
        assert_eq!(seconds(0.0123), "12.3 ms");
    }

    #[test]
    fn long_step_lines_keep_their_extremes() {
        let corners: Vec<(f64, f64)> = (0..100_000)
            .map(|i| (i as f64, if i == 54_321 { 9_999.0 } else { (i % 7) as f64 }))
            .collect();
        let r = reduce(corners);
        assert!(r.len() <= MAX_CORNERS + 4, "{}", r.len());
        assert!(r.iter().any(|p| p.1 == 9_999.0));
        assert!(r.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn png_text_is_drawn_with_the_built_in_font() {
        // A chart with a title only differs from a blank one by its text,
        // so dark pixels in the caption band show the font was found.
        let c = Chart::bars("a title in the built-in font", "value", vec![]);
        let png = c.png().unwrap();
        let decoder = png::Decoder::new(&png[..]);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let row = info.line_size;
        let dark = buf[..row * 40]
            .chunks(3)
            .filter(|p| p.iter().all(|&c| c < 100))
            .count();
        assert!(dark > 100, "only {dark} dark pixels in the caption");
    }

    #[test]
    fn the_format_comes_from_the_file_name() {
        let c = Chart::bars("t", "v", vec![("a".into(), 1.0)]);
        let e = c.write("/tmp/chart.jpeg").unwrap_err().to_string();
        assert!(e.contains(".svg or .png"), "{e}");
    }
}
