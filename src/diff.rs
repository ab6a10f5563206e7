//! Unified diffs of IR text, fast on long functions. A pass usually changes
//! a few places in a function of thousands of lines, so the common head and
//! tail are skipped with a byte comparison, and only the middle is split
//! into lines, numbered (equal lines, equal numbers) and diffed with
//! `similar`'s Myers implementation, which then compares integers, not
//! strings. Hunks are grouped by `similar` and rendered in `diff -u` form.
//!
//! Long middles are diffed with the histogram algorithm; no diff depends
//! on the clock. [`edits`] and [`apply`] are the same differences as edit
//! scripts (the explorer stores a function's versions that way).
//! `Background` is the thread print-changed and explore hand their diffs
//! to, results taken in order; printing, which reads the IR, stays on the
//! pipeline's thread.

#![forbid(unsafe_code)]

use similar::{group_diff_ops, DiffOp};
use std::collections::HashMap;
use std::fmt::Write;

/// The common head and tail of two texts, in bytes, as whole lines: the
/// head cut back to the start of the line where they differ, the tail not
/// overlapping it.
fn common_lines(ob: &[u8], nb: &[u8]) -> (usize, usize) {
    let same = ob.iter().zip(nb).take_while(|(x, y)| x == y).count();
    let pre = ob[..same]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let mut suf = ob[pre..]
        .iter()
        .rev()
        .zip(nb[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let line_start = |t: &[u8], at: usize| at == 0 || t[at - 1] == b'\n';
    while suf > 0 && !(line_start(ob, ob.len() - suf) && line_start(nb, nb.len() - suf)) {
        suf -= 1;
    }
    (pre, suf)
}

/// A unified diff of `old` and `new` with `context` lines around changes,
/// headed `--- old_name` / `+++ new_name`; empty when the texts are equal.
pub fn unified(old: &str, new: &str, old_name: &str, new_name: &str, context: usize) -> String {
    if old == new {
        return String::new();
    }
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let (pre, suf) = common_lines(ob, nb);
    let middle_a: Vec<&str> = old[pre..ob.len() - suf].lines().collect();
    let middle_b: Vec<&str> = new[pre..nb.len() - suf].lines().collect();
    // Context lines come from the head and the tail.
    let mut head: Vec<&str> = old[..pre].lines().rev().take(context).collect();
    head.reverse();
    let tail: Vec<&str> = old[ob.len() - suf..].lines().take(context).collect();
    let offset = old[..pre].lines().count() - head.len();

    let mut ids: HashMap<&str, u32> = HashMap::with_capacity(middle_a.len() + middle_b.len());
    let ia = intern(&middle_a, &mut ids);
    let ib = intern(&middle_b, &mut ids);
    let mut ops = vec![DiffOp::Equal {
        old_index: 0,
        new_index: 0,
        len: head.len(),
    }];
    for op in line_ops(&ia, &ib, &middle_a, &middle_b) {
        ops.push(shift(op, head.len()));
    }
    ops.push(DiffOp::Equal {
        old_index: head.len() + middle_a.len(),
        new_index: head.len() + middle_b.len(),
        len: tail.len(),
    });
    ops.retain(|op| !matches!(op, DiffOp::Equal { len: 0, .. }));
    let a: Vec<&str> = head.iter().chain(&middle_a).chain(&tail).copied().collect();
    let b: Vec<&str> = head.iter().chain(&middle_b).chain(&tail).copied().collect();

    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    for group in group_diff_ops(ops, context) {
        let (first, last) = match (group.first(), group.last()) {
            (Some(f), Some(l)) => (f, l),
            _ => continue,
        };
        let (old_start, new_start) = (first.old_range().start, first.new_range().start);
        let (old_len, new_len) = (
            last.old_range().end - old_start,
            last.new_range().end - new_start,
        );
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            range(offset + old_start, old_len),
            range(offset + new_start, new_len)
        );
        for op in &group {
            write_op(&mut out, op, &a, &b);
        }
    }
    out
}

/// One op of a hunk in `diff -u` form: its lines of `a` (the old text)
/// and `b` (the new), each after ` `, `-` or `+`.
fn write_op(out: &mut String, op: &DiffOp, a: &[&str], b: &[&str]) {
    let mut lines = |mark: char, lines: &[&str]| {
        for l in lines {
            let _ = writeln!(out, "{mark}{l}");
        }
    };
    match *op {
        DiffOp::Equal { old_index, len, .. } => lines(' ', &a[old_index..old_index + len]),
        DiffOp::Delete {
            old_index, old_len, ..
        } => lines('-', &a[old_index..old_index + old_len]),
        DiffOp::Insert {
            new_index, new_len, ..
        } => lines('+', &b[new_index..new_index + new_len]),
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => {
            lines('-', &a[old_index..old_index + old_len]);
            lines('+', &b[new_index..new_index + new_len]);
        }
    }
}

/// The differences of two sequences of numbered lines, as `similar`'s ops
/// (equal runs between the changes). Computed with `imara-diff`: Myers'
/// algorithm with git's heuristics, which give up on minimality in a
/// middle snake that would cost too much (a pass that rewrote a long
/// function throughout), so the time stays near linear; long middles with
/// the histogram algorithm (unique-ish lines as anchors), which reads better
/// there. Both are deterministic: the same texts give the same diff on a
/// loaded machine and an idle one.
fn line_ops(a: &[u32], b: &[u32], la: &[&str], lb: &[&str]) -> Vec<DiffOp> {
    const HISTOGRAM_FROM: usize = 1000;
    let algorithm = if a.len().min(b.len()) >= HISTOGRAM_FROM {
        imara_diff::Algorithm::Histogram
    } else {
        imara_diff::Algorithm::Myers
    };
    let tokens = a.iter().chain(b).max().map_or(0, |m| m.saturating_add(1));
    let ta: Vec<imara_diff::Token> = a.iter().map(|&t| imara_diff::Token(t)).collect();
    let tb: Vec<imara_diff::Token> = b.iter().map(|&t| imara_diff::Token(t)).collect();
    let mut diff = imara_diff::Diff::default();
    diff.compute_with(algorithm, &ta, &tb, tokens);
    // A change that could sit at several places (a block moved past blank
    // lines) is placed where git would, by the lines' indentation.
    let mut indent = vec![imara_diff::IndentLevel::for_ascii_line([], 8); tokens as usize];
    for (t, l) in a.iter().zip(la).chain(b.iter().zip(lb)) {
        indent[*t as usize] = imara_diff::IndentLevel::for_ascii_line(l.bytes(), 8);
    }
    diff.postprocess_with(
        &ta,
        &tb,
        imara_diff::IndentHeuristic::new(|t: imara_diff::Token| indent[t.0 as usize]),
    );
    let mut ops = Vec::new();
    let (mut at_a, mut at_b) = (0usize, 0usize);
    for h in diff.hunks() {
        let (bs, be) = (h.before.start as usize, h.before.end as usize);
        let (as_, ae) = (h.after.start as usize, h.after.end as usize);
        if bs > at_a {
            ops.push(DiffOp::Equal {
                old_index: at_a,
                new_index: at_b,
                len: bs - at_a,
            });
        }
        ops.push(match (be > bs, ae > as_) {
            (true, true) => DiffOp::Replace {
                old_index: bs,
                old_len: be - bs,
                new_index: as_,
                new_len: ae - as_,
            },
            (true, false) => DiffOp::Delete {
                old_index: bs,
                old_len: be - bs,
                new_index: as_,
            },
            _ => DiffOp::Insert {
                old_index: bs,
                new_index: as_,
                new_len: ae - as_,
            },
        });
        (at_a, at_b) = (be, ae);
    }
    if a.len() > at_a {
        ops.push(DiffOp::Equal {
            old_index: at_a,
            new_index: at_b,
            len: a.len() - at_a,
        });
    }
    ops
}

/// One step of an edit script from one text to another, by lines: keep
/// `keep` lines, then delete `delete`, then insert the lines of `insert`
/// (each ending in `\n`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub keep: u32,
    pub delete: u32,
    pub insert: String,
}

