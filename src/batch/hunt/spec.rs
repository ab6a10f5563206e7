//! A hunt's description: where its programs come from, what tells the
//! right output, the pipelines every program goes through, and what to do
//! with a finding. Read from TOML ([`HuntSpec::load`]) or built by `:hunt`.

use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where programs come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// Debian's `csmith`, one program per seed (inclusive range), with
    /// these arguments.
    Csmith {
        seeds: (u64, u64),
        args: Vec<String>,
    },
    /// C files.
    Corpus(Vec<PathBuf>),
}

/// What gives a program's right output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Oracle {
    /// The program built by `clang-19 -O0` and run natively.
    Native,
    /// The program's unoptimized module run through the JIT.
    JitO0,
}

impl Oracle {
    pub fn name(self) -> &'static str {
        match self {
            Oracle::Native => "native",
            Oracle::JitO0 => "jit-o0",
        }
    }
}

/// One program of a hunt.
#[derive(Clone, Debug, PartialEq)]
pub struct HuntProgram {
    /// `csmith-17` or the file's path relative to the spec.
    pub name: String,
    pub seed: Option<u64>,
    pub file: Option<PathBuf>,
}

/// A hunt (see the module documentation).
#[derive(Clone, Debug)]
pub struct HuntSpec {
    pub name: String,
    /// Relative paths start here.
    pub dir: PathBuf,
    pub source: Source,
    pub oracle: Oracle,
    /// Pipelines every program goes through, as `:run` takes them.
    pub pipelines: Vec<String>,
    /// Random orderings per program, drawn from `pool` with lengths in
    /// `lengths`, fixed by `seed` and the program.
    pub orderings: usize,
    pub pool: Vec<String>,
    pub lengths: (usize, usize),
    pub seed: u64,
    /// Pass plugins to load first.
    pub plugins: Vec<PathBuf>,
    /// `:with` settings every pipeline runs under (`cpu=x86-64-v3`).
    pub with: Vec<(String, String)>,
    pub cflags: Vec<String>,
    /// How long one run (the oracle, a pipeline, the program) may take.
    pub timeout: Duration,
    /// Reduce each new finding (the first program of each signature).
    pub reduce: bool,
    pub reduce_budget: Duration,
    /// Programs checked at once (forked workers).
    pub jobs: usize,
    /// The text it was read from (hashed into the records).
    pub text: String,
}

/// Csmith's small programs: a few functions, shallow blocks; they run in
/// milliseconds (its defaults: 10 functions, blocks nested 5 deep).
pub const CSMITH_ARGS: &[&str] = &["--max-funcs", "4", "--max-block-depth", "3"];

const KEYS: &[&str] = &[
    "name",
    "csmith",
    "corpus",
    "oracle",
    "pipelines",
    "orderings",
    "pool",
    "length",
    "seed",
    "plugins",
    "with",
    "cflags",
    "timeout",
    "reduce",
    "reduce_budget",
    "jobs",
];

use crate::batch::spec_error as bad;

impl Default for HuntSpec {
    fn default() -> HuntSpec {
        HuntSpec {
            name: "hunt".into(),
            dir: PathBuf::from("."),
            source: Source::Csmith {
                seeds: (1, 20),
                args: CSMITH_ARGS.iter().map(|s| s.to_string()).collect(),
            },
            oracle: Oracle::Native,
            pipelines: vec!["O2".into()],
            orderings: 0,
            pool: crate::tune::DEFAULT_POOL
                .iter()
                .map(|s| s.to_string())
                .collect(),
            lengths: (10, 30),
            seed: 0,
            plugins: Vec::new(),
            with: Vec::new(),
            cflags: Vec::new(),
            timeout: Duration::from_secs(5),
            reduce: true,
            reduce_budget: Duration::from_secs(60),
            jobs: 2,
            text: String::new(),
        }
    }
}

