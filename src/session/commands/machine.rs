//! Machine code: :asm, and :mca's throughput analysis of it.

use super::*;
use crate::jit::asm::{self, Filter, Syntax};
use crate::jit::Codegen;

const USAGE: &str =
    "expects [FUNCTION] [syntax=att|intel] [cpu=A,B | modules=M,N] [--all] [--out FILE.s]";

/// `:asm`'s words and settings.
struct AsmArgs {
    function: Option<String>,
    all: bool,
    out: Option<String>,
    syntax: Syntax,
    cpus: Vec<String>,
    modules: Vec<String>,
}

/// Reads `:asm`'s line: `--out FILE`, `--all`, the function, and the
/// settings over the context's syntax.
fn asm_args(a: &Args, ctx: &PassContext) -> Result<AsmArgs> {
    let mut words = a.words.clone();
    let out = take_out(&mut words, "asm", ", such as gemm.s")?;
    let all = match words.iter().position(|w| w == "--all") {
        Some(i) => {
            words.remove(i);
            true
        }
        None => false,
    };
    if let Some(flag) = words.iter().find(|w| w.starts_with("--")) {
        return Err(Error::Command {
            command: "asm".into(),
            message: format!("unknown flag '{flag}' ({USAGE})"),
            suggestions: crate::nearest_names(flag, ["--all", "--out"]),
        });
    }
    let function = match words.as_slice() {
        [] => None,
        [f] => Some(f.clone()),
        _ => return Err(err("asm", format!("{USAGE}, got '{}'", a.rest))),
    };
    let mut syntax = match ctx.config(asm::SYNTAX_KEY)? {
        crate::ConfigValue::Str(v) => Syntax::parse(&v).map_err(|e| err("asm", e))?,
        v => Syntax::parse(&v.to_string()).map_err(|e| err("asm", e))?,
    };
    let (mut cpus, mut modules) = (Vec::new(), Vec::new());
    for (k, v) in &a.settings {
        match k.as_str() {
            "syntax" => {
                syntax = Syntax::parse(v).map_err(|e| err("asm", format!("syntax= {e}")))?
            }
            "cpu" => cpus = comma_list(v),
            "modules" => modules = comma_list(v),
            _ => {
                return Err(Error::Command {
                    command: "asm".into(),
                    message: format!(
                        "unknown setting '{k}' (syntax=att|intel, cpu=A,B or modules=M,N)"
                    ),
                    suggestions: crate::nearest_names(k, ["syntax", "cpu", "modules"]),
                })
            }
        }
    }
    Ok(AsmArgs {
        function,
        all,
        out,
        syntax,
        cpus,
        modules,
    })
}

pub(super) fn asm(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let ctx = PassContext::current();
    let AsmArgs {
        function,
        all,
        out,
        syntax,
        cpus,
        modules,
    } = asm_args(a, &ctx)?;
    let filter = if all {
        Filter::all()
    } else {
        Filter::default()
    };
    if !cpus.is_empty() || !modules.is_empty() {
        if out.is_some() {
            return Err(err(
                "asm",
                "--out writes one module's code: not with cpu= or modules=",
            ));
        }
        return side_by_side(s, function.as_deref(), syntax, filter, &cpus, &modules);
    }
    let name = current(s, "asm")?;
    let m = s.module_named("asm", &name)?;
    if let Some(f) = &function {
        check_function(m, "asm", &name, f)?;
    }
    let cg = Codegen::from_context(&ctx)?;
    // With timing or counts active, code generation is recorded like a
    // :run: every back-end pass, under one `codegen` node.
    let recorded = record_backend(s, &name, &cg, syntax)?;
    let code = match &recorded {
        Some(r) => r.code.clone(),
        None => machine_code(s, &name, &cg, syntax)?,
    };
    let source = |path: &str| source_text(s, path);
    let filter = if s.html { filter } else { filter.text_only() };
    let shown = code.render(function.as_deref(), filter, &source)?;
    if let Some(file) = &out {
        let raw = code.raw_text(function.as_deref(), &source)?;
        crate::folder::write_file(std::path::Path::new(file), raw, ":asm --out")?;
    }
    let mut o = Output::default();
    if let Some(r) = &recorded {
        // What the printing instruments printed, before the code.
        o.push_text(r.printed.clone());
    }
    let mut notes = vec![format!("{} · {} syntax", cg.label(), syntax.name())];
    if function.is_none() {
        let n = code.functions.len();
        let bytes = code.bytes(None);
        notes.push(format!(
            "{n} function{}, {bytes} bytes of code",
            if n == 1 { "" } else { "s" }
        ));
    }
    if !shown.has_source && !all {
        notes.push(
            "no source lines: the module has no debug info (cflags=-g on :load or :module adds it)"
                .into(),
        );
    }
    notes.extend(out.iter().map(|file| format!("wrote {file}")));
    notes.extend(recorded.iter().map(|r| r.note.clone()));
    let header = format!("; {}\n", notes.join("; "));
    let mut data = vec![("text/plain".to_string(), format!("{header}{}", shown.text))];
    if let Some(html) = shown.html.filter(|_| s.html) {
        data.push((
            "text/html".into(),
            format!(
                "<div style=\"color:#666;font-size:12px;margin-bottom:4px\">{}</div>{html}",
                notes.join(" · ").replace('&', "&amp;").replace('<', "&lt;")
            ),
        ));
    }
    o.items.push(Item::Display(super::super::Bundle { data }));
    Ok(o)
}

