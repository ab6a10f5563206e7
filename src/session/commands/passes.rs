//! Passes: :passes, :pass, :explain, :run, :undo.

use super::*;
use crate::instrument::{Remarks, RemarksMark};

pub(super) fn passes(_s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let filter = a.words.first().map(String::as_str).unwrap_or("");
    let mut t = Table::new(
        "passes",
        &["name", "kind", "opt_level>", "from", "description"],
    );
    for p in registry::passes()
        .into_iter()
        .filter(|p| p.name.contains(filter))
    {
        let kind = match (&p.kind, &p.origin) {
            (_, registry::Origin::UserRust(k)) => format!("rust {}", k.replace('_', " ")),
            (_, registry::Origin::Defined) => "sequential".to_string(),
            (registry::PassKind::Rust, _) => "rust".to_string(),
            (registry::PassKind::Llvm { unit, .. }, _) => format!("llvm {unit}"),
        };
        let from = match &p.origin {
            registry::Origin::BuiltIn => match p.kind {
                registry::PassKind::Rust => "passlab".to_string(),
                registry::PassKind::Llvm { .. } => "LLVM".to_string(),
            },
            registry::Origin::Defined => "yours (:pass)".to_string(),
            registry::Origin::UserRust(_) => "yours (:register)".to_string(),
            registry::Origin::Plugin(path) => format!(
                "plugin {}",
                std::path::Path::new(path)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.clone())
            ),
        };
        t.push([
            p.name.clone(),
            kind,
            p.opt_level.to_string(),
            from,
            p.description.clone(),
        ]);
    }
    let n = t.rows.len();
    t.notes.push(format!("{n} passes"));
    table(&t)
}

/// What `:help run` adds.
pub(super) fn details() -> String {
    "  --out DIR   if a pass crashes (a segmentation fault, an abort, a stack overflow: LLVM's, a plugin's or a Rust pass's), write a reproducer there: input.ll (the module as it was before the command), README.md, repro.plab (the context, the plugins, the pipeline) and, when every pass is LLVM's or a plugin's, repro.sh, which shows the crash with opt-19 alone (run once when written; it exits 0 when the crash shows); :reduce fails PIPELINE --out DIR2 shrinks it. A run that does not crash writes nothing there. A new folder, or one the same :run on the same module wrote (its files are replaced); a folder of yours or another job's is refused: replace=yes writes beside your files without touching them (or removes only the other job's)"
        .to_string()
}

pub(super) fn run_pipeline(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let mut words = a.words.clone();
    let out_dir = match words.iter().position(|w| w == "--out") {
        Some(i) if i + 1 < words.len() => {
            let dir = words.remove(i + 1);
            words.remove(i);
            Some(dir)
        }
        Some(_) => {
            return Err(err(
                "run",
                "--out expects a folder for a crash's reproducer, e.g. :run O2 --out crash",
            ))
        }
        None => None,
    };
    let mut replace = false;
    for (k, v) in &a.settings {
        match k.as_str() {
            "replace" if out_dir.is_some() => replace = matches!(v.as_str(), "yes" | "true"),
            "replace" => {
                return Err(err(
                    "run",
                    "replace= goes with --out DIR (the folder for a crash's reproducer)",
                ))
            }
            other => {
                return Err(err(
                    "run",
                    format!("takes a pipeline, not settings ('{other}'); use :with for those"),
                ))
            }
        }
    }
    if words.len() > 1 {
        return Err(err(
            "run",
            format!(
                "a pipeline is one word, passes separated by commas: got '{}'",
                words.join(" ")
            ),
        ));
    }
    let pipeline_text = words.pop().unwrap_or_default();
    match out_dir {
        None => run_recording(s, &pipeline_text, "run", None)
            .map_err(|e| with_reproducer_hint(e, &pipeline_text)),
        Some(dir) => run_keeping_crash(s, &pipeline_text, &dir, replace, &a.rest),
    }
}

