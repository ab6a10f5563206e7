//! The one error type of the core library.
//!
//! Every message says what was wrong, where (line:column, pass, key), and
//! what would be valid (nearest names). Messages are lowercase with no
//! trailing period, so that front ends can prefix or wrap them.
//!
//! Every failure the core reports is an [`Error`] with an [`ErrorKind`];
//! paths that handle user input return one and never `unwrap`. Beside it:
//! [`nearest_names`] for suggestions, [`panic_message`] for a caught panic,
//! and [`panic_point`], the debug builds' panic injection
//! (`PASSLAB_PANIC_AT`) that the panic-boundary tests of each front end use.

#![forbid(unsafe_code)]

use std::fmt;

/// What kind of failure an [`Error`] is, for callers that branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Malformed LLVM IR text or bitcode.
    Parse,
    /// clang rejected a C or C++ source, or rustc a Rust cell.
    Compile,
    /// Modules could not be linked together.
    Link,
    /// LLVM's code generator failed on a module (the session is intact).
    Codegen,
    /// Reading or writing a file failed.
    Io,
    /// A pass name (or a pipeline's element) is not in the registry.
    UnknownPass,
    /// LLVM's pipeline parser rejected pipeline text.
    Pipeline,
    /// A pass's `required` passes depend on each other in a cycle.
    DependencyCycle,
    /// A configuration key is unknown, or its value has the wrong type.
    Config,
    /// A pass returned an error or panicked.
    PassFailed,
    /// The IR no longer verifies.
    Verify,
    /// A function pass added or removed functions.
    FunctionSetChanged,
    /// A name (function, module) does not exist.
    NotFound,
    /// An instrument's hook failed or panicked.
    Instrument,
    /// A command of the command language was misused.
    Command,
    /// A chart could not be drawn or encoded.
    Chart,
    /// A tool passlab runs (LLVM's llvm-mca, Graphviz's dot) failed.
    Tool,
    /// An interrupt stopped a pass (the module is as it was).
    Interrupted,
    /// A caller got something wrong: a setting or an argument
    /// ([`Error::Setting`]), a folder or a file passlab will not write into
    /// ([`Error::Folder`]), a malformed file it reads ([`Error::Spec`]), the
    /// Rust worker ([`Error::Worker`]), a NUL byte in a name
    /// ([`Error::Nul`]), a bisection with nothing to find
    /// ([`Error::ConditionNeverHolds`]), or anything else ([`Error::Invalid`]).
    Invalid,
    /// A bug in passlab (a panic) stopped a command; the session is as it
    /// was before the command.
    Internal,
}

