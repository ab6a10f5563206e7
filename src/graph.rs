//! Control-flow graphs drawn: a [`Cfg`] as Graphviz's DOT text, built here
//! with every label escaped (IR names may hold quotes, braces, `<`, `|`,
//! backslashes), laid out by Graphviz's `dot` (Debian's `graphviz`) as SVG
//! or PNG; and as text for a terminal.
//!
//! Blocks show their instructions as the IR prints them; a block longer
//! than the limit shows its first ones, `… N more`, and its terminator.
//! Lines longer than 80 characters are cut with `…`. Edges carry what takes
//! them (`true`/`false`, case values, `default`, `unwind`…).
//!
//! `dot` runs as a child process with the DOT text on its standard input,
//! a time limit and a bound on what it may write; any failure (not
//! installed, an error, too slow, too much output) is [`Error::Tool`].
//! Node names in the DOT text are `b0`, `b1`…, never the IR's.
//!
//! This module knows nothing of where a graph is shown: front ends put the
//! SVG in a notebook or the bytes in a file.

#![forbid(unsafe_code)]

use crate::module::{Cfg, Module};
use crate::{Error, Result};
use std::time::Duration;

/// Instructions a block shows by default before it is shortened.
pub const MAX_LINES: usize = 12;
/// The most blocks a graph is drawn with (a larger function is refused:
/// Graphviz would take minutes and the picture could not be read).
pub const MAX_BLOCKS: usize = 2_000;
/// Blocks past which a graph is laid out coarsely (straight edges).
const LARGE: usize = 120;
/// Characters of an instruction shown before it is cut.
const LINE_WIDTH: usize = 80;
/// How long `dot` may take.
const TIME_LIMIT: Duration = Duration::from_secs(30);
/// The most bytes `dot` may write.
const MAX_OUTPUT: usize = 64 << 20;

/// An image format `dot` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
}

/// A control-flow graph ready to draw: its title, DOT text and text form.
#[derive(Clone, Debug)]
pub struct Graph {
    /// `cfg: FUNCTION` (and what ran before, `after simplifycfg`).
    pub title: String,
    /// The graph in Graphviz's language.
    pub dot: String,
    /// The blocks and edges as lines of text, for a terminal.
    pub text: String,
}

impl Graph {
    /// The graph of `cfg`, titled `title`, each block showing at most
    /// `max_lines` instructions (at least 3: two and its terminator).
    pub fn new(cfg: &Cfg, title: &str, max_lines: usize) -> Result<Graph> {
        if cfg.blocks.len() > MAX_BLOCKS {
            return Err(Error::Invalid(format!(
                "function '{}' has {} blocks; a control-flow graph is drawn with at most {MAX_BLOCKS}",
                cfg.function,
                cfg.blocks.len()
            )));
        }
        Ok(Graph {
            title: title.to_string(),
            dot: dot(cfg, title, max_lines.max(3)),
            text: text(cfg, title),
        })
    }

    /// The graph laid out as SVG (the `<svg>` element alone, without XML
    /// prologue, so that it can be put in a page).
    pub fn svg(&self) -> Result<String> {
        let bytes = render(&self.dot, Format::Svg)?;
        let svg = String::from_utf8_lossy(&bytes);
        Ok(match svg.find("<svg") {
            Some(i) => svg[i..].to_string(),
            None => svg.into_owned(),
        })
    }

    /// The graph laid out as PNG.
    pub fn png(&self) -> Result<Vec<u8>> {
        render(&self.dot, Format::Png)
    }

    /// Writes the graph to `path` (through `folder::write_file`: a file
    /// passlab did not write is not replaced), as its extension says:
    /// `.svg`, `.png`, or `.dot`/`.gv` for the DOT text.
    pub fn write(&self, path: &str) -> Result<()> {
        let ext = std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let bytes = match ext.as_deref() {
            Some("svg") => self.svg()?.into_bytes(),
            Some("png") => self.png()?,
            Some("dot" | "gv") => self.dot.clone().into_bytes(),
            _ => {
                return Err(Error::Invalid(format!(
                    "cannot tell the graph format of '{path}'; name it .svg, .png or .dot"
                )))
            }
        };
        crate::folder::write_file(std::path::Path::new(path), bytes, "writing a graph")
    }
}

