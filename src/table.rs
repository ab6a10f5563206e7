//! [`Table`]: rows of results with a text rendering (comfy-table), so that
//! every report renders the same way and front ends can turn the same rows
//! into other formats.

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
        for row in &self.rows {
            out.push_str("<tr>");
            for (cell, (_, align)) in row.iter().zip(&self.columns) {
                out.push_str(&format!(
                    "<td style=\"text-align:{}\">{}</td>",
                    css(*align),
                    escape(cell)
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
}