/// The error of a run of `pipeline` (as typed; empty: the default one)
/// that crashed, with a line saying how to keep a reproducer of it; any
/// other error as it is.
pub(super) fn with_reproducer_hint(e: Error, pipeline: &str) -> Error {
    match e {
        Error::PassCrashed {
            pass,
            how,
            mut reason,
        } => {
            let space = if pipeline.is_empty() { "" } else { " " };
            // repro.sh only when opt-19 can run every pass of it.
            let what = if pipeline.is_empty() || crate::pipeline::llvm_spelling(pipeline).is_some()
            {
                "the module, the pipeline and repro.sh for opt-19"
            } else {
                "the module and the pipeline"
            };
            reason.push_str(&format!(
                "\n:run {pipeline}{space}--out DIR writes a reproducer of it ({what})"
            ));
            Error::PassCrashed { pass, how, reason }
        }
        e => e,
    }
}

/// `:run PIPELINE --out DIR`: the run, and, if a pass crashes, a
/// reproducer in `dir` (see `reduce::crash_reproducer`). The folder is
/// taken before the run, so that one passlab may not write is refused at
/// once; a run that does not crash gives back a folder it made.
fn run_keeping_crash(
    s: &mut Session,
    pipeline_text: &str,
    dir: &str,
    replace: bool,
    line: &str,
) -> Result<Output> {
    let name = current(s, "run")?;
    // The pipeline as a reproducer names it (the default one by its level).
    let pipeline = if pipeline_text.is_empty() {
        pipeline::default_pipeline(PassContext::current().opt_level())?
            .info()
            .name
            .clone()
    } else {
        pipeline::parse(pipeline_text)?;
        pipeline_text.to_string()
    };
    let out = crate::reduce::claim_folder_for(
        "run",
        std::path::Path::new(dir),
        line,
        s.module_named("run", &name)?,
        replace,
    )?;
    match run_recording(s, pipeline_text, "run", None) {
        Ok(mut o) => {
            o.push_text(if out.abandon()? {
                format!("no pass crashed: nothing written to {dir}")
            } else {
                format!("no pass crashed: {dir} is left as it was")
            });
            Ok(o)
        }
        Err(Error::PassCrashed {
            pass,
            how,
            mut reason,
        }) => {
            let said = Error::PassCrashed {
                pass: pass.clone(),
                how: how.clone(),
                reason: reason.clone(),
            }
            .to_string();
            // The module is as it was before the run.
            let m = s.module_named("run", &name)?;
            match crate::reduce::crash_reproducer(&out, m, &pipeline, &pass, &how, &said) {
                Ok(r) => reason.push_str(&format!(
                    "\n{}\nto shrink it: :reduce fails {pipeline} --out {}-reduced",
                    r.note(),
                    dir.trim_end_matches('/')
                )),
                Err(e) => reason.push_str(&format!("\nno reproducer written: {e}")),
            }
            Err(Error::PassCrashed { pass, how, reason })
        }
        Err(e) => {
            // Nothing to keep: the folder goes back as it was (the run's
            // error is the one to report).
            let _ = out.abandon();
            Err(e)
        }
    }
}

/// Runs `pipeline` (empty: the context's default) on the current module
/// with the active instruments and `extra`; the module can be put back
/// with `:undo`. When an explore instrument (or `extra`) recorded the run,
/// the recording becomes the one `:explore` shows.
pub(super) fn run_recording(
    s: &mut Session,
    pipeline_text: &str,
    command: &str,
    extra: Option<Rc<crate::instrument::Explore>>,
) -> Result<Output> {
    let pass = if pipeline_text.is_empty() {
        pipeline::default_pipeline(PassContext::current().opt_level())?
    } else {
        pipeline::parse(pipeline_text)?
    };
    let name = current(s, command)?;
    let (ctx, explorers) = run_context(s, extra);
    let module = s
        .modules
        .get_mut(&name)
        .ok_or_else(|| err(command, format!("module '{name}' is gone")))?;
    let before = module.instruction_count();
    let snapshot = module.snapshot();
    s.printed.take(); // what a failed run printed
    let remarks = remarks_marks(&s.instruments);
    let start = std::time::Instant::now();
    let scope = ctx.enter()?;
    let result = pass.apply(module);
    let exited = scope.exit();
    if let Err(e) = result.and(exited) {
        for (r, mark) in &remarks {
            r.rollback(*mark);
        }
        return Err(e);
    }
    let label = run_label(&name);
    for (r, _) in &remarks {
        r.label_last_run(&label);
    }
    let after = module.instruction_count();
    let end = module.fingerprint();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    s.undo.push((name.clone(), snapshot));
    if let Some(e) = explorers.first() {
        let mut rec = e.take();
        rec.module = name.clone();
        rec.end = Some(end);
        if pipeline_text.is_empty() {
            rec.pipeline = pass.info().name.clone();
        }
        if let Some((r, _)) = remarks.first() {
            rec.remarks = r.of_run(r.runs().len());
        }
        s.recording = Some(Rc::new(rec));
    }
    let mut o = Output::default();
    o.push_text(s.printed.take());
    for i in &s.instruments {
        // What each prints when the run ends (print-changed's closing
        // count; its diffs went to the shared buffer).
        o.push_text(i.handle.instrument().closing());
    }
    o.push_text(format!(
        "ran {} on {name}: {before} -> {after} instructions [{ms:.1} ms]",
        pass.info().name
    ));
    Ok(o)
}

