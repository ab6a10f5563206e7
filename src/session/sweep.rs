//! Sweeps: the search of `:tune` (or a fixed list of orderings) over a
//! corpus of programs, as a headless job split into shards that a cluster's
//! engine runs (Slurm job arrays, Kubernetes Indexed Jobs), and the merge
//! of the shards into one report.
//!
//! A sweep is described by a TOML file ([`SweepSpec::load`]); every shard
//! resolves it the same way (the corpus sorted, each program weighed by
//! its size) and takes the programs [`SweepSpec::assign`] gives it. Each
//! program is built in a fresh [`Session`] (`:load`, or the `.plab` script
//! that makes it, then its `:buffer`s), and searched with
//! [`crate::tune::tune`]. Every trial becomes one JSON line in
//! `OUT/shard-I-of-N.jsonl`, written with a single `write` on a file opened
//! for appending, and a program ends with a `done` line. A shard run again
//! drops a torn last line, replays the trials it finds into the search
//! (which is deterministic given the seed) and finishes the rest.
//!
//! [`merge`] reads the shards of one or more folders, checks that every
//! program is done, that no trial is missing or duplicated and that all
//! shards ran the same spec, and writes the records in order and the report
//! (text, HTML, SVG and PNG charts).

use super::Session;
use crate::chart::Chart;
use crate::table::Table;
use crate::tune::{Budget, Goal, Strategy, Trial, TuneSpec, Tuning, BASELINE, BASELINES};
use crate::{Error, Result};
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where a program comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// A .c, .cpp, .ll or .bc file, loaded as `:load` does.
    File(PathBuf),
    /// A module a `.plab` script leaves in its session.
    Script { script: PathBuf, module: String },
}

/// One program of the corpus.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Unique in the sweep: the path relative to the spec's folder, or
    /// `script.plab:module`.
    pub name: String,
    pub origin: Origin,
    /// The function checked (and timed), and its arguments as `:call`
    /// takes them.
    pub function: Option<String>,
    pub args: Vec<String>,
    /// `:buffer` lines (without `:buffer`) that make the arguments.
    pub buffers: Vec<String>,
    /// For balancing shards, about how much IR the program makes: its
    /// statements (`;`) for C and C++, lines for IR text, bytes / 20 for
    /// bitcode, instructions for a script's module; plus a fixed cost.
    pub weight: u64,
}

/// One unit of work: a program's baselines, or one strategy's search of
/// it. Shards take whole units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unit<'a> {
    pub program: &'a Program,
    /// 0: the baselines; i: the i-th strategy.
    pub phase: usize,
}

/// A sweep (see the module documentation).
#[derive(Clone, Debug)]
pub struct SweepSpec {
    pub name: String,
    /// The spec file's folder: relative paths start there.
    pub dir: PathBuf,
    pub programs: Vec<Program>,
    pub cflags: Vec<String>,
    pub tune: TuneSpec,
    /// The spec's text, hashed into every shard's manifest.
    pub text: String,
}

fn bad(path: &Path, message: impl Into<String>) -> Error {
    Error::Invalid(format!("{}: {}", path.display(), message.into()))
}

/// `key` as a list of strings: a string or an array of strings.
fn strings(path: &Path, t: &toml::Table, key: &str) -> Result<Vec<String>> {
    match t.get(key) {
        None => Ok(Vec::new()),
        Some(toml::Value::String(s)) => Ok(vec![s.clone()]),
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    bad(
                        path,
                        format!("'{key}' must hold strings, found a {}", v.type_str()),
                    )
                })
            })
            .collect(),
        Some(v) => Err(bad(
            path,
            format!(
                "'{key}' must be a string or a list of strings, found a {}",
                v.type_str()
            ),
        )),
    }
}

const KEYS: &[&str] = &[
    "name",
    "corpus",
    "scripts",
    "program",
    "cflags",
    "function",
    "args",
    "buffers",
    "goal",
    "strategy",
    "trials",
    "seconds",
    "seed",
    "length",
    "pool",
    "orderings",
    "timeout",
];