impl HuntSpec {
    /// Reads a spec:
    ///
    /// ```toml
    /// name = "planted"
    /// csmith = { seeds = [1, 40] }        # or args = [...]; or corpus = ["progs/*.c"]
    /// oracle = "native"                   # clang-19 -O0, run; or "jit-o0"
    /// pipelines = ["O2", "planted-sdiv"]  # as :run takes them
    /// orderings = 2                       # random orderings of :tune's pool per program
    /// seed = 1
    /// plugins = ["planted_bugs.so"]
    /// with = ["cpu=x86-64-v3"]            # :with settings
    /// timeout = 5                         # seconds per run
    /// reduce = true                       # reduce the first program of each finding
    /// reduce_budget = 60
    /// jobs = 2
    /// ```
    pub fn load(path: &Path) -> Result<HuntSpec> {
        let f = crate::batch::SpecFile::read(path, KEYS)?;
        let (t, dir) = (&f.table, f.dir.clone());
        let mut spec = HuntSpec {
            name: f.name()?,
            dir: dir.clone(),
            text: f.text.clone(),
            ..HuntSpec::default()
        };
        let strings = |key: &str| f.strings(key);
        let int = |key: &str, lo: i64, hi: i64| f.int(key, lo, hi);
        spec.source = source_of(&f, path)?;
        if let Some(o) = t.get("oracle") {
            spec.oracle = match o.as_str() {
                Some("native") => Oracle::Native,
                Some("jit-o0") => Oracle::JitO0,
                _ => {
                    return Err(bad(
                        path,
                        "oracle must be \"native\" (clang-19 -O0, run) or \"jit-o0\"",
                    ))
                }
            };
        }
        if let Some(p) = strings("pipelines")? {
            spec.pipelines = p;
        }
        if let Some(n) = int("orderings", 0, 1000)? {
            spec.orderings = n as usize;
        }
        if let Some(p) = strings("pool")? {
            spec.pool = crate::tune::expand_pool(&p);
        }
        if let Some(l) = t.get("length") {
            match l.as_array().map(|a| a.as_slice()) {
                Some([toml::Value::Integer(a), toml::Value::Integer(b)])
                    if 1 <= *a && a <= b && *b <= 1000 =>
                {
                    spec.lengths = (*a as usize, *b as usize)
                }
                _ => {
                    return Err(bad(
                        path,
                        "'length' must be [MIN, MAX], 1 <= MIN <= MAX <= 1000",
                    ))
                }
            }
        }
        if let Some(n) = int("seed", 0, i64::MAX)? {
            spec.seed = n as u64;
        }
        if let Some(p) = strings("plugins")? {
            spec.plugins = p.into_iter().map(|f| dir.join(f)).collect();
        }
        if let Some(w) = strings("with")? {
            spec.with = with_of(path, &w)?;
        }
        if let Some(c) = strings("cflags")? {
            spec.cflags = c;
        }
        if let Some(n) = int("timeout", 1, 3600)? {
            spec.timeout = Duration::from_secs(n as u64);
        }
        if let Some(r) = f.bool("reduce")? {
            spec.reduce = r;
        }
        if let Some(n) = int("reduce_budget", 1, 86_400)? {
            spec.reduce_budget = Duration::from_secs(n as u64);
        }
        if let Some(n) = int("jobs", 1, 64)? {
            spec.jobs = n as usize;
        }
        spec.check()?;
        Ok(spec)
    }

    /// What every spec must be: some pipeline to run, each one known.
    pub fn check(&self) -> Result<()> {
        if self.pipelines.is_empty() && self.orderings == 0 {
            return Err(Error::setting(
                "hunt",
                "no pipeline to run: give pipelines, or orderings above 0",
            ));
        }
        if self.orderings > 0 && self.pool.is_empty() {
            return Err(Error::setting("hunt", "orderings need a pool of passes"));
        }
        if self.lengths.0 == 0 || self.lengths.0 > self.lengths.1 || self.lengths.1 > 1000 {
            return Err(Error::setting(
                "hunt",
                format!(
                    "length must be MIN..MAX with 1 <= MIN <= MAX <= 1000, got {}..{}",
                    self.lengths.0, self.lengths.1
                ),
            ));
        }
        if self.orderings > 1000 {
            return Err(Error::setting(
                "hunt",
                format!("orderings must be 0 to 1000, got {}", self.orderings),
            ));
        }
        Ok(())
    }

