//! Reproducers: a finding as a folder someone else can run. It holds the
//! reduced module (`reduced.ll`), a `README.md` saying what the bug is and
//! how to see it, `repro.sh` — `opt-19` and `lli-19` (or `opt-19` alone
//! for a crash) showing the bug without passlab, when every pass involved
//! is LLVM's or a plugin's — and `repro.plab`, the same with `passlab run`.
//! `repro.sh` exits 0 when the bug shows and 1 when it does not, as an
//! interestingness test does; it is run once when written, and the folder
//! says whether it showed the bug.

use super::{Ending, Property, Reduction};
use crate::folder::OwnedDir;
use crate::jit::{Stdin, Subject};
use crate::pipeline::{llvm_spelling, LlvmSpelling};
use crate::{Error, Result};
use std::fmt::Write as _;
use std::path::PathBuf;

/// A reproducer written (see the module documentation).
#[derive(Clone, Debug)]
pub struct Reproducer {
    pub dir: PathBuf,
    /// The files, by name.
    pub files: Vec<String>,
    /// Whether `repro.sh` was written (every pass LLVM's or a plugin's).
    pub with_llvm_tools: bool,
    /// Why there is no `repro.sh`, when there is none.
    pub why_not_llvm_tools: Option<String>,
    /// Whether `repro.sh` showed the bug when run.
    pub shows_bug: bool,
    /// What `repro.sh` printed.
    pub output: String,
}

/// `s` quoted for a POSIX shell.
pub(super) fn quote(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| format!("'{s}'"), |q| q.into_owned())
}

/// The start of `repro.sh`: it runs in its own folder and keeps what it
/// makes in a private temporary folder, removed when it ends (nothing is
/// written beside the reproducer).
const SCRATCH: &str =
    "cd \"$(dirname \"$0\")\" || exit 2\nt=$(mktemp -d) || exit 2\ntrap 'rm -rf \"$t\"' EXIT\n";

