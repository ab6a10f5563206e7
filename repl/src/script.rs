//! Script mode: commands from a file, one per line; a command that takes a
//! body (`:module`, `:rust`) takes the lines up to a line holding only
//! [`TERMINATOR`].

use crate::render::Renderer;
use passlab::session::{takes_body, Session};
use std::io::Read;
use std::path::Path;

/// Ends a body (a module's source, Rust code) in scripts and the REPL.
pub const TERMINATOR: &str = ".";

/// Runs the script at `path` (`-`: standard input). Returns whether every
/// command succeeded. Errors are printed as `FILE:LINE: error: …`.
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
    crate::show_progress(&mut session);
    let lines: Vec<&str> = text.lines().collect();
    let mut ok = true;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let number = i + 1;
        i += 1;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
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
        if echo {
            println!("> {}", line.trim());
        }
        match session.execute_line_at(line, body.as_deref(), &name, number) {
            Ok(out) => renderer.print(&out),
            Err(e) => {
                ok = false;
                if echo {
                    println!("{name}:{number}: error: {e}");
                } else {
                    eprintln!("{name}:{number}: error: {e}");
                }
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
