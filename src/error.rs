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
    /// One of LLVM's tools that passlab runs (llvm-mca) failed.
    Tool,
    /// An interrupt stopped a pass (the module is as it was).
    Interrupted,
    /// Anything else a caller got wrong (an invalid argument).
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
            Error::Invalid(_) => ErrorKind::Invalid,
            Error::InvalidIr { .. } => ErrorKind::Verify,
            Error::Internal { .. } => ErrorKind::Internal,
        }
    }

    pub(crate) fn io(path: impl fmt::Display, err: impl fmt::Display) -> Error {
        Error::Io {
            path: path.to_string(),
            message: err.to_string().to_lowercase(),
        }
    }
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
