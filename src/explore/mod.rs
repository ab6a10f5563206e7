//! The pipeline explorer: a run recorded by [`Explore`](crate::instrument::Explore)
//! shown the way Compiler Explorer's "Opt Pipeline" view shows one — the
//! passes in the order they ran, nested under the pass that ran them, the
//! ones that changed a function marked with its size change, and the
//! before/after diff of any of them.
//!
//! Two forms from the same [`Recording`]: text for terminals
//! ([`summary`], [`pass_list`], [`pass_diff`]) and one self-contained HTML
//! page or fragment ([`html`]) — the data gzip-compressed and embedded, a
//! function's history decompressed in the browser only when it is
//! selected, highlight.js's LLVM grammar for the IR, nothing fetched from
//! the network. Past a size budget, the histories of the functions changed
//! least are left out (the page says so, and `:explore FUNCTION` shows any
//! of them).
//!
//! The page is the passes column by column and the functions as gzip'd
//! JSON, each function's history its own gzip'd blob (embedded most-changed
//! first while the page stays within its budget, [`BUDGET_KEY`]): the first
//! text, then per version the renumbering of the values and the edit script
//! from the renumbered text ([`crate::diff::renumbered_edits`]: a deleted
//! instruction costs its line, not every renumbered line after it: the
//! page of sqlite3 with every history went from 28.2 MB to 10.6 MB), and
//! the final text's
//! hash, which the page checks when it replays a history. Four files sit
//! beside this one:
//! `explorer.js` (plain DOM; decompresses a history when its function is
//! selected), `explorer.css` (scoped to `.plab-explore`, stating every
//! table property a host's stylesheet may set), `hljs.js` (highlight.js
//! and its LLVM grammar, vendored by `scripts/vendor-hljs.sh`) and
//! `page.js` (what it shares with the annotated source, `source.rs`). Nothing
//! here knows Jupyter: the session puts the page in a `text/html` bundle.

#![forbid(unsafe_code)]

mod source;

pub use source::{remarks_html, remarks_text, SourceStats};

use crate::instrument::{Reach, Recording};
use crate::llvm::IrUnit;
use crate::table::Table;
use crate::{Error, Result};
use base64::Engine;
use std::fmt::Write;
use std::io::Write as _;

const HLJS: &str = include_str!("hljs.js");
const SCRIPT: &str = include_str!("explorer.js");
/// What the explorer and the annotated source share (in both pages).
const COMMON: &str = include_str!("page.js");
const STYLE: &str = include_str!("explorer.css");

/// The most bytes one explorer page may take, everything counted (data,
/// script, styles); past it the histories of the functions changed least
/// are left out and named. 20 MB: the whole of sqlite3 at default<O2> fits.
pub const DEFAULT_BUDGET: usize = 20_000_000;

/// The config key of the page budget (bytes), so that `:with
/// config.explore.max_page_bytes=50000000` allows a larger page.
pub const BUDGET_KEY: &str = "explore.max_page_bytes";

inventory::submit!(crate::config::Declarations(config_options));

fn config_options() -> Vec<crate::ConfigOption> {
    vec![crate::ConfigOption::new(
        BUDGET_KEY,
        DEFAULT_BUDGET as i64,
        "the most bytes one pipeline explorer page may take (data, script and styles); past it the functions changed least are listed without their histories",
    )
    .with_range(100_000.0, (1u64 << 40) as f64)]
}

/// The page budget of the current context ([`BUDGET_KEY`]).
pub fn budget() -> usize {
    crate::PassContext::current()
        .config_int(BUDGET_KEY)
        .ok()
        .and_then(|b| usize::try_from(b).ok())
        .unwrap_or(DEFAULT_BUDGET)
}

fn unit_word(u: IrUnit) -> &'static str {
    match u {
        IrUnit::Module => "module",
        IrUnit::Cgscc => "cgscc",
        IrUnit::Function => "function",
        IrUnit::Loop => "loop",
        IrUnit::Other => "other",
    }
}

/// The function named `name` in the recording, or an error suggesting the
/// nearest names.
pub fn function_index(rec: &Recording, name: &str) -> Result<usize> {
    rec.function(name).ok_or_else(|| Error::NotFound {
        what: "function in the recorded run",
        name: name.into(),
        suggestions: crate::nearest_names(name, rec.functions.iter().map(|f| f.name.as_str())),
    })
}

