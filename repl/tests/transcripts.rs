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
fn mask(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        // Table borders are as wide as the (masked) cells: keep their kind only.
        if !line.is_empty() && line.chars().all(|c| matches!(c, '+' | '-' | '=')) {
            out.push_str(if line.contains('=') { "+=+" } else { "+-+" });
            out.push('\n');
            continue;
        }
        let percentage = line
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_digit() && w[1] == b'%');
        let bench_row =
            line.starts_with('|') && (line.contains(" same ") || line.contains("DIFFERENT"));
        let time = bench_row || [" ms", " us", "(us "].iter().any(|u| line.contains(u));
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
            let mut collapsed = String::new();
            for part in masked.split(' ').filter(|p| !p.is_empty()) {
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

#[test]
fn transcripts_match() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let bless = std::env::var_os("PASSLAB_BLESS").is_some();
    let mut failures = Vec::new();
    let mut scripts: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "plab"))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty());
    for script in scripts {
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        let out = Command::new(env!("CARGO_BIN_EXE_passlab"))
            .args(["run", "--echo", "--keep-going", &name])
            .args(["--charts", "../../../target/transcript-charts"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let got = mask(&String::from_utf8_lossy(&out.stdout));
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
        assert!(
            String::from_utf8_lossy(&out.stderr).is_empty(),
            "{name}: stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
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
fn the_readme_command_reference_is_the_command_table() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let reference = passlab_reference();
    assert!(
        readme.contains(&reference),
        "README.md's command reference is out of date; paste the output of `passlab commands`:\n{reference}"
    );
}

fn passlab_reference() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .arg("commands")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}
