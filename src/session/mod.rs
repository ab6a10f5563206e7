//! [`Session`]: the one command language (`:load`, `:with opt_level=3`,
//! `:instrument timing`, `:run default<O2>` …), implemented once for every
//! front end.
//!
//! A session holds named modules, a stack of pass contexts entered with
//! `:with`, the active instruments and their results. [`Session::execute`]
//! takes a command (or a cell of commands) and returns an [`Output`]: a
//! list of items, each text a pass printed or a MIME-style [`Bundle`]
//! (`text/plain` always; `text/html` for tables; `image/svg+xml` and
//! `image/png` for charts). Front ends only read input
//! and render output; they know nothing of modules or LLVM.
//!
//! An [`Item`] is text a pass printed, diagnostics for standard error, or a
//! bundle; a front end that shows only text turns HTML off with
//! [`Session::set_html`]. The session also keeps buffers, one compiled
//! `Jit` per module (compiled again when the module's fingerprint changes),
//! the last `:bench`, `:tune` and recorded run, a progress callback
//! ([`Session::set_progress`]), the folders `:load` searches
//! ([`Session::input_path_explained`]: `:path`, the session's folder,
//! `PASSLAB_PATH`, the sample inputs), the undo stack, and the history that
//! `:export` writes as a script. [`Session::execute_each`] hands over each
//! command's output as it finishes.
//!
//! [`Session::execute_line_at`] is the panic boundary: a `Checkpoint` notes
//! what a command may change — every field of the session, each as its
//! declared policy says (`state.rs`: names in a map, entries on a stack,
//! values, contexts by their specs; a new field must name its policy) — and
//! a panic is rolled back and becomes `Error::Internal` naming the command. Module changes are
//! transactional one level down, in `apply`. This layer knows nothing of
//! terminals, rustyline, ZeroMQ, Jupyter's messages or evcxr's wire.
//!
//! One table of commands ([`COMMANDS`]) drives dispatch, `:help`,
//! completion and the guide's command reference (`docs/src/reference.md`).
//!
//! ```
//! use passlab::session::Session;
//! let mut s = Session::new();
//! s.execute(":module sq --lang c\nint sq(int x) { return x * x; }").unwrap();
//! s.execute(":run mem2reg,instcombine").unwrap();
//! let out = s.execute(":stats").unwrap();
//! assert!(out.text().contains("instructions"));
//! ```

#![forbid(unsafe_code)]

mod args;
mod commands;
pub mod kinds;
mod language;
mod state;

pub use args::Args;

/// A call's arguments as sweeps build them.
pub(crate) use commands::call_args_for;
pub use commands::{builtin_named, Builtin, Made, Spec, Takes, BUILTINS};
pub use commands::{reference_markdown, takes_body, Command, COMMANDS};
pub use language::{Completeness, Names};

use crate::context::ContextGuard;
use crate::module::{Module, Snapshot};
use crate::table::Table;
use crate::{Error, Result};
use std::collections::BTreeMap;

/// One piece of output in several formats, keyed by MIME type;
/// `text/plain` is always there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    pub data: Vec<(String, String)>,
}

impl Bundle {
    /// Plain text only.
    pub fn text(text: impl Into<String>) -> Bundle {
        Bundle {
            data: vec![("text/plain".into(), text.into())],
        }
    }

    /// A table: text and HTML from the same rows.
    pub fn table(t: &Table) -> Bundle {
        Bundle {
            data: vec![
                ("text/plain".into(), t.to_text()),
                ("text/html".into(), t.to_html()),
            ],
        }
    }

    /// Source code (LLVM IR, or a unified diff of it): the text, and when
    /// `html` and it is not too long, the text syntax-highlighted.
    pub fn code(text: String, kind: Code, html: bool) -> Bundle {
        let highlighted = if html {
            match kind {
                Code::Ir => crate::highlight::ir(&text),
                Code::Diff => crate::highlight::diff(&text),
            }
        } else {
            None
        };
        let mut data = vec![("text/plain".to_string(), text)];
        if let Some(h) = highlighted {
            data.push(("text/html".into(), h));
        }
        Bundle { data }
    }

    /// A chart: a line of text naming it, SVG, and PNG (base64, as
    /// Jupyter carries it).
    pub fn chart(c: &crate::chart::Chart) -> Result<Bundle> {
        use base64::Engine;
        Ok(Bundle {
            data: vec![
                ("text/plain".into(), format!("chart: {}", c.title)),
                ("image/svg+xml".into(), c.svg()?),
                (
                    "image/png".into(),
                    base64::engine::general_purpose::STANDARD.encode(c.png()?),
                ),
            ],
        })
    }

