//! A real program through the JIT: Lua 5.4 (32 C files no one here wrote,
//! from the lua-src crate) and a small driver, linked into one module with
//! `:load`, called after O0, O2 and O3, with results equal to a native
//! `clang-19 -O2` build of the same sources. Lua's interpreter loop
//! (`luaV_execute` in lvm.c) dispatches with computed goto under clang:
//! the module is checked to contain it.

mod common;

use common::{cache, inputs};
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
    let mut sources = inputs::lua_files();
    sources.push(main);
    cache::native_build(
        &std::path::Path::new(env!("PASSLAB_LLVM_BINDIR")).join("clang"),
        &["-O2", &format!("-I{}", inputs::lua_dir().display())],
        &sources,
        &["-lm"],
        &exe,
    );
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

/// Builds `sources` with clang++-19 (`-O0 -std=c++17 -w`, as libfuzzer-sys
/// builds libFuzzer) into `exe`.
fn native_cxx(sources: &[std::path::PathBuf], exe: &std::path::Path) {
    cache::native_build(
        &std::path::Path::new(env!("PASSLAB_LLVM_BINDIR")).join("clang++"),
        &["-O0", "-std=c++17", "-w"],
        sources,
        &["-lpthread"],
        exe,
    );
}

/// The same program run natively and by `:exec` (the JIT at O0 here):
/// exit status, standard output and error equal, the program's own name
/// (argv[0], which differs) written PROGRAM in both, and times masked.
fn same_as_native(sources: &[std::path::PathBuf], exe: &std::path::Path, runs: &[Vec<String>]) {
    native_cxx(sources, exe);
    let m = passlab::Module::load(
        &sources
            .iter()
            .map(|f| {
                passlab::module::Source::file(f)
                    .unwrap()
                    .clang_args(["-std=c++17", "-w"])
            })
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let jit = passlab::jit::Jit::new(&m, 0).unwrap();
    let first = sources[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for args in runs {
        let native = Command::new(exe).args(args).output().unwrap();
        let ours = jit
            .exec(&passlab::jit::Program {
                args: args.clone(),
                stdin: passlab::jit::Stdin::Null,
            })
            .unwrap();
        // libFuzzer says how long each input took ("Executed in1 in 0 ms"):
        // the milliseconds are the machine's.
        let mask = |text: &str, name: &str| {
            let text = text.replace(name, "PROGRAM");
            text.lines()
                .map(|l| match l.rsplit_once(" in ") {
                    Some((head, ms)) if l.starts_with("Executed ") && ms.ends_with(" ms") => {
                        format!("{head} in _ ms\n")
                    }
                    _ => format!("{l}\n"),
                })
                .collect::<String>()
        };
        let exe_name = exe.display().to_string();
        assert_eq!(Some(ours.status), native.status.code(), "{args:?}");
        assert_eq!(
            mask(&ours.stdout, &first),
            mask(&String::from_utf8_lossy(&native.stdout), &exe_name),
            "standard output of {args:?}"
        );
        assert_eq!(
            mask(&ours.stderr, &first),
            mask(&String::from_utf8_lossy(&native.stderr), &exe_name),
            "standard error of {args:?}"
        );
    }
}

/// A C++ program's runtime in the JIT, compared with the program built
/// natively: global objects constructed before `main` and destroyed after
/// it (through `__cxa_atexit`, interleaved with `atexit` handlers), C's
/// prioritized constructors and destructors, exceptions thrown and caught
/// across functions, iostreams, a `thread_local` variable (emulated TLS in
/// the JIT), `exit()` from inside.
#[test]
fn a_cxx_programs_runtime_works_as_natively() {
    let dir = std::env::temp_dir().join(format!("passlab-cxx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let main = dir.join("runtime.cpp");
    std::fs::write(
        &main,
        r#"#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

struct Noisy {
    std::string name;
    explicit Noisy(const char *n) : name(n) { std::cout << "construct " << name << "\n"; }
    ~Noisy() { std::cout << "destroy " << name << std::endl; }
};

static Noisy first_global("first");
thread_local int calls = 100;
static Noisy second_global("second");

__attribute__((constructor(101))) static void early() { std::printf("constructor 101\n"); }
__attribute__((destructor(101))) static void late() { std::printf("destructor 101\n"); }
static void handler() { std::printf("atexit handler\n"); }

static int parse(const std::string &s) {
    ++calls;
    if (s.empty()) throw std::invalid_argument("an empty word");
    return std::stoi(s);
}

int main(int argc, char **argv) {
    std::atexit(handler);
    static Noisy local_static("local static");
    std::map<std::string, int> seen;
    for (const char *w : {"7", "", "35", "x"}) {
        try {
            seen[w] = parse(w);
            std::cout << "parsed '" << w << "' = " << seen[w] << "\n";
        } catch (const std::invalid_argument &e) {
            std::cerr << "caught " << e.what() << "\n";
        }
    }
    std::cout << "calls " << calls << ", argc " << argc << std::endl;
    if (argc > 1) std::exit(std::atoi(argv[1]));
    return static_cast<int>(seen.size());
}
"#,
    )
    .unwrap();
    same_as_native(
        &[main],
        &dir.join("runtime"),
        &[vec![], vec!["5".to_string()]],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A whole C++ program no one here wrote, with its runtime: libFuzzer (26
/// files from libfuzzer-sys, linked into one module with a fuzz target)
/// run by `:exec` on two inputs (one the target rejects) and with
/// `-help=1`, its output equal to the natively built fuzzer's.
#[test]
fn libfuzzer_runs_through_the_jit_as_natively() {
    let dir = std::env::temp_dir().join(format!("passlab-libfuzzer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("target.cpp");
    std::fs::write(
        &target,
        "#include <stddef.h>\n#include <stdint.h>\n\
         extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {\n\
         \x20 return n > 2 && d[0] == 'h' && d[1] == 'i' && d[2] == '!' ? -1 : 0;\n}\n",
    )
    .unwrap();
    let (a, b) = (dir.join("in1"), dir.join("in2"));
    std::fs::write(&a, "hello\n").unwrap();
    std::fs::write(&b, "hi!").unwrap();
    let mut sources = vec![target];
    sources.extend(inputs::libfuzzer_sources());
    assert!(sources.len() > 20, "{sources:?}");
    let path = |p: &std::path::Path| p.display().to_string();
    same_as_native(
        &sources,
        &dir.join("fuzzer"),
        &[
            vec!["-seed=1".into(), path(&a), path(&b)],
            vec!["-help=1".into()],
        ],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
