//! [`DumpIr`]: the IR after each pass that changed it, one numbered file
//! per dump in a folder passlab makes, with an index — TVM users' "print
//! the IR after every pass into files" and LLVM 19's `-ir-dump-directory`
//! for its print instruments, kept to the passes that changed something.
//!
//! `0000-input-MODULE.ll` is the module as the first run found it; then,
//! in the order passes ended, `NNNN-PASS-UNIT.ll`: the whole module after
//! a pass that changed a function in it (UNIT the function, loop, SCC or
//! module the pass ran on), or, with functions selected, each selected
//! function that changed, alone. The back end's passes (`:asm` with the
//! instrument active) dump each function they changed (`.mir`: machine IR,
//! `.ll`: IR passes before instruction selection). `index.tsv` lists every
//! file with its pass, unit and instruction count. Names from the IR are
//! cut to safe file names (`[A-Za-z0-9._-]`, at most 60 characters); the
//! folder is claimed through [`crate::folder`], so nothing outside it is
//! written and nothing of the user's in it is touched. Writing stops,
//! saying so in the index, after [`DumpIr::MAX_BYTES`].

use super::tracker::ChangeTracker;
use super::{Instrument, PassFilter, PassRun};
use crate::folder::{Access, OwnedDir, Owner};
use crate::module::Module;
use crate::{Error, Result};
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One file the instrument wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dump {
    /// Its number: 0 for the input, then in the order passes ended.
    pub number: usize,
    pub pass: String,
    /// The IR unit's kind (`module`, `function`, `loop`, `cgscc`,
    /// `machine function`) and its name.
    pub unit: String,
    pub target: String,
    /// The file's name inside the folder.
    pub file: String,
    /// Instructions in what was written (IR files only; 0 for MIR).
    pub instructions: u64,
}

struct State {
    tracker: ChangeTracker,
    /// The module the input was dumped for (by raw pointer, as the
    /// tracker tells modules apart).
    input_done: bool,
    dumps: Vec<Dump>,
    bytes: u64,
    /// Set once [`DumpIr::MAX_BYTES`] is reached: nothing more is written.
    stopped: bool,
    /// The first error writing (a full disk): kept for the report, the
    /// pipeline goes on.
    failed: Option<String>,
}

/// Writes the IR after each selected pass that changed it into a folder.
pub struct DumpIr {
    filter: PassFilter,
    dir: OwnedDir,
    state: RefCell<State>,
}

impl DumpIr {
    /// What the files may add up to; past it the instrument stops writing.
    pub const MAX_BYTES: u64 = 1 << 30;

    /// Dumps into `dir`, claimed as a folder passlab makes (see
    /// [`OwnedDir::claim`]: a folder of the user's is refused unless
    /// `replace`, and then only files that are not there are written; an
    /// earlier dump's folder starts again, empty of its files).
    pub fn new(dir: &Path, filter: PassFilter, replace: bool) -> Result<DumpIr> {
        // Every dump is the same job: a folder an earlier dump made is
        // taken again and its files go (a notebook run twice writes the
        // same files); a folder of the user's needs `replace`.
        let owner = Owner::new(
            ":instrument dump-ir",
            "the IR after each pass that changed it",
            "dump-ir",
        );
        let dir = OwnedDir::claim(dir, &owner, Access::Exclusive, replace, "replace=yes")?;
        dir.remove_own()?;
        let mut index = dir.create("index.tsv")?;
        index
            .write_all(b"number\tpass\tunit\ttarget\tfile\tinstructions\n")
            .map_err(|e| Error::io(dir.join("index.tsv").display(), e))?;
        Ok(DumpIr {
            filter,
            dir,
            state: RefCell::new(State {
                tracker: ChangeTracker::new(false),
                input_done: false,
                dumps: Vec::new(),
                bytes: 0,
                stopped: false,
                failed: None,
            }),
        })
    }

    /// The folder written into.
    pub fn folder(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// The files written so far, in order.
    pub fn dumps(&self) -> Vec<Dump> {
        self.state.borrow().dumps.clone()
    }

    /// Why writing stopped early (the size limit, or an error), if it did.
    pub fn stopped(&self) -> Option<String> {
        let s = self.state.borrow();
        if let Some(e) = &s.failed {
            return Some(format!("writing failed: {e}"));
        }
        s.stopped.then(|| {
            format!(
                "stopped after {} MiB, the most one dump writes",
                Self::MAX_BYTES >> 20
            )
        })
    }

    /// Writes one file and its index line; past the limit, or after a
    /// failure, nothing.
    fn write(&self, s: &mut State, mut dump: Dump, text: &str, ext: &str) {
        if s.stopped || s.failed.is_some() {
            return;
        }
        if s.bytes + text.len() as u64 > Self::MAX_BYTES {
            s.stopped = true;
            let note = format!(
                "# stopped: the files reached {} MiB, the most one dump writes\n",
                Self::MAX_BYTES >> 20
            );
            if let Err(e) = self.append_index(&note) {
                s.failed = Some(e.to_string());
            }
            return;
        }
        dump.number = s.dumps.len();
        dump.file = format!(
            "{:04}-{}-{}.{ext}",
            dump.number,
            file_word(&dump.pass),
            file_word(&dump.target)
        );
        let line = format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            dump.number,
            tab_free(&dump.pass),
            dump.unit,
            tab_free(&dump.target),
            dump.file,
            dump.instructions
        );
        let written = self
            .dir
            .write(&dump.file, text)
            .and_then(|_| self.append_index(&line));
        match written {
            Ok(()) => {
                s.bytes += text.len() as u64;
                s.dumps.push(dump);
            }
            Err(e) => s.failed = Some(e.to_string()),
        }
    }

