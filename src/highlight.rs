//! Syntax-highlighted HTML for LLVM IR, unified diffs and x86 assembly, for front ends
//! that show HTML (notebooks). The grammars are the `bat` project's, via
//! `two-face` and `syntect`; nothing here is hand-written highlighting.
//! The plain text stays the text form; this only adds an HTML one.
//!
//! A light theme with inline styles; text over [`MAX_BYTES`] is left plain.
//! The regular-expression crates are optimized even in test builds
//! (Cargo.toml), since the notebooks' IR is highlighted there too.
//!
//! ```
//! let html = passlab::highlight::ir("define i32 @f(i32 %x) {\n  ret i32 %x\n}\n").unwrap();
//! assert!(html.starts_with("<pre") && html.contains("define"));
//! ```

#![forbid(unsafe_code)]

use std::sync::OnceLock;
use syntect::highlighting::Theme;
use syntect::html::highlighted_html_for_string;
use syntect::parsing::{SyntaxReference, SyntaxSet};

/// Text longer than this is not highlighted (a whole sqlite3 module would
/// be megabytes of markup): the plain form is shown instead.
pub const MAX_BYTES: usize = 128 * 1024;

struct Highlighter {
    syntaxes: SyntaxSet,
    theme: Theme,
}

fn highlighter() -> &'static Highlighter {
    static H: OnceLock<Highlighter> = OnceLock::new();
    H.get_or_init(|| {
        let themes = two_face::theme::extra();
        Highlighter {
            syntaxes: two_face::syntax::extra_newlines(),
            theme: themes[two_face::theme::EmbeddedThemeName::InspiredGithub].clone(),
        }
    })
}

fn html_for(text: &str, syntax: impl Fn(&SyntaxSet) -> Option<&SyntaxReference>) -> Option<String> {
    if text.len() > MAX_BYTES {
        return None;
    }
    let h = highlighter();
    let syntax = syntax(&h.syntaxes)?;
    highlighted_html_for_string(text, &h.syntaxes, syntax, &h.theme).ok()
}

/// LLVM IR as highlighted HTML (a `<pre>`), or `None` when it is too long.
pub fn ir(text: &str) -> Option<String> {
    html_for(text, |s| s.find_syntax_by_extension("ll"))
}

/// A unified diff as highlighted HTML, or `None` when it is too long.
pub fn diff(text: &str) -> Option<String> {
    html_for(text, |s| s.find_syntax_by_extension("diff"))
}

/// Lines of x86 assembly, each as highlighted HTML spans (no `<pre>`: the
/// caller lays the lines out), or `None` when they are too long together.
pub fn asm_lines(lines: &[String]) -> Option<Vec<String>> {
    use syntect::easy::HighlightLines;
    use syntect::html::{styled_line_to_highlighted_html, IncludeBackground};
    if lines.iter().map(String::len).sum::<usize>() > MAX_BYTES {
        return None;
    }
    let h = highlighter();
    let syntax = h
        .syntaxes
        .find_syntax_by_name("Assembly (x86_64)")
        .or_else(|| h.syntaxes.find_syntax_by_extension("asm"))?;
    let mut hl = HighlightLines::new(syntax, &h.theme);
    lines
        .iter()
        .map(|l| {
            let line = format!("{l}\n");
            let regions = hl.highlight_line(&line, &h.syntaxes).ok()?;
            let html = styled_line_to_highlighted_html(&regions, IncludeBackground::No).ok()?;
            Some(html.trim_end_matches('\n').to_string())
        })
        .collect()
}

