//! Sweeps on a real Slurm cluster: a one-node cluster (Debian's slurmctld,
//! slurmd and munge, brought up by deploy/slurm/local-cluster.sh) runs
//! deploy/slurm/passlab.sbatch (a sweep) as a 4-task job array over zlib's C files
//! (`sbatch --wait`); the merged shards must equal a single-process sweep
//! of the same spec record for record (times aside). Then one shard is
//! killed half-way (`scancel`), its merge is refused as incomplete, the
//! task is submitted again alone, and the merge is complete, with nothing
//! twice, and equal again. The cluster is stopped at the end by its pids.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

#[path = "../../tests/common/slurm.rs"]
mod cluster;
use cluster::Cluster;

impl Cluster {
    /// Submits the sweep's job array; `wait` blocks until every task ends.
    fn submit(
        &self,
        array: &str,
        spec: &Path,
        out: &Path,
        wait: bool,
        shards: Option<usize>,
    ) -> (bool, String) {
        self.submit_script("sweep", array, spec, out, wait, shards)
    }

    /// Submits deploy/slurm/passlab.sbatch for a KIND of job (sweep,
    /// hunt) as a job array.
    fn submit_script(
        &self,
        kind: &str,
        array: &str,
        spec: &Path,
        out: &Path,
        wait: bool,
        shards: Option<usize>,
    ) -> (bool, String) {
        let mut c = self.command("sbatch");
        if wait {
            c.arg("--wait");
        }
        let mut export = format!("ALL,PASSLAB={}", env!("CARGO_BIN_EXE_passlab"));
        if let Some(n) = shards {
            export.push_str(&format!(",PASSLAB_SHARDS={n}"));
        }
        let o = c
            .arg(format!("--array={array}"))
            .arg(format!("--export={export}"))
            .arg(format!("--output={}/task-%A_%a.out", self.dir.display()))
            .arg("--parsable")
            .arg(root().join("deploy/slurm/passlab.sbatch"))
            .arg(kind)
            .arg(spec)
            .arg(out)
            .output()
            .expect("run sbatch");
        let text =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        (o.status.success(), text)
    }

    /// Waits until the cluster runs no job.
    fn drain(&self) {
        let start = Instant::now();
        loop {
            let o = self
                .command("squeue")
                .args(["-h", "-o", "%i %T"])
                .output()
                .expect("squeue");
            let text = String::from_utf8_lossy(&o.stdout);
            if text
                .lines()
                .all(|l| !l.contains("RUNNING") && !l.contains("PENDING"))
            {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(300),
                "jobs still running: {text}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn passlab(args: &[&str]) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_passlab"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run passlab");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr),
    )
}

/// The merged records, times left out.
fn records(report: &Path) -> Vec<Value> {
    std::fs::read_to_string(report.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("compile_s");
            o.remove("runtime_ns");
            v
        })
        .collect()
}

/// Asserts `got` equals `want`, naming the first record that differs.
fn same_records(got: &[Value], want: &[Value], what: &str) {
    if let Some(i) = (0..got.len().min(want.len())).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: record {i} differs:\n  got  {}\n  want {}",
            got[i], want[i]
        );
    }
    assert_eq!(got.len(), want.len(), "{what}: another number of records");
}

fn lines(file: &Path) -> usize {
    std::fs::read_to_string(file).map_or(0, |t| t.lines().count())
}

