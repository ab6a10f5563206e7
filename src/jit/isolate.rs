//! Running what could end the session in a forked child, so that a crash,
//! a hang or a fatal error costs the child, not the session: JIT-compiled
//! code ([`run`]) and code generation ([`child::in_child`]).
//!
//! For a call, the child sends stdout and stderr through two pipes
//! (unbuffered, so output written before a crash is kept), calls the packed
//! function, writes the result and the call's duration to a third pipe and
//! `_exit`s. It calls nothing else: no allocation, no LLVM. The parent
//! reads the pipes while it waits (keeping the beginning and the end of
//! each stream, up to a cap, and optionally all of it in a file), kills the
//! child at the time limit or on an interrupt, and turns a signal into a
//! message.
//!
//! In the child: stdout and stderr are unbuffered pipes, signal actions are
//! reset to their defaults, and nothing but the call runs between fork and
//! `_exit`. The cap on each stream is `jit.max_output`. The interrupt
//! reaches the child because the parent reports its pid to
//! `crate::interrupt`. Pipe, fork and wait code comes from `crate::child`.

use crate::child;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A finished call.
pub(crate) struct Run {
    pub ret: u64,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    /// For a timing plan: calls per repeat, and each repeat's total time.
    pub number: u64,
    pub repeats: Vec<Duration>,
}

/// The most repeats one timing run records (the child writes them from a
/// fixed array: it must not allocate).
pub(crate) const MAX_REPEAT: usize = 1024;

/// What the child does.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Plan {
    /// One call.
    Call,
    /// A program's `main`, as `lli` runs it: standard input from `stdin`
    /// (a descriptor of the parent's, or -1 for none); `exit()` ends it
    /// with its code as `main` returning would, after the handlers the
    /// program gave `atexit()` and `__cxa_atexit()`; `init`, when not 0, is
    /// the address of what runs before `main` (its static constructors).
    Exec { stdin: i32, init: usize },
    /// TVM's time evaluator: one warm-up call; `number` calls per repeat,
    /// grown until a repeat lasts at least `min_repeat_ms`; `repeat` repeats.
    Time {
        number: u64,
        repeat: usize,
        min_repeat_ms: u64,
    },
}

fn now_ns() -> u64 {
    // SAFETY: timespec is plain data; all zeroes is a valid value.
    let mut t = unsafe { std::mem::zeroed::<libc::timespec>() };
    // SAFETY: `t` is a valid timespec to write; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

// What a program's `exit()` needs to end the child as the end of `main`
// would. Set in the child only, before `main` runs (the session's copies
// stay as they are: JIT-compiled code never runs in the session).

/// The result pipe of an `Exec` child (-1: not a program's child).
static EXIT_FD: AtomicI32 = AtomicI32::new(-1);
/// When the program's `main` was called.
static EXIT_T0: AtomicU64 = AtomicU64::new(0);
/// The program's exit handlers, in the order given: `atexit`'s (a
/// function of nothing) and C++'s `__cxa_atexit`'s (a destructor and the
/// object it destroys), one list, as C++ requires.
static AT_EXIT: [AtomicUsize; MAX_AT_EXIT] = [const { AtomicUsize::new(0) }; MAX_AT_EXIT];
/// Each handler's object (`__cxa_atexit`'s), or [`NO_OBJECT`] (`atexit`'s).
static AT_EXIT_ARG: [AtomicUsize; MAX_AT_EXIT] = [const { AtomicUsize::new(0) }; MAX_AT_EXIT];
static AT_EXIT_LEN: AtomicUsize = AtomicUsize::new(0);
/// As many handlers as a program may give: C guarantees 32 to `atexit`;
/// a C++ program gives one per global object with a destructor.
const MAX_AT_EXIT: usize = 4096;
/// The object of an `atexit` handler, which takes none.
const NO_OBJECT: usize = usize::MAX;

fn push_exit_handler(handler: usize, object: usize) -> i32 {
    let n = AT_EXIT_LEN.load(Ordering::Relaxed);
    if n >= MAX_AT_EXIT {
        return -1;
    }
    AT_EXIT[n].store(handler, Ordering::Relaxed);
    AT_EXIT_ARG[n].store(object, Ordering::Relaxed);
    AT_EXIT_LEN.store(n + 1, Ordering::Relaxed);
    0
}

/// The program's `atexit` (the JIT links programs to it, not to libc's,
/// whose list holds the session's own handlers, copied into the child).
pub(crate) extern "C" fn program_atexit(handler: Option<extern "C" fn()>) -> i32 {
    let Some(h) = handler else { return -1 };
    push_exit_handler(h as usize, NO_OBJECT)
}

/// The program's `__cxa_atexit`, where C++ registers the destructor of a
/// global object as it constructs it (libc's would run it only at the
/// child's libc exit, which a program's end skips; the module handle is
/// one per program here, so it is not kept).
pub(crate) extern "C" fn program_cxa_atexit(
    handler: Option<extern "C" fn(*mut std::ffi::c_void)>,
    object: *mut std::ffi::c_void,
    _module: *mut std::ffi::c_void,
) -> i32 {
    let Some(h) = handler else { return -1 };
    push_exit_handler(h as usize, object as usize)
}

/// The program's `exit` (see [`program_atexit`]): its handlers, last given
/// first, C's streams flushed, then the child ends. In a program's child
/// the code is sent as `main`'s result; in a call's, the child exits with
/// it, as before.
pub(crate) extern "C" fn program_exit(code: i32) -> ! {
    let fd = EXIT_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        let ns = now_ns().saturating_sub(EXIT_T0.load(Ordering::Relaxed));
        finish_program(fd, code as i64 as u64, ns);
    }
    // SAFETY: flushing C's streams and ending the child; nothing after.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(code)
    }
}

