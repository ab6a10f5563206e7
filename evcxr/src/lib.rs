//! passlab's results in evcxr's own notebooks.
//!
//! A Rust user in `evcxr_jupyter` (or evcxr's REPL) who adds passlab as a
//! dependency sees its tables as HTML and its charts as images: evcxr shows
//! a cell's last value by calling its `evcxr_display` method, which writes
//! each format between `EVCXR_BEGIN_CONTENT <mime>` and `EVCXR_END_CONTENT`
//! on standard output. This crate gives passlab's result types that method
//! from the MIME bundles the core already makes (the core itself knows
//! nothing of evcxr's protocol).
//!
//! ```text
//! :dep passlab = { path = "…/passlab" }
//! :dep passlab-evcxr = { path = "…/passlab/evcxr" }
//! use passlab_evcxr::EvcxrDisplay;
//! let m = passlab::Module::from_c("int sq(int x) { return x * x; }", "sq.c")?;
//! m.stats().table()          // shown as an HTML table
//! ```
//!
//! In a passlab session, `:rust` cells have this trait in scope already.

use passlab::chart::Chart;
use passlab::session::{Bundle, Item, Output};
use passlab::table::Table;

/// What evcxr writes for one bundle: each format, text/plain last.
pub fn evcxr_text(bundle: &Bundle) -> String {
    let mut out = String::new();
    let mut data: Vec<&(String, String)> = bundle.data.iter().collect();
    data.sort_by_key(|(mime, _)| mime == "text/plain");
    for (mime, content) in data {
        out.push_str(&format!(
            "EVCXR_BEGIN_CONTENT {mime}\n{}\nEVCXR_END_CONTENT\n",
            content.trim_end()
        ));
    }
    out
}

/// Shows a value in an evcxr notebook (see the crate docs).
pub trait EvcxrDisplay {
    /// The value as a MIME bundle.
    fn bundle(&self) -> Bundle;

    /// Called by evcxr for a cell's last value.
    fn evcxr_display(&self) {
        use std::io::Write;
        // One write, so that nothing else printed lands inside the block.
        let text = evcxr_text(&self.bundle());
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

impl EvcxrDisplay for Bundle {
    fn bundle(&self) -> Bundle {
        self.clone()
    }
}

impl EvcxrDisplay for Table {
    fn bundle(&self) -> Bundle {
        Bundle::table(self)
    }
}

impl EvcxrDisplay for Chart {
    fn bundle(&self) -> Bundle {
        Bundle::chart(self).unwrap_or_else(|e| Bundle::text(format!("error: {e}")))
    }
}

impl EvcxrDisplay for passlab::Stats {
    fn bundle(&self) -> Bundle {
        Bundle::table(&self.table())
    }
}

impl EvcxrDisplay for Output {
    /// A session's output: its last display (a table or a chart), or all
    /// of its text.
    fn bundle(&self) -> Bundle {
        let last = self.items.iter().rev().find_map(|i| match i {
            Item::Display(b) if b.data.len() > 1 => Some(b.clone()),
            _ => None,
        });
        last.unwrap_or_else(|| Bundle::text(self.text()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_and_charts_in_evcxrs_format() {
        let mut t = Table::new("passes", &["name", "runs"]);
        t.push(["instcombine".to_string(), "3".to_string()]);
        let text = evcxr_text(&t.bundle());
        assert!(
            text.starts_with("EVCXR_BEGIN_CONTENT text/html\n<"),
            "{text}"
        );
        assert!(text.contains("EVCXR_END_CONTENT\nEVCXR_BEGIN_CONTENT text/plain\n"));
        assert!(text.ends_with("EVCXR_END_CONTENT\n"));
    }
}
