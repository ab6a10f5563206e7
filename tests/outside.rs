//! Passes touch no file the user did not name to passlab and start no
//! program (issue 58): the LLVM passes that write files (`dot-*`,
//! `insert-gcov-profiling`) or start a viewer (`view-*`) are refused
//! wherever a pipeline is given, and the file a parameter names
//! (`memprof-use<profile-filename=…>`) must be a regular file of bounded
//! size. What was measured before: gcov and dot-cfg overwrote a user's
//! file, view-cfg ran `xdg-open`, /dev/zero ended the session out of
//! memory and a FIFO hung it.
//!
//! The tests whose failure would hang, end or litter the test process (or
//! its working folder) run their body in a child of it, in a folder of its
//! own, under a memory limit and a time limit.

use passlab::session::Session;
use passlab::{pipeline, ErrorKind, Module};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the child that runs a test's body.
const CHILD: &str = "PASSLAB_OUTSIDE_CHILD";
/// Longer than any body takes by far; a body that hangs fails its test.
const LIMIT: Duration = Duration::from_secs(60);

/// True in the child that runs a test's body, which then ends itself
/// after [`LIMIT`] and a little: if the parent is gone, nobody else would.
fn in_child() -> bool {
    static WATCHDOG: std::sync::Once = std::sync::Once::new();
    let child = std::env::var_os(CHILD).is_some();
    if child {
        WATCHDOG.call_once(|| {
            std::thread::spawn(|| {
                std::thread::sleep(LIMIT + Duration::from_secs(5));
                eprintln!("the child's watchdog ended it");
                std::process::abort();
            });
        });
    }
    child
}

/// Runs the test `name` of this binary again in a child process, in `cwd`,
/// with its address space limited to 4 GiB and ended after [`LIMIT`];
/// `configure` adds the environment the body reads. Panics, with what the
/// child printed, unless the body passed.
fn run_in_child(name: &str, cwd: &Path, configure: impl FnOnce(&mut Command)) {
    let exe = std::env::current_exe().unwrap();
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(&exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(out.reopen().unwrap())
        .stderr(out.reopen().unwrap());
    configure(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{name} did not end within {LIMIT:?}:\n{}",
                std::fs::read_to_string(out.path()).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let printed = std::fs::read_to_string(out.path()).unwrap_or_default();
    assert!(status.success(), "{name} failed ({status}):\n{printed}");
    assert!(
        printed.contains("1 passed"),
        "{name} did not run in the child:\n{printed}"
    );
}

fn env_path(key: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(key).unwrap_or_else(|| panic!("{key} unset")))
}

fn refused(text: &str, m: &mut Module) -> String {
    let e = pipeline::parse(text)
        .and_then(|p| p.apply(m))
        .expect_err(text);
    assert_eq!(e.kind(), ErrorKind::Pipeline, "{text}: {e}");
    // The pass is known: no other name is suggested for it.
    assert!(!e.to_string().contains("did you mean"), "{text}: {e}");
    e.to_string()
}

/// A module with one function named `name`, for `:module … --lang llvm`.
fn one_function(name: &str) -> String {
    format!("define i32 @\"{name}\"(i32 %x) {{\n  %y = add i32 %x, 1\n  ret i32 %y\n}}\n")
}

/// IR with debug info whose `!llvm.gcov` names `notes` (and `data`) as
/// where its coverage files go: what insert-gcov-profiling writes.
fn gcov_ir(notes: &Path, data: &Path) -> String {
    format!(
        r#"define i32 @f(i32 %x) !dbg !5 {{
  ret i32 %x, !dbg !8
}}
!llvm.dbg.cu = !{{!0}}
!llvm.module.flags = !{{!3, !4}}
!llvm.gcov = !{{!9}}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "t", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "t.c", directory: "/tmp")
!3 = !{{i32 7, !"Dwarf Version", i32 5}}
!4 = !{{i32 2, !"Debug Info Version", i32 3}}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 1, type: !6, scopeLine: 1, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{{null}}
!8 = !DILocation(line: 1, column: 1, scope: !5)
!9 = !{{!"{}", !"{}", !0}}
"#,
        notes.display(),
        data.display()
    )
}

#[test]
fn gcov_does_not_write_the_file_the_module_names() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.gcno");
    std::fs::write(&notes, "mine").unwrap();
    let mut m = Module::from_ir(&gcov_ir(&notes, &dir.path().join("d.gcda")), "g.ll").unwrap();
    let before = m.print();
    for text in ["insert-gcov-profiling", "mem2reg,insert-gcov-profiling"] {
        let e = refused(text, &mut m);
        assert!(e.contains("writes .gcno files"), "{e}");
        assert!(e.contains("clang-19 --coverage"), "{e}");
    }
    let mut s = Session::new();
    s.execute(&format!(
        ":module g --lang llvm\n{}.",
        gcov_ir(&notes, &dir.path().join("d.gcda"))
    ))
    .unwrap();
    let e = s.execute(":run insert-gcov-profiling").unwrap_err();
    assert!(e.to_string().contains("passlab does not run it"), "{e}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine");
    assert_eq!(m.print(), before);
}

