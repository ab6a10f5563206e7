//! Instruments: :instrument, :instruments, :report, and the typed handles
//! the session keeps so that reports can read results.

use super::*;

/// The built-in instruments `:instrument` knows, with their results.
pub(crate) enum Handle {
    Timing(Rc<Timing>),
    IrSize(Rc<IrSize>),
    PrintBefore(Rc<PrintPasses>),
    PrintAfter(Rc<PrintPasses>),
    PrintChanged(Rc<PrintChanged>),
    Verify(Rc<VerifyEach>),
    Bisect(Rc<Bisect>),
    Trace(Rc<Trace>),
    Counts(Rc<Counts>),
    Explore(Rc<crate::instrument::Explore>),
    Remarks(Rc<crate::instrument::Remarks>),
}

impl Handle {
    /// The instrument as code generation sees it (`jit::backend::record`).
    pub(crate) fn watcher(&self) -> crate::jit::backend::Watcher<'_> {
        use crate::jit::backend::Watcher;
        match self {
            Handle::Timing(t) => Watcher::Timing(t),
            Handle::Counts(c) => Watcher::Counts(c),
            Handle::PrintBefore(p) => Watcher::PrintBefore(p),
            Handle::PrintAfter(p) => Watcher::PrintAfter(p),
            Handle::PrintChanged(p) => Watcher::PrintChanged(p),
            Handle::Verify(v) => Watcher::Verify(v),
            Handle::Bisect(b) => Watcher::Bisect(b),
            Handle::Explore(_) => Watcher::Explore,
            Handle::Remarks(r) => Watcher::Remarks(r),
            Handle::IrSize(_) | Handle::Trace(_) => Watcher::Blind,
        }
    }

    pub(crate) fn instrument(&self) -> Rc<dyn crate::Instrument> {
        match self {
            Handle::Timing(i) => i.clone(),
            Handle::IrSize(i) => i.clone(),
            Handle::PrintBefore(i) | Handle::PrintAfter(i) => i.clone(),
            Handle::PrintChanged(i) => i.clone(),
            Handle::Verify(i) => i.clone(),
            Handle::Bisect(i) => i.clone(),
            Handle::Trace(i) => i.clone(),
            Handle::Counts(i) => i.clone(),
            Handle::Explore(i) => i.clone(),
            Handle::Remarks(i) => i.clone(),
        }
    }

    /// The name `:instrument` takes (`skip=` lists are a bisect).
    fn name(&self) -> &'static str {
        match self {
            Handle::Timing(_) => "timing",
            Handle::IrSize(_) => "ir-size",
            Handle::PrintBefore(_) => "print-before",
            Handle::PrintAfter(_) => "print-after",
            Handle::PrintChanged(_) => "print-changed",
            Handle::Verify(_) => "verify",
            Handle::Bisect(_) => "bisect",
            Handle::Trace(_) => "trace",
            Handle::Counts(_) => "counts",
            Handle::Explore(_) => "explore",
            Handle::Remarks(_) => "remarks",
        }
    }

    /// Instruments of the same kind replace each other, except printing
    /// before and after, which take different pass lists.
    fn replaces(&self, other: &Handle) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

pub(super) const INSTRUMENT_NAMES: &[&str] = &[
    "timing",
    "ir-size",
    "print-before",
    "print-after",
    "print-changed",
    "verify",
    "bisect",
    "skip",
    "trace",
    "counts",
    "explore",
    "remarks",
    "clear",
];

/// `:instrument`'s line: each instrument named (a word, or a setting
/// with its value), in order, and the settings that apply to them all.
struct Requested {
    items: Vec<(String, Option<String>)>,
    /// `kinds=missed,...`: the remarks instrument keeps only these kinds.
    kinds: Vec<crate::instrument::RemarkKind>,
    /// `functions=F,...`: the printing instruments of this command show
    /// only these functions (LLVM's -filter-print-funcs), the remarks
    /// instrument only their remarks.
    functions: Vec<String>,
}

