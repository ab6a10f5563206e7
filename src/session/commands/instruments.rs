//! Instruments: :instrument, :instruments, :report, :plot — all from one
//! table, [`BUILTINS`]: each built-in instrument's name, what it takes,
//! how it is made, its reports and charts, and its Python class. Dispatch,
//! `:help instrument`, completion, the reference and the Python binding
//! read it; nothing else lists instruments.

use super::*;
use crate::chart::Chart;
use crate::instrument::RemarkKind;
use std::any::Any;

/// What `NAME=VALUE` takes on `:instrument`'s line.
#[derive(Clone, Copy, Debug)]
pub enum Takes {
    /// A bare word (`timing`).
    Nothing,
    /// A value that may be left out (`print-changed[=P,...]`): its kind,
    /// and how `:help` shows it.
    Optional(Kind, &'static str),
    /// A value (`bisect=N`).
    Required(Kind, &'static str),
}

/// What an instrument is made from: its value and the line's settings.
pub struct Spec<'a> {
    pub value: Option<&'a str>,
    /// `functions=F,...`.
    pub functions: &'a [String],
    /// `kinds=K,...` (remarks).
    pub kinds: &'a [RemarkKind],
    /// `--out DIR`, and `replace=yes`.
    pub out: Option<&'a std::path::Path>,
    pub replace: bool,
    /// Where the printing instruments write, in the order passes ran
    /// (the session's shared buffer; `None`: kept by the instrument).
    pub printed: Option<&'a dyn Fn() -> Box<dyn std::io::Write>>,
}

impl Spec<'_> {
    /// The value as a comma list (empty when left out).
    fn names(&self) -> Vec<String> {
        comma_list(self.value.unwrap_or(""))
    }

    /// A pass filter of the value's passes, in the line's functions.
    fn filter(&self) -> PassFilter {
        PassFilter::passes(self.names()).in_functions(self.functions.iter().cloned())
    }
}

/// A made instrument, as the pipeline calls it and as reports read it.
#[derive(Clone)]
pub struct Made {
    pub instrument: Rc<dyn crate::Instrument>,
    pub any: Rc<dyn Any>,
}

fn made<T: crate::Instrument + 'static>(t: T) -> Result<Made> {
    let rc = Rc::new(t);
    Ok(Made {
        instrument: rc.clone(),
        any: rc,
    })
}

/// A report of an instrument: `:report NAME`.
pub struct Report {
    pub name: &'static str,
    /// Its settings and words after the name, as `:help report` shows them.
    pub usage: &'static str,
    show: fn(&Session, &Handle, &Args) -> Result<Output>,
}

/// A chart of an instrument: `:plot NAME` (`top=`, `run=` as it takes them).
pub struct Plot {
    pub name: &'static str,
    pub usage: &'static str,
    draw: fn(&Handle, usize, Option<&str>) -> Result<Chart>,
}

/// A built-in instrument: one row of [`BUILTINS`].
pub struct Builtin {
    /// The word `:instrument` takes.
    pub name: &'static str,
    pub takes: Takes,
    /// The line's settings it reads besides its value: `functions`,
    /// `kinds`, `out` (`--out DIR`, with `replace=yes`).
    pub settings: &'static [&'static str],
    /// What it replaces and what reports look for: its own name, or the
    /// instrument it is a form of (`skip` is a bisect).
    pub family: &'static str,
    /// One line for `:help instrument` and the reference.
    pub summary: &'static str,
    pub make: fn(&Spec) -> Result<Made>,
    pub reports: &'static [Report],
    pub charts: &'static [Plot],
    /// Its class in `passlab.instrument` (empty: not offered in Python).
    pub python: &'static str,
}

const fn builtin(
    name: &'static str,
    summary: &'static str,
    make: fn(&Spec) -> Result<Made>,
) -> Builtin {
    Builtin {
        name,
        takes: Takes::Nothing,
        settings: &[],
        family: name,
        summary,
        make,
        reports: &[],
        charts: &[],
        python: "",
    }
}

