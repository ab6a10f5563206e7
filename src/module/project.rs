//! A project as its build describes it: a `compile_commands.json` (the
//! format CMake's `CMAKE_EXPORT_COMPILE_COMMANDS`, Meson, Bear and clangd
//! use), one entry per translation unit with its folder, file and command
//! line.
//!
//! Each unit becomes a [`Source`] compiled with its own command line (its
//! `-I`, `-D`, `-std`, `-f` and `-W` flags, its language) in its own
//! folder, through clang's hand-over at the level passlab is given, like
//! every other `:load`. What the build's command says about *how to
//! build* rather than *what the source means* is not passed on, and
//! [`Unit::dropped`] says what was left out: the compiler's name, `-c`,
//! `-o FILE`, the dependency-file flags (`-MD`, `-MF FILE`, …), the
//! optimization level (`-O2`: the hand-over's level is passlab's, so that
//! the pipelines run on the unit are the ones the user names) and
//! `-flto` (link-time optimization is the loader's `link=lto`).
//! [`compile`] compiles units in parallel, each in a forked child as
//! every compile is.

use super::source::{Lang, Source};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// One translation unit of a project.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    /// Its file relative to the folder all the project's units are under
    /// (`src/lapi.c`): its module's name.
    pub name: String,
    /// The file, as the entry names it (relative to `directory` or
    /// absolute).
    pub file: PathBuf,
    /// The build's folder for this unit: clang runs there.
    pub directory: PathBuf,
    pub lang: Lang,
    /// The unit's own flags, passed to clang after passlab's.
    pub flags: Vec<String>,
    /// What was left out of its command line (see the module
    /// documentation).
    pub dropped: Vec<String>,
}

/// The units of a `compile_commands.json`, in its order.
#[derive(Clone, Debug, PartialEq)]
pub struct Project {
    pub path: PathBuf,
    /// The deepest folder all units' files are under.
    pub root: PathBuf,
    pub units: Vec<Unit>,
    /// Entries that are not C or C++ (assembly, …): their file and why.
    pub skipped: Vec<(String, String)>,
}

/// Flags that take the next word as their value and are dropped with it.
const DROPPED_WITH_VALUE: &[&str] = &["-o", "-MF", "-MT", "-MQ", "-MJ"];
/// Flags dropped on their own.
const DROPPED: &[&str] = &[
    "-c",
    "-S",
    "-E",
    "-M",
    "-MM",
    "-MD",
    "-MMD",
    "-MP",
    "-MG",
    "-emit-llvm",
    "-pipe",
    "--",
];

