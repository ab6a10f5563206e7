//! `:cfg` and `passlab::graph`: control-flow graphs of functions, their
//! edges' labels, shortened blocks, hostile names, `after=`, `--out`, and
//! what is refused.

use passlab::session::{Item, Output, Session};
use passlab::{graph, ErrorKind, Module};

const IR: &str = r#"define i32 @diamond(i32 %x) {
entry:
  %c = icmp sgt i32 %x, 0
  br i1 %c, label %then, label %else
then:
  %a = add i32 %x, 1
  br label %end
else:
  %b = sub i32 %x, 1
  br label %end
end:
  %r = phi i32 [ %a, %then ], [ %b, %else ]
  ret i32 %r
}

define i32 @sum(i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i32 [ 0, %entry ], [ %s1, %loop ]
  %s1 = add i32 %s, %i
  %i1 = add i32 %i, 1
  %c = icmp slt i32 %i1, %n
  br i1 %c, label %loop, label %exit
exit:
  ret i32 %s1
}

define i32 @sw(i32 %x) {
entry:
  switch i32 %x, label %d [ i32 1, label %one
                            i32 7, label %one
                            i32 -3, label %three ]
one:
  ret i32 1
three:
  ret i32 3
d:
  ret i32 0
}

declare i32 @ext(i32)
"#;

fn session() -> Session {
    let mut s = Session::new();
    s.execute(&format!(":module m\n{IR}.\n")).unwrap();
    s
}

fn module() -> Module {
    Module::from_ir(IR, "m").unwrap()
}

/// The SVG of the output's picture.
fn svg(o: &Output) -> String {
    o.items
        .iter()
        .find_map(|i| match i {
            Item::Display(b) => b.get("image/svg+xml").map(str::to_string),
            _ => None,
        })
        .expect("a picture")
}

