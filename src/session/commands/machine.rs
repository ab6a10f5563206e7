//! Machine code: :asm, and :mca's throughput analysis of it.

use super::*;
use crate::jit::asm::{self, Filter, Syntax};
use crate::jit::Codegen;

const USAGE: &str =
    "expects [FUNCTION] [syntax=att|intel] [cpu=A,B | modules=M,N] [--all] [--out FILE.s]";

pub(super) fn asm(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
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
    let ctx = PassContext::current();
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
    if !cpus.is_empty() || !modules.is_empty() {
        if out.is_some() {
            return Err(err(
                "asm",
                "--out writes one module's code: not with cpu= or modules=",
            ));
        }
        let filter = if all {
            Filter::all()
        } else {
            Filter::default()
        };
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
    let filter = if all {
        Filter::all()
    } else {
        Filter::default()
    };
    let filter = if s.html { filter } else { filter.text_only() };
    let shown = code.render(function.as_deref(), filter, &source)?;
    if let Some(file) = &out {
        let raw = match &function {
            Some(_) => {
                asm::Assembly::render(
                    &code,
                    function.as_deref(),
                    Filter::all().text_only(),
                    &source,
                )?
                .text
            }
            None => code.text.clone(),
        };
        crate::folder::write_file(std::path::Path::new(file), raw, ":asm --out")?;
    }
    let mut o = Output::default();
    if let Some(r) = &recorded {
        // What the printing instruments printed, before the code.
        o.push_text(r.printed.clone());
    }
    let mut notes = vec![format!("{} · {} syntax", cg.label(), syntax.name())];
    if function.is_none() {
        let bytes: u64 = code.functions.iter().filter_map(|f| f.bytes).sum();
        notes.push(format!(
            "{} function{}, {bytes} bytes of code",
            code.functions.len(),
            if code.functions.len() == 1 { "" } else { "s" }
        ));
    }
    if !shown.has_source && !all {
        notes.push(
            "no source lines: the module has no debug info (cflags=-g on :load or :module adds it)"
                .into(),
        );
    }
    if let Some(file) = &out {
        notes.push(format!("wrote {file}"));
    }
    if let Some(r) = &recorded {
        notes.push(r.note.clone());
    }
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

/// Columns of each side of `:asm`'s side-by-side text.
const SIDE: usize = 56;

/// `:asm [FUNCTION] cpu=A,B` or `modules=M,N`: the two compilations'
/// code side by side, aligned as `diff -y` aligns them (the source lines
/// of `-g` modules, the same on both sides, anchor them), differences
/// marked; in a notebook, two panes.
fn side_by_side(
    s: &mut Session,
    function: Option<&str>,
    syntax: Syntax,
    filter: Filter,
    cpus: &[String],
    modules: &[String],
) -> Result<Output> {
    let base = Codegen::from_context(&PassContext::current())?;
    let current_module = || current(s, "asm");
    // Two sides: two processors for one module, or two modules under one.
    let sides: Vec<(String, Codegen)> = match (cpus, modules) {
        ([a, b], one) if one.len() <= 1 => {
            let m = match one {
                [m] => m.clone(),
                _ => current_module()?,
            };
            let mut out = Vec::new();
            for cpu in [a, b] {
                let target =
                    crate::llvm::Target::new(cpu, "").map_err(|e| err("asm", e.to_string()))?;
                out.push((
                    m.clone(),
                    Codegen {
                        target,
                        cpu_setting: cpu.clone(),
                        ..base.clone()
                    },
                ));
            }
            out
        }
        (one, [m, n]) if one.len() <= 1 => {
            let cg = match one {
                [cpu] => Codegen {
                    target: crate::llvm::Target::new(cpu, "")
                        .map_err(|e| err("asm", e.to_string()))?,
                    cpu_setting: cpu.clone(),
                    ..base.clone()
                },
                _ => base.clone(),
            };
            vec![(m.clone(), cg.clone()), (n.clone(), cg)]
        }
        _ => {
            return Err(err(
                "asm",
                format!(
                    "side by side takes two: cpu=A,B (one module) or modules=M,N (one processor); got cpu={} modules={}",
                    cpus.join(","),
                    modules.join(",")
                ),
            ))
        }
    };
    let mut shown = Vec::new();
    for (name, cg) in &sides {
        let m = s.module_named("asm", name)?;
        if let Some(f) = function {
            check_function(m, "asm", name, f)?;
        }
        let code = machine_code(s, name, cg, syntax)?;
        let source = |path: &str| source_text(s, path);
        let text = code.render(function, filter.text_only(), &source)?.text;
        let bytes: u64 = match function {
            Some(f) => code.function(f).and_then(|f| f.bytes).unwrap_or(0),
            None => code.functions.iter().filter_map(|f| f.bytes).sum(),
        };
        let label = format!("{name} · {} · {bytes} bytes", cg.label());
        shown.push((label, text));
    }
    let rows = crate::diff::side_by_side(&shown[0].1, &shown[1].1);
    let differing = rows.iter().filter(|r| r.mark != ' ').count();
    let what = function.map_or("the module".to_string(), |f| format!("'{f}'"));
    let note = format!(
        "; {what} side by side, {} syntax: {} rows, {} differ (| changed, < left only, > right only)",
        syntax.name(),
        rows.len(),
        differing
    );
    let cell = |t: &Option<String>| -> String {
        let t = t.as_deref().unwrap_or("").replace('\t', "        ");
        if t.chars().count() > SIDE {
            let mut c: String = t.chars().take(SIDE - 1).collect();
            c.push('…');
            c
        } else {
            format!("{t:<SIDE$}")
        }
    };
    let mut text = format!(
        "{note}\n{} | {}\n",
        cell(&Some(shown[0].0.clone())),
        shown[1].0
    );
    for r in &rows {
        let line = format!(
            "{} {} {}",
            cell(&r.left),
            r.mark,
            r.right.as_deref().unwrap_or("")
        );
        text.push_str(line.trim_end());
        text.push('\n');
    }
    let mut o = Output::default();
    let mut data = vec![("text/plain".to_string(), text)];
    if s.html {
        data.push((
            "text/html".into(),
            side_by_side_html(&note, &shown[0].0, &shown[1].0, &rows),
        ));
    }
    o.items.push(Item::Display(super::super::Bundle { data }));
    Ok(o)
}

/// The two panes as HTML, Compiler Explorer's way: each compilation in a
/// column of its own, rows aligned, the rows that differ tinted (changed
/// in amber, one side only in red or green), source lines in grey.
fn side_by_side_html(note: &str, left: &str, right: &str, rows: &[crate::diff::Row]) -> String {
    use crate::table::escape;
    let mut h = String::from(
        "<div class=\"plab-sbs\"><style>.plab-sbs table{border-collapse:collapse;table-layout:fixed;width:100%;font:12px/1.35 ui-monospace,monospace}\
         .plab-sbs col.code{width:calc(50% - 12px)}.plab-sbs col.mark{width:24px}\
         .plab-sbs td{padding:0 6px;white-space:pre;overflow:hidden;text-overflow:ellipsis;vertical-align:top;text-align:left!important;border:0}\
         .plab-sbs th{text-align:left!important;padding:2px 6px;border-bottom:1px solid #ccc;font:600 12px system-ui,sans-serif;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}\
         .plab-sbs .c td.s{background:#fff4d6}.plab-sbs .l td.a{background:#fde2e2}.plab-sbs .r td.b{background:#def5e2}\
         .plab-sbs td.m{color:#999;padding:0 2px}.plab-sbs .src{color:#777}</style>",
    );
    h.push_str(&format!(
        "<div style=\"color:#666;font-size:12px;margin-bottom:4px\">{}</div><table><colgroup><col class=\"code\"><col class=\"mark\"><col class=\"code\"></colgroup><tr><th>{}</th><th></th><th>{}</th></tr>",
        escape(note.trim_start_matches("; ")),
        escape(left),
        escape(right)
    ));
    for r in rows {
        let class = match r.mark {
            '|' => " class=\"c\"",
            '<' => " class=\"l\"",
            '>' => " class=\"r\"",
            _ => "",
        };
        let side = |t: &Option<String>, which: &str| {
            let t = t.as_deref().unwrap_or("");
            // A source line (`; 12: s += a[i]`) in grey.
            let src = if t.trim_start().starts_with(';') {
                " src"
            } else {
                ""
            };
            let changed = if r.mark == '|' { " s" } else { "" };
            format!(
                "<td class=\"{which}{changed}{src}\" title=\"{}\">{}</td>",
                escape(t.trim()),
                escape(t)
            )
        };
        h.push_str(&format!(
            "<tr{class}>{}<td class=\"m\">{}</td>{}</tr>",
            side(&r.left, "a"),
            if r.mark == ' ' {
                String::new()
            } else {
                r.mark.to_string()
            },
            side(&r.right, "b")
        ));
    }
    h.push_str("</table></div>");
    h
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
    let watchers: Vec<_> = s.instruments.iter().map(|a| a.handle.watcher()).collect();
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
