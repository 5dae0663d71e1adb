//! The `marrow` command line, built with clap derive. Each subcommand lives in its own module
//! and returns an exit code; errors travel as `anyhow` errors and end the process with status 1.
//! The editor opens with no arguments. Warnings from the engine (a shader reload that failed, a
//! fallback taken) go to standard error through [`crate::logger`].

mod check;
mod cook;
mod crowd;
mod edit;
mod export;
mod import;
mod model;
mod particles;
mod play;
mod pose;
mod render;
mod resave;
mod retarget;
mod runner;
mod simplify;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Marrow: a node-graph skeletal animation editor.
#[derive(Debug, Parser)]
#[command(name = "marrow", version, about, long_about = None)]
pub struct Cli {
    /// What to do (with none, the editor opens on the runner sample).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Say more: warnings are always shown; -v adds notes, -vv details.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the docked editor on a project (a folder or its `project.ron`).
    Edit(edit::EditArgs),
    /// Evaluate a glTF file's skins, animation and meshes at given times and print JSON.
    Pose(pose::PoseArgs),
    /// Validate a glTF file and print every fault and warning (exit status 1 on errors).
    Check(check::CheckArgs),
    /// Render one frame of a glTF file offscreen (GPU skinning, shadows) to a PNG.
    Render(render::RenderArgs),
    /// Scatter a glTF model's skinned surface into particles, pose them with springs, render a PNG.
    Particles(particles::ParticlesArgs),
    /// Bake a glTF model's clips and render a crowd of it in one instanced draw, to a PNG.
    Crowd(crowd::CrowdArgs),
    /// Remove the keys a glTF model's animation can do without, within a model-space tolerance.
    Simplify(simplify::SimplifyArgs),
    /// Write every clip of a project in the compressed runtime form a game ships (`*.clip.bin`),
    /// within a shell-error tolerance, with bytes before and after and the worst error.
    Cook(cook::CookArgs),
    /// Export a project scene or a glTF file as glTF (.glb or .gltf + .bin): rigs, skins, meshes,
    /// sockets, clips with their keys as held (eased segments baked) and markers.
    Export(export::ExportArgs),
    /// Import models (.gltf, .glb, .bvh, or folders of them) into a project, as File > Import
    /// Model does: copied into assets/, clips as clip files, an entity each; one save at the end.
    Import(import::ImportArgs),
    /// Retarget clips of one rig onto another through a project's retarget map (or a new one,
    /// auto-mapped): a clip file of the target rig each; one save at the end.
    Retarget(retarget::RetargetArgs),
    /// Play a project's scene headless at 60 ticks a second with scripted graph parameters, and
    /// print each tick's state machine states and a fingerprint of the pose (deterministic).
    Play(play::PlayArgs),
    /// Write the code-built `runner` sample project (skeleton, stride clip, scene) to a folder.
    GenRunner(runner::GenArgs),
    /// Run the `runner` sample headless: the stride accelerates, footsteps play while grounded.
    Runner(runner::RunArgs),
    /// Load a project and save it again through the editor's save (for the kill-9 harness).
    #[command(hide = true)]
    Resave(resave::ResaveArgs),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => edit::run(&edit::EditArgs { project: None, new: false, shaders: None }),
        Some(Command::Edit(args)) => edit::run(&args),
        Some(Command::Pose(args)) => pose::run(&args),
        Some(Command::Check(args)) => check::run(&args),
        Some(Command::Render(args)) => render::run(&args),
        Some(Command::Particles(args)) => particles::run(&args),
        Some(Command::Crowd(args)) => crowd::run(&args),
        Some(Command::Simplify(args)) => simplify::run(&args),
        Some(Command::Cook(args)) => cook::run(&args),
        Some(Command::Export(args)) => export::run(&args),
        Some(Command::Play(args)) => play::run(&args),
        Some(Command::Import(args)) => import::run(&args),
        Some(Command::Retarget(args)) => retarget::run(&args),
        Some(Command::GenRunner(args)) => runner::generate(&args),
        Some(Command::Runner(args)) => runner::run(&args),
        Some(Command::Resave(args)) => resave::run(&args),
    }
}