/// A bug hunt of Csmith's programs, with a miscompile planted by the test
/// plugin (found in one of them), as a 4-task job array: merged, the same
/// checks as one process, and the finding in the report; the same hunt in
/// one process again gives the same records (seeds fix everything).
fn hunt_on_the_cluster(cluster: &Cluster, dir: &Path) {
    // (scripts/test-plugin.sh keeps the build in the user's cache)
    let plugin = root().join("target/test-plugin/slurm-planted_bugs.so");
    let status = Command::new("sh")
        .arg(root().join("scripts/test-plugin.sh"))
        .arg("planted_bugs")
        .arg(&plugin)
        .status()
        .unwrap();
    assert!(status.success());
    let spec = dir.join("planted.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"planted\"\ncsmith = {{ seeds = [13, 22] }}\npipelines = [\"O1\", \"planted-cmp\"]\n\
             orderings = 1\nseed = 3\nplugins = [\"{}\"]\ntimeout = 5\nreduce = false\njobs = 1\n",
            plugin.display()
        ),
    )
    .unwrap();
    let spec_s = spec.to_str().unwrap();
    let checks = |out: &Path| -> Vec<Value> {
        let (ok, text) = passlab(&["hunt", "merge", out.to_str().unwrap()]);
        assert!(ok, "{text}");
        assert!(text.contains("miscompile in planted-cmp"), "{text}");
        records(&out.join("report"))
    };
    let single = dir.join("hunt-single");
    let (ok, text) = passlab(&[
        "hunt",
        spec_s,
        "--out",
        single.to_str().unwrap(),
        "--shard",
        "0/1",
    ]);
    assert!(ok, "{text}");
    let expected = checks(&single);
    // 10 programs (those whose native run ends in time) × 3 pipelines.
    assert!(expected.len() >= 24, "{} checks", expected.len());
    assert!(expected.iter().any(|c| c["verdict"] == "miscompile"
        && c["pass"] == "planted-cmp"
        && c["program"] == "csmith-20"));
    let arrayed = dir.join("hunt-array");
    let (ok, text) = cluster.submit_script("hunt", "0-3", &spec, &arrayed, true, None);
    assert!(ok, "sbatch --wait failed: {text}");
    same_records(
        &checks(&arrayed),
        &expected,
        "the hunt's 4 shards against one process",
    );
    let again = dir.join("hunt-again");
    let (ok, text) = passlab(&[
        "hunt",
        spec_s,
        "--out",
        again.to_str().unwrap(),
        "--shard",
        "0/1",
    ]);
    assert!(ok, "{text}");
    same_records(&checks(&again), &expected, "the same hunt again");
}

