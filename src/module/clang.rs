//! C and C++ to LLVM IR with clang-19's own driver and front end
//! (libclang-cpp, through the shim), on the command line the clang-19
//! executable would get, in a forked child of the session: a crash of
//! clang costs the child. The module comes back as bitcode.
//!
//! What comes back is clang's hand-over ([`Level`]): the IR clang's own
//! optimization pipeline receives at that level (`clang-19 -O2 -Xclang
//! -disable-llvm-passes`), so that a pipeline run on it is what `clang-19
//! -O2` runs. clang's resource directory is found from the executable's
//! path, and cc1's `-disable-free` is turned off, since a session outlives
//! a compile. Diagnostics come back as clang prints them.

use super::lang::Lang;
use crate::ffi;
use crate::{Error, Result};
use std::ffi::CString;
use std::path::{Path, PathBuf};

pub(crate) enum Input<'a> {
    File(&'a Path),
    /// Source text, under the name given to [`compile`].
    Text(&'a [u8]),
}

/// Where the clang-19 executable of the LLVM passlab was built against is:
/// its driver finds the resource directory (stddef.h and friends) from it.
pub fn clang_path() -> PathBuf {
    Path::new(env!("PASSLAB_LLVM_BINDIR")).join("clang")
}

/// Which of clang's hand-overs a C or C++ source becomes: the IR clang's
/// own optimization pipeline receives when it compiles at that level.
/// `O1`…`Oz` are `clang-19 -On -Xclang -disable-llvm-passes` (`-Os` and
/// `-Oz` mark functions `optsize` and `minsize`); `O0` is clang's `-O0`
/// without `optnone` (`-Xclang -disable-O0-optnone`): every function
/// `noinline`, locals in allocas, for those who want passes to have that
/// to work on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Level {
    O0,
    O1,
    #[default]
    O2,
    O3,
    Os,
    Oz,
}

impl Level {
    /// Every level, in order.
    pub const ALL: [Level; 6] = [
        Level::O0,
        Level::O1,
        Level::O2,
        Level::O3,
        Level::Os,
        Level::Oz,
    ];

    /// `O0` … `Oz`.
    pub fn name(self) -> &'static str {
        match self {
            Level::O0 => "O0",
            Level::O1 => "O1",
            Level::O2 => "O2",
            Level::O3 => "O3",
            Level::Os => "Os",
            Level::Oz => "Oz",
        }
    }

    /// `O2` (or `2`, `-O2`) as a level.
    pub fn parse(text: &str) -> Result<Level> {
        let t = text.trim_start_matches('-');
        let t = t.strip_prefix('O').unwrap_or(t);
        Ok(match t {
            "0" => Level::O0,
            "1" => Level::O1,
            "2" => Level::O2,
            "3" => Level::O3,
            "s" => Level::Os,
            "z" => Level::Oz,
            _ => {
                return Err(Error::Invalid(format!(
                    "'{text}' is not an optimization level: O0, O1, O2, O3, Os or Oz"
                )))
            }
        })
    }

    /// The level of a context's `opt_level` (0 to 3; above 3 is 3).
    pub fn from_opt_level(opt_level: u32) -> Level {
        match opt_level {
            0 => Level::O0,
            1 => Level::O1,
            2 => Level::O2,
            _ => Level::O3,
        }
    }

    /// clang's flags for this hand-over.
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Level::O0 => &["-O0", "-Xclang", "-disable-O0-optnone"],
            Level::O1 => &["-O1", "-Xclang", "-disable-llvm-passes"],
            Level::O2 => &["-O2", "-Xclang", "-disable-llvm-passes"],
            Level::O3 => &["-O3", "-Xclang", "-disable-llvm-passes"],
            Level::Os => &["-Os", "-Xclang", "-disable-llvm-passes"],
            Level::Oz => &["-Oz", "-Xclang", "-disable-llvm-passes"],
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The flags every compile gets after the level's: no debug info (a
/// `-g` among the user's flags, which come last, turns it on) and value
/// names kept (`%for.body`, not `%5`: readable IR and loop names, as
/// `clang -fno-discard-value-names` prints them).
pub const CLANG_FLAGS: &[&str] = &["-g0", "-fno-discard-value-names", "-emit-llvm", "-c"];

/// The whole command line after `clang-19` for `level`, before the user's
/// flags and the input: what `:load` and `:module` run.
pub fn command_line(level: Level) -> Vec<&'static str> {
    level.flags().iter().chain(CLANG_FLAGS).copied().collect()
}

