//! Whole programs as their builds describe them: `:load
//! compile_commands.json` (units with their own flags, in their own
//! folders, a failing unit reported while the rest load), and link-time
//! optimization as `clang-19 -flto -O2` does it, checked against clang and
//! lld on two real projects no one here wrote: cmark-gfm (C, 35 units) and
//! double-conversion with its tests (C++). The linked programs run through
//! the JIT with the output of the natively built ones.

mod common;

use common::{inputs, projects};
use passlab::session::Session;
use std::path::Path;

/// One test at a time: the cmark test interrupts (a request to the whole
/// process, as Ctrl-C is), which would stop another test's command too.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn run(s: &mut Session, line: &str) -> String {
    s.execute(line)
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .text()
}

fn saved(s: &mut Session, path: &Path) -> passlab::Module {
    run(s, &format!(":save {}", path.display()));
    passlab::Module::from_file(path).unwrap()
}

/// A small project made here: each unit needs its own `-D` (it does not
/// compile without), one finds its header through a relative `-I` from
/// its folder, one does not compile.
#[test]
fn a_project_loads_unit_by_unit_with_its_own_flags() {
    let _turn = turn();
    let dir = std::env::temp_dir().join(format!("passlab-cc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src/inc")).unwrap();
    std::fs::create_dir_all(dir.join("build")).unwrap();
    let files = [
        ("src/inc/two.h", "static inline int two(void) { return 2; }\n"),
        (
            "src/a.c",
            "#ifndef FROM_A\n#error a needs -DFROM_A\n#endif\nint b(int);\nint main(void) { return b(FROM_A); }\n",
        ),
        (
            "src/b.c",
            "#include \"two.h\"\n#ifndef FROM_B\n#error b needs -DFROM_B\n#endif\nint b(int x) { return x + two() + FROM_B; }\n",
        ),
        ("src/bad.c", "int broken( { return 0; }\n"),
    ];
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    let db = dir.join("build/compile_commands.json");
    std::fs::write(
        &db,
        format!(
            r#"[
 {{"directory": "{b}", "file": "../src/a.c", "arguments": ["cc", "-DFROM_A=3", "-O3", "-c", "../src/a.c", "-o", "a.o"]}},
 {{"directory": "{b}", "file": "../src/b.c", "command": "cc -I../src/inc -DFROM_B=4 -c ../src/b.c -o b.o"}},
 {{"directory": "{b}", "file": "{d}/src/bad.c", "command": "cc -c {d}/src/bad.c"}}
]"#,
            b = dir.join("build").display(),
            d = dir.display()
        ),
    )
    .unwrap();
    let mut s = Session::new();
    let out = run(&mut s, &format!(":load {} as prog", db.display()));
    assert!(out.contains("2 units compiled"), "{out}");
    assert!(out.contains("1 failed"), "{out}");
    // The failing unit by its file, with clang's words.
    assert!(out.contains("bad.c: failed"), "{out}");
    assert!(out.contains("expected"), "{out}");
    assert!(
        out.contains("left out of the units' commands: -O3 -c -o FILE"),
        "{out}"
    );
    let out = run(&mut s, ":exec");
    assert!(out.contains("exit status 9"), "{out}");
    // One module per unit, named by its path.
    let out = run(&mut s, &format!(":load {} link=no", db.display()));
    assert!(
        out.contains("module a.c:") && out.contains("module b.c:"),
        "{out}"
    );
    let out = run(&mut s, ":modules");
    assert!(
        out.contains("a.c") && out.contains("b.c") && out.contains("prog"),
        "{out}"
    );
    let out = run(&mut s, &format!(":load {} only=b.c as justb", db.display()));
    assert!(
        out.contains("1 unit compiled") && !out.contains("failed"),
        "{out}"
    );
    // Wrong inputs: what was wrong, and what would be valid.
    for (line, says) in [
        (
            format!(":load {} link=maybe", db.display()),
            "expects yes, no, lto",
        ),
        (
            format!(":load {} only=zz*", db.display()),
            "'zz*' matches no unit",
        ),
        (
            format!(":load {} warnings=loud", db.display()),
            "expects count, show",
        ),
        (
            format!(":load {} link=no", dir.join("src/a.c").display()),
            "link= is for a project",
        ),
        (format!(":load {} only=bad.c", db.display()), "no unit of"),
    ] {
        let e = s.execute(&line).unwrap_err().to_string();
        assert!(e.contains(says), "{line}: {e}");
    }
    std::fs::write(&db, "[{\"directory\": 3}]").unwrap();
    let e = s
        .execute(&format!(":load {}", db.display()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("entry 1 has no \"directory\" string"), "{e}");
    // The session is as it was before the errors.
    let out = run(&mut s, ":modules");
    assert!(out.contains("justb"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A database holding several programs, as zlib's does (the library,
/// `example`, `minigzip`): linking them all is refused with the symbol,
/// the units defining it and an `only=` that works; `only=` leaves units
/// out with `!`, and its `*` does not cross `/` (`**` does).
#[test]
fn a_database_of_several_programs_says_how_to_load_one() {
    let _turn = turn();
    let dir = std::env::temp_dir().join(format!("passlab-programs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("test")).unwrap();
    let files = [
        ("lib.c", "int lib(int x) { return x + 1; }\n"),
        (
            "test/example.c",
            "int lib(int);\nint main(void) { return lib(1); }\n",
        ),
        (
            "test/minigzip.c",
            "int lib(int);\nint main(void) { return lib(2); }\n",
        ),
    ];
    let mut entries = Vec::new();
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
        entries.push(format!(
            r#"{{"directory": "{d}", "file": "{f}", "command": "cc -c {f}"}}"#,
            d = dir.display()
        ));
    }
    let db = dir.join("compile_commands.json");
    std::fs::write(&db, format!("[{}]", entries.join(",\n"))).unwrap();
    let mut s = Session::new();
    let e = s
        .execute(&format!(":load {}", db.display()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("'main' in test/example.c, test/minigzip.c")
            && e.contains("only=!test/minigzip.c"),
        "{e}"
    );
    // The suggested only= loads one program.
    let out = run(
        &mut s,
        &format!(":load {} only=!test/minigzip.c as ex", db.display()),
    );
    assert!(out.contains("2 units compiled"), "{out}");
    assert!(run(&mut s, ":exec").contains("exit status 2"));
    // `*` stays within a folder: test/example.c is not '*.c'.
    let out = run(
        &mut s,
        &format!(":load {} only=*.c,test/minigzip.c as mg", db.display()),
    );
    assert!(out.contains("2 units compiled"), "{out}");
    assert!(run(&mut s, ":exec").contains("exit status 3"));
    // `**` crosses folders; exclusions alone keep the rest.
    let out = run(
        &mut s,
        &format!(":load {} only=**/*.c link=no", db.display()),
    );
    assert!(out.contains("3 units compiled"), "{out}");
    let out = run(
        &mut s,
        &format!(":load {} only=!test/* as justlib", db.display()),
    );
    assert!(out.contains("1 unit compiled"), "{out}");
    for (only, says) in [
        ("!nothing/*", "'!nothing/*' matches no unit"),
        ("test/*,!test/*", "leaves none of the 3 units"),
    ] {
        let e = s
            .execute(&format!(":load {} only={only}", db.display()))
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{only}: {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A shared library whose constructor writes `marker` (what a plugin
/// loaded into clang runs), built with clang-19 in `dir`; checked to do
/// so when clang-19 loads it, so that no marker later means not loaded.
fn evil_library(dir: &Path, marker: &Path) -> std::path::PathBuf {
    let c = dir.join("evil.c");
    std::fs::write(
        &c,
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void evil(void) {{\n  FILE *f = fopen(\"{}\", \"w\");\n  if (f) {{ fputs(\"ran\\n\", f); fclose(f); }}\n}}\n",
            marker.display()
        ),
    )
    .unwrap();
    let so = dir.join("evil.so");
    let out = std::process::Command::new("clang-19")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .output()
        .expect("run clang-19");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(&c).unwrap();
    let tiny = dir.join("tiny.c");
    std::fs::write(&tiny, "int tiny(void) { return 1; }\n").unwrap();
    let _ = std::process::Command::new("clang-19")
        .arg(format!("-fplugin={}", so.display()))
        .args(["-c", "-o", "/dev/null"])
        .arg(&tiny)
        .output()
        .unwrap();
    assert!(
        marker.exists(),
        "clang-19 -fplugin= did not run the library"
    );
    std::fs::remove_file(marker).unwrap();
    std::fs::remove_file(&tiny).unwrap();
    so
}

/// Every file under `dir` with its contents, by path.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p.clone());
                out.insert(p, b"(folder)".to_vec());
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.insert(p, bytes);
            }
        }
    }
    out
}

/// A database says what its source means, never what to run or write: a
/// unit whose command loads a plugin (three ways, and through a clang
/// configuration file) and writes files (dependency files, diagnostics,
/// statistics, optimization records, time traces, temporaries, coverage
/// notes, split DWARF, a module cache, crash reports, profiles) compiles
/// with none of it: the plugin's constructor never runs, no file in the
/// folder is written or changed, and each flag is listed as left out, by
/// its unit.
#[test]
fn a_database_cannot_run_or_write_anything() {
    let _turn = turn();
    let dir = std::env::temp_dir().join(format!("passlab-cc-doors-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("marker");
    let so = evil_library(&dir, &marker);
    let d = dir.display();
    std::fs::write(
        dir.join("evil.cfg"),
        format!("-fpass-plugin={}\n", so.display()),
    )
    .unwrap();
    for t in [
        "t_wp", "t_diag", "t_stats", "t_rec", "t_mf", "t_trace", "t_info", "t_prof",
    ] {
        std::fs::write(dir.join(t), "untouched\n").unwrap();
    }
    std::fs::write(dir.join("evil.c"), "int evil(int x) { return x * 3; }\n").unwrap();
    std::fs::write(
        dir.join("plain.c"),
        "int evil(int);\nint main(void) { return evil(3); }\n",
    )
    .unwrap();
    let dangerous = [
        format!("-fpass-plugin={}", so.display()),
        format!("-fplugin={}", so.display()),
        format!("-Xclang -load -Xclang {}", so.display()),
        format!("--config {d}/evil.cfg"),
        format!("-Wp,-MD,{d}/t_wp"),
        format!("--serialize-diagnostics {d}/t_diag"),
        format!("-Xclang -stats-file={d}/t_stats"),
        format!("-fsave-optimization-record -foptimization-record-file={d}/t_rec"),
        format!("-MD -MF {d}/t_mf"),
        format!("-ftime-trace={d}/t_trace"),
        format!("-mllvm -stats -mllvm -info-output-file={d}/t_info"),
        format!("-fprofile-instr-generate={d}/t_prof -fcoverage-mapping"),
        "-save-temps".to_string(),
        "--coverage".to_string(),
        "-gsplit-dwarf".to_string(),
        format!("-fmodules -fmodules-cache-path={d}/cache"),
        format!("-fcrash-diagnostics-dir={d}/crash"),
        format!("-B {d}/bin"),
    ];
    let db = dir.join("compile_commands.json");
    std::fs::write(
        &db,
        format!(
            r#"[
 {{"directory": "{d}", "file": "evil.c", "command": "cc -DKEPT=1 {} -c evil.c -o evil.o"}},
 {{"directory": "{d}", "file": "plain.c", "command": "cc -c plain.c -o plain.o"}}
]"#,
            dangerous.join(" ")
        ),
    )
    .unwrap();
    let before = snapshot(&dir);
    let mut s = Session::new();
    let out = run(&mut s, &format!(":load {} as doors", db.display()));
    assert!(out.contains("2 units compiled (level"), "{out}");
    assert!(!out.contains("failed"), "{out}");
    assert!(!marker.exists(), "a plugin ran:\n{out}");
    assert_eq!(
        snapshot(&dir),
        before,
        "a file in the folder was written:\n{out}"
    );
    let by_unit = out
        .lines()
        .find(|l| l.starts_with("left out of evil.c's command"))
        .unwrap_or_else(|| panic!("{out}"));
    for shown in [
        format!("-fpass-plugin={}", so.display()),
        format!("-fplugin={}", so.display()),
        "-Xclang -load".to_string(),
        format!("-Xclang {}", so.display()),
        format!("--config {d}/evil.cfg"),
        "-Wp,-MD,FILE".to_string(),
        format!("--serialize-diagnostics {d}/t_diag"),
        format!("-Xclang -stats-file={d}/t_stats"),
        "-fsave-optimization-record".to_string(),
        format!("-foptimization-record-file={d}/t_rec"),
        format!("-ftime-trace={d}/t_trace"),
        "-mllvm -stats".to_string(),
        format!("-mllvm -info-output-file={d}/t_info"),
        format!("-fprofile-instr-generate={d}/t_prof"),
        "-fcoverage-mapping".to_string(),
        "-save-temps".to_string(),
        "--coverage".to_string(),
        "-gsplit-dwarf".to_string(),
        "-fmodules".to_string(),
        format!("-fmodules-cache-path={d}/cache"),
        format!("-fcrash-diagnostics-dir={d}/crash"),
        format!("-B {d}/bin"),
    ] {
        assert!(by_unit.contains(&shown), "{shown} not listed:\n{out}");
    }
    // What every build says, once: the dependency file as any other.
    assert!(
        out.contains("left out of the units' commands: -MD -MF FILE -c -o FILE"),
        "{out}"
    );
    // What the source means stayed: the program runs.
    let out = run(&mut s, ":exec");
    assert!(out.contains("exit status 9"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Response files are read in the project's folders only: one there is
/// spliced in and filtered (its macro kept, its plugin dropped); one
/// outside, even through a symbolic link inside, refuses its entry, named
/// with the file, and the rest of the project loads.
#[test]
fn response_files_are_read_in_the_project_only() {
    let _turn = turn();
    let dir = std::env::temp_dir().join(format!("passlab-cc-rsp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (build, outside) = (dir.join("build"), dir.join("outside"));
    std::fs::create_dir_all(&build).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let marker = dir.join("marker");
    let so = evil_library(&dir, &marker);
    std::fs::write(
        build.join("flags.rsp"),
        format!(
            "-DFROM_RSP=5 \"-DSPACED=(1 + 1)\"\n-fpass-plugin={}\n",
            so.display()
        ),
    )
    .unwrap();
    std::fs::write(outside.join("far.rsp"), "-DFAR=1\n").unwrap();
    std::os::unix::fs::symlink(outside.join("far.rsp"), build.join("link.rsp")).unwrap();
    std::fs::write(
        build.join("main.c"),
        "#ifndef FROM_RSP\n#error needs the response file\n#endif\nint main(void) { return FROM_RSP * SPACED; }\n",
    )
    .unwrap();
    std::fs::write(build.join("far.c"), "int far(void) { return FAR; }\n").unwrap();
    std::fs::write(build.join("link.c"), "int link(void) { return FAR; }\n").unwrap();
    let db = build.join("compile_commands.json");
    std::fs::write(
        &db,
        format!(
            r#"[
 {{"directory": "{b}", "file": "main.c", "command": "cc @flags.rsp -c main.c"}},
 {{"directory": "{b}", "file": "far.c", "arguments": ["cc", "@{o}/far.rsp", "-c", "far.c"]}},
 {{"directory": "{b}", "file": "link.c", "arguments": ["cc", "@link.rsp", "-c", "link.c"]}}
]"#,
            b = build.display(),
            o = outside.display()
        ),
    )
    .unwrap();
    let mut s = Session::new();
    let out = run(&mut s, &format!(":load {} as rsp", db.display()));
    assert!(out.contains("1 unit compiled"), "{out}");
    assert!(!marker.exists(), "a plugin ran:\n{out}");
    assert!(
        out.contains(&format!("-fpass-plugin={}", so.display())),
        "{out}"
    );
    let far = format!(
        "far.c: skipped: entry 2: response file '@{}/far.rsp' is ",
        outside.display()
    );
    assert!(out.contains(&far), "{out}");
    assert!(
        out.contains("link.c: skipped: entry 3: response file '@link.rsp' is "),
        "{out}"
    );
    assert!(out.contains("outside the project's folders"), "{out}");
    let out = run(&mut s, ":exec");
    assert!(out.contains("exit status 10"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// cmark-gfm, C: `link=lto` then `lto<O2>` is what clang-19 -flto -O2 and
/// lld make of the same units, function by function; the program runs
/// through the JIT with the native program's output, linked plainly and
/// after link-time optimization.
#[test]
fn cmark_link_time_optimization_is_clang_flto() {
    let _turn = turn();
    let p = projects::configure(
        "cmark",
        &inputs::cmark_gfm_dir(),
        &["-DCMARK_TESTS=OFF", "-DCMARK_SHARED=OFF"],
    );
    let native = p.build.join("cmark-native");
    p.build_lto(&[], "clang-19", &native);
    let mut s = Session::new();
    // Ctrl-C while the units compile and run lto-pre-link: the command
    // ends, nothing loaded, the session goes on. The request is made when
    // the first unit has compiled (what the REPL's progress bar hears),
    // not after a sleep: a machine with many cores compiles all 35 units
    // before any clock chosen here would run out.
    s.set_progress(|p| {
        if !p.stage.is_empty() {
            passlab::interrupt::request();
        }
    });
    let e = s
        .execute(&format!(
            ":load {} link=lto as stopped",
            p.database.display()
        ))
        .unwrap_err();
    assert!(e.to_string().contains("interrupted"), "{e}");
    s.set_progress(|_| {});
    assert!(!run(&mut s, ":modules").contains("stopped"));
    let out = run(
        &mut s,
        &format!(":load {} link=lto as cmark", p.database.display()),
    );
    assert!(out.contains("35 units compiled"), "{out}");
    assert!(out.contains("lto-pre-link<O2>"), "{out}");
    let handed = saved(&mut s, &p.build.join("handed.bc"));
    let theirs =
        passlab::Module::from_file(p.build.join("cmark-native.0.2.internalize.bc")).unwrap();
    let d = projects::differences(&projects::counts(&handed), &projects::counts(&theirs));
    assert!(
        d.is_empty(),
        "what lld's LTO hands lto<O2> differs:\n{}",
        d.join("\n")
    );
    run(&mut s, ":run lto<O2>");
    let ours = saved(&mut s, &p.build.join("ours.bc"));
    let theirs = passlab::Module::from_file(p.build.join("cmark-native.0.4.opt.bc")).unwrap();
    let d = projects::differences(&projects::counts(&ours), &projects::counts(&theirs));
    assert!(
        d.is_empty(),
        "lto<O2> differs from clang -flto:\n{}",
        d.join("\n")
    );
    assert_eq!(ours.stats().functions, theirs.stats().functions);

    let input = p.build.join("in.md");
    std::fs::write(
        &input,
        "# Hi\n\n| a | b |\n|---|---|\n| 1 | ~~x~~ |\n\n- [x] done\n- see https://example.com\n\n*emph* `code`\n",
    )
    .unwrap();
    let args = "-e table -e strikethrough -e autolink -e tasklist";
    let expected = std::process::Command::new(&native)
        .args(args.split(' '))
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert!(expected.status.success());
    let expected = String::from_utf8(expected.stdout).unwrap();
    assert!(expected.contains("<del>x</del>"), "{expected}");
    let exec = format!(":exec {args} stdin=@{}", input.display());
    let out = run(&mut s, &exec);
    assert!(
        out.starts_with(&expected),
        "after lto<O2>:\n{out}\nnative:\n{expected}"
    );
    assert!(out.contains("exit status 0"), "{out}");
    run(&mut s, &format!(":load {} as plain", p.database.display()));
    run(&mut s, ":run O2");
    let out = run(&mut s, &exec);
    assert!(
        out.starts_with(&expected),
        "linked, O2:\n{out}\nnative:\n{expected}"
    );
    std::fs::remove_dir_all(&p.build).unwrap();
}

/// double-conversion, C++ (its library and part of its tests' runner,
/// whose tests register themselves from static constructors): the same
/// check, and the runner through the JIT as natively.
#[test]
fn double_conversion_link_time_optimization_is_clang_flto() {
    let _turn = turn();
    let p = projects::configure(
        "double-conversion",
        &inputs::double_conversion_dir(),
        &["-DBUILD_TESTING=ON"],
    );
    let units = [
        "double-conversion/bignum.cc",
        "double-conversion/bignum-dtoa.cc",
        "double-conversion/cached-powers.cc",
        "double-conversion/double-to-string.cc",
        "double-conversion/fast-dtoa.cc",
        "double-conversion/fixed-dtoa.cc",
        "double-conversion/string-to-double.cc",
        "double-conversion/strtod.cc",
        "cctest/cctest.cc",
        "cctest/test-bignum.cc",
        "cctest/test-diy-fp.cc",
        "cctest/test-ieee.cc",
        "cctest/test-strtod.cc",
    ];
    let native = p.build.join("cctest-native");
    p.build_lto(&units, "clang++-19", &native);
    // (`**/`: the units sit in folders below the database's, `*` stays
    // within one)
    let only: Vec<String> = units.iter().map(|u| format!("**/{u}")).collect();
    let mut s = Session::new();
    let out = run(
        &mut s,
        &format!(
            ":load {} link=lto only={} as dc",
            p.database.display(),
            only.join(",")
        ),
    );
    assert!(out.contains("13 units compiled"), "{out}");
    run(&mut s, ":run lto<O2>");
    let ours = saved(&mut s, &p.build.join("ours.bc"));
    let theirs = passlab::Module::from_file(p.build.join("cctest-native.0.4.opt.bc")).unwrap();
    let d = projects::differences(&projects::counts(&ours), &projects::counts(&theirs));
    assert!(
        d.is_empty(),
        "lto<O2> differs from clang++ -flto:\n{}",
        d.join("\n")
    );
    let tests = "test-bignum test-diy-fp test-ieee test-strtod";
    let expected = std::process::Command::new(&native)
        .args(tests.split(' '))
        .output()
        .unwrap();
    assert!(expected.status.success());
    let expected = String::from_utf8(expected.stdout).unwrap();
    assert!(expected.starts_with("Ran "), "{expected}");
    let out = run(&mut s, &format!(":exec {tests}"));
    assert!(out.starts_with(&expected), "{out}\nnative:\n{expected}");
    assert!(out.contains("exit status 0"), "{out}");
    std::fs::remove_dir_all(&p.build).unwrap();
}