    /// Whether it is a chart (carries an image).
    pub fn is_chart(&self) -> bool {
        self.get("image/svg+xml").is_some() || self.get("image/png").is_some()
    }

    /// The data for one MIME type.
    pub fn get(&self, mime: &str) -> Option<&str> {
        self.data
            .iter()
            .find(|(m, _)| m == mime)
            .map(|(_, d)| d.as_str())
    }

    /// The `text/plain` form.
    pub fn plain(&self) -> &str {
        self.get("text/plain").unwrap_or("")
    }
}

/// What kind of source a [`Bundle::code`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    Ir,
    Diff,
}

/// What a command produced, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    pub items: Vec<Item>,
}

/// One output item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// Text printed while the command ran (passes such as PrintIR).
    Stream(String),
    /// Diagnostics that are not errors (compiler warnings), for standard
    /// error.
    Stderr(String),
    /// A result to display.
    Display(Bundle),
}

impl Output {
    fn push_text(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() {
            self.items.push(Item::Display(Bundle::text(text)));
        }
    }

    fn push_table(&mut self, t: &Table) {
        self.items.push(Item::Display(Bundle::table(t)));
    }

    fn extend(&mut self, other: Output) {
        self.items.extend(other.items);
    }

    /// Everything as plain text, in order, each item ending in a newline.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for item in &self.items {
            let t = match item {
                Item::Stream(s) | Item::Stderr(s) => s.as_str(),
                Item::Display(b) => b.plain(),
            };
            out.push_str(t);
            if !t.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }
}

/// An instrument the session manages, with its name as `:instrument` takes it.
struct Active {
    spec: String,
    handle: commands::Handle,
}

/// A context entered with `:with`.
struct Scope {
    spec: String,
    guard: ContextGuard,
}

impl state::HasSpec for Scope {
    fn spec(&self) -> &str {
        &self.spec
    }
}

state::transactional! {
    /// The state one front end works on (see the module documentation).
    /// Every field says what a failed command does to it
    /// ([`state::Policy`]): a field cannot be added without saying it.
    pub struct Session, checkpoint Checkpoint {
        modules: BTreeMap<String, Module> => state::Named,
        current: Option<String> => state::Value,
        scopes: Vec<Scope> => state::Specs,
        instruments: Vec<Active> => state::Stack,
        /// (module, its state before a `:run`), newest last.
        undo: Vec<(String, Snapshot)> => state::Stack,
        /// What the last `:undo` did: the module, its state before, and the
        /// entry it took from `undo` (for a roll-back of that command, by
        /// hand: it crosses fields).
        undone: Option<(String, Snapshot, Snapshot)> => state::Kept,
        /// Where the printing instruments write during a `:run` (emptied by
        /// every roll-back).
        printed: SharedText => state::Kept,
        buffers: BTreeMap<String, crate::jit::Buffer> => state::Named,
        /// A compiled copy per module, with the fingerprint it was compiled at.
        jits: BTreeMap<String, (u64, crate::jit::Jit)> => state::Named,
        /// The machine code `:asm` last showed per module, with the
        /// fingerprint, code generator settings and syntax it was made for.
        assembly: BTreeMap<String, AsmEntry> => state::Named,
        /// The C and C++ sources `:module` compiled, by the file name their
        /// debug info gives (`NAME.c`), for `:asm`'s source lines.
        sources: BTreeMap<String, String> => state::Named,
        /// The result of the last `:bench`.
        last_bench: Option<std::rc::Rc<crate::jit::Comparison>> => state::Value,
        /// The result of the last `:tune`.
        last_tune: Option<std::rc::Rc<crate::tune::Tuning>> => state::Value,
        /// The last run recorded for `:explore`.
        recording: Option<std::rc::Rc<crate::instrument::Recording>> => state::Value,
        /// Told how a long command (`:bench`) is getting on (the front
        /// end's).
        progress: Option<ProgressSink> => state::Kept,
        /// Folders `:path` added to where `:load` looks.
        extra_path: Vec<std::path::PathBuf> => state::Stack,
        /// Where the command being run was written: a name for messages
        /// (`cell`, a script's path) and the command's line number there, so
        /// that diagnostics in a body point at the user's own lines (set
        /// before each command).
        origin: (String, usize) => state::Kept,
        /// The commands that succeeded since the session began or was reset,
        /// with their bodies, for `:export`.
        history: Vec<(String, Option<String>)> => state::Stack,
        /// Whether IR and diffs carry highlighted HTML (front ends that show
        /// only text turn it off: highlighting a large module takes a while;
        /// the front end's).
        html: bool => state::Kept,
        /// Whether `:quit` was given (only a command that succeeded sets it).
        quit: bool => state::Kept,
        /// Modules and buffers the running command replaced by name, kept
        /// until it ends (for a roll-back if it panics: the command's own
        /// scratch).
        displaced: Vec<Displaced> => state::Kept,
    }
}