/// Compiles `input` into bitcode (with its use-list order, so that the
/// module parsed from it is the one clang made, down to the order passes
/// visit uses in) and its symbol tables' name counters (see
/// `Module::name_counters`), with `name` as its source file name and
/// identifier.
/// `name` names a text input in diagnostics; clang's messages become
/// [`Error::Compile`].
///
/// clang runs in a forked child: a crash of the front end (an assertion,
/// a stack overflow on deeply nested input, `#pragma clang __debug crash`)
/// ends the child and becomes an error; the session goes on.
pub(crate) fn compile(
    lang: Lang,
    input: Input<'_>,
    level: Level,
    extra: &[String],
    name: &str,
    dir: Option<&Path>,
    lto: bool,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let (data, file) = match input {
        Input::File(p) => (None, p.display().to_string()),
        Input::Text(t) => (Some(t), name.to_string()),
    };
    let args = clang_args(lang, level, extra, &file)?;
    let argv: Vec<*const std::os::raw::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    let clang = nul(&clang_path().display().to_string())?;
    // LLVM's targets are registered here, before the fork: their one-time
    // initialisation is guarded by a lock that another thread of this
    // process (a test harness's, a kernel's) may hold at the moment of the
    // fork, which the child would then wait on forever.
    // SAFETY: registers LLVM's targets once; no arguments.
    unsafe { ffi::plab_init_targets() };
    let reply = crate::child::in_child(|| {
        // A unit of a project compiles in its build's folder (its
        // relative `-I` and file name start there); this is the
        // child's own working folder, not the session's.
        if let Some(dir) = dir {
            std::env::set_current_dir(dir)
                .map_err(|e| format!("error: cannot enter {}: {e}", dir.display()))?;
        }
        Ok(in_this_process(
            &clang,
            &argv,
            data,
            name,
            lto.then_some(level),
        ))
    })
    .map_err(|e| child_error(name, e))?;
    let (tag, rest) = reply.split_first().unwrap_or((&b'E', &[]));
    if *tag != b'O' {
        return Err(diagnostics(name, rest));
    }
    // Two parts, each after its length: the warnings, the counters; then
    // the bitcode.
    let mut at = 0;
    let mut part = || -> &[u8] {
        let len = rest
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes);
        let start = (at + 8).min(rest.len());
        let end = start
            .saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
            .min(rest.len());
        at = end;
        &rest[start..end]
    };
    let warnings = String::from_utf8_lossy(part()).into_owned();
    let counters = part().to_vec();
    if !warnings.is_empty() {
        crate::console::warn(warnings.trim_end());
    }
    Ok((rest[at..].to_vec(), counters))
}

/// `s` as a C string, or an error saying it holds a NUL byte.
fn nul(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::Invalid(format!("'{s}' contains a NUL byte")))
}

/// clang's command line for compiling `file` (in `lang`, at `level`, with
/// the user's `extra` arguments) to bitcode on stdout.
fn clang_args(lang: Lang, level: Level, extra: &[String], file: &str) -> Result<Vec<CString>> {
    let mut args: Vec<CString> = command_line(level)
        .iter()
        .chain(&["-o", "-", "-x", if lang == Lang::Cpp { "c++" } else { "c" }])
        .map(|a| nul(a))
        .collect::<Result<_>>()?;
    for a in extra {
        args.push(nul(a)?);
    }
    args.push(nul(file)?);
    Ok(args)
}

/// What the child compiling `name` failing (not clang's diagnostics:
/// clang itself crashing, or an interrupt) becomes.
fn child_error(name: &str, e: crate::child::ChildError) -> Error {
    match e {
        crate::child::ChildError::Interrupted => Error::Interrupted {
            pass: format!("clang-19 compiling {name}"),
        },
        crate::child::ChildError::Failed { said, how } => Error::Compile {
            source_name: name.to_string(),
            stderr: format!(
                "clang-19 itself {} (a bug in clang; the session is as it was){}",
                if how.is_empty() {
                    "could not be started".to_string()
                } else {
                    how
                },
                crate::error::tail_of(&said, 12, 4000)
            ),
        },
    }
}

/// clang's diagnostics `text` on `name` as an error, ended by the count
/// of errors as the clang executable ends its report.
fn diagnostics(name: &str, text: &[u8]) -> Error {
    let text = String::from_utf8_lossy(text).into_owned();
    let errors = text.matches("error:").count();
    let mut stderr = text.trim_end().to_string();
    if errors > 0 {
        // As the clang executable ends its report.
        stderr.push_str(&format!(
            "\n{errors} error{} generated.",
            if errors == 1 { "" } else { "s" }
        ));
    }
    Error::Compile {
        source_name: name.to_string(),
        stderr,
    }
}

