//! Machine code: :asm, and :mca's throughput analysis of it.

use super::*;
use crate::jit::asm::{self, Filter, Syntax};
use crate::jit::Codegen;
use std::collections::BTreeMap;

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
    use crate::jit::mca::{self, Region};
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
    if modules.is_empty() {
        modules.push(current(s, "mca")?);
    }
    // Every name checked before any code is generated.
    for name in &modules {
        let m = s.module_named("mca", name)?;
        check_function(m, "mca", name, &function)?;
    }
    let mut settings: Vec<Codegen> = Vec::new();
    if cpus.is_empty() {
        settings.push(base.clone());
    }
    for cpu in &cpus {
        let target = crate::llvm::Target::new(cpu, "").map_err(|e| err("mca", e.to_string()))?;
        settings.push(Codegen {
            target,
            cpu_setting: cpu.clone(),
            ..base.clone()
        });
    }
    let ctx_syntax = match ctx.config(asm::SYNTAX_KEY)? {
        crate::ConfigValue::Str(v) => v,
        v => v.to_string(),
    };
    let syntax = Syntax::parse(&ctx_syntax).map_err(|e| err("mca", e))?;
    let mut rows = Vec::new();
    for name in &modules {
        for cg in &settings {
            let code = machine_code(s, name, cg, syntax)?;
            let f = code.function(&function).ok_or_else(|| {
                err(
                    "mca",
                    format!("the code generator made no function '{function}' in module {name}"),
                )
            })?;
            let region = match block.as_deref() {
                None => Region::innermost(f),
                Some("all") => Region::whole(f),
                Some(b) => Region::at(f, b).map_err(|e| err("mca", e))?,
            };
            let triple = s.module_named("mca", name)?.triple();
            let cpu = mca::model_cpu(&triple, &cg.target.cpu);
            let analysis = mca::analyze(
                &triple,
                &cpu,
                &cg.target.features,
                syntax == Syntax::Intel,
                &region.instructions,
            )?;
            let label = if modules.len() > 1 && settings.len() > 1 {
                format!("{name} · {}", cg.label())
            } else if modules.len() > 1 {
                name.clone()
            } else {
                cg.label()
            };
            rows.push((label, region, analysis, code.files.clone()));
        }
    }
    let mut o = Output::default();
    let mut t = crate::table::Table::new(
        &format!("llvm-mca: {function}, 100 iterations simulated"),
        &[
            "code",
            "region",
            "instructions",
            "cycles/iteration",
            "block throughput",
            "IPC",
            "µops/cycle",
            "busiest resource",
        ],
    );
    for (label, region, a, files) in &rows {
        let place = region
            .source
            .and_then(|(file, line)| {
                let path = files.get(&file)?;
                let short = std::path::Path::new(path)
                    .file_name()?
                    .to_string_lossy()
                    .into_owned();
                Some(format!(" ({short}:{line})"))
            })
            .unwrap_or_default();
        let loop_ = if region.depth > 0 {
            format!("loop {}, depth {}{place}", region.label, region.depth)
        } else {
            format!("{}{place}", region.label)
        };
        let busiest = a
            .busiest()
            .map_or("-".into(), |(r, p)| format!("{r} {p:.2}"));
        t.push([
            format!("{label} [{}]", a.cpu),
            loop_,
            region.instructions.len().to_string(),
            format!("{:.2}", a.cycles_per_iteration()),
            format!("{:.2}", a.block_rthroughput),
            format!("{:.2}", a.ipc),
            format!("{:.2}", a.uops_per_cycle),
            busiest,
        ]);
    }
    o.push_table(&t);
    // Pressure per resource: those any row uses.
    let mut names: Vec<String> = Vec::new();
    for (_, _, a, _) in &rows {
        for (r, p) in a.resources.iter().zip(&a.pressure) {
            if *p > 0.0 && !names.contains(r) {
                names.push(r.clone());
            }
        }
    }
    let mut columns = vec!["resource".to_string()];
    columns.extend(rows.iter().map(|(l, ..)| l.clone()));
    let column_refs: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut p =
        crate::table::Table::new("cycles each resource is busy per iteration", &column_refs);
    for r in &names {
        let mut cells = vec![r.clone()];
        for (_, _, a, _) in &rows {
            let v = a
                .resources
                .iter()
                .position(|x| x == r)
                .map_or(0.0, |i| a.pressure[i]);
            cells.push(if v > 0.0 {
                format!("{v:.2}")
            } else {
                "-".into()
            });
        }
        p.push(cells);
    }
    o.push_table(&p);
    if rows.len() == 1 {
        let (_, region, a, _) = &rows[0];
        o.push_text(format!(
            "{}:\n{}\n\n{}",
            region.label,
            region
                .instructions
                .iter()
                .map(|i| format!("  {i}"))
                .collect::<Vec<_>>()
                .join("\n"),
            a.bottleneck
        ));
    } else {
        for (label, _, a, _) in &rows {
            let summary: Vec<&str> = a
                .bottleneck
                .lines()
                .take_while(|l| !l.starts_with("Critical sequence"))
                .filter(|l| !l.trim().is_empty())
                .collect();
            o.push_text(format!("{label}:\n  {}", summary.join("\n  ")));
        }
    }
    if s.html {
        let bars = if rows.len() > 1 {
            rows.iter()
                .map(|(l, _, a, _)| (l.clone(), a.cycles_per_iteration()))
                .collect()
        } else {
            let a = &rows[0].2;
            a.resources
                .iter()
                .zip(&a.pressure)
                .filter(|(_, p)| **p > 0.0)
                .map(|(r, p)| (r.clone(), *p))
                .collect()
        };
        let (title, axis) = if rows.len() > 1 {
            (
                format!("{function}: simulated cycles per iteration (llvm-mca)"),
                "cycles per iteration",
            )
        } else {
            (
                format!("{function}: resource pressure per iteration (llvm-mca)"),
                "cycles busy per iteration",
            )
        };
        let chart = crate::chart::Chart::bars(&title, axis, bars);
        o.items
            .push(Item::Display(super::super::Bundle::chart(&chart)?));
    }
    Ok(o)
}