/// The edit script that turns `old` into `new` (empty when they are
/// equal; lines after the last step are kept). Found as [`unified`] finds
/// its hunks: common head and tail skipped, Myers on the middle.
///
/// ```
/// let e = passlab::diff::edits("a\nb\nc\n", "a\nB\nc\nd\n");
/// assert_eq!(passlab::diff::apply("a\nb\nc\n", &e), "a\nB\nc\nd\n");
/// assert_eq!(e.len(), 2);
/// ```
pub fn edits(old: &str, new: &str) -> Vec<Edit> {
    if old == new {
        return Vec::new();
    }
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let (pre, suf) = common_lines(ob, nb);
    let middle_a: Vec<&str> = old[pre..ob.len() - suf].split_inclusive('\n').collect();
    let middle_b: Vec<&str> = new[pre..nb.len() - suf].split_inclusive('\n').collect();
    let mut ids: HashMap<&str, u32> = HashMap::with_capacity(middle_a.len() + middle_b.len());
    let ia = intern(&middle_a, &mut ids);
    let ib = intern(&middle_b, &mut ids);
    let mut out: Vec<Edit> = Vec::new();
    let mut keep = old[..pre].matches('\n').count() as u32;
    for op in line_ops(&ia, &ib, &middle_a, &middle_b) {
        let (delete, insert) = match op {
            DiffOp::Equal { len, .. } => {
                keep += len as u32;
                continue;
            }
            DiffOp::Delete { old_len, .. } => (old_len, 0..0),
            DiffOp::Insert {
                new_index, new_len, ..
            } => (0, new_index..new_index + new_len),
            DiffOp::Replace {
                old_len,
                new_index,
                new_len,
                ..
            } => (old_len, new_index..new_index + new_len),
        };
        // Steps with nothing kept between them are one step (deleting old
        // lines and inserting new ones at one place commute).
        match out.last_mut() {
            Some(last) if keep == 0 => {
                last.delete += delete as u32;
                last.insert.extend(middle_b[insert].iter().copied());
            }
            _ => out.push(Edit {
                keep,
                delete: delete as u32,
                insert: middle_b[insert].concat(),
            }),
        }
        keep = 0;
    }
    out
}