/// The run at a glance: one row per function (those changed most first),
/// at most `top` rows.
pub fn summary(rec: &Recording, top: usize) -> Table {
    let (runs, versions) = rec.totals();
    let changed = rec
        .functions
        .iter()
        .filter(|f| !f.versions.is_empty())
        .count();
    let mut t = Table::new(
        &format!(
            "{} on {}: {runs} pass executions, {} functions ({changed} changed, {versions} versions)",
            rec.pipeline,
            rec.module,
            rec.functions.len()
        ),
        &[
            "function",
            "passes run>",
            "changed it>",
            "instructions before>",
            "after>",
        ],
    );
    let mut order: Vec<usize> = (0..rec.functions.len()).collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (&rec.functions[a], &rec.functions[b]);
        fb.versions
            .len()
            .cmp(&fa.versions.len())
            .then(fa.name.cmp(&fb.name))
    });
    for &i in order.iter().take(top) {
        let f = &rec.functions[i];
        let (ran, changed) = rec.counts(i);
        t.push([
            f.name.clone(),
            ran.to_string(),
            changed.to_string(),
            f.instructions_before.to_string(),
            f.instructions_after.to_string(),
        ]);
    }
    if order.len() > top {
        t.notes.push(format!(
            "{} more functions; :explore FUNCTION lists the passes on one",
            order.len() - top
        ));
    }
    t
}

/// One line about function `f`: passes run, changed, sizes.
pub fn function_line(rec: &Recording, f: usize) -> String {
    let log = &rec.functions[f];
    let (ran, changed) = rec.counts(f);
    let fate = match (log.instructions_before, log.instructions_after) {
        (0, a) => format!("created during the run, {a} instructions at the end"),
        (b, 0) => format!("{b} instructions, deleted during the run"),
        (b, a) => format!("{b} -> {a} instructions"),
    };
    format!(
        "{}: {ran} passes ran on it, {changed} changed it; {fate}",
        log.name
    )
}

/// The passes that ran on function `f`, numbered as [`pass_diff`] takes
/// them, indented by nesting, those that changed it marked `*` with their
/// size change, and how many remarks each made on it (when recorded).
pub fn pass_list(rec: &Recording, f: usize) -> String {
    let log = &rec.functions[f];
    let mut by_pass = std::collections::HashMap::new();
    let mut before = log.instructions_before;
    for v in &log.versions {
        by_pass.insert(v.pass as usize, (before, v.instructions, v.deleted));
        before = v.instructions;
    }
    let mut out = function_line(rec, f);
    out.push('\n');
    let mut remarks = std::collections::HashMap::new();
    for r in rec.remarks.iter().filter(|r| r.function == log.name) {
        *remarks.entry(r.execution).or_insert(0usize) += 1;
    }
    for (n, &i) in rec.passes_on(f).iter().enumerate() {
        let p = &rec.passes[i];
        let mark = match by_pass.get(&i) {
            Some((_, _, true)) => "  * deleted".to_string(),
            Some((b, a, false)) => format!("  * {b} -> {a}"),
            None => String::new(),
        };
        let on = if unit_shown(p.unit) {
            format!(" [{} {}]", unit_word(p.unit), p.target)
        } else {
            String::new()
        };
        let said = match remarks.get(&i) {
            Some(1) => "  (1 remark)".to_string(),
            Some(k) => format!("  ({k} remarks)"),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "{:>4} {}{}{on}{mark}{said}",
            n + 1,
            "  ".repeat(p.depth as usize),
            p.name
        );
    }
    out
}

/// A filter on the passes the explorer lists (`:explore FUNCTION
/// pass=PATTERN changed=yes`, the page's search box and toggle): a pattern
/// matched, ignoring case, against each pass's name and, where the list
/// shows it, the IR unit it ran on (`loop for.body`, `cgscc (f, g)`) — a
/// substring, or with `*`, `?` or `[` a glob over the whole of one of
/// them; and whether only the passes that changed the function (over the
/// whole run: that changed anything) are kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassSearch {
    pub pattern: String,
    pub changed_only: bool,
}

impl PassSearch {
    /// Whether it keeps every pass.
    pub fn is_empty(&self) -> bool {
        self.pattern.is_empty() && !self.changed_only
    }

    /// How the filter reads in a list's heading: `matching 'licm', that changed it`.
    fn describe(&self, changed: &str) -> String {
        match (self.pattern.is_empty(), self.changed_only) {
            (false, true) => format!("matching '{}', that changed {changed}", self.pattern),
            (false, false) => format!("matching '{}'", self.pattern),
            (true, _) => format!("that changed {changed}"),
        }
    }