/// The end of a program: its `atexit` handlers, C's streams flushed, the
/// result written, `_exit`.
fn finish_program(fd: i32, ret: u64, ns: u64) -> ! {
    // Handlers may register more or call exit again: take them one by one.
    loop {
        let n = AT_EXIT_LEN.load(Ordering::Relaxed);
        if n == 0 {
            break;
        }
        AT_EXIT_LEN.store(n - 1, Ordering::Relaxed);
        let h = AT_EXIT[n - 1].load(Ordering::Relaxed);
        match AT_EXIT_ARG[n - 1].load(Ordering::Relaxed) {
            NO_OBJECT => {
                // SAFETY: `h` is a handler the program passed to `atexit`, a
                // function of the program taking nothing and returning nothing.
                let h: extern "C" fn() =
                    unsafe { std::mem::transmute::<usize, extern "C" fn()>(h) };
                h();
            }
            object => {
                // SAFETY: `h` is a destructor the program passed to
                // `__cxa_atexit` with `object`, the object it destroys.
                let h: extern "C" fn(*mut std::ffi::c_void) = unsafe {
                    std::mem::transmute::<usize, extern "C" fn(*mut std::ffi::c_void)>(h)
                };
                h(object as *mut std::ffi::c_void);
            }
        }
    }
    EXIT_FD.store(-1, Ordering::Relaxed);
    let msg = [ret, ns, 0u64];
    // SAFETY: flushing C's streams, writing a local array of 24 bytes to
    // the result pipe, and ending the child; all async-signal-safe.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::write(fd, msg.as_ptr() as *const libc::c_void, 24);
        libc::_exit(0)
    }
}

/// The byte the next children fill fresh memory with, plus one (0: leave
/// it as it is); see [`paint_fresh_memory`].
static PAINT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);

/// Makes the children this process starts from now on (until called with
/// `None`) fill the stack below the call and the memory `malloc` returns
/// with `byte` (its complement for the heap: [`program_malloc`]) before they call: a program
/// that reads memory it never wrote then prints something else than with
/// another byte, where without painting it would read the same leftovers
/// every time and look deterministic. A reduction uses it to refuse
/// candidates whose output depends on uninitialized memory (a program's
/// arguments are moved too: [`crate::jit::Jit::exec`]).
pub fn paint_fresh_memory(byte: Option<u8>) {
    PAINT.store(byte.map_or(0, |b| u16::from(b) + 1), Ordering::Relaxed);
}

/// The byte fresh memory is painted with now, if any.
pub(crate) fn painting() -> Option<u8> {
    PAINT
        .load(Ordering::Relaxed)
        .checked_sub(1)
        .map(|b| b as u8)
}

