//! The service that runs user passes inside evcxr's child process.
//!
//! The first cell of a Rust session (written by passlab, not the user)
//! starts it: `let __passlab = passlab::user::Service::start(PATH)?;`. It
//! listens on a Unix socket; later cells register the user's functions in
//! it (`__passlab.register_function("name", f)`), and the session sends it
//! modules as bitcode to run them on. Each request is handled as passlab
//! handles a pass: the module is read into a fresh LLVM context, the
//! function runs as a [`FunctionPass`] or [`ModulePass`] body (panics
//! caught, the function set checked, the result verified), and the module
//! goes back only if it changed. What the pass prints is captured and sent
//! back with the reply.
//!
//! Each evcxr cell links its own copy of passlab, so nothing here may rely
//! on a `static` shared with the cells: the table of passes is an `Arc`
//! the cells reach through the `__passlab` variable.
//!
//! One session is served on its socket by a thread with a 64 MB stack and
//! an alternate signal stack; what a pass prints goes to a file beside the
//! socket, where a crash handler also names a segmentation fault or a stack
//! overflow before the process dies, so the session can say what happened.
//! A connection from a fork of the session (a hunt's worker, a reducer's
//! candidate) is served by a fork of this process, so that they run at once
//! and a crash costs that fork only.

use super::wire::{self, Outcome, Reply, Request};
use crate::context::PassContext;
use crate::module::Module;
use crate::pass::{FunctionPass, ModulePass, Pass, PassInfo};
use crate::Result;
use inkwell::values::FunctionValue;
use std::collections::BTreeMap;
use std::io::{BufReader, BufWriter};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

type FunctionBody = dyn for<'ctx> Fn(FunctionValue<'ctx>, &PassContext) -> Result<()> + Send + Sync;
type ModuleBody = dyn Fn(&mut Module, &PassContext) -> Result<()> + Send + Sync;

#[derive(Clone)]
enum Body {
    Function(Arc<FunctionBody>),
    Module(Arc<ModuleBody>),
}

type Table = Arc<Mutex<BTreeMap<String, Body>>>;

/// Runs registered user passes for a session (see the module docs).
pub struct Service {
    table: Table,
    path: PathBuf,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "passlab service at {} with passes {:?}",
            self.path.display(),
            self.names()
        )
    }
}

/// The environment variable that holds the process's service.
const PROCESS_SERVICE: &str = "PASSLAB_PROCESS_SERVICE";

/// The most a pass may print into one reply; the rest is cut.
pub(crate) const MAX_PRINTED: usize = 1 << 20;

