//! Modules: :module, :load, :modules, :use, :show, :stats, :features, :copy, :diff,
//! :save.

use super::*;
use crate::module::spaces::{Observation, ObservationSpace, SPACES};

pub(super) fn module(s: &mut Session, a: &Args, body: Option<&str>) -> Result<Output> {
    let name = a
        .words
        .first()
        .ok_or_else(|| err("module", "expects a name: :module NAME [--lang llvm|c|cpp]"))?;
    let lang = match a.words.get(1).map(String::as_str) {
        None => Lang::Llvm,
        Some("--lang") => Lang::parse(
            a.words
                .get(2)
                .ok_or_else(|| err("module", "--lang needs llvm, c or cpp"))?,
        )
        .map_err(|e| err("module", e.to_string()))?,
        Some(other) => {
            return Err(err(
                "module",
                format!("unexpected argument '{other}' (expected --lang llvm|c|cpp)"),
            ))
        }
    };
    let body = body.unwrap_or("");
    if body.trim().is_empty() {
        return Err(err(
            "module",
            format!("module '{name}' has no source: put it on the lines after the command"),
        ));
    }
    let file = match lang {
        Lang::Llvm => format!("{name}.ll"),
        Lang::C => format!("{name}.c"),
        Lang::Cpp => format!("{name}.cpp"),
    };
    let (cflags, level) = front_end("module", a)?;
    let m = Module::load(&[Source::text(lang, body, &file)
        .clang_args(cflags)
        .level(level)])?;
    if lang != Lang::Llvm {
        s.sources.insert(file, body.to_string());
    }
    let summary = summary(&m);
    s.put_module(name.clone(), m);
    s.current = Some(name.clone());
    text(format!("module {name}: {summary}"))
}

/// What `:load` and `:module` take for C and C++: `cflags=` (extra clang
/// arguments, comma-separated, after passlab's own: `cflags=-I,include,-DNDEBUG`)
/// and `level=` (which of clang's hand-overs: `O1` … `Oz` as clang's own
/// pipeline at that level receives the IR, `O0` clang's -O0 without
/// `optnone`; default: the context's opt_level, 2 unless `:with` says).
fn front_end(command: &str, a: &Args) -> Result<(Vec<String>, Level)> {
    let mut flags = Vec::new();
    let mut level = Level::from_opt_level(PassContext::current().opt_level());
    for (k, v) in &a.settings {
        match k.as_str() {
            "cflags" => flags.extend(comma_list(v)),
            "level" => {
                level = Level::parse(v).map_err(|_| Error::Command {
                    command: command.into(),
                    message: format!(
                        "level expects O0, O1, O2, O3, Os or Oz (clang's hand-over at that level), got '{v}'"
                    ),
                    suggestions: crate::nearest_names(v, Level::ALL.iter().map(|l| l.name())),
                })?
            }
            _ => {
                return Err(Error::Command {
                    command: command.into(),
                    message: format!(
                        "unknown setting '{k}' (C and C++ take cflags=FLAG,FLAG,... and level=O0|O1|O2|O3|Os|Oz)"
                    ),
                    suggestions: crate::nearest_names(k, ["cflags", "level"]),
                })
            }
        }
    }
    Ok((flags, level))
}

pub(super) fn summary(m: &Module) -> String {
    let st = m.stats();
    format!(
        "{}, {}, {}",
        crate::table::count(st.functions, "function"),
        crate::table::count(st.blocks, "block"),
        crate::table::count(st.instructions, "instruction")
    )
}

/// The files `paths` name, each with the name it was asked for by: a
/// relative path (or glob pattern, expanded in sorted order) is looked for
/// in each folder of the session's input path in turn (see `:path`); the
/// first folder where it matches wins. What matches nowhere is an error
/// that says where passlab looked.
fn resolve(s: &Session, paths: &[&str]) -> Result<Vec<(std::path::PathBuf, String)>> {
    use std::path::{Path, PathBuf};
    let dirs = s.input_path();
    let mut out = Vec::new();
    for p in paths {
        let pattern = p.contains(['*', '?', '[']);
        let candidates: Vec<PathBuf> = if Path::new(p).is_absolute() {
            vec![PathBuf::new()]
        } else {
            dirs.clone()
        };
        let mut found = Vec::new();
        for dir in &candidates {
            let full = dir.join(p);
            if pattern {
                let text = full.display().to_string();
                let matches = glob::glob(&text)
                    .map_err(|e| err("load", format!("'{p}' is not a valid pattern: {e}")))?;
                let mut here: Vec<PathBuf> = matches.filter_map(|m| m.ok()).collect();
                here.sort();
                if !here.is_empty() {
                    for f in here {
                        // The name the user would have typed: the match,
                        // relative to the folder it was found in.
                        let name = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
                        found.push((f, name));
                    }
                    break;
                }
            } else if full.exists() {
                found.push((full, p.to_string()));
                break;
            }
        }
        if found.is_empty() {
            return Err(not_found(p, pattern, &candidates));
        }
        out.extend(found);
    }
    Ok(out)
}

