//! Running JIT-compiled code in a forked child, so that a crash or a hang
//! costs the child, not the session.
//!
//! The child makes its stdout and stderr one pipe (unbuffered, so output
//! written before a crash is kept), calls the packed function, writes the
//! result and the call's duration to a second pipe and `_exit`s. It calls
//! nothing else: no allocation, no LLVM. The parent reads both pipes while
//! it waits, kills the child at the time limit, and turns a signal into a
//! message.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// A finished call.
pub(crate) struct Run {
    pub ret: u64,
    pub output: String,
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
fn child_work(f: super::Packed, slots: &[u64], plan: Plan, msg: &mut [u64]) -> usize {
    let t0 = now_ns();
    let ret = unsafe { f(slots.as_ptr()) };
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
            let min_ns = min_repeat_ms * 1_000_000;
            let time = |n: u64| {
                let t0 = now_ns();
                for _ in 0..n {
                    std::hint::black_box(unsafe { f(slots.as_ptr()) });
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
                    number = (min_ns / per_call + 1).max((number as f64 * 1.618) as u64 + 1);
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

fn signal_name(sig: i32) -> String {
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

/// The child running JIT-compiled code now, if any (0: none).
static RUNNING: AtomicI32 = AtomicI32::new(0);

/// Interrupts the JIT-compiled code running now, as Ctrl-C would (SIGINT to
/// the child): the call ends with "was interrupted" and the session stays as
/// it was. Safe to call from any thread, or from a signal handler. Returns
/// whether something was running.
pub fn interrupt() -> bool {
    let pid = RUNNING.load(Ordering::SeqCst);
    pid > 0 && unsafe { libc::kill(pid, libc::SIGINT) } == 0
}

/// Clears [`RUNNING`] when the parent stops waiting, however it stops.
struct Running;

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.store(0, Ordering::SeqCst);
    }
}

/// Calls `f(slots, &mut ret)` in a child; the error says what went wrong,
/// with whatever the function printed.
pub(crate) fn run(
    f: super::Packed,
    slots: &[u64],
    timeout: Duration,
    plan: Plan,
) -> Result<Run, String> {
    let mut out = [0i32; 2];
    let mut res = [0i32; 2];
    unsafe {
        if libc::pipe(out.as_mut_ptr()) != 0 || libc::pipe(res.as_mut_ptr()) != 0 {
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
            libc::close(res[0]);
            libc::dup2(out[1], 1);
            libc::dup2(out[1], 2);
            libc::setvbuf(stdout, std::ptr::null_mut(), libc::_IONBF, 0);
            libc::setvbuf(stderr, std::ptr::null_mut(), libc::_IONBF, 0);
            // Default actions, unblocked: Rust's own handlers would turn a
            // stack overflow into an abort with a message of their own, and
            // a front end ignores SIGINT while a call runs so that Ctrl-C
            // ends the call, not the session.
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
            let mut msg = [0u64; MAX_REPEAT + 3];
            let n = child_work(f, slots, plan, &mut msg);
            libc::write(res[1], msg.as_ptr() as *const libc::c_void, n * 8);
            libc::_exit(0);
        }
    }
    RUNNING.store(pid, Ordering::SeqCst);
    let running = Running;
    unsafe {
        libc::close(out[1]);
        libc::close(res[1]);
        libc::fcntl(out[0], libc::F_SETFL, libc::O_NONBLOCK);
        libc::fcntl(res[0], libc::F_SETFL, libc::O_NONBLOCK);
    }
    let start = Instant::now();
    let mut output = Vec::new();
    let mut result = Vec::new();
    let mut status = 0;
    let mut timed_out = false;
    let mut buf = [0u8; 65536];
    let drain = |fd: i32, into: &mut Vec<u8>, buf: &mut [u8]| loop {
        let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if n <= 0 {
            break;
        }
        into.extend_from_slice(&buf[..n as usize]);
    };
    loop {
        let mut fds = [
            libc::pollfd {
                fd: out[0],
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: res[0],
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        unsafe { libc::poll(fds.as_mut_ptr(), 2, 5) };
        drain(out[0], &mut output, &mut buf);
        drain(res[0], &mut result, &mut buf);
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
    drain(out[0], &mut output, &mut buf);
    drain(res[0], &mut result, &mut buf);
    unsafe {
        libc::close(out[0]);
        libc::close(res[0]);
    }
    let output = String::from_utf8_lossy(&output).into_owned();
    let with_output = |msg: String| {
        if output.is_empty() {
            msg
        } else {
            format!("{msg}; it printed:\n{}", output.trim_end())
        }
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
        output,
        elapsed,
        number,
        repeats,
    })
}
