//! Reproducers: a finding as a folder someone else can run. It holds the
//! reduced module (`reduced.ll`; for a crash in `:run --out`, the module
//! as it was before the command, `input.ll`, with what the session said),
//! a `README.md` saying what the bug is and
//! how to see it, `repro.sh` — `opt-19` and `lli-19` (or `opt-19` alone
//! for a crash) showing the bug without passlab, when every pass involved
//! is LLVM's or a plugin's; for a function's result, through `driver.ll`,
//! which calls it with the finding's arguments and prints what it returns
//! — and `repro.plab`, the same with `passlab run`.
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

impl Reproducer {
    /// What `:reduce` says of it: the folder, its files, and how to see the
    /// bug there (`sh repro.sh`, or `passlab run repro.plab` when LLVM's
    /// tools cannot show it or did not).
    pub fn note(&self) -> String {
        format!(
            "reproducer in {}: {}{}",
            self.dir.display(),
            self.files.join(", "),
            match (self.with_llvm_tools, self.shows_bug) {
                (true, true) =>
                    "; sh repro.sh shows the bug with LLVM's tools, without passlab".to_string(),
                (true, false) =>
                    "; sh repro.sh did not show it: passlab run repro.plab does".to_string(),
                (false, _) => format!(
                    "; passlab run repro.plab shows it (no repro.sh: {})",
                    self.why_not_llvm_tools
                        .as_deref()
                        .unwrap_or("LLVM's tools cannot show it")
                ),
            }
        )
    }
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

/// A pipeline as LLVM's tools spell it: `None` when one of its passes is
/// passlab's or a user's; `Some(None)` for no pipeline (the module as it
/// is).
fn spelling(text: &str) -> Option<Option<LlvmSpelling>> {
    if text.is_empty() {
        Some(None)
    } else {
        llvm_spelling(text).map(Some)
    }
}

/// The line of `repro.sh` that makes `$t/OUT.bc`: `file` (`reduced.ll`)
/// through the pipeline with `opt-19`, or as it is with `llvm-as-19`.
fn pipeline_line(
    sh: &mut String,
    file: &str,
    out: &str,
    spelling: &Option<LlvmSpelling>,
    target: &str,
) {
    let _ = match spelling {
        None => writeln!(sh, "llvm-as-19 {file} -o \"$t/{out}.bc\" || exit 2"),
        Some(s) => writeln!(
            sh,
            "{} -passes={} {file} -o \"$t/{out}.bc\" || exit 2",
            opt(s, target),
            quote(&s.passes)
        ),
    };
}

/// The lines of `repro.sh` that run LLVM's tools, as a reader would type
/// them (for the README).
fn tool_lines(sh: &str) -> String {
    sh.lines()
        .filter(|l| {
            ["opt-19", "llvm-as-19", "llvm-link-19", "lli-19"]
                .iter()
                .any(|t| l.starts_with(t))
        })
        .map(|l| format!("{}\n", unscratch(l)))
        .collect()
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

/// `driver.ll`: a `passlab_driver` that calls `function` of `module` with
/// `args` (as passlab's JIT passes them: integers truncated to the
/// parameter's width, floats rounded to its precision) and prints what it
/// returns (integers in decimal, floats with 17 digits), for lli-19; or
/// why there can be none (a buffer argument, a type calls cannot pass).
fn driver(
    module: &crate::Module,
    function: &str,
    args: &[crate::jit::Arg],
) -> std::result::Result<String, String> {
    let sig = crate::jit::signature_in(module, function)?;
    if sig.params.len() != args.len() {
        return Err(format!(
            "{function} takes {} arguments, the finding gave {}",
            sig.params.len(),
            args.len()
        ));
    }
    let passed = sig
        .params
        .iter()
        .zip(args)
        .map(|(p, a)| passed_arg(p, a))
        .collect::<std::result::Result<Vec<String>, String>>()?;
    let name = function.replace('\\', "\\5C").replace('"', "\\22");
    let ret = sig.ret.map_or("void".to_string(), |r| r.to_string());
    let params: Vec<String> = sig.params.iter().map(|p| p.to_string()).collect();
    let call = format!("call {ret} @\"{name}\"({})", passed.join(", "));
    let (body, print) = call_and_print(sig.ret, &call)?;
    let mut ir = String::from("; passlab's driver: calls the function with the finding's arguments and\n; prints what it returns (lli-19 --entry-function=passlab_driver).\n");
    // The module's target, so that llvm-link joins them without a warning.
    let layout = module.data_layout();
    if !layout.is_empty() {
        let _ = writeln!(ir, "target datalayout = \"{layout}\"");
    }
    let triple = module.triple();
    if !triple.is_empty() {
        let _ = writeln!(ir, "target triple = \"{triple}\"");
    }
    ir.push('\n');
    let mut printing = String::new();
    if let Some((format, ty)) = print {
        let _ = writeln!(
            ir,
            "@fmt = private unnamed_addr constant [{} x i8] c\"{format}\\0A\\00\"\ndeclare i32 @printf(ptr, ...)",
            format.len() + 2
        );
        printing = format!("  %p = call i32 (ptr, ...) @printf(ptr @fmt, {ty} %v)\n");
    }
    let _ = write!(
        ir,
        "declare {ret} @\"{name}\"({})\n\ndefine i32 @passlab_driver() {{\n{body}{printing}  ret i32 0\n}}\n",
        params.join(", ")
    );
    Ok(ir)
}

/// Argument `a` as the driver passes it to a parameter of type `p` (as
/// passlab's JIT does: integers truncated to the width, floats rounded to
/// the precision); or why it cannot.
fn passed_arg(p: &crate::jit::Scalar, a: &crate::jit::Arg) -> std::result::Result<String, String> {
    use crate::jit::{Arg, Scalar};
    Ok(match (p, a) {
        (Scalar::Int(1), Arg::Int(i)) => {
            format!("i1 {}", if i & 1 == 1 { "true" } else { "false" })
        }
        (Scalar::Int(bits), Arg::Int(i)) => {
            // Truncated to the width, read back signed.
            let v = match 64u32.checked_sub(*bits) {
                Some(shift) if shift > 0 => (i << shift) >> shift,
                _ => *i,
            };
            format!("i{bits} {v}")
        }
        (Scalar::F32, Arg::Float(f)) => {
            format!("float 0x{:016X}", ((*f as f32) as f64).to_bits())
        }
        (Scalar::F64, Arg::Float(f)) => format!("double 0x{:016X}", f.to_bits()),
        (Scalar::F32, Arg::Int(i)) => {
            format!("float 0x{:016X}", ((*i as f32) as f64).to_bits())
        }
        (Scalar::F64, Arg::Int(i)) => format!("double 0x{:016X}", (*i as f64).to_bits()),
        (Scalar::Ptr, _) | (_, Arg::Buffer(_)) => {
            return Err(
                "the function takes buffers, which LLVM's tools cannot set up: repro.plab calls it"
                    .into(),
            )
        }
        (p, _) => {
            return Err(format!(
                "an argument of type {p} that the finding gave otherwise"
            ))
        }
    })
}

/// How the driver prints a result: printf's format, and the type it
/// passes.
type Printf = (&'static str, &'static str);

/// The driver's body making `call` to a function returning `ret`, the
/// result widened to what printf takes (`%v`), and how it is printed
/// (format and type; none for void); or why it cannot be.
fn call_and_print(
    ret: Option<crate::jit::Scalar>,
    call: &str,
) -> std::result::Result<(String, Option<Printf>), String> {
    use crate::jit::Scalar;
    Ok(match ret {
        None => (format!("  {call}\n"), None),
        Some(Scalar::Int(1)) => (
            format!("  %r = {call}\n  %v = zext i1 %r to i64\n"),
            Some(("%lld", "i64")),
        ),
        Some(Scalar::Int(bits)) if bits < 64 => (
            format!("  %r = {call}\n  %v = sext i{bits} %r to i64\n"),
            Some(("%lld", "i64")),
        ),
        Some(Scalar::Int(64)) => (format!("  %v = {call}\n"), Some(("%lld", "i64"))),
        Some(Scalar::Int(_)) => {
            return Err("the function returns an integer wider than 64 bits".into())
        }
        Some(Scalar::F32) => (
            format!("  %r = {call}\n  %v = fpext float %r to double\n"),
            Some(("%.17g", "double")),
        ),
        Some(Scalar::F64) => (format!("  %v = {call}\n"), Some(("%.17g", "double"))),
        Some(Scalar::Ptr) => {
            return Err("the function returns a pointer, which differs from run to run".into())
        }
    })
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
    let shown = Shown {
        module: &reduction.module,
        file: "reduced.ll",
        steps: Some(&reduction.steps),
        said: None,
    };
    write_reproducer(out, sub, &shown, property)
}

/// Writes the reproducer of a crash: `pipeline` crashed in `pass` (`how`:
/// the signal in words) when it ran on `module`, the module as it was
/// before the run, and the session said `said`. Into `out` (what its job
/// wrote there before goes first): `input.ll`, `README.md`, `repro.plab`
/// and, when every pass is LLVM's or a plugin's, `repro.sh`, run once.
pub fn crash_reproducer(
    out: &OwnedDir,
    module: &crate::Module,
    pipeline: &str,
    pass: &str,
    how: &str,
    said: &str,
) -> Result<Reproducer> {
    out.remove_own()?;
    let property = Property::Fails {
        pipeline: pipeline.to_string(),
        ending: Ending::Crash {
            pass: pass.to_string(),
            signal: how.to_string(),
        },
    };
    let shown = Shown {
        module,
        file: "input.ll",
        steps: None,
        said: Some(said),
    };
    write_reproducer(out, "", &shown, &property)
}

/// What a reproducer shows its property on.
struct Shown<'a> {
    module: &'a crate::Module,
    /// Its file in the folder: `reduced.ll` (a reduction's) or `input.ll`
    /// (the module a command ran on).
    file: &'static str,
    /// A reduction's steps, for `progress.csv`.
    steps: Option<&'a [super::Step]>,
    /// What the session said of the failure, for the README.
    said: Option<&'a str>,
}

/// The reproducer's folder as it is written: the files, in order.
struct Folder<'a> {
    out: &'a OwnedDir,
    /// The subfolder of `out` it is in (empty: `out` itself).
    sub: &'a str,
    dir: PathBuf,
    files: Vec<String>,
}