impl Service {
    /// Listens on `path` (a stale socket file there is replaced) and serves
    /// on a thread of its own.
    pub fn start(path: impl AsRef<Path>) -> std::io::Result<Service> {
        let path = path.as_ref().to_path_buf();
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)?;
        let table: Table = Arc::default();
        let served = table.clone();
        let output = output_path(&path);
        let (sessions, session) = std::sync::mpsc::channel::<UnixStream>();
        std::thread::Builder::new()
            .name("passlab-service".into())
            // Room for deep recursion in a pass; an endless one still
            // overflows (and ends this process, which the session notices).
            .stack_size(64 << 20)
            .spawn(move || {
                crash::note_stack();
                for stream in session {
                    // One session at a time; when it goes, wait for the next.
                    let _ = serve(stream, &served, &output);
                }
            })?;
        let forked = table.clone();
        let socket = path.clone();
        std::thread::Builder::new()
            .name("passlab-accept".into())
            // A fork serves on this thread: the same room as above.
            .stack_size(64 << 20)
            .spawn(move || {
                for mut stream in listener.incoming().flatten() {
                    // A client says which it is at once; one that does not
                    // is dropped rather than keep the others waiting.
                    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                    let mut first = [0u8; 1];
                    let said = std::io::Read::read_exact(&mut stream, &mut first);
                    let _ = stream.set_read_timeout(None);
                    match said {
                        Ok(()) if first[0] == wire::FORKED => {
                            serve_forked(stream, &forked, &socket)
                        }
                        Ok(()) if first[0] == wire::SESSION => {
                            let _ = sessions.send(stream);
                        }
                        // Not a client of this protocol: dropped.
                        _ => {}
                    }
                }
            })?;
        Ok(Service { table, path })
    }

    /// Starts the service for this process (see [`Service::start`]) and
    /// keeps it where every cell finds it ([`Service::get`]): evcxr cells
    /// each link their own copy of passlab, so a Rust `static` would not
    /// be shared, but the process's environment is. A cell that starts it
    /// declares no variable, which spares evcxr a type inference over
    /// passlab's whole crate graph on the first cell.
    pub fn start_for_process(path: impl AsRef<Path>) -> std::io::Result<()> {
        let service = Service::start(path)?;
        let table = Arc::into_raw(service.table);
        // The process's id goes with the address: a process that inherits
        // the variable (a child that execs) must not read it as its own.
        let text = format!(
            "{}|{}|{}",
            std::process::id(),
            table as usize,
            service.path.display()
        );
        std::env::set_var(PROCESS_SERVICE, text);
        Ok(())
    }

    /// The service [`Service::start_for_process`] started.
    pub fn get() -> Service {
        let text = std::env::var(PROCESS_SERVICE)
            .expect("passlab's service was not started in this process");
        let mut parts = text.splitn(3, '|');
        let (pid, address, path) = (parts.next(), parts.next(), parts.next());
        assert_eq!(
            pid.and_then(|p| p.parse::<u32>().ok()),
            Some(std::process::id()),
            "passlab's service was started in another process"
        );
        let address: usize = address
            .and_then(|a| a.parse().ok())
            .expect("passlab's service address");
        let path = path.expect("passlab's service path");
        let raw = address as *const Mutex<BTreeMap<String, Body>>;
        // SAFETY: the address is of an `Arc` leaked by `start_for_process` in
        // this process, which is never freed; the types are the same in
        // every copy of passlab the cells link (one crate, one version, as
        // the wire protocol's version check guarantees for the session).
        // The process id checked above rules out a variable inherited from
        // another process; one set by hand with this process's id, or copies
        // of passlab that lay the table out differently (repr(Rust)), are
        // not ruled out.
        let table = unsafe {
            Arc::increment_strong_count(raw);
            Arc::from_raw(raw)
        };
        Service {
            table,
            path: PathBuf::from(path),
        }
    }

    /// Registers (or replaces) a function pass: `f` runs on every function
    /// with a body, as a [`FunctionPass`] body does.
    pub fn register_function<F>(&self, name: &str, f: F)
    where
        F: for<'ctx> Fn(FunctionValue<'ctx>, &PassContext) -> Result<()> + Send + Sync + 'static,
    {
        self.insert(name, Body::Function(Arc::new(f)));
    }

    /// Registers (or replaces) a module pass: `f` sees the whole module, as
    /// a [`ModulePass`] body does.
    pub fn register_module<F>(&self, name: &str, f: F)
    where
        F: Fn(&mut Module, &PassContext) -> Result<()> + Send + Sync + 'static,
    {
        self.insert(name, Body::Module(Arc::new(f)));
    }

    /// The registered pass names.
    pub fn names(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    fn insert(&self, name: &str, body: Body) {
        self.lock().insert(name.to_string(), body);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Body>> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn serve(stream: UnixStream, table: &Table, output: &Path) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = BufWriter::new(stream);
    wire::write_hello(&mut writer, std::process::id())?;
    loop {
        let request = Request::read(&mut reader)?;
        let body = table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&request.pass)
            .cloned();
        let (outcome, printed) = captured_output(output, || run(&request, body));
        Reply { outcome, printed }.write(&mut writer)?;
    }
}

