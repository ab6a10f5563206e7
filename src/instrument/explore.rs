//! [`Explore`]: records a run for the pipeline explorer — every pass in the
//! order it ran, nested under the pass that ran it, the functions in its
//! scope, and for each function every version a pass made, as edit scripts
//! from the version before. What changed is kept, nothing else: a function
//! a pass did not change costs nothing past a fingerprint.

use super::tracker::{function_name, function_size, module_functions, ChangeTracker};
use super::{Instrument, PassRun};
use crate::diff::Edit;
use crate::llvm::IrUnit;
use crate::module::Module;
use crate::Result;
use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::rc::Rc;

/// The functions a pass ran on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Every function (a module pass).
    Module,
    /// These functions (indices into [`Recording::functions`]).
    Functions(Vec<u32>),
}

impl Reach {
    /// Whether the pass ran on function `f`.
    pub fn includes(&self, f: u32) -> bool {
        match self {
            Reach::Module => true,
            Reach::Functions(v) => v.contains(&f),
        }
    }
}

/// One pass execution.
#[derive(Clone, Debug)]
pub struct PassNode {
    pub name: Rc<str>,
    pub unit: IrUnit,
    /// Its IR unit's name (a function, an SCC as LLVM prints it, a loop).
    pub target: String,
    pub depth: u32,
    /// The pass that ran it (an index into [`Recording::passes`]).
    pub parent: Option<u32>,
    pub reach: Reach,
    /// It changed the IR, itself or through passes nested in it.
    pub changed: bool,
}

/// One version of a function: what a pass made of it.
#[derive(Clone, Debug)]
pub struct Version {
    /// The pass (an index into [`Recording::passes`]).
    pub pass: u32,
    /// Instructions after the pass (0: the pass deleted the function).
    pub instructions: u64,
    /// From the previous version's text, renumbered by `renumber`
    /// ([`crate::diff::renumbered_edits`]), to this one's.
    pub edits: Vec<Edit>,
    /// How the previous version's unnamed values are renumbered before
    /// `edits` apply (empty: they are not).
    pub renumber: crate::diff::Renumbering,
    /// The pass deleted the function.
    pub deleted: bool,
}

/// A function's history over the run.
#[derive(Clone, Debug, Default)]
pub struct FunctionLog {
    pub name: String,
    /// Its text before the first pass that changed it (empty if a pass
    /// created it, or no pass changed it).
    pub initial: String,
    /// Instructions when the run began (0: created during the run).
    pub instructions_before: u64,
    /// Instructions when the run ended (0: deleted).
    pub instructions_after: u64,
    pub versions: Vec<Version>,
}

impl FunctionLog {
    /// The text after `n` versions (0: the initial text).
    pub fn text_at(&self, n: usize) -> String {
        let mut text = self.initial.clone();
        for v in &self.versions[..n.min(self.versions.len())] {
            text = crate::diff::apply(&crate::diff::renumber(&text, &v.renumber), &v.edits);
        }
        text
    }

    /// Its text before code generation's first change to it: its last
    /// version's, else the pass's `before` or `ir(name)`, which becomes
    /// its initial text.
    fn text_before_back_end<'t>(
        &mut self,
        before: Option<&str>,
        ir: &dyn Fn(&str) -> Option<String>,
    ) -> std::borrow::Cow<'t, str> {
        if !self.versions.is_empty() {
            return self.text_at(self.versions.len()).into();
        }
        let t = before
            .map(str::to_string)
            .or_else(|| ir(&self.name))
            .unwrap_or_default();
        if self.instructions_before == 0 {
            self.instructions_before = machine_instructions(&t);
        }
        self.initial = t.clone();
        t.into()
    }
}

/// Everything the explorer shows about one run.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// The pipeline that ran, as the user wrote it.
    pub pipeline: String,
    pub module: String,
    pub passes: Vec<PassNode>,
    pub functions: Vec<FunctionLog>,
    /// The module's fingerprint when the run ended (set by whoever keeps
    /// the recording), so that code generation is appended only to the
    /// run that made the code it starts from.
    pub end: Option<u64>,
    /// The optimization remarks of the run, when a remarks instrument
    /// recorded it too (each names its pass execution by the index into
    /// [`Recording::passes`]).
    pub remarks: Vec<super::Remark>,
}