/// dot-cfg writes `.FUNCTION.dot` relative to the working folder, the
/// function's name as it is: this one's climbs out to the user's file.
#[test]
fn dot_cfg_does_not_follow_a_function_name_out_of_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("notes");
    std::fs::write(target.with_extension("dot"), "mine").unwrap();
    let name = format!("/{}{}", "../".repeat(64), target.display());
    let mut m = Module::from_ir(&one_function(&name), "d.ll").unwrap();
    for text in ["dot-cfg", "function(dot-cfg-only)", "instcombine,dot-cfg"] {
        let e = refused(text, &mut m);
        assert!(
            e.contains("a name with '/' in it reaches other folders"),
            "{e}"
        );
        assert!(e.contains("opt-19 -passes=dot-cfg"), "{e}");
    }
    assert_eq!(
        std::fs::read_to_string(target.with_extension("dot")).unwrap(),
        "mine"
    );
}

/// dot-dom and its kin write `dom.FUNCTION.dot` into the working folder:
/// the body runs in a child whose working folder is checked afterwards.
#[test]
fn dot_printers_write_nothing_into_the_working_folder() {
    if in_child() {
        let mut m = Module::from_ir(&one_function("f"), "m.ll").unwrap();
        for text in [
            "dot-dom",
            "dot-dom-only",
            "dot-post-dom",
            "function(dot-post-dom-only)",
            "dot-callgraph",
            "function(loop(dot-ddg))",
        ] {
            let e = refused(text, &mut m);
            assert!(e.contains("passlab does not run it"), "{e}");
        }
        let mut s = Session::new();
        s.execute(&format!(":module m --lang llvm\n{}.", one_function("f")))
            .unwrap();
        assert!(s.execute(":run dot-dom").is_err());
        assert!(s.execute(":pass p = instcombine,dot-dom").is_err());
        return;
    }
    let cwd = tempfile::tempdir().unwrap();
    run_in_child(
        "dot_printers_write_nothing_into_the_working_folder",
        cwd.path(),
        |_| {},
    );
    let left: Vec<_> = std::fs::read_dir(cwd.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "files written: {left:?}");
}

