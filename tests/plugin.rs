//! LLVM pass plugins (`registry::load_plugin`, `:plugin`): a small plugin,
//! built here with clang++-19 against LLVM 19's headers
//! (tests/plugin/strength_plugin.cpp), loaded as `opt -load-pass-plugin`
//! loads one; its passes run by name and inside LLVM's default pipelines,
//! and instruments see them under their names.

use passlab::instrument::Counts;
use passlab::registry::{self, Origin, PassKind};
use passlab::{llvm::IrUnit, pipeline, Module, PassContext};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;
use std::sync::OnceLock;

/// tests/plugin/NAME.cpp built with clang++-19 into target/test-plugin
/// (scripts/test-plugin.sh, which keeps the build in the user's cache).
fn build(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = root.join(format!("target/test-plugin/core-{name}.so"));
    let status = Command::new("sh")
        .arg(root.join("scripts/test-plugin.sh"))
        .arg(name)
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "clang++-19 could not build {name}.cpp");
    out
}

/// Builds the plugin once and loads it into this process.
fn plugin() -> &'static PathBuf {
    static PLUGIN: OnceLock<PathBuf> = OnceLock::new();
    PLUGIN.get_or_init(|| {
        let out = build("strength_plugin");
        let found = registry::load_plugin(&out).unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|e| (e.name.as_str(), e.kind.clone()))
            .collect();
        assert_eq!(
            names,
            [
                (
                    "plugin-strength-reduce",
                    PassKind::Llvm {
                        unit: IrUnit::Function,
                        params: None
                    }
                ),
                (
                    "plugin-tag",
                    PassKind::Llvm {
                        unit: IrUnit::Module,
                        params: None
                    }
                ),
            ]
        );
        out
    })
}

const SOURCE: &str = "int f(int x) { return x * 8 + x * 3; }";

#[test]
fn plugin_passes_join_the_registry_and_run_by_name() {
    let path = plugin();
    let entry = registry::passes()
        .into_iter()
        .find(|e| e.name == "plugin-strength-reduce")
        .unwrap();
    assert_eq!(
        entry.origin,
        Origin::Plugin(path.canonicalize().unwrap().display().to_string())
    );
    let mut m = Module::from_c(SOURCE, "f.c").unwrap();
    pipeline::parse("mem2reg,plugin-strength-reduce")
        .unwrap()
        .apply(&mut m)
        .unwrap();
    let f = m.print_function("f").unwrap();
    assert!(f.contains("shl i32 %x, 3"), "{f}");
    assert!(f.contains("mul nsw i32 %x, 3"), "{f}");
    // Loading it again is refused (its callbacks would be registered twice).
    let again = registry::load_plugin(path).unwrap_err().to_string();
    assert!(again.contains("is loaded already"), "{again}");
}

#[test]
fn instruments_see_plugin_passes_inside_llvm_pipelines() {
    plugin();
    let counts = Rc::new(Counts::new());
    let mut m = Module::from_c(SOURCE, "f.c").unwrap();
    {
        let _scope = PassContext::inherit()
            .with_instrument(counts.clone())
            .enter()
            .unwrap();
        // The plugin adds its tagging pass at the start of the default
        // pipelines (an extension point): LLVM runs it, passlab sees it.
        pipeline::parse("default<O2>")
            .unwrap()
            .apply(&mut m)
            .unwrap();
        pipeline::parse("function(plugin-strength-reduce)")
            .unwrap()
            .apply(&mut m)
            .unwrap();
    }
    let rows = counts.rows();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r.name == name)
            .map(|r| (r.ran, r.changed))
    };
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(row("plugin-tag"), Some((1, 1)), "{names:?}");
    // default<O2> already turned the multiplication into a shift.
    assert_eq!(row("plugin-strength-reduce"), Some((1, 0)), "{names:?}");
    assert!(m.print().contains("\"plugin-was-here\""));
}

#[test]
fn a_file_that_is_not_a_plugin_is_an_error() {
    let bad = std::env::temp_dir().join(format!("not-a-plugin-{}.so", std::process::id()));
    std::fs::write(&bad, b"not a shared object").unwrap();
    let e = registry::load_plugin(&bad).unwrap_err().to_string();
    assert!(e.starts_with("cannot load LLVM pass plugin"), "{e}");
    std::fs::remove_file(&bad).unwrap();
}

