//! What each argument of a command is — a pass, a module, a processor, one
//! of some words — so that one check and one completion serve every
//! command. The command table (`commands::COMMANDS`) declares each
//! command's settings (`key=` values) and positional words by [`Kind`];
//! `Session::execute` checks the settings' values against their kinds
//! before the handler runs, and `language.rs` completes from the same
//! kinds.

use super::Session;
use crate::{registry, Error, Result};

/// The kind of a value a command takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A registered pass, by name (`licm`), or pipeline text a sequential
    /// holds as one element (`loop-mssa(licm)`).
    Pass,
    /// Passes as [`Kind::Pass`], comma-separated.
    Passes,
    /// Passes the printing instruments watch: as [`Kind::Passes`], or the
    /// back end's (`register-coalescer`, `prologepilog`: `:asm` shows
    /// them), comma-separated.
    WatchedPasses,
    /// Passes by the names their remarks carry: registered passes, or the
    /// back end's remark names ([`REMARK_PASSES`]), comma-separated.
    RemarkPasses,
    /// A pipeline as `:run` takes it (its words complete as pass names).
    Pipeline,
    /// A module of the session.
    Module,
    /// Modules of the session, comma-separated.
    Modules,
    /// A function of the current module.
    Function,
    /// Functions of the current module, comma-separated.
    Functions,
    /// An argument of a call: a number, or a buffer of the session.
    CallArg,
    /// A processor LLVM knows for this target (or `host`).
    Cpu,
    /// Processors, comma-separated.
    Cpus,
    /// Processor features with their signs (`+avx2,-fma`, or `host`).
    Features,
    /// A file or folder.
    Path,
    /// One of these words.
    OneOf(&'static [&'static str]),
    /// These words, comma-separated.
    ListOf(&'static [&'static str]),
    /// Completes from these words; the handler checks the value (a goal
    /// may also be a mix such as `0.5*size+0.5*runtime`).
    Words(&'static [&'static str]),
    /// A pool of passes: passes or pool names (`size`), comma-separated;
    /// the handler checks it.
    Pool,
    /// A whole number from `min` to `max`, or one of the words `or`
    /// (`run=all`).
    Count {
        min: u64,
        max: u64,
        or: &'static [&'static str],
    },
    /// A number of seconds above 0 and at most `max` (`2.5`).
    Seconds { max: u64 },
    /// Whole numbers `MIN..MAX` (or `N`, as `N..N`) with
    /// `min <= MIN <= MAX <= max`.
    Range { min: u64, max: u64 },
    /// Part of a pass's name, or a glob over pass names (`loop-*`).
    PassGlob,
    /// Globs over paths, comma-separated, each possibly negated (`!test/*`).
    Globs,
    /// A command's name (`:help`'s word).
    Command,
    /// One of these words, after the first word `.0` (`:report remarks
    /// source`).
    After(&'static str, &'static [&'static str]),
    /// Text the kinds cannot say more of — a name the command makes,
    /// compiler flags, a configuration value: the handler checks it.
    Free,
}

/// Shorthand for the command table: a whole number from `min` to `max`.
pub(crate) const fn count(min: u64, max: u64) -> Kind {
    Kind::Count { min, max, or: &[] }
}

/// The largest whole number a setting may take.
pub(crate) const ANY: u64 = u64::MAX;

/// A `key=` setting a command takes, with the kind of its value; a key
/// ending in `.` (`config.`) is a prefix.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    pub key: &'static str,
    pub kind: Kind,
}

/// Shorthand for the command table.
pub(crate) const fn set(key: &'static str, kind: Kind) -> Setting {
    Setting { key, kind }
}

/// The names LLVM's back end gives its remarks where they are not a
/// pipeline's pass names (as `:report remarks` shows them), and the few
/// optimization passes whose remarks carry another name than the pass
/// (`loop-deletion` writes `loop-delete`).
pub const REMARK_PASSES: &[&str] = &[
    crate::instrument::SIZE_INFO,
    "asm-printer",
    "loop-delete",
    "machine-outliner",
    "prologepilog",
    "regalloc",
    "sdagisel",
    "shrink-wrap",
    "stack-frame-layout",
    "stack-protector",
];

