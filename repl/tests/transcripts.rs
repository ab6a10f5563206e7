//! Golden transcripts: each `tests/transcripts/*.plab` runs through
//! `passlab run --echo --keep-going`, and its output must equal the `.out`
//! beside it exactly, after masking what varies (times). Set
//! `PASSLAB_BLESS=1` to write the current output as the expected one.

use std::path::Path;
use std::process::Command;

/// Times vary from run to run: in `:bench` rows and in lines that mention
/// milli- or microseconds
/// or percentages (a digit then `%`; IR values are `%name`), numbers with a
/// decimal point become `#`, and runs of spaces (table padding around them)
/// one space; table borders shrink to `+-+` and `+=+`.
/// Whether `line` holds a time or a column of times: a number, then
/// (after at most one space) `ms`, `us`, `µs`, `ns` or `s`, then no
/// letter; a word `ms` or `us` (a column header); or TVM's `(us` header.
fn has_time(line: &str) -> bool {
    if line.contains("(us ") {
        return true;
    }
    let chars: Vec<char> = line.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c == ' ' {
            let word: String = chars[i + 1..]
                .iter()
                .take_while(|c| c.is_alphanumeric())
                .collect();
            if word == "ms" || word == "us" {
                return true;
            }
            continue;
        }
        if !c.is_ascii_digit() {
            continue;
        }
        let mut j = i + 1;
        if chars.get(j) == Some(&' ') {
            j += 1;
        }
        for unit in ["ms", "us", "µs", "ns", "s"] {
            let u: Vec<char> = unit.chars().collect();
            if chars.get(j..j + u.len()) == Some(&u[..])
                && !chars.get(j + u.len()).is_some_and(|c| c.is_alphanumeric())
            {
                return true;
            }
        }
    }
    false
}

/// `N` before each of `words` replaced by `#`.
fn mask_counts(text: &str, words: &[&str]) -> String {
    let mut out = text.to_string();
    for w in words {
        let mut done = String::new();
        let mut rest = out.as_str();
        while let Some(at) = rest.find(w) {
            let head = &rest[..at];
            let digits = head.len() - head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            done.push_str(&head[..head.len() - digits]);
            done.push_str(if digits > 0 { "#" } else { "" });
            done.push_str(w);
            rest = &rest[at + w.len()..];
        }
        done.push_str(rest);
        out = done;
    }
    out
}