impl Builtin {
    const fn takes(mut self, takes: Takes) -> Builtin {
        self.takes = takes;
        self
    }
    const fn settings(mut self, settings: &'static [&'static str]) -> Builtin {
        self.settings = settings;
        self
    }
    const fn family(mut self, family: &'static str) -> Builtin {
        self.family = family;
        self
    }
    const fn reports(mut self, reports: &'static [Report]) -> Builtin {
        self.reports = reports;
        self
    }
    const fn charts(mut self, charts: &'static [Plot]) -> Builtin {
        self.charts = charts;
        self
    }
    const fn python(mut self, class: &'static str) -> Builtin {
        self.python = class;
        self
    }

    /// How `:help instrument` shows it: `print-changed[=P,...]`.
    pub fn usage(&self) -> String {
        match self.takes {
            Takes::Nothing => self.name.to_string(),
            Takes::Optional(_, v) => format!("{}[={v}]", self.name),
            Takes::Required(_, v) => format!("{}={v}", self.name),
        }
    }
}

/// The built-in instruments. A new one: its file in `src/instrument/`
/// (the hooks, and the back end's through `machine_needs`), and a row
/// here.
pub const BUILTINS: &[Builtin] = &[
    builtin("timing", "each pass's time, nested as the passes ran (LLVM's -time-passes, per run)", |_| made(Timing::new()))
        .reports(&[
            Report { name: "timing", usage: "[top=N] [run=N|run=all]", show: |s, h, a| report_timing(s, h, a, "timing") },
            Report { name: "timing-tree", usage: "[run=N|run=all]", show: |s, h, a| report_timing(s, h, a, "timing-tree") },
        ])
        .charts(&[Plot { name: "timing", usage: "[top=N] [run=N|run=all]", draw: chart_timing }])
        .python("PassTimingInstrument"),
    builtin("ir-size", "the instruction count after each pass", |_| made(IrSize::new()))
        .reports(&[Report { name: "ir-size", usage: "", show: |_, h, _| table(&get::<IrSize>(h)?.table()) }])
        .charts(&[Plot { name: "ir-size", usage: "", draw: |h, _, _| Ok(Chart::ir_size(&get::<IrSize>(h)?.series())) }])
        .python("IRSizeInstrument"),
    builtin("print-before", "the IR before the passes named (all: every pass), of the functions named", |sp| made(print_passes(sp, PrintPasses::before)))
        .takes(Takes::Required(Kind::WatchedPasses, "P,..."))
        .settings(&["functions"])
        .python("PrintIRInstrument"),
    builtin("print-after", "the IR after the passes named, of the functions named", |sp| made(print_passes(sp, PrintPasses::after)))
        .takes(Takes::Required(Kind::WatchedPasses, "P,..."))
        .settings(&["functions"])
        .python("PrintIRInstrument"),
    builtin("print-changed", "a diff of each function a pass changed (LLVM's -print-changed=diff), the others counted", |sp| {
        let p = PrintChanged::new(sp.filter());
        made(match sp.printed {
            Some(w) => p.writing_to(w()),
            None => p,
        })
    })
    .takes(Takes::Optional(Kind::WatchedPasses, "P,..."))
    .settings(&["functions"])
    .reports(&[Report { name: "changed", usage: "", show: |_, h, _| {
        let (changed, unchanged) = get::<PrintChanged>(h)?.counts();
        text(format!("{changed} passes changed the IR, {unchanged} did not (their diffs were printed as they ran)"))
    } }]),
    builtin("verify", "the verifier after every pass (the machine verifier in code generation)", |_| made(VerifyEach::new())),
    builtin("bisect", "let the first N optional passes run, skip the rest (LLVM's -opt-bisect-limit)", |sp| {
        made(Bisect::limited(sp.value).map_err(|e| err("instrument", e))?)
    })
    .takes(Takes::Required(super::kinds::count(0, super::kinds::ANY), "N"))
    .reports(&[Report { name: "bisect", usage: "", show: |_, h, _| {
        let b = get::<Bisect>(h)?;
        let mut o = Output::default();
        o.push_text(b.text());
        o.push_table(&b.table());
        Ok(o)
    } }]),
    builtin("skip", "skip the passes named wherever they run (a bisect that counts every pass)", |sp| {
        made(Bisect::new(None).skipping(sp.names()))
    })
    .takes(Takes::Required(Kind::Passes, "P,..."))
    .family("bisect"),
    builtin("trace", "a line per pass as it runs, nested", |_| made(Trace::emitting())),
    builtin("counts", "how many times each pass ran and changed the IR", |_| made(Counts::new()))
        .reports(&[Report { name: "counts", usage: "", show: |_, h, _| table(&get::<Counts>(h)?.table()) }])
        .python("PassCountsInstrument"),
    builtin("explore", "record each pass's IR for :explore", |_| made(crate::instrument::Explore::new())),
    builtin("remarks", "LLVM's optimization remarks, by the pass that emitted them (of the passes named)", |sp| {
        made(crate::instrument::Remarks::filtered(crate::instrument::RemarkFilter {
            passes: sp.names(),
            kinds: sp.kinds.to_vec(),
            functions: sp.functions.to_vec(),
        }))
    })
    .takes(Takes::Optional(Kind::RemarkPasses, "P,..."))
    .settings(&["functions", "kinds"])
    .reports(&[Report {
        name: "remarks",
        usage: "[source [top=N] [--out FILE.html] | runs | compare [RUN RUN] [top=N]] [run=N] [passes=P,...] [kinds=K,...] [functions=F,...]",
        show: report_remarks,
    }])
    .charts(&[Plot { name: "remarks", usage: "[top=N] [run=N]", draw: |h, top, run| {
        let run = run.and_then(|r| r.parse().ok());
        Chart::remarks_of_run(&*get::<crate::instrument::Remarks>(h)?, run, top).map_err(|e| err("plot", e))
    } }])
    .python("RemarksInstrument"),
    builtin("dump-ir", "the IR after each pass that changed it (of the passes named), the module or the functions named, in numbered files with an index, into a folder passlab makes", |sp| {
        let out = sp.out.ok_or_else(|| err("instrument", "dump-ir writes into a folder: :instrument dump-ir --out DIR (a new folder, which passlab makes)"))?;
        made(crate::instrument::DumpIr::new(out, sp.filter(), sp.replace)?)
    })
    .takes(Takes::Optional(Kind::WatchedPasses, "P,..."))
    .settings(&["functions", "out"])
    .reports(&[Report { name: "dump-ir", usage: "", show: report_dump_ir }])
    .python("DumpIRInstrument"),
];

