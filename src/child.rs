//! Forked children: the one home of the pipe, fork and wait code that keeps
//! risky work (JIT-compiled calls, code generation, a `:tune` search) away
//! from the session. A crash, a hang or an LLVM fatal error costs the child;
//! the parent reads its pipes while it waits, kills it on an interrupt or a
//! time limit, and turns how it ended into words ([`signal_name`]).
//!
//! [`spawn`] is the common shape: the child's stdout and stderr go to one
//! pipe ("what it said"), and it writes its result to another;
//! [`in_child`] runs work there and brings its bytes back (code
//! generation, the C and C++ front end). The JIT's
//! call ([`crate::jit`]'s isolate) needs three pipes and a child that does
//! not allocate, so it uses the pieces ([`pipe`], [`fork`],
//! [`default_signals`], [`drain`]) directly.
//!
//! It is also where the layers above find the other system calls they
//! need ([`wait_readable`], [`make_fifo`], [`kill_group`], [`exit_now`],
//! [`hostname`], …) as safe functions: above the LLVM boundary no module
//! holds `unsafe` code (`tests/layers.rs`).

/// The ends of one pipe.
#[derive(Clone, Copy, Debug)]
pub struct Pipe {
    pub read: i32,
    pub write: i32,
}

/// A new pipe.
pub fn pipe() -> Result<Pipe, String> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid array of two ints, as pipe(2) requires.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    Ok(Pipe {
        read: fds[0],
        write: fds[1],
    })
}

/// Which side of a [`fork`] this is.
pub enum Side {
    Parent { pid: i32 },
    Child,
}

/// Flushes C's stdio (so that nothing buffered is written twice) and forks.
pub fn fork() -> Result<Side, String> {
    // LLVM's one-time initializations (its targets, the statics writing
    // bitcode sets up) are done, or waited for, before the fork: a child
    // must not find one half done by another thread (`plab_init_targets`).
    // SAFETY: no arguments; runs its initialization once.
    unsafe { crate::ffi::plab_init_targets() };
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fflush(NULL) flushes every open stdio stream; fork has no
    // preconditions. The child is the only thread of its process: it must
    // not rely on locks other threads held (glibc keeps malloc usable).
    // prctl and getppid are async-signal-safe calls with valid arguments.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        match libc::fork() {
            pid if pid < 0 => Err(format!("fork: {}", std::io::Error::last_os_error())),
            0 => {
                // A child ends with the thread that forked it: a parent
                // that kills its child by pid (a time limit, a budget, an
                // interrupt) ends the child's own children too, which
                // otherwise ran on (a reduction candidate's JIT call,
                // looping, outlived a hunt by 23 minutes). If the parent is
                // gone already, the child ends here.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(Side::Child)
            }
            pid => Ok(Side::Parent { pid }),
        }
    }
}

/// Default actions, unblocked, for the signals a crash or Ctrl-C raises:
/// Rust's own handlers would turn a stack overflow into an abort with a
/// message of their own, and a front end ignores SIGINT while a command
/// runs so that Ctrl-C ends the child, not the session. For the child,
/// right after [`fork`].
pub fn default_signals() {
    // SAFETY: a zeroed sigset_t is a valid argument to sigemptyset, and
    // signal/sigaddset/pthread_sigmask are async-signal-safe calls on
    // valid signal numbers and a local set.
    unsafe {
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
}

/// How a signal ended a process, in words that say what usually causes it.
pub fn signal_name(sig: i32) -> String {
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
        libc::SIGXCPU => "ran past its processor-time limit (SIGXCPU)".into(),
        other => format!("was killed by signal {other}"),
    }
}

/// Limits this process's processor time to `seconds`, for a forked child
/// reading what came from outside: past it the kernel ends the child with
/// SIGXCPU (and SIGKILL a second later), so that input that sends LLVM
/// into an endless loop costs an error, not the session's wait. No core
/// file is written for it.
pub fn limit_processor_time(seconds: u64) {
    let cpu = libc::rlimit {
        rlim_cur: seconds,
        rlim_max: seconds + 1,
    };
    let core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid rlimit values for this process; lowering a limit needs
    // no privilege.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &core);
        libc::setrlimit(libc::RLIMIT_CPU, &cpu);
    }
}