    /// Every program, in order.
    pub fn programs(&self) -> Vec<HuntProgram> {
        match &self.source {
            Source::Csmith { seeds, .. } => (seeds.0..=seeds.1)
                .map(|s| HuntProgram {
                    name: format!("csmith-{s}"),
                    seed: Some(s),
                    file: None,
                })
                .collect(),
            Source::Corpus(files) => files
                .iter()
                .map(|f| HuntProgram {
                    // Inside the spec's folder, the path from there;
                    // elsewhere, the file's name.
                    name: match f.strip_prefix(&self.dir) {
                        Ok(rel) if f.is_relative() == self.dir.is_relative() => {
                            rel.to_string_lossy().into_owned()
                        }
                        _ => f.file_name().map_or_else(
                            || f.to_string_lossy().into_owned(),
                            |n| n.to_string_lossy().into_owned(),
                        ),
                    },
                    seed: None,
                    file: Some(f.clone()),
                })
                .collect(),
        }
    }

    /// The programs shard `index` of `count` takes: every count-th.
    pub fn assign(&self, index: usize, count: usize) -> Vec<HuntProgram> {
        self.programs()
            .into_iter()
            .enumerate()
            .filter(|(i, _)| count > 0 && i % count == index)
            .map(|(_, p)| p)
            .collect()
    }

    /// The hunt as a batch job: its shards' manifest names the oracle, the
    /// named pipelines and the programs (csmith's seeds, or the files), so
    /// that the merge needs no spec.
    pub fn job(&self) -> crate::batch::Job {
        let programs = match &self.source {
            Source::Csmith { seeds, .. } => serde_json::json!({"seeds": [seeds.0, seeds.1]}),
            Source::Corpus(_) => serde_json::json!({
                "programs": self.programs().into_iter().map(|p| p.name).collect::<Vec<_>>()
            }),
        };
        let mut manifest = serde_json::json!({
            "oracle": self.oracle.name(),
            "pipelines": self.pipelines,
        });
        if let (Some(m), serde_json::Value::Object(p)) = (manifest.as_object_mut(), programs) {
            m.extend(p);
        }
        crate::batch::Job {
            kind: "hunt",
            name: self.name.clone(),
            dir: self.dir.clone(),
            fingerprint: self.fingerprint(),
            manifest,
        }
    }

    /// A hash of what the records depend on.
    pub fn fingerprint(&self) -> String {
        let text = format!(
            "{:?}|{:?}|{:?}|{}|{:?}|{:?}|{}|{:?}|{:?}|{:?}",
            self.source,
            self.oracle,
            self.pipelines,
            self.orderings,
            self.pool,
            self.lengths,
            self.seed,
            self.with,
            self.cflags,
            self.timeout
        );
        format!("{:016x}", crate::jit::fnv1a(text.bytes()))
    }

    /// The pipelines program `p` goes through: the named ones, then its
    /// random orderings (fixed by the spec's seed and the program).
    pub fn pipelines_for(&self, p: &HuntProgram) -> Vec<String> {
        let mut out = self.pipelines.clone();
        let salt = p.seed.unwrap_or_else(|| crate::jit::fnv1a(p.name.bytes()));
        let mut rng = crate::rng::Rng::new(self.seed.wrapping_mul(0x9e37_79b9).wrapping_add(salt));
        for _ in 0..self.orderings {
            let n = rng.between(self.lengths.0, self.lengths.1);
            let ordering: Vec<&str> = (0..n)
                .map(|_| self.pool[rng.below(self.pool.len())].as_str())
                .collect();
            out.push(ordering.join(","));
        }
        out
    }
}

/// `with = ["KEY=VALUE", ...]`: the context's settings, as :with takes them.
fn with_of(path: &Path, settings: &[String]) -> Result<Vec<(String, String)>> {
    settings
        .iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| {
                    bad(
                        path,
                        format!("'with' holds KEY=VALUE settings as :with takes them, got '{s}'"),
                    )
                })
        })
        .collect()
}