/// The compile itself, in this process (the child [`compile`] forks):
/// `O`, the warnings' length (8 bytes, little-endian) and the warnings, the
/// name counters' length and the counters, then the bitcode; or `E` and
/// clang's diagnostics. With `lto` (a level), the unit is then what
/// `clang -flto -c` makes at that level: `lto-pre-link<level>` run on it
/// (with clang's tuning for the level and the module's own target), and
/// written with its module summary.
fn in_this_process(
    clang: &CString,
    argv: &[*const std::os::raw::c_char],
    data: Option<&[u8]>,
    name: &str,
    lto: Option<Level>,
) -> Vec<u8> {
    let mut sinks = ffi::Sinks::default();
    // SAFETY: a new context, owned by this child until it exits.
    let ctx = unsafe { llvm_sys::core::LLVMContextCreate() };
    // SAFETY: `ctx` is the live context made above; `clang` and every
    // pointer in `argv` are NUL-terminated strings that outlive the call,
    // and `argv.len()` is their count; `data` (when given) is valid for
    // `len` bytes and the shim copies it; `sinks` outlives the call and is
    // what `SINK_FIRST` expects behind `sinks.user()`.
    let raw = unsafe {
        ffi::plab_compile(
            ctx,
            clang.as_ptr(),
            argv.as_ptr(),
            argv.len(),
            data.map_or(std::ptr::null(), |d| d.as_ptr() as *const _),
            data.map_or(0, |d| d.len()),
            ffi::SINK_FIRST,
            sinks.user(),
        )
    };
    if raw.is_null() {
        let mut out = vec![b'E'];
        out.extend_from_slice(&sinks.first);
        return out;
    }
    let warnings = std::mem::take(&mut sinks.first);
    // SAFETY: `raw` is the live module clang just built (non-null);
    // `name` is valid for `name.len()` bytes, which LLVM copies; `sinks`
    // is the `Sinks` that `SINK_FIRST` expects, alive for the call.
    unsafe {
        llvm_sys::core::LLVMSetSourceFileName(raw, name.as_ptr() as *const _, name.len());
        llvm_sys::core::LLVMSetModuleIdentifier(raw, name.as_ptr() as *const _, name.len());
        ffi::plab_name_counters(raw, ffi::SINK_SECOND, sinks.user());
    }
    match lto {
        None => {
            // SAFETY: as above.
            unsafe { ffi::plab_write_bitcode(raw, true, ffi::SINK_FIRST, sinks.user()) }
        }
        Some(level) => {
            // Written apart from `sinks`: `sinks.second` holds the
            // counters.
            // SAFETY: `raw` is the live module clang built, this child's.
            match unsafe { lto_bitcode(raw, level) } {
                Ok(bitcode) => sinks.first = bitcode,
                Err(message) => {
                    let mut out = vec![b'E'];
                    out.extend_from_slice(&message);
                    return out;
                }
            }
        }
    }
    let mut out = vec![b'O'];
    for part in [&warnings, &sinks.second] {
        out.extend_from_slice(&(part.len() as u64).to_le_bytes());
        out.extend_from_slice(part);
    }
    out.extend_from_slice(&sinks.first);
    out
}

/// Module `raw` as `clang -flto -c` makes it at `level`:
/// `lto-pre-link<level>` run on it (with clang's tuning for the level and
/// the module's own target), written as bitcode with its module summary;
/// or what went wrong.
///
/// # Safety
/// `raw` is a live module nothing else uses meanwhile.
unsafe fn lto_bitcode(
    raw: llvm_sys::prelude::LLVMModuleRef,
    level: Level,
) -> std::result::Result<Vec<u8>, Vec<u8>> {
    let text = format!("lto-pre-link<{level}>");
    let tuning = crate::llvm::clang_tuning(&text).unwrap_or_default();
    // SAFETY: `raw` is live (this function's `# Safety`); the string LLVM
    // returns is the module's own, copied at once.
    let triple = unsafe {
        std::ffi::CStr::from_ptr(llvm_sys::core::LLVMGetTarget(raw))
            .to_string_lossy()
            .into_owned()
    };
    let target = crate::llvm::Target::default();
    if let Err(e) = crate::llvm::run_pipeline(raw, &triple, &tuning, &target, &text, None) {
        return Err(format!("error: {text}: {e}").into_bytes());
    }
    // Written into sinks of its own (bitcode, LLVM's message).
    let mut lto = ffi::Sinks::default();
    // SAFETY: `raw` is live; `lto` is the `Sinks` both sink functions
    // expect, alive for the call.
    let ok =
        unsafe { ffi::plab_write_lto_bitcode(raw, ffi::SINK_FIRST, ffi::SINK_SECOND, lto.user()) };
    if ok {
        Ok(lto.first)
    } else {
        Err(lto.second)
    }
}