/// A line of `repro.sh` as a reader would type it: `"$t/first.bc"`
/// (the scratch folder) as `first.bc`.
fn unscratch(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("\"$t/") {
        out.push_str(&rest[..at]);
        let name = &rest[at + 4..];
        let end = name.find('"').unwrap_or(name.len());
        out.push_str(&name[..end]);
        rest = name.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// `opt-19` with the plugins a spelling needs.
fn opt(spelling: &LlvmSpelling, target: &str) -> String {
    let mut s = String::from("opt-19");
    for p in &spelling.plugins {
        s.push_str(&format!(" -load-pass-plugin={}", quote(p)));
    }
    s.push_str(target);
    s
}

/// The context's processor and features as `opt-19` and `lli-19` take them
/// (` -mcpu=znver4 -mattr=+avx2`; empty for the default target).
fn target_flags(cg: &crate::jit::Codegen) -> String {
    let mut s = String::new();
    if !cg.target.cpu.is_empty() {
        s.push_str(&format!(" -mcpu={}", quote(&cg.target.cpu)));
    }
    if !cg.target.features.is_empty() {
        s.push_str(&format!(" -mattr={}", quote(&cg.target.features)));
    }
    s
}

/// Writes the reproducer of `reduction` (its module having `property`)
/// into the folder `sub` of `out` (`""`: `out` itself; made if missing),
/// with `progress.csv`, the reduction's steps, and runs its `repro.sh`
/// once. Only files the folder's job wrote are replaced: `out` refuses
/// any other.
pub fn reproducer(
    out: &OwnedDir,
    sub: &str,
    reduction: &Reduction,
    property: &Property,
) -> Result<Reproducer> {
    let module = &reduction.module;
    let rel = |name: &str| {
        if sub.is_empty() {
            name.to_string()
        } else {
            format!("{sub}/{name}")
        }
    };
    let dir = if sub.is_empty() {
        out.path().to_path_buf()
    } else {
        out.create_dir(sub)?
    };
    let write = |name: &str, text: &str| -> Result<()> { out.write(&rel(name), text).map(|_| ()) };
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
    // The context the finding was made in: its settings (repro.plab's
    // :with) and the code generator's level and target (repro.sh's flags).
    let ctx = crate::PassContext::current();
    let with = ctx.as_with();
    let cg = crate::jit::Codegen::from_context(&ctx)?;
    let target = target_flags(&cg);
    let mut plab = format!("# {what}\n:load reduced.ll\n");
    // The plugins whose passes the pipelines name, loaded again.
    let pipelines: Vec<&str> = match property {
        Property::Differs { first, second, .. } => vec![first.as_str(), second.as_str()],
        Property::Fails { pipeline, .. } => vec![pipeline.as_str()],
        Property::Accepted { .. } => vec![],
    };
    let mut plugins: Vec<String> = Vec::new();
    for text in pipelines.iter().filter(|t| !t.is_empty()) {
        for p in llvm_spelling(text).map(|s| s.plugins).unwrap_or_default() {
            if !plugins.contains(&p) {
                plugins.push(p);
            }
        }
    }
    for p in &plugins {
        let _ = writeln!(plab, ":plugin {p}");
    }
    if !with.is_empty() {
        let _ = writeln!(plab, ":with {with}");
        let _ = write!(
            readme,
            "It was found in a context that `repro.plab` enters again: `:with {with}`.\n\n"
        );
    }
    let mut script: Option<String> = None;
    let mut why_not: Option<String> = None;
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
                            let bytes = std::fs::read(f).map_err(|e| Error::io(f.display(), e))?;
                            out.write(&rel("stdin.txt"), bytes)?;
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
            if let Subject::Call { .. } = subject {
                why_not = Some(
                    "a function's result: LLVM's tools run whole programs, repro.plab calls the function"
                        .into(),
                );
            }
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
                    sh.push_str("# Exits 0 when the bug shows (the program prints something else, or\n# ends otherwise, after the second pipeline), 1 when it does not.\n");
                    sh.push_str(SCRATCH);
                    for (out, spelling) in [("first", &a), ("second", &b)] {
                        match spelling {
                            None => {
                                let _ = writeln!(
                                    sh,
                                    "llvm-as-19 reduced.ll -o \"$t/{out}.bc\" || exit 2"
                                );
                            }
                            Some(s) => {
                                let _ = writeln!(
                                    sh,
                                    "{} -passes={} reduced.ll -o \"$t/{out}.bc\" || exit 2",
                                    opt(s, &target),
                                    quote(&s.passes)
                                );
                            }
                        }
                    }
                    for out in ["first", "second"] {
                        // The code generator as the session's: its level
                        // and target.
                        let _ = writeln!(
                            sh,
                            "lli-19 -O{}{target} --fake-argv0={} \"$t/{out}.bc\" {} < {stdin} > \"$t/{out}.out\" 2> \"$t/{out}.err\"; echo \"exit $?\" >> \"$t/{out}.out\"",
                            cg.opt_level,
                            quote(&name),
                            argv.join(" ")
                        );
                    }
                    let _ = writeln!(
                        sh,
                        "if cmp -s \"$t/first.out\" \"$t/second.out\" && cmp -s \"$t/first.err\" \"$t/second.err\"; then\n  echo 'the same output after both pipelines: the bug does not show'\n  exit 1\nfi\necho '--- after {}:'; cat \"$t/first.out\" \"$t/first.err\"\necho '--- after {}:'; cat \"$t/second.out\" \"$t/second.err\"\nexit 0",
                        label(first),
                        label(second)
                    );
                    let _ = write!(
                        readme,
                        "Without passlab: `sh repro.sh` runs the pipelines with `opt-19` and the program with `lli-19`:\n\n```sh\n{}```\n\n",
                        sh.lines()
                            .filter(|l| l.starts_with("opt-19") || l.starts_with("llvm-as-19") || l.starts_with("lli-19"))
                            .map(|l| format!("{}\n", unscratch(l)))
                            .collect::<String>()
                    );
                    script = Some(sh);
                } else {
                    why_not = Some("a pass in the pipelines is passlab's or a user's".into());
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
                sh.push_str("# Exits 0 when the bug shows, 1 when it does not.\n");
                sh.push_str(SCRATCH);
                let _ = writeln!(
                    sh,
                    "{} -passes={}{verify} reduced.ll -disable-output > \"$t/opt.out\" 2>&1; status=$?",
                    opt(&s, &target),
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
                    Ending::Fatal { message, .. } => {
                        format!("grep -qF {} \"$t/opt.out\"", key(message))
                    }
                    Ending::Invalid { message, .. } => {
                        format!(
                            "[ \"$status\" -ne 0 ] && grep -qF {} \"$t/opt.out\"",
                            key(message)
                        )
                    }
                    _ => "false".to_string(),
                };
                let _ = writeln!(
                    sh,
                    "cat \"$t/opt.out\"\nif {check}; then\n  echo \"opt-19 shows the bug (exit status $status)\"\n  exit 0\nfi\necho \"opt-19 ended with status $status: the bug does not show\"\nexit 1"
                );
                let _ = write!(
                    readme,
                    "Without passlab: `sh repro.sh`, which runs\n\n```sh\n{} -passes={}{verify} reduced.ll -disable-output\n```\n\n",
                    opt(&s, &target),
                    quote(&s.passes)
                );
                script = Some(sh);
            } else {
                why_not = Some("a pass in the pipeline is passlab's or a user's".into());
            }
        }
        Property::Accepted { pass } => {
            why_not = Some(format!(
                "the property is a Rust predicate of the session ({pass})"
            ));
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
                "did not show the bug (repro.plab shows it with passlab)"
            }
        );
    }
    // How the reduction went: one row per smaller candidate found.
    let mut csv = String::from("seconds,instructions,source_bytes,candidates_tested\n");
    for st in &reduction.steps {
        let _ = writeln!(
            csv,
            "{:.3},{},{},{}",
            st.at.as_secs_f64(),
            st.instructions,
            st.bytes.map_or(String::new(), |b| b.to_string()),
            st.tests
        );
    }
    write("progress.csv", &csv)?;
    files.push("progress.csv".into());
    readme.push_str("\n`progress.csv` has the reduction's steps: the seconds from its start, the instructions (and, for C, the source's bytes) of each smaller candidate found, and the candidates tested until then.\n");
    write("README.md", &readme)?;
    Ok(Reproducer {
        dir: dir.to_path_buf(),
        files,
        with_llvm_tools,
        why_not_llvm_tools: if with_llvm_tools { None } else { why_not },
        shows_bug,
        output,
    })
}