/// The program's `malloc` (the JIT links programs to it): libc's, with the
/// block filled with the complement of the paint when there is one.
pub(crate) extern "C" fn program_malloc(size: usize) -> *mut libc::c_void {
    // SAFETY: libc's malloc, as the program would have called it.
    let p = unsafe { libc::malloc(size) };
    if let Some(byte) = PAINT.load(Ordering::Relaxed).checked_sub(1) {
        if !p.is_null() {
            // SAFETY: `p` is a fresh block of at least `size` bytes.
            unsafe { libc::memset(p, i32::from(!(byte as u8)), size) };
        }
    }
    p
}

/// Fills 256 KiB of the stack below this frame with `byte` (the frames
/// the call pushes next land there).
#[inline(never)]
fn paint_stack(byte: u8) {
    let mut area = [0u8; 256 << 10];
    for b in area.iter_mut() {
        // SAFETY: `b` is a valid, aligned reference into `area`; volatile
        // so the fill of a dead array is not removed.
        unsafe { std::ptr::write_volatile(b, byte) };
    }
    std::hint::black_box(&area);
}

/// Prepares the child to run a program: its exit reports on `result_fd`,
/// and its static constructors run (`init`, 0: none).
fn start_program(init: usize, result_fd: i32) {
    EXIT_FD.store(result_fd, Ordering::Relaxed);
    AT_EXIT_LEN.store(0, Ordering::Relaxed);
    EXIT_T0.store(now_ns(), Ordering::Relaxed);
    if init != 0 {
        // SAFETY: `init` is the address of the program's
        // `__passlab_init` (a function of nothing, made by
        // `plab_add_static_init`), run in this child before `main`, as
        // the C runtime runs constructors.
        let init: extern "C" fn() = unsafe { std::mem::transmute::<usize, extern "C" fn()>(init) };
        init();
    }
}

/// How many calls to time together so that they take at least `min_ns`
/// (`time(n)` times `n` calls), starting from `number`.
fn calibrate(time: &dyn Fn(u64) -> u64, mut number: u64, min_ns: u64) -> u64 {
    loop {
        let t = time(number);
        if t >= min_ns {
            return number;
        }
        // As TVM: aim just past the minimum, at least 1.618x more.
        let per_call = (t / number).max(1);
        number = (min_ns / per_call)
            .saturating_add(1)
            .max(((number as f64 * 1.618) as u64).saturating_add(1));
    }
}

/// Runs the plan in the child; fills `msg` with [ret, ns of the first
/// call or number, repeat count, repeat times…] and returns its length.
fn child_work(
    f: super::Packed,
    index: u32,
    slots: &[u64],
    plan: Plan,
    msg: &mut [u64],
    result_fd: i32,
) -> usize {
    if let Plan::Exec { init, .. } = plan {
        start_program(init, result_fd);
    }
    let t0 = now_ns();
    // After the clock's first call: resolving a symbol lazily saves the
    // vector registers on the stack, over the paint.
    if let Some(byte) = PAINT.load(Ordering::Relaxed).checked_sub(1) {
        let byte = byte as u8;
        // SAFETY: a glibc tuning call with a documented parameter; it only
        // changes how this child's malloc fills blocks (what `free` takes
        // gets the byte; what `malloc` returns from its per-thread cache
        // does not get its complement, hence `program_malloc`).
        unsafe { libc::mallopt(libc::M_PERTURB, i32::from(byte)) };
        paint_stack(byte);
    }
    // SAFETY: `f` is the packed entry of the JIT this call belongs to, and
    // `slots` holds the arguments of function `index`'s signature (checked by
    // the caller); whatever it does happens in this child.
    let ret = unsafe { f(index, slots.as_ptr()) };
    let first = now_ns() - t0;
    msg[0] = ret;
    match plan {
        Plan::Exec { .. } => finish_program(result_fd, ret, first),
        Plan::Call => {
            msg[1] = first;
            msg[2] = 0;
            3
        }
        Plan::Time {
            number,
            repeat,
            min_repeat_ms,
        } => {
            // The call above was the warm-up.
            let mut number = number.max(1);
            let repeat = repeat.clamp(1, MAX_REPEAT);
            // Saturating: a number a user typed must not wrap here (the
            // session checks the ranges; the child never panics).
            let min_ns = min_repeat_ms.saturating_mul(1_000_000);
            let time = |n: u64| {
                let t0 = now_ns();
                for _ in 0..n {
                    // SAFETY: as for the first call above.
                    std::hint::black_box(unsafe { f(index, slots.as_ptr()) });
                }
                now_ns() - t0
            };
            if min_ns > 0 {
                number = calibrate(&time, number, min_ns);
            }
            msg[1] = number;
            msg[2] = repeat as u64;
            for i in 0..repeat {
                msg[3 + i] = time(number);
            }
            3 + repeat
        }
    }
}

