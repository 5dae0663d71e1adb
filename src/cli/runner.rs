//! `marrow gen-runner [--sample runner|locomotion] [--out DIR]` writes a code-built sample
//! project (the committed `projects/runner` and `projects/locomotion` are its output; tests keep
//! them equal). `marrow runner PROJECT` runs that
//! project headless: the Animator's speed ramps up, and every `footstep` marker while grounded
//! plays a footstep through the audio output when one exists (silent, said once, when none).

use std::path::PathBuf;
use std::process::ExitCode;

use marrow_engine::clip::Marker;
use marrow_engine::project::runner::{FootstepSink, RunnerBehaviour, runner_project};
use marrow_engine::project::{Library, Project};
use marrow_engine::scene::Entity;

/// Arguments of `marrow gen-runner`.
#[derive(Debug, clap::Args)]
pub struct GenArgs {
    /// Which sample: `runner` (one stride clip) or `locomotion` (idle, stride and sprint on a
    /// blend space graph).
    #[arg(long, default_value = "runner")]
    pub sample: String,
    /// The folder to write the project into (created if missing; files are replaced
    /// atomically). Default: `projects/<sample>`.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Writes the sample project.
pub fn generate(args: &GenArgs) -> anyhow::Result<ExitCode> {
    let project = match args.sample.as_str() {
        "runner" => runner_project(),
        "locomotion" => marrow_engine::project::runner::locomotion_project(),
        other => anyhow::bail!("no sample {other:?} (known: runner, locomotion)"),
    };
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("projects").join(&args.sample));
    if out.exists() && !out.is_dir() {
        anyhow::bail!("--out {} is a file; give the folder to write the project into", out.display());
    }
    project.save(&out).map_err(|e| anyhow::anyhow!("writing the project into {}: {e}", out.display()))?;
    for path in project.file_paths() {
        println!("wrote {}", out.join(path).display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `marrow runner`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The runner project folder.
    #[arg(default_value = "projects/runner")]
    pub project: PathBuf,
    /// Simulated seconds to run.
    #[arg(long, default_value_t = 4.0)]
    pub seconds: f32,
    /// Speed at the start of the run.
    #[arg(long, default_value_t = 1.0)]
    pub from_speed: f32,
    /// Speed at the end of the run.
    #[arg(long, default_value_t = 2.0)]
    pub to_speed: f32,
    /// Play footsteps in real time through the audio output (when one exists).
    #[arg(long)]
    pub audio: bool,
}

struct PrintingSink {
    tick: u64,
    audio: Option<crate::cli::runner::audio::Footsteps>,
}

impl FootstepSink for PrintingSink {
    fn footstep(&mut self, _entity: Entity, marker: &Marker) {
        println!("tick {}: {} (clip time {:.3})", self.tick, marker.name, marker.time);
        if let Some(a) = &mut self.audio {
            a.play();
        }
    }
}

/// What `check` rejects does not play: every fault of the project at `root` is named on standard
/// error first, and the error says how many.
pub(crate) fn ensure_plays(root: &std::path::Path) -> anyhow::Result<()> {
    let report = marrow_engine::project::check_project(root);
    if !report.errors.is_empty() {
        for e in &report.errors {
            eprintln!("error: {e}");
        }
        anyhow::bail!(
            "{} fault(s) above: {} does not play as it stands",
            report.errors.len(),
            root.display()
        );
    }
    Ok(())
}

/// Runs the runner headless and prints each footstep.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    for (flag, v) in
        [("--seconds", args.seconds), ("--from-speed", args.from_speed), ("--to-speed", args.to_speed)]
    {
        if !v.is_finite() {
            anyhow::bail!("{flag} must be a finite number (got {v})");
        }
    }
    if !(0.0..=86_400.0).contains(&args.seconds) {
        anyhow::bail!("--seconds must be between 0 and 86400 (got {})", args.seconds);
    }
    ensure_plays(&args.project)?;
    let project = Project::load(&args.project)?;
    let library = Library::load(&project, &args.project)?;
    let scene = project.manifest.scenes.first().ok_or_else(|| anyhow::anyhow!("the project has no scene"))?;
    let mut world = library.instantiate(&project, scene)?;
    let runner =
        world.find("Runner").ok_or_else(|| anyhow::anyhow!("the scene has no entity named Runner"))?;
    let audio = if args.audio { Some(audio::Footsteps::open()) } else { None };
    let mut behaviour = RunnerBehaviour::new(runner, PrintingSink { tick: 0, audio });
    let dt = 1.0 / 60.0;
    let ticks = (args.seconds.max(0.0) / dt).round() as u64;
    let mut steps = 0;
    for tick in 1..=ticks {
        let k = tick as f32 / ticks.max(1) as f32;
        behaviour.set_speed(&mut world, args.from_speed + (args.to_speed - args.from_speed) * k);
        world.frame(1, dt);
        behaviour.sink.tick = tick;
        steps += behaviour.update(&world);
        if args.audio {
            std::thread::sleep(std::time::Duration::from_secs_f32(dt));
        }
    }
    println!("{steps} footstep(s) in {ticks} ticks");
    Ok(ExitCode::SUCCESS)
}

pub(crate) mod audio {
    //! The footstep sound: a short synthesized thump (a decaying 90 Hz sine under a burst of
    //! noise) played through the default audio output with cpal. With no output device (as on a
    //! headless machine or in CI) the sink is silent and says so once.

    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};