/// The context a run goes in: the active instruments, then `extra`; and
/// the explore instruments among them (`extra` first).
fn run_context(
    s: &Session,
    extra: Option<Rc<crate::instrument::Explore>>,
) -> (PassContext, Vec<Rc<crate::instrument::Explore>>) {
    let mut ctx = PassContext::inherit();
    let mut explorers = extra.clone().into_iter().collect::<Vec<_>>();
    for i in &s.instruments {
        ctx = ctx.with_instrument(i.handle.instrument());
        if let Some(e) = i.handle.get::<crate::instrument::Explore>() {
            explorers.push(e);
        }
    }
    if let Some(e) = extra {
        ctx = ctx.with_instrument(e);
    }
    (ctx, explorers)
}

/// The remarks recorders among `instruments`, and what each held before
/// a run: a failed run leaves none of its remarks behind.
fn remarks_marks(instruments: &[Active]) -> Vec<(Rc<Remarks>, RemarksMark)> {
    instruments
        .iter()
        .filter_map(|i| i.handle.get::<Remarks>())
        .map(|r| {
            let mark = r.mark();
            (r, mark)
        })
        .collect()
}

/// What a remarks run is called after its pipeline: the module, and the
/// settings of the context it ran in (`on loop (target.cpu=znver4)`).
fn run_label(module: &str) -> String {
    let ctx = PassContext::current();
    let settings: Vec<String> = ctx
        .config_set()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if settings.is_empty() {
        format!("on {module}")
    } else {
        format!("on {module} ({})", settings.join(" "))
    }
}

pub(super) fn define_pass(_s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let usage = "expects NAME = PIPELINE [opt_level=N] [required=P,...]";
    let [name, eq, pipeline_text] = a.words.as_slice() else {
        return Err(err("pass", usage));
    };
    if eq != "=" {
        return Err(err("pass", usage));
    }
    let info = crate::PassInfo::new(name, 0).describe(&format!("= {pipeline_text}"));
    let info = pass_settings("pass", info, &a.settings)?;
    let inner = pipeline::parse(pipeline_text)?;
    let children: Vec<crate::PassRef> = if inner.children().is_empty() {
        vec![inner]
    } else {
        inner.children().to_vec()
    };
    if children.iter().any(|c| c.info().name == *name) {
        return Err(err("pass", format!("'{name}' cannot contain itself")));
    }
    let summary = format!("pass {name} = {pipeline_text} {}", settings_summary(&info));
    let seq: crate::PassRef = std::sync::Arc::new(crate::Sequential::with_info(info, children));
    registry::define_pass(move || seq.clone()).map_err(|e| err("pass", e.to_string()))?;
    text(summary)
}