/// Builds tests/plugin/crashing_plugin.cpp once and loads it into this
/// process (as `:plugin` does: once per process): passes that crash on a
/// function named `boom`.
fn crashing() -> &'static PathBuf {
    static PLUGIN: OnceLock<PathBuf> = OnceLock::new();
    PLUGIN.get_or_init(|| {
        let out = build("crashing_plugin");
        let found = registry::load_plugin(&out).unwrap();
        let names: Vec<_> = found.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["crash-abort", "crash-overflow", "crash-segv"]);
        out
    })
}

/// A session with the crashing plugin's passes and a module `m` with
/// `boom` (which they crash on) and `fine`.
fn crashing_session() -> passlab::session::Session {
    crashing();
    let mut s = passlab::session::Session::new();
    s.execute(
        ":module m --lang c\nint boom(int x) { return x * 3; }\nint fine(int x) { return x + 1; }\n.",
    )
    .unwrap();
    s
}

fn run(s: &mut passlab::session::Session, line: &str) -> Result<String, String> {
    s.execute(line).map(|o| o.text()).map_err(|e| e.to_string())
}

/// A plugin pass that crashes — a null pointer, abort(), a stack overflow
/// — ends the run, not the session: each is an error naming the pass and
/// the function, the module is as it was before, and the session goes on
/// (instruments included) as often as it happens.
#[test]
fn a_crashing_plugin_pass_leaves_the_session_as_it_was() {
    use passlab::session::Session;
    let mut s = crashing_session();
    let run = |s: &mut Session, line: &str| s.execute(line).map(|o| o.text());
    run(&mut s, ":instrument timing ir-size").unwrap();
    let before = run(&mut s, ":show").unwrap();
    for (pass, what) in [
        ("crash-segv", "SIGSEGV"),
        ("crash-abort", "SIGABRT"),
        ("crash-overflow", "SIGSEGV"),
        ("crash-segv", "SIGSEGV"),
    ] {
        let e = run(&mut s, &format!(":run mem2reg,{pass},instcombine"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("the pass '{pass}' crashed on function 'boom'"))
                && e.contains(what),
            "{e}"
        );
        // One line says how to keep a reproducer.
        assert!(
            e.contains(&format!(
                "\n:run mem2reg,{pass},instcombine --out DIR writes a reproducer"
            )),
            "{e}"
        );
        assert_eq!(run(&mut s, ":show").unwrap(), before, "after {pass}");
    }
    // The session goes on: passes run, instruments report them.
    run(&mut s, ":run O2").unwrap();
    let report = run(&mut s, ":report timing").unwrap();
    assert!(report.contains("instcombine"), "{report}");
    let after = run(&mut s, ":show").unwrap();
    assert!(
        after.contains("@boom") && !after.contains("alloca"),
        "{after}"
    );
}