impl SweepSpec {
    /// Reads a spec:
    ///
    /// ```toml
    /// name = "zlib"
    /// corpus = ["zlib/*.c"]          # files or patterns (.c .cpp .ll .bc)
    /// scripts = ["build.plab"]       # each module a script leaves is a program
    /// cflags = ["-DNDEBUG"]
    /// goal = "instructions"          # or size, runtime, 0.5*size+0.5*runtime
    /// strategy = ["random", "hill"]  # or orderings = ["O2", "instcombine,gvn"]
    /// trials = 200                   # or seconds = 30 (per strategy)
    /// seed = 1
    /// length = [10, 40]
    /// pool = ["instcombine", "gvn"]  # default: :tune's pool
    ///
    /// [[program]]                    # a program with a function to check
    /// path = "zlib/adler32.c"
    /// function = "adler32"
    /// args = "1 data 4096"
    /// buffers = ["data i8[4096] = random(1)"]
    /// ```
    pub fn load(path: &Path) -> Result<SweepSpec> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
        let t: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| bad(path, e.to_string().trim().to_string()))?;
        for k in t.keys() {
            if !KEYS.contains(&k.as_str()) {
                return Err(Error::Invalid(format!(
                    "{}: unknown key '{k}'{}",
                    path.display(),
                    crate::error::suggest(&crate::nearest_names(k, KEYS.iter().copied()))
                )));
            }
        }
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or_else(|| PathBuf::from("."));
        let name = t
            .get("name")
            .and_then(toml::Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| {
                path.file_stem()
                    .map_or("sweep".into(), |s| s.to_string_lossy().into_owned())
            });
        let int = |key: &str| -> Result<Option<i64>> {
            match t.get(key) {
                None => Ok(None),
                Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Some(*i)),
                Some(v) => Err(bad(
                    path,
                    format!("'{key}' must be a number, found a {}", v.type_str()),
                )),
            }
        };
        let mut tune = TuneSpec::default();
        if let Some(g) = t.get("goal") {
            let g = g
                .as_str()
                .ok_or_else(|| bad(path, "'goal' must be a string"))?;
            tune.goal = Goal::parse(g)?;
        }
        let strategies = strings(path, &t, "strategy")?;
        let orderings = strings(path, &t, "orderings")?;
        match (strategies.is_empty(), orderings.is_empty()) {
            (false, false) => return Err(bad(path, "give 'strategy' or 'orderings', not both")),
            (true, false) => {
                tune.strategies = vec![Strategy::List(
                    orderings
                        .iter()
                        .map(|o| {
                            crate::pipeline::split(o)
                                .map(|p| p.iter().map(|s| s.to_string()).collect())
                        })
                        .collect::<Result<_>>()?,
                )]
            }
            (false, true) => {
                tune.strategies = strategies
                    .iter()
                    .map(|s| {
                        Strategy::parse(s).ok_or_else(|| {
                            bad(
                                path,
                                format!("unknown strategy '{s}' (random, greedy, hill)"),
                            )
                        })
                    })
                    .collect::<Result<_>>()?
            }
            (true, true) => {}
        }
        if let Some(n) = int("trials")? {
            tune.budget = Budget::Trials(n.max(1) as usize);
        }
        match t.get("seconds") {
            Some(toml::Value::Integer(s)) if *s > 0 => tune.budget = Budget::Seconds(*s as f64),
            Some(toml::Value::Float(s)) if *s > 0.0 => tune.budget = Budget::Seconds(*s),
            None => {}
            Some(v) => {
                return Err(bad(
                    path,
                    format!(
                        "'seconds' must be a positive number, found a {}",
                        v.type_str()
                    ),
                ))
            }
        }
        if let Some(s) = int("seed")? {
            tune.seed = s as u64;
        }
        if let Some(s) = int("timeout")? {
            tune.trial_timeout = std::time::Duration::from_secs(s.max(1) as u64);
        }
        if let Some(l) = t.get("length") {
            let l: Vec<usize> = l
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_integer())
                        .map(|v| v.max(0) as usize)
                        .collect()
                })
                .unwrap_or_default();
            let [lo, hi] = l.as_slice() else {
                return Err(bad(path, "'length' must be [MIN, MAX], e.g. [10, 40]"));
            };
            tune.lengths = (*lo, *hi);
        }
        let pool = strings(path, &t, "pool")?;
        if !pool.is_empty() {
            tune.pool = pool;
        }
        tune.validate()?;
        let cflags = strings(path, &t, "cflags")?;
        // Programs: the corpus's files, the scripts' modules, and [[program]]s.
        let function = t
            .get("function")
            .and_then(toml::Value::as_str)
            .map(str::to_string);
        let args = t
            .get("args")
            .and_then(toml::Value::as_str)
            .map_or(Vec::new(), |a| {
                a.split_whitespace().map(str::to_string).collect()
            });
        let buffers = strings(path, &t, "buffers")?;
        let mut programs = Vec::new();
        for pattern in strings(path, &t, "corpus")? {
            let files = expand(&dir, &pattern)?;
            if files.is_empty() {
                return Err(bad(
                    path,
                    format!("corpus pattern '{pattern}' matches no file"),
                ));
            }
            for f in files {
                programs.push(file_program(
                    &dir,
                    f,
                    function.clone(),
                    args.clone(),
                    buffers.clone(),
                )?);
            }
        }
        if let Some(list) = t.get("program") {
            let list = list
                .as_array()
                .ok_or_else(|| bad(path, "'program' must be [[program]] tables"))?;
            for p in list {
                let p = p
                    .as_table()
                    .ok_or_else(|| bad(path, "'program' must be [[program]] tables"))?;
                let file = p
                    .get("path")
                    .and_then(toml::Value::as_str)
                    .ok_or_else(|| bad(path, "a [[program]] needs path = \"FILE\""))?;
                let function = p
                    .get("function")
                    .and_then(toml::Value::as_str)
                    .map(str::to_string);
                let args = p
                    .get("args")
                    .and_then(toml::Value::as_str)
                    .map_or(Vec::new(), |a| {
                        a.split_whitespace().map(str::to_string).collect()
                    });
                let buffers = strings(path, p, "buffers")?;
                // A [[program]] gives a corpus file its function, or adds one.
                let p = file_program(&dir, dir.join(file), function, args, buffers)?;
                programs.retain(|q: &Program| q.name != p.name);
                programs.push(p);
            }
        }
        for script in strings(path, &t, "scripts")? {
            let file = dir.join(&script);
            let mut s = script_session(&file)?;
            for (module, m) in &s.modules {
                programs.push(Program {
                    name: format!("{script}:{module}"),
                    origin: Origin::Script {
                        script: file.clone(),
                        module: module.clone(),
                    },
                    function: function.clone(),
                    args: args.clone(),
                    buffers: buffers.clone(),
                    weight: m.instruction_count(),
                });
            }
            s.modules.clear();
        }
        if programs.is_empty() {
            return Err(bad(
                path,
                "no programs: give corpus = [\"*.c\"], scripts = [...] or [[program]] tables",
            ));
        }
        programs.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(w) = programs.windows(2).find(|w| w[0].name == w[1].name) {
            return Err(bad(path, format!("'{}' is in the corpus twice", w[0].name)));
        }
        Ok(SweepSpec {
            name,
            dir,
            programs,
            cflags,
            tune,
            text,
        })
    }

    /// The units of work: per program, its baselines (O0, O2, O3, Oz) and
    /// each strategy's search, in order.
    pub fn units(&self) -> Vec<Unit<'_>> {
        let phases = self.tune.strategies.len() + 1;
        self.programs
            .iter()
            .flat_map(|p| (0..phases).map(move |phase| Unit { program: p, phase }))
            .collect()
    }

    /// The name of phase `i` (0: the baselines, then the strategies).
    pub fn phase_name(&self, i: usize) -> String {
        match i {
            0 => BASELINE.to_string(),
            i => self.tune.strategies[i - 1].name().to_string(),
        }
    }

    /// About how many passes a unit runs: the baselines as 4 orderings of
    /// about 40 passes; a search its trials times the length of its
    /// orderings (random: the middle of the range; hill climbing drifts to
    /// the short end; greedy's are short).
    fn passes_of(&self, phase: usize) -> u64 {
        let (lo, hi) = self.tune.lengths;
        let trials = match self.tune.budget {
            Budget::Trials(n) => n as u64,
            Budget::Seconds(s) => (s * 100.0) as u64,
        };
        match phase {
            0 => 150,
            i => match &self.tune.strategies[i - 1] {
                Strategy::Random => trials * ((lo + hi) / 2).max(1) as u64,
                Strategy::Hill => trials * (lo + (hi - lo) / 4).max(1) as u64,
                Strategy::Greedy => trials * 3,
                Strategy::List(l) => l.iter().map(|o| o.len() as u64 * 10).sum(),
            },
        }
    }

    /// The units of shard `index` of `count`: units are dealt, heaviest
    /// first (a program's weight times the passes the unit runs), to the
    /// shard with the least weight so far (ties: the lower index), the same
    /// in every shard.
    pub fn assign(&self, index: usize, count: usize) -> Vec<Unit<'_>> {
        let weight = |u: &Unit| u.program.weight.max(1) * self.passes_of(u.phase);
        let mut order = self.units();
        order.sort_by(|a, b| {
            weight(b)
                .cmp(&weight(a))
                .then(a.program.name.cmp(&b.program.name))
                .then(a.phase.cmp(&b.phase))
        });
        let mut load = vec![0u64; count.max(1)];
        let mut mine = Vec::new();
        for u in order {
            let (i, _) = load
                .iter()
                .enumerate()
                .min_by_key(|(i, w)| (**w, *i))
                .unwrap_or((0, &0));
            load[i] += weight(&u);
            if i == index {
                mine.push(u);
            }
        }
        mine.sort_by(|a, b| {
            a.program
                .name
                .cmp(&b.program.name)
                .then(a.phase.cmp(&b.phase))
        });
        mine
    }

    /// A hash of the spec's text and its programs: shards of one sweep
    /// agree on it.
    pub fn fingerprint(&self) -> String {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let names: Vec<&str> = self.programs.iter().map(|p| p.name.as_str()).collect();
        for b in self.text.bytes().chain(names.join("\n").bytes()) {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        format!("{h:016x}")
    }

    fn manifest(&self) -> Json {
        json!({
            "sweep": self.name,
            "spec": self.fingerprint(),
            "goal": self.tune.goal.describe(),
            "seed": self.tune.seed,
            "phases": std::iter::once(BASELINE.to_string())
                .chain(self.tune.strategies.iter().map(|s| s.name().to_string()))
                .collect::<Vec<_>>(),
            "programs": self.programs.iter().map(|p| json!({
                "name": p.name,
                "function": p.function,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Files matching `pattern` (relative to `dir`), sorted.
fn expand(dir: &Path, pattern: &str) -> Result<Vec<PathBuf>> {
    let full = dir.join(pattern);
    let text = full.to_string_lossy();
    let mut files: Vec<PathBuf> = glob::glob(&text)
        .map_err(|e| Error::Invalid(format!("corpus pattern '{pattern}': {e}")))?
        .filter_map(|r| r.ok())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

fn file_program(
    dir: &Path,
    file: PathBuf,
    function: Option<String>,
    args: Vec<String>,
    buffers: Vec<String>,
) -> Result<Program> {
    let bytes = std::fs::read(&file).map_err(|e| Error::io(file.display(), e))?;
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let size = match ext {
        "ll" => bytes.iter().filter(|&&b| b == b'\n').count() as u64,
        "bc" => bytes.len() as u64 / 20,
        _ => bytes.iter().filter(|&&b| b == b';').count() as u64,
    };
    // Inside the spec's folder: the path from there; elsewhere: the file's
    // name (two files of one name elsewhere are reported as twice).
    let name = match file.strip_prefix(dir) {
        Ok(rel) => rel.to_string_lossy().trim_start_matches("./").to_string(),
        Err(_) => file.file_name().map_or_else(
            || file.to_string_lossy().into_owned(),
            |n| n.to_string_lossy().into_owned(),
        ),
    };
    Ok(Program {
        name,
        origin: Origin::File(file),
        function,
        args,
        buffers,
        weight: size + 20,
    })
}

/// A session that ran `script` (relative inputs found beside it).
fn script_session(script: &Path) -> Result<Session> {
    let text = std::fs::read_to_string(script).map_err(|e| Error::io(script.display(), e))?;
    let mut s = Session::new();
    if let Some(dir) = script.parent().filter(|d| !d.as_os_str().is_empty()) {
        s.extra_path.push(dir.to_path_buf());
    }
    s.origin = (script.display().to_string(), 1);
    s.execute(&text).map_err(|e| bad(script, e.to_string()))?;
    Ok(s)
}

/// The shard from the environment: Slurm's array task, or a Kubernetes
/// Indexed Job's completion index; the count from `count`, else Slurm's
/// task count, else `PASSLAB_SHARDS`.
pub fn shard_from_env(count: Option<usize>) -> Result<Option<(usize, usize)>> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let index = var("SLURM_ARRAY_TASK_ID").or_else(|| var("JOB_COMPLETION_INDEX"));
    let Some(index) = index else {
        return Ok(None);
    };
    let index: usize = index.parse().map_err(|_| {
        Error::Invalid(format!(
            "the shard index '{index}' from the environment is not a number"
        ))
    })?;
    let count = match count {
        Some(c) => c,
        None => var("SLURM_ARRAY_TASK_COUNT")
            .or_else(|| var("PASSLAB_SHARDS"))
            .ok_or_else(|| {
                Error::Invalid(
                    "a shard index is set but no count: pass --shards N, or set PASSLAB_SHARDS (Kubernetes: the Job's completions)".into(),
                )
            })?
            .parse()
            .map_err(|_| Error::Invalid("the shard count from the environment is not a number".into()))?,
    };
    if count == 0 || index >= count {
        return Err(Error::Invalid(format!(
            "shard {index} of {count} does not exist"
        )));
    }
    Ok(Some((index, count)))
}

/// What a shard tells as it goes: a line about a unit, or a trial made
/// and how far its unit's budget is used.
pub type ShardProgress<'p> = dyn FnMut(&str, Option<(&Trial, f64)>) + 'p;

/// What a shard did.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardSummary {
    pub file: PathBuf,
    /// Units of work (a program's baselines, or one search of it).
    pub units: usize,
    /// Units already done when it started.
    pub skipped: usize,
    /// Trials found in the file and replayed, and trials made now.
    pub replayed: usize,
    pub made: usize,
}

fn host() -> String {
    let mut buf = [0u8; 256];
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    if ok {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "unknown".into()
    }
}

fn llvm_version() -> String {
    let (mut a, mut b, mut c) = (0, 0, 0);
    unsafe { llvm_sys::core::LLVMGetVersion(&mut a, &mut b, &mut c) };
    format!("{a}.{b}.{c}")
}

/// Reads a shard file's records, dropping a torn last line (a killed
/// shard's) from the file.
fn read_records(file: &Path) -> Result<Vec<Json>> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(file.display(), e)),
    };
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if whole < bytes.len() {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .map_err(|e| Error::io(file.display(), e))?;
        f.set_len(whole as u64)
            .map_err(|e| Error::io(file.display(), e))?;
    }
    bytes[..whole]
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_slice(l).map_err(|e| {
                Error::Invalid(format!("{}:{}: not a record: {e}", file.display(), i + 1))
            })
        })
        .collect()
}

/// Runs shard `index` of `count` of `spec`, writing into `out` (see the
/// module documentation); `progress` hears a line per program and trial.
pub fn run_shard(
    spec: &SweepSpec,
    out: &Path,
    (index, count): (usize, usize),
    progress: &mut ShardProgress,
) -> Result<ShardSummary> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out.display(), e))?;
    // The manifest: the same from every shard, written whole or not at all.
    let manifest = out.join("sweep.json");
    let text = serde_json::to_string_pretty(&spec.manifest()).unwrap_or_default();
    match std::fs::read_to_string(&manifest) {
        Ok(old) if old == text => {}
        Ok(old) if !old.is_empty() => {
            let other: Json = serde_json::from_str(&old).unwrap_or(Json::Null);
            if other.get("spec") != spec.manifest().get("spec") {
                return Err(Error::Invalid(format!(
                    "{} belongs to another sweep (spec {}); this one is {}: use another --out folder",
                    manifest.display(),
                    other.get("spec").and_then(Json::as_str).unwrap_or("?"),
                    spec.fingerprint()
                )));
            }
        }
        _ => {
            let tmp = out.join(format!(".sweep.json.{}", std::process::id()));
            std::fs::write(&tmp, &text).map_err(|e| Error::io(tmp.display(), e))?;
            std::fs::rename(&tmp, &manifest).map_err(|e| Error::io(manifest.display(), e))?;
        }
    }
    let file = out.join(format!("shard-{index}-of-{count}.jsonl"));
    let records = read_records(&file)?;
    let mut sink = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .map_err(|e| Error::io(file.display(), e))?;
    let mine = spec.assign(index, count);
    let (host, llvm) = (host(), llvm_version());
    let mut summary = ShardSummary {
        file: file.clone(),
        units: mine.len(),
        skipped: 0,
        replayed: 0,
        made: 0,
    };
    let mut built: Option<(String, Session)> = None;
    for u in mine {
        let (p, phase) = (u.program, spec.phase_name(u.phase));
        let label = format!("{} {phase}", p.name);
        let mine = |r: &&Json| {
            r.get("program").and_then(Json::as_str) == Some(&p.name)
                && r.get("phase").and_then(Json::as_str) == Some(&phase)
        };
        if records.iter().filter(mine).any(|r| r.get("done").is_some()) {
            summary.skipped += 1;
            progress(&format!("{label}: done already"), None);
            continue;
        }
        let known: Vec<Trial> = records
            .iter()
            .filter(mine)
            .filter_map(Trial::from_json)
            .collect();
        summary.replayed += known.len();
        if !known.is_empty() {
            progress(
                &format!("{label}: {} trials already made", known.len()),
                None,
            );
        }
        // One session per program, kept for its next unit.
        if built.as_ref().is_none_or(|(n, _)| *n != p.name) {
            built = Some((p.name.clone(), program_session(spec, p)?));
        }
        let Some((_, session)) = built.as_ref() else {
            continue;
        };
        let mut tune = spec.tune.clone();
        tune.strategies = match u.phase {
            0 => Vec::new(),
            i => vec![spec.tune.strategies[i - 1].clone()],
        };
        // A search's unit needs only O0 of the baselines (a mixed goal is
        // relative to it); the baselines' unit records them all.
        tune.levels = u.phase == 0;
        let mut write_error = None;
        let mut made = 0;
        let tuning = {
            let (module, args) = session.program_parts(p)?;
            let check = p.function.as_deref().map(|f| (f, args.as_slice()));
            let mut on_trial = |t: &Trial, st: &crate::tune::Status| {
                if t.phase != phase {
                    return;
                }
                let score = st.tuning.score(t);
                let mut r = t.to_json();
                if let Json::Object(o) = &mut r {
                    o.insert("program".into(), json!(p.name));
                    o.insert("goal".into(), json!(st.tuning.goal.describe()));
                    o.insert("score".into(), json!(score));
                    o.insert("passlab".into(), json!(env!("CARGO_PKG_VERSION")));
                    o.insert("llvm".into(), json!(llvm));
                    o.insert("host".into(), json!(host));
                }
                let mut line = r.to_string();
                line.push('\n');
                if let Err(e) = sink.write_all(line.as_bytes()) {
                    write_error.get_or_insert(e);
                }
                made += 1;
                progress(&label, Some((t, st.fraction)));
            };
            crate::tune::tune(module, check, &tune, &known, &mut on_trial)
        };
        if let Some(e) = write_error {
            return Err(Error::io(file.display(), e));
        }
        let tuning = tuning?;
        if tuning.interrupted {
            return Err(Error::Interrupted {
                pass: format!("the sweep, in {label}"),
            });
        }
        summary.made += made;
        let trials = tuning.trials.iter().filter(|t| t.phase == phase).count();
        let done = json!({"program": p.name, "phase": phase, "done": true, "trials": trials});
        sink.write_all(format!("{done}\n").as_bytes())
            .map_err(|e| Error::io(file.display(), e))?;
    }
    Ok(summary)
}