/// The error of every fallible operation in `passlab`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{source_name}:{line}:{column}: {message}{}", show_line(line_text, *column))]
    Parse {
        source_name: String,
        line: u32,
        column: u32,
        message: String,
        line_text: String,
    },

    #[error("clang-19 failed to compile {source_name}:\n{stderr}")]
    Compile { source_name: String, stderr: String },

    #[error("cannot generate code for {module}: {message}")]
    Codegen {
        module: String,
        /// LLVM's message, as it printed it.
        message: String,
    },

    #[error("rustc rejected the Rust code:\n{diagnostics}")]
    RustCompile {
        /// rustc's diagnostics, with the lines of the user's own text.
        diagnostics: String,
    },

    #[error("cannot link {source_name} into {into}: {message}")]
    Link {
        source_name: String,
        into: String,
        message: String,
    },

    #[error("{path}: {message}")]
    Io { path: String, message: String },

    #[error("unknown pass '{name}'{}", suggest(suggestions))]
    UnknownPass {
        name: String,
        suggestions: Vec<String>,
    },

    #[error("invalid pipeline '{text}': {message}{}", suggest(suggestions))]
    Pipeline {
        text: String,
        message: String,
        suggestions: Vec<String>,
    },

    #[error("dependency cycle in required passes: {}", chain.join(" -> "))]
    DependencyCycle { chain: Vec<String> },

    #[error("invalid config option '{key}'; valid options are: {}{}", valid.join(", "), suggest(suggestions))]
    UnknownConfig {
        key: String,
        valid: Vec<String>,
        suggestions: Vec<String>,
    },

    #[error("config option '{key}' expects {expected}, got '{got}'")]
    ConfigType {
        key: String,
        expected: String,
        got: String,
    },

    #[error("error in pass {pass}: {reason}")]
    PassFailed { pass: String, reason: String },

    /// A pass written in Rust crashed where it ran (the Rust worker, or a
    /// fork of its service): `how` as its crash handler said (a
    /// segmentation fault, a stack overflow), `reason` the whole message.
    /// Its kind is [`ErrorKind::PassFailed`]; a hunt or a reduction counts
    /// it as a crash.
    #[error("error in pass {pass}: {reason}")]
    PassCrashed {
        pass: String,
        how: String,
        reason: String,
    },

    #[error("IR does not verify after pass {pass}:\n{message}")]
    Verify {
        pass: String,
        message: String,
        /// The broken module, printed before it was rolled back.
        ir: Option<String>,
    },

    #[error("function pass {pass} {change} function '{function}' (function passes must keep the module's functions)")]
    FunctionSetChanged {
        pass: String,
        change: &'static str,
        function: String,
    },

    #[error("no {what} named '{name}'{}", suggest(suggestions))]
    NotFound {
        what: &'static str,
        name: String,
        suggestions: Vec<String>,
    },

    #[error("instrument {instrument} failed in {hook}: {message}")]
    Instrument {
        instrument: String,
        hook: &'static str,
        message: String,
    },

    #[error(":{command}: {message}{}", suggest(suggestions))]
    Command {
        command: String,
        message: String,
        suggestions: Vec<String>,
    },

    #[error("interrupted during {pass}; the module is as it was before")]
    Interrupted { pass: String },

    #[error("{tool}: {message}")]
    Tool { tool: String, message: String },

    #[error("cannot draw chart '{title}': {message}")]
    Chart { title: String, message: String },

    #[error("{}invalid IR: {message}{}{}", at(source_name, *line, *column), show_line(line_text, *column), more_lines(rest))]
    InvalidIr {
        source_name: String,
        /// Where the offending instruction is in the user's text (0 when
        /// the verifier's message names no instruction found there).
        line: u32,
        column: u32,
        /// The verifier's first message, on one line.
        message: String,
        line_text: String,
        /// The verifier's full report, as opt-19 prints it.
        rest: String,
    },

    #[error("internal error in {command}: {message} (a bug in passlab: the session is as it was before it)")]
    Internal {
        /// What was running: `:run`, a sweep's unit.
        command: String,
        message: String,
    },

    /// A setting or an argument out of range or of the wrong form, in
    /// `scope` (a command, a setting's name: `tune`, `target.cpu`,
    /// `--shard`). Its kind is [`ErrorKind::Invalid`].
    #[error("{scope}: {message}")]
    Setting { scope: String, message: String },

    /// passlab refusing to write into or over the folder or file `path`
    /// (`message` begins with a verb: `is a file, not a folder: …`). Its
    /// kind is [`ErrorKind::Invalid`].
    #[error("{path} {message}")]
    Folder { path: String, message: String },

    /// A file passlab reads as data is malformed: a sweep's or a hunt's
    /// spec, a compilation database, a shard's records, `dataset.csv`. Its
    /// kind is [`ErrorKind::Invalid`].
    #[error("{path}: {message}")]
    Spec { path: String, message: String },

    /// The Rust worker (passlab-evcxr) could not be found, started, reached
    /// or restarted. Its kind is [`ErrorKind::Invalid`].
    #[error("{message}")]
    Worker { message: String },

    /// A name handed to LLVM (a module's, a pass's, a path) holds a NUL
    /// byte. Its kind is [`ErrorKind::Invalid`].
    #[error("{what} contains NUL")]
    Nul { what: &'static str },

    /// A bisection's condition does not hold after the whole pipeline (of
    /// `optional_passes` optional passes): no pass makes it go bad. Its
    /// kind is [`ErrorKind::Invalid`].
    #[error("bisect: the condition does not hold after the whole pipeline ({optional_passes} optional passes), so no pass makes it go bad")]
    ConditionNeverHolds { optional_passes: usize },

    /// Anything else a caller got wrong, in one message.
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Parse { .. } => ErrorKind::Parse,
            Error::Compile { .. } | Error::RustCompile { .. } => ErrorKind::Compile,
            Error::Codegen { .. } => ErrorKind::Codegen,
            Error::Link { .. } => ErrorKind::Link,
            Error::Io { .. } => ErrorKind::Io,
            Error::UnknownPass { .. } => ErrorKind::UnknownPass,
            Error::Pipeline { .. } => ErrorKind::Pipeline,
            Error::DependencyCycle { .. } => ErrorKind::DependencyCycle,
            Error::UnknownConfig { .. } | Error::ConfigType { .. } => ErrorKind::Config,
            Error::PassFailed { .. } | Error::PassCrashed { .. } => ErrorKind::PassFailed,
            Error::Verify { .. } => ErrorKind::Verify,
            Error::FunctionSetChanged { .. } => ErrorKind::FunctionSetChanged,
            Error::NotFound { .. } => ErrorKind::NotFound,
            Error::Instrument { .. } => ErrorKind::Instrument,
            Error::Command { .. } => ErrorKind::Command,
            Error::Chart { .. } => ErrorKind::Chart,
            Error::Tool { .. } => ErrorKind::Tool,
            Error::Interrupted { .. } => ErrorKind::Interrupted,
            Error::Invalid(_)
            | Error::Setting { .. }
            | Error::Folder { .. }
            | Error::Spec { .. }
            | Error::Worker { .. }
            | Error::Nul { .. }
            | Error::ConditionNeverHolds { .. } => ErrorKind::Invalid,
            Error::InvalidIr { .. } => ErrorKind::Verify,
            Error::Internal { .. } => ErrorKind::Internal,
        }
    }

    /// An [`Error::Setting`]: `message` about a setting in `scope`.
    pub fn setting(scope: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Setting {
            scope: scope.into(),
            message: message.into(),
        }
    }

    /// An [`Error::Folder`]: `message` (beginning with a verb) about `path`.
    pub fn folder(path: impl fmt::Display, message: impl Into<String>) -> Error {
        Error::Folder {
            path: path.to_string(),
            message: message.into(),
        }
    }

    /// An [`Error::Spec`]: `message` about the file at `path`.
    pub fn spec(path: impl fmt::Display, message: impl Into<String>) -> Error {
        Error::Spec {
            path: path.to_string(),
            message: message.into(),
        }
    }

    /// An [`Error::Worker`] saying `message`.
    pub fn worker(message: impl Into<String>) -> Error {
        Error::Worker {
            message: message.into(),
        }
    }

    pub(crate) fn io(path: impl fmt::Display, err: impl fmt::Display) -> Error {
        Error::Io {
            path: path.to_string(),
            message: err.to_string().to_lowercase(),
        }
    }
}

