//! Module: loading (IR, bitcode, C, C++, linked), printing, statistics,
//! verification, copies, fingerprints, snapshots.

mod common;

use common::inputs;
use passlab::{ErrorKind, Lang, Module, Source};

const ADD_IR: &str =
    "define i32 @add(i32 %a, i32 %b) {\nentry:\n  %s = add i32 %a, %b\n  ret i32 %s\n}\n";

#[test]
fn ir_text_parse_error_has_line_column_and_line() {
    let err = Module::from_ir("define i32 @f() {\n  ret i32 %z\n}\n", "bad.ll").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Parse);
    match &err {
        passlab::Error::Parse {
            line,
            column,
            line_text,
            message,
            source_name,
        } => {
            assert_eq!((*line, *column), (2, 11));
            assert_eq!(line_text, "  ret i32 %z");
            assert_eq!(message, "use of undefined value '%z'");
            assert_eq!(source_name, "bad.ll");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        err.to_string().ends_with("  ret i32 %z\n          ^"),
        "{err}"
    );
}

#[test]
fn bitcode_round_trip_is_exact() {
    let m = Module::from_ir(ADD_IR, "add.ll").unwrap();
    let bc = m.bitcode();
    assert_eq!(&bc[..4], b"BC\xc0\xde");
    let back = Module::from_bitcode(&bc, "add.bc").unwrap();
    assert_eq!(
        back.print().lines().skip(1).collect::<Vec<_>>(),
        m.print().lines().skip(1).collect::<Vec<_>>()
    );
    let err = Module::from_bitcode(b"BC\xc0\xde garbage", "x.bc").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Parse);
}

#[test]
fn c_source_compiles_at_o0_without_optnone() {
    let m = Module::from_c(common::SUM_C, "sum.c").unwrap();
    assert_eq!(m.defined_functions(), ["sum", "twice"]);
    let text = m.print_function("sum").unwrap();
    assert!(text.contains("alloca"), "-O0 code keeps allocas:\n{text}");
    assert!(!m.print().contains("optnone"), "optnone must be disabled");
    m.verify().unwrap();
}

#[test]
fn c_errors_come_from_clang_with_positions() {
    let err = Module::from_c("int f( { return 1; }", "broken.c").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Compile);
    assert!(err.to_string().contains("broken.c:1:"), "{err}");
}

#[test]
fn cpp_source_compiles() {
    let src = Source::text(
        Lang::Cpp,
        "template <class T> T sq(T x) { return x * x; }\nint use(int v) { return sq(v); }\n",
        "t.cpp",
    );
    let m = Module::load(&[src]).unwrap();
    let names = m.defined_functions();
    assert!(names.iter().any(|n| n == "_Z3usei"), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("_Z2sqIiE")), "{names:?}");
}

#[test]
fn real_c_file_from_zlib() {
    let m = Module::load(&[inputs::zlib_source("adler32.c")]).unwrap();
    let stats = m.stats();
    assert!(m.defined_functions().iter().any(|f| f == "adler32_z"));
    assert!(stats.instructions > 300, "{stats:?}");
    m.verify().unwrap();
}

#[test]
fn several_sources_link_into_one_module() {
    let caller = Source::text(
        Lang::C,
        "int twice(int);\nint four(int x) { return twice(twice(x)); }\n",
        "four.c",
    );
    let callee = Source::text(
        Lang::Llvm,
        "define i32 @twice(i32 %x) {\n  %r = mul i32 %x, 2\n  ret i32 %r\n}\n",
        "twice.ll",
    );
    let m = Module::load(&[caller, callee, inputs::zlib_source("adler32.c")]).unwrap();
    let defined = m.defined_functions();
    for f in ["four", "twice", "adler32"] {
        assert!(
            defined.iter().any(|d| d == f),
            "{f} missing from {defined:?}"
        );
    }
    m.verify().unwrap();

    let dup = Source::text(
        Lang::Llvm,
        "define i32 @twice(i32 %x) {\n  ret i32 %x\n}\n",
        "dup.ll",
    );
    let again = Source::text(
        Lang::Llvm,
        "define i32 @twice(i32 %x) {\n  ret i32 0\n}\n",
        "again.ll",
    );
    let err = Module::load(&[dup, again]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Link);
    assert!(err.to_string().contains("twice"), "{err}");
}