/// How a wait status ended: "exited with status N" or [`signal_name`].
pub fn how_it_ended(status: i32) -> String {
    if libc::WIFSIGNALED(status) {
        signal_name(libc::WTERMSIG(status))
    } else {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    }
}

/// Reads what a non-blocking `fd` has into `into`; true at end of file.
pub fn drain(fd: i32, into: &mut Vec<u8>, buf: &mut [u8]) -> bool {
    loop {
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n == 0 {
            return true;
        }
        if n < 0 {
            return false;
        }
        into.extend_from_slice(&buf[..n as usize]);
    }
}

/// Writes all of `bytes` to `fd`; false if it could not.
pub fn write_all(fd: i32, bytes: &[u8]) -> bool {
    let mut written = 0;
    while written < bytes.len() {
        // SAFETY: the range is within `bytes`.
        let n = unsafe { libc::write(fd, bytes[written..].as_ptr().cast(), bytes.len() - written) };
        if n <= 0 {
            return false;
        }
        written += n as usize;
    }
    true
}

/// A child from [`spawn`]: the read ends of what it said (stdout and stderr)
/// and of its result, both non-blocking.
pub struct Child {
    pub pid: i32,
    pub said: i32,
    pub result: i32,
}

/// Forks a child that runs `work` with its stdout and stderr sent to one
/// pipe and the write end of a second pipe as its argument; `work`'s
/// return value is the child's exit status (72 if it panics). The child
/// never returns from here.
pub fn spawn(work: impl FnOnce(i32) -> i32) -> Result<Child, String> {
    let said = pipe()?;
    let result = pipe().inspect_err(|_| close(&[said.read, said.write]))?;
    match fork() {
        Err(e) => {
            close(&[said.read, said.write, result.read, result.write]);
            Err(e)
        }
        Ok(Side::Child) => {
            close(&[said.read, result.read]);
            // SAFETY: both descriptors are open; dup2 onto 1 and 2 is what
            // sends the child's output to the parent.
            unsafe {
                libc::dup2(said.write, 1);
                libc::dup2(said.write, 2);
            }
            default_signals();
            let out = result.write;
            let code =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(out))).unwrap_or(72);
            // SAFETY: _exit ends the child without running the parent's
            // destructors or atexit handlers, which are not the child's.
            unsafe { libc::_exit(code) }
        }
        Ok(Side::Parent { pid }) => {
            close(&[said.write, result.write]);
            for fd in [said.read, result.read] {
                // SAFETY: fd is an open descriptor of ours.
                unsafe { libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK) };
            }
            Ok(Child {
                pid,
                said: said.read,
                result: result.read,
            })
        }
    }
}

impl Child {
    /// Waits up to `ms` milliseconds for either pipe to have something.
    pub fn poll(&self, ms: i32) {
        let mut fds = [self.said, self.result].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        // SAFETY: `fds` is a valid array of two pollfds.
        unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
    }

    /// The wait status if the child has ended (it is then reaped).
    pub fn try_wait(&self) -> Option<i32> {
        let mut status = 0;
        // SAFETY: waiting for our own child, status a valid int.
        (unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) } == self.pid)
            .then_some(status)
    }

    /// Waits for the child to end; its wait status.
    pub fn wait(&self) -> i32 {
        let mut status = 0;
        // SAFETY: as in try_wait.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
        status
    }

    /// Kills the child and reaps it; its wait status.
    pub fn kill(&self) -> i32 {
        // SAFETY: the pid is our unreaped child, so it names no other
        // process.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        self.wait()
    }

    /// Closes the read ends.
    pub fn close(&self) {
        close(&[self.said, self.result]);
    }
}

/// Closes descriptors of ours.
pub fn close(fds: &[i32]) {
    for &fd in fds {
        // SAFETY: closing a descriptor this process owns.
        unsafe { libc::close(fd) };
    }
}

