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

/// IR text with its metadata numbers left out (`!dbg !`).
fn numbers(t: &str) -> String {
    let mut out = String::new();
    let mut digits = false;
    for c in t.chars() {
        if !(digits && c.is_ascii_digit()) {
            out.push(c);
        }
        digits = c == '!' || (digits && c.is_ascii_digit());
    }
    out
}

/// A C function whose lines are known: line 2 the loop, 3 the sum, 4 the
/// return (and line 1 the helper inlined into it).
const LINES_C: &str = "static int sq(int x) { return x * x; }\n\
                       int sum_sq(int *a, int n) { int s = 0; for (int i = 0; i < n; i++)\n\
                       \x20 s += sq(a[i]);\n\
                       \x20 return s; }\n";

#[test]
fn show_ends_instruction_lines_with_their_source_lines_with_g_only() {
    use passlab::module::Source;
    use passlab::session::Session;
    // With -g: each instruction line that has a location says its line.
    let src = Source::text(passlab::Lang::C, LINES_C, "lines.c").clang_args(["-g"]);
    let mut m = Module::load(&[src]).unwrap();
    pipeline::parse("default<O2>")
        .unwrap()
        .apply(&mut m)
        .unwrap();
    let (text, of) = m.print_function_with_lines("sum_sq").unwrap();
    let said = |needle: &str| -> Vec<u32> {
        text.lines()
            .filter(|l| l.contains(needle))
            .filter_map(|l| l.rsplit_once(" ; line ")?.1.parse().ok())
            .collect()
    };
    assert_eq!(said("mul nsw i32"), [1], "{text}"); // sq, inlined: its own line
    assert!(said("load i32").iter().all(|&l| l == 3), "{text}");
    assert_eq!(said("ret i32"), [4], "{text}");
    assert!(said("icmp").iter().all(|&l| l == 2), "{text}");
    assert_eq!(
        of.iter().flatten().count(),
        text.lines().filter(|l| l.contains(" ; line ")).count()
    );
    // Records, labels and the signature get no comment.
    for l in text
        .lines()
        .filter(|l| l.contains("#dbg_") || l.starts_with("define"))
    {
        assert!(!l.contains(" ; line "), "{l}");
    }
    // Still IR: parsed back, it prints as the module did.
    let (whole, _) = m.print_with_lines();
    assert!(whole.contains(" ; line 3\n"));
    let back = Module::from_ir(&whole, "back.ll").unwrap();
    let plain = Module::from_ir(&m.print(), "back.ll").unwrap();
    assert_eq!(back.print(), plain.print());
    // The session's :show says the same, and colours IR and source in HTML.
    let mut s = Session::new();
    let folder = std::env::temp_dir().join(format!("plab-lines-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("lines.c");
    std::fs::write(&file, LINES_C).unwrap();
    s.execute(&format!(":load {} cflags=-g\n:run O2", file.display()))
        .unwrap();
    let out = s.execute(":show sum_sq").unwrap();
    assert_eq!(numbers(&out.text()), numbers(&text));
    let html = match &out.items[0] {
        passlab::session::Item::Display(b) => b.get("text/html").unwrap().to_string(),
        other => panic!("{other:?}"),
    };
    assert!(
        html.contains("plab-irsrc") && html.contains("data-s=\"0-3\""),
        "{html}"
    );
    assert!(html.contains("s += sq(a[i]);"), "the source pane: {html}");
    // Without -g: exactly what it printed before, text and HTML.
    s.execute(&format!(":load {} as plain", file.display()))
        .unwrap();
    let plain = s.execute(":show").unwrap();
    let p = Module::from_c(LINES_C, "lines.c").unwrap();
    assert_eq!(p.print_with_lines().0, p.print());
    assert!(!plain.text().contains(" ; line "));
    match &plain.items[0] {
        passlab::session::Item::Display(b) => {
            let want = passlab::session::Bundle::code(
                b.plain().to_string(),
                passlab::session::Code::Ir,
                true,
            );
            assert_eq!(b, &want);
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn the_explorers_diffs_carry_source_lines_with_g() {
    use passlab::module::Source;
    let src = Source::text(passlab::Lang::C, LINES_C, "lines.c").clang_args(["-g"]);
    let mut m = Module::load(&[src]).unwrap();
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
    let r = explore.take();
    let f = r.function("sum_sq").unwrap();
    let log = &r.functions[f];
    // Every version says its lines; the last is :show's text.
    assert!(log.initial.contains(" ; line 3\n"), "{}", log.initial);
    // (The recording numbers metadata as it prints: the numbers aside.)
    assert_eq!(
        numbers(&log.text_at(log.versions.len())),
        numbers(&m.print_function_with_lines("sum_sq").unwrap().0)
    );
    // sroa's diff: the loads and stores it removes were on lines 2-4.
    let list = passlab::explore::pass_list(&r, f);
    let n: usize = list
        .lines()
        .find(|l| l.contains("sroa") && l.contains('*'))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap();
    let (_, diff) = passlab::explore::pass_diff(&r, f, n).unwrap();
    assert!(
        diff.lines()
            .any(|l| l.starts_with("-  store i32 ") && l.ends_with(" ; line 2")),
        "{diff}"
    );
    // The page colours them: its style has the palette, its script the rule.
    let (page, _) =
        passlab::explore::html(&r, Some((f, Some(n))), &Default::default(), true, 1 << 24);
    assert!(page.contains("td.plab-x-ln.plab-x-s0{box-shadow:inset 8px 0 0 #fde2e4"));
    assert!(page.contains("SOURCE_LINE") && page.contains("plab-x-hot"));
}