impl<'a> Folder<'a> {
    /// The folder: `out`, or its subfolder `sub` (made).
    fn new(out: &'a OwnedDir, sub: &'a str) -> Result<Folder<'a>> {
        let dir = if sub.is_empty() {
            out.path().to_path_buf()
        } else {
            out.create_dir(sub)?
        };
        Ok(Folder {
            out,
            sub,
            dir,
            files: Vec::new(),
        })
    }

    /// `name`'s path in `out`.
    fn rel(&self, name: &str) -> String {
        if self.sub.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.sub)
        }
    }

    /// Writes `name` (in the subfolder) and lists it.
    fn write(&mut self, name: &str, bytes: impl AsRef<[u8]>) -> Result<()> {
        self.out.write(&self.rel(name), bytes)?;
        self.files.push(name.to_string());
        Ok(())
    }
}

/// What the reproducer's scripts say of the finding and where it was made.
struct Finding<'a> {
    /// The property, described.
    what: String,
    /// The module's file in the folder.
    file: &'a str,
    /// The module's name (a program's `argv[0]`).
    name: String,
    /// The code generator's level and target, as the session's.
    cg: crate::jit::Codegen,
    /// `target_flags(cg)`.
    target: String,
}

/// A script for LLVM's tools, or why there is none.
type Script = std::result::Result<String, String>;