/// The error for `p` (a glob `pattern` or not), found in none of the
/// folders `candidates` (empty: the path as it is): where passlab
/// looked, and a file of that name one folder down as a suggestion.
fn not_found(p: &str, pattern: bool, candidates: &[std::path::PathBuf]) -> Error {
    use std::path::PathBuf;
    let looked: Vec<String> = candidates
        .iter()
        .map(|d| {
            if d.as_os_str().is_empty() {
                p.to_string()
            } else {
                d.join(p).display().to_string()
            }
        })
        .collect();
    // A file of that name one folder down (zlib/adler32.c for
    // adler32.c) is most likely what was meant.
    let mut suggestions = Vec::new();
    if !pattern {
        for d in candidates.iter().filter(|d| !d.as_os_str().is_empty()) {
            let Ok(entries) = std::fs::read_dir(d) else {
                continue;
            };
            let mut subs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            subs.sort();
            for sub in subs {
                if sub.join(p).is_file() {
                    if let Some(folder) = sub.file_name() {
                        suggestions.push(format!("{}/{p}", folder.to_string_lossy()));
                    }
                }
            }
        }
        suggestions.dedup();
        suggestions.truncate(3);
    }
    Error::Command {
        command: "load".into(),
        message: format!(
            "{} '{p}' (looked for {}; :path adds folders to look in)",
            if pattern {
                "no file matches"
            } else {
                "no file"
            },
            looked.join(", ")
        ),
        suggestions,
    }
}

pub(super) fn load(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let mut paths: Vec<&str> = a.words.iter().map(String::as_str).collect();
    let mut name = None;
    if let Some(i) = paths.iter().position(|w| *w == "as") {
        let rest = paths.split_off(i);
        name = Some(
            *rest
                .get(1)
                .ok_or_else(|| err("load", "'as' needs a module name"))?,
        );
        if rest.len() > 2 {
            return Err(err(
                "load",
                format!("unexpected '{}' after the module name", rest[2]),
            ));
        }
    }
    if paths.is_empty() {
        return Err(err(
            "load",
            "expects at least one path: :load PATH... [as NAME]",
        ));
    }
    // A project's settings, then the front end's.
    let mut front = a.clone();
    front
        .settings
        .retain(|(k, _)| !PROJECT_ONLY.contains(&k.as_str()));
    let (cflags, level) = front_end("load", &front)?;
    let files = resolve(s, &paths)?;
    if let [(path, typed)] = files.as_slice() {
        if path.extension().is_some_and(|e| e == "json") {
            return load_project(s, (path, typed), name, a, (cflags, level));
        }
    }
    if let Some((k, _)) = a
        .settings
        .iter()
        .find(|(k, _)| PROJECT_ONLY.contains(&k.as_str()))
    {
        return Err(err(
            "load",
            format!("{k}= is for a project: :load PATH/compile_commands.json {k}=..."),
        ));
    }
    let sources = files
        .iter()
        .map(|(path, name)| {
            Source::file(path).map(|s| s.named(name).clang_args(cflags.clone()).level(level))
        })
        .collect::<Result<Vec<_>>>()?;
    let m = Module::load(&sources)?;
    let name = name.map(str::to_string).unwrap_or_else(|| {
        std::path::Path::new(&files[0].1)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "module".into())
    });
    let summary = summary(&m);
    s.put_module(name.clone(), m);
    s.current = Some(name.clone());
    text(format!("module {name}: {summary}"))
}

/// The settings `:load` takes for a project only.
const PROJECT_ONLY: &[&str] = &["link", "only", "warnings"];