/// Where a hunt's file takes its programs: Csmith's, `csmith = { seeds =
/// [A, B], args = [...] }`, or the C files of `corpus = [...]` (one, not
/// both).
fn source_of(f: &crate::batch::SpecFile, path: &Path) -> Result<Source> {
    let c = match (f.table.get("csmith"), f.strings("corpus")?) {
        (Some(_), Some(_)) => return Err(bad(path, "give csmith or corpus, not both")),
        (Some(c), None) => c,
        (None, Some(patterns)) => {
            let mut files = Vec::new();
            for p in patterns {
                files.extend(f.files(&p)?);
            }
            return Ok(Source::Corpus(files));
        }
        (None, None) => {
            return Err(bad(
                path,
                "no programs: give csmith = { seeds = [1, 40] } or corpus = [\"*.c\"]",
            ))
        }
    };
    let c = c.as_table().ok_or_else(|| {
        bad(
            path,
            "'csmith' must be a table: csmith = { seeds = [1, 40] }",
        )
    })?;
    for k in c.keys() {
        if k != "seeds" && k != "args" {
            return Err(bad(path, format!("csmith has no key '{k}' (seeds, args)")));
        }
    }
    let seeds = match c
        .get("seeds")
        .and_then(toml::Value::as_array)
        .map(|a| a.as_slice())
    {
        Some([toml::Value::Integer(a), toml::Value::Integer(b)]) if 0 <= *a && a <= b => {
            (*a as u64, *b as u64)
        }
        _ => {
            return Err(bad(
                path,
                "csmith.seeds must be [FIRST, LAST], whole numbers, FIRST <= LAST",
            ))
        }
    };
    if seeds.1 - seeds.0 >= 1_000_000 {
        return Err(bad(path, "csmith.seeds: at most a million programs"));
    }
    let args = match c.get("args") {
        None => CSMITH_ARGS.iter().map(|s| s.to_string()).collect(),
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(path, "csmith.args must hold strings"))
            })
            .collect::<Result<_>>()?,
        Some(_) => return Err(bad(path, "csmith.args must be a list of strings")),
    };
    Ok(Source::Csmith { seeds, args })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_reads_and_says_what_is_wrong() {
        let dir = std::env::temp_dir().join(format!("passlab-hunt-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let load = |text: &str| {
            std::fs::write(dir.join("h.toml"), text).unwrap();
            HuntSpec::load(&dir.join("h.toml"))
        };
        let s =
            load("csmith = { seeds = [3, 6] }\npipelines = [\"O2\"]\norderings = 2\nseed = 7\n")
                .unwrap();
        assert_eq!(s.programs().len(), 4);
        assert_eq!(
            s.assign(1, 2)
                .iter()
                .map(|p| p.seed.unwrap())
                .collect::<Vec<_>>(),
            [4, 6]
        );
        let p = &s.programs()[0];
        assert_eq!(
            s.pipelines_for(p),
            s.pipelines_for(p),
            "orderings are fixed by the seed"
        );
        assert_eq!(s.pipelines_for(p).len(), 3);
        for (text, says) in [
            ("pipelines = [\"O2\"]\n", "no programs"),
            ("csmith = { seeds = [5, 2] }\n", "FIRST <= LAST"),
            (
                "csmith = { seeds = [1, 2] }\noracle = \"gcc\"\n",
                "oracle must be",
            ),
            (
                "csmith = { seeds = [1, 2] }\npipelines = []\n",
                "no pipeline to run",
            ),
            (
                "csmith = { seeds = [1, 2] }\npipeline = [\"O2\"]\n",
                "did you mean 'pipelines'",
            ),
            (
                "csmith = { seeds = [1, 2] }\ntimeout = 0\n",
                "'timeout' must be",
            ),
            ("corpus = [\"none/*.c\"]\n", "matches no file"),
        ] {
            let e = load(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