impl Project {
    /// Reads a `compile_commands.json`. Its errors name the file and the
    /// entry.
    pub fn read(path: &Path) -> Result<Project> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
        let bad = |what: String| Error::Invalid(format!("{}: {what}", path.display()));
        let entries: Vec<serde_json::Value> = serde_json::from_str(&text).map_err(|e| {
            bad(format!(
                "not a compilation database ({e}); it is a JSON list of {{\"directory\", \"file\", \"arguments\" or \"command\"}}"
            ))
        })?;
        let mut units: Vec<Unit> = Vec::new();
        let mut skipped = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let field = |key: &str| e.get(key).and_then(serde_json::Value::as_str);
            let at = |what: &str| bad(format!("entry {} {what}", i + 1));
            let directory =
                PathBuf::from(field("directory").ok_or_else(|| at("has no \"directory\" string"))?);
            let file = PathBuf::from(field("file").ok_or_else(|| at("has no \"file\" string"))?);
            let words: Vec<String> = match (e.get("arguments"), field("command")) {
                (Some(serde_json::Value::Array(a)), _) => a
                    .iter()
                    .map(|w| w.as_str().map(str::to_string))
                    .collect::<Option<_>>()
                    .ok_or_else(|| at("has an \"arguments\" item that is not a string"))?,
                (None, Some(c)) => {
                    shlex::split(c).ok_or_else(|| at("has a \"command\" with an unclosed quote"))?
                }
                _ => return Err(at("has neither \"arguments\" (a list) nor \"command\"")),
            };
            let Some((compiler, args)) = words.split_first() else {
                return Err(at("has an empty command line"));
            };
            let full = directory.join(&file);
            let lang = if compiler.contains("++") {
                Some(Lang::Cpp)
            } else {
                match Lang::from_extension(&file) {
                    Some(Lang::Llvm) | None => None,
                    l => l,
                }
            };
            let Some(lang) = lang else {
                skipped.push((
                    file.display().to_string(),
                    "not C or C++ (passlab compiles C and C++ units)".to_string(),
                ));
                continue;
            };
            let (flags, dropped) = split_flags(args, &directory, &full);
            if units
                .iter()
                .any(|u| lexical(&u.directory.join(&u.file)) == lexical(&full))
            {
                // A file built twice (two targets): its first command.
                continue;
            }
            units.push(Unit {
                name: String::new(),
                file,
                directory,
                lang,
                flags,
                dropped,
            });
        }
        if units.is_empty() {
            return Err(bad("has no C or C++ unit".to_string()));
        }
        let root = name_units(&mut units);
        Ok(Project {
            path: path.to_path_buf(),
            root,
            units,
            skipped,
        })
    }

    /// Keeps the units whose name matches one of `patterns` (globs:
    /// `src/*.c`, `*/minigzip.c`); an error if a pattern matches none.
    pub fn keep(&mut self, patterns: &[String]) -> Result<()> {
        let globs = patterns
            .iter()
            .map(|p| {
                glob::Pattern::new(p)
                    .map_err(|e| Error::Invalid(format!("'{p}' is not a valid pattern: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        for (p, g) in patterns.iter().zip(&globs) {
            if !self.units.iter().any(|u| g.matches(&u.name)) {
                return Err(Error::Invalid(format!(
                    "'{p}' matches no unit of {} (units: {})",
                    self.path.display(),
                    some_of(self.units.iter().map(|u| u.name.as_str()))
                )));
            }
        }
        self.units
            .retain(|u| globs.iter().any(|g| g.matches(&u.name)));
        Ok(())
    }

    /// The units as sources at `level`, `extra` flags after each unit's
    /// own.
    pub fn sources(&self, level: super::Level, extra: &[String]) -> Vec<Source> {
        self.units
            .iter()
            .map(|u| {
                Source::file_as(&u.file, u.lang)
                    .named(&u.name)
                    .in_dir(&u.directory)
                    .level(level)
                    .clang_args(u.flags.iter().chain(extra).cloned())
            })
            .collect()
    }

    /// A name for the project's linked module: its units' folder's name.
    pub fn root_name(&self) -> String {
        self.root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "program".into())
    }

    /// The flags left out of the units' command lines, each once, in the
    /// order first met.
    pub fn dropped(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for d in self.units.iter().flat_map(|u| &u.dropped) {
            if !out.contains(&d.as_str()) {
                out.push(d);
            }
        }
        out
    }
}

/// The first few of `names`, and how many more.
fn some_of<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let n = names.len();
    let mut first: Vec<&str> = names.take(6).collect();
    let more = format!("and {} more", n.saturating_sub(6));
    if n > 6 {
        first.push(&more);
    }
    first.join(", ")
}

/// What [`Project::load`] made of a project's units.
pub struct Loaded {
    /// The units that compiled, in the database's order: each name, its
    /// bitcode and its name counters (see [`super::Module::from_compiled`]).
    pub units: Vec<(String, Vec<u8>, Vec<u8>)>,
    /// The units that did not: each name, and what clang said.
    pub failed: Vec<(String, String)>,
    /// The units clang warned about: each name, and its warnings.
    pub warned: Vec<(String, String)>,
}

impl Project {
    /// Compiles every unit at `level` (`extra` flags after each unit's
    /// own; `lto`: as `clang -flto -c` does, [`Source::for_lto`]), as many
    /// at a time as the machine has cores, `progress` hearing each one
    /// finish (done, total, unit). An interrupt requested before it
    /// returns (from another thread, a signal handler or `progress`) ends
    /// it with [`Error::Interrupted`]; no unit compiling ends it with
    /// [`Error::Invalid`] and what clang said about each.
    pub fn load(
        &self,
        level: super::Level,
        extra: &[String],
        lto: bool,
        progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<Loaded> {
        let mut sources = self.sources(level, extra);
        if lto {
            sources = sources.into_iter().map(Source::for_lto).collect();
        }
        let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
        let compiled = compile(&sources, jobs, progress);
        // Asked here, not only by each unit's child: a request that comes
        // after the last child was waited for (a fast machine compiles the
        // units in a fraction of a second), or from the progress sink
        // itself, would otherwise go unseen, and the command would load
        // the project, the request left for the next command to clear.
        if crate::interrupt::requested() {
            let done = compiled.iter().filter(|(r, _)| r.is_ok()).count();
            return Err(Error::Interrupted {
                pass: format!(
                    "the load of {} ({done} of {} units compiled)",
                    self.path.display(),
                    sources.len()
                ),
            });
        }
        let mut units = Vec::new();
        let mut failed = Vec::new();
        let mut warned = Vec::new();
        for (src, (result, warnings)) in sources.iter().zip(compiled) {
            let name = src.name().to_string();
            if !warnings.is_empty() {
                warned.push((name.clone(), warnings));
            }
            match result {
                Ok((bitcode, counters)) => units.push((name, bitcode, counters)),
                Err(e @ Error::Interrupted { .. }) => return Err(e),
                Err(e) => failed.push((name, e.to_string())),
            }
        }
        if units.is_empty() {
            let why: Vec<String> = failed.iter().map(|(n, e)| format!("{n}: {e}")).collect();
            return Err(Error::Invalid(format!(
                "no unit of {} compiled:\n{}",
                self.path.display(),
                why.join("\n")
            )));
        }
        Ok(Loaded {
            units,
            failed,
            warned,
        })
    }
}

/// A unit's flags for clang, and what was dropped (see the module
/// documentation).
fn split_flags(args: &[String], dir: &Path, full: &Path) -> (Vec<String>, Vec<String>) {
    let full = lexical(full);
    let mut flags = Vec::new();
    let mut dropped = Vec::new();
    let mut words = args.iter();
    while let Some(w) = words.next() {
        let is_input = !w.starts_with('-') && lexical(&dir.join(w)) == full;
        if DROPPED_WITH_VALUE.contains(&w.as_str()) {
            words.next();
            dropped.push(format!("{w} FILE"));
        } else if is_input {
        } else if DROPPED.contains(&w.as_str())
            || (w.starts_with("-O") && w.len() <= 3)
            || w.starts_with("-flto")
            || w.starts_with("-fno-lto")
        {
            dropped.push(w.clone());
        } else if w.starts_with("-o") || w.starts_with("-MF") || w.starts_with("-MT") {
            let flag: String = w
                .chars()
                .take(if w.starts_with("-o") { 2 } else { 3 })
                .collect();
            dropped.push(format!("{flag} FILE"));
        } else {
            flags.push(w.clone());
        }
    }
    (flags, dropped)
}

/// Names each unit by its file relative to the deepest folder all units'
/// files are under.
fn name_units(units: &mut [Unit]) -> PathBuf {
    let fulls: Vec<PathBuf> = units
        .iter()
        .map(|u| lexical(&u.directory.join(&u.file)))
        .collect();
    let mut root: PathBuf = fulls[0].parent().map(Path::to_path_buf).unwrap_or_default();
    while !fulls.iter().all(|f| f.starts_with(&root)) {
        if !root.pop() {
            break;
        }
    }
    for (u, f) in units.iter_mut().zip(&fulls) {
        u.name = f.strip_prefix(&root).unwrap_or(f).display().to_string();
    }
    root
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// What one unit's compile gave: its bitcode and name counters, and
/// clang's warnings (as it prints them; empty if none).
pub type Compiled = (Result<(Vec<u8>, Vec<u8>)>, String);

/// Compiles C and C++ `sources` with up to `jobs` at once (each in a
/// forked child), in any order; the results in `sources`' order, each
/// with its warnings (captured, not printed). `progress` hears, on this
/// thread, how many have finished and which finished last. After an
/// interrupt no unit starts: those in flight end with
/// [`Error::Interrupted`] (their children are killed), and so do those
/// never started.
pub fn compile(
    sources: &[Source],
    jobs: usize,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Vec<Compiled> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Compiled)>();
    let mut results: Vec<Option<Compiled>> = (0..sources.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, sources.len().max(1)) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || loop {
                // Not a fork per remaining unit only to kill it: the
                // interrupt is for the whole load.
                if crate::interrupt::requested() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(src) = sources.get(i) else { break };
                let compiled = crate::output::capture_warnings(|| src.compile());
                if tx.send((i, compiled)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut done = 0;
        for (i, r) in rx {
            done += 1;
            progress(done, sources.len(), sources[i].name());
            results[i] = Some(r);
        }
    });
    results
        .into_iter()
        .zip(sources)
        .map(|(r, src)| {
            r.unwrap_or_else(|| {
                // Only an interrupt leaves a unit unstarted; anything else
                // is a worker that died (a bug), said as such.
                let e = if crate::interrupt::requested() {
                    Error::Interrupted {
                        pass: format!("the load, before {} compiled", src.name()),
                    }
                } else {
                    Error::Invalid(format!("the compile of {} did not finish", src.name()))
                };
                (Err(e), String::new())
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join("compile_commands.json");
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn a_units_command_keeps_its_meaning_and_drops_its_building() {
        let dir = std::env::temp_dir().join(format!("plab-project-{}", std::process::id()));
        let p = write(
            &dir,
            r#"[
 {"directory": "/b", "file": "/s/src/a.c",
  "arguments": ["cc", "-I/s/include", "-DX=1", "-O3", "-std=c99", "-MD", "-MF", "a.d", "-o", "a.o", "-c", "/s/src/a.c"]},
 {"directory": "/b", "file": "../s/lib/b.cpp",
  "command": "/usr/bin/c++ -I'/s/my include' -flto=thin -g -c ../s/lib/b.cpp -o b.o"},
 {"directory": "/b", "file": "/s/src/x.S", "command": "cc -c /s/src/x.S"}
]"#,
        );
        let project = Project::read(&p).unwrap();
        assert_eq!(project.units.len(), 2);
        let (a, b) = (&project.units[0], &project.units[1]);
        assert_eq!((a.name.as_str(), a.lang), ("src/a.c", Lang::C));
        assert_eq!(a.flags, ["-I/s/include", "-DX=1", "-std=c99"]);
        assert_eq!(a.dropped, ["-O3", "-MD", "-MF FILE", "-o FILE", "-c"]);
        assert_eq!((b.name.as_str(), b.lang), ("lib/b.cpp", Lang::Cpp));
        assert_eq!(b.flags, ["-I/s/my include", "-g"]);
        assert_eq!(project.skipped.len(), 1);
        assert_eq!(project.dropped()[..2], ["-O3", "-MD"]);
        let mut only = project.clone();
        only.keep(&["lib/*".to_string()]).unwrap();
        assert_eq!(only.units.len(), 1);
        let e = only.keep(&["nothing*".to_string()]).unwrap_err();
        assert!(e.to_string().contains("'nothing*' matches no unit"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bad_database_says_which_entry() {
        let dir = std::env::temp_dir().join(format!("plab-project-bad-{}", std::process::id()));
        for (text, says) in [
            ("{", "not a compilation database"),
            ("[{\"file\": \"a.c\"}]", "entry 1 has no \"directory\""),
            (
                "[{\"directory\": \"/\", \"file\": \"a.c\", \"command\": \"cc 'a.c\"}]",
                "unclosed quote",
            ),
            (
                "[{\"directory\": \"/\", \"file\": \"a.c\", \"arguments\": [1]}]",
                "not a string",
            ),
            ("[]", "has no C or C++ unit"),
        ] {
            let p = write(&dir, text);
            let e = Project::read(&p).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