/// Every other command that runs a pipeline the user names runs plugin
/// passes too, in the session (`:explore run=`, `:bench`, `:bisect`, a
/// `:pass` of them) or in a child (`:tune`'s trials): a crash there is an
/// error, or a failed trial, that names the pass and the function, and the
/// module is as it was.
#[test]
fn a_crashing_plugin_pass_leaves_every_command_that_runs_pipelines_intact() {
    let mut s = crashing_session();
    let before = run(&mut s, ":show").unwrap();
    let names = |e: &str, pass: &str| {
        assert!(
            e.contains(&format!("the pass '{pass}' crashed on function 'boom'")),
            "{e}"
        )
    };
    // :explore run=PIPELINE records nothing of a run that crashed.
    let e = run(&mut s, ":explore run=mem2reg,crash-segv").unwrap_err();
    names(&e, "crash-segv");
    assert!(e.contains(":run mem2reg,crash-segv --out DIR"), "{e}");
    assert_eq!(run(&mut s, ":show").unwrap(), before, ":explore");
    let e = run(&mut s, ":explore").unwrap_err();
    assert!(e.contains("no run recorded yet"), "{e}");
    // :bench, on copies of the module.
    let e = run(&mut s, ":bench fine 1 | O1 | mem2reg,crash-abort").unwrap_err();
    names(&e, "crash-abort");
    assert_eq!(run(&mut s, ":show").unwrap(), before, ":bench");
    // :bisect: the crash comes before any result to compare.
    let e = run(&mut s, ":bisect fine 1 | mem2reg,crash-overflow").unwrap_err();
    names(&e, "crash-overflow");
    assert_eq!(run(&mut s, ":show").unwrap(), before, ":bisect");
    // A :pass made of them, run by its name.
    run(&mut s, ":pass boomer = mem2reg,crash-segv").unwrap();
    let e = run(&mut s, ":run boomer").unwrap_err();
    names(&e, "crash-segv");
    assert_eq!(run(&mut s, ":show").unwrap(), before, ":run boomer");
    // :tune: the trials that crash fail, naming the pass; the search goes
    // on with a new child and finds the orderings that do not crash.
    let t = run(
        &mut s,
        ":tune fine 1 pool=mem2reg,instcombine,crash-segv length=1..2 trials=8 seed=2",
    )
    .unwrap();
    assert!(t.contains("failed: "), "{t}");
    names(&t, "crash-segv");
    assert!(t.contains("mem2reg"), "{t}");
    assert_eq!(run(&mut s, ":show").unwrap(), before, ":tune");
    // And the session goes on.
    let o = run(&mut s, ":tune apply").unwrap();
    assert!(o.contains("ran "), "{o}");
    assert!(!run(&mut s, ":show").unwrap().contains("alloca"));
}

/// A new folder for one test, under the target folder.
fn test_folder(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("plugin-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The files under `dir` (not in folders), by name, with their bytes.
fn files_in(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap_or_default(),
            )
        })
        .collect()
}