/// What code generation recorded for the instruments: the code, a note of
/// what was recorded, and what the printing instruments printed.
struct Recorded {
    code: std::rc::Rc<asm::Assembly>,
    note: String,
    printed: String,
}

/// When an instrument that sees the back end is active (timing, counts,
/// print-before/after/changed, verify, bisect, explore): generates the code
/// with the back end probed, hands each instrument what it sees (see
/// `jit::backend`) and keeps the code.
fn record_backend(
    s: &mut Session,
    name: &str,
    cg: &Codegen,
    syntax: Syntax,
) -> Result<Option<Recorded>> {
    use super::instruments::Handle;
    use crate::instrument::MachineStep;
    use std::rc::Rc;
    let mut probe = crate::jit::Probe::default();
    let mut cg = cg.clone();
    let mut watching = false;
    // Which runs changed the code matters to every instrument but the
    // remarks.
    probe.changes = s.instruments.iter().any(|a| {
        !matches!(
            a.handle,
            Handle::Remarks(_) | Handle::IrSize(_) | Handle::Trace(_)
        )
    });
    for a in &s.instruments {
        match &a.handle {
            Handle::Timing(_) | Handle::Counts(_) => watching = true,
            Handle::PrintBefore(_)
            | Handle::PrintAfter(_)
            | Handle::PrintChanged(_)
            | Handle::Explore(_) => {
                watching = true;
                probe.texts = true;
            }
            Handle::Verify(_) => {
                watching = true;
                probe.verify = true;
            }
            Handle::Bisect(b) => {
                watching = true;
                cg.bisect_limit = Some(b.remaining().map_or(u64::MAX, |r| r as u64));
            }
            Handle::Remarks(r) => {
                watching = true;
                probe.remarks = true;
                probe.size_info |= r.wants_size_info();
            }
            Handle::IrSize(_) | Handle::Trace(_) => {}
        }
    }
    if !watching {
        return Ok(None);
    }
    let m = s.module_named("asm", name)?;
    let fp = m.fingerprint();
    let (code, backend) =
        asm::assembly_probed(m, &cg, syntax, probe).map_err(|e| machine_verifier_error(e, name))?;
    // Each function's text as the passes leave it, from its IR on.
    let mut current: BTreeMap<String, Rc<str>> = BTreeMap::new();
    // (before, after) per run.
    type Texts = (Option<Rc<str>>, Option<Rc<str>>);
    let mut texts: Vec<Texts> = Vec::with_capacity(backend.runs.len());
    for r in &backend.runs {
        if !probe.texts || r.function.is_empty() {
            texts.push((None, None));
            continue;
        }
        // The probes send a function's text when they first look at it (a
        // text on a run that changed nothing) and after each change.
        let before = match (&r.text, current.get(&r.function)) {
            (Some(t), _) if !r.changed => Some(Rc::from(t.as_str())),
            (_, Some(t)) => Some(t.clone()),
            (_, None) => None,
        };
        let after = match &r.text {
            Some(t) if r.changed => Some(Rc::from(t.as_str())),
            _ => before.clone(),
        };
        if let Some(a) = &after {
            current.insert(r.function.clone(), a.clone());
        }
        texts.push((before, after));
    }
    let steps: Vec<MachineStep> = backend
        .runs
        .iter()
        .zip(&texts)
        .map(|(r, (before, after))| MachineStep {
            pass: backend.label(r.pass),
            module_pass: r.function.is_empty(),
            function: &r.function,
            changed: r.changed,
            before: before.as_deref(),
            after: after.as_deref(),
        })
        .collect();
    let passes = backend.per_pass();
    // The back end's remarks, each with the execution (an index into
    // backend.runs) that made it; one made after the last belongs to it.
    let remarks: Vec<crate::instrument::Remark> = backend
        .remarks
        .iter()
        .filter_map(|(k, text)| {
            let mut r = crate::instrument::Remark::from_flat(text)?;
            let k = (*k).min(backend.runs.len().saturating_sub(1));
            if let Some(run) = backend.runs.get(k) {
                r.execution = k;
                r.execution_pass = backend.label(run.pass).to_string();
                r.unit = run.function.clone();
            }
            Some(r)
        })
        .collect();
    let mut recorded = Vec::new();
    for a in &s.instruments {
        match &a.handle {
            Handle::Timing(t) => {
                let rows: Vec<_> = passes
                    .iter()
                    .map(|p| {
                        let unit = if p.module {
                            crate::llvm::IrUnit::Module
                        } else {
                            crate::llvm::IrUnit::Function
                        };
                        (p.label().to_string(), unit, p.runs, p.time)
                    })
                    .collect();
                t.add_measured(&format!("codegen ({})", cg.label()), backend.total, &rows);
                recorded.push("timing");
            }
            Handle::Counts(c) => {
                let rows: Vec<_> = passes
                    .iter()
                    .map(|p| (p.label().to_string(), p.runs, p.changed))
                    .collect();
                c.add_measured(&rows);
                recorded.push("counts");
            }
            Handle::PrintBefore(p) | Handle::PrintAfter(p) => {
                steps.iter().for_each(|st| p.machine_step(st));
                recorded.push(if matches!(a.handle, Handle::PrintBefore(_)) {
                    "print-before"
                } else {
                    "print-after"
                });
            }
            Handle::PrintChanged(p) => {
                steps.iter().for_each(|st| p.machine_step(st));
                recorded.push("print-changed");
            }
            Handle::Verify(v) => {
                v.add_checked(steps.iter().filter(|st| st.changed).count() as u64);
                recorded.push("verify");
            }
            Handle::Bisect(b) => {
                b.add_back_end(
                    backend
                        .decisions
                        .iter()
                        .map(|d| (d.pass.as_str(), d.function.as_str(), d.ran)),
                );
                recorded.push("bisect");
            }
            Handle::Explore(_) => recorded.push("explore"),
            Handle::Remarks(r) => {
                r.add_run(
                    &format!("codegen ({}) on {name}", cg.label()),
                    remarks.clone(),
                );
                recorded.push("remarks");
            }
            Handle::IrSize(_) | Handle::Trace(_) => {}
        }
    }
    if probe.texts
        && s.instruments
            .iter()
            .any(|a| matches!(a.handle, Handle::Explore(_)))
    {
        // After the run that made this code, or on its own.
        let mut rec = match &s.recording {
            Some(r) if r.module == name && r.end == Some(fp) => (**r).clone(),
            _ => crate::instrument::Recording {
                pipeline: cg.label(),
                module: name.to_string(),
                end: Some(fp),
                ..Default::default()
            },
        };
        rec.append_back_end(&format!("codegen ({})", cg.label()), &steps, &|f| {
            m.print_function(f).ok()
        });
        // The back end's remarks beside its passes' diffs: step k is the
        // node after the code generation's own.
        if let Some(root) = rec
            .passes
            .iter()
            .rposition(|p| p.depth == 0 && p.name.starts_with("codegen ("))
        {
            rec.remarks.retain(|r| r.execution < root);
            rec.remarks.extend(remarks.iter().cloned().map(|mut r| {
                r.execution += root + 1;
                r
            }));
        }
        s.recording = Some(Rc::new(rec));
    }
    // Print-changed's diffs go to the shared buffer as they are ready: all
    // of them once its closing count is asked for.
    let mut counts = String::new();
    for a in &s.instruments {
        if let Handle::PrintChanged(p) = &a.handle {
            counts.push_str(&p.output());
        }
    }
    let mut printed = s.printed.take();
    printed.push_str(&counts);
    let code = Rc::new(code);
    s.assembly
        .insert(name.to_string(), (fp, cg.clone(), syntax, code.clone()));
    let runs: u64 = passes.iter().map(|p| p.runs).sum();
    let mut note = format!(
        "the back end recorded for {}: {} passes, {runs} executions, {:.1} ms",
        recorded.join(", "),
        passes.len(),
        backend.total.as_secs_f64() * 1e3
    );
    if probe.verify {
        note.push_str("; the machine verifier found no errors");
    }
    if !backend.decisions.is_empty() {
        let ran = backend.decisions.iter().filter(|d| d.ran).count();
        note.push_str(&format!(
            "; bisect: {ran} of the back end's {} optional passes ran",
            backend.decisions.len()
        ));
    }
    Ok(Some(Recorded {
        code,
        note,
        printed,
    }))
}

