//! End-to-end test of `marrow render`: CesiumMan mid-walk to a PNG that is not blank, and bad
//! arguments refused with a message. GPU runs go through `marrow_engine::render::test_device()`
//! (skips loudly without an adapter unless `MARROW_REQUIRE_GPU=1`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn gltf_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/gltf")
}

fn marrow(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_marrow")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn render_cesium_man_to_png() {
    if marrow_engine::render::test_device().is_none() {
        return;
    }
    let file = gltf_dir().join("CesiumMan/CesiumMan.glb");
    let out = std::env::temp_dir().join(format!("marrow-render-cli-{}.png", std::process::id()));
    let (code, stdout, stderr) = marrow(&[
        "render",
        file.to_str().unwrap(),
        "--anim",
        "0",
        "--time",
        "0.5",
        "--size",
        "200x160",
        "--overlay",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("wrote"), "{stdout}");
    let img = image::open(&out).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (200, 160));
    let corner = *img.get_pixel(0, 0);
    let differing = img.pixels().filter(|p| **p != corner).count();
    assert!(differing > 200 * 160 / 10, "only {differing} pixels differ from the background");
    let distinct: std::collections::HashSet<[u8; 4]> = img.pixels().map(|p| p.0).collect();
    assert!(distinct.len() > 50, "a lit, shaded image has many colours, got {}", distinct.len());
    let _ = std::fs::remove_file(out);
}

#[test]
fn render_refuses_bad_size_and_animation() {
    let file = gltf_dir().join("CesiumMan/CesiumMan.glb");
    let f = file.to_str().unwrap();
    let (code, _, err) = marrow(&["render", f, "--size", "12by4", "--out", "x.png"]);
    assert_eq!(code, 1);
    assert!(err.contains("expected WIDTHxHEIGHT"), "{err}");
    let (code, _, err) = marrow(&["render", f, "--anim", "7", "--out", "x.png"]);
    assert_eq!(code, 1);
    assert!(err.contains("no such animation"), "{err}");
}

