//! `passlab-kernel`: the passlab command language as a Jupyter kernel.
//!
//! `passlab-kernel install [--user | --sys-prefix | --prefix DIR]` writes the
//! kernelspec; Jupyter then starts `passlab-kernel --connection-file FILE`.
//! Everything a cell does is the core library's `Session` (`executor`),
//! which lives on the thread that reads the shell socket; control, the
//! heartbeat and iopub are served on the main thread (`server`), so the
//! control channel answers (interrupts, shutdown) and output goes out while
//! a cell runs.

mod decode;
mod executor;
mod install;
mod outbox;
mod reply;
mod server;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "passlab-kernel",
    about = "The passlab Jupyter kernel",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
    /// The connection file Jupyter wrote (ports, key, transport).
    #[arg(long, value_name = "FILE")]
    connection_file: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Sub {
    /// Install the kernelspec `passlab` (default: for this user).
    Install {
        /// In the user's Jupyter data directory.
        #[arg(long, conflicts_with_all = ["sys_prefix", "prefix"])]
        user: bool,
        /// In the Python environment's prefix (sys.prefix of the `python3` on PATH).
        #[arg(long, conflicts_with = "prefix")]
        sys_prefix: bool,
        /// Under DIR/share/jupyter/kernels.
        #[arg(long, value_name = "DIR")]
        prefix: Option<PathBuf>,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Sub::Install {
            user: _,
            sys_prefix,
            prefix,
        }) => {
            let target = match (sys_prefix, prefix) {
                (_, Some(dir)) => install::Target::Prefix(dir),
                (true, None) => install::Target::SysPrefix,
                (false, None) => install::Target::User,
            };
            let dir = install::install(target)?;
            println!("installed kernelspec passlab in {}", dir.display());
            Ok(())
        }
        None => {
            let file = cli.connection_file.ok_or_else(|| {
                anyhow::anyhow!(
                    "give --connection-file FILE (Jupyter does), or run `passlab-kernel install`"
                )
            })?;
            let done = server::run(&file);
            // Its Rust worker's build folder free for the next kernel.
            passlab::user::stop_worker();
            done
        }
    }
}