/// `a,b,,c` as its non-empty items.
fn items(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').filter(|v| !v.is_empty())
}

fn unknown(command: &str, key: &str, message: String, suggestions: Vec<String>) -> Error {
    Error::Command {
        command: command.into(),
        message: if key.is_empty() {
            message
        } else {
            format!("{key}=: {message}")
        },
        suggestions,
    }
}

/// Checks `value`, given to `command` (as `key=` when `key` is not
/// empty), against its kind: a name the session, the registry or LLVM
/// does not know is an error naming the nearest ones or the valid
/// choices.
pub(crate) fn check(s: &Session, command: &str, key: &str, kind: Kind, value: &str) -> Result<()> {
    // `what` says what is missing, `{}` standing for the name.
    let names_in = |what: &str, known: Vec<String>, value: &str| -> Result<()> {
        for v in items(value) {
            if !known.iter().any(|k| k == v) {
                let near = crate::nearest_names(v, known.iter().map(String::as_str));
                let quoted = format!("'{v}'");
                return Err(unknown(command, key, what.replace("{}", &quoted), near));
            }
        }
        Ok(())
    };
    match kind {
        Kind::Pass | Kind::Passes | Kind::WatchedPasses | Kind::RemarkPasses => {
            check_passes(kind, value)?.map_err(|(m, near)| unknown(command, key, m, near))
        }
        Kind::Module | Kind::Modules => names_in(
            "no module {} (:modules lists them)",
            s.modules.keys().cloned().collect(),
            value,
        ),
        // Against the current module, when there is one (an instrument
        // may be set up before any module is loaded).
        Kind::Function | Kind::Functions => match s.module() {
            Ok(m) => names_in(
                &format!(
                    "no function {{}} in module '{}' (:stats lists them)",
                    s.current.as_deref().unwrap_or("")
                ),
                m.function_names(),
                value,
            ),
            Err(_) => Ok(()),
        },
        Kind::Cpu | Kind::Cpus => {
            for v in items(value) {
                crate::llvm::check_cpu(v).map_err(|why| {
                    unknown(
                        command,
                        key,
                        format!("unknown processor '{v}': expects {why}"),
                        vec![],
                    )
                })?;
            }
            Ok(())
        }
        Kind::Features => crate::llvm::check_features(value)
            .map_err(|why| unknown(command, key, format!("expects {why}"), vec![])),
        Kind::OneOf(words) | Kind::ListOf(words) => {
            let list: Vec<&str> = match kind {
                Kind::OneOf(_) => vec![value],
                _ => items(value).collect(),
            };
            list.into_iter().try_for_each(|v| {
                one_of(words, v).map_err(|(m, near)| unknown(command, key, m, near))
            })
        }
        Kind::Count { .. } | Kind::Seconds { .. } | Kind::Range { .. } => number(kind, value)
            .map(|_| ())
            .map_err(|m| unknown(command, key, m, vec![])),
        Kind::PassGlob => glob(&value.to_lowercase()).map_err(|m| unknown(command, key, m, vec![])),
        Kind::Globs => items(value)
            .try_for_each(|g| glob(g.strip_prefix('!').unwrap_or(g)))
            .map_err(|m| unknown(command, key, m, vec![])),
        Kind::Command => names_in(
            "unknown command {} (:help lists them)",
            super::commands::COMMANDS
                .iter()
                .map(|c| c.name.to_string())
                .collect(),
            value.trim_start_matches(':'),
        ),
        Kind::After(_, words) => check(s, command, key, Kind::OneOf(words), value),
        Kind::Pipeline | Kind::CallArg | Kind::Path | Kind::Words(_) | Kind::Pool | Kind::Free => {
            Ok(())
        }
    }
}

/// What is wrong with a value, and the nearest valid names.
type Refusal = (String, Vec<String>);