#[test]
fn render_refuses_an_outline_width_out_of_range_naming_the_flag() {
    // Before #29 these rendered (100 px, or a NaN width) and exited 0.
    let file = gltf_dir().join("CesiumMan/CesiumMan.glb");
    let f = file.to_str().unwrap();
    for w in ["100", "0", "-2", "NaN", "inf"] {
        let out = std::env::temp_dir().join(format!("marrow-outline-{w}-{}.png", std::process::id()));
        let flag = format!("--outline={w}");
        let (code, _, err) = marrow(&["render", f, &flag, "--out", out.to_str().unwrap()]);
        assert_eq!(code, 1, "--outline {w}: {err}");
        assert!(err.contains("--outline") && err.contains("from 1 to 8"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out.exists(), "--outline {w} wrote an image");
    }
}

#[test]
fn render_a_project_scene_through_the_world() {
    if marrow_engine::render::test_device().is_none() {
        return;
    }
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("projects/cesium_man");
    let out = std::env::temp_dir().join(format!("marrow-render-project-{}.png", std::process::id()));
    let (code, stdout, stderr) = marrow(&[
        "render",
        project.to_str().unwrap(),
        "--time",
        "0.5",
        "--size",
        "160x160",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("scene scenes/main.scene.ron"), "{stdout}");
    let img = image::open(&out).unwrap().to_rgba8();
    let distinct: std::collections::HashSet<[u8; 4]> = img.pixels().map(|p| p.0).collect();
    assert!(distinct.len() > 50, "a textured, shaded figure has many colours, got {}", distinct.len());
    let _ = std::fs::remove_file(out);
}

#[test]
fn a_broken_shader_folder_is_said_on_stderr_when_rendering_falls_back() {
    if marrow_engine::render::test_device().is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("marrow-broken-shaders-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mesh.wgsl"), "not wgsl at all").unwrap();
    let out = dir.join("frame.png");
    let file = gltf_dir().join("CesiumMan/CesiumMan.glb");
    let (code, stdout, stderr) = marrow(&[
        "render",
        file.to_str().unwrap(),
        "--size",
        "64x64",
        "--shaders",
        dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "the embedded shaders still draw: {stderr}");
    assert!(stdout.contains("wrote"), "{stdout}");
    assert!(
        stderr.contains("mesh.wgsl") && stderr.contains("falling back to the embedded shaders"),
        "the fallback is said: {stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn particles_of_cesium_man_mid_stride_to_png() {
    if marrow_engine::render::test_device().is_none() {
        return;
    }
    let file = gltf_dir().join("CesiumMan/CesiumMan.glb");
    let out = std::env::temp_dir().join(format!("marrow-particles-cli-{}.png", std::process::id()));
    let (code, stdout, stderr) = marrow(&[
        "particles",
        file.to_str().unwrap(),
        "--count",
        "8000",
        "--time",
        "0.8",
        "--size",
        "160x160",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("8000 particles") && stdout.contains("48 ticks"), "{stdout}");
    let img = image::open(&out).unwrap().to_rgba8();
    // The figure's discs are orange (red well above blue); the ground and sky are grey.
    let orange = img.pixels().filter(|p| p[0] as i32 > p[2] as i32 + 60).count();
    assert!(orange > 160 * 160 / 30, "only {orange} figure pixels");
    let _ = std::fs::remove_file(out);
}

#[test]
fn particles_refuses_bad_numbers_and_models_without_a_skin() {
    let f = gltf_dir().join("CesiumMan/CesiumMan.glb");
    let (code, _, err) = marrow(&["particles", f.to_str().unwrap(), "--radius", "NaN", "--out", "x.png"]);
    assert_eq!(code, 1);
    assert!(err.contains("--radius NaN: must be a finite non-negative number"), "{err}");
    let (code, _, err) = marrow(&["particles", f.to_str().unwrap(), "--count", "9000000", "--out", "x.png"]);
    assert_eq!(code, 1);
    assert!(err.contains("count is 9000000, at most 2,000,000"), "{err}");
    let cube = gltf_dir().join("BoxAnimated/BoxAnimated.gltf");
    let (code, _, err) = marrow(&["particles", cube.to_str().unwrap(), "--out", "x.png"]);
    assert_eq!(code, 1);
    assert!(err.contains("no skinned mesh to scatter particles over"), "{err}");
}

#[test]
fn a_crowd_of_cesium_men_to_png_in_one_draw_per_pass() {
    if marrow_engine::render::test_device().is_none() {
        return;
    }
    let file = gltf_dir().join("CesiumMan/CesiumMan.glb");
    let out = std::env::temp_dir().join(format!("marrow-crowd-cli-{}.png", std::process::id()));
    let (code, stdout, stderr) = marrow(&[
        "crowd",
        file.to_str().unwrap(),
        "--count",
        "36",
        "--time",
        "0.7",
        "--size",
        "200x120",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    // One skinned primitive: shadow, depth and forward, one instanced draw each; the ground two.
    assert!(
        stdout.contains("36 instances of 1 clip(s), 60 frames each") && stdout.contains("5 draw calls"),
        "{stdout}"
    );
    let img = image::open(&out).unwrap().to_rgba8();
    let corner = *img.get_pixel(0, 0);
    let differing = img.pixels().filter(|p| **p != corner).count();
    assert!(differing > 200 * 120 / 4, "only {differing} pixels differ from the sky");
    let _ = std::fs::remove_file(out);
}

#[test]
fn a_crowd_past_the_adapters_vertex_budget_is_refused_naming_it() {
    let Some(ctx) = marrow_engine::render::test_device() else { return };
    let cpu = ctx.adapter.get_info().device_type == marrow_engine::render::wgpu::DeviceType::Cpu;
    let budget = ctx.crowd_vertex_budget();
    // CesiumMan's one skinned primitive has 3,273 vertices: a million instances is 3.27e9.
    let count = if cpu { 1_000_000 } else { 1_000_000u64.min(budget / 3273 + 1) };
    if !cpu && count * 3273 <= budget {
        eprintln!("SKIPPED: --count is at most 1e6, which this GPU's budget ({budget} vertices) holds");
        return;
    }
    let file = gltf_dir().join("CesiumMan/CesiumMan.glb");
    let out = std::env::temp_dir().join(format!("marrow-crowd-budget-{}.png", std::process::id()));
    let count = count.to_string();
    let (code, stdout, stderr) = marrow(&[
        "crowd",
        file.to_str().unwrap(),
        "--count",
        &count,
        "--size",
        "64x64",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ne!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stderr.contains(&format!("a crowd frame of {count} instances asks 3273000000 skinned vertices"))
            && stderr.contains(&format!("the limit there is {budget}")),
        "{stderr}"
    );
    assert!(!out.exists(), "an image was written");
}

#[test]
fn crowd_refuses_bad_numbers_and_models_without_a_skin() {
    let f = gltf_dir().join("CesiumMan/CesiumMan.glb");
    let f = f.to_str().unwrap();
    let (code, _, err) = marrow(&["crowd", f, "--count", "0", "--out", "x.png"]);
    assert_eq!(code, 1);
    assert!(err.contains("--count 0: must be from 1 to 1000000"), "{err}");
    let (code, _, err) = marrow(&["crowd", f, "--speed", "2:1", "--out", "x.png"]);
    assert_eq!(code, 1);
    assert!(err.contains("the low end is above the high end"), "{err}");
    let (code, _, err) = marrow(&["crowd", f, "--fps", "0", "--out", "x.png"]);
    assert_eq!(code, 1);
    assert!(err.contains("--fps 0: must be above 0"), "{err}");
    let cube = gltf_dir().join("BoxAnimated/BoxAnimated.gltf");
    let (code, _, err) = marrow(&["crowd", cube.to_str().unwrap(), "--out", "x.png"]);
    assert_eq!(code, 1);
    assert!(err.contains("no skinned mesh to draw a crowd with"), "{err}");
}

#[test]
fn crowd_renders_the_crowd_sample_project() {
    if marrow_engine::render::test_device().is_none() {
        return;
    }
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("projects/crowd");
    let out = std::env::temp_dir().join(format!("marrow-crowd-project-{}.png", std::process::id()));
    let (code, stdout, stderr) = marrow(&[
        "crowd",
        project.to_str().unwrap(),
        "--time",
        "1.0",
        "--size",
        "160x100",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("400 crowd instances"), "{stdout}");
    let _ = std::fs::remove_file(out);
}

#[test]
fn a_bvh_capture_renders_scatters_and_crowds_as_a_model_does() {
    if marrow_engine::render::test_device().is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("marrow-render-bvh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("capture.bvh");
    std::fs::write(&file, marrow_engine::synthetic::mocap_bvh(60, 120.0, 1)).unwrap();
    let f = file.to_str().unwrap();
    let png = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let out = png("render.png");
    let (code, stdout, stderr) =
        marrow(&["render", f, "--bvh-scale", "0.01", "--time", "0.25", "--size", "200x160", "--out", &out]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let img = image::open(&out).unwrap().to_rgba8();
    let corner = *img.get_pixel(0, 0);
    let differing = img.pixels().filter(|p| **p != corner).count();
    assert!(differing > 200 * 160 / 20, "only {differing} pixels differ from the background");
    let out = png("particles.png");
    let (code, stdout, stderr) =
        marrow(&["particles", f, "--bvh-scale", "0.01", "--count", "500", "--time", "0.25", "--out", &out]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("500 particles"), "{stdout}");
    let out = png("crowd.png");
    let (code, stdout, stderr) =
        marrow(&["crowd", f, "--bvh-scale", "0.01", "--count", "9", "--time", "0.25", "--out", &out]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("9 instances"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
