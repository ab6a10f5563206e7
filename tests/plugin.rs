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

/// Builds tests/plugin/NAME.cpp with clang++-19 into target/test-plugin.
fn build(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = root.join(format!("target/test-plugin/core-{name}.so"));
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let bindir = Path::new(env!("PASSLAB_LLVM_BINDIR"));
    let flags = Command::new(bindir.join("llvm-config"))
        .arg("--cxxflags")
        .output()
        .unwrap();
    let status = Command::new(bindir.join("clang++"))
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(root.join(format!("tests/plugin/{name}.cpp")))
        .args(String::from_utf8(flags.stdout).unwrap().split_whitespace())
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

/// A plugin pass that crashes — a null pointer, abort(), a stack overflow
/// — ends the run, not the session: each is an error naming the pass and
/// the function, the module is as it was before, and the session goes on
/// (instruments included) as often as it happens.
#[test]
fn a_crashing_plugin_pass_leaves_the_session_as_it_was() {
    use passlab::session::Session;
    let so = build("crashing_plugin");
    let mut s = Session::new();
    let run = |s: &mut Session, line: &str| s.execute(line).map(|o| o.text());
    run(&mut s, &format!(":plugin {}", so.display())).unwrap();
    run(
        &mut s,
        ":module m --lang c\nint boom(int x) { return x * 3; }\nint fine(int x) { return x + 1; }\n.",
    )
    .unwrap();
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