/// How work in a child went wrong.
pub enum ChildError {
    /// An interrupt stopped it.
    Interrupted,
    /// It failed: what it printed (its message, or what it printed before
    /// it died), and how it ended ([`how_it_ended`]; empty when it could
    /// not be started).
    Failed { said: String, how: String },
}

impl ChildError {
    /// What it printed, or, if nothing, `who` and how it ended ("the
    /// compiler crashed with SIGSEGV ...").
    pub fn message(&self, who: &str) -> String {
        match self {
            ChildError::Interrupted => format!("{who} was interrupted"),
            ChildError::Failed { said, how } if said.is_empty() => format!("{who} {how}"),
            ChildError::Failed { said, .. } => said.clone(),
        }
    }
}

/// Runs `work` in a forked child and returns the bytes it produced. The
/// child may use LLVM and allocate (it is the only thread of the child;
/// glibc makes malloc safe after fork); whatever it prints (LLVM's fatal
/// errors, MC errors) becomes the error if it fails, exits or dies. An
/// interrupt (`passlab::interrupt`) kills it, and a request pending when
/// it ends (or its death by SIGINT) makes it [`ChildError::Interrupted`]
/// even if it had finished.
pub fn in_child(
    work: impl FnOnce() -> std::result::Result<Vec<u8>, String>,
) -> Result<Vec<u8>, ChildError> {
    in_child_streamed(|_| work(), &mut |_| {})
}

/// A frame's length word with this bit set carries streamed bytes; without
/// it, the result.
const STREAMED: u64 = 1 << 63;

/// As [`in_child`], and what `work` sends through its argument while it
/// runs (the back end's probes' record, hundreds of megabytes for a whole
/// program) reaches `on_stream` as it comes, in order, on this thread:
/// neither side holds all of it twice, and the session reads while the
/// child still compiles. Streamed bytes come before the result; if the
/// child fails, what it streamed was still handed over.
pub fn in_child_streamed(
    work: impl FnOnce(&mut dyn FnMut(&[u8])) -> std::result::Result<Vec<u8>, String>,
    on_stream: &mut dyn FnMut(&[u8]),
) -> Result<Vec<u8>, ChildError> {
    // Each part goes out with its length first, so that the session has the
    // result as soon as it is complete: the child's exit (unmapping its
    // copy of the session's memory) takes milliseconds, and is waited for
    // on a thread of its own.
    let c = spawn(|out| send_framed(work, out)).map_err(|said| ChildError::Failed {
        said,
        how: String::new(),
    })?;
    let mut said = Vec::new();
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut interrupted = false;
    let status = loop {
        c.poll(5);
        // Before a finished child's result is taken: a request that came
        // while it finished is the caller's to see as an error, not lost
        // between two children (a project's load forks one per unit).
        if crate::interrupt::requested() {
            interrupted = true;
            break c.kill();
        }
        drain(c.said, &mut said, &mut buf);
        let done = drain(c.result, &mut bytes, &mut buf);
        let complete = take_frames(&mut bytes, on_stream);
        if done && complete {
            c.close();
            reap_later(c.pid);
            bytes.drain(..8);
            return Ok(bytes);
        }
        if let Some(status) = c.try_wait() {
            break status;
        }
    };
    drain(c.said, &mut said, &mut buf);
    drain(c.result, &mut bytes, &mut buf);
    let complete = take_frames(&mut bytes, on_stream);
    c.close();
    // A child that died of SIGINT was interrupted too: Ctrl-C in a
    // terminal reaches the whole foreground process group, and the child
    // (default signals) may die of it before this loop sees the request
    // the REPL's handler makes; that is no crash of the child's work.
    let by_sigint = libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGINT;
    if interrupted || by_sigint || crate::interrupt::requested() {
        return Err(ChildError::Interrupted);
    }
    let said = String::from_utf8_lossy(&said).trim().to_string();
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 && complete {
        bytes.drain(..8);
        return Ok(bytes);
    }
    Err(ChildError::Failed {
        said,
        how: how_it_ended(status),
    })
}

