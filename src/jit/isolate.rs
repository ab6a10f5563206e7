//! Running what could end the session in a forked child, so that a crash,
//! a hang or a fatal error costs the child, not the session: JIT-compiled
//! code ([`run`]) and code generation ([`in_child`]).
//!
//! For a call, the child sends stdout and stderr through two pipes
//! (unbuffered, so output written before a crash is kept), calls the packed
//! function, writes the result and the call's duration to a third pipe and
//! `_exit`s. It calls nothing else: no allocation, no LLVM. The parent
//! reads the pipes while it waits (keeping the beginning and the end of
//! each stream, up to a cap, and optionally all of it in a file), kills the
//! child at the time limit or on an interrupt, and turns a signal into a
//! message.

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
    /// TVM's time evaluator: one warm-up call; `number` calls per repeat,
    /// grown until a repeat lasts at least `min_repeat_ms`; `repeat` repeats.
    Time {
        number: u64,
        repeat: usize,
        min_repeat_ms: u64,
    },
}

fn now_ns() -> u64 {
    let mut t = unsafe { std::mem::zeroed::<libc::timespec>() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Runs the plan in the child; fills `msg` with [ret, ns of the first
/// call or number, repeat count, repeat times…] and returns its length.
fn child_work(f: super::Packed, index: u32, slots: &[u64], plan: Plan, msg: &mut [u64]) -> usize {
    let t0 = now_ns();
    let ret = unsafe { f(index, slots.as_ptr()) };
    let first = now_ns() - t0;
    msg[0] = ret;
    match plan {
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
                    std::hint::black_box(unsafe { f(index, slots.as_ptr()) });
                }
                now_ns() - t0
            };
            if min_ns > 0 {
                loop {
                    let t = time(number);
                    if t >= min_ns {
                        break;
                    }
                    // As TVM: aim just past the minimum, at least 1.618x more.
                    let per_call = (t / number).max(1);
                    number = (min_ns / per_call)
                        .saturating_add(1)
                        .max(((number as f64 * 1.618) as u64).saturating_add(1));
                }
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

pub(crate) fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGSEGV => "crashed with SIGSEGV (invalid memory access, or a stack overflow)".into(),
        libc::SIGFPE => "crashed with SIGFPE (arithmetic error such as division by zero)".into(),
        libc::SIGILL => {
            "crashed with SIGILL (illegal instruction, e.g. unreachable code reached)".into()
        }
        libc::SIGABRT => "aborted (SIGABRT)".into(),
        libc::SIGBUS => "crashed with SIGBUS (misaligned or unmapped memory)".into(),
        libc::SIGTRAP => "crashed with SIGTRAP (a trap instruction, e.g. llvm.trap)".into(),
        libc::SIGINT => "was interrupted".into(),
        other => format!("was killed by signal {other}"),
    }
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
    let mut out = [0i32; 2];
    let mut err = [0i32; 2];
    let mut res = [0i32; 2];
    unsafe {
        if libc::pipe(out.as_mut_ptr()) != 0
            || libc::pipe(err.as_mut_ptr()) != 0
            || libc::pipe(res.as_mut_ptr()) != 0
        {
            return Err(format!(
                "could not start: pipe: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    // Flush our own stdio so the child does not repeat buffered text.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!(
            "could not start: fork: {}",
            std::io::Error::last_os_error()
        ));
    }
    if pid == 0 {
        // The child: only async-signal-safe work around the call.
        unsafe {
            libc::close(out[0]);
            libc::close(err[0]);
            libc::close(res[0]);
            libc::dup2(out[1], 1);
            libc::dup2(err[1], 2);
            libc::setvbuf(stdout, std::ptr::null_mut(), libc::_IONBF, 0);
            libc::setvbuf(stderr, std::ptr::null_mut(), libc::_IONBF, 0);
            default_signals();
            let mut msg = [0u64; MAX_REPEAT + 3];
            let n = child_work(f, index, slots, plan, &mut msg);
            libc::write(res[1], msg.as_ptr() as *const libc::c_void, n * 8);
            libc::_exit(0);
        }
    }
    crate::interrupt::set_child(pid);
    let running = Running;
    unsafe {
        libc::close(out[1]);
        libc::close(err[1]);
        libc::close(res[1]);
        for fd in [out[0], err[0], res[0]] {
            libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK);
        }
    }
    let err_file = output.file.as_ref().map(|p| {
        let mut e = p.as_os_str().to_owned();
        e.push(".err");
        std::path::PathBuf::from(e)
    });
    let mut out_capture = Capture::new(output.max, output.file.clone());
    let mut err_capture = Capture::new(output.max, err_file);
    let start = Instant::now();
    let mut result = Vec::new();
    let mut status = 0;
    let mut timed_out = false;
    let mut buf = vec![0u8; 1 << 16];
    let drain = |fd: i32, buf: &mut [u8], sink: &mut dyn FnMut(&[u8])| loop {
        let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if n <= 0 {
            break;
        }
        sink(&buf[..n as usize]);
    };
    loop {
        let mut fds = [out[0], err[0], res[0]].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        unsafe { libc::poll(fds.as_mut_ptr(), 3, 5) };
        drain(out[0], &mut buf, &mut |d| out_capture.push(d));
        drain(err[0], &mut buf, &mut |d| err_capture.push(d));
        drain(res[0], &mut buf, &mut |d| result.extend_from_slice(d));
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            break;
        }
        if start.elapsed() > timeout {
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            timed_out = true;
            break;
        }
    }
    drop(running);
    drain(out[0], &mut buf, &mut |d| out_capture.push(d));
    drain(err[0], &mut buf, &mut |d| err_capture.push(d));
    drain(res[0], &mut buf, &mut |d| result.extend_from_slice(d));
    unsafe {
        libc::close(out[0]);
        libc::close(err[0]);
        libc::close(res[0]);
    }
    let stdout_text = out_capture.text("standard output");
    let stderr_text = err_capture.text("standard error");
    let with_output = |msg: String| {
        let mut msg = msg;
        if !stdout_text.is_empty() {
            msg.push_str(&format!("; it printed:\n{}", stdout_text.trim_end()));
        }
        if !stderr_text.is_empty() {
            msg.push_str(&format!("\non standard error:\n{}", stderr_text.trim_end()));
        }
        msg
    };
    if timed_out {
        return Err(with_output(format!(
            "did not finish within {:.1} s and was stopped",
            timeout.as_secs_f64()
        )));
    }
    if libc::WIFSIGNALED(status) {
        return Err(with_output(signal_name(libc::WTERMSIG(status))));
    }
    if result.len() < 24 {
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        };
        return Err(with_output(format!(
            "exited (status {code}) before returning"
        )));
    }
    let words: Vec<u64> = result
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let repeats = words[3..]
        .iter()
        .map(|&ns| Duration::from_nanos(ns))
        .collect::<Vec<_>>();
    let (elapsed, number) = match plan {
        Plan::Call => (Duration::from_nanos(words[1]), 1),
        Plan::Time { .. } => (Duration::ZERO, words[1]),
    };
    Ok(Run {
        ret: words[0],
        stdout: stdout_text,
        stderr: stderr_text,
        elapsed,
        number,
        repeats,
    })
}