#[test]
fn a_sweep_on_slurm_equals_one_process_and_survives_a_killed_shard() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("slurm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let zlib = root().join("target/inputs/zlib");
    assert!(
        zlib.join("adler32.c").exists(),
        "zlib's sources are linked by the set-up (target/inputs/zlib)"
    );
    let files = [
        "adler32.c",
        "compress.c",
        "crc32.c",
        "deflate.c",
        "inffast.c",
        "inftrees.c",
        "trees.c",
        "uncompr.c",
        "zutil.c",
    ];
    let corpus: Vec<String> = files
        .iter()
        .map(|f| format!("\"{}\"", zlib.join(f).display()))
        .collect();
    let spec = dir.join("zlib.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"zlib\"\ncorpus = [{}]\ngoal = \"instructions\"\nstrategy = [\"random\", \"hill\"]\ntrials = 8\nseed = 11\n\n\
             [[program]]\npath = \"{}\"\nfunction = \"adler32\"\nargs = \"1 data 4096\"\nbuffers = [\"data i8[4096] = random(1)\"]\n",
            corpus.join(", "),
            zlib.join("adler32.c").display()
        ),
    )
    .unwrap();
    let spec_s = spec.to_str().unwrap();

    // One process.
    let single = dir.join("single");
    let (ok, text) = passlab(&[
        "sweep",
        spec_s,
        "--out",
        single.to_str().unwrap(),
        "--shard",
        "0/1",
    ]);
    assert!(ok, "{text}");
    let (ok, text) = passlab(&["sweep", "merge", single.to_str().unwrap()]);
    assert!(ok, "{text}");
    let expected = records(&single.join("report"));
    // 9 programs × (4 baselines + 2 × 8 trials).
    assert_eq!(expected.len(), 9 * 20);

    let cluster = Cluster::up(&root(), &dir.join("cluster"));
    // Four tasks on the cluster.
    let arrayed = dir.join("array");
    let (ok, text) = cluster.submit("0-3", &spec, &arrayed, true, None);
    assert!(ok, "sbatch --wait failed: {text}");
    for i in 0..4 {
        assert!(
            arrayed.join(format!("sweep-{i}-of-4.jsonl")).exists(),
            "task {i} wrote nothing: {text}"
        );
    }
    let (ok, text) = passlab(&["sweep", "merge", arrayed.to_str().unwrap()]);
    assert!(ok, "{text}");
    assert!(
        text.contains("merged 180 records of 9 programs from 4 shard files"),
        "{text}"
    );
    same_records(
        &records(&arrayed.join("report")),
        &expected,
        "the 4 shards against one process",
    );
    for f in [
        "report.txt",
        "report.html",
        "gain.svg",
        "gain.png",
        "convergence-deflate-c.png",
    ] {
        assert!(arrayed.join("report").join(f).exists(), "{f}");
    }
    // The shard with the most records, killed half-way.
    let biggest = (0..4)
        .max_by_key(|i| lines(&arrayed.join(format!("sweep-{i}-of-4.jsonl"))))
        .unwrap();
    let full = lines(&arrayed.join(format!("sweep-{biggest}-of-4.jsonl")));
    let killed = dir.join("killed");
    let (ok, text) = cluster.submit("0-3", &spec, &killed, false, None);
    assert!(ok, "{text}");
    let job = text.trim().split(';').next().unwrap().to_string();
    let file = killed.join(format!("sweep-{biggest}-of-4.jsonl"));
    let start = Instant::now();
    while lines(&file) < full / 2 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "shard {biggest} did not get half-way"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = cluster
        .command("scancel")
        .arg("--signal=KILL")
        .arg(format!("{job}_{biggest}"))
        .output()
        .unwrap();
    cluster.drain();
    // Whether the kill lands before the shard's second half is done is up
    // to the machine's speed. Had it finished first (scancel then fails:
    // no such job), its file is cut back to the half the test saw when it
    // sent the kill (whole lines, the done records dropped), as the kill
    // would have left it; either way what follows starts from an
    // unfinished shard.
    let finished_first = lines(&file) >= full;
    assert!(
        o.status.success() || finished_first,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    if finished_first {
        let text = std::fs::read_to_string(&file).unwrap();
        let half: String = text
            .lines()
            .take(full / 2)
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&file, half).unwrap();
    }
    let written = lines(&file);
    assert!(
        (full / 2..full).contains(&written),
        "shard {biggest}: {written} of {full} records after the kill"
    );
    let (ok, text) = passlab(&["sweep", "merge", killed.to_str().unwrap()]);
    assert!(
        !ok && text.contains("is not finished"),
        "an incomplete sweep must not merge: {text}"
    );
    // That task again, alone: it finishes what it had not.
    let (ok, text) = cluster.submit(&biggest.to_string(), &spec, &killed, true, Some(4));
    assert!(ok, "{text}");
    assert_eq!(lines(&file), full);
    let (ok, text) = passlab(&["sweep", "merge", killed.to_str().unwrap()]);
    assert!(ok, "{text}");
    same_records(
        &records(&killed.join("report")),
        &expected,
        "the resumed sweep against one process",
    );
    let out = std::fs::read_dir(dir.join("cluster"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("task-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        out.contains(&format!("shard {biggest}/4: ")) && out.contains("replayed"),
        "{out}"
    );
    hunt_on_the_cluster(&cluster, &dir);
    drop(cluster);
    // Stopped: no daemon of ours is left.
    for pid in ["slurmctld", "slurmd", "munged"] {
        assert!(!dir.join("cluster/run").join(format!("{pid}.pid")).exists());
    }
}
