//! `passlab sweep` without a cluster: the shard from the environment as
//! Kubernetes Indexed Jobs and Slurm arrays give it, a torn last record
//! dropped and the shard finished, an output folder of another sweep
//! refused (its marker names the sweep that made it), a spec's mistakes named; and deploy/kubernetes/sweep-job.yaml
//! kept in step with what passlab reads.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

fn sweep(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_passlab"));
    c.arg("sweep").args(args).env("RUST_BACKTRACE", "0");
    for k in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "JOB_COMPLETION_INDEX",
        "PASSLAB_SHARDS",
    ] {
        c.env_remove(k);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr),
    )
}

fn spec(dir: &Path, seed: u64) -> PathBuf {
    let zlib = root().join("target/inputs/zlib");
    let p = dir.join(format!("s{seed}.toml"));
    std::fs::write(
        &p,
        format!(
            "corpus = [\"{0}/adler32.c\", \"{0}/compress.c\", \"{0}/zutil.c\"]\nstrategy = \"random\"\ntrials = 4\nseed = {seed}\n",
            zlib.display()
        ),
    )
    .unwrap();
    p
}

#[test]
fn the_shard_comes_from_the_environment_and_a_torn_record_is_finished() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let s = spec(&dir, 1);
    let s = s.to_str().unwrap();
    let out = dir.join("out");
    let o = out.to_str().unwrap();
    // Kubernetes: the index, and the count the Job's spec gives.
    let (ok, text) = sweep(
        &[s, "--out", o],
        &[("JOB_COMPLETION_INDEX", "1"), ("PASSLAB_SHARDS", "2")],
    );
    assert!(ok, "{text}");
    assert!(out.join("sweep-1-of-2.jsonl").exists(), "{text}");
    // Slurm: the array's task and count.
    let (ok, text) = sweep(
        &[s, "--out", o],
        &[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
        ],
    );
    assert!(ok, "{text}");
    let (ok, merged) = sweep(&["merge", o], &[]);
    assert!(ok, "{merged}");
    assert!(
        merged.contains("merged 24 records of 3 programs from 2 shard files"),
        "{merged}"
    );
    // A torn last line (a shard killed while writing): dropped, then the
    // shard finishes; the merge is the same.
    let f = out.join("sweep-0-of-2.jsonl");
    let text = std::fs::read_to_string(&f).unwrap();
    let keep: Vec<&str> = text.lines().take(5).collect();
    std::fs::write(&f, format!("{}\n{{\"program\":\"adl", keep.join("\n"))).unwrap();
    let (ok, torn) = sweep(&["merge", o], &[]);
    assert!(!ok && torn.contains("its last record is torn"), "{torn}");
    let (ok, text) = sweep(&[s, "--out", o, "--shard", "0/2"], &[]);
    assert!(ok, "{text}");
    assert!(text.contains("replayed"), "{text}");
    let (ok, again) = sweep(&["merge", o], &[]);
    assert!(ok, "{again}");
    let records = |p: &Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(p.join("report/records.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("compile_s");
                v
            })
            .collect()
    };
    let first = records(&out);
    assert_eq!(first.len(), 24);
    // The guide names every field of a record, and no other.
    let readme = std::fs::read_to_string(root().join("docs/src/sweeps.md")).unwrap();
    let fields = readme
        .split("one record per ordering tried, with the fields")
        .nth(1)
        .and_then(|rest| rest.split("; each unit").next())
        .expect("docs/src/sweeps.md describes the sweep's records");
    let documented: std::collections::BTreeSet<String> = fields
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    let shard = std::fs::read_to_string(out.join("sweep-0-of-2.jsonl")).unwrap();
    // The first record is the sweep's manifest; the second, a trial's.
    let record: serde_json::Value = serde_json::from_str(shard.lines().nth(1).unwrap()).unwrap();
    let keys: std::collections::BTreeSet<String> =
        record.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys, documented,
        "docs/src/sweeps.md's list of a record's fields"
    );
    // Another sweep's spec into the same folder is refused.
    let other = spec(&dir, 2);
    let (ok, text) = sweep(
        &[other.to_str().unwrap(), "--out", o, "--shard", "0/2"],
        &[],
    );
    assert!(
        !ok && text.contains("was made by another job") && text.contains("the sweep s1"),
        "{text}"
    );
    // Mistakes in a spec are named.
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "corpus = [\"nothing/*.c\"]\nstrategi = \"random\"\n").unwrap();
    let (ok, text) = sweep(&[bad.to_str().unwrap()], &[]);
    assert!(
        !ok && text.contains("unknown key 'strategi'; did you mean 'strategy'?"),
        "{text}"
    );
    std::fs::write(&bad, "corpus = [\"nothing/*.c\"]\n").unwrap();
    let (ok, text) = sweep(&[bad.to_str().unwrap()], &[]);
    assert!(!ok && text.contains("matches no file"), "{text}");
    let (ok, text) = sweep(&[s, "--shard", "4/4"], &[]);
    assert!(
        !ok && text.contains("the index must be below the count"),
        "{text}"
    );
    let (ok, text) = sweep(&[s], &[("JOB_COMPLETION_INDEX", "1")]);
    assert!(!ok && text.contains("no count"), "{text}");
}

