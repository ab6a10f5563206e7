//! A sweep's spec: the TOML file, its programs (files, patterns, the
//! modules of `.plab` scripts, `[[program]]` tables), the units of work and
//! how shards share them.

use crate::batch::spec_error as bad;
use crate::session::Session;
use crate::tune::{Budget, Goal, Strategy, TuneSpec, BASELINE};
use crate::{Error, Result};
use serde_json::{json, Value as Json};
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
    /// Instead of a function: the module's `main` run as a program
    /// (`exec = "ARG ..."`, `stdin = "TEXT"`), its exit status and output
    /// checked.
    pub exec: Option<crate::jit::Program>,
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

/// What a table says of the function to check: its name, its arguments
/// (`args = "1 data 4096"`, as `:call` takes them) and the `:buffer`s that
/// make them; or the program to run (`exec = "10 'a b'"`, split as a shell
/// splits it, and `stdin = "TEXT"`).
type CheckOf = (
    Option<String>,
    Vec<String>,
    Vec<String>,
    Option<crate::jit::Program>,
);

fn check_of(path: &Path, t: &toml::Table) -> Result<CheckOf> {
    let bad = |m: String| Error::spec(path.display(), m);
    let text = |key: &str| t.get(key).and_then(toml::Value::as_str);
    let exec = match (text("exec"), t.get("exec")) {
        (Some(words), _) => Some(crate::jit::Program {
            args: shlex::split(words)
                .ok_or_else(|| bad(format!("exec = \"{words}\" has unbalanced quotes")))?,
            stdin: text("stdin").map_or(crate::jit::Stdin::Null, |s| {
                crate::jit::Stdin::Bytes(s.as_bytes().to_vec())
            }),
        }),
        (None, Some(v)) => {
            return Err(bad(format!(
                "'exec' must be a string of the program's arguments, found a {}",
                v.type_str()
            )))
        }
        (None, None) => None,
    };
    if exec.is_some() && text("function").is_some() {
        return Err(bad(
            "give 'function' (a function to call) or 'exec' (main run as a program), not both"
                .into(),
        ));
    }
    if exec.is_none() && t.contains_key("stdin") {
        return Err(bad(
            "'stdin' is a program's input: it needs exec = \"ARG ...\"".into(),
        ));
    }
    Ok((
        text("function").map(str::to_string),
        text("args").map_or(Vec::new(), |a| {
            a.split_whitespace().map(str::to_string).collect()
        }),
        crate::batch::strings_in(path, t, "buffers")?.unwrap_or_default(),
        exec,
    ))
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
    "exec",
    "stdin",
    "goal",
    "strategy",
    "trials",
    "seconds",
    "seed",
    "length",
    "pool",
    "orderings",
    "timeout",
    "features",
];

impl SweepSpec {
    /// Reads a spec:
    ///
    /// ```toml
    /// name = "zlib"
    /// corpus = ["zlib/*.c"]          # files or patterns (.c .cpp .ll .bc), or a
    ///                                # project's compile_commands.json (its units linked)
    /// scripts = ["build.plab"]       # each module a script leaves is a program
    /// cflags = ["-DNDEBUG"]
    /// goal = "instructions"          # or size, runtime, 0.5*size+0.5*runtime
    /// strategy = ["random", "hill"]  # or orderings = ["O2", "instcombine,gvn"]; default as :tune's
    ///                                # (local over pool "size" for instructions, else random)
    /// trials = 200                   # or seconds = 30 (per strategy)
    /// seed = 1
    /// length = [10, 40]
    /// pool = ["instcombine", "gvn"]  # default: :tune's pool; "size": the pool for code size
    /// features = true                # record CompilerGym's InstCount and Autophase per trial
    ///
    /// [[program]]                    # a program with a function to check
    /// path = "zlib/adler32.c"
    /// function = "adler32"
    /// args = "1 data 4096"
    /// buffers = ["data i8[4096] = random(1)"]
    ///
    /// [[program]]                    # or main run as a program, its output checked
    /// path = "bench/sort.c"
    /// exec = "1000 --quiet"          # its arguments, as a shell splits them
    /// stdin = "3 1 2"                # optional
    /// ```
    pub fn load(path: &Path) -> Result<SweepSpec> {
        let f = crate::batch::SpecFile::read(path, KEYS)?;
        let (dir, name) = (f.dir.clone(), f.name()?);
        let tune = tune_of(&f, path)?;
        let cflags = f.strings("cflags")?.unwrap_or_default();
        let mut programs = programs_of(&f, path)?;
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
            text: f.text.clone(),
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
                Strategy::Local => trials * (crate::tune::OZ_ORDERING.len() as u64 / 2 + 1),
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
        let names: Vec<&str> = self.programs.iter().map(|p| p.name.as_str()).collect();
        let h = crate::jit::fnv1a(self.text.bytes().chain(names.join("\n").bytes()));
        format!("{h:016x}")
    }