fn has_dot() -> bool {
    std::process::Command::new("dot")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_diamond_has_true_and_false_edges() {
    if !has_dot() {
        return eprintln!("dot not installed: skipped");
    }
    let mut s = session();
    let o = s.execute(":cfg diamond").unwrap();
    let t = o.text();
    assert!(t.starts_with("cfg: diamond: 4 blocks, 4 edges"), "{t}");
    assert!(
        t.contains("entry (2 instructions) -> then [true], else [false]"),
        "{t}"
    );
    assert!(t.contains("end (2 instructions) ret"), "{t}");
    let svg = svg(&o);
    assert!(
        svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
        "{svg}"
    );
    for label in ["then:", "else:", "end:", ">true<", ">false<"] {
        assert!(svg.contains(label), "{label} missing: {svg}");
    }
}

#[test]
fn a_loop_has_its_back_edge() {
    let g = graph::of_function(&module(), "sum", None, 12).unwrap();
    assert!(
        g.text
            .contains("loop (6 instructions) -> loop [true], exit [false]"),
        "{}",
        g.text
    );
    assert!(g.dot.contains("b1 -> b1 [label=\"true\""), "{}", g.dot);
}

#[test]
fn switch_edges_carry_case_values() {
    let g = graph::of_function(&module(), "sw", None, 12).unwrap();
    assert!(
        g.text
            .contains("entry (1 instruction) -> d [default], one [1, 7], three [-3]"),
        "{}",
        g.text
    );
}

#[test]
fn unknown_and_declared_functions_are_refused() {
    let mut s = session();
    let e = s.execute(":cfg diamnd").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(e.to_string().contains("diamond"), "{e}");
    let e = s.execute(":cfg ext").unwrap_err();
    assert!(e.to_string().contains("only declared"), "{e}");
}

#[test]
fn hostile_names_are_escaped() {
    let m = Module::from_ir(
        r#"define void @"a\22b{c}<d>|e"(i1 %c) {
"x\22y{z}<w>|v\0Aq\\":
  br i1 %c, label %"p\22q", label %"r&s"
"p\22q":
  ret void
"r&s":
  ret void
}
"#,
        "hostile",
    )
    .unwrap();
    let g = graph::of_function(&m, "a\"b{c}<d>|e", None, 12).unwrap();
    assert!(g.dot.contains(r#"label="cfg: a\"b{c}<d>|e""#), "{}", g.dot);
    assert!(
        g.dot
            .contains(r#"b0 [label="\"x\\22y{z}<w>|v\\0Aq\\\\\":\l"#),
        "{}",
        g.dot
    );
    if has_dot() {
        let svg = g.svg().unwrap();
        assert!(
            svg.contains("&quot;p\\22q&quot;:") || svg.contains("\"p\\22q\":"),
            "{svg}"
        );
        assert!(svg.contains("r&amp;s"), "{svg}");
    }
}

#[test]
fn long_blocks_are_shortened() {
    let mut body = String::from("define i32 @long(i32 %x) {\nentry:\n  %v0 = add i32 %x, 0\n");
    for i in 1..40 {
        body.push_str(&format!("  %v{i} = add i32 %v{}, {i}\n", i - 1));
    }
    body.push_str("  ret i32 %v39\n}\n");
    let m = Module::from_ir(&body, "long").unwrap();
    let g = graph::of_function(&m, "long", None, 12).unwrap();
    assert!(g.dot.contains("… 30 more"), "{}", g.dot);
    assert!(g.dot.contains("ret i32 %v39"), "{}", g.dot);
    assert!(!g.dot.contains("%v12 ="), "{}", g.dot);
    let g = graph::of_function(&m, "long", None, 100).unwrap();
    assert!(!g.dot.contains("more"), "{}", g.dot);
}

#[test]
fn after_a_pass_the_graph_changes_and_the_module_does_not() {
    let m = module();
    let g = graph::of_function(&m, "diamond", Some("simplifycfg"), 12).unwrap();
    assert!(
        g.text
            .starts_with("cfg: diamond after simplifycfg: 1 block, 0 edges"),
        "{}",
        g.text
    );
    let g = graph::of_function(&m, "diamond", None, 12).unwrap();
    assert!(g.text.contains("4 blocks"), "{}", g.text);
    // In a session too: the current module keeps its four blocks.
    let mut s = session();
    let t = s.execute(":cfg diamond after=simplifycfg --out /dev/null/x.dot");
    assert!(t.is_err(), "a path that cannot be written is an error");
    let t = s.execute(":cfg diamond --out /dev/null/x.dot").unwrap_err();
    assert_eq!(t.kind(), ErrorKind::Io, "{t}");
}

#[test]
fn out_writes_only_what_it_may() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session();
    let dot = dir.path().join("d.dot");
    let t = s
        .execute(&format!(":cfg diamond --out {}", dot.display()))
        .unwrap()
        .text();
    assert!(t.contains("written to"), "{t}");
    assert!(std::fs::read_to_string(&dot)
        .unwrap()
        .starts_with("digraph cfg {"));
    // Written by passlab: replaced.
    s.execute(&format!(":cfg sum --out {}", dot.display()))
        .unwrap();
    // The user's own file: refused, left as it was.
    let mine = dir.path().join("mine.svg");
    std::fs::write(&mine, "mine").unwrap();
    let e = s
        .execute(&format!(":cfg diamond --out {}", mine.display()))
        .unwrap_err();
    assert!(e.to_string().contains("mine.svg"), "{e}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
    let e = s
        .execute(&format!(
            ":cfg diamond --out {}/g.txt",
            dir.path().display()
        ))
        .unwrap_err();
    assert!(e.to_string().contains(".svg, .png or .dot"), "{e}");
    if has_dot() {
        let png = dir.path().join("d.png");
        s.execute(&format!(
            ":cfg diamond after=simplifycfg --out {}",
            png.display()
        ))
        .unwrap();
        assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    }
}

#[test]
fn bad_input_is_refused() {
    let mut s = Session::new();
    let e = s.execute(":cfg diamond").unwrap_err();
    assert!(e.to_string().contains("no module yet"), "{e}");
    let mut s = session();
    for (line, says) in [
        (":cfg", "expects FUNCTION"),
        (":cfg a b", "expects FUNCTION"),
        (":cfg diamond --out", "--out expects a file name"),
        (":cfg diamond lines=2", "from 3 to 10000"),
        (":cfg diamond lines=many", "from 3 to 10000"),
        (":cfg diamond colour=red", "unknown setting 'colour'"),
        (":cfg diamond after=", "after= expects"),
        (":cfg diamond after=simplifycgf", "simplifycfg"),
    ] {
        let e = s.execute(line).unwrap_err().to_string();
        assert!(e.contains(says), "{line}: {e}");
    }
    // Nothing was changed by the refusals.
    assert!(s.execute(":cfg diamond --out /nonexistent/x.dot").is_err());
}

#[test]
fn graphs_from_text_are_graphs_from_the_module() {
    let m = module();
    for f in ["diamond", "sum", "sw"] {
        let text = m.print_function(f).unwrap();
        assert_eq!(
            passlab::module::Cfg::from_text(f, &text).as_ref(),
            Some(&m.cfg(f).unwrap()),
            "{f}"
        );
    }
    let m = Module::from_ir(
        r#"declare void @g()
declare i32 @__gxx_personality_v0(...)
define void @"q\22{<|>}"(i1 %c, i32 %x) personality ptr @__gxx_personality_v0 {
entry:
  br i1 %c, label %"x\22y", label %0, !prof !0
"x\22y":
  invoke void @g() to label %0 unwind label %lp
0:
  switch i32 %x, label %"a b\22" [ i32 -5, label %"a b\22"
                                   i32 3, label %done ]
"a b\22":
  br label %0
done:
  ret void
lp:
  %l = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %l
}
!0 = !{!"branch_weights", i32 1, i32 2}
"#,
        "eh",
    )
    .unwrap();
    let f = "q\"{<|>}";
    let cfg = m.cfg(f).unwrap();
    let labels: Vec<&str> = cfg.edges.iter().map(|e| e.label.as_str()).collect();
    assert_eq!(
        labels,
        ["true", "false", "normal", "unwind", "default, -5", "3", ""]
    );
    let text = m.print_function(f).unwrap();
    assert_eq!(passlab::module::Cfg::from_text(f, &text), Some(cfg));
}

#[test]
fn the_explorer_draws_a_pass_before_and_after_in_a_notebook() {
    if !has_dot() {
        return eprintln!("dot not installed: skipped");
    }
    let mut s = session();
    s.set_html(true);
    s.execute(":explore run=simplifycfg").unwrap();
    let o = s.execute(":explore diamond 2").unwrap();
    let pair = o
        .items
        .iter()
        .find_map(|i| match i {
            Item::Display(b) if b.plain().starts_with("cfg: ") => Some(b.clone()),
            _ => None,
        })
        .expect("the graphs beside the diff");
    let plain = pair.plain();
    assert!(
        plain.contains("cfg: diamond before simplifycfg (pass 2): 4 blocks"),
        "{plain}"
    );
    assert!(
        plain.contains("cfg: diamond after simplifycfg (pass 2): 1 block"),
        "{plain}"
    );
    assert_eq!(pair.get("text/html").unwrap().matches("<svg").count(), 2);
    // A pass that did not change it, or a terminal: no graphs.
    let o = s.execute(":explore diamond 1").unwrap();
    assert!(!o.text().contains("cfg: "), "{}", o.text());
    s.set_html(false);
    let o = s.execute(":explore diamond 2").unwrap();
    assert!(!o.text().contains("cfg: "), "{}", o.text());
}
