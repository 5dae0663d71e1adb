//! Render a posed frame of a project to a PNG without a window: load `projects/cesium_man`,
//! run half a second of its scene, draw it offscreen (GPU skinning, shadows) and save it.
//!
//! `cargo run -p marrow-engine --features render --example offscreen [OUT.png]`
//!
//! Needs a GPU adapter (Mesa's lavapipe works); without one it says so and exits.

use marrow_engine::prelude::*;
use marrow_engine::render::{GpuContext, ShaderSource};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).unwrap_or_else(|| "offscreen.png".to_owned());
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../projects/cesium_man");
    let project = Project::load(root.as_ref())?;
    let library = Library::load(&project, root.as_ref())?;
    let scene = project.manifest.scenes.first().ok_or("the project has no scene")?;
    let mut world = library.instantiate(&project, scene)?;
    world.frame(30, 1.0 / 60.0); // half a second of 60 Hz ticks
    let ctx = match GpuContext::headless() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("no GPU adapter ({e}): nothing rendered");
            return if std::env::var_os("MARROW_REQUIRE_GPU").is_some() { Err(e.into()) } else { Ok(()) };
        }
    };
    let image = render_world(&ctx, &world, 640, 480, false, ShaderSource::Embedded)?;
    image.save_png(out.as_ref())?;
    println!("wrote {out} ({} x {})", image.width, image.height);
    Ok(())
}
