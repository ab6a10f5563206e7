//! `passlab-evcxr`: the process that compiles a passlab session's Rust cells
//! with evcxr. The session (`passlab::user`) starts it on the first `:rust`
//! command and speaks JSON lines with it over standard input and output;
//! evcxr runs the compiled cells in a child process of this one (the same
//! binary, under `evcxr::runtime_hook`), where passlab's pass service
//! listens on a Unix socket.
//!
//! Requests, one per line, each answered by one line:
//!
//! * `{"op":"start","passlab":DIR,"socket":PATH}` — start evcxr, add passlab
//!   (the crate in DIR) as a dependency, start the service on PATH.
//! * `{"op":"eval","code":TEXT,"register":TEXT}` — run a cell; if it ends
//!   evcxr's child, start the service again and run `register`.
//! * `{"op":"restart","register":TEXT}` — evcxr's child was stopped (or
//!   died): start it, the service, and run `register`; says how it ended.
//!
//! Replies carry `ok`, `child_pid`, and `displays` / `stdout` / `stderr`,
//! or `diagnostics` (rustc's, with the cell's lines) or `error`.
//!
//! evcxr's build folder is kept between sessions (`~/.cache/passlab/evcxr/N`,
//! or `PASSLAB_EVCXR_DIR`), so passlab and LLVM's bindings are compiled once,
//! by the set-up; concurrent sessions take different numbered folders.
//! Cells and passlab are compiled at evcxr's opt-level 2, or at
//! `PASSLAB_EVCXR_OPT` (0, 1, 2, 3, s or z; the test command uses 0, with
//! folders of its own).

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufRead, Write};
use std::os::fd::FromRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn main() {
    // evcxr runs this same binary as its child process; there, this call
    // never returns.
    evcxr::runtime_hook();
    // `passlab-evcxr --stamp PASSLAB_FOLDER`: the stamp this worker gives a
    // build folder (see [`stamp`]), for the test command to tell which of
    // its folders hold this build.
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, passlab] = args.as_slice() {
        if flag == "--stamp" {
            match opt_level().and_then(|o| stamp(passlab, o.as_deref())) {
                Ok(s) => print!("{s}"),
                Err(e) => {
                    eprintln!("passlab-evcxr: {e:#}");
                    std::process::exit(1);
                }
            }
            return;
        }
    }
    // The protocol owns standard output: whatever else writes to it (evcxr,
    // cargo) goes to standard error instead.
    // SAFETY: plain descriptor calls at start-up, before any thread exists;
    // `fd` is a fresh duplicate this File then owns.
    let protocol = unsafe {
        let fd = libc::dup(1);
        libc::dup2(2, 1);
        File::from_raw_fd(fd)
    };
    if let Err(e) = serve(protocol) {
        eprintln!("passlab-evcxr: {e:#}");
        std::process::exit(1);
    }
}

/// Text that arrives on a channel, gathered by a thread.
#[derive(Clone)]
struct Gathered(Arc<Mutex<(String, Instant)>>);

impl Gathered {
    fn follow(rx: crossbeam_channel::Receiver<String>) -> Gathered {
        let g = Gathered(Arc::new(Mutex::new((String::new(), Instant::now()))));
        let sink = g.clone();
        std::thread::spawn(move || {
            for line in rx {
                let mut s = sink.0.lock().unwrap_or_else(|p| p.into_inner());
                s.0.push_str(&line);
                s.0.push('\n');
                s.1 = Instant::now();
            }
        });
        g
    }

    /// Everything gathered, once no line has come for a few milliseconds
    /// (the child's standard error is read by another thread, which may
    /// lag behind the reply).
    fn take(&self) -> String {
        let quiet = Duration::from_millis(15);
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            let last = self.0.lock().unwrap_or_else(|p| p.into_inner()).1;
            if last.elapsed() >= quiet || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(quiet);
        }
        std::mem::take(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()).0)
    }
}

struct Host {
    ctx: evcxr::CommandContext,
    stdout: Gathered,
    stderr: Gathered,
    socket: String,
    /// Keeps the build folder ours while this process lives.
    _lock: File,
}