fn requested(a: &Args) -> Result<Requested> {
    if a.rest.is_empty() {
        return Err(err(
            "instrument",
            format!("expects one of: {}", INSTRUMENT_NAMES.join(", ")),
        ));
    }
    let functions: Vec<String> = a
        .settings
        .iter()
        .filter(|(k, _)| k == "functions")
        .flat_map(|(_, v)| comma_list(v))
        .collect();
    let mut kinds = Vec::new();
    for (_, v) in a.settings.iter().filter(|(k, _)| k == "kinds") {
        kinds.extend(remark_kinds("instrument", v)?);
    }
    let items: Vec<(String, Option<String>)> = a
        .words
        .iter()
        .map(|w| (w.clone(), None))
        .chain(
            a.settings
                .iter()
                .filter(|(k, _)| k != "functions" && k != "kinds")
                .map(|(k, v)| (k.clone(), Some(v.clone()))),
        )
        .collect();
    if !kinds.is_empty() && !items.iter().any(|(n, _)| n == "remarks") {
        return Err(err(
            "instrument",
            "kinds= filters remarks: :instrument remarks kinds=missed",
        ));
    }
    Ok(Requested {
        items,
        kinds,
        functions,
    })
}

pub(super) fn instrument(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let r = requested(a)?;
    for (name, value) in &r.items {
        if name == "clear" {
            s.instruments.clear();
            continue;
        }
        let handle = new_handle(s, name, value.as_deref(), &r)?;
        let mut spec = match value {
            Some(v) => format!("{name}={v}"),
            None => name.clone(),
        };
        if let Handle::Remarks(_) = &handle {
            let filter = crate::instrument::RemarkFilter {
                passes: Vec::new(),
                kinds: r.kinds.clone(),
                functions: r.functions.clone(),
            };
            spec.push_str(&filter.settings());
        }
        s.instruments.retain(|i| !i.handle.replaces(&handle));
        s.instruments.push(Active { spec, handle });
    }
    text(format!("instruments: {}", describe(s)))
}

/// The instrument `name` (with `value`, a list of passes for most) names.
fn new_handle(s: &Session, name: &str, value: Option<&str>, r: &Requested) -> Result<Handle> {
    let names = comma_list(value.unwrap_or(""));
    let filter = |names: Vec<String>| {
        let f = PassFilter::passes(names);
        if r.functions.is_empty() {
            f
        } else {
            f.in_functions(r.functions.clone())
        }
    };
    Ok(match name {
        "timing" => Handle::Timing(Rc::new(Timing::new())),
        "ir-size" => Handle::IrSize(Rc::new(IrSize::new())),
        // The printing instruments share one buffer, so that their output
        // comes in the order the passes ran.
        "print-before" => Handle::PrintBefore(Rc::new(
            PrintPasses::before(filter(names)).writing_to(Box::new(s.printed.clone())),
        )),
        "print-after" => Handle::PrintAfter(Rc::new(
            PrintPasses::after(filter(names)).writing_to(Box::new(s.printed.clone())),
        )),
        "print-changed" => Handle::PrintChanged(Rc::new(
            PrintChanged::new(filter(names)).writing_to(Box::new(s.printed.clone())),
        )),
        "verify" => Handle::Verify(Rc::new(VerifyEach::new())),
        "bisect" => Handle::Bisect(Rc::new(
            Bisect::limited(value).map_err(|e| err("instrument", e))?,
        )),
        "skip" => Handle::Bisect(Rc::new(Bisect::new(None).skipping(names))),
        "trace" => Handle::Trace(Rc::new(Trace::emitting())),
        "counts" => Handle::Counts(Rc::new(Counts::new())),
        "explore" => Handle::Explore(Rc::new(crate::instrument::Explore::new())),
        "remarks" => Handle::Remarks(Rc::new(crate::instrument::Remarks::filtered(
            crate::instrument::RemarkFilter {
                passes: names,
                kinds: r.kinds.clone(),
                functions: r.functions.clone(),
            },
        ))),
        other => {
            return Err(Error::Command {
                command: "instrument".into(),
                message: format!("unknown instrument '{other}'"),
                suggestions: crate::nearest_names(other, INSTRUMENT_NAMES.iter().copied()),
            })
        }
    })
}