/// At most `max` bytes of `s` (on character boundaries): its beginning and
/// its end around a note of how much was left out. What a message quotes
/// of the input is clipped so, and no error grows with the input.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let head_len = floor_boundary(s, max * 2 / 3);
    let tail_start = ceil_boundary(s, s.len() - (max / 3).min(s.len()));
    let tail_start = tail_start.max(head_len);
    format!(
        "{}… ({} bytes left out) …{}",
        &s[..head_len],
        tail_start - head_len,
        &s[tail_start..]
    )
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The last `lines` lines of `text`, at most `max` bytes, after a newline
/// (empty if `text` is blank): what a crashed child printed last.
pub fn tail_of(text: &str, lines: usize, max: usize) -> String {
    let text = text.trim_end();
    if text.trim().is_empty() {
        return String::new();
    }
    let all: Vec<&str> = text.lines().collect();
    let from = all.len().saturating_sub(lines);
    let mut tail = all[from..].join("\n");
    if tail.len() > max {
        let at = ceil_boundary(&tail, tail.len() - max);
        tail = format!("…{}", &tail[at..]);
    }
    format!("\n{tail}")
}

/// The longest quotation an error keeps whole, and the longest text field.
const QUOTE_MAX: usize = 120;
const FIELD_MAX: usize = 16 * 1024;