/// How `:load` keeps a project's units (`link=`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Link {
    /// One module per unit, named by its path.
    No,
    /// Linked into one module, in the database's order.
    Yes,
    /// As `clang -flto` builds an executable: each unit's hand-over made
    /// with `-flto` and put through `lto-pre-link<On>`, linked, and
    /// internalized as the linker's LTO does, ready for `lto<On>`.
    Lto,
}

/// `:load PATH/compile_commands.json`: the project's units compiled in
/// parallel, each with its own flags in its own folder; units that fail
/// are reported and the rest load.
fn load_project(
    s: &mut Session,
    (path, typed): (&std::path::Path, &str),
    name: Option<&str>,
    a: &Args,
    (cflags, level): (Vec<String>, Level),
) -> Result<Output> {
    let (link, only, show_warnings) = project_settings(a)?;
    let mut p =
        crate::module::project::Project::read(path).map_err(|e| err("load", e.to_string()))?;
    if !only.is_empty() {
        p.keep(&only).map_err(|e| err("load", e.to_string()))?;
    }
    let loaded = compile_project(s, &p, (&cflags, level), link == Link::Lto)?;
    let mut lines = project_report(&p, typed, level, &loaded, show_warnings);
    let name = name.map(str::to_string).unwrap_or_else(|| p.root_name());
    // Parsing and linking the units happens here, in the session: an
    // interrupt that came meanwhile loads nothing (the compile's children
    // and the LTO link look for it themselves).
    let stopped = || -> Result<()> {
        if crate::interrupt::requested() {
            return Err(Error::Interrupted {
                pass: format!("the load of {}", p.path.display()),
            });
        }
        Ok(())
    };
    let m = match link {
        Link::No => {
            let modules = Module::from_compiled(loaded.units, false)?;
            stopped()?;
            s.current = modules.first().map(Module::name);
            for m in modules {
                lines.push(format!("module {}: {}", m.name(), summary(&m)));
                s.put_module(m.name(), m);
            }
            return text(lines.join("\n"));
        }
        Link::Yes => {
            let modules = Module::from_compiled(loaded.units, true)?;
            stopped()?;
            refuse_clashes(&modules)?;
            Module::link_all(modules)?
        }
        Link::Lto => {
            let units: Vec<(&str, &[u8])> = (loaded.units.iter())
                .map(|(n, b, _)| (n.as_str(), b.as_slice()))
                .collect();
            let m = Module::link_for_lto(&units, &name)?;
            let how = if m.defined_functions().iter().any(|f| f == "main") {
                "an executable (main is what stays visible)"
            } else {
                "a shared library (no unit defines main)"
            };
            lines.push(format!("each unit: -flto and lto-pre-link<{level}>, as clang-19 -flto -{level} -c compiles it"));
            lines.push(format!("linked by LLVM's LTO as lld links {how}: internalized, dead definitions left out; next: :run lto<{level}>"));
            m
        }
    };
    stopped()?;
    lines.push(format!("module {name}: {}", summary(&m)));
    s.put_module(name.clone(), m);
    s.current = Some(name);
    text(lines.join("\n"))
}

/// The units of project `p` compiled in parallel with `cflags` at
/// `level` (for LTO when `lto`), the session's progress display telling
/// how far.
fn compile_project(
    s: &mut Session,
    p: &crate::module::project::Project,
    (cflags, level): (&[String], Level),
    lto: bool,
) -> Result<crate::module::project::Loaded> {
    let total = p.units.len();
    s.with_progress(|_, progress| {
        let loaded = p.load(level, cflags, lto, &mut |done, total, unit| {
            let stage = format!("compiled {unit}");
            progress(&crate::jit::Progress { done, total, stage })
        });
        // Finished: the display closes (an empty stage).
        let stage = String::new();
        progress(&crate::jit::Progress {
            done: total,
            total,
            stage,
        });
        loaded
    })
    .map_err(|e| match e {
        // The load's own refusals (a malformed unit, a spec, a setting:
        // every error of kind Invalid), as errors of :load.
        e if e.kind() == crate::ErrorKind::Invalid => err("load", e.to_string()),
        e => e,
    })
}

