//! The session's side of Rust cells: the `passlab-evcxr` host process
//! (which compiles cells with evcxr) and the socket to the service in
//! evcxr's child (which runs the passes).
//!
//! ```text
//!  session ── JSON lines (stdin/stdout) ──▶ passlab-evcxr (evcxr host: compiles cells)
//!     │                                          │ spawns, loads each cell's .so
//!     └──────── Unix socket: modules ─────▶ evcxr's child: Service (runs passes)
//! ```
//!
//! Nothing that runs user code runs in the session: a crash or a hang ends
//! evcxr's child (or the host), the session keeps every module, and the
//! worker is brought back with the user's definitions and registrations.
//! A fork of the session (a hunt's worker, a reducer's candidate) does not
//! share the session's connection: it opens its own ([`Conn`]), which a
//! fork of the service serves, so forks run passes at once and a crash or
//! a hang costs that fork of the service only.
//!
//! `passlab-evcxr` is found by `PASSLAB_EVCXR`, beside this program, in a
//! release build above it, or on `PATH`. Waiting for either process polls
//! [`crate::interrupt`] and the time limit (`rust.timeout_ms`), and stops
//! evcxr's child with SIGKILL when one fires. A pass ships the module as
//! bitcode; changed bitcode replaces the module (`Module::restore`; the
//! change tracker matches functions by name). [`render_diagnostics`] draws
//! rustc's diagnostics with the lines of the user's own text. The core
//! knows nothing of evcxr's API: only these JSON lines and socket messages.

use super::wire::{self, Reply, Request};
use crate::{interrupt, Error, Result};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// One thing a session did in Rust, kept so that a new host can be brought
/// to the same state.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// `:dep` text.
    Dep(String),
    /// A cell's code.
    Cell(String),
}

/// A diagnostic from rustc, with positions in the cell's own text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub level: String,
    pub code: Option<String>,
    pub message: String,
    /// `(line, column, end_line, end_column, label)`, 1-based, in the code
    /// that was sent; the first is the primary one.
    pub spans: Vec<(usize, usize, usize, usize, String)>,
    pub notes: Vec<String>,
}

/// What a cell gave back.
#[derive(Clone, Debug, Default)]
pub(crate) struct CellOutput {
    /// MIME type → data, as evcxr's display protocol gives it.
    pub displays: Vec<Vec<(String, String)>>,
    pub stdout: String,
    pub stderr: String,
}

/// How an evaluation failed.
#[derive(Debug)]
pub(crate) enum EvalError {
    /// rustc rejected the code: its diagnostics.
    Compile(Vec<Diagnostic>),
    /// Anything else (evcxr's message: a crash, an interrupt, cargo).
    Other(String),
}

pub(crate) struct Worker {
    host: Child,
    /// The last lines the host wrote to standard error (cargo's progress,
    /// evcxr's complaints), for messages when it fails.
    host_stderr: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
    to_host: BufWriter<ChildStdin>,
    from_host: Receiver<String>,
    dir: PathBuf,
    socket: Option<Conn>,
    /// evcxr's child, where passes run (changes when it is restarted).
    child_pid: u32,
    /// The session's process, which started this worker (a fork of the
    /// session has a copy of it, and connects anew: [`Conn`]).
    owner: u32,
}

/// A connection to the service in evcxr's child: the session's own, or one
/// a fork of the session makes (a hunt's worker, a reducer's candidate),
/// which a fork of the service serves.
pub(crate) struct Conn {
    reader: BufReader<UnixStream>,
    writer: BufWriter<UnixStream>,
    /// The process that serves it: evcxr's child, or a fork of it.
    served_pid: u32,
    /// Where that process writes what a pass prints.
    output: PathBuf,
}

impl Conn {
    /// Connects to the service listening at `socket`; `forked`: from a
    /// fork of the session.
    pub(crate) fn open(socket: &Path, forked: bool) -> Result<Conn> {
        let unreachable = |e: std::io::Error| {
            Error::worker(format!(
                "cannot reach the Rust worker's service at {}: {e}",
                socket.display()
            ))
        };
        let mut stream = UnixStream::connect(socket).map_err(unreachable)?;
        stream
            .write_all(&[if forked { wire::FORKED } else { wire::SESSION }])
            .map_err(unreachable)?;
        let mut reader = BufReader::new(stream.try_clone().map_err(unreachable)?);
        let served_pid = wire::read_hello(&mut reader)
            .map_err(|e| Error::worker(format!("the Rust worker's service: {e}")))?;
        let output = if forked {
            super::service::forked_output_path(socket, served_pid)
        } else {
            super::service::output_path(socket)
        };
        Ok(Conn {
            reader,
            writer: BufWriter::new(stream),
            served_pid,
            output,
        })
    }