fn print_passes(sp: &Spec, new: fn(PassFilter) -> PrintPasses) -> PrintPasses {
    let p = new(sp.filter());
    match sp.printed {
        Some(w) => p.writing_to(w()),
        None => p,
    }
}

/// The instrument of `h` as a `T` (the table's report and chart functions
/// know which it is).
fn get<T: 'static>(h: &Handle) -> Result<Rc<T>> {
    h.made.any.clone().downcast::<T>().map_err(|_| {
        Error::Invalid(format!(
            "the {} instrument is not what its report expects",
            h.kind.name
        ))
    })
}

/// The table's row called `name`.
pub fn builtin_named(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// An instrument of the session: its row and what was made.
#[derive(Clone)]
pub(crate) struct Handle {
    pub(crate) kind: &'static Builtin,
    made: Made,
}

impl Handle {
    pub(crate) fn instrument(&self) -> Rc<dyn crate::Instrument> {
        self.made.instrument.clone()
    }

    /// The instrument as a `T`, if it is one.
    pub(crate) fn get<T: 'static>(&self) -> Option<Rc<T>> {
        self.made.any.clone().downcast::<T>().ok()
    }

    /// The family reports look for.
    fn family(&self) -> &'static str {
        self.kind.family
    }

    /// Instruments of the same family replace each other, except printing
    /// before and after, which take different pass lists.
    fn replaces(&self, other: &Handle) -> bool {
        self.kind.family == other.kind.family
    }
}

const fn count_names() -> usize {
    BUILTINS.len() + 1
}

/// What `:instrument` completes: the table's names and `clear`.
pub(super) const INSTRUMENT_NAMES: [&str; count_names()] = {
    let mut out = ["clear"; count_names()];
    let mut i = 0;
    while i < BUILTINS.len() {
        out[i] = BUILTINS[i].name;
        i += 1;
    }
    out
};

