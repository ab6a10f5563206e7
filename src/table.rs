//! [`Table`]: rows of results with a text rendering (comfy-table), so that
//! every report renders the same way and front ends can turn the same rows
//! into other formats.

#![forbid(unsafe_code)]

use comfy_table::{presets, CellAlignment, ContentArrangement};

/// How a column's cells are aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A titled table of text cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// What the table shows.
    pub title: String,
    /// Column headers and alignment.
    pub columns: Vec<(String, Align)>,
    /// Cells, one row per entry, as many as there are columns.
    pub rows: Vec<Vec<String>>,
    /// Lines printed under the table (totals, what was left out).
    pub notes: Vec<String>,
    /// The whole text of cells shown shortened, by (row, column): HTML
    /// shows it on hover.
    pub hover: std::collections::BTreeMap<(usize, usize), String>,
}

impl Table {
    /// An empty table with these columns; a header ending in `>` is
    /// right-aligned (the `>` is dropped).
    pub fn new(title: &str, columns: &[&str]) -> Table {
        Table {
            title: title.into(),
            columns: columns
                .iter()
                .map(|c| match c.strip_suffix('>') {
                    Some(c) => (c.to_string(), Align::Right),
                    None => (c.to_string(), Align::Left),
                })
                .collect(),
            rows: Vec::new(),
            notes: Vec::new(),
            hover: Default::default(),
        }
    }

    /// Adds a row.
    pub fn push<I: IntoIterator<Item = S>, S: Into<String>>(&mut self, cells: I) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The table as plain text: title, aligned columns, notes.
    pub fn to_text(&self) -> String {
        let mut t = comfy_table::Table::new();
        t.load_preset(presets::ASCII_BORDERS_ONLY_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(self.columns.iter().map(|(c, _)| c.as_str()));
        for (i, (_, align)) in self.columns.iter().enumerate() {
            if let Some(col) = t.column_mut(i) {
                col.set_cell_alignment(match align {
                    Align::Left => CellAlignment::Left,
                    Align::Right => CellAlignment::Right,
                });
            }
        }
        for row in &self.rows {
            t.add_row(row.iter().map(String::as_str));
        }
        let mut out = String::new();
        if !self.title.is_empty() {
            out.push_str(&self.title);
            out.push('\n');
        }
        out.push_str(&t.to_string());
        out.push('\n');
        for n in &self.notes {
            out.push_str(n);
            out.push('\n');
        }
        out
    }
}

impl Table {
    /// The table as an HTML `<table>` with a caption and the notes below.
    pub fn to_html(&self) -> String {
        let mut out = String::from("<table>");
        if !self.title.is_empty() {
            out.push_str(&format!("<caption>{}</caption>", escape(&self.title)));
        }
        out.push_str("<thead><tr>");
        for (c, align) in &self.columns {
            out.push_str(&format!(
                "<th style=\"text-align:{}\">{}</th>",
                css(*align),
                escape(c)
            ));
        }
        out.push_str("</tr></thead><tbody>");
        for (r, row) in self.rows.iter().enumerate() {
            out.push_str("<tr>");
            for (c, (cell, (_, align))) in row.iter().zip(&self.columns).enumerate() {
                // Leading spaces nest a row (the timing tree): HTML would
                // collapse them, so they become the cell's indentation.
                let text = cell.trim_start_matches(' ');
                let indent = cell.len() - text.len();
                let pad = if indent > 0 && *align == Align::Left {
                    format!(";padding-left:{indent}ch")
                } else {
                    String::new()
                };
                let text = if pad.is_empty() { cell.as_str() } else { text };
                let title = self
                    .hover
                    .get(&(r, c))
                    .map_or(String::new(), |t| format!(" title=\"{}\"", escape(t)));
                out.push_str(&format!(
                    "<td style=\"text-align:{}{pad}\"{title}>{}</td>",
                    css(*align),
                    escape(text)
                ));
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table>");
        for n in &self.notes {
            out.push_str(&format!("<p>{}</p>", escape(n)));
        }
        out
    }
}

fn css(a: Align) -> &'static str {
    match a {
        Align::Left => "left",
        Align::Right => "right",
    }
}

/// `text` for a Markdown table cell: `<` and `>` outside code spans
/// written as entities, so that `lto<O2>` in prose stays text instead of
/// becoming an HTML tag the book swallows (code spans keep them as typed).
pub(crate) fn markdown_prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for ch in text.chars() {
        match ch {
            '`' => {
                in_code = !in_code;
                out.push(ch);
            }
            '<' if !in_code => out.push_str("&lt;"),
            '>' if !in_code => out.push_str("&gt;"),
            _ => out.push(ch),
        }
    }
    out
}

/// Escapes text for HTML.
pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl std::fmt::Display for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// Milliseconds with three decimals.
/// `n` and the noun, plural unless `n` is 1: `1 function`, `2 functions`.
pub fn count<N: std::fmt::Display + PartialEq + From<u8>>(n: N, noun: &str) -> String {
    if n == N::from(1) {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(crate) fn ms(d: std::time::Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// A percentage with one decimal.
pub(crate) fn pct(part: f64, whole: f64) -> String {
    if whole > 0.0 {
        format!("{:.1}%", 100.0 * part / whole)
    } else {
        "-".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_prose_escapes_angle_brackets_outside_code_spans_only() {
        assert_eq!(
            markdown_prose("next :run lto<O2>; `default<O2>` as typed"),
            "next :run lto&lt;O2&gt;; `default<O2>` as typed"
        );
    }

    #[test]
    fn renders_title_aligned_columns_and_notes() {
        let mut t = Table::new("sizes", &["pass", "instructions>"]);
        t.push(["instcombine", "12"]);
        t.push(["sroa", "1234"]);
        t.notes.push("2 passes".into());
        let text = t.to_text();
        assert!(text.starts_with("sizes\n"), "{text}");
        assert!(
            text.contains("|   12 |") || text.contains("  12 |"),
            "{text}"
        );
        assert!(text.ends_with("2 passes\n"), "{text}");
    }

    #[test]
    fn nesting_by_leading_spaces_is_indentation_in_html() {
        let mut t = Table::new("timing", &["pass", "ms>"]);
        t.push(["default<O2>", "10"]);
        t.push(["    instcombine", "  4"]);
        let html = t.to_html();
        // A tree in HTML, whose white space would otherwise collapse.
        assert!(
            html.contains("<td style=\"text-align:left;padding-left:4ch\">instcombine</td>"),
            "{html}"
        );
        assert!(
            html.contains("<td style=\"text-align:left\">default&lt;O2&gt;</td>"),
            "{html}"
        );
        // Right-aligned cells keep their text.
        assert!(
            html.contains("<td style=\"text-align:right\">  4</td>"),
            "{html}"
        );
    }

    #[test]
    fn a_shortened_cell_has_its_whole_text_on_hover() {
        let mut t = Table::new("remarks", &["pass", "commonest message"]);
        t.hover.insert((0, 1), "a \"long\" message in full".into());
        t.push(["licm", "a \"long\" mes…"]);
        let html = t.to_html();
        assert!(
            html.contains(
                "title=\"a &quot;long&quot; message in full\">a &quot;long&quot; mes…</td>"
            ),
            "{html}"
        );
    }

    #[test]
    fn counts_are_singular_for_one() {
        assert_eq!(count(1, "function"), "1 function");
        assert_eq!(count(0, "function"), "0 functions");
        assert_eq!(count(2, "job"), "2 jobs");
    }
}
