//! A real program through the JIT: Lua 5.4 (32 C files no one here wrote,
//! from the lua-src crate) and a small driver, linked into one module with
//! `:load`, called after O0, O2 and O3, with results equal to a native
//! `clang-19 -O2` build of the same sources. Lua's interpreter loop
//! (`luaV_execute` in lvm.c) dispatches with computed goto under clang:
//! the module is checked to contain it.

mod common;

use common::inputs;
use passlab::session::Session;
use std::process::Command;

/// (program, argument) pairs the driver runs: recursion, tables, strings,
/// sorting with closures, coroutines, pcall/error (longjmp), math.
const RUNS: &[(i32, i64)] = &[
    (0, 22),
    (1, 20000),
    (2, 2000),
    (3, 3000),
    (4, 500),
    (5, 21),
    (6, 5000),
];

/// The results of a native build: clang-19 -O2, the same sources, a main
/// that prints `lua_run(p, a)` for each run.
fn native() -> Vec<i64> {
    let dir = std::env::temp_dir().join(format!("passlab-lua-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let main = dir.join("main.c");
    let mut text = String::from("#include <stdio.h>\nlong lua_run(int, long);\nint main(void) {\n");
    for (p, a) in RUNS {
        text.push_str(&format!("  printf(\"%ld\\n\", lua_run({p}, {a}));\n"));
    }
    text.push_str("  return 0;\n}\n");
    std::fs::write(&main, text).unwrap();
    let exe = dir.join("lua-driver");
    let status = Command::new(std::path::Path::new(env!("PASSLAB_LLVM_BINDIR")).join("clang"))
        .arg("-O2")
        .arg(format!("-I{}", inputs::lua_dir().display()))
        .args(inputs::lua_files())
        .arg(&main)
        .args(["-lm", "-o"])
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success(), "the native build failed");
    let out = Command::new(&exe).output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// `lua_run(p, a) = N` → N.
fn value(text: &str) -> i64 {
    text.lines()
        .find_map(|l| l.split_once(") = ").map(|(_, v)| v.trim().parse().unwrap()))
        .unwrap_or_else(|| panic!("no result in {text}"))
}

#[test]
fn lua_runs_through_the_jit_as_natively_at_o0_o2_o3() {
    let expected = native();
    assert_eq!(expected.len(), RUNS.len());
    assert!(
        expected.iter().all(|v| *v >= 0),
        "native results: {expected:?}"
    );

    let files: Vec<String> = inputs::lua_files()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert!(files.len() >= 15);
    let mut s = Session::new();
    let loaded = s
        .execute(&format!(
            ":load {} as lua cflags=-I{}",
            files.join(" "),
            inputs::lua_dir().display()
        ))
        .unwrap()
        .text();
    assert!(loaded.starts_with("module lua: "), "{loaded}");
    // The interpreter loop is a computed-goto dispatch (lvm.c's jump table).
    let vm = s.execute(":show luaV_execute").unwrap().text();
    assert!(
        vm.contains("indirectbr ptr"),
        "luaV_execute has no computed goto"
    );

    for level in ["O0", "O2", "O3"] {
        s.execute(&format!(":use lua\n:copy lua-{level}\n:run {level}"))
            .unwrap();
        for ((p, a), want) in RUNS.iter().zip(&expected) {
            let out = s
                .execute(&format!(":call lua_run {p} {a}"))
                .unwrap_or_else(|e| panic!("{level}: lua_run({p}, {a}): {e}"));
            assert_eq!(value(&out.text()), *want, "{level}: lua_run({p}, {a})");
        }
    }
}