/// The graph of `function` in `m`, or in a copy of `m` after the pipeline
/// `after` ran on it under the current context (`m` is left as it was);
/// each block shows at most `max_lines` instructions.
pub fn of_function(
    m: &Module,
    function: &str,
    after: Option<&str>,
    max_lines: usize,
) -> Result<Graph> {
    let (cfg, title) = match after {
        Some(p) => {
            let pass = crate::pipeline::parse(p)?;
            let mut copy = m.copy();
            pass.apply(&mut copy)?;
            (
                copy.cfg(function)?,
                format!("cfg: {function} after {}", p.trim()),
            )
        }
        None => (m.cfg(function)?, format!("cfg: {function}")),
    };
    Graph::new(&cfg, &title, max_lines)
}

/// `s` inside a DOT string: backslashes and quotes escaped, control
/// characters shown as LLVM shows them in names (`\0A`).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push_str(&format!("\\\\{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `line` cut to [`LINE_WIDTH`] characters.
fn cut(line: &str) -> String {
    if line.chars().count() <= LINE_WIDTH {
        line.to_string()
    } else {
        let mut s: String = line.chars().take(LINE_WIDTH - 1).collect();
        s.push('…');
        s
    }
}

/// The lines a block shows: all, or the first `max - 2`, `… N more` and
/// the terminator.
fn shown_lines(lines: &[String], max: usize) -> Vec<String> {
    if lines.len() <= max {
        return lines.iter().map(|l| cut(l)).collect();
    }
    let head = max - 2;
    let mut out: Vec<String> = lines[..head].iter().map(|l| cut(l)).collect();
    out.push(format!("… {} more", lines.len() - head - 1));
    if let Some(last) = lines.last() {
        out.push(cut(last));
    }
    out
}

/// The DOT text of `cfg`.
pub fn dot(cfg: &Cfg, title: &str, max_lines: usize) -> String {
    let mut out = String::from("digraph cfg {\n");
    out.push_str(&format!(
        "  graph [label=\"{}\", labelloc=t, fontname=\"monospace\", fontsize=12];\n",
        escape(title)
    ));
    if cfg.blocks.len() > LARGE {
        // Graphviz's defaults take minutes here (positioning to the
        // optimum, curved edges routed around hundreds of blocks): a few
        // rounds and straight edges take seconds.
        out.push_str("  graph [nslimit=1, nslimit1=1, mclimit=0.5, splines=line];\n");
    }
    out.push_str("  node [shape=box, fontname=\"monospace\", fontsize=10];\n");
    out.push_str("  edge [fontname=\"monospace\", fontsize=9];\n");
    for (i, b) in cfg.blocks.iter().enumerate() {
        let mut label = format!("{}:\\l", escape(&cfg.block_title(i)));
        for line in shown_lines(&b.lines, max_lines) {
            label.push_str("  ");
            label.push_str(&escape(&line));
            label.push_str("\\l");
        }
        let style = if i == 0 { ", penwidth=2" } else { "" };
        out.push_str(&format!("  b{i} [label=\"{label}\"{style}];\n"));
    }
    for e in &cfg.edges {
        let colour = match e.label.as_str() {
            "true" => ", color=\"#2e7d32\", fontcolor=\"#2e7d32\"",
            "false" => ", color=\"#c62828\", fontcolor=\"#c62828\"",
            "unwind" => ", style=dashed",
            _ => "",
        };
        if e.label.is_empty() {
            out.push_str(&format!("  b{} -> b{};\n", e.from, e.to));
        } else {
            out.push_str(&format!(
                "  b{} -> b{} [label=\"{}\"{colour}];\n",
                e.from,
                e.to,
                escape(&e.label)
            ));
        }
    }
    out.push_str("}\n");
    out
}

