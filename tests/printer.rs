//! The function printer that print-changed and explore use assembles a
//! changed function's text from the blocks it printed before and the blocks
//! that changed. Here every assembled text is compared with a whole print
//! (`PASSLAB_PRINTER_CHECK`) over real C through whole pipelines.

mod common;

use passlab::instrument::{printer_stats, Explore, PassFilter, PrintChanged};
use passlab::{pipeline, Module, PassContext};
use std::rc::Rc;

#[test]
fn assembled_function_texts_equal_whole_prints() {
    // Read when a printer is made; this test is alone in its process.
    std::env::set_var("PASSLAB_PRINTER_CHECK", "1");
    let stencil = r#"
        void smooth(float *a, float *b, int n, int steps) {
          for (int t = 0; t < steps; t++) {
            for (int i = 1; i < n - 1; i++)
              b[i] = (a[i - 1] + a[i] + a[i + 1]) * (1.0f / 3);
            float *tmp = a; a = b; b = tmp;
          }
        }
        int classify(int x) {
          switch (x) { case 0: return 4; case 1: return 9; case 7: return x * 3; default: return x; }
        }
    "#;
    let mut modules = vec![Module::from_c(stencil, "stencil").unwrap()];
    for file in ["deflate.c", "inflate.c", "trees.c"] {
        modules.push(Module::load(&[common::inputs::zlib_source(file)]).unwrap());
    }
    for pipeline_text in ["default<O2>", "default<O3>"] {
        let p = pipeline::parse(pipeline_text).unwrap();
        for m in &modules {
            let mut m = m.copy();
            let changed = Rc::new(PrintChanged::new(PassFilter::all()));
            let explore = Rc::new(Explore::new());
            {
                let _g = PassContext::inherit()
                    .with_instrument(changed.clone())
                    .with_instrument(explore.clone())
                    .enter()
                    .unwrap();
                p.apply(&mut m).unwrap();
            }
            let rec = explore.take();
            assert!(rec.totals().1 > 0, "{pipeline_text} changed nothing");
            assert!(!changed.output().is_empty());
        }
    }
    let s = printer_stats();
    assert_eq!(s.mismatches, 0, "{s:?}");
    // Most texts were assembled, not printed whole.
    assert!(s.assembled > s.whole, "{s:?}");
    assert!(s.blocks > 0, "{s:?}");
    eprintln!("{s:?}");
}