extern "C" {
    static mut stdout: *mut libc::FILE;
    static mut stderr: *mut libc::FILE;
}

/// Tells `passlab::interrupt` that no child runs any more when the parent
/// stops waiting, however it stops.
struct Running;

impl Drop for Running {
    fn drop(&mut self) {
        crate::interrupt::set_child(0);
    }
}

/// Where a call's output goes: at most `max` bytes of each stream are kept
/// (its first and last halves, with a line saying how much was left out),
/// and all of it is written to `file` (stdout) and `file.err` (stderr) when
/// one is given.
#[derive(Clone, Debug)]
pub(crate) struct OutputSpec {
    pub max: usize,
    pub file: Option<std::path::PathBuf>,
    /// The most processor time the child may use before it is stopped.
    pub cpu: Option<Duration>,
}

/// One captured stream: its beginning, a ring of its end, and its size.
struct Capture {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    half: usize,
    total: u64,
    file: Option<std::fs::File>,
    file_error: Option<String>,
}

impl Capture {
    fn new(max: usize, path: Option<std::path::PathBuf>) -> Capture {
        let (file, file_error) = match path.map(|p| (std::fs::File::create(&p), p)) {
            Some((Ok(f), _)) => (Some(f), None),
            Some((Err(e), p)) => (None, Some(format!("cannot write {}: {e}", p.display()))),
            None => (None, None),
        };
        Capture {
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            half: (max / 2).max(1),
            total: 0,
            file,
            file_error,
        }
    }

    fn push(&mut self, data: &[u8]) {
        use std::io::Write;
        self.total += data.len() as u64;
        if let Some(f) = &mut self.file {
            if let Err(e) = f.write_all(data) {
                self.file_error = Some(e.to_string());
                self.file = None;
            }
        }
        let room = self.half.saturating_sub(self.head.len());
        let (first, rest) = data.split_at(room.min(data.len()));
        self.head.extend_from_slice(first);
        self.tail.extend(rest);
        while self.tail.len() > self.half {
            let extra = self.tail.len() - self.half;
            self.tail.drain(..extra);
        }
    }

    fn text(mut self, stream: &str) -> String {
        if self.total > (self.head.len() + self.tail.len()) as u64 {
            // Something was left out: keep whole lines at both ends.
            if let Some(end) = self.head.iter().rposition(|&b| b == b'\n') {
                self.head.truncate(end + 1);
            }
            if let Some(start) = self.tail.iter().position(|&b| b == b'\n') {
                self.tail.drain(..=start);
            }
        }
        let kept = (self.head.len() + self.tail.len()) as u64;
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.total > kept {
            let left_out = self.total - kept;
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!(
                "[… {left_out} bytes of {stream} left out ({} in all); config.jit.max_output raises the cap, :call … --out FILE keeps everything …]\n",
                self.total
            ));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        out.push_str(&String::from_utf8_lossy(&tail));
        if let Some(e) = self.file_error {
            out.push_str(&format!("\n[{e}]\n"));
        }
        out
    }
}