/// Programs a `.plab` script builds, and a fixed list of orderings instead
/// of a search.
#[test]
fn a_script_s_modules_and_a_list_of_orderings() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sweep-list-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("build.plab"),
        ":module sq --lang c\nint sq(int x) { int y = x * x; return y + 0; }\n.\n:load zlib/adler32.c\n",
    )
    .unwrap();
    let spec = dir.join("list.toml");
    std::fs::write(
        &spec,
        "scripts = [\"build.plab\"]\norderings = [\"O2\", \"mem2reg,instcombine\", \"sroa\"]\ngoal = \"size\"\n",
    )
    .unwrap();
    let out = dir.join("out");
    let (ok, text) = sweep(
        &[spec.to_str().unwrap(), "--out", out.to_str().unwrap()],
        &[],
    );
    assert!(ok, "{text}");
    let (ok, report) = sweep(&["merge", out.to_str().unwrap()], &[]);
    assert!(ok, "{report}");
    // Two programs (the script's modules) × (4 baselines + 3 orderings).
    assert!(
        report.contains("merged 14 records of 2 programs"),
        "{report}"
    );
    assert!(
        report.contains("build.plab:sq") && report.contains("build.plab:adler32"),
        "{report}"
    );
    let records = std::fs::read_to_string(out.join("report/records.jsonl")).unwrap();
    let list: Vec<serde_json::Value> = records
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r["phase"] == "list")
        .collect();
    assert_eq!(list.len(), 6);
    assert_eq!(
        list[1]["ordering"],
        serde_json::json!(["mem2reg", "instcombine"])
    );
    assert!(
        list.iter()
            .all(|r| r["size"].as_u64().is_some_and(|s| s > 0)),
        "{list:?}"
    );
    for f in [
        "report.txt",
        "report.html",
        "gain.png",
        "convergence-build-plab-sq.svg",
    ] {
        assert!(out.join("report").join(f).exists(), "{f}");
    }
}

/// A project as its build describes it: `corpus` names its
/// compile_commands.json, whose units are compiled with their own flags
/// and linked into one program, run as a program and checked.
#[test]
fn a_project_is_one_program_of_the_corpus() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sweep-cc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("proj/build")).unwrap();
    std::fs::write(
        dir.join("proj/main.c"),
        "#include <stdio.h>\nint total(int n);\nint main(void) { printf(\"%d\\n\", total(N)); return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("proj/total.c"),
        "int total(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * i; return s; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("proj/build/compile_commands.json"),
        r#"[
 {"directory": ".", "file": "../main.c", "command": "cc -DN=10 -c ../main.c -o main.o"},
 {"directory": ".", "file": "../total.c", "command": "cc -O2 -c ../total.c -o total.o"}
]"#
        .replace(
            "\"directory\": \".\"",
            &format!("\"directory\": \"{}\"", dir.join("proj/build").display()),
        ),
    )
    .unwrap();
    let spec = dir.join("project.toml");
    std::fs::write(
        &spec,
        "corpus = [\"proj/build/compile_commands.json\"]\nexec = \"\"\norderings = [\"O2\", \"mem2reg\"]\ngoal = \"size\"\n",
    )
    .unwrap();
    let out = dir.join("out");
    let (ok, text) = sweep(
        &[spec.to_str().unwrap(), "--out", out.to_str().unwrap()],
        &[],
    );
    assert!(ok, "{text}");
    let (ok, report) = sweep(&["merge", out.to_str().unwrap()], &[]);
    assert!(ok, "{report}");
    assert!(
        report.contains("of 1 programs") || report.contains("of 1 program"),
        "{report}"
    );
    assert!(
        report.contains("proj/build/compile_commands.json"),
        "{report}"
    );
    let records = std::fs::read_to_string(out.join("report/records.jsonl")).unwrap();
    let list: Vec<serde_json::Value> = records
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r["phase"] == "list")
        .collect();
    assert_eq!(list.len(), 2, "{records}");
    // Each ordering's program ran, printed 0 + 1 + 4 + ... + 81 (main.c's
    // N from its own -DN=10) and behaved as at O0.
    assert!(
        list.iter()
            .all(|r| r["size"].as_u64().is_some_and(|s| s > 0)
                && r["verdict"] == "same"
                && r["result"].as_str().is_some_and(|t| t.ends_with("\"285\""))),
        "{list:?}"
    );
}