/// Writes the reproducer (see [`reproducer`], [`crash_reproducer`]).
fn write_reproducer(
    out: &OwnedDir,
    sub: &str,
    shown: &Shown,
    property: &Property,
) -> Result<Reproducer> {
    let module = shown.module;
    let mut folder = Folder::new(out, sub)?;
    folder.write(shown.file, module.print())?;
    // README.md is written last, but listed second.
    folder.files.push("README.md".to_string());
    // The context the finding was made in: its settings (repro.plab's
    // :with) and the code generator's level and target (repro.sh's flags).
    let ctx = crate::PassContext::current();
    let cg = crate::jit::Codegen::from_context(&ctx)?;
    let finding = Finding {
        what: property.describe(&module.name()),
        file: shown.file,
        name: module.name(),
        target: target_flags(&cg),
        cg,
    };
    let mut readme = readme_head(shown, &finding.what);
    let mut plab = plab_head(&finding, property);
    let with = ctx.as_with();
    if !with.is_empty() {
        let _ = writeln!(plab, ":with {with}");
        let _ = write!(
            readme,
            "It was found in a context that `repro.plab` enters again: `:with {with}`.\n\n"
        );
    }
    let script = property_lines(
        &mut folder,
        &finding,
        module,
        property,
        &mut plab,
        &mut readme,
    )?;
    folder.write("repro.plab", &plab)?;
    let with_llvm_tools = script.is_ok();
    let (shows_bug, output) = match &script {
        Ok(sh) => run_script(&mut folder, sh, &mut readme)?,
        Err(_) => (false, String::new()),
    };
    closing(&mut folder, shown.steps, property, &mut readme)?;
    // Listed second already.
    out.write(&folder.rel("README.md"), &readme)?;
    Ok(Reproducer {
        dir: folder.dir,
        files: folder.files,
        with_llvm_tools,
        why_not_llvm_tools: script.err(),
        shows_bug,
        output,
    })
}