/// An error when units define the same symbol (a database holding several
/// programs, as zlib's holds the library, `example` and `minigzip`): the
/// symbols, the units defining each, and the `only=` that leaves all but
/// the first unit of the first clash out.
fn refuse_clashes(modules: &[Module]) -> Result<()> {
    let mut defined: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for m in modules {
        let unit = m.name();
        for symbol in m.strong_definitions() {
            defined.entry(symbol).or_default().push(unit.clone());
        }
    }
    let clashes: Vec<(&String, &Vec<String>)> = defined
        .iter()
        .filter(|(_, units)| units.len() > 1)
        .collect();
    let Some((_, first_units)) = clashes
        .iter()
        .find(|(s, _)| *s == "main")
        .or(clashes.first())
    else {
        return Ok(());
    };
    let listed: Vec<String> = clashes
        .iter()
        .take(3)
        .map(|(symbol, units)| format!("'{symbol}' in {}", units.join(", ")))
        .collect();
    let more = match clashes.len() {
        n if n > 3 => format!(" and {} more symbols", n - 3),
        _ => String::new(),
    };
    let leave_out: Vec<String> = first_units[1..].iter().map(|u| format!("!{u}")).collect();
    Err(err(
        "load",
        format!(
            "units define the same symbol, so they cannot be linked into one module: {}{more}; \
             the database may hold several programs: load one with only= (only={} keeps {}), or each unit as a module with link=no",
            listed.join("; "),
            leave_out.join(","),
            first_units[0]
        ),
    ))
}

/// A project's settings: `link=`, `only=`, `warnings=`.
fn project_settings(a: &Args) -> Result<(Link, Vec<String>, bool)> {
    let mut link = Link::Yes;
    let mut only = Vec::new();
    let mut show_warnings = false;
    let bad = |k: &str, v: &str, valid: &[&str]| Error::Command {
        command: "load".into(),
        message: format!("{k}= expects {}, got '{v}'", valid.join(", ")),
        suggestions: crate::nearest_names(v, valid.iter().copied()),
    };
    for (k, v) in &a.settings {
        match (k.as_str(), v.as_str()) {
            ("link", "yes") => link = Link::Yes,
            ("link", "no") => link = Link::No,
            ("link", "lto") => link = Link::Lto,
            ("link", v) => return Err(bad("link", v, &["yes", "no", "lto"])),
            ("only", v) => only.extend(comma_list(v)),
            ("warnings", "show") => show_warnings = true,
            ("warnings", "count") => show_warnings = false,
            ("warnings", v) => return Err(bad("warnings", v, &["count", "show"])),
            _ => {}
        }
    }
    Ok((link, only, show_warnings))
}

/// What a project's load says: how many units compiled at which level,
/// those that failed (with clang's words) or were skipped, the warnings,
/// and what was left out of the units' commands (what every build says
/// once, the rest unit by unit).
fn project_report(
    p: &crate::module::project::Project,
    typed: &str,
    level: Level,
    loaded: &crate::module::project::Loaded,
    show_warnings: bool,
) -> Vec<String> {
    let failed = if loaded.failed.is_empty() {
        String::new()
    } else {
        format!(", {} failed", loaded.failed.len())
    };
    let mut lines = vec![format!(
        "{typed}: {} compiled (level {level}){failed}",
        crate::table::count(loaded.units.len(), "unit")
    )];
    if !loaded.warned.is_empty() {
        let counts: Vec<String> = (loaded.warned.iter())
            .map(|(n, w)| format!("{n} {}", w.matches("warning:").count()))
            .collect();
        let hint = if show_warnings {
            ""
        } else {
            " (warnings=show prints them)"
        };
        lines.push(format!(
            "clang warned in {}: {}{hint}",
            crate::table::count(counts.len(), "unit"),
            counts.join(", ")
        ));
    }
    let dropped = p.dropped();
    if !dropped.is_empty() {
        lines.push(format!(
            "left out of the units' commands: {} (the level is passlab's: level=)",
            dropped.join(" ")
        ));
    }
    // What a unit's command said beyond what its source means (a plugin,
    // a file to write): by unit, so that it is seen where it was.
    let by_unit = p.dropped_by_unit();
    for (unit, own) in by_unit.iter().take(8) {
        lines.push(format!(
            "left out of {unit}'s command (not what its source means): {}",
            own.join(" ")
        ));
    }
    if by_unit.len() > 8 {
        lines.push(format!(
            "... and {} more units with flags left out",
            by_unit.len() - 8
        ));
    }
    for (unit, e) in &loaded.failed {
        lines.push(format!("{unit}: failed:\n{}", indent(e)));
    }
    for (file, why) in &p.skipped {
        lines.push(format!("{file}: skipped: {why}"));
    }
    if show_warnings {
        lines.extend(loaded.warned.iter().map(|(_, w)| w.trim_end().to_string()));
    }
    lines
}

