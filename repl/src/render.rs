//! Prints a command's output on a terminal or in a script's transcript:
//! text as it is, and charts (bundles with images) written to files whose
//! paths are printed, since a terminal cannot show them.

use base64::Engine;
use passlab::session::{Bundle, Item, Output};
use std::path::PathBuf;

/// Where charts go, and how many were written (to number their files).
pub struct Renderer {
    dir: PathBuf,
    written: usize,
}

impl Renderer {
    pub fn new(dir: PathBuf) -> Renderer {
        Renderer { dir, written: 0 }
    }

    /// Prints `out` in order; charts become files.
    pub fn print(&mut self, out: &Output) {
        for item in &out.items {
            let text = match item {
                Item::Stderr(s) => {
                    eprint!("{s}");
                    if !s.ends_with('\n') {
                        eprintln!();
                    }
                    continue;
                }
                Item::Stream(s) => s.clone(),
                Item::Display(b) if b.is_chart() => self.write_chart(b),
                Item::Display(b) => b.plain().to_string(),
            };
            print!("{text}");
            if !text.ends_with('\n') {
                println!();
            }
        }
    }

    /// Writes a chart's SVG and PNG as `DIR/NN-title.svg|png`; returns the
    /// lines to print.
    fn write_chart(&mut self, b: &Bundle) -> String {
        self.written += 1;
        let title = b.plain();
        let slug: String = title
            .trim_start_matches("chart: ")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect::<String>()
            .split('-')
            .filter(|p| !p.is_empty())
            .take(6)
            .collect::<Vec<_>>()
            .join("-");
        let stem = self.dir.join(format!("{:02}-{slug}", self.written));
        let mut written = Vec::new();
        if let Err(e) = std::fs::create_dir_all(&self.dir) {
            return format!("{title}\n(not written: {}: {e})", self.dir.display());
        }
        // Only files passlab wrote are replaced (a script run again).
        let write = |path: &std::path::Path, bytes: &[u8]| {
            passlab::folder::write_file(path, bytes, "writing a chart").map_err(|e| e.to_string())
        };
        if let Some(svg) = b.get("image/svg+xml") {
            let path = stem.with_extension("svg");
            match write(&path, svg.as_bytes()) {
                Ok(()) => written.push(path.display().to_string()),
                Err(e) => return format!("{title}\n(not written: {e})"),
            }
        }
        if let Some(png) = b.get("image/png") {
            let path = stem.with_extension("png");
            let bytes = base64::engine::general_purpose::STANDARD.decode(png);
            match bytes
                .map_err(|e| e.to_string())
                .and_then(|bytes| write(&path, &bytes))
            {
                Ok(()) => written.push(path.display().to_string()),
                Err(e) => return format!("{title}\n(not written: {}: {e})", path.display()),
            }
        }
        format!("{title}\nwritten to {}", written.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_become_numbered_files() {
        let dir = std::env::temp_dir().join(format!("passlab-render-{}", std::process::id()));
        let mut r = Renderer::new(dir.clone());
        let b = Bundle {
            data: vec![
                ("text/plain".into(), "chart: pass timing: self time".into()),
                ("image/svg+xml".into(), "<svg/>".into()),
                ("image/png".into(), "iVBORw0KGgo=".into()),
            ],
        };
        let text = r.write_chart(&b);
        assert!(text.ends_with("01-pass-timing-self-time.png"), "{text}");
        assert_eq!(
            std::fs::read(dir.join("01-pass-timing-self-time.png")).unwrap(),
            b"\x89PNG\r\n\x1a\n"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