    /// Runs a registered pass on a module (as bitcode) where this
    /// connection is served. An interrupt or the time limit stops that
    /// process (SIGKILL); then, or when it died, the connection is done.
    pub(crate) fn run_pass(
        &mut self,
        request: &Request,
        timeout: Duration,
    ) -> std::result::Result<Reply, PassStop> {
        if request.write(&mut self.writer).is_err() {
            return Err(PassStop::Died);
        }
        // Wait for the reply without blocking interrupts or the time limit.
        let fd = std::os::fd::AsRawFd::as_raw_fd(self.reader.get_ref());
        let start = Instant::now();
        loop {
            if !self.reader.buffer().is_empty() {
                break;
            }
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `pfd` is one live, initialised pollfd and the count
            // passed is 1; `fd` is the socket `reader` keeps open.
            let n = unsafe { libc::poll(&mut pfd, 1, 20) };
            if n > 0 {
                break;
            }
            if interrupt::requested() {
                kill(self.served_pid);
                return Err(PassStop::Interrupted);
            }
            if start.elapsed() >= timeout {
                kill(self.served_pid);
                return Err(PassStop::TimedOut(timeout));
            }
        }
        Reply::read(&mut self.reader).map_err(|_| PassStop::Died)
    }

    /// What the last pass printed (also when its process died during it).
    pub(crate) fn last_output(&self) -> String {
        super::service::read_output(&self.output)
    }

    /// The file [`Conn::last_output`] reads, for a fork's to be removed.
    pub(crate) fn output_file(&self) -> &Path {
        &self.output
    }
}