    fn append_index(&self, line: &str) -> Result<()> {
        let mut f = self.dir.append("index.tsv")?;
        f.write_all(line.as_bytes())
            .map_err(|e| Error::io(self.dir.join("index.tsv").display(), e))
    }

    /// The module as the first pass finds it.
    fn dump_input(&self, s: &mut State, module: &Module) {
        if s.input_done {
            return;
        }
        s.input_done = true;
        let name = module.name();
        let dump = Dump {
            number: 0,
            pass: "input".into(),
            unit: "module".into(),
            target: name,
            file: String::new(),
            instructions: module.instruction_count(),
        };
        self.write(s, dump, &module.print(), "ll");
    }

    /// A back-end pass's step: the function it changed, alone.
    pub fn machine_step(&self, step: &super::MachineStep) {
        let (true, Some(text)) = (step.changed, step.after) else {
            return;
        };
        if step.module_pass
            || !self.filter.pass_matches(step.pass)
            || !self.filter.function_matches(step.function)
        {
            return;
        }
        let machine = text.trim_start().starts_with("# Machine code for function");
        let dump = Dump {
            number: 0,
            pass: step.pass.to_string(),
            unit: if machine {
                "machine function".into()
            } else {
                "function".into()
            },
            target: step.function.to_string(),
            file: String::new(),
            instructions: 0,
        };
        let mut s = self.state.borrow_mut();
        self.write(&mut s, dump, text, if machine { "mir" } else { "ll" });
    }
}

/// `name` as a piece of a file name: `[A-Za-z0-9._-]` kept, anything else
/// `_`, at most 60 characters, never `.` or `..` alone.
fn file_word(name: &str) -> String {
    let mut w: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    if w.chars().all(|c| c == '.') {
        w = w.replace('.', "_");
    }
    if w.is_empty() {
        w.push('_');
    }
    w
}

/// A field of the index: tabs and newlines as spaces.
fn tab_free(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

impl Instrument for DumpIr {
    fn name(&self) -> &str {
        "dump-ir"
    }

    fn machine_needs(&self) -> Option<super::MachineNeeds> {
        Some(super::MachineNeeds::texts())
    }

    fn machine_run(&self, run: &super::MachineRun) -> Result<()> {
        run.steps.iter().for_each(|st| self.machine_step(st));
        Ok(())
    }

    fn run_before_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut s = self.state.borrow_mut();
        self.dump_input(&mut s, module);
        s.tracker.before(module, pass);
        Ok(())
    }

    fn run_after_pass(&self, module: &Module, pass: &PassRun) -> Result<()> {
        let mut s = self.state.borrow_mut();
        let change = s.tracker.after(module, pass);
        if pass.depth == 0 {
            s.tracker.finish();
        }
        if change.functions.is_empty() || !self.filter.pass_matches(pass.name()) {
            return Ok(());
        }
        let unit = pass.unit.to_string();
        if self.filter.functions.is_empty() {
            let dump = Dump {
                number: 0,
                pass: pass.name().to_string(),
                unit,
                target: pass.target.to_string(),
                file: String::new(),
                instructions: module.instruction_count(),
            };
            self.write(&mut s, dump, &module.print(), "ll");
            return Ok(());
        }
        for f in change.functions {
            if !self.filter.function_matches(&f.name) {
                continue;
            }
            // A function the pass deleted has nothing to show.
            let Ok(text) = module.print_function(&f.name) else {
                continue;
            };
            let dump = Dump {
                number: 0,
                pass: pass.name().to_string(),
                unit: "function".into(),
                target: f.name.clone(),
                file: String::new(),
                instructions: f.instructions,
            };
            self.write(&mut s, dump, &text, "ll");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_the_ir_become_safe_file_words() {
        assert_eq!(file_word("loop-unroll<O3>"), "loop-unroll_O3_");
        assert_eq!(
            file_word("/../../home/user/notes"),
            "_.._.._home_user_notes"
        );
        assert_eq!(file_word(".."), "__");
        assert_eq!(file_word(""), "_");
        assert_eq!(file_word(&"x".repeat(200)).len(), 60);
        assert_eq!(tab_free("a\tb\nc"), "a b c");
    }
}