const fn count_valued() -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < BUILTINS.len() {
        if !matches!(BUILTINS[i].takes, Takes::Nothing) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The settings `:instrument` takes, checked and completed before it runs:
/// each valued instrument's `NAME=`, then the shared ones.
pub(super) const INSTRUMENT_SETTINGS: [Setting; count_valued() + 3] = {
    let mut out = [set("functions", Kind::Functions); count_valued() + 3];
    out[1] = set("kinds", Kind::ListOf(RemarkKind::NAMES));
    out[2] = set("replace", Kind::OneOf(super::YES_NO));
    let (mut i, mut n) = (0, 3);
    while i < BUILTINS.len() {
        match BUILTINS[i].takes {
            Takes::Nothing => {}
            Takes::Optional(kind, _) | Takes::Required(kind, _) => {
                out[n] = set(BUILTINS[i].name, kind);
                n += 1;
            }
        }
        i += 1;
    }
    out
};

/// `:help instrument`'s list: each built-in with what it takes.
pub(super) fn details() -> String {
    let mut out =
        String::from("  instruments (several may be given; the same one again replaces it):\n");
    for b in BUILTINS {
        let mut head = b.usage();
        for s in b.settings {
            head.push_str(match *s {
                "functions" => " [functions=F,...]",
                "kinds" => " [kinds=K,...]",
                "out" => " --out DIR [replace=yes]",
                _ => "",
            });
        }
        out.push_str(&format!("  {head}\n      {}\n", b.summary));
    }
    out.push_str("  clear\n      remove every instrument\n");
    out
}

/// The instruments' reference: a Markdown table from [`BUILTINS`].
pub(super) fn reference_markdown() -> String {
    let mut out = String::from(
        "| instrument | what it records | reports | charts | Python |\n|---|---|---|---|---|\n",
    );
    for b in BUILTINS {
        let names = |v: Vec<&str>| {
            v.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let python = if b.python.is_empty() {
            String::new()
        } else {
            format!("`passlab.instrument.{}`", b.python)
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {python} |\n",
            b.usage().replace('|', "\\|"),
            crate::table::markdown_prose(b.summary),
            names(b.reports.iter().map(|r| r.name).collect()),
            names(b.charts.iter().map(|c| c.name).collect()),
        ));
    }
    out
}

/// `:instrument`'s line: each instrument named (a word, or a setting
/// with its value), in order, and the settings that apply to them all.
struct Requested {
    items: Vec<(&'static Builtin, Option<String>)>,
    /// `kinds=missed,...`: the remarks instrument keeps only these kinds.
    kinds: Vec<RemarkKind>,
    /// `functions=F,...`: the printing instruments of this command show
    /// only these functions (LLVM's -filter-print-funcs), the remarks
    /// instrument only their remarks.
    functions: Vec<String>,
    out: Option<String>,
    replace: bool,
    clear: bool,
}

fn unknown_instrument(name: &str) -> Error {
    Error::Command {
        command: "instrument".into(),
        message: format!("unknown instrument '{name}'"),
        suggestions: crate::nearest_names(name, INSTRUMENT_NAMES.iter().copied()),
    }
}

fn requested(a: &Args) -> Result<Requested> {
    if a.rest.is_empty() {
        return Err(err(
            "instrument",
            format!("expects one of: {}", INSTRUMENT_NAMES.join(", ")),
        ));
    }
    let mut words = a.words.clone();
    if words.last().is_some_and(|w| w == "--out") {
        return Err(err(
            "instrument",
            "--out expects a folder: :instrument dump-ir --out DIR (a new folder, which passlab makes)",
        ));
    }
    let out = super::take_out(&mut words, "instrument", "")?;
    let mut r = Requested {
        items: Vec::new(),
        kinds: Vec::new(),
        functions: Vec::new(),
        out,
        replace: false,
        clear: false,
    };
    for (k, v) in &a.settings {
        match k.as_str() {
            "functions" => r.functions.extend(comma_list(v)),
            "kinds" => r.kinds.extend(remark_kinds("instrument", v)?),
            "replace" => r.replace = v == "yes",
            _ => {}
        }
    }
    for w in &words {
        if w == "clear" {
            r.clear = true;
            continue;
        }
        let b = builtin_named(w).ok_or_else(|| unknown_instrument(w))?;
        if let Takes::Required(_, v) = b.takes {
            return Err(err("instrument", format!("{w} takes a value: {w}={v}")));
        }
        r.items.push((b, None));
    }
    for (k, v) in &a.settings {
        if matches!(k.as_str(), "functions" | "kinds" | "replace") {
            continue;
        }
        let b = builtin_named(k).ok_or_else(|| unknown_instrument(k))?;
        r.items.push((b, Some(v.clone())));
    }
    let takes = |setting: &str| r.items.iter().any(|(b, _)| b.settings.contains(&setting));
    if !r.kinds.is_empty() && !takes("kinds") {
        return Err(err(
            "instrument",
            "kinds= filters remarks: :instrument remarks kinds=missed",
        ));
    }
    if (r.out.is_some() || r.replace) && !takes("out") {
        return Err(err(
            "instrument",
            "--out DIR (and replace=) is for dump-ir: :instrument dump-ir --out DIR",
        ));
    }
    Ok(r)
}

pub(super) fn instrument(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let r = requested(a)?;
    if r.clear {
        s.instruments.clear();
    }
    for (b, value) in &r.items {
        if b.settings.contains(&"out") {
            let_go_of_folder(s, b, &r);
        }
        let printed = s.printed.clone();
        let writer = move || -> Box<dyn std::io::Write> { Box::new(printed.clone()) };
        let spec = Spec {
            value: value.as_deref(),
            functions: &r.functions,
            kinds: &r.kinds,
            out: r.out.as_deref().map(std::path::Path::new),
            replace: r.replace,
            printed: Some(&writer),
        };
        let handle = Handle {
            kind: b,
            made: (b.make)(&spec)?,
        };
        let mut spec = match value {
            Some(v) => format!("{}={v}", b.name),
            None => b.name.to_string(),
        };
        if b.name == "remarks" {
            let filter = crate::instrument::RemarkFilter {
                passes: Vec::new(),
                kinds: r.kinds.clone(),
                functions: r.functions.clone(),
            };
            spec.push_str(&filter.settings());
        }
        if let Some(d) = handle.get::<crate::instrument::DumpIr>() {
            spec.push_str(&format!(" --out {}", d.folder().display()));
        }
        s.instruments.retain(|i| !i.handle.replaces(&handle));
        s.instruments.push(Active { spec, handle });
    }
    text(format!("instruments: {}", describe(s)))
}

/// Before an instrument writing into the folder an active one of its
/// family writes into is made, the active one lets go of the folder (the
/// new one starts it again).
fn let_go_of_folder(s: &mut Session, b: &Builtin, r: &Requested) {
    let Some(out) = &r.out else {
        return;
    };
    let same = |d: &crate::instrument::DumpIr| {
        let (a, b) = (d.folder(), std::path::Path::new(out));
        a == b || a.canonicalize().ok() == b.canonicalize().ok()
    };
    s.instruments.retain(|i| {
        i.handle.kind.family != b.family
            || !i
                .handle
                .get::<crate::instrument::DumpIr>()
                .is_some_and(|d| same(&d))
    });
}

/// `:report dump-ir`: the folder, and the files written.
fn report_dump_ir(_: &Session, h: &Handle, a: &Args) -> Result<Output> {
    if a.words.len() != 1 || !a.settings.is_empty() {
        return Err(err(
            "report",
            format!("dump-ir takes nothing more, got '{}'", a.rest),
        ));
    }
    let d = get::<crate::instrument::DumpIr>(h)?;
    let dumps = d.dumps();
    let mut t = Table::new(
        &format!("IR dumps in {}", d.folder().display()),
        &["file", "pass", "unit", "instructions"],
    );
    for x in &dumps {
        t.push([
            x.file.clone(),
            x.pass.clone(),
            format!("{} {}", x.unit, x.target),
            x.instructions.to_string(),
        ]);
    }
    if dumps.is_empty() {
        t.notes.push(
            "nothing dumped yet: the instrument writes as :run's passes change the IR".into(),
        );
    } else {
        t.notes
            .push(format!("{} files; index.tsv lists them", dumps.len()));
    }
    if let Some(why) = d.stopped() {
        t.notes.push(why);
    }
    table(&t)
}

/// The reports that are not an instrument's: the last `:bench`'s and
/// `:tune`'s.
const SESSION_REPORTS: &[&str] = &["bench", "tune"];

const fn count_reports() -> usize {
    let (mut n, mut i) = (SESSION_REPORTS.len(), 0);
    while i < BUILTINS.len() {
        n += BUILTINS[i].reports.len();
        i += 1;
    }
    n
}

/// What `:report` reports: every row's reports, then the session's.
pub(super) const REPORTS: [&str; count_reports()] = {
    let mut out = [""; count_reports()];
    let (mut n, mut i) = (0, 0);
    while i < BUILTINS.len() {
        let mut j = 0;
        while j < BUILTINS[i].reports.len() {
            out[n] = BUILTINS[i].reports[j].name;
            n += 1;
            j += 1;
        }
        i += 1;
    }
    let mut j = 0;
    while j < SESSION_REPORTS.len() {
        out[n] = SESSION_REPORTS[j];
        n += 1;
        j += 1;
    }
    out
};

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
    for (k, v) in &a.settings {
        match k.as_str() {
            // Numbers checked against their kinds (the command table).
            "top" => q.top = Some(super::whole("report", k, v)?),
            "run" => q.run = Some(super::whole("report", k, v)?),
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

fn report_remarks(s: &Session, h: &Handle, a: &Args) -> Result<Output> {
    use crate::instrument::{remark_run_number, remark_runs_compared};
    let mut words = a.words.clone();
    let out = super::take_out(&mut words, "report", ", such as remarks.html")?;
    let q = remarks_query(a)?;
    let r = get::<crate::instrument::Remarks>(h)?;
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

/// The charts that are not an instrument's.
const SESSION_CHARTS: &[&str] = &["bench", "compile-vs-runtime", "tune"];

const fn count_charts() -> usize {
    let (mut n, mut i) = (SESSION_CHARTS.len(), 0);
    while i < BUILTINS.len() {
        n += BUILTINS[i].charts.len();
        i += 1;
    }
    n
}

/// What `:plot` draws: every row's charts, then the session's.
pub(super) const CHARTS: [&str; count_charts()] = {
    let mut out = [""; count_charts()];
    let (mut n, mut i) = (0, 0);
    while i < BUILTINS.len() {
        let mut j = 0;
        while j < BUILTINS[i].charts.len() {
            out[n] = BUILTINS[i].charts[j].name;
            n += 1;
            j += 1;
        }
        i += 1;
    }
    let mut j = 0;
    while j < SESSION_CHARTS.len() {
        out[n] = SESSION_CHARTS[j];
        n += 1;
        j += 1;
    }
    out
};

/// `:help report`'s and `:help plot`'s list: each report or chart with
/// what it takes, and the instrument it needs.
pub(super) fn reports_details(charts: bool) -> String {
    let mut out = String::new();
    for b in BUILTINS {
        let rows: Vec<(&str, &str)> = if charts {
            b.charts.iter().map(|c| (c.name, c.usage)).collect()
        } else {
            b.reports.iter().map(|r| (r.name, r.usage)).collect()
        };
        for (name, usage) in rows {
            let head = format!("{name} {usage}");
            out.push_str(&format!(
                "  {}
      needs :instrument {}
",
                head.trim_end(),
                b.family
            ));
        }
    }
    let session: &[(&str, &str)] = if charts {
        &[
            ("bench", "the last :bench's run times"),
            (
                "compile-vs-runtime",
                "the last :bench's compile and run times",
            ),
            ("tune", "the last :tune's best so far"),
        ]
    } else {
        &[
            ("bench", "the last :bench"),
            ("tune", "the last :tune's best orderings"),
        ]
    };
    for (name, what) in session {
        out.push_str(&format!(
            "  {name}
      {what}
"
        ));
    }
    out
}

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
    let Some(what) = a.words.first().map(String::as_str) else {
        return Err(err(
            "report",
            format!("expects what to report: {}", REPORTS.join(", ")),
        ));
    };
    if SESSION_REPORTS.contains(&what) {
        let what = one_word(a, "bench or tune, alone")?;
        return match what {
            "bench" => match &s.last_bench {
                Some(c) => table(&c.table()),
                None => Err(err("report", "no :bench has run yet")),
            },
            _ => match &s.last_tune {
                Some(t) => table(&t.table(5)),
                None => Err(err("report", "no :tune has run yet")),
            },
        };
    }
    let Some((b, r)) = BUILTINS
        .iter()
        .find_map(|b| b.reports.iter().find(|r| r.name == what).map(|r| (b, r)))
    else {
        return Err(Error::Command {
            command: "report".into(),
            message: format!("nothing to report called '{what}'"),
            suggestions: crate::nearest_names(what, REPORTS.iter().copied()),
        });
    };
    // Reports taking no settings take no more words either.
    if r.usage.is_empty() && (a.words.len() > 1 || !a.settings.is_empty()) {
        return Err(err(
            "report",
            format!("{what} takes nothing more, got '{}'", a.rest),
        ));
    }
    let h = active(s, "report", b.family)?;
    (r.show)(s, h, a)
}

/// `:report timing|timing-tree [run=N|run=all] [top=N]`: the last run
/// measured unless `run=` says which, or `all` for the total.
fn report_timing(_: &Session, h: &Handle, a: &Args, what: &str) -> Result<Output> {
    if a.words.len() > 1 {
        return Err(err(
            "report",
            format!(
                "{what} takes settings only ([run=N|run=all]), got '{}'",
                a.rest
            ),
        ));
    }
    let (mut run, mut top) = (None, Some(20));
    for (k, v) in &a.settings {
        match k.as_str() {
            "run" => run = Some(v.as_str()),
            "top" if what == "timing" => top = Some(super::whole("report", k, v)?),
            other => {
                let top = if what == "timing" { " [top=N]" } else { "" };
                return Err(err(
                    "report",
                    format!("unknown setting '{other}' for {what} (expects {what} [run=N|run=all]{top})"),
                ));
            }
        }
    }
    let t = get::<Timing>(h)?;
    let (report, which) = timing_run(&t, run, "report")?;
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

/// `:plot timing`: the run `run=` names (the last by default).
fn chart_timing(h: &Handle, top: usize, run: Option<&str>) -> Result<Chart> {
    let t = get::<Timing>(h)?;
    let (report, which) = timing_run(&t, run, "plot")?;
    let mut chart = Chart::timing(&report, top);
    if let Some((title, _)) = which {
        chart.title = format!("{}, {title}", chart.title);
    }
    Ok(chart)
}

/// The newest active instrument called `needed`, for a report or a chart.
fn active<'s>(s: &'s Session, command: &str, needed: &str) -> Result<&'s Handle> {
    s.instruments
        .iter()
        .rev()
        .find(|i| i.handle.family() == needed)
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
        match (k.as_str(), what) {
            // Numbers checked against their kinds (the command table).
            ("top", "timing" | "remarks") => top = super::whole("plot", k, v)?,
            ("run", "remarks") => {
                super::whole::<usize>("plot", k, v)?;
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
    let (what, out, top, run) = plot_args(a)?;
    let bench = || {
        s.last_bench
            .as_ref()
            .ok_or_else(|| err("plot", "no :bench has run yet"))
    };
    let chart = match what {
        "bench" => Chart::runtime(bench()?),
        "compile-vs-runtime" => Chart::compile_vs_runtime(bench()?),
        "tune" => s
            .last_tune
            .as_ref()
            .ok_or_else(|| err("plot", "no :tune has run yet"))?
            .chart(),
        other => {
            let Some((b, p)) = BUILTINS
                .iter()
                .find_map(|b| b.charts.iter().find(|c| c.name == other).map(|c| (b, c)))
            else {
                return Err(Error::Command {
                    command: "plot".into(),
                    message: format!("no chart called '{other}'"),
                    suggestions: crate::nearest_names(other, CHARTS.iter().copied()),
                });
            };
            (p.draw)(active(s, "plot", b.family)?, top, run)?
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