    /// A test of a pass by its name and what it ran on; an error if the
    /// pattern is not a valid glob.
    fn matcher(&self) -> Result<impl Fn(&crate::instrument::PassNode) -> bool> {
        let needle = self.pattern.to_lowercase();
        let glob = if self.pattern.contains(['*', '?', '[']) {
            Some(glob::Pattern::new(&needle).map_err(|e| {
                Error::Invalid(format!(
                    "'{}' is not a valid pattern: {e} (a part of a pass's name such as licm, or a glob such as loop-*)",
                    self.pattern
                ))
            })?)
        } else {
            None
        };
        let options = glob::MatchOptions {
            case_sensitive: false,
            ..glob::MatchOptions::new()
        };
        Ok(move |p: &crate::instrument::PassNode| {
            if needle.is_empty() {
                return true;
            }
            let test = |c: &str| match &glob {
                Some(g) => g.matches_with(c, options),
                None => c.to_lowercase().contains(&needle),
            };
            test(&p.name)
                || (unit_shown(p.unit)
                    && (test(&format!("{} {}", unit_word(p.unit), p.target)) || test(&p.target)))
        })
    }
}

/// The length in bytes of the longest text `a` and `b` share.
fn longest_common(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut best = 0;
    let mut prev = vec![0usize; b.len() + 1];
    for &x in a {
        let mut cur = vec![0usize; b.len() + 1];
        for (j, &y) in b.iter().enumerate() {
            if x == y {
                cur[j + 1] = prev[j] + 1;
                best = best.max(cur[j + 1]);
            }
        }
        prev = cur;
    }
    best
}

/// Whether the pass lists show the IR unit a pass ran on (not for module
/// and function passes: the function is the one listed).
fn unit_shown(u: IrUnit) -> bool {
    !matches!(u, IrUnit::Module | IrUnit::Function)
}

/// The error of a search that kept no pass of `ran` (the passes listed
/// before filtering), naming the passes that ran whose names are nearest.
fn nothing_matched(rec: &Recording, ran: &[usize], search: &PassSearch, on: &str) -> Error {
    let mut names: Vec<&str> = ran.iter().map(|&i| &*rec.passes[i].name).collect();
    names.sort_unstable();
    names.dedup();
    let matching = search
        .matcher()
        .map(|m| ran.iter().filter(|&&i| m(&rec.passes[i])).count());
    let message = match matching {
        Ok(n) if n > 0 => format!(
            "{n} passes matching '{}' ran on {on}, none of them changed it (changed=no lists them)",
            search.pattern
        ),
        _ if search.pattern.is_empty() => format!("no pass changed {on}"),
        _ => {
            let mut near = crate::nearest_names(&search.pattern, names.iter().copied());
            if near.is_empty() {
                // Names sharing a long part with the pattern
                // (`loop-vectorize` for `vectorise`), longest first.
                let lower = search.pattern.to_lowercase();
                let least = (lower.chars().count() * 3).div_ceil(5).max(4);
                let mut shared: Vec<(usize, &str)> = names
                    .iter()
                    .map(|n| (longest_common(&lower, n), *n))
                    .filter(|&(k, _)| k >= least)
                    .collect();
                shared.sort_by_key(|&(k, n)| (std::cmp::Reverse(k), n.len()));
                near = shared
                    .into_iter()
                    .take(5)
                    .map(|(_, n)| n.to_string())
                    .collect();
            }
            let some = if near.is_empty() {
                format!(
                    " (passes that ran: {}{})",
                    names.iter().take(8).copied().collect::<Vec<_>>().join(", "),
                    if names.len() > 8 { ", …" } else { "" }
                )
            } else {
                String::new()
            };
            format!(
                "no pass matching '{}' ran on {on}{some}{}",
                search.pattern,
                crate::error::suggest(&near)
            )
        }
    };
    Error::Invalid(message)
}