/// What repro.plab and the README say of the property, and the script
/// for LLVM's tools that shows it (or why there is none).
fn property_lines(
    folder: &mut Folder,
    finding: &Finding,
    module: &crate::Module,
    property: &Property,
    plab: &mut String,
    readme: &mut String,
) -> Result<Script> {
    Ok(match property {
        Property::Differs {
            subject,
            first,
            second,
            ..
        } => differs(
            folder,
            finding,
            module,
            subject,
            [first, second],
            plab,
            readme,
        )?,
        Property::Fails { pipeline, ending } => fails(finding, pipeline, ending, plab, readme),
        Property::Accepted { pass } => {
            let _ = write!(
                readme,
                "The property is a Rust predicate of the session ({pass}): define it again and `:reduce rust` it to check.\n\n"
            );
            Err(format!(
                "the property is a Rust predicate of the session ({pass})"
            ))
        }
    })
}

/// The README's last words: a reduction's steps (`progress.csv`), or how
/// to shrink a failing pipeline's module.
fn closing(
    folder: &mut Folder,
    steps: Option<&[super::Step]>,
    property: &Property,
    readme: &mut String,
) -> Result<()> {
    match steps {
        Some(steps) => {
            folder.write("progress.csv", progress_csv(steps))?;
            readme.push_str("\n`progress.csv` has the reduction's steps: the seconds from its start, the instructions (and, for C, the source's bytes) of each smaller candidate found, and the candidates tested until then.\n");
        }
        None => {
            if let Property::Fails { pipeline, .. } = property {
                let _ = write!(
                    readme,
                    "\nTo shrink it, type the lines of `repro.plab` before its `:run` in passlab, then `:reduce fails {pipeline} --out FOLDER` (a new folder).\n"
                );
            }
        }
    }
    Ok(())
}

