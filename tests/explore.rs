//! The explore instrument on real runs: every pass recorded with its
//! nesting, each function's versions replaying to the IR as it ends.

use passlab::instrument::Explore;
use passlab::{pipeline, Module, PassContext};
use std::rc::Rc;

#[test]
fn records_every_pass_and_each_functions_versions() {
    // sq is internal and not noinline (clang's -O0 would mark it so):
    // the inliner inlines it and deletes it.
    let ir = "define internal i32 @sq(i32 %x) {\n  %m = mul i32 %x, %x\n  ret i32 %m\n}\n\
              define i32 @f(i32 %a) {\nentry:\n  %s = alloca i32\n  store i32 0, ptr %s\n  br label %loop\n\
              loop:\n  %i = phi i32 [ 0, %entry ], [ %n, %loop ]\n  %q = call i32 @sq(i32 %i)\n\
              %v = load i32, ptr %s\n  %w = add i32 %v, %q\n  store i32 %w, ptr %s\n\
              %n = add i32 %i, 1\n  %c = icmp slt i32 %n, %a\n  br i1 %c, label %loop, label %done\n\
              done:\n  %r = load i32, ptr %s\n  ret i32 %r\n}\n\
              define i32 @g(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n";
    let mut m = Module::from_ir(ir, "t.ll").unwrap();
    let start = m.print_function("f").unwrap();
    let explore = Rc::new(Explore::new());
    {
        let _g = PassContext::inherit()
            .with_instrument(explore.clone())
            .enter()
            .unwrap();
        pipeline::parse("default<O2>")
            .unwrap()
            .apply(&mut m)
            .unwrap();
    }
    let r = explore.recording();
    assert!(r.passes.len() > 50, "{}", r.passes.len());
    assert_eq!(r.passes[0].depth, 0);
    assert!(r.passes.iter().skip(1).all(|p| p.parent.is_some()));
    let f = r.function("f").unwrap();
    let log = &r.functions[f];
    assert!(log.versions.len() >= 3);
    // Replaying the edits gives the function as it is now.
    assert_eq!(log.initial, start);
    assert_eq!(
        log.text_at(log.versions.len()),
        m.print_function("f").unwrap()
    );
    let now = m.stats();
    let f_now = now.per_function.iter().find(|s| s.name == "f").unwrap();
    assert_eq!(log.instructions_after, f_now.instructions);
    assert_eq!(log.instructions_before, 13);
    // sq was inlined everywhere and deleted.
    let sq = &r.functions[r.function("sq").unwrap()];
    assert!(sq.versions.last().unwrap().deleted);
    assert_eq!(sq.instructions_after, 0);
    // The passes on f include function passes on f and the module
    // passes above them; each pass that changed f is among them.
    let on_f = r.passes_on(f);
    for v in &log.versions {
        assert!(on_f.contains(&(v.pass as usize)));
    }
    let (ran, changed) = r.counts(f);
    assert!(ran > changed && changed == log.versions.len());
}

/// A recorded `default<O3>` run on a loop and a function without one.
fn recorded_o3() -> passlab::instrument::Recording {
    let src = "int sum(int *a, int n) {\n  int s = 0;\n  for (int i = 0; i < n; i++)\n    s += a[i] * 3;\n  return s;\n}\n\
               int twice(int x) { return x + x; }\n";
    let mut m = Module::from_c(src, "s.c").unwrap();
    let explore = Rc::new(Explore::new());
    {
        let _g = PassContext::inherit()
            .with_instrument(explore.clone())
            .enter()
            .unwrap();
        pipeline::parse("default<O3>")
            .unwrap()
            .apply(&mut m)
            .unwrap();
    }
    let mut r = explore.take();
    r.module = "s".into();
    r
}

