//! Fidelity: C and C++ reach the pipelines as clang hands them over, so that
//! a source loaded at a level and run through that level's pipeline is what
//! clang-19 makes at that level, byte for byte. For every sample file (zlib's
//! 15, Lua's 32, sqlite3's amalgamation) and a C++ file (cxx's runtime), at
//! O1, O2, O3, Os and Oz: `Module::load` of the file at the level, then the
//! pipeline of that name (what `:load FILE level=OL` and `:run OL` do),
//! printed, against `clang-19 -OL -fno-discard-value-names -emit-llvm -S`;
//! and at O2 the machine code `:asm` shows against `clang-19 -O2 -S`
//! (instructions and labels; directives and comments aside); sqlite3's
//! hand-over at O2 also goes through `opt-19 -passes='default<O2>'`, which
//! must make as many functions and instructions as passlab's pipeline. Any
//! difference fails with the first differing line.
//!
//! clang's own output for a file, level and clang version is kept under
//! `~/.cache/passlab/fidelity-reference/` (named by a hash of all three
//! and the file's bytes): a reference made once is the same every time,
//! in every clone on the machine, and only passlab's side has to run again.

mod common;

use common::{cache, inputs, opt19};
use passlab::jit::asm::{assembly, Syntax};
use passlab::jit::Codegen;
use passlab::module::Level;
use passlab::{pipeline, Module, Source};
use std::path::{Path, PathBuf};
use std::process::Command;

const LEVELS: [Level; 5] = [Level::O1, Level::O2, Level::O3, Level::Os, Level::Oz];

fn clang() -> PathBuf {
    passlab::module::clang_path()
}

fn clang_version() -> String {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| cache::version(&clang())).clone()
}

/// What clang-19 makes of `file` with `flags` (`-o -`), kept in the
/// cache's `fidelity-reference` folder (see `common::cache`), so that a
/// fresh clone on the same machine (CI's) does not run clang-19 some 300
/// times again for the same answers. The key is clang's version, the
/// flags, the path (the module names it) and the source's bytes.
fn reference(file: &Path, flags: &[&str]) -> String {
    let dir = cache::folder("fidelity-reference");
    let source = std::fs::read(file).unwrap();
    let key = cache::hash(&[
        clang_version().as_bytes(),
        flags.join(" ").as_bytes(),
        file.display().to_string().as_bytes(),
        &source,
    ]);
    if let Ok(text) = std::fs::read_to_string(dir.join(&key)) {
        return text;
    }
    let out = Command::new(clang())
        .args(flags)
        .arg(file)
        .args(["-o", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "clang-19 {} {}: {}",
        flags.join(" "),
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    cache::keep(&dir, &key, text.as_bytes());
    text
}

fn first_difference(theirs: &str, ours: &str) -> Option<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (theirs.lines().collect(), ours.lines().collect());
    let at = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i))?;
    let show = |v: &[&str]| {
        v[at.saturating_sub(2)..(at + 3).min(v.len())]
            .iter()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Some(format!(
        "line {}:\n  clang-19:\n{}\n  passlab:\n{}",
        at + 1,
        show(&a),
        show(&b)
    ))
}

