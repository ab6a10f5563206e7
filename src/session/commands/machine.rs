//! Machine code: :asm.

use super::*;
use crate::jit::asm::{self, Filter, Syntax};
use crate::jit::Codegen;

const USAGE: &str = "expects [FUNCTION] [syntax=att|intel] [--all] [--out FILE.s]";

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
    for (k, v) in &a.settings {
        match k.as_str() {
            "syntax" => {
                syntax = Syntax::parse(v).map_err(|e| err("asm", format!("syntax= {e}")))?
            }
            _ => {
                return Err(Error::Command {
                    command: "asm".into(),
                    message: format!("unknown setting '{k}' (the one setting is syntax=att|intel)"),
                    suggestions: crate::nearest_names(k, ["syntax"]),
                })
            }
        }
    }
    let name = current(s, "asm")?;
    let m = s.module_named("asm", &name)?;
    if let Some(f) = &function {
        let defined = m.defined_functions();
        if !defined.contains(f) {
            if m.function_names().contains(f) {
                return Err(err(
                    "asm",
                    format!("'{f}' is only declared in module {name}: it has no machine code here"),
                ));
            }
            return Err(Error::Command {
                command: "asm".into(),
                message: format!("no function '{f}' in module {name}"),
                suggestions: crate::nearest_names(f, defined.iter().map(String::as_str)),
            });
        }
    }
    let cg = Codegen::from_context(&ctx)?;
    let fp = m.fingerprint();
    let code = match s.assembly.get(&name) {
        Some((f, c, x, code)) if *f == fp && *c == cg && *x == syntax => code.clone(),
        _ => {
            let code = std::rc::Rc::new(asm::assembly(m, &cg, syntax)?);
            s.assembly
                .insert(name.clone(), (fp, cg.clone(), syntax, code.clone()));
            code
        }
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let sources = &s.sources;
    let source = |path: &str| -> Option<String> {
        let p = std::path::Path::new(path);
        let by_name = p
            .strip_prefix(&cwd)
            .ok()
            .and_then(|rel| sources.get(rel.to_str()?))
            .or_else(|| sources.get(path));
        by_name.cloned().or_else(|| std::fs::read_to_string(p).ok())
    };
    let filter = if all {
        Filter::all()
    } else {
        Filter::default()
    };
    let shown = code.render(function.as_deref(), filter, &source)?;
    if let Some(file) = &out {
        let raw = match &function {
            Some(_) => {
                asm::Assembly::render(&code, function.as_deref(), Filter::all(), &source)?.text
            }
            None => code.text.clone(),
        };
        std::fs::write(file, raw).map_err(|e| Error::io(file, e))?;
    }
    let mut o = Output::default();
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