/// Code for this machine's processor (`cpu=host`): its name, and the
/// sizes of the code made for it, depend on the machine; in such a line
/// both become `#`.
fn mask_host(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        match line.find("cpu host (") {
            Some(at) => {
                let end = line[at..].find(')').map_or(line.len(), |i| at + i);
                let line = format!("{}cpu host (#{}", &line[..at], &line[end..]);
                let words: Vec<&str> = line
                    .split(' ')
                    .map(|w| {
                        if !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()) {
                            "#"
                        } else {
                            w
                        }
                    })
                    .collect();
                out.push_str(&words.join(" "));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

fn mask(text: &str) -> String {
    // Where the repository was cloned varies: name it <passlab>.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap();
    let text = text.replace(&root.display().to_string(), "<passlab>");
    // How many candidates a reduction tested varies: a candidate whose
    // output depends on memory it never wrote is interesting in one run
    // and not in another, and the reducer's path differs after it (the
    // result does not).
    let text = mask_counts(&text, &[" candidates tested", " interesting"]);
    let text = mask_host(&text);
    let mut out = String::new();
    // A table ranked by measured time (`:report timing`): which pass is on
    // which row varies from run to run, so its rows are masked whole (their
    // number, the header and the lines after are compared).
    let mut ranked = 0;
    for line in text.lines() {
        // Table borders are as wide as the (masked) cells: keep their kind only.
        if !line.is_empty() && line.chars().all(|c| matches!(c, '+' | '-' | '=')) {
            ranked = match ranked {
                1 if line.contains('=') => 2,
                2 => 0,
                r => r,
            };
            out.push_str(if line.contains('=') { "+=+" } else { "+-+" });
            out.push('\n');
            continue;
        }
        if line.ends_with("by self time)") {
            ranked = 1;
        }
        if ranked == 2 && line.starts_with('|') {
            out.push_str("| (a row ranked by measured time) |\n");
            continue;
        }

        let percentage = line
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_digit() && w[1] == b'%');
        let bench_row =
            line.starts_with('|') && (line.contains(" same ") || line.contains("DIFFERENT"));
        let time = bench_row || has_time(line);
        if time || percentage {
            let mut masked = String::new();
            let mut word = String::new();
            let flush = |w: &mut String, m: &mut String| {
                if w.contains('.')
                    && w.chars().any(|c| c.is_ascii_digit())
                    && w.chars().all(|c| c.is_ascii_digit() || c == '.')
                {
                    m.push('#');
                } else {
                    m.push_str(w);
                }
                w.clear();
            };
            for c in line.chars() {
                if c.is_ascii_digit() || c == '.' {
                    word.push(c);
                } else {
                    flush(&mut word, &mut masked);
                    masked.push(c);
                }
            }
            flush(&mut word, &mut masked);
            // A whole number of a unit is a time too, and the unit itself
            // depends on the magnitude: `950 µs` and `1.2 ms` both read `# t`.
            let mut timed = String::new();
            let parts: Vec<&str> = masked.split(' ').collect();
            let mut i = 0;
            while i < parts.len() {
                let p = parts[i];
                // An opening bracket may come first: `(902 µs in all)`.
                let digits = p.trim_start_matches(['(', '[']);
                let opening = &p[..p.len() - digits.len()];
                let number = digits == "#"
                    || (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()));
                let unit = parts
                    .get(i + 1)
                    .map(|u| u.trim_end_matches([')', ',', ';', ']']));
                if number && matches!(unit, Some("ms" | "us" | "µs" | "ns" | "s")) {
                    let rest = &parts[i + 1][unit.map_or(0, str::len)..];
                    timed.push_str(&format!("{opening}# t{rest} "));
                    i += 2;
                } else {
                    timed.push_str(p);
                    timed.push(' ');
                    i += 1;
                }
            }
            let mut collapsed = String::new();
            for part in timed.split(' ').filter(|p| !p.is_empty()) {
                if !collapsed.is_empty() {
                    collapsed.push(' ');
                }
                collapsed.push_str(part);
            }
            out.push_str(&collapsed);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Runs `cmd` with standard output and standard error into one file, so
/// that the text reads as a terminal shows it (what JIT-compiled code
/// writes to standard error is in its place), and returns it.
fn run_merged(cmd: &mut Command) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "passlab-transcript-{}-{}.out",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    ));
    let file = std::fs::File::create(&path).unwrap();
    cmd.stdout(file.try_clone().unwrap())
        .stderr(file)
        .status()
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    text
}

/// Tests that start a Rust worker take turns: each worker takes evcxr's
/// build folder that the set-up warmed; one started while another holds it
/// would get a fresh folder and compile passlab and LLVM's bindings again.
static RUST_WORKER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn rust_worker_turn() -> std::sync::MutexGuard<'static, ()> {
    RUST_WORKER.lock().unwrap_or_else(|p| p.into_inner())
}

/// Builds the LLVM pass plugins the transcripts load (tests/plugin/) with
/// clang++-19 against LLVM 19's headers, into target/test-plugin/
/// (scripts/test-plugin.sh, which keeps the builds in the user's cache).
fn build_plugin() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // The strength-reduction plugin (rust.plab), and the planted bugs
    // (reduce.plab).
    for name in ["strength_plugin", "planted_bugs"] {
        let status = Command::new("sh")
            .arg(root.join("scripts/test-plugin.sh"))
            .arg(name)
            .arg(root.join(format!("target/test-plugin/{name}.so")))
            .status()
            .expect("sh");
        assert!(status.success(), "building the test plugin {name} failed");
    }
}

