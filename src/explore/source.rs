//! The annotated source: a module's C or C++ source with each line's
//! optimization remarks under it (kind-coloured, with the pass, the
//! function and the message) — opt-viewer's view, as one page for a whole
//! program.
//!
//! The page carries the remarks column by column (strings once each) and
//! the text of each source file that has remarks, all gzip-compressed and
//! embedded; `source.js` decompresses them and shows first the lines with
//! the most remarks, then the source itself, built a few hundred lines at a
//! time as they scroll into view, so that all of sqlite3 (a quarter of a
//! million lines, 85,000 remarks) opens as fast as one function's. Filters
//! by kind, pass and function work in the page. Nothing is fetched from
//! the network; the session puts the page in a `text/html` bundle or
//! writes it to a file.

use super::{gzip_base64, intern, COMMON};
use crate::instrument::{Remark, RemarkFilter};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

const SCRIPT: &str = include_str!("source.js");
const STYLE: &str = include_str!("source.css");

/// What went into an annotated source page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceStats {
    /// The page's size in bytes.
    pub bytes: usize,
    pub remarks: usize,
    /// Distinct source lines with remarks.
    pub lines: usize,
    /// Source files with remarks, and how many of them have their text in
    /// the page (the others were not found).
    pub files: usize,
    pub with_text: usize,
}

/// The annotated source of `remarks` as text (those `filter` keeps;
/// opt-viewer's view): the `top` lines with the most remarks first, each
/// with its text when `sources(file)` gives the file's, named as
/// `shown(file)` says, and its remarks under it (the same remark made
/// again counted, not repeated); then how many lines were left out and a
/// note on the remarks without a line.
pub fn remarks_text(
    remarks: &[Remark],
    filter: &RemarkFilter,
    top: usize,
    sources: &dyn Fn(&str) -> Option<String>,
    shown: &dyn Fn(&str) -> String,
) -> String {
    let kept: Vec<&Remark> = remarks.iter().filter(|r| filter.keeps(r)).collect();
    let (order, lineless) = by_line(&kept);
    let mut files: BTreeMap<&str, Option<Vec<String>>> = BTreeMap::new();
    let mut out = heading(kept.len(), &filter.describe(), order.len());
    for ((file, line), rs) in order.iter().take(top) {
        let text = files
            .entry(file)
            .or_insert_with(|| sources(file).map(|t| t.lines().map(str::to_string).collect()))
            .as_ref()
            .and_then(|l| l.get(*line as usize - 1))
            .map(|l| l.trim_end().to_string())
            .unwrap_or_default();
        let _ = writeln!(out, "\n{}:{line}: {text}", shown(file));
        write_line_remarks(&mut out, rs);
    }
    if order.len() > top {
        let _ = writeln!(
            out,
            "\n… {} more lines with remarks (top=N shows more; passes=, kinds=, functions= narrow)",
            order.len() - top
        );
    }
    if let Some(note) = crate::instrument::lineless_note(remarks, lineless) {
        let _ = writeln!(out, "\n{note}");
    }
    out.trim_end().to_string()
}

/// A source line (file and line) and its remarks.
type LineRemarks<'a> = ((&'a str, u32), Vec<&'a Remark>);

/// The source lines (file and line) with remarks among `kept`, the most
/// remarked first, each with its remarks; and how many remarks have no
/// line.
fn by_line<'a>(kept: &[&'a Remark]) -> (Vec<LineRemarks<'a>>, usize) {
    let mut lines: BTreeMap<(&str, u32), Vec<&Remark>> = BTreeMap::new();
    let mut lineless = 0usize;
    for r in kept {
        if r.line == 0 || r.file.is_empty() {
            lineless += 1;
        } else {
            lines.entry((r.file.as_str(), r.line)).or_default().push(r);
        }
    }
    let mut order: Vec<_> = lines.into_iter().collect();
    order.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    (order, lineless)
}

/// The annotated source's first line: how many remarks (`described`
/// says which) on how many source lines.
fn heading(kept: usize, described: &str, lines: usize) -> String {
    let mut out = String::new();
    let described = if described.is_empty() {
        String::new()
    } else {
        format!(" ({described})")
    };
    let _ = match lines {
        0 => writeln!(out, "{kept} remarks{described}, none on a source line"),
        1 => writeln!(out, "{kept} remarks{described} on 1 source line"),
        n => writeln!(
            out,
            "{kept} remarks{described} on {n} source lines, the most remarked first"
        ),
    };
    out
}

/// One source line's remarks, by column, under it in `out`: the same
/// remark made again (a pass that ran several times, a macro's many
/// loads) is one line with its count.
fn write_line_remarks(out: &mut String, rs: &[&Remark]) {
    let mut said: Vec<(&Remark, usize)> = Vec::new();
    let mut rs = rs.to_vec();
    rs.sort_by_key(|r| (r.column, r.execution));
    for r in rs {
        let same = |x: &&Remark| {
            (x.kind, &x.pass, &x.function, x.column, x.message.trim())
                == (r.kind, &r.pass, &r.function, r.column, r.message.trim())
        };
        match said.iter_mut().find(|(x, _)| same(x)) {
            Some((_, n)) => *n += 1,
            None => said.push((r, 1)),
        }
    }
    for (r, n) in said {
        let times = if n > 1 {
            format!(" (×{n})")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  {:<8} {} in {} (col {}): {}{times}",
            r.kind.name(),
            r.pass,
            r.function,
            r.column,
            r.message.trim()
        );
    }
}