/// Default actions, unblocked, for the signals a crash or Ctrl-C raises:
/// Rust's own handlers would turn a stack overflow into an abort with a
/// message of their own, and a front end ignores SIGINT while a command
/// runs so that Ctrl-C ends the child, not the session.
pub(crate) unsafe fn default_signals() {
    let mut unblock = std::mem::zeroed::<libc::sigset_t>();
    libc::sigemptyset(&mut unblock);
    for sig in [
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGFPE,
        libc::SIGILL,
        libc::SIGABRT,
        libc::SIGTRAP,
        libc::SIGINT,
    ] {
        libc::signal(sig, libc::SIG_DFL);
        libc::sigaddset(&mut unblock, sig);
    }
    libc::pthread_sigmask(libc::SIG_UNBLOCK, &unblock, std::ptr::null_mut());
}

/// How work in a child went wrong.
pub(crate) enum ChildError {
    /// An interrupt stopped it.
    Interrupted,
    /// It failed: its message, or what it printed before it died, or how.
    Failed(String),
}

/// Runs `work` in a forked child and returns the bytes it produced. The
/// child may use LLVM and allocate (it is the only thread of the child;
/// glibc makes malloc safe after fork); whatever it prints (LLVM's fatal
/// errors, MC errors) becomes the error if it fails, exits or dies. An
/// interrupt (`passlab::interrupt`) kills it.
pub(crate) fn in_child(
    work: impl FnOnce() -> std::result::Result<Vec<u8>, String>,
) -> Result<Vec<u8>, ChildError> {
    let mut msg = [0i32; 2];
    let mut res = [0i32; 2];
    unsafe {
        if libc::pipe(msg.as_mut_ptr()) != 0 || libc::pipe(res.as_mut_ptr()) != 0 {
            return Err(ChildError::Failed(format!(
                "pipe: {}",
                std::io::Error::last_os_error()
            )));
        }
        libc::fflush(std::ptr::null_mut());
    }
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(ChildError::Failed(format!(
            "fork: {}",
            std::io::Error::last_os_error()
        )));
    }
    if pid == 0 {
        unsafe {
            libc::close(msg[0]);
            libc::close(res[0]);
            libc::dup2(msg[1], 1);
            libc::dup2(msg[1], 2);
            default_signals();
            let code = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
                Ok(Ok(bytes)) => {
                    let mut written = 0;
                    while written < bytes.len() {
                        let n = libc::write(
                            res[1],
                            bytes[written..].as_ptr() as *const libc::c_void,
                            bytes.len() - written,
                        );
                        if n <= 0 {
                            libc::_exit(74);
                        }
                        written += n as usize;
                    }
                    0
                }
                Ok(Err(message)) => {
                    libc::write(2, message.as_ptr() as *const libc::c_void, message.len());
                    71
                }
                Err(_) => 72,
            };
            libc::_exit(code);
        }
    }
    unsafe {
        libc::close(msg[1]);
        libc::close(res[1]);
        libc::fcntl(msg[0], libc::F_SETFL, libc::O_NONBLOCK);
        libc::fcntl(res[0], libc::F_SETFL, libc::O_NONBLOCK);
    }
    let mut said = Vec::new();
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut status = 0;
    let mut interrupted = false;
    let drain = |fd: i32, into: &mut Vec<u8>, buf: &mut [u8]| loop {
        let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if n <= 0 {
            break;
        }
        into.extend_from_slice(&buf[..n as usize]);
    };
    loop {
        let mut fds = [msg[0], res[0]].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        unsafe { libc::poll(fds.as_mut_ptr(), 2, 5) };
        drain(msg[0], &mut said, &mut buf);
        drain(res[0], &mut bytes, &mut buf);
        if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
            break;
        }
        if crate::interrupt::requested() {
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            interrupted = true;
            break;
        }
    }
    drain(msg[0], &mut said, &mut buf);
    drain(res[0], &mut bytes, &mut buf);
    unsafe {
        libc::close(msg[0]);
        libc::close(res[0]);
    }
    if interrupted {
        return Err(ChildError::Interrupted);
    }
    let said = String::from_utf8_lossy(&said).trim().to_string();
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Ok(bytes);
    }
    let how = if libc::WIFSIGNALED(status) {
        signal_name(libc::WTERMSIG(status))
    } else {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    };
    Err(ChildError::Failed(if said.is_empty() {
        format!("the compiler {how}")
    } else {
        said
    }))
}