/// `text` with each quotation ('…' or "…") longer than [`QUOTE_MAX`]
/// clipped, and the whole at most [`FIELD_MAX`].
fn clip_text(text: &str) -> String {
    if text.len() <= QUOTE_MAX {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len().min(FIELD_MAX + 256));
    let mut rest = text;
    while let Some(open) = rest.find(['\'', '"']) {
        let quote = rest.as_bytes()[open] as char;
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        match after.find([quote, '\n']) {
            Some(close) if after.as_bytes()[close] as char == quote => {
                out.push_str(&clip(&after[..close], QUOTE_MAX));
                out.push(quote);
                rest = &after[close + 1..];
            }
            _ => {
                rest = after;
            }
        }
        if out.len() > FIELD_MAX * 2 {
            break;
        }
    }
    out.push_str(rest);
    // Unquoted, a word as long (a path made of a long name) is clipped too.
    if out.split_whitespace().any(|w| w.len() > 2 * QUOTE_MAX) {
        let mut words = String::with_capacity(out.len().min(FIELD_MAX * 2));
        let mut rest = out.as_str();
        while !rest.is_empty() {
            let start = rest
                .find(|c: char| !c.is_whitespace())
                .unwrap_or(rest.len());
            words.push_str(&rest[..start]);
            rest = &rest[start..];
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            words.push_str(&clip(&rest[..end], 2 * QUOTE_MAX));
            rest = &rest[end..];
            if words.len() > FIELD_MAX * 2 {
                break;
            }
        }
        out = words;
    }
    clip(&out, FIELD_MAX)
}

fn clip_all(v: Vec<String>) -> Vec<String> {
    v.into_iter().take(20).map(|s| clip_text(&s)).collect()
}

impl Error {
    /// The same error with every text that may hold the user's input
    /// clipped: quotations to [`QUOTE_MAX`] bytes, each field to
    /// [`FIELD_MAX`], a line shown under a parse error to a window around
    /// its column. Front ends report errors so, whatever their input.
    pub fn clipped(self) -> Error {
        use Error::*;
        match self {
            Parse { .. } | InvalidIr { .. } => self.clipped_parse(),
            Compile { .. }
            | Codegen { .. }
            | RustCompile { .. }
            | Link { .. }
            | Io { .. }
            | Tool { .. }
            | Chart { .. }
            | Internal { .. }
            | Setting { .. }
            | Folder { .. }
            | Spec { .. }
            | Worker { .. }
            | Invalid(_) => self.clipped_fields(),
            Nul { .. } | ConditionNeverHolds { .. } => self,
            UnknownPass { .. }
            | Pipeline { .. }
            | DependencyCycle { .. }
            | UnknownConfig { .. }
            | ConfigType { .. }
            | NotFound { .. }
            | Command { .. } => self.clipped_names(),
            PassFailed { .. }
            | PassCrashed { .. }
            | Verify { .. }
            | FunctionSetChanged { .. }
            | Instrument { .. }
            | Interrupted { .. } => self.clipped_pass(),
        }
    }

    /// [`Error::clipped`] of a parse error: its line shown to a window
    /// around its column (others as they are).
    fn clipped_parse(self) -> Error {
        use Error::*;
        let c = |s: String| clip_text(&s);
        match self {
            Parse {
                source_name,
                line,
                column,
                message,
                line_text,
            } => {
                let (line_text, column) = window(&line_text, column);
                Parse {
                    source_name: c(source_name),
                    line,
                    column,
                    message: c(message),
                    line_text,
                }
            }
            InvalidIr {
                source_name,
                line,
                column,
                message,
                line_text,
                rest,
            } => {
                let (line_text, column) = window(&line_text, column);
                InvalidIr {
                    source_name: c(source_name),
                    line,
                    column,
                    message: c(message),
                    line_text,
                    rest: c(rest),
                }
            }
            other => other,
        }
    }

