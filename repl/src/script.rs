//! Script mode: commands from a file, one per line; a command that takes a
//! body (`:module`, `:rust`) takes the lines up to a line holding only
//! [`TERMINATOR`].

use crate::render::Renderer;
use passlab::session::{takes_body, Session};
use std::io::Read;
use std::path::Path;

/// Ends a body (a module's source, Rust code) in scripts and the REPL.
pub const TERMINATOR: &str = ".";

/// The directive that marks the commands after it, up to the next blank
/// line, as expected to fail (a notebook cell tagged `raises-exception`):
/// the first error among them is printed as `error (expected)` and the
/// rest of the block is skipped, as a notebook cell stops at its error;
/// the script goes on. If none fails, that is the script's error.
pub const EXPECT_ERROR: &str = "#! expect error";

fn is_expect_error(line: &str) -> bool {
    line.trim_start()
        .strip_prefix(EXPECT_ERROR)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ':', '(']))
}

/// Runs the script at `path` (`-`: standard input). Returns whether every
/// command succeeded (but those an [`EXPECT_ERROR`] block expects to
/// fail). Errors are printed as `FILE:LINE: error: …`.
pub fn run(
    path: &Path,
    keep_going: bool,
    echo: bool,
    mut renderer: Renderer,
) -> anyhow::Result<bool> {
    let (name, text) = if path == Path::new("-") {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        ("<stdin>".to_string(), s)
    } else {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        (path.display().to_string(), text)
    };
    let mut session = Session::new();
    session.set_html(false);
    crate::show_progress(&mut session);
    let lines: Vec<&str> = text.lines().collect();
    let mut ok = true;
    // An `#! expect error` block: the line of its directive, and whether a
    // command in it has failed (the rest of the block is then skipped, as
    // a notebook cell stops at its error).
    let mut expecting: Option<(usize, bool)> = None;
    let mut i = 0;
    while i <= lines.len() {
        let line = lines.get(i).copied().unwrap_or("");
        let number = i + 1;
        i += 1;
        if line.trim().is_empty() {
            // A blank line (or the end) ends an `#! expect error` block.
            if let Some((directive, false)) = expecting.take() {
                ok = false;
                let e = format!(
                    "{name}:{directive}: error: the commands after '{EXPECT_ERROR}' (up to the next blank line) were expected to fail, and all succeeded"
                );
                say(echo, &e);
                if !keep_going {
                    return Ok(false);
                }
            }
            continue;
        }
        if is_expect_error(line) {
            expecting = Some((number, false));
            continue;
        }
        if line.trim_start().starts_with('#') {
            continue;
        }
        let body = if takes_body(line) {
            let start = i;
            while i < lines.len() && lines[i].trim() != TERMINATOR {
                i += 1;
            }
            if i == lines.len() {
                eprintln!(
                    "{name}:{number}: error: {} has no terminating line '{TERMINATOR}'",
                    line.split_whitespace().next().unwrap_or(line)
                );
                return Ok(false);
            }
            let body = lines[start..i].join("\n");
            i += 1;
            Some(body)
        } else {
            None
        };
        if matches!(expecting, Some((_, true))) {
            // After the expected error, the rest of its block does not run.
            continue;
        }
        if echo {
            println!("> {}", line.trim());
        }
        match session.execute_line_at(line, body.as_deref(), &name, number) {
            Ok(out) => renderer.print(&out),
            Err(e) if expecting.is_some() => {
                expecting = expecting.map(|(d, _)| (d, true));
                say(echo, &format!("{name}:{number}: error (expected): {e}"));
            }
            Err(e) => {
                ok = false;
                say(echo, &format!("{name}:{number}: error: {e}"));
                if !keep_going {
                    return Ok(false);
                }
            }
        }
        if session.quit_requested() {
            break;
        }
    }
    Ok(ok)
}

/// A script's error: with the echoed commands on standard output when
/// echoing, else on standard error.
fn say(echo: bool, message: &str) {
    if echo {
        println!("{message}");
    } else {
        eprintln!("{message}");
    }
}

