//! The kernelspec: `kernels/passlab/kernel.json` (this executable, the
//! connection file, `interrupt_mode: message`) and the logos, where
//! `jupyter kernelspec list` looks.

use anyhow::Context;
use std::path::{Path, PathBuf};

/// Where to install.
pub enum Target {
    /// The user's Jupyter data directory.
    User,
    /// `sys.prefix` of the `python3` on PATH (a virtualenv when one is active).
    SysPrefix,
    /// `DIR/share/jupyter/kernels`.
    Prefix(PathBuf),
}

/// The user's Jupyter data directory, as jupyter_core finds it on Linux.
fn user_data_dir() -> anyhow::Result<PathBuf> {
    if let Some(d) = std::env::var_os("JUPYTER_DATA_DIR") {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_DATA_HOME") {
        return Ok(PathBuf::from(d).join("jupyter"));
    }
    let home = std::env::var_os("HOME").context("HOME is not set")?;
    Ok(PathBuf::from(home).join(".local/share/jupyter"))
}

fn sys_prefix() -> anyhow::Result<PathBuf> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.prefix)"])
        .output()
        .context("cannot run python3 to find sys.prefix")?;
    anyhow::ensure!(out.status.success(), "python3 could not print sys.prefix");
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The kernel.json for the executable at `exe`.
pub fn kernel_json(exe: &Path) -> serde_json::Value {
    serde_json::json!({
        "argv": [exe.display().to_string(), "--connection-file", "{connection_file}"],
        "display_name": "passlab",
        "language": "passlab",
        "interrupt_mode": "message",
        "env": {},
        "metadata": {"debugger": false}
    })
}

/// Writes the kernelspec; returns its directory.
pub fn install(target: Target) -> anyhow::Result<PathBuf> {
    let kernels = match target {
        Target::User => user_data_dir()?.join("kernels"),
        Target::SysPrefix => sys_prefix()?.join("share/jupyter/kernels"),
        Target::Prefix(p) => p.join("share/jupyter/kernels"),
    };
    let dir = kernels.join("passlab");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let exe = std::env::current_exe()
        .and_then(|e| e.canonicalize())
        .context("cannot find this executable")?;
    let json = serde_json::to_string_pretty(&kernel_json(&exe))?;
    replace(&dir.join("kernel.json"), (json + "\n").as_bytes())?;
    for size in [32, 64] {
        let png = passlab::chart::logo_png(size)?;
        replace(&dir.join(format!("logo-{size}x{size}.png")), &png)?;
    }
    replace(
        &dir.join("logo-svg.svg"),
        passlab::chart::logo_svg()?.as_bytes(),
    )?;
    Ok(dir)
}

/// Writes `path` whole or not at all (a file beside it, renamed over it):
/// Jupyter reads a kernelspec whenever it lists or starts kernels, and one
/// that reads it mid-write would take it for broken.
fn replace(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernelspec_names_this_executable_and_message_interrupts() {
        let j = kernel_json(Path::new("/opt/bin/passlab-kernel"));
        assert_eq!(j["argv"][0], "/opt/bin/passlab-kernel");
        assert_eq!(j["argv"][2], "{connection_file}");
        assert_eq!(j["interrupt_mode"], "message");
        assert_eq!(j["language"], "passlab");
    }

    #[test]
    fn install_under_a_prefix_writes_json_and_logos() {
        let prefix = std::env::temp_dir().join(format!("passlab-kspec-{}", std::process::id()));
        let dir = install(Target::Prefix(prefix.clone())).unwrap();
        assert_eq!(dir, prefix.join("share/jupyter/kernels/passlab"));
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("kernel.json")).unwrap())
                .unwrap();
        assert_eq!(j["display_name"], "passlab");
        assert!(std::fs::read(dir.join("logo-64x64.png"))
            .unwrap()
            .starts_with(b"\x89PNG"));
        let svg = std::fs::read_to_string(dir.join("logo-svg.svg")).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("pl\n</text>") || svg.contains(">pl</text>"),
            "{svg}"
        );
        std::fs::remove_dir_all(prefix).unwrap();
    }
}
