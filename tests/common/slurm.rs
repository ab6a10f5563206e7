//! A one-node Slurm cluster for a test or a bench (deploy/slurm/local-cluster.sh),
//! on ports free when it starts, and stopped by its pids when dropped, the
//! test passed or not: a cluster left behind by a failing run would hold
//! its ports and fail every later run that picked the same ones.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Cluster {
    /// Its folder: state, logs, pid files (and the tasks' output, where
    /// the caller puts it).
    pub dir: PathBuf,
    /// The SLURM_CONF that Slurm's commands are given.
    pub conf: String,
    /// deploy/slurm/local-cluster.sh, which stops it.
    script: PathBuf,
}

/// Two TCP ports on 127.0.0.1 that were free a moment ago (the system
/// chose them; both held at once, so they differ).
fn free_ports() -> (u16, u16) {
    let a = TcpListener::bind("127.0.0.1:0").expect("bind a port on 127.0.0.1");
    let b = TcpListener::bind("127.0.0.1:0").expect("bind a port on 127.0.0.1");
    (
        a.local_addr().expect("its address").port(),
        b.local_addr().expect("its address").port(),
    )
}

impl Cluster {
    /// Brings the cluster up in `dir` with the repository's script
    /// (`root`: the repository); panics, with the script's output, if it
    /// does not come up.
    pub fn up(root: &Path, dir: &Path) -> Cluster {
        let (ctld, slurmd) = free_ports();
        let script = root.join("deploy/slurm/local-cluster.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg("up")
            .arg(dir)
            .env("SLURMCTLD_PORT", ctld.to_string())
            .env("SLURMD_PORT", slurmd.to_string())
            .output()
            .expect("run local-cluster.sh");
        // The pid files are there even when the script failed half-way:
        // the guard stops what did start.
        let mut cluster = Cluster {
            dir: dir.to_path_buf(),
            conf: String::new(),
            script,
        };
        let conf = String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("SLURM_CONF=").map(str::to_string));
        match conf {
            Some(conf) if out.status.success() => cluster.conf = conf,
            _ => panic!(
                "the one-node Slurm cluster did not come up on ports {ctld} and {slurmd} (is Slurm installed? bash scripts/passlab.sh test installs it):\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
        cluster
    }

    /// A command of Slurm's (sbatch, squeue, ...) aimed at this cluster.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(&self.script)
            .arg("down")
            .arg(&self.dir)
            .status();
    }
}