/// The child's side of [`in_child_streamed`]: runs `work`, writing what
/// it streams and then its result to `out` as frames, each length first;
/// the child's exit status (71: `work` failed, saying why on stderr; 74: a
/// write failed).
fn send_framed(
    work: impl FnOnce(&mut dyn FnMut(&[u8])) -> std::result::Result<Vec<u8>, String>,
    out: i32,
) -> i32 {
    let mut failed_to_send = false;
    let mut send = |bytes: &[u8]| {
        let len = (bytes.len() as u64 | STREAMED).to_le_bytes();
        // Once a write fails, nothing more is sent.
        if !failed_to_send {
            failed_to_send = !(write_all(out, &len) && write_all(out, bytes));
        }
    };
    match work(&mut send) {
        Ok(bytes) => {
            let len = (bytes.len() as u64).to_le_bytes();
            if !failed_to_send && write_all(out, &len) && write_all(out, &bytes) {
                close(&[out]);
                0
            } else {
                74
            }
        }
        Err(message) => {
            write_all(2, message.as_bytes());
            71
        }
    }
}

/// Hands the complete streamed frames at the front of `bytes` to
/// `on_stream` and drops them; true when what is left is the whole result.
fn take_frames(bytes: &mut Vec<u8>, on_stream: &mut dyn FnMut(&[u8])) -> bool {
    let mut at = 0;
    let complete = loop {
        let Some(word) = bytes.get(at..at + 8).and_then(|b| b.try_into().ok()) else {
            break false;
        };
        let word = u64::from_le_bytes(word);
        let len = usize::try_from(word & !STREAMED).unwrap_or(usize::MAX);
        let have = bytes.len() - at - 8;
        if word & STREAMED == 0 {
            // The length comes first: room for all of it at once, rather
            // than copying a large answer (a whole program's machine code)
            // as the buffer doubles. A length beyond what can be had is
            // left to grow as it comes.
            let _ = bytes.try_reserve(len.saturating_sub(have));
            break have == len;
        }
        if have < len {
            break false;
        }
        on_stream(&bytes[at + 8..at + 8 + len]);
        at += 8 + len;
    };
    bytes.drain(..at);
    complete
}

/// Waits for child `pid` on a thread of its own: its exit (unmapping its
/// copy of the session's memory) takes milliseconds.
fn reap_later(pid: i32) {
    std::thread::spawn(move || {
        let mut status = 0;
        // SAFETY: reaps our own child, whose pid nothing else waits for.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    });
}

// The other system calls the layers above need, behind safe functions, so
// that only the base layer and the LLVM boundary hold `unsafe` code
// (`tests/layers.rs`).

/// Waits up to `ms` milliseconds until one of `fds` (descriptors of ours)
/// can be read (or is closed); returns early on a signal.
pub fn wait_readable(fds: &[i32], ms: i32) {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `polls` is a valid array of `polls.len()` pollfds, alive and
    // writable for the call.
    unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, ms) };
}

/// Makes a FIFO at `path`, readable and writable by its owner only.
pub fn make_fifo(path: &std::path::Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| std::io::Error::other("the path holds a NUL byte"))?;
    // SAFETY: mkfifo reads the NUL-terminated path, alive for the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Makes reads of `fd` (a descriptor of ours) return at once when there is
/// nothing to read.
pub fn set_nonblocking(fd: i32) {
    // SAFETY: setting a flag of a descriptor this process owns.
    unsafe { libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK) };
}

/// Kills the process group `group` (a child made the leader of its own
/// group), so that what it started goes too.
pub fn kill_group(group: u32) {
    if let Ok(g) = i32::try_from(group) {
        if g > 0 {
            // SAFETY: a signal to a process group this process made.
            unsafe { libc::kill(-g, libc::SIGKILL) };
        }
    }
}