fn serve(protocol: File) -> Result<()> {
    let mut out = std::io::LineWriter::new(protocol);
    let mut host: Option<Host> = None;
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let request: Value = serde_json::from_str(&line).context("a request that is not JSON")?;
        let reply = match (request["op"].as_str(), host.as_mut()) {
            (Some("start"), None) => match start(&request) {
                Ok(h) => {
                    let pid = child_pid(&h);
                    host = Some(h);
                    json!({"ok": true, "child_pid": pid})
                }
                Err(e) => json!({"ok": false, "error": format!("{e:#}")}),
            },
            (Some("eval"), Some(h)) => eval(h, &request),
            (Some("restart"), Some(h)) => restart(h, &request),
            (op, _) => json!({"ok": false, "error": format!("unexpected request {op:?}")}),
        };
        writeln!(out, "{reply}")?;
    }
    // The session ended (its end of the pipe closed): remove the socket's
    // folder, which it made for this worker.
    if let Some(h) = &host {
        if let Some(dir) = std::path::Path::new(&h.socket).parent() {
            if dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("passlab-rust-"))
            {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
    Ok(())
}

/// A build folder of our own: the first free one of the numbered folders
/// that holds what this worker builds (its stamp, see [`stamp`]); else,
/// once none such is there or after waiting for one, a free folder that
/// holds something else (Cargo builds passlab again there, not every
/// crate); else, after the wait, a new one.
fn build_dir(stamp: &str) -> Result<(PathBuf, File)> {
    let base = match std::env::var_os("PASSLAB_EVCXR_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .context("neither XDG_CACHE_HOME nor HOME is set")?;
            cache.join("passlab/evcxr")
        }
    };
    // PASSLAB_EVCXR_WAIT=SECONDS: wait that long for a folder that holds
    // this worker's build to be free before taking one that holds another
    // (passlab compiled again: half a minute) or a new one (passlab, LLVM's
    // bindings and every crate: minutes). The test command sets it, so
    // that its REPL and kernel tests, which run side by side, take turns.
    // By default 10 s: the worker of a session that just ended may hold its
    // folder for a moment while it stops.
    let wait = std::env::var("PASSLAB_EVCXR_WAIT")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(std::time::Duration::from_secs)
        .unwrap_or(std::time::Duration::from_secs(10));
    choose_dir(&base, stamp, wait)
}