/// What `:report` reports.
pub(super) const REPORTS: &[&str] = &[
    "timing",
    "timing-tree",
    "ir-size",
    "changed",
    "counts",
    "bisect",
    "bench",
    "tune",
    "remarks",
];

/// Remark kinds from a comma list, or what would be valid.
fn remark_kinds(command: &str, list: &str) -> Result<Vec<crate::instrument::RemarkKind>> {
    use crate::instrument::RemarkKind;
    comma_list(list)
        .iter()
        .map(|k| {
            RemarkKind::parse(k).ok_or_else(|| Error::Command {
                command: command.into(),
                message: format!(
                    "unknown remark kind '{k}' (kinds are {})",
                    RemarkKind::NAMES.join(", ")
                ),
                suggestions: crate::nearest_names(k, RemarkKind::NAMES.iter().copied()),
            })
        })
        .collect()
}

/// `:report remarks [source [--out FILE.html] | runs | compare [A B]]
/// [run=N] [top=N] [passes=…] [kinds=…] [functions=…]`.
/// `:report remarks`'s settings: the filter, `top=` and `run=`.
struct RemarksQuery {
    filter: crate::instrument::RemarkFilter,
    top: Option<usize>,
    run: Option<usize>,
}

const REMARKS_USAGE: &str = "expects remarks [source [--out FILE.html] | runs | compare [RUN RUN]] [run=N] [top=N] [passes=P,...] [kinds=K,...] [functions=F,...]";

fn remarks_query(a: &Args) -> Result<RemarksQuery> {
    let mut q = RemarksQuery {
        filter: crate::instrument::RemarkFilter::default(),
        top: None,
        run: None,
    };
    let positive = |k: &str, v: &str| {
        v.parse().ok().filter(|&n: &usize| n > 0).ok_or_else(|| {
            err(
                "report",
                format!("{k} expects a positive number, got '{v}'"),
            )
        })
    };
    for (k, v) in &a.settings {
        match k.as_str() {
            "top" => q.top = Some(positive(k, v)?),
            "run" => q.run = Some(positive(k, v)?),
            "passes" => q.filter.passes.extend(comma_list(v)),
            "kinds" => q.filter.kinds.extend(remark_kinds("report", v)?),
            "functions" => q.filter.functions.extend(comma_list(v)),
            other => {
                return Err(Error::Command {
                    command: "report".into(),
                    message: format!("unknown setting '{other}' for remarks ({REMARKS_USAGE})"),
                    suggestions: crate::nearest_names(
                        other,
                        ["top", "run", "passes", "kinds", "functions"],
                    ),
                })
            }
        }
    }
    Ok(q)
}

fn report_remarks(s: &Session, a: &Args) -> Result<Output> {
    use crate::instrument::{remark_run_number, remark_runs_compared};
    let mut words = a.words.clone();
    let out = super::take_out(&mut words, "report", ", such as remarks.html")?;
    let q = remarks_query(a)?;
    let Handle::Remarks(r) = active(s, "report", "remarks")? else {
        return Err(err(
            "report",
            "the remarks instrument has no remarks report",
        ));
    };
    let runs = r.runs();
    if runs.is_empty() {
        return text("no remarks recorded yet: the remarks instrument records them during :run");
    }
    let run = match q.run {
        Some(n) => remark_run_number(runs.len(), &n.to_string()).map_err(|e| err("report", e))?,
        None => runs.len(),
    };
    let sub = words.get(1).map(String::as_str);
    if out.is_some() && sub != Some("source") {
        return Err(err(
            "report",
            "--out writes the annotated source: :report remarks source --out FILE.html",
        ));
    }
    match (sub, words.len()) {
        (Some("runs"), 2) => return table(&crate::instrument::remark_runs_table(&runs)),
        (Some("compare"), 2 | 4) => {
            let named = (words.len() == 4).then(|| (words[2].as_str(), words[3].as_str()));
            let (x, y) = remark_runs_compared(runs.len(), named).map_err(|e| err("report", e))?;
            let mut c = crate::instrument::compare_remarks(&r.of_run(x), &r.of_run(y), &q.filter);
            for d in &mut c.diffs {
                d.file = super::shown_path(s, &d.file);
            }
            if let Some((a, b)) = &mut c.renamed {
                (*a, *b) = (super::shown_path(s, a), super::shown_path(s, b));
            }
            let label = |n: usize| format!("run {n} ({})", runs[n - 1].label);
            let t = c.table(&label(x), &label(y), q.top.unwrap_or(40));
            if c.diffs.is_empty() {
                // No rows: the title says it all.
                return text(format!(
                    "{}\nno remark appeared, disappeared or changed",
                    t.title
                ));
            }
            return table(&t);
        }
        _ => {}
    }
    let all = r.of_run(run);
    let label = &runs[run - 1].label;
    if let Some(why) = crate::instrument::remarks_nothing_kept(&all, &q.filter, run, label) {
        return text(why);
    }
    match (sub, words.len()) {
        (None, 1) => {
            let mut t = crate::instrument::remark_table(&all, &q.filter);
            t.title = format!("{} — run {run}: {label}", t.title);
            table(&t)
        }
        (Some("source"), 2) => remarks_source(s, &all, &q, label, out),
        (Some(word), _) if !matches!(word, "source" | "runs" | "compare") => Err(Error::Command {
            command: "report".into(),
            message: format!("no remarks report called '{word}' (source, runs, compare)"),
            suggestions: crate::nearest_names(word, ["source", "runs", "compare"]),
        }),
        _ => Err(err("report", format!("{REMARKS_USAGE}, got '{}'", a.rest))),
    }
}