impl SourceStats {
    /// What `:report remarks source --out` says of the page it wrote to
    /// `path`: its size, remarks, lines and files (and how many files were
    /// not found).
    pub fn note(&self, path: &str) -> String {
        format!(
            "wrote {path}: {:.1} MB, {} remarks on {} source lines in {} files{}",
            self.bytes as f64 / 1e6,
            self.remarks,
            self.lines,
            self.files,
            if self.with_text < self.files {
                format!(
                    " ({} of them not found: their lines without text)",
                    self.files - self.with_text
                )
            } else {
                String::new()
            }
        )
    }
}

/// The annotated source of `remarks` as HTML: a fragment for a notebook,
/// or with `standalone` a whole page. `sources` gives the text of a file
/// named in the remarks (None: not found; its lines are listed without
/// their text); `shown` how the page names it. `title` says what ran (a
/// pipeline on a module). `top` is how many of the most remarked lines it
/// lists first (None: a hundred; a link shows more).
pub fn remarks_html(
    title: &str,
    remarks: &[Remark],
    sources: &dyn Fn(&str) -> Option<String>,
    shown: &dyn Fn(&str) -> String,
    standalone: bool,
    top: Option<usize>,
) -> (String, SourceStats) {
    use serde_json::json;
    let cols = Columns::of(remarks);
    let texts: Vec<Option<String>> = cols.files.iter().map(|f| sources(f)).collect();
    let with_text = texts.iter().filter(|t| t.is_some()).count();
    let [k, p, f, m, fi, l, c] = cols.columns;
    let data = json!({
        "title": title,
        "strings": cols.strings,
        "files": cols.files.iter().map(|f| shown(f)).collect::<Vec<_>>(),
        "k": k, "p": p, "f": f, "m": m, "fi": fi, "l": l, "c": c,
        "top": top.unwrap_or(0),
    });
    let data = gzip_base64(data.to_string().as_bytes());
    // Each file's text its own blob: decompressed when it is shown.
    let texts: Vec<serde_json::Value> = texts
        .iter()
        .map(|t| {
            t.as_ref().map_or(serde_json::Value::Null, |t| {
                serde_json::Value::String(gzip_base64(t.as_bytes()))
            })
        })
        .collect();
    let id = format!("plab-r{:x}", super::page_id(title, remarks.len()));
    let page = page_html(title, &id, &data, texts, standalone);
    let stats = SourceStats {
        bytes: page.len(),
        remarks: remarks.len(),
        lines: cols.lines,
        files: cols.files.len(),
        with_text,
    };
    (page, stats)
}

/// The remarks column by column, strings and files once each.
struct Columns<'a> {
    /// Passes, functions and messages.
    strings: Vec<&'a str>,
    files: Vec<&'a str>,
    /// Kind, pass, function, message, file (-1: none), line, column.
    columns: [Vec<i64>; 7],
    /// Distinct source lines with remarks.
    lines: usize,
}

impl<'a> Columns<'a> {
    /// `remarks`' columns.
    fn of(remarks: &'a [Remark]) -> Self {
        let (mut strings, mut string_ix) = (Vec::new(), HashMap::new());
        let (mut files, mut file_ix) = (Vec::new(), HashMap::new());
        let n = remarks.len();
        let mut columns: [Vec<i64>; 7] = Default::default();
        for c in columns.iter_mut() {
            c.reserve(n);
        }
        let mut lines = std::collections::HashSet::new();
        for r in remarks {
            let file = if r.line == 0 || r.file.is_empty() {
                -1
            } else {
                let i = intern(&mut files, &mut file_ix, &r.file);
                lines.insert((i, r.line));
                i
            };
            for (col, v) in columns.iter_mut().zip([
                r.kind as i64,
                intern(&mut strings, &mut string_ix, &r.pass),
                intern(&mut strings, &mut string_ix, &r.function),
                intern(&mut strings, &mut string_ix, r.message.trim()),
                file,
                i64::from(r.line),
                i64::from(r.column),
            ]) {
                col.push(v);
            }
        }
        Columns {
            strings,
            files,
            columns,
            lines: lines.len(),
        }
    }
}