/// Checks passes of a pass kind: registered, or (watched) the back end's,
/// or (remarks) a name the back end's remarks carry; else what is wrong
/// and the nearest names (the outer error: the registry's own).
fn check_passes(kind: Kind, value: &str) -> Result<std::result::Result<(), Refusal>> {
    for v in items(value) {
        if kind == Kind::RemarkPasses {
            if REMARK_PASSES.contains(&v) || registry::check_pass_name(v).is_ok() {
                continue;
            }
            let names: Vec<String> = registry::passes()
                .into_iter()
                .map(|p| p.name)
                .chain(REMARK_PASSES.iter().map(|p| p.to_string()))
                .collect();
            let near = crate::nearest_names(v, names.iter().map(String::as_str));
            return Ok(Err((
                format!(
                    "'{v}' is neither a pass nor a name the back end's remarks carry ({})",
                    REMARK_PASSES.join(", ")
                ),
                near,
            )));
        }
        // The back end's passes, which :asm's instruments see.
        if kind == Kind::WatchedPasses && crate::llvm::backend_pass_names().iter().any(|b| b == v) {
            continue;
        }
        match registry::check_pass_name(v) {
            Ok(()) => {}
            Err(Error::UnknownPass { name, suggestions }) => {
                return Ok(Err((
                    format!("unknown pass '{name}' (:passes lists them)"),
                    suggestions,
                )))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Ok(()))
}

/// Whether `v` is one of `words`; else what they are, and the nearest
/// when they narrow the choice.
fn one_of(words: &[&str], v: &str) -> std::result::Result<(), Refusal> {
    if words.contains(&v) {
        return Ok(());
    }
    let mut near = crate::nearest_names(v, words.iter().copied());
    if near.len() >= words.len().min(4) {
        near.clear();
    }
    Err((format!("expects {}, got '{v}'", words.join(", ")), near))
}

/// A value of a number kind, as the kind reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    Whole(u64),
    /// One of a [`Kind::Count`]'s words.
    Word(&'static str),
    Seconds(f64),
    Range(u64, u64),
}

/// How long `seconds` is, in words, when it is a round span.
fn span(seconds: u64) -> &'static str {
    match seconds {
        3600 => " (an hour)",
        86_400 => " (a day)",
        604_800 => " (a week)",
        _ => "",
    }
}

/// `value` read as `kind` (a number kind), or what it expects.
pub(crate) fn number(kind: Kind, value: &str) -> std::result::Result<Number, String> {
    let whole = |v: &str| v.parse::<u64>().ok();
    match kind {
        Kind::Count { min, max, or } => {
            if let Some(w) = or.iter().find(|w| **w == value) {
                return Ok(Number::Word(w));
            }
            match whole(value) {
                Some(n) if (min..=max).contains(&n) => Ok(Number::Whole(n)),
                _ => {
                    let words: String = or.iter().map(|w| format!(", or {w}")).collect();
                    let numbers = if max == ANY {
                        format!("a whole number, {min} or more")
                    } else {
                        format!("a whole number from {min} to {max}")
                    };
                    Err(format!("expects {numbers}{words}, got '{value}'"))
                }
            }
        }
        Kind::Seconds { max } => match value.parse::<f64>() {
            Ok(t) if t > 0.0 && t <= max as f64 => Ok(Number::Seconds(t)),
            _ => Err(format!(
                "expects seconds above 0 and at most {max}{}, got '{value}'",
                span(max)
            )),
        },
        Kind::Range { min, max } => {
            let (lo, hi) = value.split_once("..").unwrap_or((value, value));
            match (whole(lo), whole(hi)) {
                (Some(lo), Some(hi)) if min <= lo && lo <= hi && hi <= max => {
                    Ok(Number::Range(lo, hi))
                }
                _ => Err(format!(
                    "expects MIN..MAX with {min} <= MIN <= MAX{}, such as {}..{}, got '{value}'",
                    if max == ANY {
                        String::new()
                    } else {
                        format!(" <= {max}")
                    },
                    min.max(10).min(max),
                    max.min(40)
                )),
            }
        }
        _ => Err(format!("expects a number, got '{value}'")),
    }
}

/// Whether `pattern` is a glob (`*`, `?`, `[…]`), or what is wrong with it.
fn glob(pattern: &str) -> std::result::Result<(), String> {
    glob::Pattern::new(pattern)
        .map(|_| ())
        .map_err(|e| format!("'{pattern}' is not a valid pattern: {e}"))
}

/// The candidates for a word of `kind` (the part after the last comma in
/// a list), before filtering by what is typed, for the kinds whose names
/// are not the session's (modules, functions and buffers are: see
/// `language::Names`); paths are completed separately ([`paths`]).
pub(crate) fn candidates(kind: Kind) -> Vec<String> {
    let passes = || registry::passes().into_iter().map(|p| p.name);
    match kind {
        Kind::Pass | Kind::Passes | Kind::Pipeline => passes().collect(),
        Kind::WatchedPasses => passes()
            .chain(crate::llvm::backend_pass_names().iter().cloned())
            .collect(),
        Kind::Pool => crate::tune::POOLS
            .iter()
            .map(|(p, _)| p.to_string())
            .chain(passes())
            .collect(),
        Kind::RemarkPasses => passes()
            .chain(REMARK_PASSES.iter().map(|p| p.to_string()))
            .collect(),
        Kind::Cpu | Kind::Cpus => std::iter::once("host".to_string())
            .chain(crate::llvm::cpu_names())
            .collect(),
        Kind::Features => std::iter::once("host".to_string())
            .chain(
                crate::llvm::feature_names()
                    .into_iter()
                    .flat_map(|f| [format!("+{f}"), format!("-{f}")]),
            )
            .collect(),
        Kind::OneOf(words)
        | Kind::ListOf(words)
        | Kind::Words(words)
        | Kind::After(_, words)
        | Kind::Count { or: words, .. } => words.iter().map(|w| w.to_string()).collect(),
        Kind::PassGlob => passes().collect(),
        Kind::Command => super::commands::COMMANDS
            .iter()
            .map(|c| c.name.to_string())
            .collect(),
        Kind::Module
        | Kind::Modules
        | Kind::Function
        | Kind::Functions
        | Kind::CallArg
        | Kind::Path
        | Kind::Seconds { .. }
        | Kind::Range { .. }
        | Kind::Globs
        | Kind::Free => Vec::new(),
    }
}

/// The candidates for a pass inside LLVM's adaptor `adaptor` of pipeline
/// text, as LLVM's pipeline grammar nests them: module passes (and the
/// `cgscc`, `function` adaptors) in `module(`, CGSCC passes (and
/// `function`) in `cgscc(` or `devirt<N>(`, function passes (and the loop
/// adaptors) in `function(`, loop and loop-nest passes in `loop(` and
/// `loop-mssa(`; `repeat<N>(` takes what the adaptor around it takes.
/// At the top (no adaptor) every pass; Rust passes only there, since inside an
/// adaptor LLVM parses the text.
pub(crate) fn pipeline_candidates(adaptors: &[&str]) -> Vec<String> {
    use crate::llvm::IrUnit;
    let Some(adaptor) = adaptors.iter().rev().find(|a| **a != "repeat") else {
        return candidates(Kind::Pipeline);
    };
    let (units, nested): (&[IrUnit], &[&str]) = match *adaptor {
        "module" => (&[IrUnit::Module], &["module", "cgscc", "function"]),
        "cgscc" | "devirt" => (&[IrUnit::Cgscc], &["cgscc", "function"]),
        "function" => (&[IrUnit::Function], &["function", "loop", "loop-mssa"]),
        "loop" | "loop-mssa" => (&[IrUnit::Loop, IrUnit::Other], &["loop"]),
        // An adaptor LLVM does not have: nothing fits inside it.
        _ => return Vec::new(),
    };
    registry::passes()
        .into_iter()
        .filter(
            |p| matches!(&p.kind, registry::PassKind::Llvm { unit, .. } if units.contains(unit)),
        )
        .map(|p| p.name)
        .chain(nested.iter().map(|n| n.to_string()))
        .collect()
}

/// Whether a value of `kind` is a comma-separated list (completion starts
/// after the last comma).
pub(crate) fn is_list(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Passes
            | Kind::WatchedPasses
            | Kind::RemarkPasses
            | Kind::Modules
            | Kind::Functions
            | Kind::Cpus
            | Kind::Features
            | Kind::ListOf(_)
            | Kind::Globs
            | Kind::Pool
            | Kind::Pipeline
    )
}

