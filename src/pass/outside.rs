//! What an LLVM pipeline may do outside the module it runs on: the one
//! check every pipeline text passes before LLVM parses it
//! ([`LlvmPass::new`](super::LlvmPass::new), which every entry point
//! reaches: `:run`, `:pass`, `:with required=`/`disabled=`, `:tune` pools,
//! `:bench`, `:explore`, `:bisect`, sweeps' and hunts' specs, Python's
//! `LLVMPass`, the gym) and again before LLVM runs it (a file can change
//! between the two).
//!
//! Passes touch no file the user did not name to passlab, and start no
//! program. Which LLVM 19 passes reach outside the module was found by
//! running every name `opt-19 --print-passes` lists (and each `require<…>`
//! of an analysis, and the `default`/`lto`/`thinlto` pipelines) under
//! `strace -f -e trace=file,process` on IR with debug info and
//! `!llvm.gcov`, and read in LLVM's PassRegistry.def:
//!
//! * Refused, since what they write is named by the module, not by the user,
//!   or is a program: the `dot-*` printers (a `.dot` file per function in
//!   the working folder, named after the function, unsanitized: a function
//!   called `/../../home/you/notes` writes `notes.dot` there), the
//!   `view-*` viewers (a `.dot` in the temporary folder, then `xdg-open` or
//!   whatever viewer PATH offers), `insert-gcov-profiling` (`.gcno` files
//!   where `!llvm.gcov` says). Writing them into a folder passlab makes
//!   instead would take a process-wide working folder or LLVM's
//!   process-wide `-cfg-dot-filename-prefix` (racy in a process that runs
//!   pipelines on several threads), and `dot-dom`'s names have no prefix
//!   option at all.
//! * Refused, since they read a file named by one of LLVM's hidden options,
//!   which no pipeline text can set and passlab leaves empty, so they can
//!   only fail: `pgo-instr-use`, `sample-profile`, `function-import`.
//! * Checked: `memprof-use<profile-filename=FILE>` reads FILE, as LLVM
//!   resolves it (relative to the working folder). It must be a regular
//!   file of at most [`INPUT_MAX`] bytes: LLVM reads a device such as
//!   `/dev/zero` to the end that never comes (the session ended "out of
//!   memory"), blocks on a FIFO that no Ctrl-C reaches, and reads standard
//!   input for `-`.
//! * Left alone: `print<…>` and the `print-*` passes (standard error only);
//!   the instrumenting passes (`pgo-instr-gen`, `instrprof`, `memprof`,
//!   sanitizers) touch nothing when they run, and the code they make writes
//!   its profiles only through compiler-rt's runtime, which the JIT does not
//!   have (`:exec` refuses such a module, naming the missing symbol). Passes
//!   that read or write a file named by a hidden option only when it is set
//!   (`extract-blocks`, `internalize`, `rewrite-symbols`, `dfsan`,
//!   `lowertypetests`, `wholeprogramdevirt`, `instrorderfile`, `debugify`)
//!   touch nothing. A plugin's passes do what the plugin the user loaded
//!   does.

use crate::{Error, Result};
use std::path::Path;

/// The largest file a pass may be given to read: LLVM reads it whole into
/// memory.
pub const INPUT_MAX: u64 = 64 << 20;

/// A group of passes passlab does not run, why, and what to use instead
/// (`{pass}` stands for the pass's name).
struct Refusal {
    names: &'static [&'static str],
    does: &'static str,
    instead: &'static str,
}