/// [`build_dir`]'s choice among the numbered folders under `base`.
fn choose_dir(base: &std::path::Path, stamp: &str, wait: Duration) -> Result<(PathBuf, File)> {
    let start = std::time::Instant::now();
    loop {
        let folders: Vec<PathBuf> = (0..64)
            .map(|n| base.join(n.to_string()))
            .take_while(|d| d.is_dir())
            .collect();
        let (ours, others): (Vec<&PathBuf>, Vec<&PathBuf>) = folders
            .iter()
            .partition(|d| std::fs::read_to_string(d.join(STAMP)).is_ok_and(|s| s == stamp));
        for d in &ours {
            if let Some(taken) = take(d)? {
                return Ok(taken);
            }
        }
        let waited = start.elapsed() >= wait;
        if waited || ours.is_empty() {
            for d in &others {
                if let Some(taken) = take(d)? {
                    return Ok(taken);
                }
            }
        }
        if waited || folders.is_empty() {
            for n in folders.len()..64 {
                if let Some(taken) = take(&base.join(n.to_string()))? {
                    return Ok(taken);
                }
            }
            bail!("all 64 build folders under {} are in use", base.display())
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// The file in a build folder that says what it holds compiled.
const STAMP: &str = ".stamp";

/// What a folder holds once this worker has started in it: this worker's
/// executable (its size and time: a new build of passlab makes a new one),
/// the opt-level and passlab's folder. Copies of a folder keep it.
fn stamp(passlab: &str, opt_level: Option<&str>) -> Result<String> {
    let exe = std::env::current_exe().context("this worker's executable")?;
    let meta = std::fs::metadata(&exe).with_context(|| format!("{}", exe.display()))?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok(format!(
        "{} {} {modified}\nopt-level {}\npasslab {passlab}\n",
        exe.display(),
        meta.len(),
        opt_level.unwrap_or("2")
    ))
}

/// The passlab folder a stamp names.
fn passlab_of(stamp: &str) -> Option<&str> {
    stamp.lines().find_map(|l| l.strip_prefix("passlab "))
}

/// Removes from a build folder what Cargo built of the crates it compiles
/// from a folder rather than a registry (passlab, passlab-evcxr, evcxr's
/// cell crate): they are named by where their sources are, so a build of
/// another clone's passlab is never used again, and Cargo never removes
/// one (a folder that served the test command of 12 clones held 3.3 GB,
/// 300 MB of it used). The registry's crates, the long part of a build,
/// stay.
fn forget_local_crates(dir: &std::path::Path) {
    let local = |name: &str| {
        [
            "passlab-",
            "passlab_evcxr-",
            "libpasslab-",
            "libpasslab_evcxr-",
            "ctx-",
            "libctx",
            "ctx.",
        ]
        .iter()
        .any(|p| name.starts_with(p))
    };
    let target = dir.join("target");
    // target/PROFILE (build scripts, proc macros) and target/TRIPLE/PROFILE
    let mut roots = vec![target.clone()];
    if let Ok(entries) = std::fs::read_dir(&target) {
        roots.extend(entries.flatten().map(|e| e.path()));
    }
    for profile in roots
        .iter()
        .flat_map(|r| ["debug", "release"].map(|p| r.join(p)))
    {
        // (only local crates are compiled incrementally)
        let _ = std::fs::remove_dir_all(profile.join("incremental"));
        for sub in ["deps", ".fingerprint", "build"] {
            let Ok(entries) = std::fs::read_dir(profile.join(sub)) else {
                continue;
            };
            for e in entries.flatten() {
                if local(&e.file_name().to_string_lossy()) {
                    let path = e.path();
                    let _ = if path.is_dir() {
                        std::fs::remove_dir_all(&path)
                    } else {
                        std::fs::remove_file(&path)
                    };
                }
            }
        }
    }
}

/// The folder `dir` (made if missing) and its lock, unless another worker
/// holds it.
fn take(dir: &std::path::Path) -> Result<Option<(PathBuf, File)>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let lock = File::create(dir.join(".lock"))?;
    // SAFETY: a plain flock on a descriptor we own.
    let locked = unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&lock),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    } == 0;
    Ok(locked.then(|| (dir.to_path_buf(), lock)))
}

