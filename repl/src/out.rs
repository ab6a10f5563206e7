//! Printing that ends quietly on a closed pipe. `print!`, `println!`,
//! `eprint!` and `eprintln!` are these in the whole binary (main.rs
//! defines them before its modules): as std's, but when the reader has
//! gone (`passlab run script.plab | head`) the process ends at once with
//! status 0, as command-line tools do, instead of panicking with "failed
//! printing to stdout: Broken pipe". Nothing is lost by ending: a script's
//! session lives in this process only, and its children see their pipes
//! close.

use std::fmt;
use std::io::{self, Write};

/// Writes to standard output.
pub fn stdout(args: fmt::Arguments) {
    finish(io::stdout().lock().write_fmt(args), "stdout");
}

/// Writes to standard error.
pub fn stderr(args: fmt::Arguments) {
    finish(io::stderr().lock().write_fmt(args), "stderr");
}

fn finish(result: io::Result<()>, stream: &str) {
    match result {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => std::process::exit(0),
        // What std's macros do on any other error.
        Err(e) => panic!("failed printing to {stream}: {e}"),
    }
}