/// The README's opening: what the finding is, the module that shows it,
/// and what the session said.
fn readme_head(shown: &Shown, what: &str) -> String {
    let file = shown.file;
    let mut readme = format!(
        "# A passlab finding\n\n{what}.\n\n`{file}` ({} instructions{}) shows it. Made by passlab {} with {}.\n\n",
        shown.module.instruction_count(),
        if shown.steps.is_none() {
            ", the module as it was before the command"
        } else {
            ""
        },
        env!("CARGO_PKG_VERSION"),
        crate::llvm::version()
    );
    if let Some(said) = shown.said {
        let _ = write!(
            readme,
            "passlab said:\n\n```text\n{}\n```\n\n",
            said.trim_end()
        );
    }
    readme
}

/// `repro.plab`'s opening: the module, and the plugins whose passes the
/// pipelines name, loaded again.
fn plab_head(finding: &Finding, property: &Property) -> String {
    let mut plab = format!("# {}\n:load {}\n", finding.what, finding.file);
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
    plab
}

/// A pipeline as the README names it (`none` for the empty one).
fn label(p: &str) -> String {
    if p.is_empty() {
        "none".to_string()
    } else {
        p.to_string()
    }
}

/// A result that differs between two pipelines: `:bench` in repro.plab,
/// and the script running both with LLVM's tools.
fn differs(
    folder: &mut Folder,
    finding: &Finding,
    module: &crate::Module,
    subject: &Subject,
    [first, second]: [&String; 2],
    plab: &mut String,
    readme: &mut String,
) -> Result<Script> {
    let args = subject_words(folder, subject, readme)?;
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
    let no_spelling = || "a pass in the pipelines is passlab's or a user's".to_string();
    match subject {
        Subject::Call { function, args } => {
            // LLVM's tools run programs: a driver (driver.ll) calls the
            // function with the finding's arguments and prints its
            // result; linked to each pipeline's output, lli-19 runs it.
            let ir = match driver(module, function, args) {
                Ok(ir) => ir,
                Err(why) => return Ok(Err(why)),
            };
            let (Some(a), Some(b)) = (spelling(first), spelling(second)) else {
                return Ok(Err(no_spelling()));
            };
            folder.write("driver.ll", &ir)?;
            let sh = call_script(finding, [&a, &b], [first, second]);
            let _ = write!(
                readme,
                "Without passlab: `sh repro.sh` runs the pipelines with `opt-19`, links each result to `driver.ll` (a `passlab_driver` that calls `{function}` with the finding's arguments and prints what it returns) and runs it with `lli-19`:\n\n```sh\n{}```\n\n",
                tool_lines(&sh)
            );
            Ok(Ok(sh))
        }
        Subject::Exec(p) => {
            let (Some(a), Some(b)) = (spelling(first), spelling(second)) else {
                return Ok(Err(no_spelling()));
            };
            let sh = exec_script(finding, p, [&a, &b], [first, second]);
            let _ = write!(
                readme,
                "Without passlab: `sh repro.sh` runs the pipelines with `opt-19` and the program with `lli-19`:\n\n```sh\n{}```\n\n",
                tool_lines(&sh)
            );
            Ok(Ok(sh))
        }
    }
}

/// What `:bench` is given for the subject: `exec` and the program's
/// arguments (its standard input written to `stdin.txt`), or the function
/// and its arguments (buffers as BUFFER, which the README explains).
fn subject_words(folder: &mut Folder, subject: &Subject, readme: &mut String) -> Result<String> {
    match subject {
        Subject::Exec(p) => {
            let mut words = vec!["exec".to_string()];
            words.extend(p.args.iter().map(|a| quote(a)));
            let bytes = match &p.stdin {
                Stdin::Null => None,
                Stdin::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned().into_bytes()),
                Stdin::File(f) => Some(std::fs::read(f).map_err(|e| Error::io(f.display(), e))?),
            };
            if let Some(bytes) = bytes {
                folder.write("stdin.txt", bytes)?;
                words.push("stdin=@stdin.txt".into());
            }
            Ok(words.join(" "))
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
            Ok(format!("{function} {}", words.join(" ")))
        }
    }
}