/// One row of two texts shown side by side ([`side_by_side`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub left: Option<String>,
    pub right: Option<String>,
    /// ` ` the same on both sides, `|` changed, `<` only on the left, `>`
    /// only on the right (as `diff -y` marks them).
    pub mark: char,
}

/// `left` and `right` aligned line by line as `diff -y` aligns them: the
/// lines both keep on one row, and within each changed stretch the
/// deleted and inserted lines paired in order (`|`), the rest alone (`<`,
/// `>`).
///
/// ```
/// let rows = passlab::diff::side_by_side("a\nb\nc\n", "a\nB\nc\nd\n");
/// let marks: String = rows.iter().map(|r| r.mark).collect();
/// assert_eq!(marks, " | >");
/// ```
pub fn side_by_side(left: &str, right: &str) -> Vec<Row> {
    let ls: Vec<&str> = left.lines().collect();
    let mut rows = Vec::new();
    let mut o = 0usize;
    let same = |o: &mut usize, rows: &mut Vec<Row>| {
        if let Some(l) = ls.get(*o) {
            rows.push(Row {
                left: Some(l.to_string()),
                right: Some(l.to_string()),
                mark: ' ',
            });
        }
        *o += 1;
    };
    let with_newline = |t: &str| {
        if t.is_empty() || t.ends_with('\n') {
            t.to_string()
        } else {
            format!("{t}\n")
        }
    };
    for e in edits(&with_newline(left), &with_newline(right)) {
        for _ in 0..e.keep {
            same(&mut o, &mut rows);
        }
        let deleted: Vec<&str> = ls
            .get(o..o + e.delete as usize)
            .map(|d| d.to_vec())
            .unwrap_or_default();
        o += e.delete as usize;
        let inserted: Vec<&str> = e.insert.lines().collect();
        for i in 0..deleted.len().max(inserted.len()) {
            let (l, r) = (deleted.get(i), inserted.get(i));
            rows.push(Row {
                left: l.map(|l| l.to_string()),
                right: r.map(|r| r.to_string()),
                mark: match (l, r) {
                    (Some(_), Some(_)) => '|',
                    (Some(_), None) => '<',
                    _ => '>',
                },
            });
        }
    }
    while o < ls.len() {
        same(&mut o, &mut rows);
    }
    rows
}