/// A session holding program `p` as its current module, with its buffers.
fn program_session(spec: &SweepSpec, p: &Program) -> Result<Session> {
    let mut s = match &p.origin {
        Origin::File(file) => {
            let mut s = Session::new();
            let flags = if spec.cflags.is_empty() {
                String::new()
            } else {
                format!(" cflags={}", spec.cflags.join(","))
            };
            s.execute(&format!(":load {}{flags}", file.display()))
                .map_err(|e| Error::Invalid(format!("{}: {e}", p.name)))?;
            s
        }
        Origin::Script { script, module } => {
            let mut s = script_session(script)?;
            s.execute(&format!(":use {module}"))?;
            s
        }
    };
    for b in &p.buffers {
        s.execute(&format!(":buffer {b}"))
            .map_err(|e| Error::Invalid(format!("{}: {e}", p.name)))?;
    }
    Ok(s)
}

impl Session {
    /// The current module and `p`'s arguments.
    fn program_parts(&self, p: &Program) -> Result<(&crate::Module, Vec<crate::jit::Arg<'_>>)> {
        let module = self.module()?;
        let args = super::commands::call_args_for(self, "sweep", &p.args)?;
        Ok((module, args))
    }
}

/// What [`merge`] found and wrote.
#[derive(Clone, Debug)]
pub struct Merged {
    pub records: usize,
    pub programs: usize,
    pub shards: usize,
    /// The files written: records, text, HTML, charts.
    pub written: Vec<PathBuf>,
    /// The report as text.
    pub text: String,
}