/// `:run PIPELINE --out DIR`: when a pass crashes, a reproducer in a
/// folder passlab makes — the module as it was (`input.ll`), the context,
/// the plugin and the pipeline (`repro.plab`), `repro.sh`, which shows
/// the crash with opt-19 alone, and a README — and the error says where
/// and how to shrink it; the user's files stay as they are.
#[test]
fn a_crash_under_run_out_leaves_a_reproducer_that_opt_shows() {
    let so = crashing().canonicalize().unwrap();
    let cwd = test_folder("repro");
    std::fs::write(cwd.join("notes.txt"), "mine\n").unwrap();
    let mut s = crashing_session();
    run(&mut s, ":with disabled=licm").unwrap();
    let before = run(&mut s, ":show").unwrap();
    let dir = cwd.join("crash");
    let line = format!(":run mem2reg,crash-segv --out {}", dir.display());
    let e = run(&mut s, &line).unwrap_err();
    assert!(
        e.contains("the pass 'crash-segv' crashed on function 'boom'"),
        "{e}"
    );
    assert!(
        e.contains(&format!(
            "reproducer in {}: input.ll, README.md, repro.plab, repro.sh; sh repro.sh shows the bug",
            dir.display()
        )),
        "{e}"
    );
    assert!(
        e.contains(&format!(
            "to shrink it: :reduce fails mem2reg,crash-segv --out {}-reduced",
            dir.display()
        )),
        "{e}"
    );
    assert!(!e.contains("--out DIR writes"), "{e}");
    assert_eq!(run(&mut s, ":show").unwrap(), before);
    let made = files_in(&dir);
    assert_eq!(
        made.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            ".passlab-folder",
            "README.md",
            "input.ll",
            "repro.plab",
            "repro.sh"
        ]
    );
    let text = |f: &str| String::from_utf8(made[f].clone()).unwrap();
    // The module as it was before the command: mem2reg had not run.
    let input = Module::from_ir(&text("input.ll"), "input.ll").unwrap();
    assert!(input.print().contains("alloca"));
    assert_eq!(input.defined_functions(), ["boom", "fine"]);
    let plab = text("repro.plab");
    assert!(plab.contains(":load input.ll\n"), "{plab}");
    assert!(
        plab.contains(&format!(":plugin {}\n", so.display())),
        "{plab}"
    );
    assert!(plab.contains("disabled=licm"), "{plab}");
    assert!(plab.ends_with(":run mem2reg,crash-segv\n"), "{plab}");
    let readme = text("README.md");
    assert!(
        readme.contains("crashed on function 'boom'")
            && readme.contains(":reduce fails mem2reg,crash-segv"),
        "{readme}"
    );
    let sh = text("repro.sh");
    assert!(
        sh.contains(&format!("-load-pass-plugin={}", so.display())),
        "{sh}"
    );
    // repro.sh shows the crash with opt-19 alone, and leaves nothing behind.
    let o = Command::new("sh")
        .arg(dir.join("repro.sh"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{said}");
    assert!(said.contains("opt-19 shows the bug"), "{said}");
    assert_eq!(files_in(&dir), made);
    // The same command again (a cell run again) replaces what it wrote.
    let e = run(&mut s, &line).unwrap_err();
    assert!(e.contains("reproducer in"), "{e}");
    assert_eq!(
        files_in(&dir).keys().collect::<Vec<_>>(),
        made.keys().collect::<Vec<_>>()
    );
    // Another job's folder is refused before anything runs.
    let kept = files_in(&dir);
    let e = run(
        &mut s,
        &format!(":run mem2reg,crash-abort --out {}", dir.display()),
    )
    .unwrap_err();
    assert!(e.contains("was made by another job"), "{e}");
    assert!(!e.contains("crashed"), "{e}");
    assert_eq!(files_in(&dir), kept);
    // A run that does not crash gives back the folder it made.
    let calm = cwd.join("calm");
    let o = run(&mut s, &format!(":run mem2reg --out {}", calm.display())).unwrap();
    assert!(
        o.contains(&format!(
            "no pass crashed: nothing written to {}",
            calm.display()
        )),
        "{o}"
    );
    assert!(!calm.exists());
    run(&mut s, ":undo").unwrap();
    assert_eq!(run(&mut s, ":show").unwrap(), before);
    // Nothing else in the folder changed.
    assert_eq!(
        std::fs::read_to_string(cwd.join("notes.txt")).unwrap(),
        "mine\n"
    );
    let names: Vec<String> = files_in(&cwd).into_keys().collect();
    assert_eq!(names, ["crash", "notes.txt"]);
}

/// `--out` takes a folder passlab makes: a file, or a folder of the user's
/// files, is refused before the pipeline runs, and stays as it was.
#[test]
fn run_out_refuses_what_passlab_did_not_make() {
    let cwd = test_folder("refused");
    let mut s = crashing_session();
    let before = run(&mut s, ":show").unwrap();
    let file = cwd.join("file.txt");
    std::fs::write(&file, "mine\n").unwrap();
    let e = run(&mut s, &format!(":run crash-segv --out {}", file.display())).unwrap_err();
    assert!(e.contains("is a file, not a folder"), "{e}");
    assert!(!e.contains("crashed"), "it ran first: {e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
    let mine = cwd.join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("README.md"), "# mine\n").unwrap();
    std::fs::write(mine.join("input.ll"), "; mine\n").unwrap();
    let theirs = files_in(&mine);
    let e = run(&mut s, &format!(":run crash-segv --out {}", mine.display())).unwrap_err();
    assert!(
        e.contains("holds files passlab did not write (README.md, input.ll)")
            && e.contains("replace=yes"),
        "{e}"
    );
    assert!(!e.contains("crashed"), "it ran first: {e}");
    assert_eq!(files_in(&mine), theirs);
    // replace=yes writes beside them, but never over one of them.
    let e = run(
        &mut s,
        &format!(":run crash-segv --out {} replace=yes", mine.display()),
    )
    .unwrap_err();
    assert!(e.contains("the pass 'crash-segv' crashed"), "{e}");
    assert!(
        e.contains("no reproducer written") && e.contains("was there before"),
        "{e}"
    );
    assert_eq!(files_in(&mine).get("README.md"), theirs.get("README.md"));
    assert_eq!(files_in(&mine).get("input.ll"), theirs.get("input.ll"));
    // The words around it.
    let e = run(&mut s, ":run crash-segv --out").unwrap_err();
    assert!(e.contains("--out expects a folder"), "{e}");
    let e = run(&mut s, ":run crash-segv replace=yes").unwrap_err();
    assert!(e.contains("replace= goes with --out"), "{e}");
    assert_eq!(run(&mut s, ":show").unwrap(), before);
}