/// A renumbering of LLVM's unnamed values (`%7`, and a block's `7:`) and
/// of its metadata (`!7`, keyed from [`METADATA`] on): the breakpoints
/// `(old, new)` sorted by `old`, each mapping the numbers from its `old` to
/// the next breakpoint's by the same offset (`old + k` to `new + k`);
/// numbers before the first are kept. A pass that deletes one instruction
/// renumbers every value after it (and one that adds debug metadata every
/// `!dbg` after it), so two versions of a function differ on most lines
/// but by one offset: the histories the explorer embeds store that offset
/// and the few lines that really changed ([`renumbered_edits`]).
pub type Renumbering = Vec<(u32, u32)>;

/// Where metadata numbers start in a [`Renumbering`]'s keys: `!7` is
/// `METADATA + 7`, apart from the values' `%7` (numbers LLVM prints have
/// at most nine digits, below this).
pub const METADATA: u32 = 1 << 31;

/// The numbers in `line` that a [`Renumbering`] maps, as byte ranges of
/// their digits with their key's base (0, or [`METADATA`]): those after
/// `%`, those after `!` (metadata), and a line's leading digits before `:`
/// (a block's label). Digits with a leading zero or more than nine of them
/// are not numbers LLVM prints; they are left alone (the explorer's script
/// follows the same rules, src/explore/explorer.js).
fn numbers(line: &str) -> impl Iterator<Item = (usize, usize, u32)> + '_ {
    let b = line.as_bytes();
    let digits_from = move |i: usize| {
        let mut j = i;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let ok = move |i: usize, j: usize| j > i && j - i <= 9 && (b[i] != b'0' || j - i == 1);
    let label = {
        let j = digits_from(0);
        (ok(0, j) && b.get(j) == Some(&b':')).then_some((0, j, 0))
    };
    let mut i = 0;
    let refs = std::iter::from_fn(move || {
        while i < b.len() {
            if b[i] == b'%' || b[i] == b'!' {
                let base = if b[i] == b'!' { METADATA } else { 0 };
                let j = digits_from(i + 1);
                let start = i + 1;
                i = j.max(i + 1);
                if ok(start, j) {
                    return Some((start, j, base));
                }
            } else {
                i += 1;
            }
        }
        None
    });
    label.into_iter().chain(refs)
}

/// `n` (a key: a value's number, or [`METADATA`] + a metadata number)
/// mapped by the last breakpoint at or below it in its own space.
fn map_number(n: u32, map: &[(u32, u32)]) -> u32 {
    match map.partition_point(|&(old, _)| old <= n) {
        0 => n,
        // A value's breakpoint does not move metadata.
        k if n >= METADATA && map[k - 1].0 < METADATA => n,
        k => {
            let (old, new) = map[k - 1];
            // A number past what u32 holds is kept as it is.
            new.checked_add(n - old).unwrap_or(n)
        }
    }
}

/// `text` with its unnamed values' numbers renumbered by `map`.
///
/// ```
/// let t = "  %3 = add i32 %2, 1\n4:\n  ret i32 %3\n";
/// assert_eq!(passlab::diff::renumber(t, &[(3, 2)]), "  %2 = add i32 %2, 1\n3:\n  ret i32 %2\n");
/// ```
pub fn renumber(text: &str, map: &[(u32, u32)]) -> String {
    if map.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let mut at = 0;
        for (i, j, base) in numbers(line) {
            out.push_str(&line[at..i]);
            match line[i..j].parse::<u32>() {
                Ok(n) => {
                    // Mapped within its own space, else kept.
                    let m = map_number(n + base, map)
                        .checked_sub(base)
                        .filter(|m| *m < METADATA)
                        .unwrap_or(n);
                    let _ = write!(out, "{m}");
                }
                Err(_) => out.push_str(&line[i..j]),
            }
            at = j;
        }
        out.push_str(&line[at..]);
    }
    out
}