    /// Footstep audio output.
    pub struct Footsteps {
        output: Option<(cpal::Stream, Arc<AtomicU32>)>,
        said: bool,
    }

    /// The synthesizer's state, owned by the audio callback.
    struct Voice {
        rate: f32,
        channels: usize,
        /// Samples since the last footstep started (`u32::MAX`: silent).
        at: u32,
        noise: u32,
        pending: Arc<AtomicU32>,
    }

    impl Voice {
        fn next(&mut self) -> f32 {
            if self.pending.load(Ordering::Relaxed) > 0 {
                self.pending.fetch_sub(1, Ordering::Relaxed);
                self.at = 0;
            }
            if self.at == u32::MAX {
                return 0.0;
            }
            let t = self.at as f32 / self.rate;
            self.at = if t > 0.25 { u32::MAX } else { self.at + 1 };
            self.noise = self.noise.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let white = (self.noise >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0;
            let thump = (std::f32::consts::TAU * 90.0 * t).sin() * (-t * 25.0).exp();
            let scuff = white * (-t * 60.0).exp() * 0.35;
            0.5 * (thump + scuff)
        }

        fn fill<T: cpal::SizedSample + cpal::FromSample<f32>>(&mut self, data: &mut [T]) {
            for frame in data.chunks_mut(self.channels.max(1)) {
                let v = T::from_sample(self.next());
                for s in frame {
                    *s = v;
                }
            }
        }
    }

    fn open_output() -> Result<(cpal::Stream, Arc<AtomicU32>), String> {
        let host = cpal::default_host();
        let device = host.default_output_device().ok_or("no audio output device")?;
        let config = device.default_output_config().map_err(|e| e.to_string())?;
        let pending = Arc::new(AtomicU32::new(0));
        let mut voice = Voice {
            rate: config.sample_rate() as f32,
            channels: config.channels() as usize,
            at: u32::MAX,
            noise: 0x1234_5678,
            pending: pending.clone(),
        };
        let format = config.sample_format();
        let config: cpal::StreamConfig = config.into();
        let err = |e: cpal::Error| eprintln!("audio output: {e}");
        let stream = match format {
            cpal::SampleFormat::F32 => {
                device.build_output_stream(config, move |d: &mut [f32], _: &_| voice.fill(d), err, None)
            }
            cpal::SampleFormat::I16 => {
                device.build_output_stream(config, move |d: &mut [i16], _: &_| voice.fill(d), err, None)
            }
            cpal::SampleFormat::U16 => {
                device.build_output_stream(config, move |d: &mut [u16], _: &_| voice.fill(d), err, None)
            }
            other => return Err(format!("unsupported sample format {other}")),
        }
        .map_err(|e| e.to_string())?;
        stream.play().map_err(|e| e.to_string())?;
        Ok((stream, pending))
    }

    impl Footsteps {
        /// Opens the default output; with none, the sink is silent (said once, on the first step).
        pub fn open() -> Self {
            match open_output() {
                Ok(o) => Footsteps { output: Some(o), said: false },
                Err(e) => {
                    eprintln!("no audio output ({e}): footsteps are silent");
                    Footsteps { output: None, said: true }
                }
            }
        }

        /// Plays one footstep.
        pub fn play(&mut self) {
            match &self.output {
                Some((_, pending)) => {
                    pending.fetch_add(1, Ordering::Relaxed);
                }
                None if !self.said => {
                    self.said = true;
                    eprintln!("no audio output: footsteps are silent");
                }
                None => {}
            }
        }
    }
}
