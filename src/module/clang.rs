//! C and C++ to LLVM IR with clang-19, in process: the shim runs clang's
//! driver and front end (libclang-cpp) on the command line the clang-19
//! executable would get, into a module in the caller's context.
//!
//! The flags are [`CLANG_FLAGS`]; clang's resource directory is found from
//! the executable's path, and cc1's `-disable-free` is turned off, since a
//! session outlives a compile. Diagnostics come back as clang prints them.

use super::source::Lang;
use crate::ffi;
use crate::{Error, Result};
use llvm_sys::prelude::{LLVMContextRef, LLVMModuleRef};
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

/// The flags that make clang's output a starting point for pass experiments:
/// -O0 without `optnone`, so that passes have work to do, no debug info, and
/// value names kept (`%for.body`, not `%5`: readable IR and loop names).
pub const CLANG_FLAGS: &[&str] = &[
    "-O0",
    "-Xclang",
    "-disable-O0-optnone",
    "-g0",
    "-fno-discard-value-names",
    "-emit-llvm",
    "-c",
];

/// Compiles `input` into a new module in `ctx`. `name` names a text input
/// in diagnostics; clang's messages become [`Error::Compile`].
pub(crate) fn compile(
    ctx: LLVMContextRef,
    lang: Lang,
    input: Input<'_>,
    extra: &[String],
    name: &str,
) -> Result<LLVMModuleRef> {
    let nul =
        |s: &str| CString::new(s).map_err(|_| Error::Invalid(format!("'{s}' contains a NUL byte")));
    let mut args: Vec<CString> = CLANG_FLAGS
        .iter()
        .chain(&["-o", "-", "-x", if lang == Lang::Cpp { "c++" } else { "c" }])
        .map(|a| nul(a))
        .collect::<Result<_>>()?;
    for a in extra {
        args.push(nul(a)?);
    }
    let (data, file) = match input {
        Input::File(p) => (None, p.display().to_string()),
        Input::Text(t) => (Some(t), name.to_string()),
    };
    args.push(nul(&file)?);
    let argv: Vec<*const std::os::raw::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    let clang = nul(&clang_path().display().to_string())?;
    let mut sinks = ffi::Sinks::default();
    // SAFETY: `ctx` is the caller's live context; `clang` and every pointer
    // in `argv` are NUL-terminated strings owned by `clang`/`args`, which
    // outlive the call, and `argv.len()` is their count; `data` (when given)
    // is valid for `len` bytes and the shim copies it; `sinks` outlives the
    // call and is what `SINK_FIRST` expects behind `sinks.user()`.
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
        let text = sinks.first_text();
        let errors = text.matches("error:").count();
        let mut stderr = text.trim_end().to_string();
        if errors > 0 {
            // As the clang executable ends its report.
            stderr.push_str(&format!(
                "\n{errors} error{} generated.",
                if errors == 1 { "" } else { "s" }
            ));
        }
        return Err(Error::Compile {
            source_name: name.to_string(),
            stderr,
        });
    }
    let warnings = sinks.first_text();
    if !warnings.is_empty() {
        crate::output::warn(&warnings);
    }
    Ok(raw)
}
