//! Passes users write in Rust, compiled at run time by evcxr, and run like
//! any other pass.
//!
//! A session's Rust cells (`:rust`) are compiled by `passlab-evcxr`, a host
//! process embedding evcxr, with passlab as a dependency; the code runs in
//! evcxr's child process. [`register`] names a function of the cells as a
//! function or module pass: it goes into the one registry as a
//! [`UserPass`], gated, instrumented and transactional like every pass.
//! Running it sends the module (bitcode) to the [`Service`] in evcxr's
//! child, which runs the function there and sends the module back if it
//! changed. A crash, a hang or an interrupt ends evcxr's child, never the
//! session: the child is started again and the passes are registered again.
//! The worker starts on the first `:rust`: a session that never writes Rust
//! starts none.
//!
//! The functions have the signatures of the built-in passes' bodies (see
//! [`crate::prelude`]):
//!
//! ```text
//! fn my_function_pass(f: FunctionValue<'_>, ctx: &PassContext) -> Result<()>
//! fn my_module_pass(m: &mut Module, ctx: &PassContext) -> Result<()>
//! ```

mod service;
mod wire;
mod worker;

pub use service::Service;
pub use worker::{render_diagnostics, Diagnostic};

use crate::config::ConfigOption;
use crate::context::PassContext;
use crate::module::{Module, Snapshot};
use crate::pass::{Pass, PassInfo};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use worker::{Conn, PassStop, Step, Worker};

pub(crate) use worker::{CellOutput, EvalError};

/// Config key: how long a user pass may run before it is stopped.
pub const TIMEOUT_MS: &str = "rust.timeout_ms";

inventory::submit!(crate::config::Declarations(config_options));

/// The config options user passes read.
fn config_options() -> Vec<ConfigOption> {
    vec![ConfigOption::new(
        TIMEOUT_MS,
        60_000i64,
        "how long a pass written in Rust may run (ms) before it is stopped and the Rust worker restarted",
    )
    .with_range(1.0, 86_400_000.0)]
}

/// What a user function is, as a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserKind {
    /// `fn(FunctionValue<'_>, &PassContext) -> Result<()>`, on every function.
    Function,
    /// `fn(&mut Module, &PassContext) -> Result<()>`.
    Module,
}

impl UserKind {
    /// The word `:register` takes, as TVM's decorators are named.
    pub fn word(self) -> &'static str {
        match self {
            UserKind::Function => "function_pass",
            UserKind::Module => "module_pass",
        }
    }

    fn method(self) -> &'static str {
        match self {
            UserKind::Function => "register_function",
            UserKind::Module => "register_module",
        }
    }

    fn signature(self) -> &'static str {
        match self {
            UserKind::Function => "fn NAME(f: FunctionValue<'_>, ctx: &PassContext) -> Result<()>",
            UserKind::Module => "fn NAME(m: &mut Module, ctx: &PassContext) -> Result<()>",
        }
    }
}

/// A registered user pass: its info, kind and the function it runs.
#[derive(Clone, Debug)]
pub struct Registration {
    pub info: PassInfo,
    pub kind: UserKind,
    /// The Rust function (or expression) the pass runs.
    pub function: String,
}

impl Registration {
    fn code(&self) -> String {
        format!(
            "passlab::user::Service::get().{}({:?}, {});",
            self.kind.method(),
            self.info.name,
            self.function
        )
    }
}

struct State {
    worker: Option<Worker>,
    /// What the session did in Rust, in order, to bring a new worker to the
    /// same state.
    steps: Vec<Step>,
    passes: BTreeMap<String, Registration>,
}

static STATE: Mutex<State> = Mutex::new(State {
    worker: None,
    steps: Vec::new(),
    passes: BTreeMap::new(),
});

fn state() -> MutexGuard<'static, State> {
    // A poisoned lock only means a panic elsewhere; the state is still whole.
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Stops the Rust worker, if one runs, and waits for it to end, so that its
/// build folder is free for the next session when this returns. For a
/// front end that ends (`passlab run`, the REPL, a kernel shut down): left
/// alone, a worker ends when it sees its session gone, holding its folder
/// a moment longer. What the session did in Rust is kept: a later `:rust`
/// starts a worker again and replays it.
pub fn stop_worker() {
    let worker = state().worker.take();
    drop(worker);
}