/// `cfg` as text: the title with the counts, then each block with its
/// size and successors.
pub fn text(cfg: &Cfg, title: &str) -> String {
    let mut out = format!(
        "{title}: {} block{}, {} edge{}, {} instructions\n",
        cfg.blocks.len(),
        if cfg.blocks.len() == 1 { "" } else { "s" },
        cfg.edges.len(),
        if cfg.edges.len() == 1 { "" } else { "s" },
        cfg.instructions()
    );
    for (i, b) in cfg.blocks.iter().enumerate() {
        let successors: Vec<String> = cfg
            .edges
            .iter()
            .filter(|e| e.from == i)
            .map(|e| {
                if e.label.is_empty() {
                    cfg.block_title(e.to)
                } else {
                    format!("{} [{}]", cfg.block_title(e.to), e.label)
                }
            })
            .collect();
        let end = if successors.is_empty() {
            b.lines
                .last()
                .and_then(|l| l.split_whitespace().next())
                .unwrap_or("")
                .to_string()
        } else {
            format!("-> {}", successors.join(", "))
        };
        out.push_str(&format!(
            "  {} ({} instruction{}) {end}\n",
            cfg.block_title(i),
            b.lines.len(),
            if b.lines.len() == 1 { "" } else { "s" },
        ));
    }
    out
}

/// Lays out `dot_text` with Graphviz's `dot`.
pub fn render(dot_text: &str, format: Format) -> Result<Vec<u8>> {
    let flag = match format {
        Format::Svg => "-Tsvg",
        Format::Png => "-Tpng",
    };
    run_tool(
        "dot",
        "dot",
        &[flag],
        dot_text.as_bytes(),
        TIME_LIMIT,
        MAX_OUTPUT,
    )
}

/// Runs `program` with `args`, `input` on its standard input; its standard
/// output, if it ends well within `limit` and writes at most `max` bytes.
/// Every failure is [`Error::Tool`] naming `tool`.
pub(crate) fn run_tool(
    tool: &str,
    program: &str,
    args: &[&str],
    input: &[u8],
    limit: Duration,
    max: usize,
) -> Result<Vec<u8>> {
    use std::io::Write;
    let fail = |message: String| Error::Tool {
        tool: tool.into(),
        message,
    };
    let mut child = spawn_tool(program, args).map_err(fail)?;
    let stdin = child.stdin.take();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(mut s) = stdin {
            // A tool that stops reading (it failed) is reported by its
            // status, not by this write.
            let _ = s.write_all(&input);
        }
    });
    let stdout = read_bounded(child.stdout.take(), max);
    let stderr = read_bounded(child.stderr.take(), 16 << 10);
    let status = match wait_within(&mut child, limit) {
        Ok(status) => status,
        Err(message) => {
            // The threads end when the pipes close (not waited for: a
            // child of the tool could hold them open).
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(message));
        }
    };
    let _ = writer.join();
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    if out.len() > max {
        let bound = if max >= 1 << 20 {
            format!("{} MiB", max >> 20)
        } else {
            format!("{max} bytes")
        };
        return Err(fail(format!("wrote more than {bound}; it was stopped")));
    }
    if !status.success() {
        let err = String::from_utf8_lossy(&err);
        let err = err.trim();
        return Err(fail(format!(
            "failed ({status}){}",
            if err.is_empty() {
                String::new()
            } else {
                format!(": {err}")
            }
        )));
    }
    Ok(out)
}

/// Starts `program` with `args`, its standard streams piped; or why it
/// could not be.
fn spawn_tool(program: &str, args: &[&str]) -> std::result::Result<std::process::Child, String> {
    use std::process::{Command, Stdio};
    Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "'{program}' not found: control-flow graphs are laid out by Graphviz \
                     (Debian's graphviz package, which bash scripts/passlab.sh setup installs)"
                )
            } else {
                format!("could not run '{program}': {e}")
            }
        })
}

/// Reads at most `bound` bytes (and one more, to tell) from `pipe` on a
/// thread of its own.
fn read_bounded<R: std::io::Read + Send + 'static>(
    pipe: Option<R>,
    bound: usize,
) -> std::thread::JoinHandle<Vec<u8>> {
    use std::io::Read;
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = pipe {
            // Past the bound the pipe is closed: the tool ends.
            let _ = p.take(bound as u64 + 1).read_to_end(&mut buf);
        }
        buf
    })
}

