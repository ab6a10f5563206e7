//! Running JIT-compiled code in a forked child, so that a crash or a hang
//! costs the child, not the session.
//!
//! The child makes its stdout and stderr one pipe (unbuffered, so output
//! written before a crash is kept), calls the packed function, writes the
//! result and the call's duration to a second pipe and `_exit`s. It calls
//! nothing else: no allocation, no LLVM. The parent reads both pipes while
//! it waits, kills the child at the time limit, and turns a signal into a
//! message.

use std::time::{Duration, Instant};

/// A finished call.
pub(crate) struct Run {
    pub ret: u64,
    pub output: String,
    pub elapsed: Duration,
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
        other => format!("was killed by signal {other}"),
    }
}

/// Calls `f(slots, &mut ret)` in a child; the error says what went wrong,
/// with whatever the function printed.
pub(crate) fn run(
    f: unsafe extern "C" fn(*const u64, *mut u64),
    slots: &[u64],
    timeout: Duration,
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
            // Default actions: Rust's own handlers would turn a stack
            // overflow into an abort with a message of their own.
            for sig in [
                libc::SIGSEGV,
                libc::SIGBUS,
                libc::SIGFPE,
                libc::SIGILL,
                libc::SIGABRT,
                libc::SIGTRAP,
            ] {
                libc::signal(sig, libc::SIG_DFL);
            }
            let mut ret: u64 = 0;
            let mut t0 = std::mem::zeroed::<libc::timespec>();
            let mut t1 = std::mem::zeroed::<libc::timespec>();
            libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t0);
            f(slots.as_ptr(), &mut ret);
            libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t1);
            let ns =
                (t1.tv_sec - t0.tv_sec) as i64 * 1_000_000_000 + (t1.tv_nsec - t0.tv_nsec) as i64;
            let msg: [u64; 2] = [ret, ns as u64];
            libc::write(res[1], msg.as_ptr() as *const libc::c_void, 16);
            libc::_exit(0);
        }
    }
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
    if result.len() < 16 {
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        };
        return Err(with_output(format!(
            "exited (status {code}) before returning"
        )));
    }
    let ret = u64::from_ne_bytes(result[..8].try_into().unwrap_or([0; 8]));
    let ns = u64::from_ne_bytes(result[8..16].try_into().unwrap_or([0; 8]));
    Ok(Run {
        ret,
        output,
        elapsed: Duration::from_nanos(ns),
    })
}