/// The end of a script comparing the two runs' outputs (`what` says
/// what is the same when the bug does not show).
fn compare_lines(sh: &mut String, same: &str, what: &str, [first, second]: [&String; 2]) {
    let _ = writeln!(
        sh,
        "if {same}; then\n  echo 'the same {what} after both pipelines: the bug does not show'\n  exit 1\nfi\necho '--- after {}:'; cat \"$t/first.out\" \"$t/first.err\"\necho '--- after {}:'; cat \"$t/second.out\" \"$t/second.err\"\nexit 0",
        label(first),
        label(second)
    );
}

/// `repro.sh` for a function's result: each pipeline's output linked to
/// `driver.ll` and run by lli-19.
fn call_script(
    f: &Finding,
    spellings: [&Option<LlvmSpelling>; 2],
    pipelines: [&String; 2],
) -> String {
    let mut sh = String::from("#!/bin/sh\n");
    let _ = writeln!(sh, "# {}", f.what);
    sh.push_str("# Exits 0 when the bug shows (the function returns something else, or\n# the program ends otherwise, after the second pipeline), 1 when it does not.\n");
    sh.push_str(SCRATCH);
    for (out, spelling) in [("first", spellings[0]), ("second", spellings[1])] {
        pipeline_line(&mut sh, f.file, out, spelling, &f.target);
        let _ = writeln!(
            sh,
            "llvm-link-19 \"$t/{out}.bc\" driver.ll -o \"$t/{out}-run.bc\" || exit 2"
        );
    }
    for out in ["first", "second"] {
        let _ = writeln!(
            sh,
            "lli-19 -O{}{} --entry-function=passlab_driver \"$t/{out}-run.bc\" < /dev/null > \"$t/{out}.out\" 2> \"$t/{out}.err\"; echo \"exit $?\" >> \"$t/{out}.out\"",
            f.cg.opt_level, f.target
        );
    }
    compare_lines(
        &mut sh,
        "cmp -s \"$t/first.out\" \"$t/second.out\"",
        "result",
        pipelines,
    );
    sh
}

/// `repro.sh` for a program: each pipeline's output run by lli-19 with
/// the program's arguments and standard input.
fn exec_script(
    f: &Finding,
    p: &crate::jit::Program,
    spellings: [&Option<LlvmSpelling>; 2],
    pipelines: [&String; 2],
) -> String {
    let stdin = if matches!(p.stdin, Stdin::Null) {
        "/dev/null"
    } else {
        "stdin.txt"
    };
    let argv: Vec<String> = p.args.iter().map(|a| quote(a)).collect();
    let mut sh = String::from("#!/bin/sh\n");
    let _ = writeln!(sh, "# {}", f.what);
    sh.push_str("# Exits 0 when the bug shows (the program prints something else, or\n# ends otherwise, after the second pipeline), 1 when it does not.\n");
    sh.push_str(SCRATCH);
    for (out, spelling) in [("first", spellings[0]), ("second", spellings[1])] {
        pipeline_line(&mut sh, f.file, out, spelling, &f.target);
    }
    for out in ["first", "second"] {
        // The code generator as the session's: its level and target.
        let _ = writeln!(
            sh,
            "lli-19 -O{}{} --fake-argv0={} \"$t/{out}.bc\" {} < {stdin} > \"$t/{out}.out\" 2> \"$t/{out}.err\"; echo \"exit $?\" >> \"$t/{out}.out\"",
            f.cg.opt_level,
            f.target,
            quote(&f.name),
            argv.join(" ")
        );
    }
    compare_lines(
        &mut sh,
        "cmp -s \"$t/first.out\" \"$t/second.out\" && cmp -s \"$t/first.err\" \"$t/second.err\"",
        "output",
        pipelines,
    );
    sh
}