/// The renumbering that best explains `new` as `old` with its values
/// renumbered: the lines that stay the same but for their numbers (found
/// as [`edits`] finds kept lines, on the lines with numbers masked) pair
/// their numbers in order.
pub fn renumbering(old: &str, new: &str) -> Renumbering {
    let mask = |t: &str| {
        let mut out = String::with_capacity(t.len());
        for line in t.split_inclusive('\n') {
            let mut at = 0;
            for (i, j, _) in numbers(line) {
                out.push_str(&line[at..i]);
                out.push('#');
                at = j;
            }
            out.push_str(&line[at..]);
        }
        out
    };
    let (mo, mn) = (mask(old), mask(new));
    let (ol, nl): (Vec<&str>, Vec<&str>) = (
        old.split_inclusive('\n').collect(),
        new.split_inclusive('\n').collect(),
    );
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut pair_lines = |a: &str, b: &str| {
        let (xs, ys): (Vec<_>, Vec<_>) = (numbers(a).collect(), numbers(b).collect());
        if xs.len() == ys.len() {
            for ((i, j, base), (k, l, other)) in xs.into_iter().zip(ys) {
                if base != other {
                    continue;
                }
                if let (Ok(x), Ok(y)) = (a[i..j].parse::<u32>(), b[k..l].parse::<u32>()) {
                    pairs.push((x + base, y + base));
                }
            }
        }
    };
    let (mut o, mut n) = (0usize, 0usize);
    for e in edits(&mo, &mn) {
        for _ in 0..e.keep {
            if let (Some(a), Some(b)) = (ol.get(o), nl.get(n)) {
                pair_lines(a, b);
            }
            o += 1;
            n += 1;
        }
        o += e.delete as usize;
        n += e.insert.matches('\n').count();
    }
    while let (Some(a), Some(b)) = (ol.get(o), nl.get(n)) {
        pair_lines(a, b);
        o += 1;
        n += 1;
    }
    // The first pairing of each old number; then a breakpoint wherever the
    // offset changes (none while numbers stay themselves).
    pairs.sort_by_key(|&(x, _)| x);
    pairs.dedup_by_key(|p| p.0);
    let mut map = Vec::new();
    let mut offset = 0i64;
    for (x, y) in pairs {
        // Metadata numbers start with no offset of the values'.
        if x >= METADATA && map.last().is_none_or(|&(old, _)| old < METADATA) {
            offset = 0;
        }
        let d = i64::from(y) - i64::from(x);
        if d != offset {
            map.push((x, y));
            offset = d;
        }
    }
    map
}

/// The renumbering from `old` to `new` ([`renumbering`]) and the edit
/// script from `old` so renumbered to `new`: `apply(&renumber(old, &map),
/// &edits) == new`.
///
/// ```
/// let old = "  %1 = mul i32 %0, 2\n  %2 = add i32 %1, 0\n  %3 = sub i32 %2, %0\n  ret i32 %3\n";
/// let new = "  %1 = mul i32 %0, 2\n  %2 = sub i32 %1, %0\n  ret i32 %2\n";
/// let (map, e) = passlab::diff::renumbered_edits(old, new);
/// assert_eq!(passlab::diff::apply(&passlab::diff::renumber(old, &map), &e), new);
/// // One line deleted and nothing inserted: the others only renumbered.
/// assert_eq!(e.iter().map(|e| e.insert.lines().count()).sum::<usize>(), 0);
/// ```
pub fn renumbered_edits(old: &str, new: &str) -> (Renumbering, Vec<Edit>) {
    if old == new {
        return (Vec::new(), Vec::new());
    }
    let map = renumbering(old, new);
    if map.is_empty() {
        return (map, edits(old, new));
    }
    let e = edits(&renumber(old, &map), new);
    (map, e)
}

/// `old` with an edit script from [`edits`] applied.
pub fn apply(old: &str, edits: &[Edit]) -> String {
    let mut lines = old.split_inclusive('\n');
    let mut out = String::with_capacity(old.len());
    for e in edits {
        for _ in 0..e.keep {
            out.extend(lines.next());
        }
        for _ in 0..e.delete {
            lines.next();
        }
        out.push_str(&e.insert);
    }
    out.extend(lines);
    out
}

/// `op` with its indices moved by `by` lines.
fn shift(op: DiffOp, by: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + by,
            new_index: new_index + by,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + by,
            old_len,
            new_index: new_index + by,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + by,
            new_index: new_index + by,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + by,
            old_len,
            new_index: new_index + by,
            new_len,
        },
    }
}

/// Each line's number: equal lines, equal numbers.
fn intern<'a>(lines: &[&'a str], ids: &mut HashMap<&'a str, u32>) -> Vec<u32> {
    lines
        .iter()
        .map(|l| {
            let next = ids.len() as u32;
            *ids.entry(l).or_insert(next)
        })
        .collect()
}

