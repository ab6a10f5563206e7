//! Remarks on the source: `:report remarks source` lists the source lines
//! that have remarks, the most remarked first, each with its remarks
//! (kind, pass, function, message) under it — opt-viewer's view as text.

use super::*;
use crate::instrument::{Remark, RemarkFilter};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Source lines shown unless `top=` says otherwise.
pub(super) const TOP_LINES: usize = 30;

/// The annotated source of `remarks` (those `filter` keeps): the `top`
/// lines with the most remarks, each with its text when the file is known
/// (a `:module`'s source, or on disk), and a count of the remarks without
/// a line.
pub(super) fn annotated_source(
    s: &Session,
    remarks: &[Remark],
    filter: &RemarkFilter,
    top: usize,
) -> String {
    let kept: Vec<&Remark> = remarks.iter().filter(|r| filter.keeps(r)).collect();
    let mut lines: BTreeMap<(&str, u32), Vec<&Remark>> = BTreeMap::new();
    let mut lineless = 0usize;
    for r in &kept {
        if r.line == 0 || r.file.is_empty() {
            lineless += 1;
        } else {
            lines.entry((r.file.as_str(), r.line)).or_default().push(r);
        }
    }
    let mut order: Vec<_> = lines.into_iter().collect();
    order.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let mut files: BTreeMap<&str, Option<Vec<String>>> = BTreeMap::new();
    let mut out = String::new();
    let described = filter.describe();
    let described = if described.is_empty() {
        String::new()
    } else {
        format!(" ({described})")
    };
    let _ = match order.len() {
        0 => writeln!(
            out,
            "{} remarks{described}, none on a source line",
            kept.len()
        ),
        1 => writeln!(out, "{} remarks{described} on 1 source line", kept.len()),
        n => writeln!(
            out,
            "{} remarks{described} on {n} source lines, the most remarked first",
            kept.len()
        ),
    };
    for ((file, line), rs) in order.iter().take(top) {
        let text = files
            .entry(file)
            .or_insert_with(|| {
                source_text(s, file).map(|t| t.lines().map(str::to_string).collect())
            })
            .as_ref()
            .and_then(|l| l.get(*line as usize - 1))
            .map(|l| l.trim_end().to_string())
            .unwrap_or_default();
        let _ = writeln!(out, "\n{}:{line}: {text}", shown_path(s, file));
        // The same remark made again (a pass that ran several times, a
        // macro's many loads) is one line with its count.
        let mut said: Vec<(&Remark, usize)> = Vec::new();
        let mut rs = rs.clone();
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