/// A pipeline that fails: `:run` in repro.plab, and opt-19 in the script,
/// which checks the failure's kind (a crash's status, a message's start).
fn fails(
    f: &Finding,
    pipeline: &str,
    ending: &Ending,
    plab: &mut String,
    readme: &mut String,
) -> Script {
    let _ = writeln!(plab, ":run {pipeline}");
    let _ = write!(
        readme,
        "With passlab: `passlab run repro.plab` runs the pipeline: {}.\n\n",
        ending.describe()
    );
    let Some(s) = llvm_spelling(pipeline) else {
        return Err("a pass in the pipeline is passlab's or a user's".into());
    };
    let verify = if matches!(ending, Ending::Invalid { .. }) {
        " -verify-each"
    } else {
        ""
    };
    let file = f.file;
    let mut sh = String::from("#!/bin/sh\n");
    let _ = writeln!(sh, "# {}", f.what);
    sh.push_str("# Exits 0 when the bug shows, 1 when it does not.\n");
    sh.push_str(SCRATCH);
    let _ = writeln!(
        sh,
        "{} -passes={}{verify} {file} -disable-output > \"$t/opt.out\" 2>&1; status=$?",
        opt(&s, &f.target),
        quote(&s.passes)
    );
    let check = match ending {
        Ending::Crash { .. } => "[ \"$status\" -gt 128 ]".to_string(),
        Ending::Fatal { message, .. } => {
            format!("grep -qF {} \"$t/opt.out\"", message_key(message))
        }
        Ending::Invalid { message, .. } => {
            format!(
                "[ \"$status\" -ne 0 ] && grep -qF {} \"$t/opt.out\"",
                message_key(message)
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
        "Without passlab: `sh repro.sh`, which runs\n\n```sh\n{} -passes={}{verify} {file} -disable-output\n```\n\n",
        opt(&s, &f.target),
        quote(&s.passes)
    );
    Ok(sh)
}

/// A message's first line up to the first name or number (which a
/// reduction changes), quoted as a fixed string for grep.
fn message_key(message: &str) -> String {
    let first = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let key: String = first
        .trim()
        .chars()
        .take_while(|c| !c.is_ascii_digit() && !matches!(c, '%' | '@' | '"'))
        .collect();
    quote(key.trim_end())
}

/// Writes `repro.sh` and runs it once: whether it showed the bug, and
/// what it printed (the README says which).
fn run_script(folder: &mut Folder, sh: &str, readme: &mut String) -> Result<(bool, String)> {
    folder.write("repro.sh", sh)?;
    let out = std::process::Command::new("sh")
        .arg(folder.dir.join("repro.sh"))
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| Error::Tool {
            tool: "sh".into(),
            message: format!("cannot run repro.sh: {e}"),
        })?;
    let shows_bug = out.status.success();
    let output = format!(
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
    Ok((shows_bug, output))
}

/// How the reduction went: one row per smaller candidate found.
fn progress_csv(steps: &[super::Step]) -> String {
    let mut csv = String::from("seconds,instructions,source_bytes,candidates_tested\n");
    for st in steps {
        let _ = writeln!(
            csv,
            "{:.3},{},{},{}",
            st.at.as_secs_f64(),
            st.instructions,
            st.bytes.map_or(String::new(), |b| b.to_string()),
            st.tests
        );
    }
    csv
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jit::Arg;

    #[test]
    fn the_note_says_how_to_see_the_bug() {
        let mut r = Reproducer {
            dir: PathBuf::from("out/r"),
            files: vec!["reduced.ll".into(), "repro.sh".into()],
            with_llvm_tools: true,
            why_not_llvm_tools: None,
            shows_bug: true,
            output: String::new(),
        };
        assert_eq!(
            r.note(),
            "reproducer in out/r: reduced.ll, repro.sh; sh repro.sh shows the bug with LLVM's tools, without passlab"
        );
        r.shows_bug = false;
        assert!(r
            .note()
            .ends_with("; sh repro.sh did not show it: passlab run repro.plab does"));
        r.with_llvm_tools = false;
        assert!(
            r.note()
                .ends_with("(no repro.sh: LLVM's tools cannot show it)"),
            "{}",
            r.note()
        );
        r.why_not_llvm_tools = Some("a Rust pass".into());
        assert!(r
            .note()
            .ends_with("; passlab run repro.plab shows it (no repro.sh: a Rust pass)"));
    }

    const IR: &str = r#"
define i8 @narrow(i8 %x, i16 %y) {
  %w = trunc i16 %y to i8
  %s = add i8 %x, %w
  ret i8 %s
}
define double @mix(float %a, double %b, i64 %c) {
  %e = fpext float %a to double
  %f = sitofp i64 %c to double
  %s = fadd double %e, %b
  %t = fadd double %s, %f
  ret double %t
}
define i1 @odd(i32 %x) {
  %b = trunc i32 %x to i1
  ret i1 %b
}
define void @nothing(i32 %x) {
  ret void
}
define internal i32 @hidden(i32 %x) {
  ret i32 %x
}
define ptr @where(ptr %p) {
  ret ptr %p
}
"#;

    /// What `lli-19` prints when the driver for `function(args)` is
    /// linked to the module.
    fn run(function: &str, args: &[Arg]) -> String {
        let m = crate::Module::from_ir(IR, "m").unwrap();
        let d = driver(&m, function, args).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.ll"), m.print()).unwrap();
        std::fs::write(dir.path().join("driver.ll"), &d).unwrap();
        let link = std::process::Command::new("llvm-link-19")
            .args(["m.ll", "driver.ll", "-o", "run.bc"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            link.status.success(),
            "{}\n{d}",
            String::from_utf8_lossy(&link.stderr)
        );
        // Joined without a warning: the driver has the module's target.
        assert!(
            link.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&link.stderr)
        );
        let out = std::process::Command::new("lli-19")
            .args(["--entry-function=passlab_driver", "run.bc"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn the_driver_passes_arguments_as_the_jit_does_and_prints_the_result() {
        // Integers truncated to the parameter's width (300 is 44 in i8, and
        // 44 + 100 wraps to -112), the result sign-extended.
        assert_eq!(run("narrow", &[Arg::Int(300), Arg::Int(100)]), "-112\n");
        // Floats rounded to the parameter's precision; an integer for a
        // floating-point parameter converted, as the JIT converts it.
        let mix = run("mix", &[Arg::Float(0.1), Arg::Float(0.25), Arg::Int(2)]);
        assert_eq!(
            mix.trim().parse::<f64>().unwrap(),
            (0.1f32 as f64) + 0.25 + 2.0,
            "{mix}"
        );
        assert_eq!(run("odd", &[Arg::Int(3)]), "1\n");
        assert_eq!(run("nothing", &[Arg::Int(3)]), "");
    }

    #[test]
    fn a_function_the_driver_cannot_call_says_why() {
        let m = crate::Module::from_ir(IR, "m").unwrap();
        let why = |f: &str, args: &[Arg]| driver(&m, f, args).unwrap_err();
        assert!(why("hidden", &[Arg::Int(1)]).contains("internal"));
        assert!(why("where", &[Arg::Int(1)]).contains("buffers"));
        assert!(why("nosuch", &[]).contains("no function 'nosuch'"));
        assert!(why("narrow", &[Arg::Int(1)]).contains("takes 2 arguments"));
    }
}