impl Recording {
    /// The index of the function named `name`.
    pub fn function(&self, name: &str) -> Option<usize> {
        self.functions.iter().position(|f| f.name == name)
    }

    /// The passes that ran on function `f`, in order, with the passes
    /// they ran inside (module passes, pass managers) that lead to them.
    pub fn passes_on(&self, f: usize) -> Vec<usize> {
        let f = f as u32;
        let mut keep = vec![false; self.passes.len()];
        for (i, p) in self.passes.iter().enumerate() {
            if !keep[i] && p.reach.includes(f) {
                keep[i] = true;
                let mut up = p.parent;
                while let Some(u) = up {
                    if keep[u as usize] {
                        break;
                    }
                    keep[u as usize] = true;
                    up = self.passes[u as usize].parent;
                }
            }
        }
        (0..self.passes.len()).filter(|&i| keep[i]).collect()
    }

    /// (passes that ran on `f`, of which changed it).
    pub fn counts(&self, f: usize) -> (usize, usize) {
        let ran = self
            .passes
            .iter()
            .filter(|p| p.reach.includes(f as u32))
            .count();
        (ran, self.functions[f].versions.len())
    }

    /// Appends a code generation, replacing one appended before: a node
    /// `label` at depth 0 (beside the run's outermost pass) and under it
    /// each back-end pass execution; each function a pass changed gets a
    /// version (MIR from instruction selection on). A function's text
    /// before code generation is its last version's, or `ir(name)` when
    /// the run did not change it.
    pub fn append_back_end<'t>(
        &mut self,
        label: &str,
        steps: &[super::MachineStep<'t>],
        ir: &dyn Fn(&str) -> Option<String>,
    ) {
        self.drop_back_end();
        let root = self.passes.len() as u32;
        self.passes.push(PassNode {
            name: Rc::from(label),
            unit: IrUnit::Module,
            target: self.module.clone(),
            depth: 0,
            parent: None,
            reach: Reach::Module,
            changed: steps.iter().any(|s| s.changed),
        });
        // Pass names repeat: one string per name.
        let mut names: std::collections::HashSet<Rc<str>> = Default::default();
        // Each function's text as the passes left it, and the versions
        // whose edit scripts are still to be computed.
        let mut current: HashMap<usize, &str> = HashMap::default();
        let mut jobs: Vec<EditJob> = Vec::new();
        for step in steps {
            let name = match names.get(step.pass) {
                Some(k) => k.clone(),
                None => {
                    let k: Rc<str> = Rc::from(step.pass);
                    names.insert(k.clone());
                    k
                }
            };
            let index = self.passes.len() as u32;
            let f = (!step.module_pass).then(|| self.function_or_new(step.function));
            self.push_back_end_pass(name, root, step, f);
            let (Some(f), Some(after), true) = (f, step.after, step.changed) else {
                continue;
            };
            let log = &mut self.functions[f];
            let before = match current.remove(&f) {
                Some(t) => t.into(),
                None => log.text_before_back_end(step.before, ir),
            };
            let instructions = machine_instructions(after);
            log.versions.push(Version {
                pass: index,
                instructions,
                edits: Vec::new(),
                renumber: Vec::new(),
                deleted: false,
            });
            log.instructions_after = instructions;
            jobs.push((f, log.versions.len() - 1, before, after));
            current.insert(f, after);
        }
        let scripts = machine_scripts(&jobs);
        for ((f, v, _, _), edits) in jobs.iter().zip(scripts) {
            self.functions[*f].versions[*v].edits = edits;
        }
    }

    /// Removes a code generation appended before, with the versions its
    /// passes made.
    fn drop_back_end(&mut self) {
        if let Some(old) = self
            .passes
            .iter()
            .position(|p| p.depth == 0 && p.name.starts_with("codegen ("))
        {
            self.passes.truncate(old);
            for f in &mut self.functions {
                f.versions.retain(|v| (v.pass as usize) < old);
            }
        }
    }

