//! Script mode: commands from a file, one per line; `:module` takes the
//! lines up to a line holding only [`TERMINATOR`] as its source.

use crate::render::Renderer;
use passlab::session::Session;
use std::io::Read;
use std::path::Path;

/// Ends a module's source in scripts and the REPL.
pub const TERMINATOR: &str = ".";

/// Whether `line` is a `:module` command (which reads a source after it).
pub fn is_module(line: &str) -> bool {
    let t = line.trim_start();
    t.strip_prefix(":module")
        .is_some_and(|r| r.is_empty() || r.starts_with(char::is_whitespace))
}

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
        let body = if is_module(line) {
            let start = i;
            while i < lines.len() && lines[i].trim() != TERMINATOR {
                i += 1;
            }
            if i == lines.len() {
                eprintln!(
                    "{name}:{number}: error: :module source has no terminating line '{TERMINATOR}'"
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
        match session.execute_line(line, body.as_deref()) {
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
