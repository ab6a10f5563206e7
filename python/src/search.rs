//! `passlab.search.tune`: the ordering search `:tune` runs, for an
//! instruction count, from Python (one call, one search; Ray runs many).

use crate::module_type::PyModule_;
use crate::run_core;
use passlab::tune::{self, Budget, Strategy, TuneSpec, Verdict};
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn verdict(v: &Verdict) -> (String, Option<String>) {
    match v {
        Verdict::Same => ("same".into(), None),
        Verdict::Unchecked => ("unchecked".into(), None),
        Verdict::Different(why) => ("different".into(), Some(why.clone())),
        Verdict::Failed(why) => ("failed".into(), Some(why.clone())),
    }
}

fn invalid(message: String) -> PyErr {
    crate::errors::to_py(passlab::Error::Invalid(message))
}

/// Searches orderings that make `module` smallest in instructions, as
/// `:tune` does naming only that goal: with neither `strategy` nor `pool`,
/// local search from -Oz's own pipeline over the `size` pool; `trials`
/// (a count, which repeats with the seed) or `seconds` per strategy.
/// Returns `{"trials": [...], "best": {...} | None, "baselines": {...}}`,
/// each trial a dict (phase, index, ordering, instructions, verdict, why,
/// compile_s).
#[pyfunction]
#[pyo3(signature = (module, trials=None, seconds=None, strategy=None, pool=None, seed=0, levels=true, coreset=None, warm=None))]
#[expect(clippy::too_many_arguments, reason = "Python's keyword arguments")]
pub fn tune_instructions<'py>(
    py: Python<'py>,
    module: &Bound<'py, PyModule_>,
    trials: Option<usize>,
    seconds: Option<f64>,
    strategy: Option<Vec<String>>,
    pool: Option<Vec<String>>,
    seed: u64,
    levels: bool,
    coreset: Option<String>,
    warm: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let budget = match (trials, seconds) {
        (Some(_), Some(_)) => return Err(invalid("give trials or seconds, not both".into())),
        (Some(0), None) => return Err(invalid("trials must be at least 1".into())),
        (Some(n), None) => Budget::Trials(n),
        (None, Some(s)) if s.is_finite() && s > 0.0 => Budget::Seconds(s),
        (None, Some(s)) => {
            return Err(invalid(format!(
                "seconds must be a positive number; got {s}"
            )))
        }
        (None, None) => Budget::Trials(100),
    };
    let mut spec = TuneSpec {
        budget,
        seed,
        levels,
        ..TuneSpec::default()
    };
    let strategy_given = strategy.is_some();
    if let Some(names) = strategy {
        spec.strategies = names
            .iter()
            .map(|n| {
                Strategy::parse(n)
                    .or_else(|| tune::coreset::placeholder(n))
                    .ok_or_else(|| {
                        invalid(format!(
                        "unknown strategy '{n}'; valid are: random, greedy, hill, local, coreset"
                    ))
                    })
            })
            .collect::<PyResult<_>>()?;
    }
    let pool_given = pool.is_some();
    if let Some(pool) = pool {
        spec.pool = tune::expand_pool(&pool);
    }
    spec.goal_defaults(strategy_given, pool_given);
    tune::coreset::settle(
        &mut spec,
        coreset.as_deref(),
        warm.as_deref(),
        trials.is_some() || seconds.is_some(),
    )
    .map_err(crate::errors::to_py)?;
    let m = crate::module_type::read(module)?;
    let core = m.get()?;
    let tuning = run_core(py, || tune::tune(core, None, &spec, &[], &mut |_, _| {}))?;
    let trial = |t: &tune::Trial| -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let (v, why) = verdict(&t.verdict);
        d.set_item("phase", &t.phase)?;
        d.set_item("index", t.index)?;
        d.set_item("ordering", &t.ordering)?;
        d.set_item("instructions", t.instructions)?;
        d.set_item("verdict", v)?;
        d.set_item("why", why)?;
        d.set_item("compile_s", t.compile_s)?;
        Ok(d)
    };
    let out = PyDict::new(py);
    out.set_item(
        "trials",
        tuning.searched().map(trial).collect::<PyResult<Vec<_>>>()?,
    )?;
    out.set_item(
        "best",
        tuning.best(1).first().map(|t| trial(t)).transpose()?,
    )?;
    let baselines = PyDict::new(py);
    for (label, _) in tune::BASELINES {
        if let Some(t) = tuning.baseline(label) {
            baselines.set_item(label, t.instructions)?;
        }
    }
    out.set_item("baselines", baselines)?;
    out.set_item("seed", seed)?;
    out.set_item("elapsed_s", tuning.elapsed.as_secs_f64())?;
    Ok(out)
}