/// Waits for `child` to end within `limit`; or why it is to be stopped
/// (too long, an interrupt, a failed wait).
fn wait_within(
    child: &mut std::process::Child,
    limit: Duration,
) -> std::result::Result<std::process::ExitStatus, String> {
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) => {}
            Err(e) => return Err(format!("could not wait for it: {e}")),
        }
        if start.elapsed() > limit {
            return Err(format!(
                "took longer than {} s; it was stopped",
                limit.as_secs_f64()
            ));
        }
        if crate::interrupt::requested() {
            return Err("stopped by an interrupt".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::cfg::{Block, Edge};

    fn cfg(name: &str) -> Cfg {
        Cfg {
            function: name.into(),
            blocks: vec![
                Block {
                    name: String::new(),
                    lines: vec!["br i1 %c, label %\"a\\22b{c}<d>|e\", label %x".into()],
                },
                Block {
                    name: "\"a\\22b{c}<d>|e\"".into(),
                    lines: (0..30)
                        .map(|i| format!("%v{i} = add i32 0, {i}"))
                        .chain(["ret void".to_string()])
                        .collect(),
                },
                Block {
                    name: "x".into(),
                    lines: vec!["ret void".into()],
                },
            ],
            edges: vec![
                Edge {
                    from: 0,
                    to: 1,
                    label: "true".into(),
                },
                Edge {
                    from: 0,
                    to: 2,
                    label: "false".into(),
                },
            ],
        }
    }

    #[test]
    fn labels_are_escaped() {
        let g = Graph::new(&cfg("f\"\n{"), "cfg: f\"\n{", 12).unwrap();
        assert!(g.dot.contains(r#"label="cfg: f\"\\0A{""#), "{}", g.dot);
        assert!(
            g.dot.contains(r#"b1 [label="\"a\\22b{c}<d>|e\":\l"#),
            "{}",
            g.dot
        );
        assert!(g.dot.contains("… 20 more"), "{}", g.dot);
    }

    #[test]
    fn large_graphs_are_laid_out_coarsely() {
        let chain = |n: usize| Cfg {
            function: "f".into(),
            blocks: (0..n)
                .map(|i| Block {
                    name: format!("b{i}"),
                    lines: vec!["br label %next".into()],
                })
                .collect(),
            edges: (1..n)
                .map(|i| Edge {
                    from: i - 1,
                    to: i,
                    label: String::new(),
                })
                .collect(),
        };
        assert!(!dot(&chain(LARGE), "t", 12).contains("splines=line"));
        assert!(dot(&chain(LARGE + 1), "t", 12).contains("splines=line"));
        let e = Graph::new(&chain(MAX_BLOCKS + 1), "t", 12).unwrap_err();
        assert!(e.to_string().contains("at most 2000"), "{e}");
    }

    #[test]
    fn long_blocks_are_shortened() {
        let lines: Vec<String> = (0..40).map(|i| i.to_string()).collect();
        let shown = shown_lines(&lines, 12);
        assert_eq!(shown.len(), 12);
        assert_eq!(shown[10], "… 29 more");
        assert_eq!(shown[11], "39");
        assert_eq!(cut(&"x".repeat(100)).chars().count(), LINE_WIDTH);
    }

    #[test]
    fn tool_failures_are_errors() {
        let limit = Duration::from_secs(5);
        let e = run_tool("dot", "/nonexistent/dot", &[], b"", limit, 100).unwrap_err();
        assert!(e.to_string().contains("not found"), "{e}");
        let e = run_tool("t", "sh", &["-c", "echo bad >&2; exit 3"], b"", limit, 100).unwrap_err();
        assert!(e.to_string().contains("bad"), "{e}");
        assert_eq!(e.kind(), crate::ErrorKind::Tool);
        let e = run_tool(
            "t",
            "sh",
            &["-c", "exec sleep 10"],
            b"",
            Duration::from_millis(200),
            100,
        )
        .unwrap_err();
        assert!(e.to_string().contains("longer than"), "{e}");
        let e = run_tool("t", "yes", &[], b"", limit, 1000).unwrap_err();
        assert!(e.to_string().contains("more than"), "{e}");
        let out = run_tool("t", "cat", &[], b"hello", limit, 100).unwrap();
        assert_eq!(out, b"hello");
    }

    #[test]
    fn dot_draws_hostile_names() {
        if std::process::Command::new("dot")
            .arg("-V")
            .output()
            .is_err()
        {
            eprintln!("dot not installed: skipped");
            return;
        }
        let g = Graph::new(&cfg("f"), "cfg: f", 12).unwrap();
        let svg = g.svg().unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(
            svg.contains("&quot;a\\22b{c}&lt;d&gt;|e&quot;:")
                || svg.contains("\"a\\22b{c}&lt;d&gt;|e\":"),
            "{svg}"
        );
        assert!(g.png().unwrap().starts_with(b"\x89PNG"));
    }
}