/// Calls `f(slots, &mut ret)` in a child; the error says what went wrong,
/// with whatever the function printed.
pub(crate) fn run(
    f: super::Packed,
    index: u32,
    slots: &[u64],
    timeout: Duration,
    plan: Plan,
    output: &OutputSpec,
) -> Result<Run, String> {
    let [out, err, res] = open_pipes()?;
    let pid = match child::fork() {
        Ok(child::Side::Parent { pid }) => pid,
        Ok(child::Side::Child) => in_the_child(f, index, slots, plan, [out, err, res]),
        Err(e) => {
            child::close(&[
                out.read, out.write, err.read, err.write, res.read, res.write,
            ]);
            return Err(format!("could not start: {e}"));
        }
    };
    crate::interrupt::set_child(pid);
    let running = Running;
    // SAFETY: closing the write ends (the child has its own) and making our
    // read ends non-blocking; all are open descriptors of ours.
    unsafe {
        libc::close(out.write);
        libc::close(err.write);
        libc::close(res.write);
        for fd in [out.read, err.read, res.read] {
            libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK);
        }
    }
    let err_file = output.file.as_ref().map(|p| {
        let mut e = p.as_os_str().to_owned();
        e.push(".err");
        std::path::PathBuf::from(e)
    });
    let mut watched = Watched {
        out: Capture::new(output.max, output.file.clone()),
        err: Capture::new(output.max, err_file),
        result: Vec::new(),
        status: 0,
        timed_out: false,
        over_cpu: false,
    };
    watch(
        pid,
        [out.read, err.read, res.read],
        timeout,
        output,
        &mut watched,
    );
    drop(running);
    child::close(&[out.read, err.read, res.read]);
    let failed = failure(&watched, timeout, output);
    let stdout_text = watched.out.text("standard output");
    let stderr_text = watched.err.text("standard error");
    if let Some(why) = failed {
        let mut msg = why;
        if !stdout_text.is_empty() {
            msg.push_str(&format!("; it printed:\n{}", stdout_text.trim_end()));
        }
        if !stderr_text.is_empty() {
            msg.push_str(&format!("\non standard error:\n{}", stderr_text.trim_end()));
        }
        return Err(msg);
    }
    Ok(decode(&watched.result, plan, stdout_text, stderr_text))
}

/// Three pipes (standard output, standard error, the result), or why not.
fn open_pipes() -> Result<[child::Pipe; 3], String> {
    let mut pipes = Vec::with_capacity(3);
    for _ in 0..3 {
        match child::pipe() {
            Ok(p) => pipes.push(p),
            Err(e) => {
                child::close(
                    &pipes
                        .iter()
                        .flat_map(|p: &child::Pipe| [p.read, p.write])
                        .collect::<Vec<_>>(),
                );
                return Err(format!("could not start: {e}"));
            }
        }
    }
    Ok([pipes[0], pipes[1], pipes[2]])
}

/// The child's side: the pipes as its standard output and error, its
/// standard input the program's or nothing, the call (`child_work`), its
/// result written to the third pipe, and the end.
fn in_the_child(
    f: super::Packed,
    index: u32,
    slots: &[u64],
    plan: Plan,
    [out, err, res]: [child::Pipe; 3],
) -> ! {
    // The child: only async-signal-safe work around the call.
    // SAFETY: the descriptors are the pipes' ends, stdout/stderr are
    // C's own streams, and `msg` is a local array the write reads
    // `n * 8` bytes of (child_work returns n ≤ its length).
    unsafe {
        libc::close(out.read);
        libc::close(err.read);
        libc::close(res.read);
        libc::dup2(out.write, 1);
        libc::dup2(err.write, 2);
        libc::setvbuf(stdout, std::ptr::null_mut(), libc::_IONBF, 0);
        libc::setvbuf(stderr, std::ptr::null_mut(), libc::_IONBF, 0);
        // Standard input: the program's, or nothing (not the
        // terminal or the kernel's input the session reads).
        let input = match plan {
            Plan::Exec { stdin, .. } if stdin >= 0 => stdin,
            _ => libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY),
        };
        if input > 0 {
            libc::dup2(input, 0);
            libc::close(input);
        }
        child::default_signals();
        let mut msg = [0u64; MAX_REPEAT + 3];
        let n = child_work(f, index, slots, plan, &mut msg, res.write);
        libc::write(res.write, msg.as_ptr() as *const libc::c_void, n * 8);
        libc::_exit(0);
    }
}

/// What the session saw of a child: what it printed, its result's bytes,
/// how it ended.
struct Watched {
    out: Capture,
    err: Capture,
    result: Vec<u8>,
    /// Its wait status.
    status: i32,
    /// Stopped: out of time, or of processor time (`over_cpu`).
    timed_out: bool,
    over_cpu: bool,
}

/// The processor time child `pid` has used, when `cpu` limits it (and the
/// kernel gives its clock).
fn cpu_clock(pid: i32, cpu: Option<Duration>) -> impl Fn() -> Option<Duration> {
    let clock = cpu.and_then(|_| {
        let mut clock: libc::clockid_t = 0;
        // SAFETY: asks for the CPU-time clock of our own child; `clock` is
        // a valid out-pointer.
        (unsafe { libc::clock_getcpuclockid(pid, &mut clock) } == 0).then_some(clock)
    });
    move || {
        clock.map(|clock| {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: reads a clock id the kernel gave for our child into
            // a valid timespec.
            unsafe { libc::clock_gettime(clock, &mut t) };
            Duration::new(
                t.tv_sec.max(0) as u64,
                t.tv_nsec.clamp(0, 999_999_999) as u32,
            )
        })
    }
}

