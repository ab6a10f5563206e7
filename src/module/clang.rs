//! C and C++ to LLVM bitcode through clang-19.

use super::source::Lang;
use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub(crate) enum Input<'a> {
    File(&'a Path),
    Stdin(&'a [u8]),
}

/// The clang passlab runs: `$PASSLAB_CLANG`, else the clang of the LLVM it
/// was built against.
pub fn clang_path() -> PathBuf {
    std::env::var_os("PASSLAB_CLANG")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("PASSLAB_LLVM_BINDIR")).join("clang"))
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

pub(crate) fn compile(
    lang: Lang,
    input: Input<'_>,
    extra: &[String],
    name: &str,
) -> Result<Vec<u8>> {
    let clang = clang_path();
    let mut cmd = Command::new(&clang);
    cmd.args(CLANG_FLAGS).args(["-o", "-"]).args(extra);
    cmd.arg("-x")
        .arg(if lang == Lang::Cpp { "c++" } else { "c" });
    match input {
        Input::File(p) => cmd.arg(p).stdin(Stdio::null()),
        Input::Stdin(_) => cmd.arg("-").stdin(Stdio::piped()),
    };
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| Error::io(clang.display(), e))?;
    let writer = match input {
        Input::Stdin(bytes) => {
            let mut stdin = child.stdin.take().expect("stdin is piped");
            let bytes = bytes.to_vec();
            Some(std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            }))
        }
        Input::File(_) => None,
    };
    let out = child
        .wait_with_output()
        .map_err(|e| Error::io(clang.display(), e))?;
    if let Some(w) = writer {
        let _ = w.join();
    }
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).replace("<stdin>", name);
        return Err(Error::Compile {
            source_name: name.to_string(),
            stderr: stderr.trim_end().to_string(),
        });
    }
    Ok(out.stdout)
}