#[test]
fn file_loading_by_extension() {
    let dir = std::env::temp_dir().join(format!("passlab-module-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let m = Module::from_ir(ADD_IR, "add.ll").unwrap();
    m.save(dir.join("add.ll")).unwrap();
    m.save(dir.join("add.bc")).unwrap();
    for file in ["add.ll", "add.bc"] {
        let back = Module::from_file(dir.join(file)).unwrap();
        assert_eq!(back.defined_functions(), ["add"]);
    }
    let err = Module::from_file(dir.join("add.txt")).unwrap_err();
    assert!(
        err.to_string().contains("cannot tell the language"),
        "{err}"
    );
    let err = Module::from_file(dir.join("missing.c")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn print_one_function_and_suggest_names() {
    let m = Module::from_c(common::SUM_C, "sum.c").unwrap();
    let twice = m.print_function("twice").unwrap();
    assert!(twice.contains("define dso_local i32 @twice"), "{twice}");
    assert!(!twice.contains("@sum("));
    let err = m.print_function("twise").unwrap_err();
    assert_eq!(
        err.to_string(),
        "no function named 'twise'; did you mean 'twice'?"
    );
}

#[test]
fn stats_per_function_and_opcode() {
    let m = Module::from_ir(
        "declare void @ext()\ndefine i32 @f(i32 %x) {\n  %a = add i32 %x, 1\n  %b = add i32 %a, 2\n  br label %next\nnext:\n  call void @ext()\n  ret i32 %b\n}\n",
        "s.ll",
    )
    .unwrap();
    let s = m.stats();
    assert_eq!((s.functions, s.blocks, s.instructions), (1, 2, 5));
    assert_eq!(s.per_function.len(), 1);
    assert_eq!(
        (
            s.per_function[0].name.as_str(),
            s.per_function[0].blocks,
            s.per_function[0].instructions
        ),
        ("f", 2, 5)
    );
    assert_eq!(s.per_opcode.get("add"), Some(&2));
    assert_eq!(s.per_opcode.get("call"), Some(&1));
    assert_eq!(s.per_opcode.get("br"), Some(&1));
    assert_eq!(s.per_opcode.get("ret"), Some(&1));
    assert_eq!(m.instruction_count(), 5);
}

#[test]
fn ir_the_parser_accepts_but_that_is_invalid_is_refused_where_it_is_wrong() {
    // A use not dominated by its definition parses, but does not verify:
    // refused as opt-19 refuses it, at the use's line and column.
    let e = Module::from_ir(
        "define i32 @f(i1 %c) {\nentry:\n  br i1 %c, label %a, label %b\na:\n  %x = add i32 1, 2\n  br label %b\nb:\n  ret i32 %x\n}\n",
        "dom.ll",
    )
    .map(|_| ())
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("dom.ll:8:3: invalid IR: Instruction does not dominate all uses"),
        "{msg}"
    );
    assert!(msg.contains("  ret i32 %x\n  ^"), "{msg}");
    assert_eq!(e.kind(), passlab::ErrorKind::Verify);
}

#[test]
fn copies_are_deep() {
    let m = Module::from_ir(ADD_IR, "add.ll").unwrap();
    let c = m.copy();
    // SAFETY: `add` is the copy's only function and nothing uses it, so no
    // IR refers to it after the delete, and its handle is not used again.
    c.with_ir(|ir| unsafe { ir.get_function("add").unwrap().delete() });
    assert_eq!(m.defined_functions(), ["add"]);
    assert!(c.defined_functions().is_empty());
    drop(m);
    c.verify().unwrap();
}

#[test]
fn fingerprint_sees_any_change_and_only_changes() {
    let a = Module::from_ir(ADD_IR, "add.ll").unwrap();
    let f0 = a.fingerprint();
    assert_eq!(f0, a.fingerprint());
    let fun0 = a.function_fingerprint("add").unwrap();
    // Change one constant-free detail: the nsw flag.
    let b = Module::from_ir(&ADD_IR.replace("add i32", "add nsw i32"), "add.ll").unwrap();
    assert_ne!(b.fingerprint(), a.fingerprint());
    // Change an attribute only.
    let attrs = ADD_IR.replace(
        "define i32 @add(i32 %a, i32 %b)",
        "define i32 @add(i32 %a, i32 %b) nounwind",
    );
    let c = Module::from_ir(&attrs, "add.ll").unwrap();
    assert_ne!(c.fingerprint(), a.fingerprint());
    // A copy and a snapshot restore of an unchanged module compare equal to
    // themselves across runs of the fingerprint.
    let mut d = a.copy();
    let before = d.fingerprint();
    assert_eq!(before, d.fingerprint());
    let s = d.snapshot();
    d.restore(&s).unwrap();
    assert_eq!(d.print(), a.print());
    assert_eq!(fun0, a.function_fingerprint("add").unwrap());
}

#[test]
fn snapshot_restore_gives_back_the_same_text() {
    let mut m = Module::load(&[inputs::zlib_source("crc32.c")]).unwrap();
    let text = m.print();
    let snap = m.snapshot();
    m.with_ir(|ir| {
        let functions = ir.get_functions().collect::<Vec<_>>();
        // crc32.c's functions call each other: replace every use first, so
        // that no function is deleted while another still uses it.
        for f in &functions {
            let p = f.as_global_value().as_pointer_value();
            p.replace_all_uses_with(p.get_type().const_null());
        }
        for f in functions {
            // SAFETY: the handle was collected before any delete, is used
            // once, and the function has no uses left (replaced above).
            unsafe { f.delete() }
        }
    });
    assert!(m.defined_functions().is_empty());
    m.restore(&snap).unwrap();
    assert_eq!(m.print(), text);
}

#[test]
fn extract_keeps_only_the_named_functions() {
    let m = Module::load(&[inputs::zlib_source("adler32.c")]).unwrap();
    let one = m.extract(&["adler32_z"]).unwrap();
    assert_eq!(one.defined_functions(), ["adler32_z"]);
    one.verify().unwrap();
    assert!(one.instruction_count() < m.instruction_count());
    assert!(m
        .extract(&["adler33_z"])
        .unwrap_err()
        .to_string()
        .starts_with("no function named 'adler33_z'; did you mean one of: 'adler32_z'"));
}

/// Corrupt bitcode cannot end the process: 400 copies of a ~3 KB module's
/// bitcode with 1–8 bytes changed (seeded), each loaded from a file as
/// `:load` does and from bytes as Python's `Module.from_bitcode` does.
/// Before the reader ran in a child, 5 of 400 ended the REPL (a SIGSEGV,
/// four "Allocation failed" aborts); now each is a module or an error.
#[test]
fn corrupt_bitcode_is_an_error_not_a_crash() {
    let m = Module::load(&[inputs::zlib_source("adler32.c")]).unwrap();
    let dir = std::env::temp_dir().join(format!("plab-bc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.bc");
    m.save(&good).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    assert!((2_000..20_000).contains(&bytes.len()), "{}", bytes.len());
    let mut rng = passlab::rng::Rng::new(7);
    let (mut loaded, mut refused, mut crashed) = (0, 0, Vec::new());
    for i in 0..400 {
        let mut b = bytes.clone();
        for _ in 0..rng.between(1, 8) {
            // (past the magic number, which from_bitcode checks first)
            let at = rng.between(4, b.len() - 1);
            b[at] = rng.below(256) as u8;
        }
        let path = dir.join(format!("m{i}.bc"));
        std::fs::write(&path, &b).unwrap();
        let from_file = Module::from_file(&path);
        let from_bytes = Module::from_bitcode(&b, "m.bc");
        assert_eq!(from_file.is_ok(), from_bytes.is_ok(), "mutation {i}");
        match from_bytes {
            Ok(_) => loaded += 1,
            Err(e) => {
                let e = e.to_string();
                if e.contains("corrupt bitcode: LLVM's bitcode reader") {
                    crashed.push(e);
                }
                refused += 1;
            }
        }
    }
    assert_eq!(loaded + refused, 400);
    // With this seed some mutations do crash the reader (in its child):
    // the campaign reaches the door it guards.
    assert!(!crashed.is_empty(), "no mutation crashed the reader");
    eprintln!(
        "{loaded} loaded, {refused} refused, {} of them crashing the reader:",
        crashed.len()
    );
    for e in &crashed {
        eprintln!("  {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Empty input and input that is not bitcode are errors, not an empty
/// module; a file that is not a regular one (a device, a FIFO) is refused
/// before it is read.
#[test]
fn empty_or_endless_input_is_an_error() {
    let e = Module::from_bitcode(b"", "empty.bc").unwrap_err();
    assert!(e.to_string().contains("not LLVM bitcode"), "{e}");
    let e = Module::from_bitcode(b"define void @f() {\n ret void\n}\n", "text.bc").unwrap_err();
    assert!(e.to_string().contains("not LLVM bitcode"), "{e}");
    let dir = std::env::temp_dir().join(format!("plab-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.bc");
    std::fs::write(&empty, b"").unwrap();
    let e = Module::from_file(&empty).unwrap_err();
    assert!(e.to_string().contains("not LLVM bitcode (0 bytes"), "{e}");
    // (an empty .ll is an empty module, as opt-19 reads one)
    let empty_ll = dir.join("empty.ll");
    std::fs::write(&empty_ll, b"").unwrap();
    assert_eq!(
        Module::from_file(&empty_ll).unwrap().function_names().len(),
        0
    );
    let fifo = dir.join("fifo.ll");
    passlab::child::make_fifo(&fifo).unwrap();
    for path in [std::path::Path::new("/dev/zero"), fifo.as_path()] {
        let e = Module::load(&[Source::file_as(path, Lang::Llvm)]).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The observation spaces' recipe (ARCHITECTURE.md): a row of
/// `module::spaces::SPACES` is a space of `:features` (by its name, in any
/// case), of `:help features`, completion and the reference.
#[test]
fn every_observation_space_of_the_table_reaches_features_help_and_completion() {
    let mut s = passlab::session::Session::new();
    s.execute(
        ":module m --lang llvm\ndefine i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n.",
    )
    .unwrap();
    let help = s.execute(":help features").unwrap().text();
    for space in passlab::module::spaces::SPACES {
        assert!(
            help.contains(&format!("  {}\n", space.name)),
            "{}: {help}",
            space.name
        );
        let shown = s
            .execute(&format!(":features {}", space.name.to_lowercase()))
            .unwrap()
            .text();
        assert!(
            shown.contains(space.name) || space.name == "Ir",
            "{}: {shown}",
            space.name
        );
        let line = format!(":features {}", &space.name[..2]);
        let (_, completed) = s.completions().complete(&line, line.len());
        assert!(
            completed.iter().any(|c| c.trim() == space.name),
            "{}: {completed:?}",
            space.name
        );
    }
    let e = s.execute(":features norm").unwrap_err().to_string();
    assert!(
        e.contains("valid are: InstCount, Autophase, InstCountNorm"),
        "{e}"
    );
}