/// Paths that complete `typed`: entries of its folder (relative ones also
/// in the folders `:load` searches, `search`), folders with a `/` after
/// them, hidden entries only when `typed`'s name starts with a dot.
pub(crate) fn paths(typed: &str, search: &[std::path::PathBuf]) -> Vec<String> {
    let (dir, stem) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let expanded = match dir.strip_prefix("~/") {
        Some(rest) => std::env::var("HOME").map_or(dir.to_string(), |h| format!("{h}/{rest}")),
        None => dir.to_string(),
    };
    let roots: Vec<std::path::PathBuf> = if expanded.starts_with('/') {
        vec![std::path::PathBuf::from(&expanded)]
    } else {
        search.iter().map(|r| r.join(&expanded)).collect()
    };
    let mut out = Vec::new();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(if root.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            &root
        }) else {
            continue;
        };
        for e in entries.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if !name.starts_with(stem) || (name.starts_with('.') && !stem.starts_with('.')) {
                continue;
            }
            let folder = e.path().is_dir();
            out.push(format!("{dir}{name}{}", if folder { "/" } else { "" }));
            if out.len() > 1000 {
                return out;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_and_bounded_by_their_kind() {
        let top = count(1, 1000);
        assert_eq!(number(top, "5"), Ok(Number::Whole(5)));
        assert_eq!(
            number(top, "0"),
            Err("expects a whole number from 1 to 1000, got '0'".into())
        );
        assert!(number(top, "-1").is_err() && number(top, "2.5").is_err());
        let run = Kind::Count {
            min: 1,
            max: ANY,
            or: &["all"],
        };
        assert_eq!(number(run, "all"), Ok(Number::Word("all")));
        assert_eq!(
            number(run, "x"),
            Err("expects a whole number, 1 or more, or all, got 'x'".into())
        );
        let timeout = Kind::Seconds { max: 3600 };
        assert_eq!(number(timeout, "2.5"), Ok(Number::Seconds(2.5)));
        for bad in ["0", "-1", "3601", "1e300", "NaN", "inf", "soon"] {
            assert_eq!(
                number(timeout, bad),
                Err(format!(
                    "expects seconds above 0 and at most 3600 (an hour), got '{bad}'"
                )),
                "{bad}"
            );
        }
        let length = Kind::Range { min: 1, max: 1000 };
        assert_eq!(number(length, "10..40"), Ok(Number::Range(10, 40)));
        assert_eq!(number(length, "7"), Ok(Number::Range(7, 7)));
        for bad in ["0..5", "5..2", "1..1001", "a..b", "..", "1..2..3"] {
            assert_eq!(
                number(length, bad),
                Err(format!(
                    "expects MIN..MAX with 1 <= MIN <= MAX <= 1000, such as 10..40, got '{bad}'"
                )),
                "{bad}"
            );
        }
    }

    #[test]
    fn every_kind_is_checked_before_the_handler() {
        let s = Session::new();
        let check = |kind, value| check(&s, "tune", "top", kind, value);
        assert!(check(count(1, 9), "9").is_ok());
        let e = check(count(1, 9), "10").unwrap_err().to_string();
        assert!(
            e.contains(":tune: top=: expects a whole number from 1 to 9, got '10'"),
            "{e}"
        );
        assert!(check(Kind::PassGlob, "loop-*").is_ok());
        assert!(check(Kind::PassGlob, "LICM").is_ok());
        let e = check(Kind::PassGlob, "loop-[").unwrap_err().to_string();
        assert!(e.contains("'loop-[' is not a valid pattern"), "{e}");
        assert!(check(Kind::Globs, "src/*.c,!src/test*").is_ok());
        assert!(check(Kind::Globs, "src/*.c,![").is_err());
        assert!(check(Kind::Command, "run").is_ok() && check(Kind::Command, ":tune").is_ok());
        let e = check(Kind::Command, "rnu").unwrap_err();
        assert!(e.to_string().contains("unknown command 'rnu'"), "{e}");
        let words = Kind::After("remarks", &["source", "runs"]);
        assert!(check(words, "runs").is_ok() && check(words, "walks").is_err());
    }

    /// Through `Session::execute`: a number out of its range or of the
    /// wrong type is refused before the handler runs, naming the command,
    /// the setting and what is valid.
    #[test]
    fn bad_settings_are_refused_before_the_handler() {
        let mut s = Session::new();
        let refused = |s: &mut Session, line: &str| match s.execute(line) {
            Ok(_) => panic!("{line} was accepted"),
            Err(e) => e.to_string(),
        };
        for (line, message) in [
            (":tune trials=0", ":tune: trials=: expects a whole number from 1 to 10000000, got '0'"),
            (":tune seconds=1e300", ":tune: seconds=: expects seconds above 0 and at most 604800 (a week), got '1e300'"),
            (":tune length=40..10", ":tune: length=: expects MIN..MAX with 0 <= MIN <= MAX <= 1000, such as 10..40, got '40..10'"),
            (":tune top=many", ":tune: top=: expects a whole number from 1 to 1000, got 'many'"),
            (":tune timeout=-1", ":tune: timeout=: expects seconds above 0 and at most 86400 (a day), got '-1'"),
            (":time f number=0", ":time: number=: expects a whole number from 1 to 1000000000, got '0'"),
            (":bench f | O1 | O2 repeat=2000", ":bench: repeat=: expects a whole number from 1 to 1024, got '2000'"),
            (":hunt orderings=1001", ":hunt: orderings=: expects a whole number from 0 to 1000, got '1001'"),
            (":hunt length=0..5", ":hunt: length=: expects MIN..MAX with 1 <= MIN <= MAX <= 1000, such as 10..40, got '0..5'"),
            (":hunt csmith=9..1", ":hunt: csmith=: expects MIN..MAX with 0 <= MIN <= MAX, such as 10..40, got '9..1'"),
            (":hunt timeout=0", ":hunt: timeout=: expects seconds above 0 and at most 3600 (an hour), got '0'"),
            (":hunt jobs=65", ":hunt: jobs=: expects a whole number from 1 to 64, got '65'"),
            (":reduce fails O2 budget=0", ":reduce: budget=: expects seconds above 0 and at most 86400 (a day), got '0'"),
            (":report timing top=0", ":report: top=: expects a whole number, 1 or more, got '0'"),
            (":report remarks run=x", ":report: run=: expects a whole number, 1 or more, or all, got 'x'"),
            (":plot timing top=-3", ":plot: top=: expects a whole number, 1 or more, got '-3'"),
            (":explore pass=[", ":explore: pass=: '[' is not a valid pattern"),
            (":load x/compile_commands.json only=[", ":load: only=: '[' is not a valid pattern"),
            (":instrument bisect=many", ":instrument: bisect=: expects a whole number, 0 or more, got 'many'"),
        ] {
            let e = refused(&mut s, line);
            assert!(e.contains(message), "{line}: {e}");
        }
        // A value the kind allows reaches the handler, which says what
        // is genuinely its own (here: no :tune has run).
        let e = refused(&mut s, ":report remarks run=all");
        assert!(!e.contains("expects a whole number from"), "{e}");
    }

    #[test]
    fn candidates_come_from_the_kind() {
        let run = Kind::Count {
            min: 1,
            max: ANY,
            or: &["all"],
        };
        assert_eq!(candidates(run), vec!["all"]);
        assert!(candidates(count(0, 9)).is_empty());
        assert!(candidates(Kind::Seconds { max: 9 }).is_empty());
        assert!(candidates(Kind::Range { min: 0, max: 9 }).is_empty());
        assert!(candidates(Kind::PassGlob).contains(&"licm".to_string()));
        assert!(candidates(Kind::Command).contains(&"tune".to_string()));
        assert_eq!(
            candidates(Kind::After("remarks", &["source"])),
            vec!["source"]
        );
        assert!(is_list(Kind::Globs) && !is_list(Kind::PassGlob));
    }
}