/// The passes on function `f` that `search` keeps, numbered as in
/// [`pass_list`] (so that `:explore FUNCTION N` shows one), after a line
/// saying how many of how many; an error naming near pass names when it
/// keeps none.
pub fn pass_list_searched(rec: &Recording, f: usize, search: &PassSearch) -> Result<String> {
    let full = pass_list(rec, f);
    if search.is_empty() {
        return Ok(full);
    }
    let ran = rec.passes_on(f);
    let changed: std::collections::HashSet<usize> = rec.functions[f]
        .versions
        .iter()
        .map(|v| v.pass as usize)
        .collect();
    let matches = search.matcher()?;
    let keep: Vec<bool> = ran
        .iter()
        .map(|&i| matches(&rec.passes[i]) && (!search.changed_only || changed.contains(&i)))
        .collect();
    let kept = keep.iter().filter(|&&k| k).count();
    let name = &rec.functions[f].name;
    if kept == 0 {
        return Err(nothing_matched(rec, &ran, search, name));
    }
    let mut lines = full.lines();
    let mut out = format!(
        "{}\npasses {}: {kept} of {}\n",
        lines.next().unwrap_or_default(),
        search.describe("it"),
        ran.len()
    );
    for (line, k) in lines.zip(keep) {
        if k {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(out)
}

/// The pass executions of the whole run that `search` keeps, numbered
/// from 1 in the order they ran, each with how many functions it changed;
/// an error naming near pass names when it keeps none.
pub fn run_passes_searched(rec: &Recording, search: &PassSearch) -> Result<String> {
    let matches = search.matcher()?;
    let mut changed = vec![0usize; rec.passes.len()];
    for f in &rec.functions {
        for v in &f.versions {
            changed[v.pass as usize] += 1;
        }
    }
    let all: Vec<usize> = (0..rec.passes.len()).collect();
    let kept: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| matches(&rec.passes[i]) && (!search.changed_only || rec.passes[i].changed))
        .collect();
    if kept.is_empty() {
        return Err(nothing_matched(
            rec,
            &all,
            search,
            &format!("module {}", rec.module),
        ));
    }
    let mut out = format!(
        "{} on {}: pass executions {}: {} of {}\n",
        rec.pipeline,
        rec.module,
        search.describe("the module"),
        kept.len(),
        rec.passes.len()
    );
    for i in kept {
        let p = &rec.passes[i];
        let on = if unit_shown(p.unit) {
            format!(" [{} {}]", unit_word(p.unit), p.target)
        } else {
            String::new()
        };
        let mark = match changed[i] {
            0 if p.changed => "  *".to_string(),
            0 => String::new(),
            1 => "  * 1 function".to_string(),
            n => format!("  * {n} functions"),
        };
        let _ = writeln!(
            out,
            "{:>5} {}{}{on}{mark}",
            i + 1,
            "  ".repeat(p.depth as usize),
            p.name
        );
    }
    Ok(out)
}

/// The diff pass number `n` (1-based, as [`pass_list`] numbers them) made
/// to function `f`: a title and a unified diff (empty if it changed
/// nothing there).
pub fn pass_diff(rec: &Recording, f: usize, n: usize) -> Result<(String, String)> {
    let passes = rec.passes_on(f);
    let log = &rec.functions[f];
    let Some(&i) = n.checked_sub(1).and_then(|k| passes.get(k)) else {
        return Err(Error::Invalid(format!(
            "{} passes ran on {}; pass numbers go from 1 to {}",
            passes.len(),
            log.name,
            passes.len()
        )));
    };
    let p = &rec.passes[i];
    let title = format!(
        "pass {n} on {}: {} ({} {})",
        log.name,
        p.name,
        unit_word(p.unit),
        p.target
    );
    let Some(k) = log.versions.iter().position(|v| v.pass as usize == i) else {
        return Ok((format!("{title} did not change it"), String::new()));
    };
    let old = log.text_at(k);
    let new = log.text_at(k + 1);
    let diff = crate::diff::unified(
        &old,
        &new,
        &format!("{} (before {})", log.name, p.name),
        &format!("{} (after {})", log.name, p.name),
        3,
    );
    Ok((title, diff))
}

/// The remarks pass number `n` on function `f` made (when a remarks
/// instrument recorded the run too), one per line; empty when none.
pub fn pass_remarks(rec: &Recording, f: usize, n: usize) -> String {
    let passes = rec.passes_on(f);
    let Some(&i) = n.checked_sub(1).and_then(|k| passes.get(k)) else {
        return String::new();
    };
    let name = &rec.functions[f].name;
    let mut out = String::new();
    for r in rec
        .remarks
        .iter()
        .filter(|r| r.execution == i && r.function == *name)
    {
        let at = if r.line == 0 {
            String::new()
        } else {
            format!(" (line {}:{})", r.line, r.column)
        };
        let _ = writeln!(out, "  {:<8} {}{at}", r.kind.name(), r.message.trim());
    }
    out
}

/// The explorer as text: with no function the summary (the 25 functions
/// changed most), with a function the passes that ran on it, with a pass
/// number too that pass's diff on it and its remarks. An error names the
/// pass number that is out of range.
pub fn text(rec: &Recording, function: Option<usize>, number: Option<usize>) -> Result<String> {
    text_searched(rec, function, number, &PassSearch::default())
}

/// [`text`] with the pass lists filtered by `search`: with no function,
/// the run's pass executions it keeps (the summary when it keeps all);
/// with a function, the passes on it it keeps. A pass's diff is not
/// filtered.
pub fn text_searched(
    rec: &Recording,
    function: Option<usize>,
    number: Option<usize>,
    search: &PassSearch,
) -> Result<String> {
    Ok(match (function, number) {
        (None, _) if !search.is_empty() => run_passes_searched(rec, search)?,
        (None, _) => summary(rec, 25).to_text(),
        (Some(f), None) => pass_list_searched(rec, f, search)?,
        (Some(f), Some(n)) => {
            let (title, diff) = pass_diff(rec, f, n)?;
            let remarks = pass_remarks(rec, f, n);
            let remarks = if remarks.is_empty() {
                remarks
            } else {
                format!("\nremarks:\n{}", remarks.trim_end())
            };
            if diff.is_empty() {
                format!("{title}{remarks}")
            } else {
                format!("{title}\n{diff}{remarks}")
            }
        }
    })
}

impl PageStats {
    /// What `:explore --out` says of the page it wrote to `path`.
    pub fn note(&self, path: &str) -> String {
        format!(
            "wrote {path}: {:.1} MB, the diffs of {} of the {} functions that changed",
            self.bytes as f64 / 1e6,
            self.embedded,
            self.changed
        )
    }
}

/// What went into a page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageStats {
    /// The page's size in bytes.
    pub bytes: usize,
    /// Functions whose history (diffs) is embedded, of those changed.
    pub embedded: usize,
    pub changed: usize,
}