/// Merges the shards found in `dirs` into `out` (see the module
/// documentation).
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Merged> {
    let mut manifest: Option<Json> = None;
    let mut records: Vec<Json> = Vec::new();
    let mut shards = 0;
    for dir in dirs {
        let m = dir.join("sweep.json");
        let text = std::fs::read_to_string(&m).map_err(|e| Error::io(m.display(), e))?;
        let this: Json = serde_json::from_str(&text)
            .map_err(|e| Error::Invalid(format!("{}: {e}", m.display())))?;
        match &manifest {
            Some(first) if first.get("spec") != this.get("spec") => {
                return Err(Error::Invalid(format!(
                    "{} is from another sweep than {} (spec {} and {})",
                    dir.display(),
                    dirs[0].display(),
                    this.get("spec").and_then(Json::as_str).unwrap_or("?"),
                    first.get("spec").and_then(Json::as_str).unwrap_or("?")
                )))
            }
            Some(_) => {}
            None => manifest = Some(this),
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| Error::io(dir.display(), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("shard-") && n.ends_with(".jsonl"))
            })
            .collect();
        files.sort();
        for f in files {
            shards += 1;
            let bytes = std::fs::read(&f).map_err(|e| Error::io(f.display(), e))?;
            for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
                if line.is_empty() {
                    continue;
                }
                let v: Json = serde_json::from_slice(line).map_err(|e| {
                    Error::Invalid(format!(
                        "{}:{}: a torn or corrupt record ({e}); run that shard again to finish it",
                        f.display(),
                        i + 1
                    ))
                })?;
                records.push(v);
            }
        }
    }
    let manifest = manifest.ok_or_else(|| Error::Invalid("merge: no folder given".into()))?;
    let phases: Vec<String> = manifest["phases"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let programs: Vec<(String, Option<String>)> = manifest["programs"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| {
                    Some((
                        p.get("name")?.as_str()?.to_string(),
                        p.get("function").and_then(Json::as_str).map(str::to_string),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    // Checks: every record's program is in the sweep, no trial twice, every
    // program done with all its trials.
    let known: BTreeSet<&str> = programs.iter().map(|(n, _)| n.as_str()).collect();
    let mut trials: BTreeMap<(String, usize, usize), Json> = BTreeMap::new();
    let mut done: BTreeMap<(String, String), Json> = BTreeMap::new();
    let mut problems = Vec::new();
    for r in records {
        let program = r
            .get("program")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        if !known.contains(program.as_str()) {
            problems.push(format!(
                "a record of '{program}', which is not in the sweep"
            ));
            continue;
        }
        let phase = r
            .get("phase")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let Some(p) = phases.iter().position(|x| *x == phase) else {
            problems.push(format!("{program}: a record of unknown phase '{phase}'"));
            continue;
        };
        if r.get("done").is_some() {
            if done.insert((program.clone(), phase.clone()), r).is_some() {
                problems.push(format!("{program} {phase} is done twice"));
            }
            continue;
        }
        let index = r.get("trial").and_then(Json::as_u64).unwrap_or(0) as usize;
        if trials.insert((program.clone(), p, index), r).is_some() {
            problems.push(format!("{program}: {phase} #{index} is there twice"));
        }
    }
    for (name, _) in &programs {
        for (p, phase) in phases.iter().enumerate() {
            let Some(d) = done.get(&(name.clone(), phase.clone())) else {
                problems.push(format!(
                    "{name} {phase} is not finished (no shard wrote its done record)"
                ));
                continue;
            };
            let n = d["trials"].as_u64().unwrap_or(0) as usize;
            let have = trials
                .range((name.clone(), p, 0)..(name.clone(), p, usize::MAX))
                .count();
            let contiguous = trials
                .range((name.clone(), p, 0)..(name.clone(), p, usize::MAX))
                .enumerate()
                .all(|(i, ((_, _, index), _))| i == *index);
            if have != n || !contiguous {
                problems.push(format!(
                    "{name}: {phase} has {have} trials, its done record says {n}"
                ));
            }
        }
    }
    if !problems.is_empty() {
        let n = problems.len();
        problems.truncate(20);
        return Err(Error::Invalid(format!(
            "merge: {n} problem{}:\n  {}",
            if n == 1 { "" } else { "s" },
            problems.join("\n  ")
        )));
    }
    // The records in order, then the report.
    std::fs::create_dir_all(out).map_err(|e| Error::io(out.display(), e))?;
    let mut written = Vec::new();
    let path = out.join("records.jsonl");
    let mut text = String::new();
    for r in trials.values() {
        text.push_str(&r.to_string());
        text.push('\n');
    }
    std::fs::write(&path, &text).map_err(|e| Error::io(path.display(), e))?;
    written.push(path);
    let goal = Goal::parse(manifest["goal"].as_str().unwrap_or("instructions"))?;
    let seed = manifest["seed"].as_u64().unwrap_or(0);
    let tunings: Vec<(String, Tuning)> = programs
        .iter()
        .map(|(name, function)| {
            let trials = trials
                .range((name.clone(), 0, 0)..(name.clone(), usize::MAX, 0))
                .filter_map(|(_, r)| Trial::from_json(r))
                .collect();
            (
                name.clone(),
                Tuning {
                    function: function.clone(),
                    goal: goal.clone(),
                    seed,
                    reference: None,
                    trials,
                    phases: phases.clone(),
                    interrupted: false,
                    elapsed: std::time::Duration::ZERO,
                },
            )
        })
        .collect();
    let summary = summary_table(&manifest, &tunings);
    let mut report = format!("{}\n", summary.to_text());
    let mut html = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sweep {0}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{padding:2px 8px;border-bottom:1px solid #ddd}}</style></head><body>\n\
         <h1>sweep {0}</h1>\n{1}\n",
        crate::table::escape(manifest["sweep"].as_str().unwrap_or("")),
        summary.to_html()
    );
    let gains = gain_chart(&manifest, &tunings);
    for (stem, chart) in std::iter::once(("gain".to_string(), gains)).chain(
        tunings
            .iter()
            .map(|(name, t)| (format!("convergence-{}", slug(name)), t.chart())),
    ) {
        for ext in ["svg", "png"] {
            let p = out.join(format!("{stem}.{ext}"));
            chart.write(&p.to_string_lossy())?;
            written.push(p);
        }
        html.push_str(&format!("<div>{}</div>\n", chart.svg()?));
    }
    for (name, t) in &tunings {
        let table = t.table(3);
        report.push_str(&format!("\n{name}\n{}\n", table.to_text()));
        html.push_str(&format!(
            "<h2>{}</h2>\n{}\n",
            crate::table::escape(name),
            table.to_html()
        ));
    }
    html.push_str("</body></html>\n");
    for (file, body) in [("report.txt", &report), ("report.html", &html)] {
        let p = out.join(file);
        std::fs::write(&p, body).map_err(|e| Error::io(p.display(), e))?;
        written.push(p);
    }
    Ok(Merged {
        records: trials.len(),
        programs: programs.len(),
        shards,
        written,
        text: report,
    })
}

fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Per program: the best ordering, its value, the levels' values and the
/// gains over them.
fn summary_table(manifest: &Json, tunings: &[(String, Tuning)]) -> Table {
    let goal = manifest["goal"].as_str().unwrap_or("");
    let mut t = Table::new(
        &format!(
            "sweep {}: the best ordering per program for {goal} (seed {})",
            manifest["sweep"].as_str().unwrap_or(""),
            manifest["seed"]
        ),
        &[
            "program",
            "trials>",
            "best",
            "best value>",
            "O0>",
            "O2>",
            "O3>",
            "Oz>",
            "gain vs O2>",
            "gain vs O3>",
            "gain vs Oz>",
            "miscompiles>",
            "failed>",
        ],
    );
    for (name, tu) in tunings {
        let value = |tr: Option<&Trial>| -> String {
            match tr {
                None => "-".into(),
                Some(tr) => match (tu.goal.metric(), tu.score(tr)) {
                    (Some(m), _) => m.of(tr).map_or("-".into(), |v| m.show(v)),
                    (None, Some(s)) => format!("{s:.4}"),
                    _ => "-".into(),
                },
            }
        };
        let best = tu.best(1).first().copied();
        let gain = |l: &str| match (
            tu.baseline(l).and_then(|b| tu.score(b)),
            best.and_then(|b| tu.score(b)),
        ) {
            (Some(b), Some(s)) if s > 0.0 => format!("{:.3}x", b / s),
            _ => "-".into(),
        };
        t.push([
            name.clone(),
            tu.searched().count().to_string(),
            best.map_or("none valid".into(), |b| {
                crate::tune::abbreviate(&b.pipeline(), 44)
            }),
            value(best),
            value(tu.baseline("O0")),
            value(tu.baseline("O2")),
            value(tu.baseline("O3")),
            value(tu.baseline("Oz")),
            gain("O2"),
            gain("O3"),
            gain("Oz"),
            tu.miscompiles().count().to_string(),
            tu.failures().count().to_string(),
        ]);
    }
    t.notes.push(
        "gain vs X: X's value divided by the best ordering's (above 1: the search beat X)".into(),
    );
    t
}

/// The best ordering's gain over O2, O3 and Oz per program, as bars.
fn gain_chart(manifest: &Json, tunings: &[(String, Tuning)]) -> Chart {
    let mut bars = Vec::new();
    for (name, tu) in tunings {
        let Some(best) = tu.best(1).first().and_then(|b| tu.score(b)) else {
            continue;
        };
        for (l, _) in BASELINES.iter().skip(1) {
            if let Some(b) = tu.baseline(l).and_then(|b| tu.score(b)) {
                if best > 0.0 {
                    bars.push((format!("{name} vs {l}"), b / best));
                }
            }
        }
    }
    Chart::bars(
        &format!(
            "sweep {}: gain of the best ordering found over O2, O3 and Oz ({})",
            manifest["sweep"].as_str().unwrap_or(""),
            manifest["goal"].as_str().unwrap_or("")
        ),
        "level's value / best ordering's value (above 1: the search beat the level)",
        bars,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(name: &str, weight: u64) -> Program {
        Program {
            name: name.into(),
            origin: Origin::File(name.into()),
            function: None,
            args: vec![],
            buffers: vec![],
            weight,
        }
    }

    #[test]
    fn shards_are_disjoint_complete_and_balanced() {
        let spec = SweepSpec {
            name: "t".into(),
            dir: ".".into(),
            programs: [
                ("a", 100),
                ("b", 90),
                ("c", 10),
                ("d", 10),
                ("e", 5),
                ("f", 80),
            ]
            .map(|(n, w)| program(n, w))
            .to_vec(),
            cflags: vec![],
            tune: TuneSpec::default(),
            text: String::new(),
        };
        // Two units per program: the baselines (150 w) and random (100
        // trials of 25 passes: 2500 w).
        let mut all: Vec<(String, usize)> = Vec::new();
        let mut loads = Vec::new();
        for i in 0..3 {
            let mine = spec.assign(i, 3);
            loads.push(
                mine.iter()
                    .map(|u| u.program.weight * if u.phase == 0 { 150 } else { 2500 })
                    .sum::<u64>(),
            );
            all.extend(mine.iter().map(|u| (u.program.name.clone(), u.phase)));
        }
        all.sort();
        assert_eq!(
            all,
            spec.units()
                .iter()
                .map(|u| (u.program.name.clone(), u.phase))
                .collect::<Vec<_>>()
        );
        let total: u64 = loads.iter().sum();
        assert_eq!(total, 295 * 2650);
        assert!(loads.iter().all(|l| l * 3 < total * 11 / 10), "{loads:?}");
        assert_eq!(spec.assign(0, 1).len(), 12);
    }

    #[test]
    fn a_torn_last_line_is_dropped_from_the_file() {
        let dir = std::env::temp_dir().join(format!("passlab-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("shard-0-of-1.jsonl");
        std::fs::write(&f, "{\"a\":1}\n{\"b\":2}\n{\"c\":").unwrap();
        let r = read_records(&f).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "{\"a\":1}\n{\"b\":2}\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