/// Whether `r` is a whole result: [ret, ns or number, repeat count,
/// repeat times…], as child_work writes it.
fn complete(r: &[u8]) -> bool {
    r.len() >= 24
        && u64::from_ne_bytes(r[16..24].try_into().unwrap_or([0; 8]))
            .checked_add(3)
            .and_then(|words| words.checked_mul(8))
            == Some(r.len() as u64)
}

/// Reads the child's pipes (`fds`: output, error, result) until its result
/// is whole, it ends, or it runs out of time or processor time (then it is
/// killed); then what is left in them.
fn watch(pid: i32, fds: [i32; 3], timeout: Duration, output: &OutputSpec, w: &mut Watched) {
    let start = Instant::now();
    let cpu_used = cpu_clock(pid, output.cpu);
    let mut buf = vec![0u8; 1 << 16];
    let mut chunk = Vec::new();
    let mut drain_all = |w: &mut Watched| {
        for (i, fd) in fds.into_iter().enumerate() {
            chunk.clear();
            child::drain(fd, &mut chunk, &mut buf);
            match i {
                0 => w.out.push(&chunk),
                1 => w.err.push(&chunk),
                _ => w.result.extend_from_slice(&chunk),
            }
        }
    };
    loop {
        let mut polled = fds.map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        // SAFETY: `polled` is a valid array of three pollfds.
        unsafe { libc::poll(polled.as_mut_ptr(), 3, 5) };
        drain_all(w);
        // The result is the child's last write: once it is all here, what
        // the call printed is in the pipes too, and the child's exit
        // (unmapping its copy of the session's memory) is waited for on a
        // thread of its own.
        if complete(&w.result) {
            std::thread::spawn(move || {
                let mut status = 0;
                // SAFETY: reaps our own child, whose pid nothing else waits
                // for.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            });
            break;
        }
        // SAFETY: waiting for our own child; `status` is a valid int.
        let done = unsafe { libc::waitpid(pid, &mut w.status, libc::WNOHANG) };
        if done == pid {
            break;
        }
        w.over_cpu = matches!((cpu_used(), output.cpu), (Some(used), Some(most)) if used > most);
        if start.elapsed() > timeout || w.over_cpu {
            // SAFETY: `pid` is our unreaped child, so the signal reaches no
            // other process; then it is reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut w.status, 0);
            }
            w.timed_out = true;
            break;
        }
    }
    drain_all(w);
}

/// Why the child gave no result (stopped, killed by a signal, exited
/// early), if it did not.
fn failure(w: &Watched, timeout: Duration, output: &OutputSpec) -> Option<String> {
    let status = w.status;
    if w.timed_out && w.over_cpu {
        return Some(format!(
            "used more than {:.2} s of processor time and was stopped",
            output.cpu.unwrap_or_default().as_secs_f64()
        ));
    }
    if w.timed_out {
        return Some(format!(
            "did not finish within {:.1} s and was stopped",
            timeout.as_secs_f64()
        ));
    }
    if libc::WIFSIGNALED(status) {
        return Some(child::signal_name(libc::WTERMSIG(status)));
    }
    if w.result.len() < 24 {
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        };
        return Some(format!("exited (status {code}) before returning"));
    }
    None
}

/// A whole result (at least 24 bytes) as a [`Run`].
fn decode(result: &[u8], plan: Plan, printed: String, on_stderr: String) -> Run {
    let words: Vec<u64> = result
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let repeats = words[3..]
        .iter()
        .map(|&ns| Duration::from_nanos(ns))
        .collect::<Vec<_>>();
    let (elapsed, number) = match plan {
        Plan::Call | Plan::Exec { .. } => (Duration::from_nanos(words[1]), 1),
        Plan::Time { .. } => (Duration::ZERO, words[1]),
    };
    Run {
        ret: words[0],
        stdout: printed,
        stderr: on_stderr,
        elapsed,
        number,
        repeats,
    }
}