/// The annotated source's element `id`, its `data` and file `texts`,
/// styles and scripts; with `standalone`, in a page of its own.
fn page_html(
    title: &str,
    id: &str,
    data: &str,
    texts: Vec<serde_json::Value>,
    standalone: bool,
) -> String {
    let body = format!(
        "<div class=\"plab-remarks\" id=\"{id}\">\
         <div class=\"plab-r-fallback\">The annotated source needs JavaScript: run the cell (a \
         notebook's stored outputs run scripts only when the notebook is trusted), or open the \
         page written by <code>:report remarks source --out FILE.html</code>.</div></div>\
         <style>{STYLE}</style>\
         <script type=\"application/json\" id=\"{id}-data\">{{\"data\":\"{data}\",\"texts\":{}}}</script>\
         <script>(function(){{\"use strict\";\n{COMMON}\n{SCRIPT}\nplabRemarks(document.getElementById(\"{id}\"), JSON.parse(document.getElementById(\"{id}-data\").textContent), {standalone});\n}})();</script>",
        serde_json::Value::Array(texts)
    );
    if standalone {
        format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{} — passlab remarks</title>\
             <style>body{{margin:12px;font-family:system-ui,sans-serif}}</style></head><body>{body}</body></html>\n",
            crate::table::escape(title)
        )
    } else {
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_line(pass: &str, line: u32, column: u32, message: &str) -> Remark {
        Remark {
            kind: crate::instrument::RemarkKind::Passed,
            pass: pass.into(),
            name: "N".into(),
            function: "f".into(),
            file: if line == 0 {
                String::new()
            } else {
                "/src/a.c".into()
            },
            line,
            column,
            message: message.into(),
            args: Vec::new(),
            run: 1,
            execution: 0,
            execution_pass: pass.into(),
            unit: "f".into(),
        }
    }

    #[test]
    fn the_text_lists_the_most_remarked_lines_first_and_counts_repeats() {
        let remarks = vec![
            at_line("gvn", 2, 5, "load eliminated"),
            at_line("licm", 3, 1, "hoisted"),
            at_line("licm", 3, 1, "hoisted "),
            at_line("inline", 3, 9, "f inlined"),
            at_line("sroa", 0, 0, "no line"),
        ];
        let sources = |f: &str| (f == "/src/a.c").then(|| "int a;\nint b;\nint c;  \n".to_string());
        let shown = |f: &str| f.trim_start_matches("/src/").to_string();
        let text = remarks_text(&remarks, &RemarkFilter::default(), 1, &sources, &shown);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "5 remarks on 2 source lines, the most remarked first"
        );
        assert_eq!(lines[2], "a.c:3: int c;");
        assert!(
            lines[3].contains("licm in f (col 1): hoisted (×2)"),
            "{text}"
        );
        assert!(
            lines[4].contains("inline in f (col 9): f inlined"),
            "{text}"
        );
        assert!(text.contains("\n… 1 more lines with remarks"), "{text}");
        assert!(!text.contains("a.c:2"), "{text}");
        // A filter narrows them, and says so.
        let gvn = RemarkFilter {
            passes: vec!["gvn".into()],
            ..RemarkFilter::default()
        };
        let text = remarks_text(&remarks, &gvn, 30, &|_| None, &shown);
        assert!(
            text.starts_with("1 remarks (passes gvn) on 1 source line\n\na.c:2: \n"),
            "{text}"
        );
    }

    #[test]
    fn the_note_says_what_the_page_holds() {
        let mut stats = SourceStats {
            bytes: 1_250_000,
            remarks: 35,
            lines: 8,
            files: 2,
            with_text: 2,
        };
        assert_eq!(
            stats.note("r.html"),
            "wrote r.html: 1.2 MB, 35 remarks on 8 source lines in 2 files"
        );
        stats.with_text = 1;
        assert!(stats
            .note("r.html")
            .ends_with(" in 2 files (1 of them not found: their lines without text)"));
    }
    use crate::instrument::RemarkKind;

    fn remark(kind: RemarkKind, pass: &str, file: &str, line: u32, message: &str) -> Remark {
        Remark {
            kind,
            pass: pass.into(),
            name: "X".into(),
            function: "f".into(),
            file: file.into(),
            line,
            column: 3,
            message: message.into(),
            args: Vec::new(),
            run: 1,
            execution: 0,
            execution_pass: String::new(),
            unit: String::new(),
        }
    }

    #[test]
    fn the_page_embeds_the_files_with_remarks_and_counts_their_lines() {
        let rs = [
            remark(
                RemarkKind::Missed,
                "loop-vectorize",
                "a.c",
                4,
                "loop not vectorized",
            ),
            remark(
                RemarkKind::Passed,
                "inline",
                "a.c",
                4,
                "'g' inlined into 'f'",
            ),
            remark(RemarkKind::Missed, "licm", "gone.h", 9, "failed to hoist"),
            remark(RemarkKind::Analysis, "gvn", "", 0, "no line"),
        ];
        let sources = |f: &str| (f == "a.c").then(|| "int a;\n".repeat(10));
        let shown = |f: &str| f.to_string();
        let (page, stats) = remarks_html("O2 on t", &rs, &sources, &shown, true, None);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("plabRemarks("));
        assert_eq!(
            stats,
            SourceStats {
                bytes: page.len(),
                remarks: 4,
                lines: 2,
                files: 2,
                with_text: 1
            }
        );
        // The fragment has no document around it.
        let (fragment, _) = remarks_html("O2 on t", &rs, &sources, &shown, false, Some(5));
        assert!(fragment.starts_with("<div class=\"plab-remarks\""));
    }
}
