//! Passes written in Rust at run time (`:rust`, `:register`), measured.
//!
//! `bash scripts/passlab.sh bench rust` prints:
//! 1. the first `:rust` cell of a new session (the Rust worker starts:
//!    evcxr, passlab as a dependency, the pass service), with the set-up
//!    done (target ≤ 8 s), and a later cell that redefines a pass plus its
//!    registration (target ≤ 1 s), medians of several;
//! 2. a strength-reduction function pass run over zlib's adler32.c as a
//!    user pass (in evcxr's child, the module sent as bitcode and back) and
//!    the same Rust function built into this program as a `FunctionPass`,
//!    side by side: the difference is what running it as a user pass costs
//!    (target ≤ 1 ms per run);
//! 3. the same on sqlite3 (the overhead grows with the module: it is
//!    written out and read back twice).
//!
//! The kernel's start and first reply do not change (the kernel starts the
//! worker only on the first `:rust`): `bash scripts/passlab.sh bench kernel`.
//!
//! Rounds: `PASSLAB_BENCH_ROUNDS` (default 5). Smoke mode
//! (`PASSLAB_BENCH_SMOKE=1`, benches/common): one later cell, two runs of
//! each pass on adler32.c, and adler32.c again in sqlite3's place; the
//! worker is the one `PASSLAB_EVCXR` names (the smoke run: the test
//! profile's, in the test command's warmed build folders).

mod common;
#[path = "../tests/common/inputs.rs"]
mod inputs;

use common::{large_input, median, rounds, scaled, wanted};
use passlab::prelude::*;
use passlab::session::Session;
use std::time::{Duration, Instant};

/// Compiles the items and keeps their text: the pass built into this
/// program and the cell that defines it in the Rust worker are one source.
macro_rules! with_source {
    ($($item:tt)*) => {
        $($item)*
        const SOURCE: &str = stringify!($($item)*);
    };
}

with_source! {
    /// Replaces `x * 2^k` by `x << k`.
    fn strength_reduce(f: FunctionValue<'_>, _ctx: &PassContext) -> Result<()> {
        for inst in instructions(f) {
            if inst.get_opcode() != InstructionOpcode::Mul {
                continue;
            }
            let (Some(x), Some(c)) = (int_operand(inst, 0), int_operand(inst, 1)) else {
                continue;
            };
            let Some(k) = int_constant(c).filter(|c| c.is_power_of_two()).map(u64::trailing_zeros) else {
                continue;
            };
            let shl = builder_before(inst).build_left_shift(x, x.get_type().const_int(k.into(), false), "")?;
            replace_int(inst, shl);
        }
        Ok(())
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn cells(session: &mut Session) {
    let start = Instant::now();
    session
        .execute(&format!(":rust\nuse passlab::prelude::*;\n{SOURCE}"))
        .expect("first cell");
    let first = start.elapsed();
    session
        .execute(":register function_pass strength-reduce = strength_reduce opt_level=2")
        .expect("register");
    let mut later = Vec::new();
    for i in 0..rounds() {
        // A redefinition (the body changes, so evcxr compiles it again)
        // and its registration, as a user editing a cell does.
        let cell = format!(
            ":rust\n{}",
            SOURCE.replacen('{', &format!("{{ let _round = {i};"), 1)
        );
        let t = Instant::now();
        session.execute(&cell).expect("redefinition");
        session
            .execute(":register function_pass strength-reduce = strength_reduce opt_level=2")
            .expect("register again");
        later.push(t.elapsed());
    }
    println!("Rust cells (the set-up has warmed evcxr's build folder):");
    println!(
        "  first :rust cell of a session (the worker starts): {:.2} s   (target <= 8 s)",
        first.as_secs_f64()
    );
    println!(
        "  a later cell redefining the pass + :register: median {:.2} s of {} (min {:.2}, max {:.2})   (target <= 1 s)",
        median(later.clone()).as_secs_f64(),
        later.len(),
        later.iter().min().unwrap().as_secs_f64(),
        later.iter().max().unwrap().as_secs_f64()
    );
}

/// Runs the user pass and the built-in one alternately on fresh copies of
/// `m`, `n` times each per round; prints medians per run.
fn per_run(what: &str, m: &Module, n: usize, target: Option<f64>) {
    let user = passlab::registry::get_pass("strength-reduce").expect("registered");
    let builtin = FunctionPass::new(PassInfo::new("strength-reduce-builtin", 2), strength_reduce);
    let builtin: &dyn Pass = &builtin;
    let (mut u, mut b) = (Vec::new(), Vec::new());
    for _ in 0..rounds() {
        for _ in 0..n {
            let mut c = m.copy();
            let t = Instant::now();
            user.apply(&mut c).expect("user pass");
            u.push(t.elapsed());
            let mut c = m.copy();
            let t = Instant::now();
            builtin.apply(&mut c).expect("built-in pass");
            b.push(t.elapsed());
        }
    }
    let (u, b) = (median(u), median(b));
    let overhead = ms(u) - ms(b);
    println!(
        "  {what}: user pass {:.3} ms, the same pass built in {:.3} ms per run (medians of {}): overhead {overhead:.3} ms ({:.2}x){}",
        ms(u),
        ms(b),
        rounds() * n,
        ms(u) / ms(b),
        target.map(|t| format!("   (target <= {t} ms)")).unwrap_or_default()
    );
}

fn main() {
    if !(wanted("rust") || wanted("cells") || wanted("runs")) {
        return;
    }
    let mut session = Session::new();
    cells(&mut session);
    println!("Running the user pass vs the same pass built in (each run on a fresh copy, apply included):");
    let adler = Module::load(&[inputs::zlib_source("adler32.c")]).expect("adler32.c");
    per_run(
        &format!(
            "zlib adler32.c ({} instructions)",
            adler.instruction_count()
        ),
        &adler,
        scaled(200, 2),
        Some(1.0),
    );
    let (name, source) = large_input();
    let large = Module::from_file(&source).unwrap_or_else(|e| panic!("{name}: {e}"));
    per_run(
        &format!("{name} ({} instructions)", large.instruction_count()),
        &large,
        1,
        None,
    );
}