    /// The sweep as a batch job: what its shards' manifest records hold
    /// for the merge (the goal, the phases, the programs).
    pub fn job(&self) -> crate::batch::Job {
        crate::batch::Job {
            kind: "sweep",
            name: self.name.clone(),
            dir: self.dir.clone(),
            fingerprint: self.fingerprint(),
            manifest: self.manifest(),
        }
    }

    fn manifest(&self) -> Json {
        json!({
            "goal": self.tune.goal.describe(),
            "seed": self.tune.seed,
            "phases": std::iter::once(BASELINE.to_string())
                .chain(self.tune.strategies.iter().map(|s| s.name().to_string()))
                .collect::<Vec<_>>(),
            "programs": self.programs.iter().map(|p| json!({
                "name": p.name,
                "function": p.function,
                "exec": p.exec.as_ref().map(|e| e.shell_line(&p.name)),
            })).collect::<Vec<_>>(),
        })
    }
}

/// The search a sweep's file asks for: `:tune`'s settings as TOML keys
/// (goal, strategy or orderings, trials or seconds, seed, timeout, length,
/// features, pool), checked as `:tune` checks them.
fn tune_of(f: &crate::batch::SpecFile, path: &Path) -> Result<TuneSpec> {
    let t = &f.table;
    let strings = |key: &str| -> Result<Vec<String>> { Ok(f.strings(key)?.unwrap_or_default()) };
    let mut tune = TuneSpec::default();
    if let Some(g) = t.get("goal") {
        let g = g
            .as_str()
            .ok_or_else(|| bad(path, "'goal' must be a string"))?;
        tune.goal = Goal::parse(g)?;
    }
    let strategies = strings("strategy")?;
    let orderings = strings("orderings")?;
    if let Some(chosen) = strategies_of(path, &strategies, &orderings)? {
        tune.strategies = chosen;
    }
    numbers_of(path, t, &mut tune)?;
    match t.get("features") {
        None => {}
        Some(toml::Value::Boolean(b)) => tune.features = *b,
        Some(v) => {
            return Err(bad(
                path,
                format!("'features' must be true or false, found a {}", v.type_str()),
            ))
        }
    }
    let pool = strings("pool")?;
    if !pool.is_empty() {
        tune.pool = crate::tune::expand_pool(&pool);
    }
    tune.goal_defaults(
        !strategies.is_empty() || !orderings.is_empty(),
        !pool.is_empty(),
    );
    tune.validate()?;
    Ok(tune)
}

/// The strategies `strategy = [...]` names, or the one that tries the
/// orderings `orderings = [...]` lists (not both); none when neither.
fn strategies_of(
    path: &Path,
    strategies: &[String],
    orderings: &[String],
) -> Result<Option<Vec<Strategy>>> {
    match (strategies.is_empty(), orderings.is_empty()) {
        (false, false) => Err(bad(path, "give 'strategy' or 'orderings', not both")),
        (true, false) => Ok(Some(vec![Strategy::List(
            orderings
                .iter()
                .map(|o| {
                    crate::pipeline::split(o).map(|p| p.iter().map(|s| s.to_string()).collect())
                })
                .collect::<Result<_>>()?,
        )])),
        (false, true) => strategies
            .iter()
            .map(|s| {
                Strategy::parse(s).ok_or_else(|| {
                    bad(
                        path,
                        format!("unknown strategy '{s}' (random, greedy, hill, local)"),
                    )
                })
            })
            .collect::<Result<_>>()
            .map(Some),
        (true, true) => Ok(None),
    }
}

/// The search's numbers: trials or seconds, seed, timeout, length (their
/// ranges: `TuneSpec::validate`).
fn numbers_of(path: &Path, t: &toml::Table, tune: &mut TuneSpec) -> Result<()> {
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
    if let Some(n) = int("trials")? {
        // Out of range (0, negative, huge): validate() says the range.
        tune.budget = Budget::Trials(usize::try_from(n).unwrap_or(0));
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
        tune.trial_timeout = std::time::Duration::from_secs(u64::try_from(s).unwrap_or(0));
    }
    if let Some(l) = t.get("length") {
        let l: Vec<usize> = l
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_integer())
                    .map(|v| usize::try_from(v).unwrap_or(0))
                    .collect()
            })
            .unwrap_or_default();
        let [lo, hi] = l.as_slice() else {
            return Err(bad(path, "'length' must be [MIN, MAX], e.g. [10, 40]"));
        };
        tune.lengths = (*lo, *hi);
    }
    Ok(())
}