/// `:report remarks source [--out FILE.html]`: the remarks of a run
/// (`all`, what ran being `label`) on the source, as text and, in a
/// notebook, a page; with `--out`, the page written to a file.
fn remarks_source(
    s: &Session,
    all: &[crate::instrument::Remark],
    q: &RemarksQuery,
    label: &str,
    out: Option<String>,
) -> Result<Output> {
    let described = q.filter.describe();
    let kept: Vec<_> = all.iter().filter(|x| q.filter.keeps(x)).cloned().collect();
    let title = format!(
        "{label}{}",
        if described.is_empty() {
            String::new()
        } else {
            format!(" ({described})")
        }
    );
    let page = |standalone| {
        crate::explore::remarks_html(
            &title,
            &kept,
            &|f| super::source_text(s, f),
            &|f| super::shown_path(s, f),
            standalone,
            q.top,
        )
    };
    if let Some(path) = out {
        let (html, stats) = page(true);
        crate::folder::write_file(
            std::path::Path::new(&path),
            &html,
            ":report remarks source --out",
        )?;
        return text(stats.note(&path));
    }
    let plain = super::remarks::annotated_source(
        s,
        all,
        &q.filter,
        q.top.unwrap_or(super::remarks::TOP_LINES),
    );
    let mut bundle = super::super::Bundle::text(plain);
    if s.html {
        bundle.data.push(("text/html".into(), page(false).0));
    }
    let mut o = Output::default();
    o.items.push(Item::Display(bundle));
    Ok(o)
}

/// What `:plot` draws.
pub(super) const CHARTS: &[&str] = &[
    "timing",
    "ir-size",
    "bench",
    "compile-vs-runtime",
    "tune",
    "remarks",
];