/// A cached `:asm` result: module fingerprint, settings, syntax, code.
type AsmEntry = (
    u64,
    crate::jit::Codegen,
    crate::jit::asm::Syntax,
    std::rc::Rc<crate::jit::asm::Assembly>,
);

/// A module or buffer a command replaced.
enum Displaced {
    Module(String, Module),
    Buffer(String, crate::jit::Buffer),
}

/// What a front end is told about a long command's progress.
type ProgressSink = Box<dyn FnMut(&crate::jit::Progress)>;

/// Text that several writers append to, in order.
#[derive(Clone, Default)]
pub(crate) struct SharedText(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl SharedText {
    /// Everything written so far (emptied by the call).
    pub(crate) fn take(&self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut *self.0.borrow_mut())).into_owned()
    }
}

impl std::io::Write for SharedText {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    pub fn new() -> Session {
        crate::interrupt::watch();
        Session {
            modules: BTreeMap::new(),
            current: None,
            scopes: Vec::new(),
            instruments: Vec::new(),
            undo: Vec::new(),
            undone: None,
            printed: SharedText::default(),
            buffers: BTreeMap::new(),
            jits: BTreeMap::new(),
            assembly: BTreeMap::new(),
            sources: BTreeMap::new(),
            last_bench: None,
            last_tune: None,
            recording: None,
            progress: None,
            origin: ("cell".into(), 1),
            extra_path: Vec::new(),
            history: Vec::new(),
            html: true,
            quit: false,
            displaced: Vec::new(),
        }
    }

    /// Runs one input: a command line, or a cell of several (a `:module`
    /// command takes the lines up to one holding only `.`, or the rest of
    /// the cell, as its source). Blank lines and
    /// lines starting with `#` are skipped. The first error stops the cell;
    /// a failed command changes nothing.
    pub fn execute(&mut self, input: &str) -> Result<Output> {
        let mut out = Output::default();
        self.execute_each(input, |o, _| out.extend(o))?;
        Ok(out)
    }

