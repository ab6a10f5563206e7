//! The `passlab-kernel` command line: install writes a kernelspec that
//! names this executable; a missing or malformed connection file is a clear
//! error, not a hang. (The protocol itself is tested through Jupyter's own
//! client: kernel/tests/jupyter/, run by `scripts/passlab.sh test`, which
//! uses the binary this test builds.)

use std::process::Command;

fn kernel() -> Command {
    Command::new(env!("CARGO_BIN_EXE_passlab-kernel"))
}

#[test]
fn install_writes_a_kernelspec_naming_this_executable() {
    let prefix = std::env::temp_dir().join(format!("passlab-kernel-cli-{}", std::process::id()));
    let out = kernel()
        .args(["install", "--prefix"])
        .arg(&prefix)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spec = prefix.join("share/jupyter/kernels/passlab/kernel.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&spec).unwrap()).unwrap();
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_passlab-kernel")).unwrap();
    assert_eq!(json["argv"][0], exe.display().to_string());
    assert_eq!(json["interrupt_mode"], "message");
    std::fs::remove_dir_all(prefix).unwrap();
}

#[test]
fn bad_connection_files_are_clear_errors() {
    let out = kernel().output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--connection-file"));

    let bad = std::env::temp_dir().join(format!("passlab-kernel-bad-{}.json", std::process::id()));
    std::fs::write(&bad, "{\"ip\": 1}").unwrap();
    let out = kernel()
        .arg("--connection-file")
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a connection file"), "{err}");
    std::fs::remove_file(bad).unwrap();
}