/// Marks the commands of a notebook cell whose output depends on the
/// machine it runs on (tagged `nbval-ignore-output`: code for the host's
/// processor); what varies from run to run (times, rates) is masked value
/// by value where outputs are compared.
pub const OUTPUT_VARIES: &str =
    "# (this cell's output depends on the machine it runs on: code for its processor)";

/// A notebook (`.ipynb`) as a script: what `passlab script` prints.
pub fn from_notebook(path: &Path) -> anyhow::Result<String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let nb: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: not a notebook: {e}", path.display()))?;
    let cells = nb["cells"]
        .as_array()
        .ok_or_else(|| anyhow::anyhow!("{}: a notebook without cells", path.display()))?;
    let mut out = format!(
        "# The script twin of {}: `passlab script` writes it from the notebook.\n",
        path.file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    for cell in cells {
        let source = match &cell["source"] {
            serde_json::Value::Array(parts) => {
                parts.iter().filter_map(|p| p.as_str()).collect::<String>()
            }
            serde_json::Value::String(s) => s.clone(),
            _ => String::new(),
        };
        out.push('\n');
        match cell["cell_type"].as_str() {
            Some("markdown") => {
                for line in source.lines() {
                    out.push_str(if line.is_empty() { "#" } else { "# " });
                    out.push_str(line);
                    out.push('\n');
                }
            }
            Some("code") => {
                let tags = cell["metadata"]["tags"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let tagged = |t: &str| tags.iter().any(|v| v.as_str() == Some(t));
                if tagged("nbval-ignore-output") {
                    out.push_str(OUTPUT_VARIES);
                    out.push('\n');
                }
                if tagged("raises-exception") {
                    // The block runs to the next blank line: the cell's end.
                    out.push_str(EXPECT_ERROR);
                    out.push_str(" (this cell fails on purpose, up to the blank line)\n");
                    out.push_str(&without_blank_lines(&code_cell_as_script(&source)));
                } else {
                    out.push_str(&code_cell_as_script(&source))
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// A cell's script without blank lines outside bodies (an
/// [`EXPECT_ERROR`] block ends at the first blank line).
fn without_blank_lines(script: &str) -> String {
    let mut out = String::new();
    let mut in_body = false;
    for line in script.lines() {
        if in_body {
            in_body = line.trim() != TERMINATOR;
        } else if line.trim().is_empty() {
            continue;
        } else {
            in_body = takes_body(line);
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A code cell's lines, with `.` after a body that runs to the cell's end.
fn code_cell_as_script(source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        out.push_str(line);
        out.push('\n');
        i += 1;
        if takes_body(line) {
            let mut terminated = false;
            while i < lines.len() {
                out.push_str(lines[i]);
                out.push('\n');
                i += 1;
                if lines[i - 1].trim() == TERMINATOR {
                    terminated = true;
                    break;
                }
            }
            if !terminated {
                while out.ends_with("\n\n") {
                    out.pop();
                }
                out.push_str(TERMINATOR);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn expect_error_blocks_are_whole_cells() {
        assert!(super::is_expect_error("#! expect error"));
        assert!(super::is_expect_error("  #! expect error (on purpose)"));
        assert!(!super::is_expect_error("#! expect errors"));
        assert!(!super::is_expect_error("# expect error"));
        assert_eq!(
            super::without_blank_lines(
                ":module m --lang c\nint f(void) {\n\n  return 1; }\n.\n\n:call f\n"
            ),
            ":module m --lang c\nint f(void) {\n\n  return 1; }\n.\n:call f\n"
        );
    }

    #[test]
    fn a_body_to_the_end_of_a_cell_gets_its_terminator() {
        assert_eq!(
            super::code_cell_as_script(":module m --lang c\nint f(void) { return 1; }\n"),
            ":module m --lang c\nint f(void) { return 1; }\n.\n"
        );
        assert_eq!(
            super::code_cell_as_script(":rust\nfn f() {}\n.\n:stats"),
            ":rust\nfn f() {}\n.\n:stats\n"
        );
        assert_eq!(
            super::code_cell_as_script(":stats\n:modules"),
            ":stats\n:modules\n"
        );
    }
}
