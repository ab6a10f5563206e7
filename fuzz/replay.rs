//! The fuzz targets (`fuzz/targets/`) over their seed corpora, in the test
//! command: each seed once, then mutations of the seeds (bit flips, bytes
//! set, inserted, erased, repeated, and two seeds spliced, as libFuzzer
//! mutates) until `RUNS` inputs have run, from a fixed seed, so a run is
//! the same every time. Not coverage-guided: that is `bash scripts/fuzz.sh
//! smoke|campaign` (cargo-fuzz, libFuzzer, AddressSanitizer). This runs in
//! the tests' own build, so the test command builds passlab once.
//!
//! An input that panics is written to `target/fuzz-replay/TARGET/` and the
//! replay fails naming it (`cargo +nightly fuzz run TARGET FILE` replays it
//! under libFuzzer, `bash scripts/fuzz.sh fmt TARGET FILE` shows what it
//! runs). An input that crashes the process leaves itself in
//! `target/fuzz-replay/TARGET/current`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Inputs per target, seeds included (libFuzzer's `-runs`).
pub const RUNS: usize = 3000;
/// The longest input a mutation makes (libFuzzer's `-max_len`).
const MAX_LEN: usize = 4096;
/// An input slower than this fails the replay (libFuzzer's `-timeout`).
const SLOW: Duration = Duration::from_secs(60);

/// What a replay of one target saw.
pub struct Replayed {
    pub seeds: usize,
    pub runs: usize,
}

/// SplitMix64: the same mutations on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Bytes libFuzzer likes to try: boundaries of the integer types.
const INTERESTING: &[u8] = &[0, 1, 0x7f, 0x80, 0xff, b'=', b' ', b'\n', b'.', b':'];

/// One to four of libFuzzer's simpler mutations of `input`, maybe spliced
/// with `other`.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        match rng.below(7) {
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                out[i] = rng.next() as u8;
            }
            2 => {
                let i = rng.below(len + 1);
                let b = INTERESTING[rng.below(INTERESTING.len())];
                out.insert(i, b);
            }
            3 if len > 1 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(16));
                out.drain(i..i + n);
            }
            4 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                let chunk = out[i..i + n].to_vec();
                let at = rng.below(len + 1);
                out.splice(at..at, chunk);
            }
            5 if !other.is_empty() => {
                // Crossover: this input's head, the other's tail.
                let cut = rng.below(out.len() + 1);
                let from = rng.below(other.len());
                out.truncate(cut);
                out.extend_from_slice(&other[from..]);
            }
            _ if len > 0 => {
                let i = rng.below(len);
                out[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            _ => out.push(rng.next() as u8),
        }
    }
    out.truncate(MAX_LEN);
    out
}

/// The seeds of `corpus` (a folder of files), in name order.
fn seeds(corpus: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus)
        .unwrap_or_else(|e| panic!("{}: {e}", corpus.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// Runs `run` on every seed of `corpus` and on mutations of them until
/// [`RUNS`] inputs have run; panics naming the inputs that failed (saved
/// under `out`).
pub fn replay(name: &str, corpus: &Path, out: &Path, init: fn(), run: fn(&[u8])) -> Replayed {
    let dir = out.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let seeds = seeds(corpus);
    assert!(!seeds.is_empty(), "{}: no seeds", corpus.display());
    init();
    let mut rng = Rng(0x5EED ^ name.len() as u64);
    let mut failed = Vec::new();
    let mut slow = Vec::new();
    let current = dir.join("current");
    for i in 0..RUNS.max(seeds.len()) {
        let input = if i < seeds.len() {
            seeds[i].1.clone()
        } else {
            let a = &seeds[rng.below(seeds.len())].1;
            let b = &seeds[rng.below(seeds.len())].1;
            mutate(&mut rng, a, b)
        };
        // What a crash (not a panic) leaves behind.
        std::fs::write(&current, &input).unwrap();
        let start = Instant::now();
        let result = std::panic::catch_unwind(|| run(&input));
        let took = start.elapsed();
        let label = if i < seeds.len() {
            format!("seed {}", seeds[i].0)
        } else {
            format!("mutation {i}")
        };
        if result.is_err() {
            let file = dir.join(format!("failed-{i}"));
            std::fs::write(&file, &input).unwrap();
            failed.push(format!("{label}: saved as {}", file.display()));
        } else if took > SLOW {
            slow.push(format!("{label}: {:.1} s", took.as_secs_f64()));
        }
    }
    let _ = std::fs::remove_file(&current);
    assert!(
        failed.is_empty() && slow.is_empty(),
        "fuzz target {name}: {} inputs panicked, {} took over {} s:\n{}",
        failed.len(),
        slow.len(),
        SLOW.as_secs(),
        failed
            .iter()
            .chain(&slow)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    Replayed {
        seeds: seeds.len(),
        runs: RUNS.max(seeds.len()),
    }
}

#[test]
fn mutations_are_deterministic_and_bounded() {
    let (mut a, mut b) = (Rng(7), Rng(7));
    let seed = b":run instcombine\n".to_vec();
    for _ in 0..200 {
        let x = mutate(&mut a, &seed, b"define i32 @f()");
        assert_eq!(x, mutate(&mut b, &seed, b"define i32 @f()"));
        assert!(x.len() <= MAX_LEN);
    }
    let long = vec![b'x'; MAX_LEN];
    assert!(mutate(&mut a, &long, &long).len() <= MAX_LEN);
}

#[test]
#[should_panic(expected = "inputs panicked")]
fn a_seed_that_panics_fails_the_replay_and_is_saved() {
    let dir = std::env::temp_dir().join(format!("passlab-replay-test-{}", std::process::id()));
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("a"), b"fine").unwrap();
    std::fs::write(corpus.join("b"), b"\xff").unwrap();
    fn run(data: &[u8]) {
        assert_ne!(data, b"\xff", "planted");
    }
    let out = dir.join("out");
    let result = std::panic::catch_unwind(|| replay("planted", &corpus, &out, || {}, run));
    assert!(
        out.join("planted/failed-1").exists(),
        "the failing seed is saved"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
