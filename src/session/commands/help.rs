//! `:help` and the guide's command reference (`passlab commands`), both
//! from the command table.

use super::{find, hunt, instruments, modules, passes, reduce, text, tune, Command, COMMANDS};
use super::{Args, Bundle, Item, Output, Session};
use crate::table::{markdown_prose, Table};
use crate::{PassContext, Result};

/// What `:help COMMAND` says of `c`: its usage, what it does, and the
/// details some commands add (the settings of `:tune`, `:reduce`,
/// `:hunt`, the buffer limit).
pub(crate) fn command_help(c: &Command) -> String {
    let usage = if c.usage.is_empty() {
        String::new()
    } else {
        format!(" {}", c.usage)
    };
    let details = match c.name {
        "run" => format!("\n{}", passes::details()),
        "tune" => format!("\n{}", tune::details()),
        "reduce" => format!("\n{}", reduce::details()),
        "hunt" => format!("\n{}", hunt::details()),
        "instrument" => format!("\n{}", instruments::details()),
        "features" => format!("\n{}", modules::features_details()),
        "report" => format!("\n{}", instruments::reports_details(false)),
        "plot" => format!("\n{}", instruments::reports_details(true)),
        "buffer" => format!(
            "\n  one buffer may take at most {} bytes here (config.jit.max_buffer_bytes; :with config.jit.max_buffer_bytes=N changes it)",
            PassContext::current()
                .config_int(crate::jit::MAX_BUFFER_KEY)
                .unwrap_or_default()
        ),
        _ => String::new(),
    };
    format!(":{}{usage}\n  {}{details}", c.name, c.help)
}

pub(super) fn help(_s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    if let Some(name) = a.words.first() {
        let c = find(name.trim_start_matches(':'))?;
        return text(command_help(c));
    }
    let mut t = Table::new("commands", &["command", "arguments", "what it does"]);
    for c in COMMANDS {
        t.push([
            format!(":{}", c.name),
            c.usage.to_string(),
            c.help.to_string(),
        ]);
    }
    // As text, a list that a terminal of 80 columns shows whole (a table's
    // rows would be wider than any screen); as HTML, the table.
    let mut plain = String::new();
    for c in COMMANDS {
        let head = format!(":{} {}", c.name, c.usage);
        plain.push_str(&wrap(head.trim_end(), "", "      "));
        plain.push_str(&wrap(c.help, "    ", "    "));
    }
    let mut o = Output::default();
    o.items.push(Item::Display(Bundle {
        data: vec![
            ("text/plain".into(), plain),
            ("text/html".into(), t.to_html()),
        ],
    }));
    o.push_text(wrap(SYNTAX, "", ""));
    Ok(o)
}

/// `text` in lines of at most 80 columns, the first indented by `first`
/// and the others by `rest`, each ending in a newline.
fn wrap(text: &str, first: &str, rest: &str) -> String {
    let options = textwrap::Options::new(80)
        .initial_indent(first)
        .subsequent_indent(rest);
    textwrap::fill(text, options) + "\n"
}

/// How command lines are written, below `:help`'s table and in the
/// guide's reference.
pub const SYNTAX: &str = "One command per line; `key=value` words are settings; a word starting with `#` begins a comment to the end of the line (`:plot tune   # best so far`), and a line starting with `#` is a comment. `:module` and `:rust` take the lines after them as their source, up to a line holding only `.` (or the end of a notebook cell). `:help COMMAND` says more.";

/// The command reference as Markdown, generated from [`COMMANDS`]
/// (`docs/src/reference.md` holds this text).
pub fn reference_markdown() -> String {
    let mut out = String::from("| command | arguments | what it does |\n|---|---|---|\n");
    for c in COMMANDS {
        out.push_str(&format!(
            "| `:{}` | {} | {} |\n",
            c.name,
            if c.usage.is_empty() {
                String::new()
            } else {
                format!("`{}`", c.usage.replace('|', "\\|"))
            },
            markdown_prose(c.help)
        ));
    }
    out.push('\n');
    out.push_str(SYNTAX);
    out.push_str("\n\n### Instruments\n\n`:instrument` takes these (`:help instrument`); each row is one entry of the instruments' table.\n\n");
    out.push_str(&instruments::reference_markdown());
    out
}
