//! `marrow`: the Marrow editor and command line.
//!
//! With no arguments (or `marrow edit PATH`) it opens the editor; `pose`, `check`, `render`,
//! `runner` and `gen-runner` are headless tools. See [`cli`] for the commands.

mod cli;
mod logger;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    logger::install(args.verbose);
    if args.command.as_ref().is_some_and(|c| !matches!(c, cli::Command::Edit(_))) {
        quiet_on_closed_pipe();
    }
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A headless command whose reader went away (`marrow pose ... | head`) ends quietly, as Unix
/// tools do, instead of panicking on the next write: the default SIGPIPE action is restored
/// (Rust ignores the signal, turning the closed pipe into a write error `println!` panics on).
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to its default has no preconditions; nothing else
    // in this process installs a SIGPIPE handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