/// `:asm [FUNCTION] cpu=A,B` or `modules=M,N`: the two compilations'
/// code side by side (`jit::asm::SideBySide`); in a notebook, two panes.
fn side_by_side(
    s: &mut Session,
    function: Option<&str>,
    syntax: Syntax,
    filter: Filter,
    cpus: &[String],
    modules: &[String],
) -> Result<Output> {
    let base = Codegen::from_context(&PassContext::current())?;
    let sides = asm::sides(&base, cpus, modules, &mut || current(s, "asm"))?;
    let mut shown: [(String, String); 2] = Default::default();
    for ((name, cg), side) in sides.iter().zip(&mut shown) {
        let m = s.module_named("asm", name)?;
        if let Some(f) = function {
            check_function(m, "asm", name, f)?;
        }
        let code = machine_code(s, name, cg, syntax)?;
        let source = |path: &str| source_text(s, path);
        let text = code.render(function, filter.text_only(), &source)?.text;
        let label = format!("{name} · {} · {} bytes", cg.label(), code.bytes(function));
        *side = (label, text);
    }
    let [(l, left), (r, right)] = shown;
    let sbs = asm::SideBySide::new(function, syntax, (l, &left), (r, &right));
    let mut data = vec![("text/plain".to_string(), sbs.text())];
    if s.html {
        data.push(("text/html".into(), sbs.html()));
    }
    let mut o = Output::default();
    o.items.push(Item::Display(super::super::Bundle { data }));
    Ok(o)
}

/// `f` must have machine code in module `name`: defined there.
fn check_function(m: &crate::Module, command: &str, name: &str, f: &str) -> Result<()> {
    let defined = m.defined_functions();
    if defined.iter().any(|d| d == f) {
        return Ok(());
    }
    if m.function_names().iter().any(|d| d == f) {
        return Err(err(
            command,
            format!("'{f}' is only declared in module {name}: it has no machine code here"),
        ));
    }
    Err(Error::Command {
        command: command.into(),
        message: format!("no function '{f}' in module {name}"),
        suggestions: crate::nearest_names(f, defined.iter().map(String::as_str)),
    })
}

/// The machine code of module `name` under `cg`, made once per module
/// state, settings and syntax (kept for the next `:asm` or `:mca`).
fn machine_code(
    s: &mut Session,
    name: &str,
    cg: &Codegen,
    syntax: Syntax,
) -> Result<std::rc::Rc<asm::Assembly>> {
    let m = s.module_named("asm", name)?;
    let fp = m.fingerprint();
    if let Some((f, c, x, code)) = s.assembly.get(name) {
        if *f == fp && c == cg && *x == syntax {
            return Ok(code.clone());
        }
    }
    let code = std::rc::Rc::new(asm::assembly(m, cg, syntax)?);
    s.assembly
        .insert(name.to_string(), (fp, cg.clone(), syntax, code.clone()));
    Ok(code)
}

const MCA_USAGE: &str = "expects FUNCTION [BLOCK|all] [cpu=CPU,...] [modules=M,...]";