#[test]
fn the_kubernetes_job_gives_the_count_passlab_reads() {
    let yaml = std::fs::read_to_string(root().join("deploy/kubernetes/sweep-job.yaml")).unwrap();
    let value = |key: &str| {
        yaml.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(key)
                    .map(|v| v.trim().trim_matches('"').to_string())
            })
            .unwrap_or_else(|| panic!("no {key}"))
    };
    assert_eq!(value("completionMode:"), "Indexed");
    let completions = value("completions:");
    let i = yaml
        .find("name: PASSLAB_SHARDS")
        .expect("PASSLAB_SHARDS in the pod's env");
    let shards = yaml[i..]
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .strip_prefix("value:")
        .unwrap()
        .trim()
        .trim_matches('"');
    assert_eq!(shards, completions, "PASSLAB_SHARDS must equal completions");
    assert!(yaml.contains("args: [\"sweep\""));
    let dockerfile = std::fs::read_to_string(root().join("deploy/Dockerfile")).unwrap();
    assert!(
        dockerfile.contains("-p passlab-repl") && dockerfile.contains("ENTRYPOINT [\"passlab\"]")
    );
}

/// Local search from -Oz with the pool for code size, CompilerGym's
/// features recorded per trial, and the merged sweep as a dataset that
/// pandas reads: a row per trial, the reward CompilerGym's way, the
/// features before and after.
#[test]
fn a_sweep_with_features_is_a_dataset_pandas_reads() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sweep-ds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let zlib = root().join("target/inputs/zlib");
    let spec = dir.join("ds.toml");
    std::fs::write(
        &spec,
        format!(
            "corpus = [\"{0}/adler32.c\", \"{0}/compress.c\"]\nstrategy = \"local\"\npool = [\"size\"]\ntrials = 3\nfeatures = true\n",
            zlib.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let (ok, text) = sweep(
        &[spec.to_str().unwrap(), "--out", out.to_str().unwrap()],
        &[],
    );
    assert!(ok, "{text}");
    let (ok, merged) = sweep(&["merge", out.to_str().unwrap()], &[]);
    assert!(ok, "{merged}");
    let csv = out.join("report/dataset.csv");
    let python = root().join("target/venv/bin/python");
    assert!(python.exists(), "the venv of scripts/passlab.sh setup");
    let o = Command::new(python)
        .arg("-c")
        .arg(
            "import sys, pandas as pd\n\
             d = pd.read_csv(sys.argv[1])\n\
             print(len(d), len(d.columns))\n\
             local = d[d.phase == 'local']\n\
             first = local.iloc[0]\n\
             print(first.program, first.trial, first.ordering.split(',')[:2])\n\
             print(int(first.before_instcount_TotalInsts), int(first.instructions_o0))\n\
             print(int(first.after_instcount_TotalInsts), int(first.instructions))\n\
             r = (first.instructions_o0 - first.instructions) / max(first.instructions_o0 - first.instructions_oz, 1)\n\
             print(abs(r - first.reward) < 1e-9, first.after_autophase_TotalInsts == first.instructions)\n",
        )
        .arg(&csv)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    let lines: Vec<&str> = said.lines().collect();
    // Each program: 4 baselines and 3 local trials; 12 columns and 2 x
    // (70 + 56) features.
    assert_eq!(lines[0], format!("14 {}", 12 + 2 * (70 + 56)), "{said}");
    assert!(
        lines[1].ends_with("0 ['forceattrs', 'inferattrs']"),
        "{said}"
    );
    let pair = |l: &str| -> (String, String) {
        let (a, b) = l.split_once(' ').unwrap();
        (a.to_string(), b.to_string())
    };
    let (before, o0) = pair(lines[2]);
    assert_eq!(before, o0, "the features before are the input's: {said}");
    let (after, count) = pair(lines[3]);
    assert_eq!(after, count, "the features after are the trial's: {said}");
    assert_eq!(lines[4], "True True", "{said}");
}
