//! The documentation's examples are tests, as ripgrep's and the Rust
//! book's are: every fenced block of README.md, ARCHITECTURE.md, the guide
//! (`docs/src/`, an mdBook) and the lessons' prose (the Markdown cells of `notebooks/*.ipynb`) is run as a
//! newcomer would run it, in a scratch folder that holds the repository's
//! files and zlib's sources as `zlib/`, and must succeed:
//!
//! * `plab`: the command language, by `passlab run --echo`;
//! * `toml`: a sweep spec, saved as `NAME.toml` and run by `passlab sweep
//!   NAME.toml` there (named without a folder, as the README's sbatch line
//!   passes it), then `passlab sweep merge`; every program must be swept
//!   once;
//! * `sh`: each line is one of passlab's command lines
//!   (`target/release/passlab …`, `target/release/passlab-kernel …`), run
//!   with the binaries under test (the tests' build); a line's comment
//!   `exits with status N` says the status it must end with, else 0;
//! * `rust`: the library's doctests (`src/lib.rs` includes the guide's
//!   chapters that hold them under `cfg(doctest)`), so here they are only
//!   counted;
//! * `python`: a script, run by the project's venv Python
//!   (`target/venv/bin/python`, where the set-up installs the package), in
//!   the scratch folder;
//! * `text`: not a program (a diagram).
//!
//! A block whose first line is the comment `# not run by the tests: WHY`
//! (`// …` in Rust) is not run; the reader sees why. Any other block, or a
//! block without an info string, fails this test.

use std::path::{Path, PathBuf};
use std::process::Command;

const NOT_RUN: &str = "not run by the tests:";

struct Block {
    /// `FILE:LINE` of the opening fence (in a notebook: `FILE cell N`).
    at: String,
    info: String,
    text: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// The fenced blocks of Markdown `text`; `at` names where line `n` is.
fn fenced(text: &str, at: &dyn Fn(usize) -> String) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.trim_start().strip_prefix("```")) {
            (None, Some(info)) => open = Some((i + 1, info.trim().to_string(), Vec::new())),
            (Some(_), Some("")) => {
                let (n, info, lines) = open.take().unwrap();
                blocks.push(Block {
                    at: at(n),
                    info,
                    text: lines.join("\n") + "\n",
                });
            }
            (Some((_, _, lines)), _) => lines.push(line),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "{}: a fence is not closed", at(0));
    blocks
}

fn documents() -> Vec<Block> {
    let root = root();
    let mut blocks = Vec::new();
    let mut docs: Vec<String> = vec!["README.md".into(), "ARCHITECTURE.md".into()];
    let mut guides: Vec<String> = std::fs::read_dir(root.join("docs/src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/src/{n}"))
        .collect();
    guides.sort();
    docs.extend(guides);
    for doc in docs {
        let text = std::fs::read_to_string(root.join(&doc)).unwrap();
        blocks.extend(fenced(&text, &|n| format!("{doc}:{n}")));
    }
    let mut lessons: Vec<PathBuf> = std::fs::read_dir(root.join("notebooks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ipynb"))
        .collect();
    lessons.sort();
    for lesson in lessons {
        let nb: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&lesson).unwrap()).unwrap();
        let name = format!(
            "notebooks/{}",
            lesson.file_name().unwrap().to_string_lossy()
        );
        for (i, cell) in nb["cells"].as_array().unwrap().iter().enumerate() {
            if cell["cell_type"] != "markdown" {
                continue;
            }
            let source = match &cell["source"] {
                serde_json::Value::Array(parts) => {
                    parts.iter().filter_map(|p| p.as_str()).collect()
                }
                serde_json::Value::String(s) => s.clone(),
                _ => String::new(),
            };
            blocks.extend(fenced(&source, &|n| {
                format!("{name} cell {} line {n}", i + 1)
            }));
        }
    }
    blocks
}

/// Why a block is not run, when its first line says so.
fn not_run(b: &Block) -> Option<String> {
    let first = b.text.lines().next().unwrap_or("").trim();
    let comment = first
        .strip_prefix('#')
        .or_else(|| first.strip_prefix("//"))?;
    comment
        .trim()
        .strip_prefix(NOT_RUN)
        .map(|why| why.trim().to_string())
}

/// A scratch folder as a newcomer's checkout: the repository's files
/// (linked), and zlib's sources as `zlib/`.
fn scratch() -> PathBuf {
    let root = root();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("readme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&root).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), dir.join(&name)).unwrap();
    }
    let zlib = root.join("target/inputs/zlib");
    assert!(
        zlib.exists(),
        "{} is missing: bash scripts/passlab.sh test links the sample inputs",
        zlib.display()
    );
    std::os::unix::fs::symlink(zlib, dir.join("zlib")).unwrap();
    dir
}