/// `:mca FUNCTION [BLOCK|all] [cpu=CPU,...] [modules=M,...]`: llvm-mca over
/// the function's innermost loop (or the loop or block at BLOCK, or all of
/// it), for each processor and module given (default: the context's and
/// the current one), side by side.
pub(super) fn mca(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let (function, block) = match a.words.as_slice() {
        [f] => (f.clone(), None),
        [f, b] => (f.clone(), Some(b.clone())),
        [] => {
            return Err(err(
                "mca",
                format!("{MCA_USAGE}: name the function whose loop to analyze"),
            ))
        }
        _ => return Err(err("mca", format!("{MCA_USAGE}, got '{}'", a.rest))),
    };
    let ctx = PassContext::current();
    let base = Codegen::from_context(&ctx)?;
    let (cpus, mut modules) = mca_settings(a)?;
    if modules.is_empty() {
        modules.push(current(s, "mca")?);
    }
    // Every name checked before any code is generated.
    for name in &modules {
        let m = s.module_named("mca", name)?;
        check_function(m, "mca", name, &function)?;
    }
    let syntax = match ctx.config(asm::SYNTAX_KEY)? {
        crate::ConfigValue::Str(v) => v,
        v => v.to_string(),
    };
    let mut code = |name: &str, cg: &Codegen, syntax: Syntax| {
        let code = machine_code(s, name, cg, syntax)?;
        Ok((code, s.module_named("mca", name)?.triple()))
    };
    let c = crate::jit::mca::compare(
        &function,
        block.as_deref(),
        &modules,
        &base,
        &cpus,
        &syntax,
        &mut code,
    )?;
    let mut o = Output::default();
    o.push_table(&c.table());
    o.push_table(&c.pressure());
    for note in c.notes() {
        o.push_text(note);
    }
    if s.html {
        let (title, axis, bars) = c.bars();
        let chart = crate::chart::Chart::bars(&title, axis, bars);
        o.items
            .push(Item::Display(super::super::Bundle::chart(&chart)?));
    }
    Ok(o)
}

/// `:mca`'s settings: the processors (`cpu=`) and the modules
/// (`modules=`), each a list of 1 to 16 names.
fn mca_settings(a: &Args) -> Result<(Vec<String>, Vec<String>)> {
    let mut cpus: Vec<String> = Vec::new();
    let mut modules: Vec<String> = Vec::new();
    for (k, v) in &a.settings {
        let list = || -> Result<Vec<String>> {
            let items: Vec<String> = v.split(',').map(|x| x.trim().to_string()).collect();
            if items.iter().any(String::is_empty) {
                return Err(err(
                    "mca",
                    format!("{k}= expects a list such as a,b, got '{v}'"),
                ));
            }
            // Each item is a code generation and an llvm-mca run.
            if items.len() > 16 {
                return Err(err(
                    "mca",
                    format!("{k}= expects 1 to 16 names, got {}", items.len()),
                ));
            }
            Ok(items)
        };
        match k.as_str() {
            "cpu" => cpus = list()?,
            "modules" => modules = list()?,
            _ => {
                return Err(Error::Command {
                    command: "mca".into(),
                    message: format!("unknown setting '{k}' ({MCA_USAGE})"),
                    suggestions: crate::nearest_names(k, ["cpu", "modules"]),
                })
            }
        }
    }
    Ok((cpus, modules))
}

/// What code generation recorded for the instruments: the code, a note of
/// what was recorded, and what the printing instruments printed.
struct Recorded {
    code: std::rc::Rc<asm::Assembly>,
    note: String,
    printed: String,
}

/// When an instrument that sees the back end is active (timing, counts,
/// print-before/after/changed, verify, bisect, explore, remarks):
/// generates the code with the back end probed and hands each instrument
/// what it sees (`jit::backend::record`), keeping the code and the
/// explorer's recording.
fn record_backend(
    s: &mut Session,
    name: &str,
    cg: &Codegen,
    syntax: Syntax,
) -> Result<Option<Recorded>> {
    let watchers: Vec<_> = s
        .instruments
        .iter()
        .map(|a| a.handle.instrument())
        .collect();
    let m = s.module_named("asm", name)?;
    let fp = m.fingerprint();
    let previous = s.recording.as_deref();
    let Some(r) = crate::jit::backend::record(m, name, cg, syntax, &watchers, previous)? else {
        return Ok(None);
    };
    if let Some(rec) = r.recording {
        s.recording = Some(std::rc::Rc::new(rec));
    }
    let mut printed = s.printed.take();
    printed.push_str(&r.printed);
    let code = std::rc::Rc::new(r.code);
    s.assembly
        .insert(name.to_string(), (fp, r.codegen, syntax, code.clone()));
    Ok(Some(Recorded {
        code,
        note: r.note,
        printed,
    }))
}