/// The folder of the toolchain's `libstd-*.so`, which every compiled cell
/// links to. Cells carry a relative run path to it that is one level off
/// for the copy evcxr loads (cargo puts it beside `deps/`), and outside
/// `cargo run` nothing else points there: evcxr's child gets it in
/// `LD_LIBRARY_PATH`.
fn std_lib_dir() -> Result<PathBuf> {
    let out = std::process::Command::new("rustc")
        .args(["--print", "target-libdir"])
        .output()
        .context("running rustc --print target-libdir")?;
    if !out.status.success() {
        bail!(
            "rustc --print target-libdir failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// `PASSLAB_EVCXR_OPT`, checked: the opt-level cells and passlab are
/// compiled at (evcxr's own when unset).
fn opt_level() -> Result<Option<String>> {
    let Some(level) = std::env::var_os("PASSLAB_EVCXR_OPT") else {
        return Ok(None);
    };
    let level = level.to_string_lossy().into_owned();
    if !["0", "1", "2", "3", "s", "z"].contains(&level.as_str()) {
        bail!("PASSLAB_EVCXR_OPT expects an opt-level: 0, 1, 2, 3, s or z, got '{level}'");
    }
    Ok(Some(level))
}

fn start(request: &Value) -> Result<Host> {
    let passlab = request["passlab"]
        .as_str()
        .context("start: no passlab folder")?;
    let socket = request["socket"]
        .as_str()
        .context("start: no socket path")?
        .to_string();
    // Checked before anything slow starts.
    let opt_level = opt_level()?;
    let stamp = stamp(passlab, opt_level.as_deref())?;
    let (dir, lock) = build_dir(&stamp)?;
    // A folder that held another build says so no more until this start
    // has built there; one that held passlab from another folder (another
    // clone) loses that build first.
    if let Ok(held) = std::fs::read_to_string(dir.join(STAMP)) {
        if held != stamp {
            let _ = std::fs::remove_file(dir.join(STAMP));
        }
        if passlab_of(&held) != passlab_of(&stamp) {
            forget_local_crates(&dir);
        }
    }
    // Read by evcxr when its context is made, and by its child.
    std::env::set_var("EVCXR_TMPDIR", &dir);
    let mut paths = vec![std_lib_dir()?];
    paths.extend(
        std::env::var_os("LD_LIBRARY_PATH")
            .iter()
            .flat_map(std::env::split_paths),
    );
    std::env::set_var("LD_LIBRARY_PATH", std::env::join_paths(paths)?);
    let t = Instant::now();
    let (ctx, outputs) = evcxr::CommandContext::new().map_err(|e| anyhow::anyhow!("{e}"))?;
    timing("evcxr context", t);
    let mut ctx = ctx;
    if let Some(level) = &opt_level {
        ctx.set_opt_level(level)
            .map_err(|e| anyhow::anyhow!("PASSLAB_EVCXR_OPT: {e}"))?;
    }
    let mut host = Host {
        ctx,
        stdout: Gathered::follow(outputs.stdout),
        stderr: Gathered::follow(outputs.stderr),
        socket,
        _lock: lock,
    };
    // One evcxr call for the dependencies and the service: one cargo run.
    let t = Instant::now();
    let deps = format!(
        ":dep passlab = {{ path = {:?} }}\n:dep passlab-evcxr = {{ path = {:?} }}",
        passlab,
        format!("{passlab}/evcxr")
    );
    bootstrap(&mut host, &deps, "")?;
    timing("service", t);
    // (Only a preference among folders: without it, a folder is taken last.)
    let _ = std::fs::write(dir.join(STAMP), stamp);
    Ok(host)
}

/// Starts the service in evcxr's child and registers the passes.
fn bootstrap(host: &mut Host, deps: &str, register: &str) -> Result<()> {
    let _ = std::fs::remove_file(&host.socket);
    let code = format!(
        "{deps}\nuse passlab_evcxr::EvcxrDisplay as _;\n\
         passlab::user::Service::start_for_process({:?}).expect(\"passlab's pass service\");",
        host.socket
    );
    let outputs = host
        .ctx
        .execute(&code)
        .map_err(|e| anyhow::anyhow!("starting passlab's service: {}", error_text(&e)))?;
    phases(&outputs);
    host.stdout.take();
    let stderr = host.stderr.take();
    if !std::path::Path::new(&host.socket).exists() {
        bail!("passlab's service did not start: {stderr}");
    }
    if !register.trim().is_empty() {
        host.ctx
            .execute(register)
            .map_err(|e| anyhow::anyhow!("registering the passes again: {}", error_text(&e)))?;
    }
    Ok(())
}

/// With `PASSLAB_EVCXR_TIMING` set, how long each step of a start took.
fn timing(step: &str, since: Instant) {
    if std::env::var_os("PASSLAB_EVCXR_TIMING").is_some() {
        eprintln!(
            "passlab-evcxr: {step}: {:.2} s",
            since.elapsed().as_secs_f64()
        );
    }
}

fn phases(outputs: &evcxr::EvalOutputs) {
    if std::env::var_os("PASSLAB_EVCXR_TIMING").is_some() {
        for p in &outputs.phases {
            eprintln!(
                "passlab-evcxr:   {}: {:.2} s",
                p.name,
                p.duration.as_secs_f64()
            );
        }
    }
}

fn child_pid(host: &Host) -> u32 {
    host.ctx
        .process_handle()
        .lock()
        .map(|c| c.id())
        .unwrap_or(0)
}

/// How evcxr's child ended, if it has.
fn ended(host: &Host) -> Option<String> {
    let handle = host.ctx.process_handle();
    let mut child = handle.lock().ok()?;
    let status = child.try_wait().ok()??;
    Some(match status.signal() {
        Some(sig) => signal_name(sig),
        None => format!("exit status {}", status.code().unwrap_or(-1)),
    })
}

fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTRAP => "SIGTRAP",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

/// The last lines of what the child wrote to standard error that say why
/// it stopped (a stack overflow, a panic while panicking).
fn last_words(stderr: &str) -> String {
    stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.contains("EVCXR"))
        .map(|l| format!(": {}", l.trim()))
        .unwrap_or_default()
}

fn eval(host: &mut Host, request: &Value) -> Value {
    let code = request["code"].as_str().unwrap_or("");
    let register = request["register"].as_str().unwrap_or("");
    let t = Instant::now();
    let result = host.ctx.execute(code);
    timing("eval", t);
    if let Ok(o) = &result {
        phases(o);
    }
    let stdout = host.stdout.take();
    let stderr = host.stderr.take();
    match result {
        Ok(outputs) => {
            if stderr.contains("panicked at") {
                return json!({
                    "ok": false,
                    "child_pid": child_pid(host),
                    "error": "the cell panicked (its definitions are kept; variables it made are not)",
                    "stderr": stderr,
                    "stdout": stdout,
                });
            }
            let displays: Vec<Value> = if outputs.content_by_mime_type.is_empty() {
                vec![]
            } else {
                vec![json!(outputs.content_by_mime_type)]
            };
            json!({
                "ok": true,
                "child_pid": child_pid(host),
                "displays": displays,
                "stdout": stdout,
                "stderr": stderr,
            })
        }
        Err(evcxr::Error::CompilationErrors(errors)) => json!({
            "ok": false,
            "child_pid": child_pid(host),
            "diagnostics": errors.iter().map(diagnostic).collect::<Vec<_>>(),
            "stdout": stdout,
            "stderr": stderr,
        }),
        Err(evcxr::Error::SubprocessTerminated(message)) => {
            // evcxr has started a new child; it needs the service again.
            let restarted = bootstrap(host, "", register);
            json!({
                "ok": false,
                "child_pid": child_pid(host),
                "error": format!(
                    "the cell ended the Rust worker's process{} ({}); {}",
                    last_words(&stderr),
                    message.lines().last().unwrap_or("").trim(),
                    match restarted {
                        Ok(()) => "it was restarted, with your definitions and passes".to_string(),
                        Err(e) => format!("restarting it failed: {e:#}"),
                    }
                ),
                "stdout": stdout,
            })
        }
        Err(e) => json!({
            "ok": false,
            "child_pid": child_pid(host),
            "error": error_text(&e),
            "stdout": stdout,
            "stderr": stderr,
        }),
    }
}

fn restart(host: &mut Host, request: &Value) -> Value {
    let register = request["register"].as_str().unwrap_or("");
    // Give the child's last words a moment to arrive, then make sure it is
    // gone: evcxr notices when it next talks to it.
    std::thread::sleep(Duration::from_millis(20));
    let stderr = host.stderr.take();
    if std::env::var_os("PASSLAB_EVCXR_TIMING").is_some() {
        eprintln!("passlab-evcxr: the child's last words: {stderr:?}");
    }
    let how = {
        let handle = host.ctx.process_handle();
        if ended(host).is_none() {
            if let Ok(mut child) = handle.lock() {
                let _ = child.kill();
            }
        }
        let _ = handle.lock().map(|mut c| c.wait());
        ended(host).unwrap_or_default()
    };
    // Any cell now finds the child gone and makes evcxr start a new one.
    let _ = host.ctx.execute("let _ = 0;");
    host.stdout.take();
    host.stderr.take();
    match bootstrap(host, "", register) {
        Ok(()) => json!({
            "ok": true,
            "child_pid": child_pid(host),
            "ended": format!("{how}{}", last_words(&stderr)),
        }),
        Err(e) => json!({"ok": false, "error": format!("{e:#}")}),
    }
}

fn error_text(e: &evcxr::Error) -> String {
    match e {
        evcxr::Error::CompilationErrors(errors) => errors
            .iter()
            .map(|e| e.rendered())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// A rustc diagnostic with positions in the cell's own text.
fn diagnostic(e: &evcxr::CompilationError) -> Value {
    let mut spans: Vec<_> = e.spanned_messages().iter().collect();
    spans.sort_by_key(|m| !m.is_primary);
    let user_spans: Vec<Value> = spans
        .iter()
        .filter_map(|m| {
            let s = m.span?;
            Some(json!({
                "line": s.start_line,
                "column": s.start_column,
                "end_line": s.end_line,
                "end_column": s.end_column,
                "label": m.label,
            }))
        })
        .collect();
    let mut notes = Vec::new();
    if user_spans.is_empty() {
        // Reported in code passlab or evcxr wrote: say what rustc said there.
        notes.extend(
            spans
                .iter()
                .filter(|m| !m.label.is_empty())
                .map(|m| format!("note: {}", m.label)),
        );
    }
    if let Some(children) = e.json["children"].as_array() {
        for child in children {
            let (Some(level), Some(message)) = (child["level"].as_str(), child["message"].as_str())
            else {
                continue;
            };
            if matches!(level, "note" | "help") && !message.is_empty() {
                notes.push(format!("{level}: {message}"));
            }
        }
    }
    json!({
        "level": e.level(),
        "code": e.code(),
        "message": e.message(),
        "spans": user_spans,
        "notes": notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Holds `dir`'s lock as another worker would.
    fn hold(dir: &std::path::Path) -> File {
        take(dir).unwrap().expect("free").1
    }

    fn folders(stamps: &[Option<&str>]) -> PathBuf {
        let base = std::env::temp_dir().join(format!(
            "passlab-host-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&base);
        for (n, s) in stamps.iter().enumerate() {
            let d = base.join(n.to_string());
            std::fs::create_dir_all(&d).unwrap();
            if let Some(s) = s {
                std::fs::write(d.join(STAMP), s).unwrap();
            }
        }
        base
    }

    fn chosen(base: &std::path::Path, wait_ms: u64) -> String {
        let (dir, _lock) = choose_dir(base, "ours", Duration::from_millis(wait_ms)).unwrap();
        dir.file_name().unwrap().to_string_lossy().into_owned()
    }

    #[test]
    fn a_folder_that_holds_this_build_comes_first() {
        let base = folders(&[Some("old"), Some("ours")]);
        assert_eq!(chosen(&base, 0), "1");
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn a_busy_folder_of_this_build_is_waited_for_before_another_is_taken() {
        let base = folders(&[Some("ours"), Some("old")]);
        let held = hold(&base.join("0"));
        let freed = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        assert_eq!(chosen(&base, 5_000), "0");
        freed.join().unwrap();
        // Still busy after the wait: the folder of another build.
        let _held = hold(&base.join("0"));
        assert_eq!(chosen(&base, 0), "1");
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn without_a_folder_of_this_build_a_free_one_is_taken_then_a_new_one() {
        let base = folders(&[None, Some("old")]);
        let _held = hold(&base.join("0"));
        assert_eq!(chosen(&base, 0), "1");
        let _held1 = hold(&base.join("1"));
        // Every folder busy: a new one only after the wait.
        let t = Instant::now();
        assert_eq!(chosen(&base, 300), "2");
        assert!(t.elapsed() >= Duration::from_millis(300));
        std::fs::remove_dir_all(base).unwrap();
        let empty = folders(&[]);
        assert_eq!(chosen(&empty, 0), "0");
        std::fs::remove_dir_all(empty).unwrap();
    }

    #[test]
    fn another_clones_build_of_passlab_is_forgotten_and_the_registrys_kept() {
        let base = folders(&[None]);
        let dir = base.join("0");
        let (host, cells) = (
            dir.join("target/debug"),
            dir.join("target/x86_64-unknown-linux-gnu/debug"),
        );
        let files = [
            host.join("build/passlab-12ab/build-script-build"),
            host.join("deps/libsyn-34cd.rlib"),
            cells.join("deps/libpasslab-56ef.rlib"),
            cells.join("deps/libpasslab_evcxr-78ab.rmeta"),
            cells.join("deps/ctx.d"),
            cells.join("deps/libctx.so"),
            cells.join("deps/libllvm_sys-9abc.rlib"),
            cells.join(".fingerprint/passlab-56ef/lib-passlab"),
            cells.join(".fingerprint/inkwell-def0/lib-inkwell"),
            cells.join("incremental/passlab-1x/s-1/dep-graph.bin"),
        ];
        for f in &files {
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, b"").unwrap();
        }
        assert_eq!(passlab_of("w 1 2\nopt-level 0\npasslab /a\n"), Some("/a"));
        forget_local_crates(&dir);
        let kept: Vec<bool> = files.iter().map(|f| f.exists()).collect();
        assert_eq!(
            kept,
            [false, true, false, false, false, false, true, false, true, false]
        );
        assert!(!cells.join("incremental").exists());
        std::fs::remove_dir_all(base).unwrap();
    }
}
