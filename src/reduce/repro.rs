//! Reproducers: a finding as a folder someone else can run. It holds the
//! reduced module (`reduced.ll`), a `README.md` saying what the bug is and
//! how to see it, `repro.sh` — `opt-19` and `lli-19` (or `opt-19` alone
//! for a crash) showing the bug without passlab, when every pass involved
//! is LLVM's or a plugin's — and `repro.plab`, the same with `passlab run`.
//! `repro.sh` exits 0 when the bug shows and 1 when it does not, as an
//! interestingness test does; it is run once when written, and the folder
//! says whether it showed the bug.

use super::{Ending, Property};
use crate::jit::{Stdin, Subject};
use crate::module::Module;
use crate::pipeline::{llvm_spelling, LlvmSpelling};
use crate::{Error, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A reproducer written (see the module documentation).
#[derive(Clone, Debug)]
pub struct Reproducer {
    pub dir: PathBuf,
    /// The files, by name.
    pub files: Vec<String>,
    /// Whether `repro.sh` was written (every pass LLVM's or a plugin's).
    pub with_llvm_tools: bool,
    /// Whether `repro.sh` showed the bug when run.
    pub shows_bug: bool,
    /// What `repro.sh` printed.
    pub output: String,
}

/// `s` quoted for a POSIX shell.
pub(super) fn quote(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| format!("'{s}'"), |q| q.into_owned())
}

/// `opt-19` with the plugins a spelling needs.
fn opt(spelling: &LlvmSpelling) -> String {
    let mut s = String::from("opt-19");
    for p in &spelling.plugins {
        s.push_str(&format!(" -load-pass-plugin={}", quote(p)));
    }
    s
}

