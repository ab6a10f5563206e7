//! Orderings learned once (`passlab::tune::coreset`): a coreset made again
//! from the same tiny corpus with the same seed holds the same orderings;
//! the best of a coreset's orderings on a program replays in opt-19 to the
//! count the evaluation reported; a budget of 1 s stops a program's
//! coreset evaluation.

mod common;

use passlab::module::Level;
use passlab::tune::coreset::{self, Coreset, MakeSpec};
use passlab::tune::{tune, OZ_ORDERING};
use passlab::Module;
use std::time::Instant;

fn o1(set: &str, file: &str) -> Module {
    let src = match set {
        "zlib" => common::inputs::zlib_source(file),
        _ => common::inputs::lua_source(file),
    };
    Module::load(&[src.level(Level::O1)]).unwrap()
}

#[test]
fn a_coreset_made_again_from_a_tiny_corpus_gives_the_same_orderings() {
    let a = o1("zlib", "adler32.c");
    let b = o1("zlib", "compress.c");
    let programs = vec![
        ("adler32.c".to_string(), &a),
        ("compress.c".to_string(), &b),
    ];
    let spec = MakeSpec {
        trials: 12,
        seed: 5,
        ..MakeSpec::default()
    };
    let first = coreset::make(&programs, &spec, &mut |_| {}).unwrap();
    let again = coreset::make(&programs, &spec, &mut |_| {}).unwrap();
    assert_eq!(first.coreset.orderings, again.coreset.orderings);
    assert_eq!(first.candidates, again.candidates);
    // -Oz's own pipeline first, then what covers the corpus.
    let oz: Vec<String> = OZ_ORDERING.iter().map(|s| s.to_string()).collect();
    assert_eq!(first.coreset.orderings[0], oz);
    assert!(first.coreset.orderings.len() <= coreset::MAX_SIZE);
    // Every program is within `near` of its best candidate under one.
    for counts in &first.counts {
        let best = counts.iter().flatten().min().unwrap();
        let under = first
            .chosen
            .iter()
            .filter_map(|&j| counts[j])
            .min()
            .unwrap();
        assert!(
            under as f64 <= *best as f64 * (1.0 + spec.near),
            "{under} vs {best}"
        );
    }
    // The file's text reads back the same.
    assert_eq!(
        Coreset::parse(&first.coreset.to_text()).unwrap().orderings,
        first.coreset.orderings
    );
}

#[test]
fn the_best_of_the_shipped_coreset_replays_in_opt19() {
    let c = Coreset::shipped();
    let m = o1("zlib", "inftrees.c");
    let t = tune(&m, None, &coreset::spec(&c, 60.0), &[], &mut |_, _| {}).unwrap();
    assert_eq!(t.searched().count(), c.orderings.len());
    let best = t.best(1)[0];
    let dir = std::env::temp_dir().join(format!("passlab-coreset-opt19-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("input.bc");
    m.copy().save(&input).unwrap();
    let made = Module::from_file(common::opt19::chain(&input, &best.ordering, &dir)).unwrap();
    assert_eq!(Some(made.instruction_count()), best.instructions);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_second_stops_a_programs_coreset_evaluation() {
    // Lua's lvm.c: about a second per ordering; 20 of them cannot all run.
    let oz: Vec<String> = OZ_ORDERING.iter().map(|s| s.to_string()).collect();
    let c = Coreset {
        orderings: vec![oz; 20],
        notes: Vec::new(),
    };
    let m = o1("lua", "lvm.c");
    let start = Instant::now();
    let t = tune(
        &m,
        None,
        &coreset::spec(&c, coreset::DEFAULT_SECONDS),
        &[],
        &mut |_, _| {},
    )
    .unwrap();
    let wall = start.elapsed().as_secs_f64();
    // The budget, plus what comes before the search's clock starts (the
    // evaluating child, the input's baseline) and the stop: a second, as
    // tests/tune.rs allows; twenty orderings of about a second each would
    // take twenty. (Measured with six busy loops beside it on 2 cores:
    // 1.23 to 1.36 s; idle 1.07 s.)
    assert!(wall < coreset::DEFAULT_SECONDS + 1.0, "{wall:.2} s");
    assert!(t.searched().count() < 20, "{} trials", t.searched().count());
}