    /// [`execute`](Session::execute), handing each command's output to
    /// `each` as soon as the command finishes (a notebook shows it while
    /// the rest of the cell runs), with whether it was the input's last
    /// command. A module's source is the rest of the input, or the lines up
    /// to one holding only `.` (as in scripts), after which more commands
    /// may follow.
    pub fn execute_each(&mut self, input: &str, mut each: impl FnMut(Output, bool)) -> Result<()> {
        let mut lines = input.lines().enumerate().peekable();
        while let Some((index, line)) = lines.next() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let body = if commands::takes_body(line) {
                let mut source = Vec::new();
                for (_, l) in lines.by_ref() {
                    if l.trim() == "." {
                        break;
                    }
                    source.push(l);
                }
                while source.last().is_some_and(|l| l.trim().is_empty()) {
                    source.pop();
                }
                Some(source.join("\n"))
            } else {
                None
            };
            let out = self.execute_line_at(line, body.as_deref(), "cell", index + 1)?;
            let rest_is_blank = {
                let mut rest = lines.clone();
                rest.all(|(_, l)| l.trim().is_empty() || l.trim().starts_with('#'))
            };
            each(out, rest_is_blank);
        }
        Ok(())
    }

    /// Runs one command line, with the source that follows a command that
    /// takes one (`:module`, `:rust`).
    pub fn execute_line(&mut self, line: &str, body: Option<&str>) -> Result<Output> {
        self.execute_line_at(line, body, "input", 1)
    }

    /// [`execute_line`](Session::execute_line) for a command written on line
    /// `line_number` of `origin` (a script's path, `cell`): diagnostics in
    /// its body name the lines there.
    ///
    /// An error quotes at most a short slice of what was typed
    /// ([`Error::clipped`]): no error grows with the input.
    pub fn execute_line_at(
        &mut self,
        line: &str,
        body: Option<&str>,
        origin: &str,
        line_number: usize,
    ) -> Result<Output> {
        self.execute_line_unclipped(line, body, origin, line_number)
            .map_err(Error::clipped)
    }

    fn execute_line_unclipped(
        &mut self,
        line: &str,
        body: Option<&str>,
        origin: &str,
        line_number: usize,
    ) -> Result<Output> {
        crate::interrupt::clear();
        // A blank line or a comment (`# …`, as in scripts and cells) does
        // nothing, wherever it is typed.
        if args::strip_comment(line.trim()).is_empty() {
            return Ok(Output::default());
        }
        self.origin = (origin.to_string(), line_number);
        let args = Args::parse(line)?;
        let command = commands::find(&args.command)?;
        command.check_settings(self, &args)?;
        // The panic boundary: a bug in a command costs an error naming it,
        // and the session as it was before the command.
        let checkpoint = self.checkpoint();
        self.displaced.clear();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::console::capture(|| {
                crate::console::capture_warnings(|| {
                    let result = command.call(self, &args, body);
                    if result.is_ok() {
                        crate::error::panic_point(&format!("after::{}", command.name));
                    }
                    result
                })
            })
        }));
        let ((result, warnings), printed) = match caught {
            Ok(done) => {
                self.displaced.clear();
                done
            }
            Err(panic) => {
                self.roll_back(checkpoint);
                return Err(Error::Internal {
                    command: format!(":{}", command.name),
                    message: crate::error::panic_message(&panic),
                });
            }
        };
        let mut out = Output::default();
        if !warnings.is_empty() {
            out.items.push(Item::Stderr(warnings));
        }
        if !printed.is_empty() {
            out.items.push(Item::Stream(printed));
        }
        out.extend(result?);
        if let Some(entry) =
            commands::history_entry(command, &args, line, body, self.last_tune.as_deref())
        {
            self.history.push(entry);
        }
        Ok(out)
    }

    /// Runs `work` with the front end's progress sink (or one that hears
    /// nothing) while the session stays readable: the long commands
    /// (`:bench`, `:reduce`, `:hunt`) tell how far they are through it.
    pub(crate) fn with_progress<T>(
        &mut self,
        work: impl FnOnce(&Session, &mut dyn FnMut(&crate::jit::Progress)) -> T,
    ) -> T {
        let mut sink = self.progress.take();
        let mut quiet = |_: &crate::jit::Progress| {};
        let progress: &mut dyn FnMut(&crate::jit::Progress) = match sink.as_mut() {
            Some(p) => p.as_mut(),
            None => &mut quiet,
        };
        let result = work(self, progress);
        self.progress = sink;
        result
    }

    /// Puts the session back as it was at `c`, after a command panicked:
    /// modules a `:run` changed are restored from the snapshots it kept for
    /// `:undo` (a panic inside `Pass::apply` has restored its module
    /// already), and modules, buffers, contexts, instruments and history
    /// entries the command added are dropped. Commands change modules only
    /// through `apply` or by adding a whole module as their last step, so
    /// this is everything a command can have half-done.
    fn roll_back(&mut self, c: Checkpoint) {
        let put_back = |m: &mut Module, name: &str, snapshot: &Snapshot| {
            if let Err(e) = m.restore(snapshot) {
                crate::console::warn(&format!("cannot put {name} back: {e}"));
            }
        };
        // An `:undo` is redone.
        if self.undo.len() < c.undo {
            if let Some((name, before, entry)) = self.undone.take() {
                if let Some(m) = self.modules.get_mut(&name) {
                    put_back(m, &name, &before);
                }
                self.undo.push((name, entry));
            }
        }
        while self.undo.len() > c.undo {
            if let Some((name, snapshot)) = self.undo.pop() {
                if let Some(m) = self.modules.get_mut(&name) {
                    put_back(m, &name, &snapshot);
                }
            }
        }
        // Modules and buffers replaced by name come back, the newest
        // replacement undone last.
        while let Some(d) = self.displaced.pop() {
            match d {
                Displaced::Module(name, m) => {
                    self.jits.remove(&name);
                    self.modules.insert(name, m);
                }
                Displaced::Buffer(name, b) => {
                    self.buffers.insert(name, b);
                }
            }
        }
        // Every field as its policy says; then the contexts the command
        // left are entered again, from their specs.
        let specs = c.scopes.clone();
        self.restore_fields(c);
        for spec in &specs[self.scopes.len()..] {
            if let Err(e) = commands::enter_again(self, spec) {
                crate::console::warn(&format!("cannot enter the context '{spec}' again: {e}"));
            }
        }
        if self
            .current
            .as_ref()
            .is_some_and(|name| !self.modules.contains_key(name))
        {
            self.current = None;
        }
        self.printed.take();
    }

    /// Whether `:show` and `:diff` add syntax-highlighted HTML to their
    /// text (on unless turned off; it stays across `:reset`).
    pub fn set_html(&mut self, on: bool) {
        self.html = on;
    }

    /// Sets what is told how long commands (`:bench`) are getting on: a
    /// front end's progress display. It stays across `:reset`.
    pub fn set_progress(&mut self, progress: impl FnMut(&crate::jit::Progress) + 'static) {
        self.progress = Some(Box::new(progress));
    }

    /// Whether `:quit` was given.
    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    /// A short description of the context stack for a prompt, e.g.
    /// `O3 -licm` (empty with no `:with` scopes).
    pub fn prompt_context(&self) -> String {
        let ctx = crate::PassContext::current();
        if self.scopes.is_empty() {
            return String::new();
        }
        let mut parts = vec![format!("O{}", ctx.opt_level())];
        parts.extend(ctx.disabled().iter().map(|d| format!("-{d}")));
        parts.extend(ctx.required().iter().map(|r| format!("+{r}")));
        parts.join(" ")
    }

    /// What completion needs of this session: its modules, the current
    /// module's functions, its buffers and where relative paths are
    /// looked for.
    pub fn completions(&self) -> language::Names {
        language::Names {
            modules: self.modules.keys().cloned().collect(),
            functions: self
                .module()
                .map(|m| m.function_names())
                .unwrap_or_default(),
            buffers: self.buffers.keys().cloned().collect(),
            folders: self.input_path(),
        }
    }

    /// Where `:load` looks for a relative path, in order, with why each
    /// folder is there: the session's folder (a notebook's own), folders
    /// added with `:path`, `PASSLAB_PATH`, and passlab's sample inputs (the
    /// real C sources the set-up links under target/inputs, and examples/).
    pub fn input_path_explained(&self) -> Vec<(std::path::PathBuf, String)> {
        let mut out = Vec::new();
        if let Ok(cwd) = std::env::current_dir() {
            out.push((cwd, "where this session runs".to_string()));
        }
        for d in &self.extra_path {
            out.push((d.clone(), "added with :path".into()));
        }
        if let Some(p) = std::env::var_os("PASSLAB_PATH") {
            for d in std::env::split_paths(&p) {
                out.push((d, "PASSLAB_PATH".into()));
            }
        }
        let source = std::env::var_os("PASSLAB_SOURCE")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")));
        out.push((
            source.join("target/inputs"),
            "passlab's sample inputs: zlib, sqlite3, lua (linked by the set-up)".into(),
        ));
        out.push((source.join("examples"), "passlab's examples".into()));
        out
    }

    /// The folders of [`input_path_explained`](Session::input_path_explained).
    pub fn input_path(&self) -> Vec<std::path::PathBuf> {
        self.input_path_explained()
            .into_iter()
            .map(|(d, _)| d)
            .collect()
    }

    /// The current module.
    pub(crate) fn module(&self) -> Result<&Module> {
        let name = self.current.as_ref().ok_or_else(|| {
            Error::Invalid("no module yet: create one with :module NAME or :load PATH".into())
        })?;
        self.modules
            .get(name)
            .ok_or_else(|| Error::Invalid(format!("module '{name}' is gone")))
    }

    /// The modules, by name (for sweeps, which build programs in sessions).
    pub(crate) fn modules_by_name(&self) -> &BTreeMap<String, Module> {
        &self.modules
    }

    /// Drops every module.
    pub(crate) fn clear_modules(&mut self) {
        self.modules.clear();
    }

    /// Adds `dir` to the folders inputs are looked for in (a script's own
    /// folder).
    pub(crate) fn add_input_folder(&mut self, dir: std::path::PathBuf) {
        self.extra_path.push(dir);
    }

    /// Sets where the lines run next come from: `file`, from line `line`.
    pub(crate) fn set_origin(&mut self, file: String, line: usize) {
        self.origin = (file, line);
    }

    /// Adds module `name`, or replaces it (the one replaced is kept until
    /// the command ends, for a roll-back).
    fn put_module(&mut self, name: String, m: Module) {
        if let Some(old) = self.modules.insert(name.clone(), m) {
            self.displaced.push(Displaced::Module(name, old));
        }
    }

    /// Adds buffer `name`, or replaces it (as `put_module`).
    fn put_buffer(&mut self, name: String, b: crate::jit::Buffer) {
        if let Some(old) = self.buffers.insert(name.clone(), b) {
            self.displaced.push(Displaced::Buffer(name, old));
        }
    }

    fn module_named(&self, command: &str, name: &str) -> Result<&Module> {
        self.modules.get(name).ok_or_else(|| Error::Command {
            command: command.into(),
            message: format!("no module named '{name}'"),
            suggestions: crate::nearest_names(name, self.modules.keys().map(String::as_str)),
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Leave the contexts innermost first.
        while let Some(scope) = self.scopes.pop() {
            drop(scope.guard);
        }
    }
}