/// `text` indented by two spaces, at most 8 lines of it.
fn indent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines.iter().take(8).map(|l| format!("  {l}")).collect();
    if lines.len() > 8 {
        out.push(format!("  ... ({} more lines)", lines.len() - 8));
    }
    out.join("\n")
}

pub(super) fn modules(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let mut t = Table::new("modules", &["", "name", "functions>", "instructions>"]);
    for (name, m) in &s.modules {
        let st = m.stats();
        let mark = if s.current.as_ref() == Some(name) {
            "*"
        } else {
            ""
        };
        t.push([
            mark.to_string(),
            name.clone(),
            st.functions.to_string(),
            st.instructions.to_string(),
        ]);
    }
    table(&t)
}

pub(super) fn use_module(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let name = one_word(a, "a module name")?;
    s.module_named("use", name)?;
    s.current = Some(name.to_string());
    text(format!("using {name}"))
}

pub(super) fn show(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let m = s.module()?;
    // With debug info each instruction line ends in `; line N`, and the
    // HTML colours it with its source line as :asm does.
    let (text, lines) = match a.words.as_slice() {
        [] => m.print_with_lines(),
        [f] => m.print_function_with_lines(f)?,
        _ => return Err(err("show", "expects at most one function name")),
    };
    if lines.iter().all(Option::is_none) {
        return code(s, text, Code::Ir);
    }
    let html = if s.html {
        let of_line: Vec<Option<(&str, u32)>> = lines
            .iter()
            .map(|l| l.as_ref().map(|l| (&*l.path, l.line)))
            .collect();
        crate::highlight::ir_by_source(&text, &of_line, &|path| source_text(s, path))
    } else {
        None
    };
    let mut bundle = super::super::Bundle::code(text, Code::Ir, s.html && html.is_none());
    bundle
        .data
        .extend(html.map(|h| ("text/html".to_string(), h)));
    let mut o = Output::default();
    o.items.push(Item::Display(bundle));
    Ok(o)
}

pub(super) fn stats(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    table(&s.module()?.stats().table())
}

/// What `:features` may show.
const fn count_spaces() -> usize {
    SPACES.len() + 1
}

/// What `:features` takes: each observation space's name, and `zeros`.
pub(super) const FEATURE_WORDS: [&str; count_spaces()] = {
    let mut out = ["zeros"; count_spaces()];
    let mut i = 0;
    while i < SPACES.len() {
        out[i] = SPACES[i].name;
        i += 1;
    }
    out
};

/// `:help features`'s list: each space with what it is.
pub(super) fn features_details() -> String {
    let mut out = String::from("  observation spaces (any case; none named: ");
    let shown: Vec<&str> = SPACES
        .iter()
        .filter(|s| s.shown_by_default)
        .map(|s| s.name)
        .collect();
    out.push_str(&shown.join(" and "));
    out.push_str(
        "):
",
    );
    for s in SPACES {
        out.push_str(&format!(
            "  {}
      {} ({})
",
            s.name,
            s.summary,
            s.dtype.numpy()
        ));
    }
    out.push_str(
        "  zeros
      list the features that are 0 too
",
    );
    out
}

pub(super) fn features(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    if let Some((k, _)) = a.settings.first() {
        return Err(err(
            "features",
            format!(
                "takes no settings ('{k}='): the spaces to show, {}",
                FEATURE_WORDS.join(", ")
            ),
        ));
    }
    let zeros = a.words.iter().any(|w| w == "zeros");
    let mut spaces = a
        .words
        .iter()
        .filter(|w| *w != "zeros")
        .map(|w| crate::module::spaces::space(w))
        .collect::<Result<Vec<_>>>()?;
    if spaces.is_empty() {
        spaces = SPACES.iter().filter(|s| s.shown_by_default).collect();
    }
    let m = s.module()?;
    let mut o = Output::default();
    for space in spaces {
        match m.observe(space) {
            Observation::Text(t) if space.name == "Ir" => o.push_text(t),
            Observation::Text(t) => o.push_text(format!("{}: {t}", space.name)),
            Observation::Ints(v) => {
                let values: Vec<String> = v.iter().map(i64::to_string).collect();
                o.push_table(&space_table(space, &values, zeros, |i| v[i] != 0));
            }
            Observation::Floats(v) => {
                let values: Vec<String> = v.iter().map(|x| format!("{x:.4}")).collect();
                o.push_table(&space_table(space, &values, zeros, |i| v[i] != 0.0));
            }
        }
    }
    Ok(o)
}