/// Where the host binary is, or why it cannot be used.
fn host_binary() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("PASSLAB_EVCXR") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(Error::worker(format!(
                "PASSLAB_EVCXR names {}, which is not a file",
                p.display()
            )))
        };
    }
    let mut tried = Vec::new();
    let mut candidates = Vec::new();
    // Beside this program, or in a release build above it (a test or a
    // benchmark runs from target/*/deps).
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(3) {
            candidates.push(dir.join("passlab-evcxr"));
            candidates.push(dir.join("release/passlab-evcxr"));
        }
    }
    candidates.push(source_dir().join("target/release/passlab-evcxr"));
    for c in candidates {
        if c.is_file() {
            return Ok(c);
        }
        tried.push(c.display().to_string());
    }
    if let Some(p) = which("passlab-evcxr") {
        return Ok(p);
    }
    Err(Error::worker(format!(
        "writing passes in Rust needs passlab-evcxr (passlab's evcxr host), which is not built \
         (`demo` does not build it): run `bash scripts/passlab.sh setup`, which builds it and warms \
         its build folder once (about 9 minutes on 2 cores), or `cargo build --release -p passlab-evcxr \
         --features host` (looked in {}, and on PATH; PASSLAB_EVCXR may name it)",
        tried.join(", ")
    )))
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The passlab sources that cells are compiled against.
pub(crate) fn source_dir() -> PathBuf {
    std::env::var_os("PASSLAB_SOURCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// The passlab sources cells compile against, when a Rust toolchain is
/// on PATH to compile them.
fn checked_sources() -> Result<PathBuf> {
    for tool in ["cargo", "rustc"] {
        if which(tool).is_none() {
            return Err(Error::worker(format!(
                "writing passes in Rust needs a Rust toolchain: {tool} is not on PATH \
                 (install it with rustup: https://rustup.rs); everything else works without one"
            )));
        }
    }
    let source = source_dir();
    if !source.join("Cargo.toml").is_file() {
        return Err(Error::worker(format!(
            "Rust cells compile against passlab's sources, which are not at {} \
             (set PASSLAB_SOURCE to the folder holding passlab's Cargo.toml)",
            source.display()
        )));
    }
    Ok(source)
}

/// Starts the host process `host`, its standard streams piped.
fn spawn_host(host: &std::path::Path) -> Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    Command::new(host)
        // Its own process group: a Ctrl-C at the terminal is the
        // session's to handle (passlab::interrupt), not a signal that
        // ends the worker and its child.
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A cell is compiled as passlab compiles it, whatever wrapper
        // the caller's environment names for its own workspace (the
        // test command lints its build through clippy's driver, which
        // would deny a cell's warnings).
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .env(
            "LLVM_SYS_191_PREFIX",
            std::env::var_os("LLVM_SYS_191_PREFIX").unwrap_or_else(|| "/usr/lib/llvm-19".into()),
        )
        .spawn()
        .map_err(|e| Error::worker(format!("cannot start {}: {e}", host.display())))
}

impl Worker {
    /// Starts the host, which starts evcxr, adds passlab as a dependency
    /// and starts the service. Takes seconds (evcxr's start and the first
    /// cell); the set-up has compiled the dependencies already.
    pub(crate) fn start() -> Result<Worker> {
        let host = host_binary()?;
        let source = checked_sources()?;
        let dir = private_dir()?;
        let mut child = spawn_host(&host)?;
        let to_host = BufWriter::new(child.stdin.take().expect("piped stdin"));
        let host_stderr =
            std::sync::Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
        let stderr = child.stderr.take().expect("piped stderr");
        let tail = host_stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                if t.len() == 20 {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut worker = Worker {
            host: child,
            host_stderr,
            to_host,
            from_host: rx,
            dir,
            socket: None,
            child_pid: 0,
            owner: std::process::id(),
        };
        let socket = worker.dir.join("service.sock");
        let reply = worker.ask(&json!({
            "op": "start",
            "passlab": source.display().to_string(),
            "socket": socket.display().to_string(),
        }))?;
        if reply["ok"] != json!(true) {
            return Err(Error::worker(format!(
                "the Rust worker did not start: {}{}",
                reply["error"].as_str().unwrap_or("no reason given"),
                worker.stderr_tail()
            )));
        }
        worker.connect(&reply)?;
        Ok(worker)
    }

    /// Whether the host process still runs.
    pub(crate) fn alive(&mut self) -> bool {
        match self.host.try_wait() {
            Ok(None) => true,
            Ok(Some(_)) => false,
            // Not this process's child: this is a fork of the session (a
            // reduction decides a candidate in one) and the host is the
            // parent's, which waits meanwhile; the socket it inherited
            // reaches the same service, so no second worker is started.
            Err(_) => {
                // SAFETY: signal 0 only asks whether the process exists;
                // the id is the host's, which the parent has not reaped
                // while this fork runs.
                unsafe { libc::kill(self.host.id() as i32, 0) == 0 }
            }
        }
    }

    /// Sends one request to the host and waits for its reply line. An
    /// interrupt stops evcxr's child (ending user code that is running);
    /// the host then restarts it and replies.
    fn ask(&mut self, request: &Value) -> Result<Value> {
        let line = request.to_string();
        writeln!(self.to_host, "{line}")
            .and_then(|()| self.to_host.flush())
            .map_err(|e| Error::worker(format!("the Rust worker is gone: {e}")))?;
        let mut interrupted = false;
        loop {
            match self.from_host.recv_timeout(Duration::from_millis(25)) {
                Ok(reply) => {
                    let mut v: Value = serde_json::from_str(&reply).map_err(|e| {
                        Error::worker(format!("the Rust worker sent '{reply}': {e}"))
                    })?;
                    if interrupted {
                        v["interrupted"] = json!(true);
                    }
                    return Ok(v);
                }
                Err(RecvTimeoutError::Timeout) => {
                    if interrupt::requested() && !interrupted && self.child_pid != 0 {
                        interrupted = true;
                        kill(self.child_pid);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.host.wait().map(|s| s.to_string()).unwrap_or_default();
                    return Err(Error::worker(format!(
                        "the Rust worker (passlab-evcxr) ended ({status}){}",
                        self.stderr_tail()
                    )));
                }
            }
        }
    }

    /// The host's last lines on standard error, as a suffix for a message.
    fn stderr_tail(&self) -> String {
        let t = self.host_stderr.lock().unwrap_or_else(|p| p.into_inner());
        if t.is_empty() {
            String::new()
        } else {
            format!(":\n{}", t.iter().cloned().collect::<Vec<_>>().join("\n"))
        }
    }

    /// Connects to the service the host reports (again, after a restart).
    fn connect(&mut self, reply: &Value) -> Result<()> {
        let Some(pid) = reply["child_pid"].as_u64() else {
            return Ok(());
        };
        if pid as u32 == self.child_pid && self.socket.is_some() {
            return Ok(());
        }
        self.socket = None;
        let conn = Conn::open(&self.socket_path(), false)?;
        self.child_pid = conn.served_pid;
        self.socket = Some(conn);
        Ok(())
    }

    /// Where the service listens.
    pub(crate) fn socket_path(&self) -> PathBuf {
        self.dir.join("service.sock")
    }

    /// Whether this is a fork's copy of the session's worker (the fork then
    /// connects anew rather than use the session's connection or host).
    pub(crate) fn in_fork(&self) -> bool {
        self.owner != std::process::id()
    }

    /// Evaluates Rust code (items, statements, `:dep` lines) in evcxr.
    pub(crate) fn eval(&mut self, code: &str) -> std::result::Result<CellOutput, EvalError> {
        let reply = self
            .ask(&json!({"op": "eval", "code": code}))
            .map_err(|e| EvalError::Other(e.to_string()))?;
        self.connect(&reply)
            .map_err(|e| EvalError::Other(e.to_string()))?;
        let text = |k: &str| reply[k].as_str().unwrap_or("").to_string();
        if reply["interrupted"] == json!(true) {
            return Err(EvalError::Other(
                "interrupted; the Rust worker was restarted with your definitions".into(),
            ));
        }
        if reply["ok"] == json!(true) {
            let displays = reply["displays"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|d| {
                            d.as_object()
                                .map(|o| {
                                    o.iter()
                                        .map(|(m, v)| {
                                            (m.clone(), v.as_str().unwrap_or("").to_string())
                                        })
                                        .collect()
                                })
                                .unwrap_or_default()
                        })
                        .collect()
                })
                .unwrap_or_default();
            return Ok(CellOutput {
                displays,
                stdout: text("stdout"),
                stderr: text("stderr"),
            });
        }
        if let Some(diags) = reply["diagnostics"].as_array().filter(|d| !d.is_empty()) {
            return Err(EvalError::Compile(diags.iter().map(diagnostic).collect()));
        }
        let mut message = text("error");
        let stderr = text("stderr");
        if !stderr.trim().is_empty() {
            message = format!("{}\n{message}", stderr.trim_end());
        }
        Err(EvalError::Other(message))
    }

    /// Runs a registered pass on a module (as bitcode) in evcxr's child.
    /// A crash, a timeout or an interrupt stops the child; the caller then
    /// restarts it ([`Worker::restart`]).
    pub(crate) fn run_pass(
        &mut self,
        request: &Request,
        timeout: Duration,
    ) -> std::result::Result<Reply, PassStop> {
        let Some(conn) = self.socket.as_mut() else {
            return Err(PassStop::Died);
        };
        let result = conn.run_pass(request, timeout);
        if result.is_err() {
            self.socket = None;
        }
        result
    }

    /// What the last pass printed (also when its process died during it).
    pub(crate) fn last_output(&self) -> String {
        super::service::read_output(&super::service::output_path(&self.socket_path()))
    }

    /// Brings evcxr's child back after it died or was stopped: the host
    /// starts a new one, starts the service and registers the passes again
    /// (`registrations` is the code that does it). Returns how the old child
    /// ended, as the host saw it.
    pub(crate) fn restart(&mut self, registrations: &str) -> Result<String> {
        self.socket = None;
        let reply = self.ask(&json!({"op": "restart", "register": registrations}))?;
        if reply["ok"] != json!(true) {
            return Err(Error::worker(format!(
                "the Rust worker could not be restarted: {}",
                reply["error"].as_str().unwrap_or("no reason given")
            )));
        }
        self.connect(&reply)?;
        Ok(reply["ended"].as_str().unwrap_or("").to_string())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing its input ends the host, which ends evcxr's child.
        let _ = self.to_host.get_mut();
        let _ = self.host.kill();
        let _ = self.host.wait();
        if self.child_pid != 0 {
            kill(self.child_pid);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// How a pass run in the child ended without a reply.
#[derive(Debug)]
pub(crate) enum PassStop {
    Died,
    Interrupted,
    TimedOut(Duration),
}

fn kill(pid: u32) {
    if pid > 1 {
        // SAFETY: `kill` takes no pointers, so it cannot break memory
        // safety; `pid` is the service process's pid it reported itself
        // (evcxr's child), and `pid > 1` rules out init and "every process"
        // (a real pid also fits in i32, so the cast stays positive).
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
}

fn diagnostic(v: &Value) -> Diagnostic {
    let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
    let spans = v["spans"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|sp| {
                    let n = |k: &str| sp[k].as_u64().unwrap_or(0) as usize;
                    (
                        n("line"),
                        n("column"),
                        n("end_line"),
                        n("end_column"),
                        sp["label"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Diagnostic {
        level: s("level"),
        code: v["code"].as_str().map(str::to_string),
        message: s("message"),
        spans,
        notes: v["notes"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// rustc's diagnostics, drawn as rustc draws them, with the lines and
/// columns of the cell's own text: `source` is the code as sent, whose
/// first line is line `first_line` of `origin`.
pub fn render_diagnostics(
    diagnostics: &[Diagnostic],
    source: &str,
    origin: &str,
    first_line: usize,
) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    for d in diagnostics {
        let code = d
            .code
            .as_deref()
            .map(|c| format!("[{c}]"))
            .unwrap_or_default();
        out.push_str(&format!("{}{code}: {}\n", d.level, d.message));
        let width = d
            .spans
            .iter()
            .map(|s| (s.0 + first_line - 1).to_string().len())
            .max()
            .unwrap_or(1);
        let pad = " ".repeat(width);
        if let Some(primary) = d.spans.first() {
            out.push_str(&format!(
                "{pad}--> {origin}:{}:{}\n",
                primary.0 + first_line - 1,
                primary.1
            ));
            out.push_str(&format!("{pad} |\n"));
        }
        for (line, col, end_line, end_col, label) in &d.spans {
            let Some(text) = line.checked_sub(1).and_then(|i| lines.get(i)) else {
                continue;
            };
            let number = line + first_line - 1;
            out.push_str(&format!("{number:>width$} | {text}\n"));
            let start = col.saturating_sub(1);
            let end = if end_line == line {
                (*end_col).max(col + 1) - 1
            } else {
                text.chars().count()
            };
            let carets = "^".repeat(end.saturating_sub(start).max(1));
            out.push_str(&format!("{pad} | {}{carets} {label}\n", " ".repeat(start)));
        }
        for note in &d.notes {
            out.push_str(&format!("{pad} = {note}\n"));
        }
    }
    out.trim_end().to_string()
}

/// A new folder for the worker's socket, that only this user can enter:
/// a random name under the temporary folder, made with mode 0700 (made
/// anew, never one that exists: another user cannot prepare it). It
/// outlives this call (the worker removes it when it stops).
fn private_dir() -> Result<std::path::PathBuf> {
    Ok(crate::folder::private_temp_dir("passlab-rust-")?.keep())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_use_the_cells_lines() {
        let d = Diagnostic {
            level: "error".into(),
            code: Some("E0308".into()),
            message: "mismatched types".into(),
            spans: vec![(2, 5, 2, 10, "expected `bool`".into())],
            notes: vec!["help: return a bool".into()],
        };
        let text = render_diagnostics(&[d], "fn f() -> bool {\n    1 + 2\n}", "cell", 2);
        assert_eq!(
            text,
            "error[E0308]: mismatched types\n --> cell:3:5\n  |\n3 |     1 + 2\n  |     ^^^^^ expected `bool`\n  = help: return a bool"
        );
    }

    #[test]
    fn the_socket_folder_is_private_and_new() {
        use std::os::unix::fs::PermissionsExt;
        let a = super::private_dir().unwrap();
        let b = super::private_dir().unwrap();
        assert_ne!(a, b);
        let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", a.display());
        std::fs::remove_dir(&a).unwrap();
        std::fs::remove_dir(&b).unwrap();
    }
}