/// `start,len` as `diff -u` writes it (1-based; `start-1,0` when empty).
fn range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// Work done on another thread, its results taken in the order it was
/// handed over: print-changed and explore compute their diffs there while
/// the pipeline goes on (the printing, which reads the IR, stays on the
/// pipeline's thread). One thread per owner, started with the first job,
/// ended when the owner is dropped. If the thread cannot start, jobs run
/// where they are handed over.
pub(crate) struct Background<R: Send + 'static> {
    jobs: Option<std::sync::mpsc::Sender<Box<dyn FnOnce() -> R + Send>>>,
    results: Option<std::sync::mpsc::Receiver<R>>,
    /// Results computed here (no thread), in order after those in flight.
    here: std::collections::VecDeque<R>,
    in_flight: usize,
    started: bool,
}

impl<R: Send + 'static> Default for Background<R> {
    fn default() -> Self {
        Background {
            jobs: None,
            results: None,
            here: Default::default(),
            in_flight: 0,
            started: false,
        }
    }
}

impl<R: Send + 'static> Background<R> {
    /// Hands over a job.
    pub(crate) fn submit(&mut self, job: impl FnOnce() -> R + Send + 'static) {
        if !self.started {
            self.started = true;
            let (jobs, job_rx) = std::sync::mpsc::channel::<Box<dyn FnOnce() -> R + Send>>();
            let (result_tx, results) = std::sync::mpsc::channel();
            let spawned = std::thread::Builder::new()
                .name("passlab-diff".into())
                .spawn(move || {
                    for job in job_rx {
                        if result_tx.send(job()).is_err() {
                            break;
                        }
                    }
                });
            if spawned.is_ok() {
                self.jobs = Some(jobs);
                self.results = Some(results);
            }
        }
        if self.here.is_empty() {
            if let Some(jobs) = &self.jobs {
                match jobs.send(Box::new(job)) {
                    Ok(()) => {
                        self.in_flight += 1;
                        return;
                    }
                    Err(e) => {
                        // The thread is gone: from now on, here.
                        self.jobs = None;
                        self.drain_in_flight();
                        self.here.push_back((e.0)());
                        return;
                    }
                }
            }
        }
        self.here.push_back(job());
    }

    /// Moves the results in flight, in order, to `here` (empty then).
    fn drain_in_flight(&mut self) {
        while self.in_flight > 0 {
            match self.results.as_ref().map(|r| r.recv()) {
                Some(Ok(r)) => {
                    self.in_flight -= 1;
                    self.here.push_back(r);
                }
                _ => break,
            }
        }
    }

    /// The results ready, in order; with `wait`, all of them (waiting for
    /// those in flight). A job lost with its thread (it panicked) has no
    /// result: `lost` counts those.
    pub(crate) fn ready(&mut self, wait: bool, lost: &mut usize) -> Vec<R> {
        let mut out = Vec::new();
        while self.in_flight > 0 {
            let r = match &self.results {
                Some(rx) if wait => rx.recv().ok(),
                Some(rx) => match rx.try_recv() {
                    Ok(r) => Some(r),
                    Err(std::sync::mpsc::TryRecvError::Empty) => break,
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
                },
                None => None,
            };
            match r {
                Some(r) => {
                    self.in_flight -= 1;
                    out.push(r);
                }
                None => {
                    *lost += self.in_flight;
                    self.in_flight = 0;
                    self.jobs = None;
                }
            }
        }
        if self.in_flight == 0 {
            out.extend(self.here.drain(..));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{apply, edits, renumber, renumbered_edits, unified};

    #[test]
    fn a_deleted_instruction_costs_its_line_not_every_renumbered_one() {
        // At -O0 every value is numbered; instcombine deletes the `add 0`,
        // and everything after it is renumbered.
        let m = crate::Module::from_c(
            "int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * 3 + 0; return s + n * 2; }",
            "f.c",
        )
        .unwrap();
        let old = m.print_function("f").unwrap();
        let mut after = m.copy();
        crate::pipeline::parse("mem2reg,instcombine")
            .unwrap()
            .apply(&mut after)
            .unwrap();
        let new = after.print_function("f").unwrap();
        let (map, e) = renumbered_edits(&old, &new);
        assert_eq!(apply(&renumber(&old, &map), &e), new);
        let inserted = |e: &[super::Edit]| e.iter().map(|x| x.insert.len()).sum::<usize>();
        assert!(inserted(&e) <= inserted(&edits(&old, &new)));
        // Odd digits are left alone: leading zeros, ten digits, a lone %.
        let odd = "  %007 = x %1234567890, %\n01: %3\n";
        assert_eq!(
            renumber(odd, &[(0, 5)]),
            "  %007 = x %1234567890, %\n01: %8\n"
        );
        // A number past u32 after the offset stays as it is.
        assert_eq!(
            renumber("%999999999\n", &[(0, u32::MAX - 5)]),
            "%999999999\n"
        );
    }

    #[test]
    fn metadata_renumbering_is_renumbering_too() {
        // A pass deletes the first instruction (values renumber by -1) and
        // adds debug metadata before the function's (its `!dbg` numbers
        // move by +3): only the deleted line is an edit.
        let old = "  %1 = add i32 %0, 1, !dbg !20\n  %2 = mul i32 %1, 2, !dbg !21\n    #dbg_value(i32 %2, !15, !DIExpression(), !22)\n  ret i32 %2, !dbg !23\n";
        let new = "  %1 = mul i32 %0, 2, !dbg !24\n    #dbg_value(i32 %1, !15, !DIExpression(), !25)\n  ret i32 %1, !dbg !26\n";
        let (map, e) = renumbered_edits(old, new);
        assert_eq!(apply(&renumber(old, &map), &e), new);
        assert_eq!(e.iter().map(|x| x.delete).sum::<u32>(), 1, "{map:?} {e:?}");
        assert!(e.iter().all(|x| x.insert.is_empty()), "{e:?}");
        // Values and metadata keep their own spaces: a values' offset does
        // not move `!15`, nor metadata that pairs with no offset.
        assert_eq!(
            renumber("  %3 = f(!15)\n", &[(3, 2)]),
            "  %3 = f(!15)\n".replace("%3", "%2")
        );
        // Names after `!` are not numbers.
        assert_eq!(
            renumber("  br label %2, !llvm.loop !7\n", &map),
            "  br label %1, !llvm.loop !7\n"
        );
    }

    #[test]
    fn a_g_module_after_a_pass_differs_by_what_changed_not_by_renumbering() {
        // clang -g: every instruction carries !dbg, every variable a
        // #dbg_declare; after sroa, mem2reg-like changes only.
        let src = crate::Source::text(
            crate::Lang::C,
            "int f(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * 3 + 0; return s + n * 2; }\nint g(int x) { return f(&x, 1); }\n",
            "g.c",
        )
        .clang_args(["-g"]);
        let m = crate::Module::load(&[src]).unwrap();
        let old = m.print_function("g").unwrap();
        assert!(old.contains("!dbg !"), "{old}");
        let mut after = m.copy();
        crate::pipeline::parse("function(instcombine)")
            .unwrap()
            .apply(&mut after)
            .unwrap();
        let new = after.print_function("g").unwrap();
        let (map, e) = renumbered_edits(&old, &new);
        assert_eq!(apply(&renumber(&old, &map), &e), new);
        // Every line instcombine leaves alone is kept, whatever its numbers.
        let kept: u32 = e.iter().map(|x| x.keep).sum();
        let plain = edits(&old, &new);
        let plain_kept: u32 = plain.iter().map(|x| x.keep).sum();
        assert!(kept >= plain_kept, "{kept} < {plain_kept}");
        // The signature's and the return's `!dbg` moved by two: kept, as
        // a plain diff would not keep them.
        let inserted: String = e.iter().map(|x| x.insert.as_str()).collect();
        let plainly: String = plain.iter().map(|x| x.insert.as_str()).collect();
        assert!(
            plainly.contains("define dso_local") && plainly.contains("ret i32"),
            "{plainly}"
        );
        assert!(
            !inserted.contains("define dso_local") && !inserted.contains("ret i32"),
            "{old}\n{new}\n{e:?}"
        );
    }

    #[test]
    fn edit_scripts_turn_old_into_new() {
        let base: String = (0..40)
            .map(|i| format!("  %v{i} = add i32 %a, {i}\n"))
            .collect();
        let lines: Vec<&str> = base.split_inclusive('\n').collect();
        let cases = [
            String::new(),
            base.replace("%v3 ", "%w3 "),
            base.replace("%v39 = add i32 %a, 39\n", ""),
            format!("new first\n{base}"),
            format!("{base}no newline at the end"),
            lines[5..30].concat(),
            lines.iter().rev().copied().collect::<String>(),
        ];
        for new in &cases {
            let e = edits(&base, new);
            assert_eq!(&apply(&base, &e), new);
            assert_eq!(&apply(new, &edits(new, &base)), &base);
        }
        assert!(edits(&base, &base).is_empty());
        // One changed line: one step.
        assert_eq!(edits(&base, &cases[1]).len(), 1);
    }

    #[test]
    fn long_functions_rewritten_throughout_still_diff_correctly() {
        // 3000 lines, every value renumbered after the first 100 and every
        // tenth line gone: patience diff, with unique lines as anchors.
        let old: String = (0..3000)
            .map(|i| format!("  %{i} = add i32 %{}, {i}\n", i / 2))
            .collect();
        let new: String = (0..3000)
            .filter(|i| i < &100 || i % 10 != 0)
            .map(|i| {
                format!(
                    "  %{} = add i32 %{}, {i}\n",
                    if i < 100 { i } else { i + 1 },
                    i / 2
                )
            })
            .collect();
        let e = edits(&old, &new);
        assert_eq!(apply(&old, &e), new);
        let d = unified(&old, &new, "a", "b", 3);
        let removed = d
            .lines()
            .filter(|l| l.starts_with('-') && !l.starts_with("---"));
        let added = d
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"));
        // Every changed line is in the diff; the first hundred are not.
        assert!(removed.count() >= 2900 - 100);
        assert!(added.count() >= 2600);
        assert!(d.starts_with("--- a\n+++ b\n@@ -98,"));
    }

    #[test]
    fn background_results_come_back_in_order() {
        let mut b = super::Background::default();
        for i in 0..100u64 {
            b.submit(move || {
                if i % 7 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                i * i
            });
        }
        let mut lost = 0;
        let mut got = b.ready(false, &mut lost);
        got.extend(b.ready(true, &mut lost));
        assert_eq!(got, (0..100u64).map(|i| i * i).collect::<Vec<_>>());
        assert_eq!(lost, 0);
        assert!(b.ready(true, &mut lost).is_empty());
    }

    #[test]
    fn equal_texts_give_no_diff() {
        assert_eq!(unified("a\nb\n", "a\nb\n", "x", "y", 3), "");
    }

    #[test]
    fn matches_diff_u_format() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        let d = unified(old, new, "a", "b", 1);
        assert_eq!(
            d,
            "--- a\n+++ b\n@@ -4,3 +4,3 @@\n 4\n-5\n+five\n 6\n@@ -8 +8,2 @@\n 8\n+9\n"
        );
    }

    #[test]
    fn agrees_with_a_plain_line_diff_on_many_edits() {
        // Against similar's own unified diff (no trimming) on edits at the
        // start, middle, end, and lines that are prefixes of others.
        let base: Vec<String> = (0..60)
            .map(|i| format!("  %v{i} = add i32 %a, {i}"))
            .collect();
        let cases: Vec<Vec<String>> = vec![
            {
                let mut v = base.clone();
                v[0] = "changed".into();
                v
            },
            {
                let mut v = base.clone();
                v[59] = "changed".into();
                v
            },
            {
                let mut v = base.clone();
                v.remove(30);
                v.insert(10, "new".into());
                v
            },
            {
                let mut v = base.clone();
                v[20].push('0');
                v
            },
            {
                let mut v = base.clone();
                v.truncate(40);
                v
            },
            {
                let mut v = base.clone();
                v.push("tail".into());
                v
            },
        ];
        let old = base.join("\n") + "\n";
        for case in cases {
            let new = case.join("\n") + "\n";
            let ours = unified(&old, &new, "a", "b", 3);
            let theirs = similar::TextDiff::from_lines(&old, &new)
                .unified_diff()
                .context_radius(3)
                .header("a", "b")
                .to_string();
            assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn empty_sides() {
        assert_eq!(
            unified("", "x\n", "a", "b", 3),
            "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n"
        );
        assert_eq!(
            unified("x\n", "", "a", "b", 3),
            "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n"
        );
    }
}