/// Background colours for source lines and the code that comes from them
/// (Compiler Explorer's idea: one colour per source line, cycling), in
/// `:asm`'s assembly, `:show`'s IR and the explorer's diffs.
pub const SOURCE_COLOURS: [&str; 12] = [
    "#fde2e4", "#e2ece9", "#dfe7fd", "#fff1c1", "#e8dff5", "#d7f0f7", "#fce1c8", "#e4f1d0",
    "#f5d5e8", "#d9e4dd", "#ece4db", "#dde1f4",
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// IR whose lines come from source lines, as `:asm` shows assembly: the
/// source lines the IR uses on the left (those `source(path)` gives the
/// text of), the IR on the right, each source line and its IR lines on one
/// background colour ([`SOURCE_COLOURS`]), hovering either outlining both.
/// `of_line[i]` is the source line (file, line) IR line `i` comes from.
/// `None` when the text is too long ([`MAX_BYTES`]).
pub fn ir_by_source(
    text: &str,
    of_line: &[Option<(&str, u32)>],
    source: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if text.len() > MAX_BYTES {
        return None;
    }
    let (lines, keys) = SourceLines::of(of_line);
    let src = lines.source_pane(source);
    let ir = lines.ir_pane(text, &keys)?;
    let panes = if src.is_empty() {
        format!("<div>{ir}</div>")
    } else {
        format!("<div>{src}</div><div>{ir}</div>")
    };
    Some(format!(
        "<div class=\"plab-irsrc\"><style>{}</style>{panes}</div>",
        lines.css()
    ))
}

/// The source lines IR comes from, by file (a number into `files`) and
/// line, each with its colour's number.
struct SourceLines<'a> {
    /// Files in order of first use.
    files: Vec<&'a str>,
    /// Colours in order of first use.
    colour: std::collections::BTreeMap<(usize, u32), usize>,
}