pub(super) fn describe(s: &Session) -> String {
    if s.instruments.is_empty() {
        "none".into()
    } else {
        s.instruments
            .iter()
            .map(|i| i.spec.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

pub(super) fn instruments(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    text(format!("instruments: {}", describe(s)))
}

pub(super) fn report(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    if a.words.first().is_some_and(|w| w == "remarks") {
        return report_remarks(s, a);
    }
    if let [what] = a.words.as_slice() {
        if what == "timing" || what == "timing-tree" {
            return report_timing(s, a, what);
        }
    }
    let what = one_word(
        a,
        "what to report: timing, timing-tree, ir-size, changed, counts, bisect, bench, tune or remarks",
    )?;
    if what == "bench" {
        return match &s.last_bench {
            Some(c) => table(&c.table()),
            None => Err(err("report", "no :bench has run yet")),
        };
    }
    if what == "tune" {
        return match &s.last_tune {
            Some(t) => table(&t.table(5)),
            None => Err(err("report", "no :tune has run yet")),
        };
    }
    let needed = match what {
        "changed" => "print-changed",
        "ir-size" | "counts" | "bisect" => what,
        other => {
            return Err(Error::Command {
                command: "report".into(),
                message: format!("nothing to report called '{other}'"),
                suggestions: crate::nearest_names(other, REPORTS.iter().copied()),
            })
        }
    };
    match (what, active(s, "report", needed)?) {
        ("ir-size", Handle::IrSize(t)) => table(&t.table()),
        ("changed", Handle::PrintChanged(t)) => {
            let (changed, unchanged) = t.counts();
            text(format!("{changed} passes changed the IR, {unchanged} did not (their diffs were printed as they ran)"))
        }
        ("counts", Handle::Counts(t)) => table(&t.table()),
        ("bisect", Handle::Bisect(b)) => {
            let mut o = Output::default();
            o.push_text(b.text());
            o.push_table(&b.table());
            Ok(o)
        }
        _ => Err(err(
            "report",
            format!("the {needed} instrument has no {what} report"),
        )),
    }
}

/// `:report timing|timing-tree [run=N|run=all] [top=N]`: the last run
/// measured unless `run=` says which, or `all` for the total.
fn report_timing(s: &Session, a: &Args, what: &str) -> Result<Output> {
    let (mut run, mut top) = (None, Some(20));
    for (k, v) in &a.settings {
        match k.as_str() {
            "run" => run = Some(v.as_str()),
            "top" if what == "timing" => {
                top = Some(v.parse().ok().filter(|&n: &usize| n > 0).ok_or_else(|| {
                    err(
                        "report",
                        format!("top expects a positive number, got '{v}'"),
                    )
                })?)
            }
            other => {
                let top = if what == "timing" { " [top=N]" } else { "" };
                return Err(err(
                    "report",
                    format!("unknown setting '{other}' for {what} (expects {what} [run=N|run=all]{top})"),
                ));
            }
        }
    }
    let Handle::Timing(t) = active(s, "report", "timing")? else {
        return Err(err("report", "the timing instrument has no timing report"));
    };
    let (report, which) = timing_run(t, run, "report")?;
    let mut table = if what == "timing" {
        report.flat_table(top)
    } else {
        report.tree_table()
    };
    if let Some((title, note)) = which {
        table.title = format!("{}, {title}", table.title);
        table.notes.push(note);
    }
    super::table(&table)
}

/// What `:report timing` and `:plot timing` show of `t` for `run=` (`None`:
/// the last run; `N`: run N, the first 1; `all`: the total), and, when the
/// instrument measured more than one run or `run=` was given, how to say
/// which (a title's end and a note).
fn timing_run(
    t: &crate::instrument::Timing,
    run: Option<&str>,
    command: &str,
) -> Result<(crate::instrument::TimingReport, Option<(String, String)>)> {
    let runs = t.runs();
    let label = |i: usize| t.run_label(i).unwrap_or_default();
    let one = |i: usize| t.run_report(i).unwrap_or_else(|| t.report());
    match run {
        Some("all") => {
            let labels: Vec<String> = (0..runs).map(label).collect();
            let plural = if runs == 1 { "" } else { "s" };
            Ok((
                t.report(),
                Some((
                    format!("total over {runs} run{plural}"),
                    format!(
                        "the total over {runs} run{plural} since the instrument was made: {}",
                        labels.join("; ")
                    ),
                )),
            ))
        }
        Some(n) => {
            let i = n
                .parse::<usize>()
                .ok()
                .filter(|&i| i >= 1 && i <= runs)
                .ok_or_else(|| {
                    err(
                        command,
                        match runs {
                            0 => format!("run={n}: the timing instrument has measured no run yet"),
                            _ => format!("run= expects a run from 1 to {runs} or 'all', got '{n}'"),
                        },
                    )
                })?;
            Ok((
                one(i - 1),
                Some((
                    format!("run {i} of {runs}: {}", label(i - 1)),
                    format!("run {i} of the {runs} runs measured; run=all for their total"),
                )),
            ))
        }
        None if runs > 1 => Ok((
            one(runs - 1),
            Some((
                format!("run {runs} of {runs}: {}", label(runs - 1)),
                format!(
                    "the last of {runs} runs measured; run=N for another, run=all for their total"
                ),
            )),
        )),
        None => Ok((t.report(), None)),
    }
}

/// The newest active instrument called `needed`, for a report or a chart.
fn active<'s>(s: &'s Session, command: &str, needed: &str) -> Result<&'s Handle> {
    s.instruments
        .iter()
        .rev()
        .find(|i| i.handle.name() == needed)
        .map(|i| &i.handle)
        .ok_or_else(|| {
            err(
                command,
                format!("no {needed} instrument: add one with :instrument {needed}"),
            )
        })
}

const PLOT_USAGE: &str =
    "expects timing [top=N] [run=N|run=all] | ir-size | bench | compile-vs-runtime | tune | remarks [top=N] [run=N] [--out FILE.svg|FILE.png]";

/// `:plot`'s line: the chart, the file to write it to, `top=` and `run=`.
fn plot_args(a: &Args) -> Result<(&str, Option<&str>, usize, Option<&str>)> {
    let (what, out) = match a.words.as_slice() {
        [what] => (what.as_str(), None),
        [what, flag, file] if flag == "--out" => (what.as_str(), Some(file.as_str())),
        _ => return Err(err("plot", format!("{PLOT_USAGE}, got '{}'", a.rest))),
    };
    let mut top = 15;
    let mut run = None;
    for (k, v) in &a.settings {
        let positive = || {
            v.parse()
                .ok()
                .filter(|&n: &usize| n > 0)
                .ok_or_else(|| err("plot", format!("{k} expects a positive number, got '{v}'")))
        };
        match (k.as_str(), what) {
            ("top", "timing" | "remarks") => top = positive()?,
            ("run", "remarks") => {
                positive()?;
                run = Some(v.as_str())
            }
            ("run", "timing") => run = Some(v.as_str()),
            _ => {
                return Err(err(
                    "plot",
                    format!("unknown setting '{k}' for {what} ({PLOT_USAGE})"),
                ))
            }
        }
    }
    Ok((what, out, top, run))
}

pub(super) fn plot(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    use crate::chart::Chart;
    let (what, out, top, run) = plot_args(a)?;
    let bench = || {
        s.last_bench
            .as_ref()
            .ok_or_else(|| err("plot", "no :bench has run yet"))
    };
    let chart = match what {
        "timing" => match active(s, "plot", "timing")? {
            Handle::Timing(t) => {
                let (report, which) = timing_run(t, run, "plot")?;
                let mut chart = Chart::timing(&report, top);
                if let Some((title, _)) = which {
                    chart.title = format!("{}, {title}", chart.title);
                }
                chart
            }
            _ => return Err(err("plot", "the timing instrument has no timing report")),
        },
        "ir-size" => match active(s, "plot", "ir-size")? {
            Handle::IrSize(t) => Chart::ir_size(&t.series()),
            _ => return Err(err("plot", "the ir-size instrument has no size series")),
        },
        "bench" => Chart::runtime(bench()?),
        "compile-vs-runtime" => Chart::compile_vs_runtime(bench()?),
        "tune" => s
            .last_tune
            .as_ref()
            .ok_or_else(|| err("plot", "no :tune has run yet"))?
            .chart(),
        "remarks" => match active(s, "plot", "remarks")? {
            Handle::Remarks(r) => {
                let run = run.and_then(|r| r.parse().ok());
                Chart::remarks_of_run(r, run, top).map_err(|e| err("plot", e))?
            }
            _ => return Err(err("plot", "the remarks instrument has no remark counts")),
        },
        other => {
            return Err(Error::Command {
                command: "plot".into(),
                message: format!("no chart called '{other}'"),
                suggestions: crate::nearest_names(other, CHARTS.iter().copied()),
            })
        }
    };
    match out {
        Some(path) => {
            chart.write(path)?;
            text(format!("chart: {}\nwritten to {path}", chart.title))
        }
        None => {
            let mut o = Output::default();
            o.items
                .push(Item::Display(super::super::Bundle::chart(&chart)?));
            Ok(o)
        }
    }
}