/// Ends this process (a forked child) at once with `code`: no exit
/// handlers, no destructors, nothing flushed but what was written.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` ends the process; nothing after it runs.
    unsafe { libc::_exit(code) }
}

/// This machine's host name ("unknown" if it cannot be read).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for `buf.len()` bytes and `gethostname`
    // writes at most that many; a missing NUL (truncation) is handled below.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    if ok {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "unknown".into()
    }
}

/// Reserves `bytes` of address space that nothing may touch, for the rest
/// of this process's life (a forked child's): what is mapped next goes
/// elsewhere.
pub fn reserve_address_space(bytes: usize) {
    // SAFETY: an anonymous mapping without access, of this process's own,
    // never used; the kernel picks where.
    unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(c: &Child) -> (Vec<u8>, Vec<u8>, i32) {
        let (mut said, mut result, mut buf) = (Vec::new(), Vec::new(), vec![0u8; 4096]);
        let status = loop {
            c.poll(5);
            drain(c.said, &mut said, &mut buf);
            drain(c.result, &mut result, &mut buf);
            if let Some(s) = c.try_wait() {
                break s;
            }
        };
        drain(c.said, &mut said, &mut buf);
        drain(c.result, &mut result, &mut buf);
        c.close();
        (said, result, status)
    }

    #[test]
    fn a_child_says_returns_and_exits() {
        // Not eprint!: the test harness captures it (and a lock another
        // thread holds at the fork would never be released in the child).
        let c = spawn(|out| {
            write_all(2, b"hello");
            write_all(out, b"result");
            3
        })
        .unwrap();
        let (said, result, status) = collect(&c);
        assert_eq!(
            (said.as_slice(), result.as_slice()),
            (&b"hello"[..], &b"result"[..])
        );
        assert_eq!(how_it_ended(status), "exited with status 3");
    }

    #[test]
    fn a_crash_is_named_and_a_panic_exits_72() {
        let c = spawn(|_| {
            // SAFETY: the child raises a signal at itself on purpose.
            unsafe { libc::raise(libc::SIGSEGV) };
            0
        })
        .unwrap();
        assert!(how_it_ended(collect(&c).2).contains("SIGSEGV"));
        // resume_unwind unwinds without the panic hook, which prints (see
        // above).
        let c = spawn(|_| std::panic::resume_unwind(Box::new(0))).unwrap();
        assert_eq!(how_it_ended(collect(&c).2), "exited with status 72");
    }

    #[test]
    fn a_child_past_its_processor_time_limit_is_ended_and_named() {
        let started = std::time::Instant::now();
        let c = spawn(|_| {
            limit_processor_time(1);
            loop {
                std::hint::spin_loop();
            }
        })
        .unwrap();
        let how = how_it_ended(collect(&c).2);
        assert_eq!(how, "ran past its processor-time limit (SIGXCPU)");
        // (a second of processor time; slower on a loaded machine)
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }

    #[test]
    fn a_childs_own_child_ends_when_the_child_is_killed() {
        // The child forks a grandchild that spins, says its pid, and waits.
        let c = spawn(|out| {
            let pid = match fork() {
                Ok(Side::Parent { pid }) => pid,
                Ok(Side::Child) => loop {
                    std::hint::spin_loop();
                },
                Err(_) => return 1,
            };
            write_all(out, pid.to_string().as_bytes());
            loop {
                // SAFETY: pause has no preconditions.
                unsafe { libc::pause() };
            }
        })
        .unwrap();
        let (mut result, mut buf) = (Vec::new(), vec![0u8; 64]);
        while result.is_empty() {
            c.poll(50);
            drain(c.result, &mut result, &mut buf);
        }
        let grandchild: i32 = String::from_utf8_lossy(&result).parse().unwrap();
        c.kill();
        c.close();
        // Killed by the kernel as its parent died: gone, or a zombie until
        // init reaps it.
        let gone = || {
            std::fs::read_to_string(format!("/proc/{grandchild}/stat")).map_or(true, |s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
        };
        let start = std::time::Instant::now();
        while !gone() {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "the grandchild {grandchild} outlived its parent"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