    /// The index of the function `name`, logging it first if it is new.
    fn function_or_new(&mut self, name: &str) -> usize {
        match self.function(name) {
            Some(i) => i,
            None => {
                self.functions.push(FunctionLog {
                    name: name.to_string(),
                    ..FunctionLog::default()
                });
                self.functions.len() - 1
            }
        }
    }

    /// Appends one back-end pass execution under the node `root`, on the
    /// function `f` or (`None`) the module.
    fn push_back_end_pass(
        &mut self,
        name: Rc<str>,
        root: u32,
        step: &super::MachineStep,
        f: Option<usize>,
    ) {
        self.passes.push(PassNode {
            name,
            unit: if f.is_some() {
                IrUnit::Function
            } else {
                IrUnit::Module
            },
            target: if f.is_some() {
                step.function.to_string()
            } else {
                self.module.clone()
            },
            depth: 1,
            parent: Some(root),
            reach: match f {
                Some(i) => Reach::Functions(vec![i as u32]),
                None => Reach::Module,
            },
            changed: step.changed,
        });
    }

    /// The total number of pass executions and of function versions.
    pub fn totals(&self) -> (usize, usize) {
        (
            self.passes.len(),
            self.functions.iter().map(|f| f.versions.len()).sum(),
        )
    }
}

/// A version whose edit script is still to be computed: the function,
/// the version, and the texts before and after.
type EditJob<'t> = (usize, usize, std::borrow::Cow<'t, str>, &'t str);

/// The edit scripts of `jobs`, in order, on every processor (the texts
/// are all known).
fn machine_scripts(jobs: &[EditJob]) -> Vec<Vec<crate::diff::Edit>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let chunk = jobs.len().div_ceil(threads).max(1);
    let scripts: Vec<Vec<Vec<crate::diff::Edit>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(_, _, before, after)| machine_edits(before, after))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .zip(jobs.chunks(chunk))
            // A script lost with its thread: those versions keep no edits.
            .map(|(h, part)| h.join().unwrap_or_else(|_| vec![Vec::new(); part.len()]))
            .collect()
    });
    scripts.into_iter().flatten().collect()
}

/// The edit script from one text to the next. Instruction selection
/// replaces the IR with machine code: one step, not a line diff of two
/// languages.
fn machine_edits(before: &str, after: &str) -> Vec<crate::diff::Edit> {
    const MIR: &str = "# Machine code for function";
    if after.starts_with(MIR) && !before.starts_with(MIR) {
        vec![crate::diff::Edit {
            keep: 0,
            delete: before.split_inclusive('\n').count() as u32,
            insert: after.to_string(),
        }]
    } else {
        crate::diff::edits(before, after)
    }
}

/// The instructions of a function's text: its indented lines, less MIR's
/// block annotations (`successors:`, `liveins:`), debug values and
/// comments. Once the
/// register allocator's analyses run, MIR lines start with a slot index
/// (`16B\t`), which is skipped.
fn machine_instructions(text: &str) -> u64 {
    text.lines()
        .map(|l| {
            let digits = l.bytes().take_while(u8::is_ascii_digit).count();
            match l[digits..].strip_prefix('B') {
                Some(rest) if digits > 0 && rest.starts_with('\t') => &rest[1..],
                _ => l,
            }
        })
        .filter(|l| l.starts_with([' ', '\t']))
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with(';')
                && !l.starts_with('#')
                && !l.starts_with("successors:")
                && !l.starts_with("liveins:")
                && !l.starts_with("predecessors:")
                && !l.starts_with("DBG_")
        })
        .count() as u64
}

struct State {
    tracker: ChangeTracker,
    recording: Recording,
    names: HashMap<String, u32>,
    open: Vec<u32>,
    /// The last instruction count of each function.
    sizes: Vec<u64>,
    /// The outermost pass has ended.
    done: bool,
    /// Edit scripts being computed on another thread, and the (function,
    /// version) each belongs to, in order.
    edits: crate::diff::Background<(crate::diff::Renumbering, Vec<crate::diff::Edit>)>,
    waiting: std::collections::VecDeque<(usize, usize)>,
}

