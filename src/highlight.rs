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
    fn long_text_is_left_plain() {
        assert!(super::ir(&"; x\n".repeat(super::MAX_BYTES)).is_none());
    }
}