    /// [`Error::clipped`] of an error made of text fields only, each
    /// clipped (others as they are).
    fn clipped_fields(self) -> Error {
        use Error::*;
        let c = |s: String| clip_text(&s);
        match self {
            Compile {
                source_name,
                stderr,
            } => Compile {
                source_name: c(source_name),
                stderr: c(stderr),
            },
            Codegen { module, message } => Codegen {
                module: c(module),
                message: c(message),
            },
            RustCompile { diagnostics } => RustCompile {
                diagnostics: c(diagnostics),
            },
            Link {
                source_name,
                into,
                message,
            } => Link {
                source_name: c(source_name),
                into: c(into),
                message: c(message),
            },
            Io { path, message } => Io {
                path: c(path),
                message: c(message),
            },
            Tool { tool, message } => Tool {
                tool: c(tool),
                message: c(message),
            },
            Chart { title, message } => Chart {
                title: c(title),
                message: c(message),
            },
            Internal { command, message } => Internal {
                command: c(command),
                message: c(message),
            },
            Setting { scope, message } => Setting {
                scope: c(scope),
                message: c(message),
            },
            Folder { path, message } => Folder {
                path: c(path),
                message: c(message),
            },
            Spec { path, message } => Spec {
                path: c(path),
                message: c(message),
            },
            Worker { message } => Worker {
                message: c(message),
            },
            Invalid(message) => Invalid(c(message)),
            other => other,
        }
    }

    /// [`Error::clipped`] of an error about a name the user gave: the name
    /// quoted to [`QUOTE_MAX`], the suggestions to twenty (others as they
    /// are).
    fn clipped_names(self) -> Error {
        use Error::*;
        let c = |s: String| clip_text(&s);
        match self {
            UnknownPass { name, suggestions } => UnknownPass {
                name: c(name),
                suggestions: clip_all(suggestions),
            },
            Pipeline {
                text,
                message,
                suggestions,
            } => Pipeline {
                text: clip(&text, QUOTE_MAX),
                message: c(message),
                suggestions: clip_all(suggestions),
            },
            DependencyCycle { chain } => DependencyCycle {
                chain: clip_all(chain),
            },
            UnknownConfig {
                key,
                valid,
                suggestions,
            } => UnknownConfig {
                key: clip(&key, QUOTE_MAX),
                valid,
                suggestions: clip_all(suggestions),
            },
            ConfigType { key, expected, got } => ConfigType {
                key: clip(&key, QUOTE_MAX),
                expected,
                got: clip(&got, QUOTE_MAX),
            },
            NotFound {
                what,
                name,
                suggestions,
            } => NotFound {
                what,
                name: clip(&name, QUOTE_MAX),
                suggestions: clip_all(suggestions),
            },
            Command {
                command,
                message,
                suggestions,
            } => Command {
                command: clip(&command, QUOTE_MAX),
                message: c(message),
                suggestions: clip_all(suggestions),
            },
            other => other,
        }
    }

    /// [`Error::clipped`] of an error a pass or an instrument met (others
    /// as they are).
    fn clipped_pass(self) -> Error {
        use Error::*;
        let c = |s: String| clip_text(&s);
        match self {
            PassFailed { pass, reason } => PassFailed {
                pass: c(pass),
                reason: c(reason),
            },
            PassCrashed { pass, how, reason } => PassCrashed {
                pass: c(pass),
                how: c(how),
                reason: c(reason),
            },
            Verify { pass, message, ir } => Verify {
                pass: c(pass),
                message: c(message),
                ir,
            },
            FunctionSetChanged {
                pass,
                change,
                function,
            } => FunctionSetChanged {
                pass: c(pass),
                change,
                function: clip(&function, QUOTE_MAX),
            },
            Instrument {
                instrument,
                hook,
                message,
            } => Instrument {
                instrument: c(instrument),
                hook,
                message: c(message),
            },
            Interrupted { pass } => Interrupted { pass: c(pass) },
            other => other,
        }
    }
}

