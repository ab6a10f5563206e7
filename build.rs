//! Compiles the C++ shim (`shim/*.cpp`: the runner, JIT symbol queries, fingerprints, the printer, clang, the machine-code layer, remarks, LTO) against LLVM 19
//! and clang 19, and tells the crate where LLVM's tools live.
use std::process::Command;

fn llvm_config(arg: &str) -> String {
    let prefix = std::env::var("LLVM_SYS_191_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-19".into());
    let exe = format!("{prefix}/bin/llvm-config");
    let out = Command::new(&exe)
        .arg(arg)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {exe} (install llvm-19-dev; see README): {e}"));
    assert!(out.status.success(), "{exe} {arg} failed");
    String::from_utf8(out.stdout)
        .expect("llvm-config prints UTF-8")
        .trim()
        .to_string()
}

fn main() {
    println!("cargo:rerun-if-changed=shim/shim.cpp");
    println!("cargo:rerun-if-changed=shim/shim.h");
    println!("cargo:rerun-if-changed=shim/hash.h");
    println!("cargo:rerun-if-changed=shim/jit_symbols.cpp");
    println!("cargo:rerun-if-changed=shim/fingerprint.cpp");
    println!("cargo:rerun-if-changed=shim/printer.cpp");
    println!("cargo:rerun-if-changed=shim/clang.cpp");
    println!("cargo:rerun-if-changed=shim/mc.cpp");
    println!("cargo:rerun-if-changed=shim/remarks.cpp");
    println!("cargo:rerun-if-changed=shim/lto.cpp");
    println!("cargo:rerun-if-changed=shim/guard.h");
    println!("cargo:rerun-if-env-changed=LLVM_SYS_191_PREFIX");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file("shim/shim.cpp")
        .file("shim/jit_symbols.cpp")
        .file("shim/fingerprint.cpp")
        .file("shim/printer.cpp")
        .file("shim/clang.cpp")
        .file("shim/mc.cpp")
        .file("shim/remarks.cpp")
        .file("shim/lto.cpp")
        .warnings(false);
    for flag in llvm_config("--cxxflags").split_whitespace() {
        // cc adds its own optimisation level and debug flags.
        if flag.starts_with("-O") || flag == "-g" {
            continue;
        }
        build.flag(flag);
    }
    build.flag("-DNDEBUG").flag("-O2");
    build.compile("passlab_shim");
    println!("cargo:rustc-link-search=native={}", llvm_config("--libdir"));
    // clang's driver and front end, for C and C++ in process
    // (libclang-cpp19-dev; its headers come with libclang-19-dev).
    println!("cargo:rustc-link-lib=dylib=clang-cpp");
    println!("cargo:rustc-link-lib=dylib=LLVM-19");
    println!(
        "cargo:rustc-env=PASSLAB_LLVM_BINDIR={}",
        llvm_config("--bindir")
    );
}