#[test]
fn transcripts_match() {
    let _turn = rust_worker_turn();
    build_plugin();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let bless = blessing();
    let mut failures = Vec::new();
    let mut scripts: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "plab"))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty());
    // The folders the transcripts write into start empty: passlab replaces
    // only files it wrote (and folders it made), not an earlier build's.
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    for d in ["transcript-charts", "reduce-out"] {
        let _ = std::fs::remove_dir_all(target.join(d));
    }
    for script in scripts {
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        if !chosen(&name) {
            continue;
        }
        let got = mask(&run_merged(
            Command::new(env!("CARGO_BIN_EXE_passlab"))
                .args(["run", "--echo", "--keep-going", &name])
                .args(["--charts", "../../../target/transcript-charts"])
                .current_dir(&dir),
        ));
        let expected_path = script.with_extension("out");
        if bless {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if got != expected {
            let diff = similar::TextDiff::from_lines(&expected, &got)
                .unified_diff()
                .header("expected", "got")
                .to_string();
            failures.push(format!("{name} (PASSLAB_BLESS=1 updates it):\n{diff}"));
        }
    }
    // The reproducers reduce.plab wrote show their bugs when run again,
    // as someone without passlab would run them (when it ran).
    if !chosen("reduce.plab") {
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        return;
    }
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/reduce-out");
    // Every kind: an LLVM fatal error, a crash, IR that does not verify, a
    // program's output, the same in a context, a function's result.
    for finding in [
        "fatal",
        "crash",
        "break",
        "sdiv",
        "sdiv-context",
        "sdiv-call",
    ] {
        let script = out.join(finding).join("repro.sh");
        let run = Command::new("sh").arg(&script).output().unwrap();
        if !run.status.success() {
            failures.push(format!(
                "{} did not show its bug: {}{}",
                script.display(),
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr)
            ));
        }
    }
    // The one found under `:with codegen=0 cpu=x86-64-v2` carries that
    // context, and passlab run shows the finding with it.
    let dir = out.join("sdiv-context");
    let plab = std::fs::read_to_string(dir.join("repro.plab")).unwrap_or_default();
    let sh = std::fs::read_to_string(dir.join("repro.sh")).unwrap_or_default();
    if !plab.contains(":with config.codegen.opt_level=0 config.target.cpu=x86-64-v2") {
        failures.push(format!("sdiv-context/repro.plab lost the context:\n{plab}"));
    }
    if !sh.contains("lli-19 -O0 -mcpu=x86-64-v2") || !sh.contains("opt-19 -load-pass-plugin") {
        failures.push(format!("sdiv-context/repro.sh lost the context:\n{sh}"));
    }
    // passlab run shows the findings of a program's output (with its
    // context) and of a function's result.
    for finding in ["sdiv-context", "sdiv-call"] {
        let run = Command::new(env!("CARGO_BIN_EXE_passlab"))
            .current_dir(out.join(finding))
            .args(["run", "repro.plab"])
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&run.stdout);
        if !run.status.success() || !shown.contains("DIFFERENT") {
            failures.push(format!(
                "passlab run {finding}/repro.plab did not show the finding: {shown}{}",
                String::from_utf8_lossy(&run.stderr)
            ));
        }
    }
    // The function's result is shown by LLVM's tools through a driver.
    let call = out.join("sdiv-call");
    if !call.join("driver.ll").exists()
        || !std::fs::read_to_string(call.join("repro.sh"))
            .unwrap_or_default()
            .contains("--entry-function=passlab_driver")
    {
        failures.push("sdiv-call has no driver.ll run by lli-19".into());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_script_stops_at_the_first_error_with_its_line() {
    let dir = std::env::temp_dir().join(format!("passlab-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("s.plab");
    std::fs::write(&script, ":modules\n\n:nosuch\n:modules\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .args(["run"])
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "{}:3: error: :nosuch: unknown command",
            script.display()
        )),
        "{err}"
    );
    // Only the first :modules ran.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .matches("modules")
            .count(),
        1
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_guides_command_reference_is_the_command_table() {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src/reference.md"),
    )
    .unwrap();
    let reference = passlab_reference();
    assert!(
        page.contains(&reference),
        "docs/src/reference.md is out of date; paste the output of `passlab commands`:\n{reference}"
    );
}

fn passlab_reference() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .arg("commands")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The positions (0 for the twin's first command) of the commands in cells
/// marked as depending on the machine (see `passlab script`): those after
/// the marker, up to the cell's end (a blank line). Only their own output
/// is left out: the same command elsewhere in the lesson is compared.
fn machine_dependent_commands(twin: &str) -> std::collections::BTreeSet<usize> {
    let mut out = std::collections::BTreeSet::new();
    let mut inside = false;
    let mut k = 0;
    for line in twin.lines() {
        if line.starts_with(MACHINE_DEPENDENT) {
            inside = true;
        } else if line.trim().is_empty() {
            inside = false;
        } else if line.starts_with(':') {
            if inside {
                out.insert(k);
            }
            k += 1;
        }
    }
    out
}

/// The marker `passlab script` writes before such a cell's commands.
const MACHINE_DEPENDENT: &str = "# (this cell's output depends on the machine";

/// `passlab run --echo` output with what the commands at `positions`
/// printed replaced by a line saying why.
fn without_machine_dependent_output(
    text: &str,
    positions: &std::collections::BTreeSet<usize>,
) -> String {
    let mut out = String::new();
    let mut skipping = false;
    let mut k = 0;
    for line in text.lines() {
        if line.starts_with("> ") {
            skipping = positions.contains(&k);
            k += 1;
            out.push_str(line);
            out.push('\n');
            if skipping {
                out.push_str("(output depends on the machine)\n");
            }
        } else if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The notebooks that have a `.plab` twin beside them.
fn notebooks_with_twins() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../notebooks");
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ipynb"))
        .filter(|p| p.with_extension("plab").exists())
        .collect();
    out.sort();
    out
}

#[test]
fn notebook_twins_are_what_passlab_script_writes() {
    let notebooks = notebooks_with_twins();
    assert!(!notebooks.is_empty());
    for nb in notebooks {
        let out = Command::new(env!("CARGO_BIN_EXE_passlab"))
            .arg("script")
            .arg(&nb)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let twin = std::fs::read_to_string(nb.with_extension("plab")).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            twin,
            "{} is out of date: passlab script {} > {}",
            nb.with_extension("plab").display(),
            nb.display(),
            nb.with_extension("plab").display()
        );
    }
}

/// Each twin, run by `passlab run`, gives the stored results
/// (repl/tests/twins/NAME.out; `PASSLAB_BLESS=1` updates them). They run in
/// a folder of their own beside the notebooks' (`target/twins-run`), as
/// from a copy of a notebook elsewhere (the lessons find their inputs on
/// passlab's search path): the test command runs the lessons in JupyterLab
/// at the same time, and a hunt starts afresh in its folder (`passlab-hunt/`
/// in the session's folder), so two runs in one folder would undo each
/// other's.
#[test]
fn notebook_twins_run_to_the_stored_results() {
    let _turn = rust_worker_turn();
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/twins-run");
    let _ = std::fs::remove_dir_all(&folder);
    // The charts' folder too: passlab replaces only files it wrote.
    let _ = std::fs::remove_dir_all(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/twin-charts"),
    );
    std::fs::create_dir_all(&folder).unwrap();
    let expected_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/twins");
    let bless = blessing();
    let mut failures = Vec::new();
    // Those with Rust cells last: the worker they wait for warms its build
    // folder meanwhile, which takes minutes on a fresh machine.
    let mut notebooks = notebooks_with_twins();
    notebooks.sort_by_key(|nb| {
        std::fs::read_to_string(nb.with_extension("plab")).is_ok_and(|t| t.contains("\n:rust"))
    });
    for nb in notebooks {
        let twin = nb.with_extension("plab");
        let name = twin.file_stem().unwrap().to_string_lossy().into_owned();
        if !chosen(&name) {
            continue;
        }
        let varies = machine_dependent_commands(&std::fs::read_to_string(&twin).unwrap());
        std::fs::copy(&twin, folder.join(twin.file_name().unwrap())).unwrap();
        let got = mask(&without_machine_dependent_output(
            &run_merged(
                Command::new(env!("CARGO_BIN_EXE_passlab"))
                    .args(["run", "--echo"])
                    .arg(twin.file_name().unwrap())
                    .args(["--charts", "../twin-charts"])
                    .current_dir(&folder),
            ),
            &varies,
        ));
        let expected_path = expected_dir.join(format!("{name}.out"));
        if bless {
            std::fs::create_dir_all(&expected_dir).unwrap();
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if got != expected {
            let diff = similar::TextDiff::from_lines(&expected, &got)
                .unified_diff()
                .header("expected", "got")
                .to_string();
            failures.push(format!("{name} (PASSLAB_BLESS=1 updates it):\n{diff}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `passlab run` on a script given on standard input: whether it
/// succeeded, standard output, standard error.
fn run_script(args: &[&str], script: &str) -> (bool, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .arg("run")
        .args(args)
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `#! expect error` (a notebook cell tagged `raises-exception`, in its
/// twin): the block's first error is expected, the rest of the block is
/// skipped, the script goes on and succeeds; a block in which nothing
/// fails is the script's error.
#[test]
fn expected_errors_let_a_script_run_to_its_end() {
    let script = ":module m --lang c\nint sq(int x) { return x * x; }\n.\n\n#! expect error (on purpose)\n:call nosuch 1\n:call sq 2\n\n:call sq 3\n";
    let (ok, stdout, stderr) = run_script(&["--echo"], script);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("<stdin>:6: error (expected): "), "{stdout}");
    assert!(
        !stdout.contains("sq(2)"),
        "the rest of the block runs: {stdout}"
    );
    assert!(stdout.contains("sq(3) = 9"), "{stdout}");
    let (ok, stdout, stderr) = run_script(&[], "#! expect error\n:help\n\n:help buffer\n");
    assert!(!ok);
    assert!(
        stderr.contains("<stdin>:1: error: the commands after '#! expect error' (up to the next blank line) were expected to fail, and all succeeded"),
        "{stderr}"
    );
    assert!(
        !stdout.contains("one buffer may take at most"),
        "it stops there without --keep-going: {stdout}"
    );
}

/// A trailing `# comment` after a command (as the README's examples have
/// them) is not an argument.
#[test]
fn trailing_comments_are_not_arguments() {
    let (ok, stdout, stderr) = run_script(
        &[],
        ":module m --lang c   # a comment\nint sq(int x) { return x * x; } // C's own\n.\n:call sq 7    # forty-nine\n:stats # all\n",
    );
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("sq(7) = 49"), "{stdout}");
}

/// `passlab run script | head`: when the reader goes away, passlab ends
/// quietly with status 0, as command-line tools do (no panic).
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::{Read, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .args(["run", "--echo", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut script = String::from(":module m --lang c\nint sq(int x) { return x * x; }\n.\n");
    for _ in 0..2000 {
        script.push_str(":help\n");
    }
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    // Read a little, as `head` does, and close the pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 256];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// Without a Rust toolchain, `:rust` says what to install and the rest of
/// the language works as before.
#[test]
fn rust_cells_without_a_toolchain_say_what_to_install() {
    let out = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .args(["run", "--keep-going", "-"])
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(
                b":rust\nfn f() {}\n.\n:module m --lang c\nint sq(int x) { return x * x; }\n.\n:call sq 7\n",
            )?;
            child.wait_with_output()
        })
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("writing passes in Rust needs a Rust toolchain: cargo is not on PATH (install it with rustup: https://rustup.rs)"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("sq(7) = 49"));
}

/// Whether the script or lesson NAME runs: all of them, or those whose
/// names contain `PASSLAB_ONLY` when it is set (to bless one golden:
/// `PASSLAB_BLESS=1 PASSLAB_ONLY=08-searching cargo test --test
/// transcripts`).
fn chosen(name: &str) -> bool {
    std::env::var("PASSLAB_ONLY").map_or(true, |only| name.contains(only.as_str()))
}

/// Whether `PASSLAB_BLESS` asks to write the current output as the
/// expected one: set to something other than empty or `0`.
fn blessing() -> bool {
    blesses(std::env::var("PASSLAB_BLESS").ok().as_deref())
}

fn blesses(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

#[test]
fn only_a_value_other_than_empty_or_0_blesses() {
    assert!(!blesses(None));
    assert!(!blesses(Some("")));
    assert!(!blesses(Some("0")));
    assert!(blesses(Some("1")));
    assert!(blesses(Some("yes")));
}