/// At most [`QUOTE_MAX`] bytes of `line` around `column` (1-based), and
/// the column in what is kept: a parse error in a line of megabytes shows
/// where it is, not the whole line.
fn window(line: &str, column: u32) -> (String, u32) {
    if line.len() <= QUOTE_MAX {
        return (line.to_string(), column);
    }
    let col = (column.max(1) - 1) as usize;
    // Column counts characters; work in bytes of the char indices.
    let at = line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
    let start = floor_boundary(line, at.saturating_sub(QUOTE_MAX / 2));
    let end = ceil_boundary(line, (start + QUOTE_MAX).min(line.len()));
    let lead = if start > 0 { "…" } else { "" };
    let tail = if end < line.len() { "…" } else { "" };
    let kept = format!("{lead}{}{tail}", &line[start..end]);
    let new_col = line[start..at].chars().count() + lead.chars().count() + 1;
    (kept, u32::try_from(new_col).unwrap_or(u32::MAX))
}

/// The message of a caught panic.
pub fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with no message".into()
    }
}

/// `passlab`'s result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn suggest(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("; did you mean '{one}'?"),
        many => format!(
            "; did you mean one of: {}?",
            many.iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn at(source: &str, line: u32, column: u32) -> String {
    match (line, column) {
        (0, _) => format!("{source}: "),
        (l, 0) => format!("{source}:{l}: "),
        (l, c) => format!("{source}:{l}:{c}: "),
    }
}

fn more_lines(rest: &str) -> String {
    if rest.trim().is_empty() {
        String::new()
    } else {
        format!("\nthe verifier's report:\n{}", rest.trim_end())
    }
}

/// A panic injected for tests, in debug builds only: panics when the
/// environment variable `PASSLAB_PANIC_AT` names `point` (such as
/// `after::run`, or `pass::apply`; several are separated by commas). Release builds compile it to nothing.
#[inline]
pub fn panic_point(point: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("PASSLAB_PANIC_AT").is_ok_and(|p| p.split(',').any(|p| p == point)) {
        panic!("injected panic at {point} (PASSLAB_PANIC_AT)");
    }
    #[cfg(not(debug_assertions))]
    let _ = point;
}

fn show_line(line: &str, column: u32) -> String {
    if line.is_empty() {
        return String::new();
    }
    let caret = " ".repeat(column.saturating_sub(1) as usize);
    format!("\n{line}\n{caret}^")
}

/// The names among `candidates` closest to `name`, best first: those within a
/// small edit distance, or that contain `name`, at most five.
pub fn nearest_names<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    // No name is this long: an edit distance to it would only cost time.
    if name.len() > 256 {
        return Vec::new();
    }
    let limit = (name.chars().count() / 3).max(2);
    // Names `name` begins (`buf`: `buffer`, `buffers`) come first.
    let candidates: Vec<&str> = candidates.into_iter().collect();
    let exact = candidates.contains(&name);
    let mut begun: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|c| name.chars().count() >= 2 && c.len() > name.len() && c.starts_with(name))
        .collect();
    if !exact && !begun.is_empty() {
        begun.sort_by_key(|c| (c.len(), *c));
        begun.dedup();
        return begun.into_iter().take(5).map(str::to_string).collect();
    }
    let mut close: Vec<(usize, &str)> = Vec::new();
    let mut containing: Vec<(usize, &str)> = Vec::new();
    for c in candidates {
        let d = strsim::damerau_levenshtein(name, c);
        if d <= limit {
            close.push((d, c));
        } else if name.len() >= 3 && c.contains(name) {
            containing.push((c.len(), c));
        }
    }
    // Close edits first; names that merely contain `name` only when no name
    // is close.
    let mut best = if close.is_empty() { containing } else { close };
    best.sort();
    best.dedup_by(|a, b| a.1 == b.1);
    best.into_iter()
        .take(5)
        .map(|(_, c)| c.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_prefers_small_edits() {
        let names = ["instcombine", "instsimplify", "licm", "gvn", "newgvn"];
        assert_eq!(nearest_names("instcombin", names), vec!["instcombine"]);
        assert_eq!(nearest_names("gvn", names)[0], "gvn");
        assert!(nearest_names("zzzzzzzz", names).is_empty());
        // A beginning names what it begins.
        assert_eq!(
            nearest_names("buf", ["run", "buffer", "buffers"]),
            vec!["buffer", "buffers"]
        );
    }

    #[test]
    fn errors_quote_a_slice_of_a_huge_input() {
        let huge = "x".repeat(5_000_000);
        let e = Error::Command {
            command: "load".into(),
            message: format!("no file '{huge}' (and again '{huge}')"),
            suggestions: vec![huge.clone()],
        }
        .clipped();
        let text = e.to_string();
        assert!(text.len() < 2_000, "{}", text.len());
        assert!(text.contains("bytes left out"), "{text}");
        let e = Error::Parse {
            source_name: "cell".into(),
            line: 1,
            column: 4_000_001,
            message: "expected type".into(),
            line_text: format!("{}@{}", "y".repeat(4_000_000), "z".repeat(1_000_000)),
        }
        .clipped();
        let text = e.to_string();
        assert!(text.len() < 400, "{}", text.len());
        // The caret is under the '@'.
        let lines: Vec<&str> = text.lines().collect();
        let caret = lines[2].len() - 1;
        assert_eq!(lines[1].chars().nth(caret), Some('@'), "{text}");
        assert_eq!(tail_of("a\nb\nc\n", 2, 100), "\nb\nc");
        assert_eq!(clip("héllo wörld", 100), "héllo wörld");
        assert!(nearest_names(&huge, ["x"]).is_empty());
    }

    #[test]
    fn typed_errors_read_as_their_invalid_did() {
        // Each as `Error::Invalid` with the whole text said it before.
        let cases = [
            (
                Error::setting("tune", "trials expects a whole number from 1 to 100000, got 0"),
                "tune: trials expects a whole number from 1 to 100000, got 0",
            ),
            (
                Error::setting("target.cpu", "expects a processor name, got 'x y'"),
                "target.cpu: expects a processor name, got 'x y'",
            ),
            (
                Error::folder("out", "is a file, not a folder: give a folder for sweep's output"),
                "out is a file, not a folder: give a folder for sweep's output",
            ),
            (
                Error::spec("sweep.toml", "'goal' must be a string"),
                "sweep.toml: 'goal' must be a string",
            ),
            (
                Error::worker("the Rust worker is gone: broken pipe"),
                "the Rust worker is gone: broken pipe",
            ),
            (Error::Nul { what: "pass name" }, "pass name contains NUL"),
            (
                Error::ConditionNeverHolds { optional_passes: 7 },
                "bisect: the condition does not hold after the whole pipeline (7 optional passes), so no pass makes it go bad",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
            assert_eq!(e.kind(), ErrorKind::Invalid, "{text}");
            assert_eq!(e.clipped().to_string(), text);
        }
    }

    #[test]
    fn typed_errors_clip_their_fields() {
        let huge = "x".repeat(1_000_000);
        let errors = [
            Error::setting(huge.clone(), format!("expects a number, got '{huge}'")),
            Error::folder(&huge, format!("holds files ({huge})")),
            Error::spec(&huge, format!("entry 1 {huge}")),
            Error::worker(format!("the Rust worker sent '{huge}': eof")),
        ];
        for e in errors {
            let kind = e.kind();
            let text = e.clipped().to_string();
            assert!(text.len() < 2_000, "{}", text.len());
            assert!(text.contains("bytes left out"), "{text}");
            assert_eq!(kind, ErrorKind::Invalid);
        }
    }

    #[test]
    fn messages_are_lowercase_without_period() {
        let e = Error::UnknownPass {
            name: "licn".into(),
            suggestions: vec!["licm".into()],
        };
        assert_eq!(e.to_string(), "unknown pass 'licn'; did you mean 'licm'?");
        let e = Error::Parse {
            source_name: "a.ll".into(),
            line: 2,
            column: 11,
            message: "use of undefined value '%z'".into(),
            line_text: "  ret i32 %z".into(),
        };
        assert_eq!(
            e.to_string(),
            "a.ll:2:11: use of undefined value '%z'\n  ret i32 %z\n          ^"
        );
    }
}