fn gzip_base64(data: &[u8]) -> String {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    // Writing to a Vec cannot fail.
    let _ = enc.write_all(data);
    let bytes = enc.finish().unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The explorer as HTML: a fragment for a notebook output, or with
/// `standalone` a whole page to save and share. `select` opens a function
/// (and a pass number on it); `search` fills the pass list's search box
/// and toggle. Histories beyond `budget` bytes (compressed) are left out,
/// those of the functions changed least first.
pub fn html(
    rec: &Recording,
    select: Option<(usize, Option<usize>)>,
    search: &PassSearch,
    standalone: bool,
    budget: usize,
) -> (String, PageStats) {
    // The page's metadata, compressed, with the functions whose histories
    // it holds marked (`held[i]`).
    let shared = meta_shared(rec, select, search);
    let hashes = final_hashes(rec);
    let meta_of = |held: &dyn Fn(usize) -> bool| meta(rec, &shared, &hashes, held);
    // Everything but the histories: the metadata (the same size whichever
    // are held, but for a few bytes of compression), the scripts, the
    // styles and the page around them.
    let fixed =
        meta_of(&|_| true).len() + HLJS.len() + COMMON.len() + SCRIPT.len() + STYLE.len() + 4096;
    let (blobs, embedded) = embed_histories(rec, &history_order(rec, select), fixed, budget);
    let meta = meta_of(&|i| blobs[i].is_some());
    let page = page_html(rec, &meta, blobs, standalone);
    let changed = rec
        .functions
        .iter()
        .filter(|f| !f.versions.is_empty())
        .count();
    let stats = PageStats {
        bytes: page.len(),
        embedded,
        changed,
    };
    (page, stats)
}

/// The page's metadata but its functions: the passes, the remarks, which
/// functions each pass changed, the pipeline, the module, what to select
/// and search.
fn meta_shared(
    rec: &Recording,
    select: Option<(usize, Option<usize>)>,
    search: &PassSearch,
) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::json;
    let mut shared = pass_columns(rec);
    shared.insert("remarks".into(), remark_columns(rec));
    shared.insert("pipeline".into(), json!(rec.pipeline));
    shared.insert("module".into(), json!(rec.module));
    shared.insert("cb".into(), json!(changed_by(rec)));
    shared.insert("select".into(), json!(select.map(|(f, n)| json!([f, n]))));
    shared.insert(
        "search".into(),
        json!([search.pattern, search.changed_only]),
    );
    shared
}