/// The programs a sweep's file names: the corpus's files, then
/// `[[program]]`s (one naming a corpus file gives it its check), then the
/// scripts' modules; each with the file's check unless its own.
fn programs_of(f: &crate::batch::SpecFile, path: &Path) -> Result<Vec<Program>> {
    let (t, dir) = (&f.table, &f.dir);
    let (function, args, buffers, exec) = check_of(path, t)?;
    let check = || {
        (
            function.clone(),
            args.clone(),
            buffers.clone(),
            exec.clone(),
        )
    };
    let mut programs = Vec::new();
    for pattern in f.strings("corpus")?.unwrap_or_default() {
        for file in f.files(&pattern)? {
            programs.push(file_program(dir, file, check())?);
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
            // A [[program]] gives a corpus file its function, or adds one.
            let p = file_program(dir, dir.join(file), check_of(path, p)?)?;
            programs.retain(|q: &Program| q.name != p.name);
            programs.push(p);
        }
    }
    for script in f.strings("scripts")?.unwrap_or_default() {
        let file = dir.join(&script);
        let mut s = script_session(&file)?;
        for (module, m) in s.modules_by_name() {
            let (function, args, buffers, exec) = check();
            programs.push(Program {
                name: format!("{script}:{module}"),
                origin: Origin::Script {
                    script: file.clone(),
                    module: module.clone(),
                },
                function,
                args,
                buffers,
                exec,
                weight: m.instruction_count(),
            });
        }
        s.clear_modules();
    }
    Ok(programs)
}

fn file_program(dir: &Path, file: PathBuf, check: CheckOf) -> Result<Program> {
    let (function, args, buffers, exec) = check;
    let bytes = std::fs::read(&file).map_err(|e| Error::io(file.display(), e))?;
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let size = match ext {
        "ll" => bytes.iter().filter(|&&b| b == b'\n').count() as u64,
        "bc" => bytes.len() as u64 / 20,
        // A project: about a file's worth of statements per unit.
        "json" => bytes.windows(7).filter(|w| w == b"\"file\"").count() as u64 * 500,
        _ => bytes.iter().filter(|&&b| b == b';').count() as u64,
    };
    let name = crate::batch::program_name(dir, &file);
    Ok(Program {
        name,
        origin: Origin::File(file),
        function,
        args,
        buffers,
        exec,
        weight: size + 20,
    })
}

/// A session that ran `script` (relative inputs found beside it).
pub(super) fn script_session(script: &Path) -> Result<Session> {
    let text = std::fs::read_to_string(script).map_err(|e| Error::io(script.display(), e))?;
    let mut s = Session::new();
    if let Some(dir) = script.parent().filter(|d| !d.as_os_str().is_empty()) {
        s.add_input_folder(dir.to_path_buf());
    }
    s.set_origin(script.display().to_string(), 1);
    s.execute(&text).map_err(|e| bad(script, e.to_string()))?;
    Ok(s)
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
            exec: None,
            weight,
        }
    }

    #[test]
    fn a_program_is_checked_by_running_its_main() {
        let dir = std::env::temp_dir().join(format!("passlab-spec-exec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("p.c"), "int main(void) { return 0; }").unwrap();
        let load = |text: &str| {
            std::fs::write(dir.join("s.toml"), text).unwrap();
            SweepSpec::load(&dir.join("s.toml"))
        };
        let s =
            load("corpus = [\"p.c\"]\nexec = \"10 'a b'\"\nstdin = \"x\"\ntrials = 1\n").unwrap();
        let exec = s.programs[0].exec.clone().unwrap();
        assert_eq!(exec.args, ["10", "a b"]);
        assert_eq!(exec.stdin, crate::jit::Stdin::Bytes(b"x".to_vec()));
        assert!(s.manifest()["programs"][0]["exec"]
            .as_str()
            .unwrap()
            .ends_with("10 'a b' < (1 bytes)"));
        for (text, says) in [
            (
                "corpus = [\"p.c\"]\nexec = \"1\"\nfunction = \"main\"\n",
                "not both",
            ),
            ("corpus = [\"p.c\"]\nstdin = \"x\"\n", "it needs exec"),
            ("corpus = [\"p.c\"]\nexec = 3\n", "must be a string"),
            (
                "corpus = [\"p.c\"]\nexec = \"'open\"\n",
                "unbalanced quotes",
            ),
        ] {
            let e = load(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
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
}