const REFUSED: &[Refusal] = &[
    Refusal {
        names: &["trigger-crash-module", "trigger-crash-function"],
        does: "aborts the process on purpose",
        instead: "",
    },
    Refusal {
        names: &[
            "view-cfg",
            "view-cfg-only",
            "view-dom",
            "view-dom-only",
            "view-post-dom",
            "view-post-dom-only",
            "view-callgraph",
        ],
        does: "writes a .dot file into the temporary folder and starts a viewer program on it (xdg-open, or whatever PATH offers)",
        instead: "passlab starts no program it did not build: :save the module and run opt-19 -passes={pass} yourself",
    },
    Refusal {
        names: &[
            "dot-cfg",
            "dot-cfg-only",
            "dot-dom",
            "dot-dom-only",
            "dot-post-dom",
            "dot-post-dom-only",
        ],
        does: "writes a .dot file per function into the working folder, over any file of that name, named after the function (a name with '/' in it reaches other folders)",
        instead: ":save the module and run opt-19 -passes={pass} in a folder of your own (print<domtree> and print<postdomtree> print the trees as text)",
    },
    Refusal {
        names: &["dot-callgraph"],
        does: "writes MODULE.callgraph.dot beside the module's file, over any file of that name",
        instead: "print-lcg-dot prints the call graph as DOT text",
    },
    Refusal {
        names: &["dot-ddg"],
        does: "writes a ddg.FUNCTION.LOOP.dot file per loop into the working folder, named after the function",
        instead: "print<ddg> prints the graph as text",
    },
    Refusal {
        names: &["insert-gcov-profiling"],
        does: "writes .gcno files at the paths the module's !llvm.gcov metadata names (or in the working folder, after its source files), over any file there, and its code writes .gcda files there when it runs",
        instead: "compile with clang-19 --coverage for coverage",
    },
    Refusal {
        names: &["pgo-instr-use"],
        does: "reads the profile named by LLVM's hidden option -pgo-test-profile-file, which no pipeline text can set and passlab leaves empty, so it can only fail",
        instead: "clang-19 -fprofile-instr-use=FILE applies an instrumentation profile",
    },
    Refusal {
        names: &["sample-profile"],
        does: "reads the profile named by LLVM's hidden option -sample-profile-file, which no pipeline text can set and passlab leaves empty, so it can only fail",
        instead: "clang-19 -fprofile-sample-use=FILE applies a sample profile",
    },
    Refusal {
        names: &["function-import"],
        does: "reads the summary named by LLVM's hidden option -summary-file, which no pipeline text can set and passlab leaves empty (LLVM stops with a fatal error without it)",
        instead: "ThinLTO imports functions in clang-19 -flto=thin and the linker",
    },
];

/// The pass names in pipeline text, as LLVM's parser cuts it: at every
/// `,`, `(` and `)`, inside `<…>` too (LLVM does). Each is trimmed, which
/// LLVM does only at the top level: so this sees every name LLVM would
/// build, and some it would refuse.
fn elements(text: &str) -> impl Iterator<Item = &str> {
    text.split([',', '(', ')'])
        .map(str::trim)
        .filter(|e| !e.is_empty())
}

/// Ok when no pass of `text` writes files, starts a program or reads a file
/// that is not a regular one of at most [`INPUT_MAX`] bytes; else a
/// pipeline error naming the pass, what it would do, and what to use.
pub(crate) fn check(text: &str) -> Result<()> {
    for element in elements(text) {
        let name = element.split('<').next().unwrap_or(element).trim_end();
        if let Some(r) = REFUSED.iter().find(|r| r.names.contains(&name)) {
            let instead = if r.instead.is_empty() {
                String::new()
            } else {
                format!(": {}", r.instead.replace("{pass}", name))
            };
            return Err(error(
                text,
                format!(
                    "LLVM pass '{name}' {}; passlab does not run it{instead}",
                    r.does
                ),
            ));
        }
        if name == "memprof-use" {
            check_memprof_use(text, element)?;
        }
    }
    Ok(())
}

/// `memprof-use[<profile-filename=FILE;…>]` as LLVM 19's
/// `parseMemProfUsePassOptions` reads it: the parameters between the first
/// `<` and the last `>`, cut at `;`, the last `profile-filename=` the file
/// (no file: LLVM opens ""). Text of another form is left to LLVM, which
/// refuses it.
fn check_memprof_use(text: &str, element: &str) -> Result<()> {
    let rest = element.strip_prefix("memprof-use").unwrap_or("");
    let params = if rest.is_empty() {
        ""
    } else {
        match rest.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
            Some(params) => params,
            None => return Ok(()),
        }
    };
    let files: Vec<&str> = params
        .split(';')
        .filter_map(|p| p.strip_prefix("profile-filename="))
        .collect();
    if files.last().is_none_or(|f| f.is_empty()) {
        return Err(error(
            text,
            "memprof-use reads the profile that profile-filename= names, and none is named: memprof-use<profile-filename=FILE>".into(),
        ));
    }
    // Every one named, not only the last LLVM reads.
    for file in files {
        check_input(text, "memprof-use", "profile-filename", file)?;
    }
    Ok(())
}