impl<'a> SourceLines<'a> {
    /// The source lines of `of_line` (see [`ir_by_source`]), and each IR
    /// line's (file number, line).
    fn of(of_line: &[Option<(&'a str, u32)>]) -> (Self, Vec<Option<(usize, u32)>>) {
        let mut lines = SourceLines {
            files: Vec::new(),
            colour: Default::default(),
        };
        let keys = of_line
            .iter()
            .map(|l| {
                let (path, line) = (*l)?;
                let files = &mut lines.files;
                let f = files.iter().position(|p| *p == path).unwrap_or_else(|| {
                    files.push(path);
                    files.len() - 1
                });
                let n = lines.colour.len();
                lines.colour.entry((f, line)).or_insert(n);
                Some((f, line))
            })
            .collect();
        (lines, keys)
    }

    /// The panes' styles: layout, colours, and each source line outlined
    /// with its IR while either is hovered.
    fn css(&self) -> String {
        use std::fmt::Write;
        let mut css = String::from(
            ".plab-irsrc{display:flex;gap:12px;align-items:flex-start;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\
             .plab-irsrc>div{min-width:0;max-height:36em;overflow:auto;border:1px solid #ddd;padding:4px 0}\
             .plab-irsrc>div:first-of-type{flex:1}.plab-irsrc>div:last-of-type{flex:2}\
             .plab-irsrc .l{white-space:pre;padding:0 8px;min-height:1.45em}\
             .plab-irsrc .h{font-weight:bold;padding:2px 8px;color:#444;background:#f4f4f4}\
             .plab-irsrc .n{display:inline-block;min-width:3.5em;text-align:right;color:#888;margin-right:8px;user-select:none}",
        );
        for (i, c) in SOURCE_COLOURS.iter().enumerate() {
            let _ = write!(css, ".plab-irsrc .c{i}{{background:{c}}}");
        }
        for k in self.colour.keys() {
            let k = source_key(*k);
            let _ = write!(
                css,
                ".plab-irsrc:has([data-s=\"{k}\"]:hover) [data-s=\"{k}\"]{{outline:2px solid #333;outline-offset:-1px}}"
            );
        }
        css
    }

    /// The rest of a line's class attribute for source line `k`: its
    /// colour and key (nothing for none).
    fn class(&self, k: Option<(usize, u32)>) -> String {
        match k.and_then(|k| self.colour.get(&k).map(|c| (k, c))) {
            Some((k, c)) => format!(
                " c{}\" data-s=\"{}",
                c % SOURCE_COLOURS.len(),
                source_key(k)
            ),
            None => String::new(),
        }
    }

    /// The source pane: per file (`source` gives its text), its lines
    /// from the first to the last one the IR uses, a long stretch of
    /// unused lines folded.
    fn source_pane(&self, source: &dyn Fn(&str) -> Option<String>) -> String {
        use std::fmt::Write;
        let mut src = String::new();
        for (f, path) in self.files.iter().enumerate() {
            let Some(text) = source(path) else { continue };
            let lines: Vec<&str> = text.lines().collect();
            let used: Vec<u32> = self
                .colour
                .keys()
                .filter(|k| k.0 == f)
                .map(|k| k.1)
                .collect();
            let (Some(&first), Some(&last)) = (used.first(), used.last()) else {
                continue;
            };
            let name = path.rsplit('/').next().unwrap_or(path);
            let _ = write!(src, "<div class=\"h\">{}</div>", escape(name));
            let mut gap = 0;
            for line in first..=last.min(first.saturating_add(5000)) {
                let k = (f, line);
                if self.colour.contains_key(&k) {
                    gap = 0;
                } else {
                    gap += 1;
                    if gap > 3 {
                        continue;
                    }
                }
                let code = lines.get(line as usize - 1).copied().unwrap_or_default();
                let _ = write!(
                    src,
                    "<div class=\"l{}\"><span class=\"n\">{line}</span>{}</div>",
                    self.class(self.colour.contains_key(&k).then_some(k)),
                    escape(code)
                );
            }
        }
        src
    }

    /// The IR pane: `text` highlighted line by line, each line coloured
    /// as its source line (`keys`); `None` without LLVM IR's syntax.
    fn ir_pane(&self, text: &str, keys: &[Option<(usize, u32)>]) -> Option<String> {
        use std::fmt::Write;
        use syntect::easy::HighlightLines;
        use syntect::html::{styled_line_to_highlighted_html, IncludeBackground};
        let h = highlighter();
        let syntax = h.syntaxes.find_syntax_by_extension("ll")?;
        let mut hl = HighlightLines::new(syntax, &h.theme);
        let mut ir = String::new();
        for (line, k) in text
            .lines()
            .zip(keys.iter().chain(std::iter::repeat(&None)))
        {
            let with_end = format!("{line}\n");
            let body = hl
                .highlight_line(&with_end, &h.syntaxes)
                .ok()
                .and_then(|r| styled_line_to_highlighted_html(&r, IncludeBackground::No).ok())
                .map(|s| s.trim_end_matches('\n').to_string())
                .unwrap_or_else(|| escape(line));
            let _ = write!(ir, "<div class=\"l{}\">{body}</div>", self.class(*k));
        }
        Some(ir)
    }
}

/// A source line's key in the page's `data-s` attributes.
fn source_key((f, l): (usize, u32)) -> String {
    format!("{f}-{l}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn ir_keywords_and_values_get_their_own_colours() {
        let html = super::ir(
            "define i32 @f(i32 %x) {\nentry:\n  %y = add nsw i32 %x, 1\n  ret i32 %y\n}\n",
        )
        .unwrap();
        // Several distinct colours, and the text itself, escaped.
        let colours: std::collections::BTreeSet<&str> = html
            .split("color:")
            .skip(1)
            .map(|c| c.split(';').next().unwrap_or(""))
            .collect();
        assert!(colours.len() >= 3, "{html}");
        assert!(html.contains("add"));
        assert!(!html.contains("<entry"));
    }

    #[test]
    fn diffs_mark_added_and_removed_lines() {
        let html =
            super::diff("--- a\n+++ b\n@@ -1 +1 @@\n-  %y = add i32 %x, 0\n+  %y = %x\n").unwrap();
        assert!(html.contains("%y = add i32 %x, 0"), "{html}");
        assert!(html.matches("color:").count() >= 3, "{html}");
    }

    #[test]
    fn ir_lines_and_their_source_lines_share_colours() {
        let ir =
            "define i32 @f(i32 %x) {\n  %y = add i32 %x, 1 ; line 2\n  ret i32 %y ; line 3\n}\n";
        let of = [None, Some(("/t/a.c", 2)), Some(("/t/a.c", 3)), None];
        let src = |p: &str| {
            (p == "/t/a.c")
                .then(|| "int f(int x) {\n  int y = x + 1;\n  return y;\n}\n".to_string())
        };
        let html = super::ir_by_source(ir, &of, &src).unwrap();
        // Source line 2 and its IR line share colour 0, line 3 colour 1;
        // hovering either outlines both.
        assert_eq!(
            html.matches("class=\"l c0\" data-s=\"0-2\"").count(),
            2,
            "{html}"
        );
        assert_eq!(
            html.matches("class=\"l c1\" data-s=\"0-3\"").count(),
            2,
            "{html}"
        );
        assert!(html.contains(":has([data-s=\"0-2\"]:hover)"));
        assert!(html.contains("int y = x + 1;"));
        // Without the source, the IR alone, still coloured.
        let alone = super::ir_by_source(ir, &of, &|_| None).unwrap();
        assert!(!alone.contains("int y") && alone.contains("data-s=\"0-3\""));
    }

    #[test]
    fn long_text_is_left_plain() {
        assert!(super::ir(&"; x\n".repeat(super::MAX_BYTES)).is_none());
    }
}