fn passlab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_passlab"));
    c.env("RUST_BACKTRACE", "0");
    for k in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "JOB_COMPLETION_INDEX",
        "PASSLAB_SHARDS",
    ] {
        c.env_remove(k);
    }
    c
}

/// The binary under test for a program the docs name.
fn binary(program: &str) -> Option<PathBuf> {
    let passlab = PathBuf::from(env!("CARGO_BIN_EXE_passlab"));
    match program {
        "target/release/passlab" | "passlab" => Some(passlab),
        "target/release/passlab-kernel" | "passlab-kernel" => {
            Some(passlab.with_file_name("passlab-kernel"))
        }
        _ => None,
    }
}

/// Runs `c`; an error names the block and shows the output.
fn check(b: &Block, what: &str, c: &mut Command, status: i32) -> Result<String, String> {
    let out = c.output().map_err(|e| format!("{}: {what}: {e}", b.at))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(status) {
        let tail: Vec<&str> = text.lines().rev().take(30).collect();
        return Err(format!(
            "{}: {what} ended with {} (expected status {status}); the last lines:\n{}",
            b.at,
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    Ok(text)
}

fn run_plab(b: &Block, dir: &Path, n: usize) -> Result<(), String> {
    let file = format!("block-{n}.plab");
    std::fs::write(dir.join(&file), &b.text).unwrap();
    check(
        b,
        &format!("passlab run --echo {file}"),
        passlab().args(["run", "--echo", &file]).current_dir(dir),
        0,
    )
    .map(|_| ())
}

fn run_spec(b: &Block, dir: &Path) -> Result<(), String> {
    let spec: toml::Table = b
        .text
        .parse()
        .map_err(|e| format!("{}: not TOML: {e}", b.at))?;
    let name = spec.get("name").and_then(|v| v.as_str()).unwrap_or("sweep");
    let file = format!("{name}.toml");
    std::fs::write(dir.join(&file), &b.text).unwrap();
    let _ = std::fs::remove_dir_all(dir.join(format!("{name}.sweep")));
    check(
        b,
        &format!("passlab sweep {file}"),
        passlab().args(["sweep", &file]).current_dir(dir),
        0,
    )?;
    let out = format!("{name}.sweep");
    check(
        b,
        &format!("passlab sweep merge {out}"),
        passlab().args(["sweep", "merge", &out]).current_dir(dir),
        0,
    )?;
    // Every program once: none searched twice under two spellings of its
    // path (the [[program]]'s and the corpus glob's).
    let records = std::fs::read_to_string(dir.join(&out).join("report/records.jsonl")).unwrap();
    let mut programs = std::collections::BTreeSet::new();
    for line in records.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        programs.insert(r["program"].as_str().unwrap_or("").to_string());
    }
    let mut files = std::collections::BTreeMap::new();
    for p in &programs {
        let file = Path::new(p)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if let Some(other) = files.insert(file, p.clone()) {
            return Err(format!(
                "{}: one file swept twice, as '{other}' and as '{p}'",
                b.at
            ));
        }
    }
    Ok(())
}

fn run_shell(b: &Block, dir: &Path) -> Result<usize, String> {
    let mut ran = 0;
    for line in b.text.lines().filter(|l| !l.trim().is_empty()) {
        let (command, comment) = match line.find(" #") {
            Some(i) => (&line[..i], &line[i + 2..]),
            None => (line, ""),
        };
        if command.trim().is_empty() {
            continue;
        }
        if command.contains(['|', '>', '<', '&', ';', '$', '`']) {
            return Err(format!(
                "{}: '{command}' needs a shell; the test runs one command per line",
                b.at
            ));
        }
        let mut words = command.split_whitespace();
        let program = words.next().unwrap();
        let Some(binary) = binary(program) else {
            return Err(format!(
                "{}: '{}' is not one of passlab's command lines; run it or mark the block '# {NOT_RUN} WHY'",
                b.at,
                command.trim()
            ));
        };
        let status = comment
            .split("exits with status ")
            .nth(1)
            .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut c = Command::new(binary);
        c.args(words)
            .current_dir(dir)
            .env("RUST_BACKTRACE", "0")
            .env("JUPYTER_DATA_DIR", dir.join("jupyter-data"));
        check(b, command.trim(), &mut c, status)?;
        ran += 1;
    }
    Ok(ran)
}

/// A Python block, run as a script by the venv's Python in `dir`.
fn run_python(b: &Block, dir: &Path, n: usize) -> Result<(), String> {
    let python = root().join("target/venv/bin/python");
    if !python.exists() {
        return Err(format!(
            "{}: {} is missing (the set-up makes it: bash scripts/passlab.sh setup)",
            b.at,
            python.display()
        ));
    }
    let script = dir.join(format!("block-{n}.py"));
    std::fs::write(&script, &b.text).map_err(|e| e.to_string())?;
    let out = Command::new(&python)
        .arg(&script)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("{}: {e}", b.at))?;
    if !out.status.success() {
        return Err(format!(
            "{}: python failed ({}):\n{}{}",
            b.at,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

#[test]
fn every_example_in_the_docs_runs_as_written() {
    let dir = scratch();
    let blocks = documents();
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    // The documents src/lib.rs includes under cfg(doctest): their Rust
    // blocks are the library's doctests.
    let doctested: Vec<String> = lib
        .split("#[cfg(doctest)]\n#[doc = include_str!(\"../")
        .skip(1)
        .filter_map(|rest| rest.split('"').next().map(str::to_string))
        .collect();
    let mut failures = Vec::new();
    let (mut ran, mut skipped, mut doctests) = (0, Vec::new(), 0);
    for (n, b) in blocks.iter().enumerate() {
        if let Some(why) = not_run(b) {
            skipped.push(format!("{} ({why})", b.at));
            continue;
        }
        let result = match b.info.as_str() {
            "plab" => run_plab(b, &dir, n).map(|_| 1),
            "toml" => run_spec(b, &dir).map(|_| 1),
            "sh" => run_shell(b, &dir),
            "python" => run_python(b, &dir, n).map(|_| 1),
            "rust"
                if doctested
                    .iter()
                    .any(|d| b.at.strip_prefix(d.as_str()).is_some_and(|r| r.starts_with(':'))) =>
            {
                doctests += 1;
                Ok(0)
            }
            "rust" => Err(format!(
                "{}: a Rust block outside the library's doctests (src/lib.rs includes {doctested:?})",
                b.at
            )),
            "text" => Ok(0),
            "" => Err(format!(
                "{}: a block without an info string (plab, toml, sh, python, rust or text)",
                b.at
            )),
            other => Err(format!(
                "{}: a block of '{other}': the test runs plab, toml, sh, python and rust",
                b.at
            )),
        };
        match result {
            Ok(k) => ran += k,
            Err(e) => failures.push(e),
        }
    }
    eprintln!(
        "docs: {} blocks; {ran} run here (plab and toml blocks, sh lines), {doctests} Rust blocks as doctests, {} not run:\n  {}",
        blocks.len(),
        skipped.len(),
        skipped.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        ran >= 5 && doctests == 3,
        "the test ran too little: {ran} run, {doctests} doctests"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The README is the short way in (issue 61: it said twelve lessons and
/// listed neither lesson 13 nor the projects chapter): its Lessons section
/// links every `notebooks/NN-*.ipynb` and says how many there are, and it
/// links every chapter of the guide's `SUMMARY.md`.
#[test]
fn the_readme_lists_every_lesson_and_every_chapter() {
    let root = root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut lessons: Vec<String> = std::fs::read_dir(root.join("notebooks"))
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            let numbered = name.len() > 3 && name[..2].bytes().all(|b| b.is_ascii_digit());
            (numbered && name[2..].starts_with('-') && name.ends_with(".ipynb")).then_some(name)
        })
        .collect();
    lessons.sort();
    assert!(lessons.len() >= 13, "{lessons:?}");
    let section = readme
        .split("\n## Lessons\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README has a Lessons section");
    let missing: Vec<&String> = lessons
        .iter()
        .filter(|n| !section.contains(&format!("(notebooks/{n})")))
        .collect();
    assert!(
        missing.is_empty(),
        "README's Lessons section does not link {missing:?}"
    );
    const COUNTS: [&str; 21] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    let count = COUNTS.get(lessons.len()).copied().unwrap_or("many");
    let first = section
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_lowercase();
    assert_eq!(
        first, count,
        "README's Lessons section should open with how many there are"
    );
    let summary = std::fs::read_to_string(root.join("docs/src/SUMMARY.md")).unwrap();
    let chapters: Vec<&str> = summary
        .lines()
        .filter_map(|l| l.split("](").nth(1)?.split(')').next())
        .collect();
    assert!(chapters.contains(&"projects.md"), "{chapters:?}");
    let unlinked: Vec<&&str> = chapters
        .iter()
        .filter(|c| !readme.contains(&format!("(docs/src/{c})")))
        .collect();
    assert!(
        unlinked.is_empty(),
        "README does not link the chapters {unlinked:?}"
    );
}