/// The page's metadata, compressed: `shared` and the functions, those
/// whose histories the page holds marked by `held`.
fn meta(
    rec: &Recording,
    shared: &serde_json::Map<String, serde_json::Value>,
    hashes: &[u32],
    held: &dyn Fn(usize) -> bool,
) -> String {
    use serde_json::json;
    let functions: Vec<serde_json::Value> = rec
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            json!([
                f.name,
                f.instructions_before,
                f.instructions_after,
                f.versions.len(),
                held(i) as u8,
                hashes[i]
            ])
        })
        .collect();
    let mut meta = shared.clone();
    meta.insert("functions".into(), serde_json::Value::Array(functions));
    gzip_base64(serde_json::Value::Object(meta).to_string().as_bytes())
}

/// The passes, column by column, names and targets once each: the
/// metadata's `names`, `targets`, `pn`, `pu`, `pt`, `pd`, `pp`, `pc`,
/// and `rs` and `rf` for the functions each ran on.
fn pass_columns(rec: &Recording) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::json;
    let mut names: Vec<&str> = Vec::new();
    let mut name_ix = std::collections::HashMap::new();
    let mut targets: Vec<&str> = Vec::new();
    let mut target_ix = std::collections::HashMap::new();
    let n = rec.passes.len();
    let (mut pn, mut pu, mut pt, mut pd, mut pp, mut pc) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut rs, mut rf) = (Vec::with_capacity(n), Vec::new());
    for p in &rec.passes {
        pn.push(intern(&mut names, &mut name_ix, &p.name));
        pu.push(p.unit.code());
        pt.push(intern(&mut targets, &mut target_ix, &p.target));
        pd.push(p.depth);
        pp.push(p.parent.map_or(-1, |x| x as i64));
        pc.push(p.changed as u8);
        match &p.reach {
            Reach::Module => rs.push(-1i64),
            Reach::Functions(v) => {
                rs.push(rf.len() as i64);
                rf.push(v.len() as u32);
                rf.extend(v);
            }
        }
    }
    let columns = json!({
        "names": names,
        "targets": targets,
        "pn": pn, "pu": pu, "pt": pt, "pd": pd, "pp": pp, "pc": pc,
        "rs": rs, "rf": rf,
    });
    match columns {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// Which functions each pass changed, for the module view.
fn changed_by(rec: &Recording) -> Vec<Vec<u32>> {
    let mut changed_by: Vec<Vec<u32>> = vec![Vec::new(); rec.passes.len()];
    for (i, f) in rec.functions.iter().enumerate() {
        for v in &f.versions {
            changed_by[v.pass as usize].push(i as u32);
        }
    }
    changed_by
}

/// The run's remarks, column by column: pass execution, function (-1:
/// one the recording does not know), kind, pass, message, line, column,
/// and the strings that pass and message number.
fn remark_columns(rec: &Recording) -> serde_json::Value {
    let mut rstrings: Vec<&str> = Vec::new();
    let mut rstring_ix: std::collections::HashMap<&str, usize> = Default::default();
    let mut rcols: [Vec<i64>; 7] = Default::default();
    let functions_ix: std::collections::HashMap<&str, usize> = rec
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    for r in &rec.remarks {
        let vals = [
            r.execution as i64,
            functions_ix
                .get(r.function.as_str())
                .map_or(-1, |&f| f as i64),
            r.kind as i64,
            intern(&mut rstrings, &mut rstring_ix, &r.pass),
            intern(&mut rstrings, &mut rstring_ix, r.message.trim()),
            i64::from(r.line),
            i64::from(r.column),
        ];
        for (c, v) in rcols.iter_mut().zip(vals) {
            c.push(v);
        }
    }
    let [rx, rfn, rk, rp, rm, rl, rcol] = rcols;
    serde_json::json!({"x": rx, "f": rfn, "k": rk, "p": rp, "m": rm, "l": rl, "c": rcol, "s": rstrings})
}

/// Each changed function's text after the run, hashed (0: unchanged):
/// the page checks that its history, replayed, gives the same text.
fn final_hashes(rec: &Recording) -> Vec<u32> {
    rec.functions
        .iter()
        .map(|f| {
            if f.versions.is_empty() {
                0
            } else {
                lines_hash(&f.text_at(f.versions.len()))
            }
        })
        .collect()
}

/// The changed functions, most changed first, the selected one (if
/// changed) before them all: the order histories go in while the budget
/// lasts.
fn history_order(rec: &Recording, select: Option<(usize, Option<usize>)>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rec.functions.len())
        .filter(|&i| !rec.functions[i].versions.is_empty())
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(rec.functions[i].versions.len()));
    if let Some((f, _)) = select {
        // The selected function first, whatever its size.
        order.retain(|&i| i != f);
        if !rec.functions[f].versions.is_empty() {
            order.insert(0, f);
        }
    }
    order
}

