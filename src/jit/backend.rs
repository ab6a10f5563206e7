//! The back end for the instruments: LLVM 19 runs it under the legacy pass
//! manager, which has no instrumentation callbacks, so the shim's probes
//! record what it did (`super::probes`) and [`record`] hands that to the
//! instruments after the fact: timing and counts, and, when
//! the probes kept each changed unit's text ([`super::Probe`]), print and
//! explore (MIR after instruction selection, IR before it); verify, bisect
//! and remarks too. Which probes code generation needs follows from the
//! instruments that watch it ([`probe_for`]).

use super::asm::{Assembly, Syntax};
use super::probes::{Backend, BackendPass};
use super::{Codegen, Probe};
use crate::instrument::{Instrument, MachinePass, MachineRun, MachineStep, Recording, Remark};
use crate::module::Module;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::rc::Rc;

/// The probes and code generation settings the `instruments` need
/// (the union of their [`MachineNeeds`]): `None` when none of them sees the
/// back end. Bisect's limit becomes `cg`'s gate.
pub fn probe_for(instruments: &[Rc<dyn Instrument>], cg: &Codegen) -> Option<(Probe, Codegen)> {
    let mut probe = Probe {
        changes: false,
        ..Probe::default()
    };
    let mut cg = cg.clone();
    let mut watching = false;
    for n in instruments.iter().filter_map(|i| i.machine_needs()) {
        watching = true;
        probe.changes |= n.changes;
        probe.texts |= n.texts;
        probe.verify |= n.verify;
        probe.remarks |= n.remarks;
        probe.size_info |= n.size_info;
        if n.bisect_limit.is_some() {
            cg.bisect_limit = n.bisect_limit;
        }
    }
    watching.then_some((probe, cg))
}

/// Each run's function text before and after it (`None`s without texts,
/// and for module passes). The probes send a function's text when they
/// first look at it (a text on a run that changed nothing) and after each
/// change; in between, a function is as the last change left it.
type Texts = Vec<(Option<Rc<str>>, Option<Rc<str>>)>;