/// Serves a connection from a fork of the session in a fork of this
/// process, which ends with the connection: several such run at once (a
/// hunt's workers, a reducer's candidates), each prints into a file of its
/// own ([`forked_output_path`]), and a crash ends only that fork. The
/// fork has the passes registered when it was made.
fn serve_forked(stream: UnixStream, table: &Table, socket: &Path) {
    // Held across the fork, so that no other thread holds the table's lock
    // in the fork's copy of it.
    let held = table.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: fork has no memory-safety preconditions. In the fork only
    // this thread runs; it takes no lock another thread could have held
    // (the table's is held here, the session's serving thread waits on its
    // channel or on its socket, and evcxr's thread for its next cell), and
    // it ends with `_exit`, running no destructor or exit handler.
    let pid = unsafe { libc::fork() };
    drop(held);
    match pid {
        0 => {
            crash::note_stack();
            // SAFETY: getpid has no preconditions.
            let output = forked_output_path(socket, unsafe { libc::getpid() } as u32);
            let _ = serve(stream, table, &output);
            let _ = std::fs::remove_file(&output);
            // SAFETY: ends the fork without running the process's exit
            // handlers or destructors, which belong to the service.
            unsafe { libc::_exit(0) }
        }
        -1 => drop(stream),
        pid => {
            drop(stream);
            std::thread::spawn(move || {
                let mut status = 0;
                // SAFETY: reaps the fork made above, which nothing else
                // waits for; `status` is a live local.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            });
        }
    }
}

/// Where the fork of the service with process id `pid` (see
/// [`serve_forked`]) writes what passes print.
pub(crate) fn forked_output_path(socket: &Path, pid: u32) -> PathBuf {
    let mut p = output_path(socket).into_os_string();
    p.push(format!(".{pid}"));
    PathBuf::from(p)
}

/// Runs one request; every failure is an outcome, never a panic here.
fn run(request: &Request, body: Option<Body>) -> Outcome {
    let name = &request.pass;
    let Some(body) = body else {
        return Outcome::Failed(format!(
            "error in pass {name}: the Rust worker has no pass of that name (register it again)"
        ));
    };
    // (a snapshot's bytes: bitcode, or the IR text an unchanged module was
    // parsed from)
    let mut module = match Module::from_snapshot_bytes(&request.bitcode, &request.module_name) {
        Ok(m) => m,
        Err(e) => return Outcome::Failed(format!("error in pass {name}: {e}")),
    };
    let ctx = PassContext::from_parts(request.opt_level, request.config.iter().cloned());
    let info = PassInfo::new(name, 0);
    let pass: Box<dyn Pass> = match body {
        Body::Function(f) => Box::new(FunctionPass::new(info, move |func, ctx| f(func, ctx))),
        Body::Module(f) => Box::new(ModulePass::new(info, move |m, ctx| f(m, ctx))),
    };
    let before = module.fingerprint();
    // The panic message is in the error; the default hook would also print
    // it (with evcxr's RUST_BACKTRACE=1, a whole backtrace) into the output.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = pass.run(&mut module, &ctx);
    std::panic::set_hook(hook);
    match result {
        Err(e) => Outcome::Failed(e.to_string()),
        Ok(()) if module.fingerprint() == before => Outcome::Unchanged,
        // Without use-list order, as snapshots are: five times cheaper to
        // write, and the module prints the same.
        Ok(()) => Outcome::Changed(module.snapshot().bytes().to_vec()),
    }
}

/// Where a service for the socket at `socket` writes what passes print:
/// a file beside the socket, which the session reads if the process dies
/// during a pass (its last words are there).
pub(crate) fn output_path(socket: &Path) -> PathBuf {
    let mut p = socket.as_os_str().to_owned();
    p.push(".out");
    PathBuf::from(p)
}

/// Runs `f` with standard output and standard error going to `file`
/// (emptied first), and returns what was written (at most [`MAX_PRINTED`]
/// bytes). Only this thread runs user code while a request is served:
/// evcxr's own thread waits for its next command. While `f` runs, a crash
/// handler names a segmentation fault or a stack overflow in that file.
fn captured_output<R>(file: &Path, f: impl FnOnce() -> R) -> (R, String) {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    let Ok(out) = std::fs::File::create(file) else {
        return (f(), String::new());
    };
    let fd = out.as_raw_fd();
    // SAFETY: plain descriptor calls, no pointers; the saved descriptors
    // are put back and closed below.
    let (saved_out, saved_err) = unsafe { (libc::dup(1), libc::dup(2)) };
    // SAFETY: `fd` is open while `out` lives (dropped only after the
    // descriptors are put back); only this thread runs code that writes
    // to them meanwhile (see above). A failed call only returns -1.
    unsafe {
        libc::dup2(fd, 1);
        libc::dup2(fd, 2);
    }
    let guard = crash::Guard::install();
    let r = f();
    drop(guard);
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: puts back the descriptors saved above and closes the copies,
    // each once; nothing else owns `saved_out`/`saved_err` (if a `dup`
    // failed they are -1 and the calls just fail with EBADF).
    unsafe {
        libc::dup2(saved_out, 1);
        libc::dup2(saved_err, 2);
        libc::close(saved_out);
        libc::close(saved_err);
    }
    drop(out);
    (r, read_output(file))
}

/// What a pass printed into `file`, cut at [`MAX_PRINTED`] bytes.
pub(crate) fn read_output(file: &Path) -> String {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(file) else {
        return String::new();
    };
    let size = f.metadata().map(|m| m.len() as usize).unwrap_or(0);
    let mut buf = Vec::new();
    let _ = f.take(MAX_PRINTED as u64).read_to_end(&mut buf);
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    if size > MAX_PRINTED {
        text.push_str(&format!(
            "\n[output cut: the pass printed {size} bytes, the first {MAX_PRINTED} are shown]\n"
        ));
    }
    text
}

/// A crash handler for the time a pass runs: it writes what happened to
/// standard error (the pass's output file) and ends the process with the
/// signal, as evcxr's own handler would, but on the thread's alternate
/// stack, so that it also runs (and says so) when the stack overflowed.
mod crash {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The serving thread's stack: lowest and highest address.
    static STACK_LOW: AtomicUsize = AtomicUsize::new(0);
    static STACK_HIGH: AtomicUsize = AtomicUsize::new(0);

    /// The first line a crash writes; the session looks for it.
    pub(crate) const MARK: &str = "passlab: the pass crashed: ";

    pub(super) struct Guard {
        old: [libc::sigaction; 3],
    }

    const SIGNALS: [libc::c_int; 3] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL];

    extern "C" fn on_crash(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // SAFETY: only async-signal-safe calls (write, signal, raise) and
        // lock-free atomic loads; `info` is valid because the handler is
        // installed with SA_SIGINFO; the messages are static bytes.
        unsafe {
            let addr = (*info).si_addr() as usize;
            let (low, high) = (
                STACK_LOW.load(Ordering::Relaxed),
                STACK_HIGH.load(Ordering::Relaxed),
            );
            // The guard page lies just below the stack's lowest address.
            let overflow =
                sig == libc::SIGSEGV && low != 0 && addr < high && addr + (1 << 16) >= low;
            let what: &[u8] = match sig {
                _ if overflow => b"stack overflow (endless or too deep recursion)\n",
                libc::SIGSEGV => b"segmentation fault (an invalid memory access)\n",
                libc::SIGBUS => b"bus error (an invalid memory access)\n",
                _ => b"illegal instruction\n",
            };
            libc::write(2, MARK.as_ptr().cast(), MARK.len());
            libc::write(2, what.as_ptr().cast(), what.len());
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }

    /// Remembers the calling thread's stack bounds (the serving thread) and
    /// gives it an alternate signal stack, where the crash handler can run
    /// when the stack itself overflowed. (The thread is started by the
    /// cells' copy of `std`, a shared library whose start-up never ran, so
    /// it does not get one from `std` as a program's threads do.)
    pub(super) fn note_stack() {
        const ALT_SIZE: usize = 1 << 16;
        // SAFETY: the alternate stack is leaked, so it outlives the thread
        // (which serves until the process ends), and `alt` describes exactly
        // that buffer of ALT_SIZE bytes.
        unsafe {
            let stack = Box::leak(vec![0u8; ALT_SIZE].into_boxed_slice());
            let alt = libc::stack_t {
                ss_sp: stack.as_mut_ptr().cast(),
                ss_flags: 0,
                ss_size: ALT_SIZE,
            };
            libc::sigaltstack(&alt, std::ptr::null_mut());
        }
        // SAFETY: the attribute calls read this thread's attributes into
        // locals; `attr` is destroyed only after `pthread_getattr_np`
        // initialised it, and all out-pointers are to live locals.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) == 0 {
                let mut addr = std::ptr::null_mut();
                let mut size = 0;
                if libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0 {
                    STACK_LOW.store(addr as usize, Ordering::Relaxed);
                    STACK_HIGH.store(addr as usize + size, Ordering::Relaxed);
                }
                libc::pthread_attr_destroy(&mut attr);
            }
        }
    }

    impl Guard {
        pub(super) fn install() -> Guard {
            // SAFETY: sigaction with a handler that only makes async-signal-safe
            // calls, and matches the SA_SIGINFO signature; an all-zero
            // `sigaction` is a valid one (empty mask); the previous actions
            // are saved into `old` and put back on drop.
            unsafe {
                let mut old: [libc::sigaction; 3] = std::mem::zeroed();
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_crash as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                for (i, sig) in SIGNALS.iter().enumerate() {
                    libc::sigaction(*sig, &action, &mut old[i]);
                }
                Guard { old }
            }
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            // SAFETY: restores the actions saved by `install`, which are
            // valid `sigaction`s the kernel filled in.
            unsafe {
                for (i, sig) in SIGNALS.iter().enumerate() {
                    libc::sigaction(*sig, &self.old[i], std::ptr::null_mut());
                }
            }
        }
    }
}

pub(crate) use crash::MARK as CRASH_MARK;