/// Writes the reproducer of `module` having `property` into `dir` (made if
/// missing; files there of the same names are replaced) and runs its
/// `repro.sh` once.
pub fn reproducer(dir: &Path, module: &Module, property: &Property) -> Result<Reproducer> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let write = |name: &str, text: &str| -> Result<()> {
        std::fs::write(dir.join(name), text).map_err(|e| Error::io(dir.join(name).display(), e))
    };
    let name = module.name();
    let mut files = vec!["reduced.ll".to_string(), "README.md".to_string()];
    write("reduced.ll", &module.print())?;
    let what = property.describe(&name);
    let mut readme = format!(
        "# A passlab finding\n\n{what}.\n\n`reduced.ll` ({} instructions) shows it. Made by passlab {} with {}.\n\n",
        module.instruction_count(),
        env!("CARGO_PKG_VERSION"),
        crate::llvm::version()
    );
    let mut plab = format!("# {what}\n:load reduced.ll\n");
    let mut script: Option<String> = None;
    match property {
        Property::Differs {
            subject,
            first,
            second,
            ..
        } => {
            let args = match subject {
                Subject::Exec(p) => {
                    let mut words = vec!["exec".to_string()];
                    words.extend(p.args.iter().map(|a| quote(a)));
                    match &p.stdin {
                        Stdin::Null => {}
                        Stdin::Bytes(b) => {
                            write("stdin.txt", &String::from_utf8_lossy(b))?;
                            files.push("stdin.txt".into());
                            words.push("stdin=@stdin.txt".into());
                        }
                        Stdin::File(f) => {
                            std::fs::copy(f, dir.join("stdin.txt"))
                                .map_err(|e| Error::io(f.display(), e))?;
                            files.push("stdin.txt".into());
                            words.push("stdin=@stdin.txt".into());
                        }
                    }
                    words.join(" ")
                }
                Subject::Call { function, args } => {
                    let words: Vec<String> = args
                        .iter()
                        .map(|a| match a {
                            crate::jit::Arg::Int(i) => i.to_string(),
                            crate::jit::Arg::Float(f) => f.to_string(),
                            crate::jit::Arg::Buffer(_) => "BUFFER".into(),
                        })
                        .collect();
                    if words.iter().any(|w| w == "BUFFER") {
                        readme.push_str("The function takes buffers: create them with `:buffer` (as in the session) and put their names where `repro.plab` says BUFFER.\n\n");
                    }
                    format!("{function} {}", words.join(" "))
                }
            };
            let label = |p: &str| {
                if p.is_empty() {
                    "none".to_string()
                } else {
                    p.to_string()
                }
            };
            let _ = writeln!(
                plab,
                ":bench {args} | {} | {}",
                if first.is_empty() { "" } else { first },
                second
            );
            let _ = write!(
                readme,
                "With passlab: `passlab run repro.plab` compares the two pipelines ({} and {}); the result column says DIFFERENT.\n\n",
                label(first),
                label(second)
            );
            if let Subject::Exec(p) = subject {
                let spell = |text: &str| -> Option<Option<LlvmSpelling>> {
                    if text.is_empty() {
                        Some(None)
                    } else {
                        llvm_spelling(text).map(Some)
                    }
                };
                if let (Some(a), Some(b)) = (spell(first), spell(second)) {
                    let stdin = if matches!(p.stdin, Stdin::Null) {
                        "/dev/null"
                    } else {
                        "stdin.txt"
                    };
                    let argv: Vec<String> = p.args.iter().map(|a| quote(a)).collect();
                    let mut sh = String::from("#!/bin/sh\n");
                    let _ = writeln!(sh, "# {what}");
                    sh.push_str("# Exits 0 when the bug shows (the program prints something else, or\n# ends otherwise, after the second pipeline), 1 when it does not.\ncd \"$(dirname \"$0\")\" || exit 2\n");
                    for (out, spelling) in [("first", &a), ("second", &b)] {
                        match spelling {
                            None => {
                                let _ = writeln!(sh, "llvm-as-19 reduced.ll -o {out}.bc || exit 2");
                            }
                            Some(s) => {
                                let _ = writeln!(
                                    sh,
                                    "{} -passes={} reduced.ll -o {out}.bc || exit 2",
                                    opt(s),
                                    quote(&s.passes)
                                );
                            }
                        }
                    }
                    for out in ["first", "second"] {
                        let _ = writeln!(
                            sh,
                            "lli-19 --fake-argv0={} {out}.bc {} < {stdin} > {out}.out 2> {out}.err; echo \"exit $?\" >> {out}.out",
                            quote(&name),
                            argv.join(" ")
                        );
                    }
                    let _ = writeln!(
                        sh,
                        "if cmp -s first.out second.out && cmp -s first.err second.err; then\n  echo 'the same output after both pipelines: the bug does not show'\n  exit 1\nfi\necho '--- after {}:'; cat first.out first.err\necho '--- after {}:'; cat second.out second.err\nexit 0",
                        label(first),
                        label(second)
                    );
                    let inexact = [&a, &b]
                        .iter()
                        .any(|s| s.as_ref().is_some_and(|s| !s.exact));
                    let _ = write!(
                        readme,
                        "Without passlab: `sh repro.sh` runs the pipelines with `opt-19` and the program with `lli-19`:\n\n```sh\n{}```\n\n",
                        sh.lines()
                            .filter(|l| l.starts_with("opt-19") || l.starts_with("llvm-as-19") || l.starts_with("lli-19"))
                            .map(|l| format!("{l}\n"))
                            .collect::<String>()
                    );
                    if inexact {
                        readme.push_str("(passlab's O1–O3 run its `strip-dead-internals` before LLVM's `default<On>`; opt runs only the latter.)\n\n");
                    }
                    script = Some(sh);
                }
            }
        }
        Property::Fails { pipeline, ending } => {
            let _ = writeln!(plab, ":run {pipeline}");
            let _ = write!(
                readme,
                "With passlab: `passlab run repro.plab` runs the pipeline: {}.\n\n",
                ending.describe()
            );
            if let Some(s) = llvm_spelling(pipeline) {
                let verify = if matches!(ending, Ending::Invalid { .. }) {
                    " -verify-each"
                } else {
                    ""
                };
                let mut sh = String::from("#!/bin/sh\n");
                let _ = writeln!(sh, "# {what}");
                sh.push_str("# Exits 0 when the bug shows, 1 when it does not.\ncd \"$(dirname \"$0\")\" || exit 2\n");
                let _ = writeln!(
                    sh,
                    "{} -passes={}{verify} reduced.ll -disable-output > opt.out 2>&1; status=$?",
                    opt(&s),
                    quote(&s.passes)
                );
                // The message's first line up to the first name or number
                // (which a reduction changes), as a fixed string.
                let key = |message: &str| {
                    let first = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                    let key: String = first
                        .trim()
                        .chars()
                        .take_while(|c| !c.is_ascii_digit() && !matches!(c, '%' | '@' | '"'))
                        .collect();
                    quote(key.trim_end())
                };
                let check = match ending {
                    Ending::Crash { .. } => "[ \"$status\" -gt 128 ]".to_string(),
                    Ending::Fatal { message, .. } => format!("grep -qF {} opt.out", key(message)),
                    Ending::Invalid { message, .. } => {
                        format!("[ \"$status\" -ne 0 ] && grep -qF {} opt.out", key(message))
                    }
                    _ => "false".to_string(),
                };
                let _ = writeln!(
                    sh,
                    "cat opt.out\nif {check}; then\n  echo \"opt-19 shows the bug (exit status $status)\"\n  exit 0\nfi\necho \"opt-19 ended with status $status: the bug does not show\"\nexit 1"
                );
                let _ = write!(
                    readme,
                    "Without passlab: `sh repro.sh`, which runs\n\n```sh\n{} -passes={}{verify} reduced.ll -disable-output\n```\n\n",
                    opt(&s),
                    quote(&s.passes)
                );
                script = Some(sh);
            }
        }
        Property::Accepted { pass } => {
            let _ = write!(
                readme,
                "The property is a Rust predicate of the session ({pass}): define it again and `:reduce rust` it to check.\n\n"
            );
        }
    }
    write("repro.plab", &plab)?;
    files.push("repro.plab".into());
    let (mut shows_bug, mut output) = (false, String::new());
    let with_llvm_tools = script.is_some();
    if let Some(sh) = script {
        write("repro.sh", &sh)?;
        files.push("repro.sh".into());
        let out = std::process::Command::new("sh")
            .arg(dir.join("repro.sh"))
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| Error::Tool {
                tool: "sh".into(),
                message: format!("cannot run repro.sh: {e}"),
            })?;
        shows_bug = out.status.success();
        output = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = writeln!(
            readme,
            "When it was written, `sh repro.sh` {}.",
            if shows_bug {
                "showed the bug"
            } else {
                "did not show the bug (the bug may need passlab's own passes: use repro.plab)"
            }
        );
    }
    write("README.md", &readme)?;
    Ok(Reproducer {
        dir: dir.to_path_buf(),
        files,
        with_llvm_tools,
        shows_bug,
        output,
    })
}
