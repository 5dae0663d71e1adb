//! `marrow`: the Marrow command line (and, later, the editor).
//!
//! With no arguments it prints the help; `marrow pose` and `marrow check` are the glTF tools.
//! See [`cli`] for the commands.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