pub(super) fn explain(_s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let mut ctx = PassContext::current();
    let pass = if a.rest.is_empty() {
        pipeline::default_pipeline(ctx.opt_level())?
    } else {
        pipeline::parse(&a.rest)?
    };
    if let Some(level) = pass.children_opt_level() {
        ctx = ctx.with_opt_level(level);
    }
    let mut t = Table::new(
        &format!("{} under {}", pass.info().name, ctx.summary()),
        &["pass", "opt_level>", "decision", "why"],
    );
    if pass.children().is_empty() {
        t.push([
            pass.info().name.clone(),
            pass.info().opt_level.to_string(),
            "runs".into(),
            "a pass run on its own ignores gating (as in TVM)".into(),
        ]);
    }
    for child in pass.children() {
        let info = child.info();
        let (runs, why) = if ctx.disabled().contains(&info.name) {
            (
                false,
                "disabled in the context (disabled wins over required)".to_string(),
            )
        } else if ctx.required().contains(&info.name) {
            (true, "required by the context".to_string())
        } else if info.opt_level <= ctx.opt_level() {
            (
                true,
                format!(
                    "opt_level {} <= the context's {}",
                    info.opt_level,
                    ctx.opt_level()
                ),
            )
        } else {
            (
                false,
                format!(
                    "opt_level {} > the context's {}",
                    info.opt_level,
                    ctx.opt_level()
                ),
            )
        };
        let mut why = why;
        if runs && !info.required.is_empty() {
            why.push_str(&format!(
                "; first runs its required passes {}",
                info.required.join(", ")
            ));
        }
        t.push([
            info.name.clone(),
            info.opt_level.to_string(),
            if runs { "runs" } else { "skipped" }.into(),
            why,
        ]);
    }
    if !ctx.disabled().is_empty() {
        t.notes.push(format!(
            "inside LLVM pipelines, LLVM's optional passes named {} are skipped",
            ctx.disabled()
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    table(&t)
}

pub(super) fn undo(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    // Undo is one stack over every module: its top may be another
    // module's :run, which is not what `:undo` on this module means.
    if let (Some((last, _)), Some(current)) = (s.undo.last(), &s.current) {
        if last != current {
            let own = if s.undo.iter().any(|(n, _)| n == current) {
                format!(" (then :use {current} and :undo for the :run on {current})")
            } else {
                format!(" ({current} has no :run to undo)")
            };
            return Err(err(
                "undo",
                format!(
                    "the last :run was on module '{last}', not on the current module '{current}': to undo it, :use {last} then :undo{own}"
                ),
            ));
        }
    }
    let (name, snapshot) = s.undo.pop().ok_or_else(|| err("undo", "nothing to undo"))?;
    match s.modules.get_mut(&name) {
        Some(m) => {
            // What a roll-back needs to redo it (the session's panic boundary).
            s.undone = Some((name.clone(), m.snapshot(), snapshot.clone()));
            m.restore(&snapshot)?;
            text(format!("{name} is back as it was before the last :run"))
        }
        None => Err(err("undo", format!("module '{name}' no longer exists"))),
    }
}

pub(super) fn plugin(_s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let path = one_word(a, "the path of an LLVM pass plugin (.so)")?;
    let found = registry::load_plugin(std::path::Path::new(path))?;
    let mut t = Table::new(&format!("passes of the plugin {path}"), &["name", "kind"]);
    for e in &found {
        let kind = match &e.kind {
            registry::PassKind::Llvm { unit, .. } => format!("llvm {unit}"),
            registry::PassKind::Rust => "rust".into(),
        };
        t.push([e.name.clone(), kind]);
    }
    t.notes.push(if found.is_empty() {
        "it registers no pass by name; passes it adds at extension points run inside LLVM's default pipelines".into()
    } else {
        "usable by name in pipelines; passes it adds at extension points run inside LLVM's default pipelines".into()
    });
    table(&t)
}

/// The settings `:pass` and `:register` take: `opt_level=N` (0-3) and
/// `required=P,...`, applied to `info`; each required pass must exist.
pub(super) fn pass_settings(
    command: &str,
    mut info: crate::PassInfo,
    settings: &[(String, String)],
) -> Result<crate::PassInfo> {
    for (k, v) in settings {
        match k.as_str() {
            "opt_level" => {
                info.opt_level = v.parse().ok().filter(|l| *l <= 3).ok_or_else(|| {
                    err(
                        command,
                        format!("opt_level expects a number from 0 to 3, got '{v}'"),
                    )
                })?
            }
            "required" => info = info.requires(comma_list(v)),
            other => {
                return Err(Error::Command {
                    command: command.into(),
                    message: format!("unknown setting '{other}'"),
                    suggestions: crate::nearest_names(other, ["opt_level", "required"]),
                })
            }
        }
    }
    for r in &info.required {
        registry::get_pass(r)?;
    }
    Ok(info)
}

/// How `:pass` and `:register` say what they defined:
/// `(opt_level 2, requires mem2reg)`.
pub(super) fn settings_summary(info: &crate::PassInfo) -> String {
    format!(
        "(opt_level {}{})",
        info.opt_level,
        if info.required.is_empty() {
            String::new()
        } else {
            format!(", requires {}", info.required.join(","))
        }
    )
}