fn texts(backend: &Backend, with_texts: bool) -> Texts {
    let mut current: BTreeMap<String, Rc<str>> = BTreeMap::new();
    let mut texts: Texts = Vec::with_capacity(backend.runs.len());
    for r in &backend.runs {
        if !with_texts || r.function.is_empty() {
            texts.push((None, None));
            continue;
        }
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
    texts
}

/// The back end's remarks, each with the execution (an index into
/// `backend.runs`) that made it; one made after the last belongs to it.
fn remarks(backend: &Backend) -> Vec<Remark> {
    backend
        .remarks
        .iter()
        .filter_map(|(k, text)| {
            let mut r = Remark::from_flat(text)?;
            let k = (*k).min(backend.runs.len().saturating_sub(1));
            if let Some(run) = backend.runs.get(k) {
                r.execution = k;
                r.execution_pass = backend.label(run.pass).to_string();
                r.unit = run.function.clone();
            }
            Some(r)
        })
        .collect()
}

/// What [`record`] made and told: the code, the settings it was made with
/// (the bisect gate's limit included), a note of what was recorded,
/// print-changed's output, and, with the explorer watching, the recording
/// with code generation appended.
pub struct Recorded {
    pub code: Assembly,
    pub codegen: Codegen,
    pub note: String,
    /// What print-changed printed (its diffs, its closing count).
    pub printed: String,
    pub recording: Option<Recording>,
}

/// When one of `watchers` sees the back end (timing, counts,
/// print-before/after/changed, verify, bisect, explore, remarks):
/// generates the code of `module` (named `name`) under `cg` with the back
/// end probed as they need ([`probe_for`]) and hands each what it sees;
/// `None` when none sees it. The explorer's recording is `previous` when
/// it ended where this code starts (the run that made it), else one of
/// code generation alone. A machine verifier failure is the verify
/// instrument's error, naming the pass and the function.
pub fn record(
    module: &Module,
    name: &str,
    cg: &Codegen,
    syntax: Syntax,
    instruments: &[Rc<dyn Instrument>],
    previous: Option<&Recording>,
) -> Result<Option<Recorded>> {
    let Some((probe, cg)) = probe_for(instruments, cg) else {
        return Ok(None);
    };
    let fp = module.fingerprint();
    let (code, backend) = super::asm::assembly_probed(module, &cg, syntax, probe)
        .map_err(|e| machine_verifier_error(e, name))?;
    let texts = texts(&backend, probe.texts);
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
    let remarks = remarks(&backend);
    let label = format!("codegen ({})", cg.label());
    let machine_passes = machine_passes(&passes);
    let decisions: Vec<(&str, &str, bool)> = backend
        .decisions
        .iter()
        .map(|d| (d.pass.as_str(), d.function.as_str(), d.ran))
        .collect();
    let run = MachineRun {
        label: &label,
        module: name,
        total: backend.total,
        passes: &machine_passes,
        steps: &steps,
        decisions: &decisions,
        remarks: &remarks,
    };
    let mut recorded = Vec::new();
    let mut recording = false;
    for i in instruments {
        if let Some(needs) = i.machine_needs() {
            i.machine_run(&run)?;
            recorded.push(i.name().to_string());
            recording |= needs.recording;
        }
    }
    let recording = (probe.texts && recording)
        .then(|| explored(module, name, &cg, fp, &steps, &remarks, previous));
    // What the instruments print at the end (print-changed's diffs, which
    // go to the shared buffer as they are ready, and its closing count).
    let printed: String = instruments.iter().map(|i| i.closing()).collect();
    let note = note(&recorded, &passes, &backend, probe.verify);
    Ok(Some(Recorded {
        code,
        codegen: cg,
        note,
        printed,
        recording,
    }))
}

/// The back end's passes as the instruments see them.
fn machine_passes(passes: &[BackendPass]) -> Vec<MachinePass> {
    passes
        .iter()
        .map(|p| MachinePass {
            label: p.label().to_string(),
            unit: if p.module {
                crate::llvm::IrUnit::Module
            } else {
                crate::llvm::IrUnit::Function
            },
            runs: p.runs,
            changed: p.changed,
            time: p.time,
        })
        .collect()
}

/// The explorer's recording with code generation appended: after the run
/// that made this code (`previous`, when it ended at `fp` on `name`), or
/// on its own; the back end's remarks beside its passes' diffs.
fn explored(
    module: &Module,
    name: &str,
    cg: &Codegen,
    fp: u64,
    steps: &[MachineStep],
    remarks: &[Remark],
    previous: Option<&Recording>,
) -> Recording {
    let mut rec = match previous {
        Some(r) if r.module == name && r.end == Some(fp) => r.clone(),
        _ => Recording {
            pipeline: cg.label(),
            module: name.to_string(),
            end: Some(fp),
            ..Default::default()
        },
    };
    rec.append_back_end(&format!("codegen ({})", cg.label()), steps, &|f| {
        module.print_function(f).ok()
    });
    // Step k is the node after the code generation's own.
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
    rec
}

/// `the back end recorded for timing, counts: 57 passes, 412 executions,
/// 3.1 ms`, with the verifier's and the bisect gate's findings.
fn note(recorded: &[String], passes: &[BackendPass], backend: &Backend, verify: bool) -> String {
    let runs: u64 = passes.iter().map(|p| p.runs).sum();
    let mut note = format!(
        "the back end recorded for {}: {} passes, {runs} executions, {:.1} ms",
        recorded.join(", "),
        passes.len(),
        backend.total.as_secs_f64() * 1e3
    );
    if verify {
        note.push_str("; the machine verifier found no errors");
    }
    if !backend.decisions.is_empty() {
        let ran = backend.decisions.iter().filter(|d| d.ran).count();
        note.push_str(&format!(
            "; bisect: {ran} of the back end's {} optional passes ran",
            backend.decisions.len()
        ));
    }
    note
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
    use crate::jit::probes::BackendRun;
    use std::time::Duration;

    #[test]
    fn the_instruments_watching_decide_the_probes() {
        use crate::instrument::{Bisect, Remarks, Timing, Trace, VerifyEach};
        let cg = Codegen::default();
        let rc = |i: Rc<dyn Instrument>| i;
        assert!(probe_for(&[], &cg).is_none());
        let blind = rc(Rc::new(Trace::emitting()));
        assert!(probe_for(&[blind.clone(), blind.clone()], &cg).is_none());
        let timing = rc(Rc::new(Timing::new()));
        let (p, c) = probe_for(&[timing, blind], &cg).unwrap();
        assert_eq!(
            p,
            Probe {
                changes: true,
                ..Probe::default()
            }
        );
        assert_eq!(c, cg);
        // The remarks alone need no changes; explore needs texts.
        let remarks = rc(Rc::new(Remarks::new()));
        let (p, _) = probe_for(std::slice::from_ref(&remarks), &cg).unwrap();
        assert!(
            p.remarks && !p.changes && !p.texts && !p.size_info && !p.verify,
            "{p:?}"
        );
        let explore = rc(Rc::new(crate::instrument::Explore::new()));
        let (p, _) = probe_for(&[remarks, explore], &cg).unwrap();
        assert!(p.remarks && p.changes && p.texts);
        let verify = rc(Rc::new(VerifyEach::new()));
        assert!(probe_for(&[verify], &cg).unwrap().0.verify);
        // Bisect's remaining count gates the back end's optional passes.
        let (_, c) = probe_for(&[rc(Rc::new(Bisect::new(Some(7))))], &cg).unwrap();
        assert_eq!(c.bisect_limit, Some(7));
        let (_, c) = probe_for(&[rc(Rc::new(Bisect::new(None)))], &cg).unwrap();
        assert_eq!(c.bisect_limit, Some(u64::MAX));
    }

    #[test]
    fn each_run_sees_the_function_as_the_last_change_left_it() {
        let run = |function: &str, changed: bool, text: Option<&str>| BackendRun {
            pass: 0,
            function: function.into(),
            time: Duration::ZERO,
            changed,
            text: text.map(str::to_string),
        };
        let b = Backend {
            passes: vec![("isel".into(), "x86-isel".into(), false)],
            runs: vec![
                // First looked at: its text, unchanged.
                run("f", false, Some("ir")),
                run("f", true, Some("mir 1")),
                run("", true, None),
                run("f", false, None),
                run("g", false, None),
                run("f", true, Some("mir 2")),
            ],
            ..Backend::default()
        };
        let got: Vec<(Option<String>, Option<String>)> = texts(&b, true)
            .into_iter()
            .map(|(a, z)| (a.map(|t| t.to_string()), z.map(|t| t.to_string())))
            .collect();
        let s = |t: &str| Some(t.to_string());
        assert_eq!(
            got,
            [
                (s("ir"), s("ir")),
                (s("ir"), s("mir 1")),
                (None, None),
                (s("mir 1"), s("mir 1")),
                (None, None),
                (s("mir 1"), s("mir 2")),
            ]
        );
        // Without texts, nothing.
        assert!(texts(&b, false)
            .iter()
            .all(|(a, z)| a.is_none() && z.is_none()));
    }

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
