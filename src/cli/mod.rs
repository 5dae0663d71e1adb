//! The `marrow` command line, built with clap derive. Each subcommand lives in its own module
//! and returns an exit code; errors travel as `anyhow` errors and end the process with status 1.
//! Later subcommands (`render`) and the editor (no arguments) plug in here.

mod check;
mod pose;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Marrow: a node-graph skeletal animation editor.
#[derive(Debug, Parser)]
#[command(name = "marrow", version, about, long_about = None)]
pub struct Cli {
    /// What to do (with none, the help is printed).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate a glTF file's skins, animation and meshes at given times and print JSON.
    Pose(pose::PoseArgs),
    /// Validate a glTF file and print every fault and warning (exit status 1 on errors).
    Check(check::CheckArgs),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => {
            Cli::command().print_help()?;
            println!();
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Pose(args)) => pose::run(&args),
        Some(Command::Check(args)) => check::run(&args),
    }
}