/// The histories of the functions in `order` that fit in `budget` bytes
/// beyond the page's `fixed` ones (the first always), compressed, by
/// function, and how many there are.
fn embed_histories(
    rec: &Recording,
    order: &[usize],
    fixed: usize,
    budget: usize,
) -> (Vec<Option<String>>, usize) {
    let mut blobs: Vec<Option<String>> = vec![None; rec.functions.len()];
    let mut used = fixed;
    let mut embedded = 0;
    for &i in order {
        let blob = history_blob(&rec.functions[i]);
        // The blob, its quotes and a comma.
        if used + blob.len() + 3 > budget && embedded > 0 {
            continue;
        }
        used += blob.len() + 3;
        embedded += 1;
        blobs[i] = Some(blob);
    }
    (blobs, embedded)
}

/// A function's history, compressed: its initial text and each version's
/// pass, size, deletion, edits and renumbering.
fn history_blob(log: &crate::instrument::FunctionLog) -> String {
    use serde_json::json;
    let versions: Vec<serde_json::Value> = log
        .versions
        .iter()
        .map(|v| {
            let mut edits = Vec::with_capacity(v.edits.len() * 3);
            for e in &v.edits {
                edits.push(json!(e.keep));
                edits.push(json!(e.delete));
                edits.push(json!(e.insert));
            }
            let renumber: Vec<u32> = v.renumber.iter().flat_map(|&(o, n)| [o, n]).collect();
            json!([v.pass, v.instructions, v.deleted as u8, edits, renumber])
        })
        .collect();
    gzip_base64(
        json!({"i": log.initial, "v": versions})
            .to_string()
            .as_bytes(),
    )
}

/// The explorer's element, its data (`meta` and `blobs`), styles and
/// scripts; with `standalone`, in a page of its own.
fn page_html(rec: &Recording, meta: &str, blobs: Vec<Option<String>>, standalone: bool) -> String {
    let blobs_js: Vec<serde_json::Value> = blobs
        .into_iter()
        .map(|b| b.map_or(serde_json::Value::Null, serde_json::Value::String))
        .collect();
    let id = format!("plab-x{:x}", page_id(&rec.pipeline, rec.passes.len()));
    let body = format!(
        "<div class=\"plab-explore\" id=\"{id}\">\
         <div class=\"plab-x-fallback\">The pipeline explorer needs JavaScript: run the cell (a \
         notebook's stored outputs run scripts only when the notebook is trusted), or open the \
         page written by <code>:explore --out FILE.html</code>.</div></div>\
         <style>{STYLE}{}</style>\
         <script type=\"application/json\" id=\"{id}-data\">{{\"meta\":\"{meta}\",\"blobs\":{}}}</script>\
         <script>(function(){{\"use strict\";\n{HLJS}\n{COMMON}\n{SCRIPT}\nplabExplore(document.getElementById(\"{id}\"), JSON.parse(document.getElementById(\"{id}-data\").textContent), hljs);\n}})();</script>",
        source_style(),
        serde_json::Value::Array(blobs_js)
    );
    if standalone {
        format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{} on {} — passlab explorer</title>\
             <style>body{{margin:12px;font-family:system-ui,sans-serif}}</style></head><body>{body}</body></html>\n",
            crate::table::escape(&rec.pipeline),
            crate::table::escape(&rec.module)
        )
    } else {
        body
    }
}