/// IR as both print it, less the two lines that name the input (passlab
/// names a module by the path it was given, as clang does, but a reference
/// made elsewhere may have another).
fn ir_lines(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("; ModuleID") && !l.starts_with("source_filename"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Assembly's instructions and labels: no directives, no comments, no
/// blank lines.
fn asm_lines(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let code = match line.find('#') {
            Some(at) => &line[..at],
            None => line,
        }
        .trim_end();
        let t = code.trim_start();
        if t.is_empty() || (t.starts_with('.') && !t.ends_with(':')) {
            continue;
        }
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The flags a file needs on both sides: C++ for `.cc`; zlib's gz*.c
/// declare `lseek` only with `HAVE_UNISTD_H` (as zlib's configure sets it).
fn language_flags(file: &Path) -> Vec<&'static str> {
    if file.extension().is_some_and(|e| e == "cc") {
        vec!["-x", "c++"]
    } else if file.starts_with(inputs::zlib_dir()) {
        vec!["-DHAVE_UNISTD_H"]
    } else {
        vec![]
    }
}

/// One file at every level (and its machine code at O2); the differences
/// found, one line each.
fn check(file: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    for level in LEVELS {
        let flag = format!("-{level}");
        let mut flags = vec![
            flag.as_str(),
            "-fno-discard-value-names",
            "-emit-llvm",
            "-S",
        ];
        flags.extend(language_flags(file));
        let theirs = reference(file, &flags);
        let extra: Vec<&str> = language_flags(file)
            .into_iter()
            .filter(|f| f.starts_with("-D"))
            .collect();
        let loaded =
            Source::file(file).and_then(|s| Module::load(&[s.clang_args(extra).level(level)]));
        let mut m = match loaded {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{} at {level}: {e}", file.display()));
                continue;
            }
        };
        // sqlite3 at O2 also goes through opt-19 from the same hand-over.
        let handed = (level == Level::O2 && file == inputs::sqlite3_c()).then(|| m.copy());
        pipeline::level_pipeline(level)
            .and_then(|p| p.apply(&mut m))
            .unwrap_or_else(|e| panic!("{} at {level}: {e}", file.display()));
        if let Some(handed) = handed {
            failures.extend(opt_agrees(&handed, &m));
        }
        if let Some(d) = first_difference(&ir_lines(&theirs), &ir_lines(&m.print())) {
            failures.push(format!(
                "{} at {level} differs from clang-19 -{level} at {d}",
                file.display()
            ));
            continue;
        }
        if level == Level::O2 {
            let mut flags = vec!["-O2", "-S"];
            flags.extend(language_flags(file));
            let theirs = reference(file, &flags);
            let ours = assembly(&m, &Codegen::level(2), Syntax::Att)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
                .text;
            if let Some(d) = first_difference(&asm_lines(&theirs), &asm_lines(&ours)) {
                failures.push(format!(
                    "{}: machine code at O2 differs from clang-19 -O2 -S at {d}",
                    file.display()
                ));
            }
        }
    }
    failures
}

/// `opt-19 -passes='default<O2>'` on the bitcode clang handed over makes
/// what passlab's `default<O2>` made of it (`ours`): as many functions and
/// instructions, and a module that verifies. (`opt19::chain` gives opt-19
/// clang's target machine for the position-independent module clang made:
/// without it opt-19 keeps pointer tables that clang and passlab turn into
/// relative ones, 241,340 instructions against 241,268 for sqlite3.)
fn opt_agrees(handed: &Module, ours: &Module) -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fidelity-opt");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("handed.bc");
    handed.save(&input).unwrap();
    let output = opt19::chain(&input, &["default<O2>".to_string()], &dir);
    let by_opt = Module::from_file(&output).unwrap();
    by_opt.verify().unwrap();
    let (theirs, ours) = (by_opt.stats(), ours.stats());
    std::fs::remove_dir_all(&dir).unwrap();
    (theirs.instructions != ours.instructions || theirs.functions != ours.functions).then(|| {
        format!(
            "opt-19 -passes='default<O2>' made {} functions and {} instructions, passlab {} and {}",
            theirs.functions, theirs.instructions, ours.functions, ours.instructions
        )
    })
}

fn check_all(files: &[PathBuf]) {
    let mut failures = Vec::new();
    for f in files {
        failures.extend(check(f));
    }
    assert!(
        failures.is_empty(),
        "{} of {} files × {} levels differ from clang-19:\n{}",
        failures.len(),
        files.len(),
        LEVELS.len(),
        failures.join("\n")
    );
}

fn c_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    files
}

#[test]
fn zlib_lua_and_cxx_at_every_level_are_what_clang_makes() {
    let mut files = c_files(&inputs::zlib_dir());
    assert_eq!(files.len(), 15, "zlib's C files");
    let lua = c_files(&inputs::lua_dir());
    assert_eq!(lua.len(), 32, "Lua's C files");
    files.extend(lua);
    files.push(inputs::cxx_cc());
    check_all(&files);
}

#[test]
fn sqlite3_at_every_level_is_what_clang_makes() {
    check_all(&[inputs::sqlite3_c()]);
}

/// What a reproducer's `repro.sh` runs for a level (`opt-19
/// -passes=SPELLING`, the spelling `pipeline::llvm_spelling` gives) makes
/// of clang's hand-over what passlab's `:run` of that level makes, byte for
/// byte: `opt-19 -passes='default<Oz>'` alone would not (LLVM's parser
/// leaves the SLP vectorizer out of Oz, which clang runs).
#[test]
fn reproducers_spell_each_level_as_passlab_runs_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fidelity-spelling");
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let files = [
        inputs::zlib_dir().join("deflate.c"),
        inputs::lua_dir().join("ltable.c"),
    ];
    for file in &files {
        for level in LEVELS {
            let input = Module::load(&[Source::file(file).unwrap().level(level)]).unwrap();
            let mut ours = input.copy();
            pipeline::level_pipeline(level)
                .unwrap()
                .apply(&mut ours)
                .unwrap();
            let spelling = pipeline::llvm_spelling(&level.to_string()).expect("an LLVM pipeline");
            assert!(spelling.plugins.is_empty());
            let ll = dir.join(format!(
                "{}-{level}.ll",
                file.file_stem().unwrap().to_string_lossy()
            ));
            std::fs::write(&ll, input.print()).unwrap();
            let out = Command::new("opt-19")
                .arg(format!("-passes={}", spelling.passes))
                .arg(&ll)
                .args(["-S", "-o", "-"])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "opt-19: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            // Compared without local names: passlab's module keeps clang's
            // symbol tables' name counters (`%or.cond145`), text read by
            // opt-19 starts them again (`%or.cond1`).
            let theirs = unnamed(&String::from_utf8(out.stdout).unwrap());
            if let Some(d) =
                first_difference(&ir_lines(&theirs), &ir_lines(&unnamed(&ours.print())))
            {
                failures.push(format!(
                    "{} at {level}: opt-19 -passes=<spelling> differs at {d}",
                    file.display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// IR without the names of its local values (opt-19's `strip`).
fn unnamed(ir: &str) -> String {
    use std::io::Write;
    let mut child = Command::new("opt-19")
        .args(["-passes=strip", "-S", "-o", "-", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = ir.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}