/// A vector space's values as a table: index, name, value; only the
/// nonzero ones unless `zeros`.
fn space_table(
    space: &ObservationSpace,
    values: &[String],
    zeros: bool,
    nonzero: impl Fn(usize) -> bool,
) -> Table {
    let mut t = Table::new(
        &format!(
            "{} (CompilerGym, {} feature{}){}",
            space.name,
            values.len(),
            if values.len() == 1 { "" } else { "s" },
            if zeros { "" } else { ", zeros left out" }
        ),
        &["index>", "feature", "value>"],
    );
    for (i, (n, v)) in (space.names)().into_iter().zip(values).enumerate() {
        if zeros || nonzero(i) {
            t.push([i.to_string(), n, v.clone()]);
        }
    }
    t
}

pub(super) fn copy(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let new = one_word(a, "a new module name")?;
    if s.modules.contains_key(new) {
        return Err(err(
            "copy",
            format!("a module named '{new}' exists already"),
        ));
    }
    let m = s.module()?.copy();
    s.put_module(new.to_string(), m);
    s.current = Some(new.to_string());
    text(format!("copied to {new}; using {new}"))
}

pub(super) fn diff(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let (x, y, function) = match a.words.as_slice() {
        [x, y] => (x, y, None),
        [x, y, f] => (x, y, Some(f.as_str())),
        _ => {
            return Err(err(
                "diff",
                "expects two module names and optionally a function: :diff A B [FUNCTION]",
            ))
        }
    };
    let (mx, my) = (s.module_named("diff", x)?, s.module_named("diff", y)?);
    let (tx, ty, lx, ly, what) = match function {
        None => (mx.print(), my.print(), x.clone(), y.clone(), String::new()),
        Some(f) => {
            // As `diff -N` shows a file that exists on one side only: every
            // line added (or removed). A name neither module has is an
            // error, with the nearest names of the first.
            let has = |m: &Module| m.function_names().iter().any(|n| n == f);
            let (in_x, in_y) = (has(mx), has(my));
            let print = |m: &Module, here: bool| {
                if here {
                    m.print_function(f)
                } else {
                    Ok(String::new())
                }
            };
            let label =
                |m: &str, here: bool| format!("{m}/{f}{}", if here { "" } else { " (absent)" });
            (
                print(mx, in_x || !in_y)?,
                print(my, in_y)?,
                label(x, in_x),
                label(y, in_y),
                format!("'s {f}"),
            )
        }
    };
    let d = crate::diff::unified(&tx, &ty, &lx, &ly, 3);
    if d.is_empty() {
        text(format!("{x}{what} and {y}{what} print the same"))
    } else {
        code(s, d, Code::Diff)
    }
}

pub(super) fn save(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let path = one_word(a, "a path")?;
    s.module()?.save(path)?;
    text(format!("wrote {path}"))
}

pub(super) fn path(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    if !a.settings.is_empty() {
        return Err(err("path", "expects folders, not settings"));
    }
    let cwd = std::env::current_dir().map_err(|e| err("path", e.to_string()))?;
    for w in &a.words {
        let dir = cwd.join(w);
        if !dir.is_dir() {
            return Err(err("path", format!("'{w}' is not a folder")));
        }
        if !s.extra_path.contains(&dir) {
            s.extra_path.push(dir);
        }
    }
    let mut t = Table::new(
        "where :load looks for a relative path, in order",
        &["#", "folder", "why"],
    );
    for (i, (dir, why)) in s.input_path_explained().into_iter().enumerate() {
        let mark = if dir.is_dir() { "" } else { " (missing)" };
        t.push([(i + 1).to_string(), format!("{}{mark}", dir.display()), why]);
    }
    table(&t)
}