/// Records runs for the explorer; the last outermost run is kept until the
/// next one starts.
pub struct Explore {
    state: RefCell<State>,
}

impl Default for Explore {
    fn default() -> Self {
        Explore::new()
    }
}

impl Explore {
    pub fn new() -> Explore {
        Explore {
            state: RefCell::new(State {
                tracker: ChangeTracker::new(true).with_source_lines(),
                recording: Recording::default(),
                names: HashMap::default(),
                open: Vec::new(),
                sizes: Vec::new(),
                done: false,
                edits: Default::default(),
                waiting: Default::default(),
            }),
        }
    }

    /// The last run recorded (the one in progress, if any).
    pub fn recording(&self) -> Recording {
        let mut s = self.state.borrow_mut();
        s.flush(true);
        s.recording.clone()
    }

    /// Takes the last run recorded, leaving an empty one.
    pub fn take(&self) -> Recording {
        let mut s = self.state.borrow_mut();
        s.flush(true);
        std::mem::take(&mut s.recording)
    }

    /// Forgets what was recorded.
    pub fn clear(&self) {
        let mut s = self.state.borrow_mut();
        s.flush(true);
        s.recording = Recording::default();
        s.names.clear();
        s.sizes.clear();
    }
}

impl State {
    /// Puts the edit scripts that are ready in their versions; with
    /// `wait`, all of them.
    fn flush(&mut self, wait: bool) {
        let mut lost = 0;
        for (renumber, edits) in self.edits.ready(wait, &mut lost) {
            if let Some((f, v)) = self.waiting.pop_front() {
                if let Some(version) = self
                    .recording
                    .functions
                    .get_mut(f)
                    .and_then(|l| l.versions.get_mut(v))
                {
                    version.edits = edits;
                    version.renumber = renumber;
                }
            }
        }
        // A script lost with its thread: the version keeps no edits.
        for _ in 0..lost {
            self.waiting.pop_front();
        }
    }

    fn index(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.names.get(name) {
            return i;
        }
        let i = self.recording.functions.len() as u32;
        self.recording.functions.push(FunctionLog {
            name: name.to_string(),
            ..FunctionLog::default()
        });
        self.sizes.push(0);
        self.names.insert(name.to_string(), i);
        i
    }

    fn start(&mut self, module: &Module, run: &PassRun) {
        self.flush(true);
        self.waiting.clear();
        self.recording = Recording {
            pipeline: run.name().to_string(),
            ..Recording::default()
        };
        self.names.clear();
        self.sizes.clear();
        self.open.clear();
        self.done = false;
        for f in module_functions(module.raw()) {
            let i = self.index(&function_name(f)) as usize;
            let n = function_size(f).1;
            self.recording.functions[i].instructions_before = n;
            self.sizes[i] = n;
        }
    }
}

impl Instrument for Explore {
    fn machine_needs(&self) -> Option<super::MachineNeeds> {
        Some(super::MachineNeeds {
            texts: true,
            recording: true,
            ..super::MachineNeeds::changes()
        })
    }