#[test]
fn the_pass_search_keeps_numbers_and_names_near_passes_when_nothing_matches() {
    use passlab::explore::{self, PassSearch};
    let r = recorded_o3();
    let f = r.function("sum").unwrap();
    let search = |pattern: &str, changed_only| PassSearch {
        pattern: pattern.into(),
        changed_only,
    };
    let all = explore::pass_list(&r, f);
    let total = all.lines().count() - 1;
    // A substring, ignoring case: every pass listed holds it, numbered as
    // in the whole list (so that `:explore sum N` shows its diff).
    let licm = explore::pass_list_searched(&r, f, &search("LICM", false)).unwrap();
    let mut lines = licm.lines().skip(1);
    let head = lines.next().unwrap();
    let kept: Vec<&str> = lines.collect();
    assert!(!kept.is_empty());
    assert_eq!(
        head,
        format!("passes matching 'LICM': {} of {total}", kept.len())
    );
    for line in &kept {
        assert!(line.contains("licm"), "{licm}");
        assert!(all.lines().any(|l| l == *line), "{line} is not in\n{all}");
    }
    // The loop a pass ran on matches too.
    let on_loop = explore::pass_list_searched(&r, f, &search("for.body", false)).unwrap();
    assert!(
        on_loop.lines().skip(2).all(|l| l.contains("[loop ")),
        "{on_loop}"
    );
    // A glob over the whole name, and only the passes that changed it.
    let globbed = explore::pass_list_searched(&r, f, &search("loop-*", true)).unwrap();
    let kept: Vec<&str> = globbed.lines().skip(2).collect();
    assert!(
        kept.iter().any(|l| l.contains("loop-vectorize")),
        "{globbed}"
    );
    for line in &kept {
        assert!(line.contains(" loop-") && line.contains(" * "), "{globbed}");
    }
    // Changed only, with no pattern: as many as changed the function.
    let changed = explore::pass_list_searched(&r, f, &search("", true)).unwrap();
    assert_eq!(
        changed.lines().count() - 2,
        r.functions[f].versions.len(),
        "{changed}"
    );
    // Nothing matching: the passes that ran whose names are nearest.
    let e = explore::pass_list_searched(&r, f, &search("licmm", false))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no pass matching 'licmm' ran on sum") && e.contains("'licm'"),
        "{e}"
    );
    let e = explore::pass_list_searched(&r, f, &search("vectorise", false))
        .unwrap_err()
        .to_string();
    assert!(e.contains("loop-vectorize"), "{e}");
    // Passes that ran but changed nothing.
    let e = explore::pass_list_searched(&r, f, &search("licm", true))
        .unwrap_err()
        .to_string();
    assert!(e.contains("none of them changed it"), "{e}");
    assert!(explore::pass_list_searched(&r, f, &search("[ab", false)).is_err());
    // Over the whole run: pass executions numbered in the order they ran.
    let run = explore::text_searched(&r, None, None, &search("instcombine", true)).unwrap();
    let first = run.lines().nth(1).unwrap();
    let n: usize = first.split_whitespace().next().unwrap().parse().unwrap();
    assert_eq!(&*r.passes[n - 1].name, "instcombine");
    assert!(r.passes[n - 1].changed && first.contains(" * "), "{run}");
}

#[test]
fn the_page_carries_the_pass_search() {
    use passlab::explore::{self, PassSearch};
    let r = recorded_o3();
    let search = PassSearch {
        pattern: "licm".into(),
        changed_only: true,
    };
    let (page, _) = explore::html(
        &r,
        r.function("sum").map(|f| (f, None)),
        &search,
        true,
        1 << 24,
    );
    // The controls: the search box, its count, keyboard handling.
    for needle in [
        "plab-x-psearch",
        "search passes",
        "plab-x-count",
        "ArrowDown",
        "Escape",
        "of ${list.length} passes",
        "keepSelection",
        "nearestNames",
    ] {
        assert!(page.contains(needle), "the page lacks {needle}");
    }
    // The search itself is in the page's (compressed) metadata.
    let start = page.find("{\"meta\":\"").unwrap() + 9;
    let meta = &page[start..start + page[start..].find('"').unwrap()];
    use base64::Engine;
    let gz = base64::engine::general_purpose::STANDARD
        .decode(meta)
        .unwrap();
    let mut json = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut json).unwrap();
    assert!(
        json.contains("\"search\":[\"licm\",true]"),
        "{}",
        &json[..200]
    );
}