/// The machine verifier's failure (the child ended with its report) as
/// the verify instrument's error, naming the pass and the function.
fn machine_verifier_error(e: Error, module: &str) -> Error {
    const SAID: &str = "the machine verifier found errors after ";
    let Error::Codegen { message, .. } = &e else {
        return e;
    };
    let Some(at) = message.find(SAID) else {
        return e;
    };
    let pass = message[at + SAID.len()..]
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    let report: Vec<&str> = message[..at]
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("*** Bad machine code")
                || t.starts_with("- function:")
                || t.starts_with("- basic block:")
                || t.starts_with("- instruction:")
                || t.starts_with("- operand")
        })
        .collect();
    Error::Verify {
        pass: format!("{pass} (machine code of module {module})"),
        message: report.join("\n"),
        ir: Some(message[..at].trim_end().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_verifiers_report_becomes_a_verify_error() {
        // What the child said: LLVM's report, then the fatal error the
        // probe raises (shim/mc.cpp).
        let said = "# After machinelicm (passlab's verifier)\n# Machine code for function f: NoPHIs\n\
                    bb.0:\n  RET 0\n\n*** Bad machine code: Using an undefined physical register ***\n\
                    - function:    f\n- basic block: %bb.0  (0x1)\n- instruction: RET 0, $eax\n\
                    - operand 1:   $eax\n\
                    the machine verifier found errors after Machine Loop Invariant Code Motion (machinelicm) on function f";
        let e = machine_verifier_error(
            Error::Codegen {
                module: "m".into(),
                message: said.into(),
            },
            "m",
        );
        let Error::Verify { pass, message, ir } = e else {
            panic!("not a verify error: {e:?}")
        };
        assert_eq!(
            pass,
            "Machine Loop Invariant Code Motion (machinelicm) on function f (machine code of module m)"
        );
        assert!(
            message.starts_with("*** Bad machine code: Using an undefined"),
            "{message}"
        );
        assert!(message.contains("- instruction: RET 0, $eax"), "{message}");
        assert!(!message.contains("# Machine code"), "{message}");
        assert!(ir.unwrap().contains("bb.0:"));
        // Any other failure is left as it was.
        let other = machine_verifier_error(
            Error::Codegen {
                module: "m".into(),
                message: "LLVM ERROR: out of memory".into(),
            },
            "m",
        );
        assert!(matches!(other, Error::Codegen { .. }));
    }
}