    fn name(&self) -> &str {
        "explore"
    }

    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut s = self.state.borrow_mut();
        if pass.depth == 0 {
            s.start(module, pass);
        }
        s.tracker.before(module, pass);
        let reach = if pass.scope.is_module() {
            Reach::Module
        } else {
            let fs = pass.scope.functions(false);
            Reach::Functions(fs.into_iter().map(|f| s.index(&function_name(f))).collect())
        };
        let parent = s.open.last().copied();
        let index = s.recording.passes.len() as u32;
        // Pass names repeat: share one string per name.
        let name: Rc<str> = match s
            .recording
            .passes
            .iter()
            .rev()
            .take(64)
            .find(|p| &*p.name == pass.name())
        {
            Some(p) => p.name.clone(),
            None => Rc::from(pass.name()),
        };
        s.recording.passes.push(PassNode {
            name,
            unit: pass.unit,
            target: pass.target.to_string(),
            depth: pass.depth as u32,
            parent,
            reach,
            changed: false,
        });
        s.open.push(index);
        Ok(())
    }

    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut s = self.state.borrow_mut();
        let Some(index) = s.open.pop() else {
            return Ok(());
        };
        let change = s.tracker.after(module, pass);
        s.recording.passes[index as usize].changed = change.changed;
        for c in change.functions {
            let f = s.index(&c.name) as usize;
            let before = c.before.unwrap_or_default();
            let after = c.after.unwrap_or_default();
            let log = &mut s.recording.functions[f];
            if log.versions.is_empty() {
                log.initial = before.clone();
            }
            let deleted = c.instructions == 0 && after.is_empty();
            log.versions.push(Version {
                pass: index,
                instructions: c.instructions,
                // Filled in when its thread has computed them.
                edits: Vec::new(),
                renumber: Vec::new(),
                deleted,
            });
            let v = log.versions.len() - 1;
            s.waiting.push_back((f, v));
            s.edits
                .submit(move || crate::diff::renumbered_edits(&before, &after));
            s.sizes[f] = c.instructions;
        }
        s.flush(pass.depth == 0);
        if pass.depth == 0 {
            s.tracker.finish();
            let State {
                recording, sizes, ..
            } = &mut *s;
            for (log, &n) in recording.functions.iter_mut().zip(sizes.iter()) {
                log.instructions_after = n;
            }
            s.done = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn machine_instructions_skip_labels_annotations_and_slot_indexes() {
        let mir = "# Machine code for function f\nbb.0.entry:\n  successors: %bb.1\n  liveins: $edi\n  %0:gr32 = COPY $edi\n  DBG_VALUE $edi, $noreg\n  RET 0\n";
        assert_eq!(super::machine_instructions(mir), 2);
        let indexed =
            "0B\tbb.0.entry:\n\t  liveins: $edi\n16B\t  %0:gr32 = COPY $edi\n32B\t  RET 0\n";
        assert_eq!(super::machine_instructions(indexed), 2);
        let ir = "define i32 @f(i32 %x) {\nentry:\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n";
        assert_eq!(super::machine_instructions(ir), 2);
    }

    #[test]
    fn code_generation_is_appended_and_replaced() {
        use crate::instrument::MachineStep;
        let ir = "define i32 @f(i32 %x) {\nentry:\n  ret i32 %x\n}\n";
        let isel = "# Machine code for function f: IsSSA\nbb.0.entry:\n  %0:gr32 = COPY $edi\n  $eax = COPY %0\n  RET 0, $eax\n";
        let coalesced = "# Machine code for function f: IsSSA\nbb.0.entry:\n  $eax = COPY $edi\n  RET 0, $eax\n";
        let step = |pass, before, after, changed| MachineStep {
            pass,
            module_pass: false,
            function: "f",
            changed,
            before: Some(before),
            after: Some(after),
        };
        let steps = [
            step("x86-isel", ir, isel, true),
            step("machine-cse", isel, isel, false),
            step("register-coalescer", isel, coalesced, true),
        ];
        let mut rec = super::Recording {
            module: "m".into(),
            ..Default::default()
        };
        rec.append_back_end("codegen (codegen O2)", &steps, &|_| None);
        assert_eq!(rec.passes.len(), 4);
        assert_eq!(rec.passes[0].depth, 0);
        assert_eq!(&*rec.passes[3].name, "register-coalescer");
        let f = &rec.functions[rec.function("f").unwrap()];
        assert_eq!(f.versions.len(), 2);
        // Instruction selection is one step: all of the IR out, the MIR in.
        assert_eq!(f.versions[0].edits.len(), 1);
        assert_eq!(f.text_at(0), ir);
        assert_eq!(f.text_at(1), isel);
        assert_eq!(f.text_at(2), coalesced);
        assert_eq!((f.instructions_before, f.instructions_after), (1, 2));
        // A second code generation replaces the first.
        rec.append_back_end("codegen (codegen O0)", &steps[..1], &|_| None);
        assert_eq!(rec.passes.len(), 2);
        assert_eq!(rec.functions[0].versions.len(), 1);
    }
}