impl State {
    fn registration_code(&self) -> String {
        self.passes
            .values()
            .map(Registration::code)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The running worker, starting one (and replaying what the session did
    /// in Rust) when there is none or the last one ended.
    fn worker(&mut self) -> Result<&mut Worker> {
        if self.worker.as_mut().is_some_and(|w| !w.alive()) {
            self.worker = None;
        }
        if self.worker.is_none() {
            let mut w = Worker::start()?;
            let mut replay: Vec<String> = self
                .steps
                .iter()
                .map(|s| match s {
                    Step::Dep(d) => format!(":dep {d}"),
                    Step::Cell(c) => c.clone(),
                })
                .collect();
            replay.push(self.registration_code());
            for code in replay.iter().filter(|c| !c.trim().is_empty()) {
                if let Err(e) = w.eval(code) {
                    return Err(Error::worker(format!(
                        "the Rust worker was started again but could not replay your definitions: {}",
                        eval_error_text(&e, code)
                    )));
                }
            }
            self.worker = Some(w);
        }
        Ok(self.worker.as_mut().expect("set above"))
    }
}

fn eval_error_text(e: &EvalError, code: &str) -> String {
    match e {
        EvalError::Compile(d) => render_diagnostics(d, code, "cell", 1),
        EvalError::Other(m) => m.clone(),
    }
}

/// Whether a Rust worker is running (the session started one).
pub fn started() -> bool {
    state().worker.is_some()
}

/// Compiles and runs a cell of Rust (items, statements, evcxr's `:dep`
/// lines) in the session's worker, starting it on first use. Passes
/// registered earlier are registered again, so that they run the newest
/// definitions.
pub(crate) fn eval(code: &str) -> std::result::Result<CellOutput, EvalError> {
    let mut st = state();
    let registrations = st.registration_code();
    let w = st.worker().map_err(|e| EvalError::Other(e.to_string()))?;
    let is_dep = code.trim_start().starts_with(":dep") && !code.trim().contains('\n');
    let out = if registrations.is_empty() || is_dep {
        w.eval(code)?
    } else {
        // One compile for the registrations and the cell (the common case;
        // registrations first, so that what the cell ends with is still
        // shown); if that fails, the cell alone says whether the error is
        // the user's, with the cell's own line numbers.
        match w.eval(&format!("{registrations}\n{code}")) {
            Ok(out) => out,
            Err(EvalError::Compile(_)) => {
                let out = w.eval(code)?;
                let stale = reregister(&mut st);
                let mut out = out;
                if !stale.is_empty() {
                    out.stderr.push_str(&format!(
                        "these passes were unregistered, their functions no longer being passes: {}\n",
                        stale.join(", ")
                    ));
                }
                out
            }
            Err(e) => return Err(e),
        }
    };
    let step = if is_dep {
        Step::Dep(code.trim().trim_start_matches(":dep").trim().to_string())
    } else {
        Step::Cell(code.to_string())
    };
    st.steps.push(step);
    Ok(out)
}

/// Registers every pass again, one by one; those whose function no longer
/// compiles as a pass are removed from the registry. Returns their names.
fn reregister(st: &mut State) -> Vec<String> {
    let regs: Vec<Registration> = st.passes.values().cloned().collect();
    let mut stale = Vec::new();
    for reg in regs {
        let Some(w) = st.worker.as_mut() else { break };
        if w.eval(&reg.code()).is_err() {
            crate::registry::remove_defined(&reg.info.name);
            st.passes.remove(&reg.info.name);
            stale.push(reg.info.name);
        }
    }
    stale
}

/// Registers `function` of the Rust cells as a pass: in the worker first
/// (so that rustc checks its signature), then in the registry. Registering
/// a name again replaces the pass.
pub(crate) fn register(reg: Registration) -> std::result::Result<(), EvalError> {
    let name = reg.info.name.clone();
    crate::registry::check_definable(&name).map_err(|e| EvalError::Other(e.to_string()))?;
    let mut st = state();
    let w = st.worker().map_err(|e| EvalError::Other(e.to_string()))?;
    w.eval(&reg.code()).map_err(|e| match e {
        EvalError::Compile(mut d) => {
            for diag in &mut d {
                // The code is passlab's, not the user's: say what rustc
                // said there without pointing into it.
                let labels = diag.spans.drain(..).map(|s| s.4).filter(|l| !l.is_empty());
                let labels: Vec<String> = labels.map(|l| format!("note: {l}")).collect();
                diag.notes.splice(0..0, labels);
                diag.notes.push(format!(
                    "help: a {} is `{}`",
                    reg.kind.word().replace('_', " "),
                    reg.kind.signature()
                ));
            }
            EvalError::Compile(d)
        }
        other => other,
    })?;
    let pass = reg.clone();
    crate::registry::define_user_pass(reg.info.clone(), reg.kind.word(), move || {
        std::sync::Arc::new(UserPass { reg: pass.clone() }) as crate::PassRef
    })
    .map_err(|e| EvalError::Other(e.to_string()))?;
    st.passes.insert(name, reg);
    Ok(())
}

/// The `///` comment above `fn NAME` in the newest cell that defines it,
/// as one line (a registered pass's description).
pub fn doc_comment(function: &str) -> Option<String> {
    let st = state();
    st.steps.iter().rev().find_map(|step| {
        let Step::Cell(code) = step else { return None };
        let lines: Vec<&str> = code.lines().collect();
        let at = lines.iter().position(|l| {
            let l = l.trim_start().trim_start_matches("pub ").trim_start();
            l.strip_prefix("fn ").is_some_and(|rest| {
                rest.trim_start().starts_with(function)
                    && rest.trim_start()[function.len()..]
                        .trim_start()
                        .starts_with(['(', '<'])
            })
        })?;
        let doc: Vec<&str> = lines[..at]
            .iter()
            .rev()
            .map(|l| l.trim())
            .take_while(|l| l.starts_with("///") || l.starts_with("#["))
            .filter_map(|l| l.strip_prefix("///"))
            .map(str::trim)
            .collect();
        let text = doc.into_iter().rev().collect::<Vec<_>>().join(" ");
        (!text.is_empty()).then_some(text)
    })
}

/// The registered user passes.
pub fn registrations() -> Vec<Registration> {
    state().passes.values().cloned().collect()
}

/// Forgets every user pass and stops the worker (`:reset`).
pub(crate) fn reset() {
    let mut st = state();
    for name in st.passes.keys() {
        crate::registry::remove_defined(name);
    }
    st.worker = None;
    st.steps.clear();
    st.passes.clear();
}

/// A pass written in Rust in a cell; runs in evcxr's child process.
pub struct UserPass {
    reg: Registration,
}

impl Pass for UserPass {
    fn info(&self) -> &PassInfo {
        &self.reg.info
    }

    /// The child runs the function as a function or module pass, which
    /// verifies the result before sending it back, and `run` verifies what
    /// comes back again before taking it.
    fn verifies_itself(&self) -> bool {
        true
    }

    fn run(&self, module: &mut Module, ctx: &PassContext) -> Result<()> {
        let name = &self.reg.info.name;
        let timeout = Duration::from_millis(ctx.config_int(TIMEOUT_MS)?.max(1) as u64);
        let request = wire::Request {
            pass: name.clone(),
            module_name: module.name(),
            opt_level: ctx.opt_level(),
            config: ctx
                .config_set()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            bitcode: module.snapshot().bytes().to_vec(),
        };
        let mut st = state();
        if let Some(socket) = st
            .worker
            .as_ref()
            .filter(|w| w.in_fork())
            .map(|w| w.socket_path())
        {
            drop(st);
            return run_in_fork(name, module, &socket, &request, timeout);
        }
        let registrations = st.registration_code();
        let w = st.worker()?;
        match w.run_pass(&request, timeout) {
            Ok(reply) => take_reply(name, module, reply),
            Err(stop) => {
                let (shown, crash) = stopped_output(&w.last_output());
                let restarted = w.restart(&registrations);
                let again = match &restarted {
                    Ok(_) => "the Rust worker was restarted and your passes registered again".to_string(),
                    Err(e) => format!("the Rust worker could not be restarted ({e}); the next Rust command starts it again"),
                };
                if restarted.is_err() {
                    st.worker = None;
                }
                let how = crash.or_else(|| restarted.ok().filter(|h| !h.is_empty()));
                Err(stopped(name, stop, how, &format!(", and {again}{shown}")))
            }
        }
    }
}

/// This process's own connection when it is a fork of the session (the
/// process id it was made in, and the connection).
static FORK_CONN: Mutex<Option<(u32, Conn)>> = Mutex::new(None);

/// [`UserPass::run`] in a fork of the session (a hunt's worker, a
/// reducer's candidate): over a connection of this process's own, served by
/// a fork of the service, so that forks run passes at once. A crash, a
/// timeout or an interrupt ends only that fork of the service; the next
/// pass connects again.
fn run_in_fork(
    name: &str,
    module: &mut Module,
    socket: &std::path::Path,
    request: &wire::Request,
    timeout: Duration,
) -> Result<()> {
    let mut slot = FORK_CONN.lock().unwrap_or_else(|p| p.into_inner());
    let me = std::process::id();
    if slot.as_ref().is_none_or(|(pid, _)| *pid != me) {
        // (A fork's copy of its parent's connection is left alone: the
        // parent may still use it.)
        if let Some(old) = slot.take() {
            std::mem::forget(old);
        }
        *slot = Some((me, Conn::open(socket, true)?));
    }
    let (_, conn) = slot.as_mut().expect("set above");
    match conn.run_pass(request, timeout) {
        Ok(reply) => take_reply(name, module, reply),
        Err(stop) => {
            let (shown, crash) = stopped_output(&conn.last_output());
            let _ = std::fs::remove_file(conn.output_file());
            *slot = None;
            Err(stopped(name, stop, crash, &shown))
        }
    }
}

/// The error for a pass that was stopped (an interrupt, the time limit) or
/// whose process died while it ran: `how`, as its crash handler said, if it
/// could; `after` follows "the module is as it was".
fn stopped(pass: &str, stop: PassStop, how: Option<String>, after: &str) -> Error {
    let pass = pass.to_string();
    match stop {
        PassStop::Interrupted => Error::Interrupted { pass },
        PassStop::TimedOut(d) => Error::PassFailed {
            pass,
            reason: format!(
                "did not finish in {} ms (config.{TIMEOUT_MS}) and was stopped; the module is as it was{after}",
                d.as_millis()
            ),
        },
        PassStop::Died => Error::PassCrashed {
            pass,
            reason: format!(
                "crashed{}; the module is as it was{after}",
                how.as_ref().map(|h| format!(": {h}")).unwrap_or_default()
            ),
            how: how.unwrap_or_else(|| "its process died".into()),
        },
    }
}

/// The module after a reply from the service: what the pass printed goes
/// to the output, a changed module is verified here before it is taken.
fn take_reply(name: &str, module: &mut Module, reply: wire::Reply) -> Result<()> {
    if !reply.printed.is_empty() {
        crate::console::emit(&reply.printed);
    }
    match reply.outcome {
        wire::Outcome::Unchanged => Ok(()),
        wire::Outcome::Changed(bitcode) => {
            // What another process sends back is verified here, whatever it
            // says it checked.
            module.restore(&Snapshot::from_bitcode(bitcode))?;
            crate::pass::verified(module, name)
        }
        wire::Outcome::Failed(message) => Err(remote_error(name, &message)),
    }
}

/// What a stopped pass printed, as a suffix for the error ("; it printed:
/// ..."), and how it ended if its crash handler could say.
fn stopped_output(printed: &str) -> (String, Option<String>) {
    let (shown, crash) = match printed.find(service::CRASH_MARK) {
        Some(at) => (
            &printed[..at],
            Some(
                printed[at + service::CRASH_MARK.len()..]
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string(),
            ),
        ),
        None => (printed, None),
    };
    let shown = if shown.trim().is_empty() {
        String::new()
    } else {
        format!("; it printed:\n{}", shown.trim_end())
    };
    (shown, crash)
}

/// An error the child reported, as the session's error for `pass`.
fn remote_error(pass: &str, message: &str) -> Error {
    let prefix = format!("error in pass {pass}: ");
    if let Some(rest) = message.strip_prefix(&format!("IR does not verify after pass {pass}:\n")) {
        return Error::Verify {
            pass: pass.to_string(),
            message: rest.to_string(),
            ir: None,
        };
    }
    Error::PassFailed {
        pass: pass.to_string(),
        reason: message.strip_prefix(&prefix).unwrap_or(message).to_string(),
    }
}