/// The diffs' source colours: a line's number cells striped on their left
/// with the colour of its source line (`:asm`'s palette; a stripe, so that
/// the cell keeps the diff's own colour and a pink source line does not
/// read as a deletion), outlined while a row from the same line is
/// hovered.
fn source_style() -> String {
    let mut css = String::from(
        ".plab-explore table.plab-x-diffrows td.plab-x-ln.plab-x-hot{outline:2px solid #333;outline-offset:-1px}",
    );
    for (i, c) in crate::highlight::SOURCE_COLOURS.iter().enumerate() {
        let _ = write!(
            css,
            ".plab-explore table.plab-x-diffrows td.plab-x-ln.plab-x-s{i}{{box-shadow:inset 8px 0 0 {c}}}"
        );
    }
    css
}

/// FNV-1a (32 bits) of `text`'s lines, each ended by `\n` (a last line
/// without one too), as explorer.js hashes the lines it replays.
fn lines_hash(text: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    for line in lines {
        for &b in line.as_bytes().iter().chain(b"\n") {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h
}

/// `text`'s number among `strings`, added if new.
fn intern<'a>(
    strings: &mut Vec<&'a str>,
    index: &mut std::collections::HashMap<&'a str, usize>,
    text: &'a str,
) -> i64 {
    *index.entry(text).or_insert_with(|| {
        strings.push(text);
        strings.len() - 1
    }) as i64
}

/// An id for the page's elements, distinct between outputs of one
/// notebook (several explorers may share a page).
fn page_id(title: &str, size: usize) -> u64 {
    use std::hash::{Hash, Hasher};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    title.hash(&mut h);
    size.hash(&mut h);
    std::process::id().hash(&mut h);
    COUNTER
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        .hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instrument::Explore;
    use crate::{pipeline, Module, PassContext};
    use std::rc::Rc;

    fn recorded() -> (Recording, Module) {
        let src = "int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * 2; return s; }\n\
                   int g(int x) { return x + 0; }\n";
        let mut m = Module::from_c(src, "t.c").unwrap();
        let e = Rc::new(Explore::new());
        {
            let _g = PassContext::inherit()
                .with_instrument(e.clone())
                .enter()
                .unwrap();
            pipeline::parse("default<O2>")
                .unwrap()
                .apply(&mut m)
                .unwrap();
        }
        let mut r = e.take();
        r.module = "t".into();
        (r, m)
    }

    #[test]
    fn text_forms_number_the_passes_and_show_their_diffs() {
        let (r, _) = recorded();
        let t = summary(&r, 10).to_text();
        assert!(t.contains("default<O2> on t"), "{t}");
        let f = function_index(&r, "f").unwrap();
        let list = pass_list(&r, f);
        // sroa changed f: find its number and ask for its diff.
        let line = list
            .lines()
            .find(|l| l.contains("sroa") && l.contains('*'))
            .unwrap();
        let n: usize = line.split_whitespace().next().unwrap().parse().unwrap();
        let (title, diff) = pass_diff(&r, f, n).unwrap();
        assert!(title.contains("sroa"), "{title}");
        assert!(
            diff.contains("-  %s = alloca i32") || diff.contains("alloca"),
            "{diff}"
        );
        assert!(pass_diff(&r, f, 100_000).is_err());
        // The text forms, by what is asked.
        assert_eq!(text(&r, None, None).unwrap(), summary(&r, 25).to_text());
        assert_eq!(text(&r, Some(f), None).unwrap(), list);
        let shown = text(&r, Some(f), Some(n)).unwrap();
        assert!(
            shown.starts_with(&format!("{title}\n")) && shown.contains(&diff),
            "{shown}"
        );
        assert!(text(&r, Some(f), Some(100_000)).is_err());
        assert!(function_index(&r, "ff")
            .unwrap_err()
            .to_string()
            .contains("'f'"));
    }

    #[test]
    fn the_pages_note_says_how_many_histories_it_holds() {
        let stats = PageStats {
            bytes: 2_345_678,
            embedded: 3,
            changed: 5,
        };
        assert_eq!(
            stats.note("e.html"),
            "wrote e.html: 2.3 MB, the diffs of 3 of the 5 functions that changed"
        );
    }

    #[test]
    fn the_page_embeds_compressed_histories_within_the_budget() {
        let (r, _) = recorded();
        let (page, stats) = html(&r, None, &PassSearch::default(), true, DEFAULT_BUDGET);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert_eq!(stats.embedded, stats.changed);
        assert!(stats.changed >= 2);
        assert!(page.contains("registerLanguage(\"llvm\""));
        // A tiny budget still embeds one history, and says what it left out.
        let (_, small) = html(&r, None, &PassSearch::default(), false, 1);
        assert_eq!(small.embedded, 1);
    }
}
