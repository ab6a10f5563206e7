//! An interrupt stops a search and keeps the best found so far. Alone in
//! its test binary: an interrupt request is process-wide and would stop the
//! other tests' searches.

mod common;

use passlab::tune::{tune, Budget, Strategy, TuneSpec};
use passlab::Module;

fn spec(trials: usize) -> TuneSpec {
    TuneSpec {
        strategies: vec![Strategy::Random],
        budget: Budget::Trials(trials),
        seed: 1,
        ..TuneSpec::default()
    }
}

#[test]
fn an_interrupt_keeps_the_best_found_so_far() {
    let m = Module::load(&[common::inputs::zlib_source("adler32.c")]).unwrap();
    let s = spec(1000);
    let mut searched = 0;
    let t = tune(&m, None, &s, &[], &mut |t, _| {
        if t.phase != "baseline" {
            searched += 1;
            if searched == 10 {
                passlab::interrupt::request();
            }
        }
    })
    .unwrap();
    passlab::interrupt::clear();
    assert!(t.interrupted);
    let n = t.searched().count();
    assert!((10..=12).contains(&n), "{n} trials");
    assert!(!t.best(1).is_empty());
    assert!(t
        .table(3)
        .to_text()
        .contains(&format!("interrupted after {n} trials")));
    // The same seed, uninterrupted, makes the same first trials.
    let whole = tune(&m, None, &spec(10), &[], &mut |_, _| {}).unwrap();
    assert_eq!(common::outcome(&whole)[..14], common::outcome(&t)[..14]);
}