/// Ok when `path`, as LLVM opens it (relative to the working folder), is a
/// regular file of at most [`INPUT_MAX`] bytes.
fn check_input(text: &str, pass: &str, param: &str, path: &str) -> Result<()> {
    let at = format!("{pass}'s {param}={path}");
    if path.is_empty() {
        return Err(error(text, format!("{at}: no file named")));
    }
    if path == "-" {
        return Err(error(
            text,
            format!("{at}: LLVM reads '-' as standard input; name a file (./- for one called '-')"),
        ));
    }
    let shown = shown(path);
    let meta = std::fs::metadata(path)
        .map_err(|e| error(text, format!("{at}: cannot read {shown}: {}", lower(&e))))?;
    let kind = file_kind(&meta.file_type());
    if kind != "a regular file" {
        return Err(error(
            text,
            format!(
                "{at}: {shown} is {kind}, not a regular file, and LLVM would read it to an end that may never come; name a profile file"
            ),
        ));
    }
    if meta.len() > INPUT_MAX {
        return Err(error(
            text,
            format!(
                "{at}: {shown} holds {} MiB; passes may read files of at most {} MiB",
                meta.len().div_ceil(1 << 20),
                INPUT_MAX >> 20
            ),
        ));
    }
    Ok(())
}

/// `path` quoted, with the folder a relative one is taken from.
fn shown(path: &str) -> String {
    if Path::new(path).is_absolute() {
        return format!("'{path}'");
    }
    match std::env::current_dir() {
        Ok(cwd) => format!("'{path}' (in {})", cwd.display()),
        Err(_) => format!("'{path}'"),
    }
}

fn lower(e: &std::io::Error) -> String {
    e.to_string().to_lowercase()
}

fn file_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

fn error(text: &str, message: String) -> Error {
    Error::Pipeline {
        text: text.to_string(),
        message,
        suggestions: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_at_any_depth_and_not_in_parameters() {
        let names: Vec<&str> = elements("a, function(b,loop-mssa( c )),d<x;y=e(f>").collect();
        assert_eq!(
            names,
            ["a", "function", "b", "loop-mssa", "c", "d<x;y=e", "f>"]
        );
        for text in [
            "view-cfg",
            "function(dot-cfg)",
            "module(function(dot-dom-only))",
            "instcombine, insert-gcov-profiling",
            "cgscc(function(view-post-dom))",
            "function(trigger-crash-function)",
        ] {
            let e = check(text).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Pipeline, "{text}");
            assert!(
                e.to_string().contains("passlab does not run it"),
                "{text}: {e}"
            );
        }
        // A pass name as a word of a parameter is no pass.
        assert!(check("instcombine,function(simplifycfg)").is_ok());
        assert!(check("print<domtree>").is_ok());
        assert!(check("dot-cfgx").is_ok());
    }

    #[test]
    fn memprof_use_names_a_regular_bounded_file() {
        let msg = |t: &str| check(t).unwrap_err().to_string();
        assert!(msg("memprof-use").contains("none is named"));
        assert!(msg("memprof-use<profile-filename=>").contains("none is named"));
        assert!(msg("memprof-use<profile-filename=->").contains("standard input"));
        assert!(msg("memprof-use<profile-filename=/dev/zero>").contains("a character device"));
        assert!(msg("memprof-use<profile-filename=/>").contains("a folder"));
        assert!(msg("memprof-use<profile-filename=/no/such/file>")
            .contains("cannot read '/no/such/file': no such file"));
        // Every file named is checked, the last (LLVM's) too.
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("p.prof");
        std::fs::write(&ok, b"not yet a profile").unwrap();
        let ok = ok.display();
        assert!(check(&format!("memprof-use<profile-filename={ok}>")).is_ok());
        assert!(msg(&format!(
            "memprof-use<profile-filename=/dev/null;profile-filename={ok}>"
        ))
        .contains("/dev/null"));
        // Other forms are LLVM's to refuse.
        assert!(check("memprof-use <profile-filename=/dev/zero>").is_ok());
    }
}
