//! `passlab coreset FILE... --out CORESET`: orderings learned once over a
//! corpus (see `passlab::tune::coreset`), written as a file that `:tune
//! strategy=coreset coreset=CORESET` tries on new programs.

use passlab::tune::coreset::{self, MakeSpec};
use std::path::{Path, PathBuf};

/// What `passlab coreset` takes.
#[derive(clap::Args)]
pub struct Make {
    /// The training corpus: C or C++ files, bitcode or IR, each a program.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Where the coreset goes.
    #[arg(long)]
    out: PathBuf,
    /// A flag for clang, for every file (repeat: --cflag=-Idir --cflag=-DX).
    #[arg(long = "cflag", allow_hyphen_values = true)]
    cflags: Vec<String>,
    /// clang's hand-over: the level the files are compiled at, with LLVM's
    /// passes off (O1: CompilerGym's cBench-v1 and the leaderboard's).
    #[arg(long, default_value = "O1")]
    level: String,
    /// The most orderings kept (at most 50).
    #[arg(long, default_value_t = coreset::MAX_SIZE)]
    size: usize,
    /// Local search's trials per program (the candidates).
    #[arg(long, default_value_t = 100)]
    trials: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(a: Make) -> anyhow::Result<()> {
    let level = passlab::module::Level::parse(&a.level)?;
    let mut modules = Vec::new();
    for f in &a.files {
        let src = passlab::Source::file(f)?
            .clang_args(a.cflags.iter().cloned())
            .level(level);
        modules.push((name(f), passlab::Module::load(&[src])?));
    }
    let programs: Vec<(String, &passlab::Module)> =
        modules.iter().map(|(n, m)| (n.clone(), m)).collect();
    let spec = MakeSpec {
        size: a.size,
        trials: a.trials,
        seed: a.seed,
        ..MakeSpec::default()
    };
    let made = coreset::make(&programs, &spec, &mut |line| eprintln!("coreset: {line}"))?;
    let mut c = made.coreset;
    c.notes = vec![
        format!(
            "A coreset of {} orderings ({} candidates), made by passlab {}:",
            c.orderings.len(),
            made.candidates.len(),
            env!("CARGO_PKG_VERSION")
        ),
        format!(
            "  passlab coreset --level {} --size {} --trials {} --seed {}{} {}",
            a.level,
            a.size,
            a.trials,
            a.seed,
            a.cflags
                .iter()
                .map(|c| format!(" --cflag={c}"))
                .collect::<String>(),
            programs
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "Each program's count under each chosen ordering, in order (-Oz's pipeline first):"
            .to_string(),
    ];
    for (p, (n, _)) in programs.iter().enumerate() {
        let row: Vec<String> = made
            .chosen
            .iter()
            .map(|&j| made.counts[p][j].map_or("-".to_string(), |c| c.to_string()))
            .collect();
        c.notes.push(format!("  {n}: {}", row.join(" ")));
    }
    c.notes.push(
        "One action per line, a blank line between orderings; :tune strategy=coreset coreset=THIS-FILE tries them."
            .to_string(),
    );
    std::fs::write(&a.out, c.to_text())?;
    eprintln!(
        "coreset: {} orderings written to {}",
        c.orderings.len(),
        a.out.display()
    );
    Ok(())
}

/// A file's name as the coreset's notes show it: its last two components.
fn name(f: &Path) -> String {
    let parts: Vec<String> = f
        .components()
        .rev()
        .take(2)
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}