/// view-cfg and its kin write a .dot file into the temporary folder and
/// run `xdg-open` (or another viewer on PATH) on it. The child's PATH holds
/// only fake viewers that leave a mark when run, its TMPDIR a folder of its
/// own.
#[test]
fn viewers_are_refused_and_no_program_starts() {
    if in_child() {
        let mut m = Module::from_ir(&one_function("f"), "m.ll").unwrap();
        for text in [
            "view-cfg",
            "view-cfg-only",
            "view-dom",
            "view-dom-only",
            "view-post-dom",
            "function(view-post-dom-only)",
            "view-callgraph",
        ] {
            let e = refused(text, &mut m);
            assert!(e.contains("starts a viewer program"), "{e}");
            assert!(
                e.contains("passlab starts no program it did not build"),
                "{e}"
            );
        }
        let mut s = Session::new();
        s.execute(&format!(":module m --lang llvm\n{}.", one_function("f")))
            .unwrap();
        for line in [
            ":run view-cfg",
            ":run function(view-dom)",
            ":with required=view-cfg",
            ":tune pool=view-cfg trials=1",
        ] {
            let e = s.execute(line).unwrap_err().to_string();
            assert!(e.contains("view-"), "{line}: {e}");
        }
        return;
    }
    let cwd = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mark = cwd.path().join("a-viewer-ran");
    for viewer in ["xdg-open", "open", "xdot", "dot", "gv", "evince", "dotty"] {
        let path = bin.path().join(viewer);
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho {viewer} \"$@\" >> '{}'\n", mark.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // The child's PATH (its shell is named by its full path).
    run_in_child(
        "viewers_are_refused_and_no_program_starts",
        cwd.path(),
        |c| {
            c.env("PATH", bin.path()).env("TMPDIR", tmp.path());
        },
    );
    assert!(
        !mark.exists(),
        "a viewer ran: {}",
        std::fs::read_to_string(&mark).unwrap_or_default()
    );
    let dots: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(dots.is_empty(), "written into TMPDIR: {dots:?}");
}

/// /dev/zero has no end (LLVM read it until the session ran out of
/// memory); a folder, standard input (`-`) and a file over the limit are
/// refused too, before anything is read.
#[test]
fn a_profile_that_is_a_device_a_folder_stdin_or_too_big_is_refused() {
    if in_child() {
        let dir = env_path("PROFILES");
        let big = dir.join("big.prof");
        let mut m = Module::from_ir(&one_function("f"), "m.ll").unwrap();
        let before = m.print();
        let start = Instant::now();
        for (file, says) in [
            ("/dev/zero", "is a character device, not a regular file"),
            ("/dev/stdin", "not a regular file"),
            (dir.to_str().unwrap(), "is a folder"),
            ("-", "standard input"),
            (
                big.to_str().unwrap(),
                "holds 65 MiB; passes may read files of at most 64 MiB",
            ),
            ("no-such.prof", "cannot read 'no-such.prof' (in "),
        ] {
            let text = format!("memprof-use<profile-filename={file}>");
            let e = refused(&text, &mut m);
            assert!(e.contains(says), "{text}: {e}");
        }
        let e = refused("memprof-use", &mut m);
        assert!(e.contains("memprof-use<profile-filename=FILE>"), "{e}");
        let mut s = Session::new();
        s.execute(&format!(":module m --lang llvm\n{}.", one_function("f")))
            .unwrap();
        let e = s
            .execute(":run memprof-use<profile-filename=/dev/zero>")
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
        assert!(start.elapsed() < Duration::from_secs(10));
        assert_eq!(m.print(), before);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let big = std::fs::File::create(dir.path().join("big.prof")).unwrap();
    // Sparse: 65 MiB that take no room.
    big.set_len(65 << 20).unwrap();
    run_in_child(
        "a_profile_that_is_a_device_a_folder_stdin_or_too_big_is_refused",
        dir.path(),
        |c| {
            c.env("PROFILES", dir.path());
        },
    );
}

/// LLVM opened a FIFO and waited for a writer that never came, and Ctrl-C
/// could not stop it: refused before it is opened.
#[test]
fn a_profile_that_is_a_fifo_is_refused_at_once() {
    if in_child() {
        let fifo = env_path("FIFO");
        let mut m = Module::from_ir(&one_function("f"), "m.ll").unwrap();
        let text = format!("memprof-use<profile-filename={}>", fifo.display());
        let e = refused(&text, &mut m);
        assert!(e.contains("is a FIFO, not a regular file"), "{e}");
        // A named pass is checked again when it runs: the FIFO is put where
        // a profile was when it was defined.
        let file = fifo.with_extension("prof");
        std::fs::write(&file, "a profile, for now").unwrap();
        let p =
            pipeline::parse(&format!("memprof-use<profile-filename={}>", file.display())).unwrap();
        std::fs::remove_file(&file).unwrap();
        std::fs::rename(&fifo, &file).unwrap();
        let e = p.apply(&mut m).unwrap_err().to_string();
        assert!(e.contains("is a FIFO"), "{e}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("p.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    run_in_child(
        "a_profile_that_is_a_fifo_is_refused_at_once",
        dir.path(),
        |c| {
            c.env("FIFO", &fifo);
        },
    );
}

/// A regular file is read; one that is no memory profile fails the pass
/// (LLVM's error, which its default handler printed before calling
/// exit(1)), the module is as it was, and the session goes on.
#[test]
fn a_regular_file_is_read_and_a_bad_profile_fails_the_pass_only() {
    if in_child() {
        let file = env_path("PROFILES").join("notes.txt");
        let mut m = Module::from_ir(&one_function("f"), "m.ll").unwrap();
        let before = m.print();
        let text = format!("memprof-use<profile-filename={}>", file.display());
        let p = pipeline::parse(&text).unwrap();
        for _ in 0..2 {
            let e = p.apply(&mut m).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::PassFailed, "{e}");
            assert!(
                e.to_string()
                    .contains("invalid instrumentation profile data (bad magic)"),
                "{e}"
            );
            assert_eq!(m.print(), before);
        }
        pipeline::parse("instcombine")
            .unwrap()
            .apply(&mut m)
            .unwrap();
        let mut s = Session::new();
        s.execute(&format!(":module m --lang llvm\n{}.", one_function("f")))
            .unwrap();
        assert!(s.execute(&format!(":run {text}")).is_err());
        s.execute(":run O2").unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "my notes, not a profile\n").unwrap();
    run_in_child(
        "a_regular_file_is_read_and_a_bad_profile_fails_the_pass_only",
        dir.path(),
        |c| {
            c.env("PROFILES", dir.path());
        },
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "my notes, not a profile\n"
    );
}

/// Passes that read a file named by one of LLVM's hidden options, which no
/// pipeline text can set: they can only fail (pgo-instr-use's and
/// sample-profile's errors ended the session; function-import stops with a
/// fatal error). In a child: the session it ended was this process.
#[test]
fn passes_reading_files_named_by_hidden_options_are_refused() {
    if !in_child() {
        let cwd = tempfile::tempdir().unwrap();
        run_in_child(
            "passes_reading_files_named_by_hidden_options_are_refused",
            cwd.path(),
            |_| {},
        );
        return;
    }
    let mut m = Module::from_ir(&one_function("f"), "m.ll").unwrap();
    for (text, option) in [
        ("pgo-instr-use", "-pgo-test-profile-file"),
        ("sample-profile", "-sample-profile-file"),
        ("function-import", "-summary-file"),
    ] {
        let e = refused(text, &mut m);
        assert!(
            e.contains(option) && e.contains("no pipeline text can set"),
            "{e}"
        );
    }
    // A pass that only prints, to standard error, runs.
    pipeline::parse("print<domtree>")
        .unwrap()
        .apply(&mut m)
        .unwrap();
}
