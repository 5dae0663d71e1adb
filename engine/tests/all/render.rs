//! GPU tests of the renderer (feature `render`). Each gets its device from
//! `render::test_device()`: without an adapter they print `SKIPPED` and pass, unless
//! `MARROW_REQUIRE_GPU=1` (CI, with lavapipe) makes that a failure.

use crate::support;

use std::path::PathBuf;

use marrow_engine::glam::{Mat4, Vec3};
use marrow_engine::gltf::{ImportedScene, ScenePose, import};
use marrow_engine::render::scene::{RenderRequest, SceneRenderer, render_gltf};
use marrow_engine::render::{
    Camera, FrameData, GpuContext, MeshData, MeshPool, Renderer, RendererSettings, ShaderSource, test_device,
};
use marrow_engine::skinning::SkinningJob;

fn model(name: &str) -> ImportedScene {
    import(support::gltf_dir().join(name).join(format!("{name}.glb"))).unwrap()
}

/// GPU-skinned world positions (the renderer's `skinned_world_position`, read back from a
/// compute pass) against the CPU reference job, for every skinned primitive.
fn check_gpu_skinning(ctx: &GpuContext, scene: &ImportedScene, times: &[f32]) -> usize {
    let renderer = Renderer::new(ctx, RendererSettings::default()).unwrap();
    let mut pool = MeshPool::new();
    let mut sr = SceneRenderer::upload(ctx, &mut pool, scene).unwrap();
    sr.ground_plane = false;
    let mut pose = ScenePose::new(scene);
    let mut checked = 0;
    for (k, &t) in times.iter().enumerate() {
        pose.evaluate(scene, Some(0), t).unwrap();
        let mut frame = FrameData::default();
        sr.extract(ctx, &mut pool, scene, &pose, k as u64 + 1, &mut frame).unwrap();
        let b = sr.bounds().unwrap();
        let size = (b.max - b.min).length();
        for (obj, (node, mesh, prim)) in frame.objects.iter().zip(sr.draw_origins()) {
            let p = &scene.meshes[mesh].primitives[prim];
            let (Some(skin_stream), Some(skin)) = (&p.skin, scene.nodes[node].skin) else { continue };
            let gpu = renderer.skinned_positions(&pool, obj, &frame.palette).unwrap();
            let mut mats = vec![Mat4::IDENTITY; scene.skins[skin].joints.len()];
            pose.skinning_matrices(scene, skin, node, &mut mats);
            let mut cpu = vec![[0.0; 3]; p.positions.len()];
            SkinningJob {
                palette: &mats,
                joints: &skin_stream.joints,
                weights: &skin_stream.weights,
                positions: &p.positions,
                normals: &[],
                tangents: &[],
                out_positions: &mut cpu,
                out_normals: &mut [],
                out_tangents: &mut [],
            }
            .run()
            .unwrap();
            let world = pose.world[node];
            assert_eq!(gpu.len(), cpu.len());
            let worst = gpu
                .iter()
                .zip(&cpu)
                .map(|(g, c)| (Vec3::from(*g) - world.transform_point3(Vec3::from(*c))).length())
                .fold(0.0, f32::max);
            assert!(worst <= 1e-4 * size, "t={t} node {node}: worst error {worst} > 1e-4 of size {size}");
            checked += 1;
        }
    }
    checked
}

#[test]
fn gpu_skinning_matches_cpu_reference_cesium_man() {
    let Some(ctx) = test_device() else { return };
    let scene = model("CesiumMan");
    assert_eq!(check_gpu_skinning(&ctx, &scene, &[0.0, 0.4, 1.1, 1.9]), 4);
}

#[test]
fn gpu_skinning_matches_cpu_reference_rigged_figure() {
    let Some(ctx) = test_device() else { return };
    let scene = model("RiggedFigure");
    assert_eq!(check_gpu_skinning(&ctx, &scene, &[0.0, 0.3, 0.9, 1.5]), 4);
}

fn diff_fraction(a: &[u8], b: &[u8], w: u32, rows: std::ops::Range<u32>) -> f32 {
    let mut differ = 0;
    let mut total = 0;
    for y in rows {
        for x in 0..w {
            let i = ((y * w + x) * 4) as usize;
            total += 1;
            if a[i..i + 3].iter().zip(&b[i..i + 3]).any(|(p, q)| p.abs_diff(*q) > 8) {
                differ += 1;
            }
        }
    }
    differ as f32 / total as f32
}

#[test]
fn cesium_man_mid_walk_differs_from_bind_pose_where_the_legs_moved() {
    let Some(ctx) = test_device() else { return };
    let scene = model("CesiumMan");
    let mut pool = MeshPool::new();
    let mut sr = SceneRenderer::upload(&ctx, &mut pool, &scene).unwrap();
    let mut renderer =
        Renderer::new(&ctx, RendererSettings { shadow_map_size: 512, ..Default::default() }).unwrap();
    let target = renderer.create_target(192, 192);
    let mut pose = ScenePose::new(&scene);
    // Fixed camera framed on the rest pose.
    let mut frame = FrameData::default();
    sr.extract(&ctx, &mut pool, &scene, &pose, 1, &mut frame).unwrap();
    let camera = Camera::framing(sr.bounds().unwrap(), 1.0);
    let mut shot = |anim: Option<usize>, t: f32, version: u64| {
        pose.evaluate(&scene, anim, t).unwrap();
        frame.clear();
        sr.extract(&ctx, &mut pool, &scene, &pose, version, &mut frame).unwrap();
        frame.camera = camera;
        let stats = renderer.render(&pool, &frame, &target).unwrap();
        assert!(stats.palette_uploaded);
        assert!(stats.skinned_pipeline_binds >= 3, "shadow, depth and forward passes: {stats:?}");
        let color = renderer.read_color(&target).unwrap();
        // The forward pass (LEQUAL, writes off) shades every pixel the depth pre-pass covered:
        // both run the same skinned_world_position, so their depths agree exactly.
        let depth = renderer.read_depth(&target).unwrap();
        let covered = depth.iter().filter(|d| **d < 1.0).count();
        let background = color[0..4].to_vec();
        let holes =
            depth.iter().zip(color.chunks(4)).filter(|(d, c)| **d < 1.0 && *c == &background[..]).count();
        assert!(covered > 1000, "{covered}");
        assert_eq!(holes, 0, "pixels with pre-pass depth but no forward shading");
        (color, renderer.read_shadow_map().unwrap())
    };
    let (bind, bind_shadow) = shot(None, 0.0, 2);
    let (walk, walk_shadow) = shot(Some(0), 0.5, 3);
    let (bind2, _) = shot(None, 0.0, 4);
    assert_eq!(bind, bind2, "rendering is deterministic");
    // The character is drawn: not all background.
    let bg = &bind[0..4];
    assert!(bind.chunks(4).filter(|p| p != &bg).count() > 192 * 192 / 20);
    // Legs: the lower half of the image changes.
    let legs = diff_fraction(&bind, &walk, 192, 96..192);
    assert!(legs > 0.01, "lower half differs by {legs}");
    let shadow_diff = bind_shadow.iter().zip(&walk_shadow).filter(|(a, b)| (*a - *b).abs() > 1e-4).count();
    assert!(shadow_diff > 100, "shadow maps differ in {shadow_diff} texels");
    assert!(bind_shadow.iter().any(|d| *d < 1.0), "the character casts into the shadow map");
}

#[test]
fn static_only_scene_binds_no_skinned_pipeline_and_uploads_no_palette() {
    let Some(ctx) = test_device() else { return };
    let mut pool = MeshPool::new();
    let cube = pool
        .add(
            &ctx.device,
            &MeshData {
                positions: &[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
                normals: &[[0.0, 0.0, 1.0]; 3],
                ..Default::default()
            },
        )
        .unwrap();
    assert!(!pool.get(cube).unwrap().is_skinned());
    let mut renderer =
        Renderer::new(&ctx, RendererSettings { shadow_map_size: 256, ..Default::default() }).unwrap();
    let target = renderer.create_target(64, 64);
    let mut frame = FrameData {
        camera: Camera {
            eye: Vec3::new(0.3, 0.3, 3.0),
            target: Vec3::new(0.3, 0.3, 0.0),
            ..Default::default()
        },
        ..Default::default()
    };
    frame.palette = vec![Mat4::IDENTITY; 4];
    frame.palette_version = 7;
    frame.objects.push(marrow_engine::render::DrawObject {
        mesh: cube,
        world_from_model: Mat4::IDENTITY,
        color: [1.0, 0.0, 0.0, 1.0],
        material: 0,
        palette_offset: 0,
        bounds: None,
        casts_shadow: true,
        outlined: false,
        pick_id: 0,
    });
    for _ in 0..2 {
        let stats = renderer.render(&pool, &frame, &target).unwrap();
        assert_eq!(stats.skinned_pipeline_binds, 0);
        assert!(!stats.palette_uploaded);
        assert_eq!(stats.draw_calls, 3, "shadow + depth + forward");
    }
    assert_eq!(renderer.palette_uploads(), 0);
    let px = renderer.read_color(&target).unwrap();
    assert!(px.chunks(4).any(|p| p[0] > 100 && p[1] < 40), "the red triangle is drawn");
}

#[test]
fn palette_upload_is_skipped_while_the_pose_version_is_unchanged() {
    let Some(ctx) = test_device() else { return };
    let scene = model("CesiumMan");
    let mut pool = MeshPool::new();
    let mut sr = SceneRenderer::upload(&ctx, &mut pool, &scene).unwrap();
    let mut renderer =
        Renderer::new(&ctx, RendererSettings { shadow_map_size: 128, ..Default::default() }).unwrap();
    let target = renderer.create_target(32, 32);
    let mut pose = ScenePose::new(&scene);
    let mut frame = FrameData::default();
    let mut uploads = Vec::new();
    // Versions: playing (1, 2), paused (2, 2, 2), playing again (3).
    for (version, t) in [(1, 0.1), (2, 0.2), (2, 0.2), (2, 0.2), (2, 0.2), (3, 0.3)] {
        pose.evaluate(&scene, Some(0), t).unwrap();
        frame.clear();
        sr.extract(&ctx, &mut pool, &scene, &pose, version, &mut frame).unwrap();
        frame.camera = Camera::framing(sr.bounds().unwrap(), 1.0);
        uploads.push(renderer.render(&pool, &frame, &target).unwrap().palette_uploaded);
    }
    assert_eq!(uploads, [true, true, false, false, false, true]);
    assert_eq!(renderer.palette_uploads(), 3);
}

#[test]
fn rendered_png_of_cesium_man_is_not_blank() {
    let Some(ctx) = test_device() else { return };
    let scene = model("CesiumMan");
    let req = RenderRequest { animation: Some(0), time: 0.5, overlay: true, ..Default::default() };
    let img = render_gltf(&ctx, &scene, &req).unwrap();
    assert_eq!((img.width, img.height, img.rgba.len()), (256, 256, 256 * 256 * 4));
    let first = &img.rgba[0..4];
    assert!(img.rgba.chunks(4).filter(|p| p != &first).count() > 256 * 256 / 10);
    let out = std::env::temp_dir().join(format!("marrow-render-test-{}.png", std::process::id()));
    img.save_png(&out).unwrap();
    let back = image::open(&out).unwrap().to_rgba8();
    assert_eq!(back.as_raw(), &img.rgba);
    let _ = std::fs::remove_file(out);
}

fn copy_shaders(to: &PathBuf) {
    std::fs::create_dir_all(to).unwrap();
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shaders");
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn broken_shader_edit_keeps_the_last_good_pipeline_and_fixing_it_reloads() {
    let Some(ctx) = test_device() else { return };
    let dir = std::env::temp_dir().join(format!("marrow-hot-reload-{}", std::process::id()));
    copy_shaders(&dir);
    let scene = model("CesiumMan");
    let mut pool = MeshPool::new();
    let mut sr = SceneRenderer::upload(&ctx, &mut pool, &scene).unwrap();
    let settings = RendererSettings {
        shaders: ShaderSource::Directory(dir.clone()),
        shadow_map_size: 256,
        ..Default::default()
    };
    let mut renderer = Renderer::new(&ctx, settings).unwrap();
    assert_eq!(renderer.shader_error(), None);
    renderer.watch_shaders().unwrap();
    let target = renderer.create_target(96, 96);
    let pose = ScenePose::new(&scene);
    let mut frame = FrameData::default();
    sr.extract(&ctx, &mut pool, &scene, &pose, 1, &mut frame).unwrap();
    frame.camera = Camera::framing(sr.bounds().unwrap(), 1.0);
    renderer.render(&pool, &frame, &target).unwrap();
    let good = renderer.read_color(&target).unwrap();

    // Break the skinning shader: the watcher notices, the reload fails with a readable error.
    let original = std::fs::read_to_string(dir.join("skinning.wgsl")).unwrap();
    std::fs::write(dir.join("skinning.wgsl"), original.replace("weights.x", "weights.x +")).unwrap();
    let outcome =
        renderer.wait_shader_change(std::time::Duration::from_secs(5)).expect("the watcher saw the edit");
    let err = outcome.unwrap_err();
    assert!(err.to_string().contains("mesh.wgsl"), "{err}");
    assert_eq!(renderer.shader_error(), Some(&err));
    // The last good pipelines keep drawing the same image.
    renderer.render(&pool, &frame, &target).unwrap();
    assert_eq!(renderer.read_color(&target).unwrap(), good);

    // Fix it (the tinted fragment shader first, the skinning fix last, so any successful reload
    // sees both): the tint proves the new pipeline is the one drawing.
    let mesh = std::fs::read_to_string(dir.join("mesh.wgsl")).unwrap();
    let tinted_src = mesh.replace(
        "return vec4<f32>(diffuse + vec3<f32>(spec), 1.0);",
        "return vec4<f32>(1.0, 0.0, 1.0, 1.0);",
    );
    assert_ne!(tinted_src, mesh);
    std::fs::write(dir.join("mesh.wgsl"), tinted_src).unwrap();
    std::fs::write(dir.join("skinning.wgsl"), &original).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        // The watcher may deliver the two writes as one batch or two.
        match renderer.wait_shader_change(std::time::Duration::from_secs(1)) {
            Some(Ok(())) => break,
            _ => assert!(std::time::Instant::now() < deadline, "no successful reload after the fix"),
        }
    }
    assert_eq!(renderer.shader_error(), None);
    assert!(renderer.shader_reloads() >= 1);
    renderer.render(&pool, &frame, &target).unwrap();
    let tinted = renderer.read_color(&target).unwrap();
    assert!(tinted.chunks(4).any(|p| p == [255, 0, 255, 255]));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn morph_instances_rebuild_only_when_weights_change_and_bounds_grow_with_them() {
    let Some(ctx) = test_device() else { return };
    let scene = model("AnimatedMorphCube");
    let mut pool = MeshPool::new();
    let mut sr = SceneRenderer::upload(&ctx, &mut pool, &scene).unwrap();
    sr.ground_plane = false;
    assert_eq!(sr.morph_instances(), 1);
    let mut renderer =
        Renderer::new(&ctx, RendererSettings { shadow_map_size: 128, ..Default::default() }).unwrap();
    let target = renderer.create_target(64, 64);
    let mut pose = ScenePose::new(&scene);
    let mut frame = FrameData::default();
    let mut uploads = Vec::new();
    let mut images = Vec::new();
    let rest_bounds = {
        sr.extract(&ctx, &mut pool, &scene, &pose, 1, &mut frame).unwrap();
        sr.bounds().unwrap()
    };
    let camera = Camera::framing(rest_bounds, 1.0);
    let duration = scene.animations[0].duration;
    for t in [0.0, 0.0, duration * 0.5, duration * 0.5] {
        pose.evaluate(&scene, Some(0), t).unwrap();
        frame.clear();
        let before = sr.morph_uploads();
        sr.extract(&ctx, &mut pool, &scene, &pose, 1, &mut frame).unwrap();
        uploads.push(sr.morph_uploads() - before);
        // The bounds hold every morphed vertex (moved to world).
        let b = sr.bounds().unwrap();
        let (node, mesh, prim) = sr.draw_origins()[0];
        let p = &scene.meshes[mesh].primitives[prim];
        let mut out = vec![[0.0; 3]; p.positions.len()];
        marrow_engine::morph::MorphJob {
            base_positions: &p.positions,
            base_normals: &[],
            base_tangents: &[],
            targets: &p.targets,
            weights: &pose.morph_weights[node],
            positions: &mut out,
            normals: &mut [],
            tangents: &mut [],
        }
        .run()
        .unwrap();
        for v in &out {
            let w = pose.world[node].transform_point3(Vec3::from(*v));
            assert!(w.cmpge(b.min - 1e-5).all() && w.cmple(b.max + 1e-5).all(), "t={t}: {w} outside {b:?}");
        }
        frame.camera = camera;
        renderer.render(&pool, &frame, &target).unwrap();
        images.push(renderer.read_color(&target).unwrap());
    }
    // The first frame differs from the version built at upload (weights at t=0 are the same as
    // the defaults only if the file says so); repeated times never upload.
    assert_eq!(uploads[1], 0, "{uploads:?}");
    assert_eq!(uploads[2], 1, "{uploads:?}");
    assert_eq!(uploads[3], 0, "{uploads:?}");
    assert_eq!(pool.vertex_uploads(), sr.morph_uploads());
    assert_ne!(images[1], images[2], "the morphed cube looks different mid-animation");
}

#[test]
fn dynamic_bounds_hold_every_posed_vertex_and_keep_edge_characters_visible() {
    let Some(ctx) = test_device() else { return };
    for name in ["CesiumMan", "RiggedFigure"] {
        let scene = model(name);
        let mut pool = MeshPool::new();
        let mut sr = SceneRenderer::upload(&ctx, &mut pool, &scene).unwrap();
        sr.ground_plane = false;
        let mut pose = ScenePose::new(&scene);
        let mut frame = FrameData::default();
        for t in [0.25, 0.7, 1.2] {
            pose.evaluate(&scene, Some(0), t).unwrap();
            frame.clear();
            sr.extract(&ctx, &mut pool, &scene, &pose, 1, &mut frame).unwrap();
            for (obj, (node, mesh, prim)) in frame.objects.iter().zip(sr.draw_origins()) {
                let p = &scene.meshes[mesh].primitives[prim];
                let (Some(stream), Some(skin)) = (&p.skin, scene.nodes[node].skin) else { continue };
                let mut mats = vec![Mat4::IDENTITY; scene.skins[skin].joints.len()];
                pose.skinning_matrices(&scene, skin, node, &mut mats);
                let mut cpu = vec![[0.0; 3]; p.positions.len()];
                SkinningJob {
                    palette: &mats,
                    joints: &stream.joints,
                    weights: &stream.weights,
                    positions: &p.positions,
                    normals: &[],
                    tangents: &[],
                    out_positions: &mut cpu,
                    out_normals: &mut [],
                    out_tangents: &mut [],
                }
                .run()
                .unwrap();
                let b = obj.bounds.unwrap();
                let eps = (b.max - b.min).length() * 1e-5;
                for v in &cpu {
                    let w = pose.world[node].transform_point3(Vec3::from(*v));
                    assert!(
                        w.cmpge(b.min - eps).all() && w.cmple(b.max + eps).all(),
                        "{name} t={t}: {w} outside"
                    );
                }
            }
        }
    }
    // A character whose posed bounds only just reach into the view is drawn, not culled, and
    // still casts: the shadow box is fitted to the caster bounds.
    let scene = model("CesiumMan");
    let mut pool = MeshPool::new();
    let mut sr = SceneRenderer::upload(&ctx, &mut pool, &scene).unwrap();
    sr.ground_plane = false;
    let mut renderer =
        Renderer::new(&ctx, RendererSettings { shadow_map_size: 128, ..Default::default() }).unwrap();
    let target = renderer.create_target(32, 32);
    let mut pose = ScenePose::new(&scene);
    pose.evaluate(&scene, Some(0), 0.5).unwrap();
    let mut frame = FrameData::default();
    sr.extract(&ctx, &mut pool, &scene, &pose, 1, &mut frame).unwrap();
    let b = sr.bounds().unwrap();
    let size = (b.max - b.min).length();
    // Looking along -Z at a point just past the box's +X face: the edge of the box is inside.
    let look = Vec3::new(b.max.x + size * 0.3, (b.min.y + b.max.y) * 0.5, (b.min.z + b.max.z) * 0.5);
    frame.camera =
        Camera { eye: look + Vec3::Z * size * 2.0, target: look, fov_y: 0.5, ..Default::default() };
    let stats = renderer.render(&pool, &frame, &target).unwrap();
    assert_eq!((stats.visible, stats.culled, stats.shadow_casters), (1, 0, 1), "{stats:?}");
    // Moved further away, it is culled from the view but still casts.
    let far = look + Vec3::X * size * 3.0;
    frame.camera = Camera { eye: far + Vec3::Z * size * 2.0, target: far, fov_y: 0.5, ..Default::default() };
    let stats = renderer.render(&pool, &frame, &target).unwrap();
    assert_eq!((stats.visible, stats.culled, stats.shadow_casters), (0, 0, 1), "{stats:?}");
    frame.shadows = false;
    let stats = renderer.render(&pool, &frame, &target).unwrap();
    assert_eq!((stats.visible, stats.culled, stats.shadow_casters), (0, 1, 0), "{stats:?}");
}

#[test]
fn mesh_pool_gives_skinned_meshes_a_second_stream_of_equal_length_and_static_ones_none() {
    let Some(ctx) = test_device() else { return };
    let scene = model("CesiumMan");
    let mut pool = MeshPool::new();
    let sr = SceneRenderer::upload(&ctx, &mut pool, &scene).unwrap();
    let (node, mesh, prim) = sr.draw_origins()[0];
    assert!(scene.nodes[node].skin.is_some());
    let n = scene.meshes[mesh].primitives[prim].positions.len() as u64;
    let skinned = pool.get(marrow_engine::render::MeshHandle(0)).unwrap();
    assert_eq!(skinned.vertex_count as u64, n);
    let stride = size_of::<marrow_engine::render::types::GpuVertex>() as u64;
    assert_eq!(skinned.vertices.size(), n * stride);
    assert_eq!(skinned.skin.as_ref().unwrap().size(), n * 24);
    // The ground plane (the last mesh) is static: one stream only.
    let ground = pool.get(marrow_engine::render::MeshHandle(pool.len() as u32 - 1)).unwrap();
    assert!(ground.skin.is_none());
    assert_eq!(ground.vertices.size(), 4 * stride);
    // Bad input is refused, not uploaded.
    let before = pool.len();
    let tri = [[0.0f32; 3]; 3];
    let bad_skin = MeshData {
        positions: &tri,
        skin: Some((&[[0; 4]; 2], &[[1.0, 0.0, 0.0, 0.0]; 2])),
        ..Default::default()
    };
    assert!(pool.add(&ctx.device, &bad_skin).is_err());
    let bad_index = MeshData { positions: &tri, indices: Some(&[0, 1, 3]), ..Default::default() };
    assert!(pool.add(&ctx.device, &bad_index).is_err());
    assert_eq!(pool.len(), before);
}

#[test]
fn broken_shader_directory_at_start_falls_back_to_embedded_and_reports() {
    let Some(ctx) = test_device() else { return };
    let dir = std::env::temp_dir().join(format!("marrow-broken-start-{}", std::process::id()));
    copy_shaders(&dir);
    std::fs::write(dir.join("mesh.wgsl"), "#import common\nfn broken( {\n").unwrap();
    let settings = RendererSettings {
        shaders: ShaderSource::Directory(dir.clone()),
        shadow_map_size: 64,
        ..Default::default()
    };
    let mut renderer = Renderer::new(&ctx, settings).unwrap();
    let err = renderer.shader_error().cloned().expect("the error is kept for display");
    assert!(matches!(err, marrow_engine::render::ShaderError::Compile { .. }), "{err}");
    assert!(err.to_string().contains("mesh.wgsl"), "{err}");
    // Still broken: reload fails again and keeps the (embedded) pipelines.
    assert!(renderer.reload_shaders().is_err());
    assert_eq!(renderer.shader_reloads(), 0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_crowd_is_one_instanced_run_per_pass_with_skinned_runs_first() {
    let Some(ctx) = test_device() else { return };
    let scene = model("CesiumMan");
    let mut pool = MeshPool::new();
    let mut sr = SceneRenderer::upload(&ctx, &mut pool, &scene).unwrap();
    let mut renderer =
        Renderer::new(&ctx, RendererSettings { shadow_map_size: 128, ..Default::default() }).unwrap();
    let target = renderer.create_target(48, 48);
    let pose = ScenePose::new(&scene);
    let mut frame = FrameData::default();
    // Three characters (the ground plane is added by each extract; keep only the last one).
    for k in 0..3 {
        sr.ground_plane = k == 2;
        let start = frame.objects.len();
        sr.extract(&ctx, &mut pool, &scene, &pose, 1, &mut frame).unwrap();
        for o in &mut frame.objects[start..start + 1] {
            let m = Mat4::from_translation(Vec3::X * k as f32);
            o.world_from_model = m * o.world_from_model;
            o.bounds = o.bounds.map(|b| marrow_engine::skinning::Aabb {
                min: b.min + Vec3::X * k as f32,
                max: b.max + Vec3::X * k as f32,
            });
        }
    }
    assert_eq!(frame.objects.len(), 4);
    assert_eq!(frame.palette.len(), 3 * scene.rigs[0].skeleton.bone_count());
    assert_eq!(frame.objects.iter().map(|o| o.palette_offset).collect::<Vec<_>>()[..3], [0, 19, 38]);
    let mut b = sr.bounds().unwrap();
    b.max.x += 2.0;
    frame.camera = Camera::framing(b, 1.0);
    let stats = renderer.render(&pool, &frame, &target).unwrap();
    // Shadow: 1 skinned run (the ground casts nothing); depth and forward: skinned run + ground.
    assert_eq!(stats.draw_calls, 5, "{stats:?}");
    assert_eq!(stats.skinned_pipeline_binds, 3, "{stats:?}");
    assert_eq!((stats.visible, stats.shadow_casters), (4, 3), "{stats:?}");
}

fn particle(position: [f32; 3], radius: f32, rgba: [f32; 4]) -> marrow_engine::render::ParticleInstance {
    marrow_engine::render::ParticleInstance {
        position,
        radius,
        normal: [0.0, 0.0, 1.0],
        color: marrow_engine::render::ParticleInstance::pack_color(rgba),
    }
}

#[test]
fn particle_discs_are_round_camera_facing_and_one_draw_per_pass() {
    let Some(ctx) = test_device() else { return };
    let pool = MeshPool::new();
    let mut renderer =
        Renderer::new(&ctx, RendererSettings { shadow_map_size: 256, ..Default::default() }).unwrap();
    let target = renderer.create_target(64, 64);
    let mut frame = FrameData {
        camera: Camera {
            eye: Vec3::new(0.0, 0.0, 3.0),
            target: Vec3::ZERO,
            fov_y: 0.8,
            ..Default::default()
        },
        ..Default::default()
    };
    frame.particles = vec![particle([0.0, 0.0, 0.0], 0.5, [0.1, 0.9, 0.1, 1.0])];
    let stats = renderer.render(&pool, &frame, &target).unwrap();
    assert_eq!(stats.particles, 1);
    assert_eq!(stats.draw_calls, 3, "shadow + depth + forward, one instanced draw each");
    let px = renderer.read_color(&target).unwrap();
    let at = |x: usize, y: usize| &px[(y * 64 + x) * 4..(y * 64 + x) * 4 + 3];
    let background = at(1, 1).to_vec();
    let centre = at(32, 32);
    assert!(centre[1] > centre[0] + 60 && centre[1] > centre[2] + 60, "green disc at the centre: {centre:?}");
    // Half height of the view at the disc: 3 tan(0.4) = 1.27 world units over 32 pixels, so the
    // disc's radius is about 12.6 pixels. Just inside the radius: drawn. Inside its square but
    // outside the circle (a corner): background.
    assert_ne!(at(32 + 11, 32), &background[..], "inside the radius");
    assert_eq!(at(32 + 10, 32 - 10), &background[..], "the square's corner, outside the circle");
    // Seen from the side, the disc still faces the camera (same apparent radius).
    frame.camera.eye = Vec3::new(3.0, 0.0, 0.0);
    renderer.render(&pool, &frame, &target).unwrap();
    let px = renderer.read_color(&target).unwrap();
    let side = &px[(32 * 64 + 32 + 11) * 4..(32 * 64 + 32 + 11) * 4 + 3];
    assert_ne!(side, &background[..], "a side view sees a disc, not an edge");
}

#[test]
fn particles_cast_shadows_onto_meshes() {
    let Some(ctx) = test_device() else { return };
    let mut pool = MeshPool::new();
    // A ground quad (y = 0, facing up), 6 x 6.
    let ground = pool
        .add(
            &ctx.device,
            &MeshData {
                positions: &[[-3.0, 0.0, -3.0], [3.0, 0.0, -3.0], [3.0, 0.0, 3.0], [-3.0, 0.0, 3.0]],
                normals: &[[0.0, 1.0, 0.0]; 4],
                indices: Some(&[0, 2, 1, 0, 3, 2]),
                ..Default::default()
            },
        )
        .unwrap();
    let mut renderer =
        Renderer::new(&ctx, RendererSettings { shadow_map_size: 512, ..Default::default() }).unwrap();
    let target = renderer.create_target(96, 96);
    let mut frame = FrameData {
        camera: Camera {
            eye: Vec3::new(0.0, 6.0, 0.01),
            target: Vec3::ZERO,
            fov_y: 0.9,
            ..Default::default()
        },
        ..Default::default()
    };
    frame.light.direction = Vec3::new(0.0, -1.0, 0.0);
    frame.objects.push(marrow_engine::render::DrawObject {
        mesh: ground,
        world_from_model: Mat4::IDENTITY,
        color: [0.8, 0.8, 0.8, 1.0],
        material: 0,
        palette_offset: 0,
        bounds: None,
        casts_shadow: true,
        outlined: false,
        pick_id: 0,
    });
    // A tight 7 x 7 block of particles 1 unit above the ground, off to +X, seen from above: its
    // shadow falls straight down under it.
    for i in 0..7 {
        for k in 0..7 {
            frame.particles.push(particle(
                [1.5 + 0.1 * i as f32, 1.0, -0.3 + 0.1 * k as f32],
                0.08,
                [1.0, 0.2, 0.2, 1.0],
            ));
        }
    }
    renderer.render(&pool, &frame, &target).unwrap();
    let lit_with = renderer.read_color(&target).unwrap();
    // Looking straight down, the particles hide their own shadow; compare the ground at -X
    // (no particle above it) with the same frame where the block moves over -X.
    let luminance = |px: &[u8], x: usize, y: usize| {
        let i = (y * 96 + x) * 4;
        px[i] as u32 + px[i + 1] as u32 + px[i + 2] as u32
    };
    let open_ground = luminance(&lit_with, 20, 48);
    for p in &mut frame.particles {
        p.position[0] -= 3.4; // over x = -1.9 .. -1.3, around pixel column 20
        p.position[1] = 0.6;
    }
    // Seen from the side (+Z), low: the ground under the block is in its shadow.
    frame.camera = Camera {
        eye: Vec3::new(-1.6, 0.35, 3.0),
        target: Vec3::new(-1.6, 0.0, 0.0),
        fov_y: 0.6,
        ..Default::default()
    };
    renderer.render(&pool, &frame, &target).unwrap();
    let shadowed = renderer.read_color(&target).unwrap();
    frame.particles.clear();
    renderer.render(&pool, &frame, &target).unwrap();
    let bare = renderer.read_color(&target).unwrap();
    if let Ok(dir) = std::env::var("MARROW_DEBUG_PNG") {
        for (name, px) in [("shadowed", &shadowed), ("bare", &bare), ("above", &lit_with)] {
            image::save_buffer(format!("{dir}/{name}.png"), px, 96, 96, image::ColorType::Rgba8).unwrap();
        }
    }
    // The ground below the block (seen from low in front, the shadow lies under it on the ground).
    let (x, y) = (48, 48);
    assert!(
        luminance(&shadowed, x, y) + 30 < luminance(&bare, x, y),
        "shadowed {} vs bare {} (open ground from above: {open_ground})",
        luminance(&shadowed, x, y),
        luminance(&bare, x, y)
    );
}

#[test]
fn crowd_instances_skin_on_the_gpu_as_the_cpu_reference_and_upload_once() {
    use marrow_engine::crowd::BakeJob;
    use marrow_engine::crowd::layout::{Layout, place};
    use marrow_engine::render::crowd::{CrowdMesh, crowd_bounds, crowd_data};
    let Some(ctx) = test_device() else { return };
    let scene = model("CesiumMan");
    let rig = &scene.rigs[0];
    let clip = &scene.animations[0].clips[0].clip;
    let baked = BakeJob { skeleton: &rig.skeleton, clips: &[clip], frames: 30 }.run().unwrap();
    let mut pool = MeshPool::new();
    let member = CrowdMesh::upload(&ctx, &mut pool, &scene).unwrap();
    let placements = place(4, 1, Layout::Grid { spacing: 1.5 }, (0.7, 1.3), 3);
    let local = baked.bounds(&member.bone_boxes).unwrap();
    let bounds = crowd_bounds(local, &placements).unwrap();
    let mut renderer =
        Renderer::new(&ctx, RendererSettings { shadow_map_size: 256, ..Default::default() }).unwrap();
    let target = renderer.create_target(96, 96);
    let time = 0.73;
    let mut frame = FrameData {
        camera: Camera::framing(bounds, 1.0),
        crowd: Some(std::sync::Arc::new(crowd_data(&baked, &placements, &[], 5))),
        crowd_time: time,
        ..Default::default()
    };
    member.draws(4, bounds, &mut frame.crowd_draws);
    let stats = renderer.render(&pool, &frame, &target).unwrap();
    assert_eq!(stats.draw_calls, 3 * member.meshes.len() as u32, "one instanced draw per primitive per pass");
    assert_eq!(stats.crowd_instances, 4);
    assert!(stats.crowd_bytes >= baked.bytes() as u64, "uploaded on the first frame");
    let again = renderer.render(&pool, &frame, &target).unwrap();
    assert_eq!(again.crowd_bytes, 0, "a playing crowd uploads nothing but the frame uniform");

    // Every instance's GPU-skinned vertices against the CPU reference (`palette_at`).
    let prim = &scene.meshes[rig.bindings[0].mesh].primitives[0];
    let skin = prim.skin.as_ref().unwrap();
    let joints = skin.joints_to_bones(&rig.joint_to_bone);
    let size = (bounds.max - bounds.min).length();
    let mut palette = vec![Mat4::IDENTITY; rig.skeleton.bone_count()];
    let mut firsts = Vec::new();
    for (i, p) in placements.iter().enumerate() {
        let gpu = renderer.crowd_skinned_positions(&pool, member.meshes[0], i as u32).unwrap();
        assert!(baked.palette_at(p.clip as usize, time, p.phase, p.speed, &mut palette));
        let mut worst = 0.0f32;
        for (v, q) in prim.positions.iter().enumerate() {
            let (j, w) = (joints[v], skin.weights[v]);
            let m = (0..4).fold(Mat4::ZERO, |acc, k| acc + palette[j[k] as usize] * w[k]);
            let cpu = p.world.transform_point3(m.transform_point3(Vec3::from(*q)));
            worst = worst.max(cpu.distance(Vec3::from(gpu[v])));
        }
        assert!(worst < 1e-4 * size, "instance {i}: {worst} (crowd size {size})");
        firsts.push(Vec3::from(gpu[0]) - p.world.w_axis.truncate());
    }
    // Different phases, different poses (relative to where each stands).
    assert!(firsts[0].distance(firsts[1]) > 1e-3, "{firsts:?}");
}

/// `ctx`'s adapter again, as a device with a small GPU's limits: textures of at most 2,048
/// pixels a side, storage bindings of at most 1 MB.
fn small_device(ctx: &GpuContext) -> GpuContext {
    use marrow_engine::render::wgpu;
    let mut limits = wgpu::Limits::downlevel_defaults();
    limits.max_texture_dimension_2d = 2048;
    limits.max_storage_buffer_binding_size = 1 << 20;
    limits.max_storage_buffers_per_shader_stage =
        ctx.adapter.limits().max_storage_buffers_per_shader_stage.min(8);
    let descriptor =
        wgpu::DeviceDescriptor { label: Some("small"), required_limits: limits, ..Default::default() };
    let (device, queue) = pollster::block_on(ctx.adapter.request_device(&descriptor)).unwrap();
    GpuContext::from_parts(ctx.instance.clone(), ctx.adapter.clone(), device, queue)
}

#[test]
fn a_render_past_a_small_gpus_limits_is_a_named_error_not_a_panic() {
    use marrow_engine::crowd::BakeJob;
    use marrow_engine::crowd::layout::{Layout, place};
    use marrow_engine::render::RenderError;
    use marrow_engine::render::crowd::render_crowd;
    let Some(big) = test_device() else { return };
    let ctx = small_device(&big);
    let scene = model("CesiumMan");
    // `render --size 8192`: a side past the device's 2,048.
    let request = RenderRequest { width: 8192, height: 8192, ..Default::default() };
    match render_gltf(&ctx, &scene, &request) {
        Err(RenderError::Limit(why)) => {
            assert!(why.contains("8192x8192") && why.contains("at most 2048 pixels a side"), "{why}")
        }
        other => panic!("expected a limit error, got {:?}", other.map(|i| (i.width, i.height))),
    }
    // A crowd listing its clip 40 times: 40 baked copies (2.2 MB) past the 1 MB binding.
    let rig = &scene.rigs[0];
    let clip = &scene.animations[0].clips[0].clip;
    let clips = vec![clip; 40];
    let baked = BakeJob { skeleton: &rig.skeleton, clips: &clips, frames: 60 }.run().unwrap();
    assert!(baked.bytes() > 1 << 20, "{} bytes", baked.bytes());
    let placements = place(40, 40, Layout::Grid { spacing: 1.5 }, (0.7, 1.3), 3);
    let shaders = ShaderSource::Embedded;
    match render_crowd(&ctx, &scene, &baked, &placements, &[], 0.5, 64, 64, shaders) {
        Err(RenderError::Limit(why)) => {
            assert!(why.contains("MB in one buffer") && why.contains("at most 1 MB"), "{why}")
        }
        other => panic!("expected a limit error, got {:?}", other.map(|i| (i.width, i.height))),
    }
    // The same frames fit the full device.
    let image =
        render_crowd(&big, &scene, &baked, &placements, &[], 0.5, 64, 64, ShaderSource::Embedded).unwrap();
    assert_eq!((image.width, image.height), (64, 64));
}

/// CesiumMan's project world, walked to `t`, rendered with `ghosts` (onion skins) through the
/// world extraction, framed on the bind-pose character so both renders share one camera.
fn render_world_with_ghosts(
    ctx: &GpuContext,
    ghosts_at: &[f32],
    palettes: bool,
) -> (Vec<u8>, FrameData, usize) {
    use marrow_engine::project::{Library, Project};
    use marrow_engine::render::{Ghost, WorldRenderer};
    use marrow_engine::scene::World;
    let dir = support::project_dir("cesium_man");
    let project = Project::load(&dir).unwrap();
    let lib = Library::load(&project, &dir).unwrap();
    let desc = project.scenes.values().next().unwrap();
    let mut world = World::new();
    world.load(desc, &lib).unwrap();
    world.frame(0, 1.0 / 60.0);
    let rig = world.rigs().next().unwrap();
    let mut wr = WorldRenderer::new();
    wr.view.grid = false;
    wr.view.ghosts = ghosts_at
        .iter()
        .map(|t| {
            let (model, palette) = world.pose_and_palette_at(rig, *t).unwrap();
            Ghost {
                rig,
                model,
                palette: if palettes { palette } else { Vec::new() },
                color: [0.35, 0.55, 1.0, 0.8],
            }
        })
        .collect();
    let mut pool = MeshPool::new();
    let mut frame = FrameData::default();
    wr.extract(ctx, &mut pool, &world, 1, &mut frame).unwrap();
    // Framed on the character (its skinned primitives' posed bounds), room for its stride.
    let b = frame
        .objects
        .iter()
        .filter(|o| pool.get(o.mesh).is_some_and(|m| m.is_skinned()))
        .filter_map(|o| o.bounds)
        .reduce(marrow_engine::skinning::Aabb::union)
        .unwrap();
    let grown =
        marrow_engine::skinning::Aabb { min: b.min - Vec3::splat(0.3), max: b.max + Vec3::splat(0.3) };
    frame.camera = Camera::framing(grown, 1.0);
    let mut renderer = Renderer::new(ctx, RendererSettings::default()).unwrap();
    let target = renderer.create_target(128, 128);
    renderer.render(&pool, &frame, &target).unwrap();
    let skinned = frame.objects.iter().filter(|o| pool.get(o.mesh).is_some_and(|m| m.is_skinned())).count();
    (renderer.read_color(&target).unwrap(), frame, skinned)
}

#[test]
fn onion_skin_ghosts_draw_the_rigs_meshes_translucent_in_their_tint_at_their_pose() {
    let Some(ctx) = test_device() else { return };
    let (plain, frame, _) = render_world_with_ghosts(&ctx, &[], true);
    assert!(frame.ghosts.is_empty());
    // Skeleton lines only (what onion skins were): a thin change.
    let (lines, _, _) = render_world_with_ghosts(&ctx, &[0.35, 0.7], false);
    // Mesh ghosts: one translucent draw per skinned primitive per ghost, on palettes appended
    // after the rig's own.
    let (ghosted, frame, skinned) = render_world_with_ghosts(&ctx, &[0.35, 0.7], true);
    assert!(skinned > 0);
    assert_eq!(frame.ghosts.len(), 2 * skinned, "one ghost draw per skinned primitive per ghost");
    let bones = frame.palette.len() / 3;
    assert_eq!(frame.palette.len(), 3 * bones, "the rig's palette and one per ghost");
    assert!(
        frame.ghosts.iter().all(|g| g.palette_offset as usize >= bones && !g.casts_shadow && g.pick_id == 0)
    );
    assert!(
        frame.ghosts.iter().all(|g| g.color[3] < 0.8 && g.color[3] > 0.0),
        "ghost meshes are translucent"
    );
    if let Ok(d) = std::env::var("MARROW_DUMP") {
        for (n, img) in [("plain", &plain), ("lines", &lines), ("ghosted", &ghosted)] {
            std::fs::write(format!("{d}/{n}.rgba"), img).unwrap();
        }
    }
    let rows = 0..128;
    let by_lines = diff_fraction(&plain, &lines, 128, rows.clone());
    let by_meshes = diff_fraction(&plain, &ghosted, 128, rows);
    assert!(
        by_meshes > 2.0 * by_lines && by_meshes > 0.015,
        "mesh ghosts change {by_meshes} of the view, skeleton lines alone {by_lines}"
    );
    // The changed pixels lean to the tint (blue over the grey background and the body).
    let (mut blue, mut changed) = (0, 0);
    for (p, q) in plain.chunks(4).zip(ghosted.chunks(4)) {
        if p[..3].iter().zip(&q[..3]).any(|(a, b)| a.abs_diff(*b) > 8) {
            changed += 1;
            blue += (q[2] as i32 - p[2] as i32 > q[0] as i32 - p[0] as i32) as usize;
        }
    }
    assert!(blue * 10 > changed * 8, "{blue} of {changed} changed pixels turned toward the blue tint");
}

/// The world of sample `name`'s main scene, posed by one paused frame.
fn sample_world(name: &str) -> marrow_engine::scene::World {
    use marrow_engine::project::{Library, Project};
    let dir = support::project_dir(name);
    let p = Project::load(&dir).unwrap();
    let mut w = Library::load(&p, &dir).unwrap().instantiate(&p, "scenes/main.scene.ron").unwrap();
    w.frame(0, 0.0);
    w
}

#[test]
fn a_rig_with_nothing_else_to_draw_shows_its_bones_with_the_overlay_off_and_others_do_not() {
    // An FBX capture (or a glTF skeleton) imported without a mesh drew nothing at all until the
    // Skeletons overlay was turned on. No GPU: the overlay's lines and the joint pick are CPU work.
    use marrow_engine::render::{WorldRenderer, pick_bone, rig_shows_itself};
    let lines = |w: &marrow_engine::scene::World, all: bool| {
        let mut out = Vec::new();
        WorldRenderer::new().skeleton_lines(w, all, &mut out);
        out.len()
    };
    // A skinned body (CesiumMan), props on sockets (the runner's boxes), a particle cloud.
    for (name, rig) in [("cesium_man", "CesiumMan"), ("runner", "Runner"), ("particle_figure", "Figure")] {
        let w = sample_world(name);
        assert!(rig_shows_itself(&w, w.find(rig).unwrap()), "{name}'s {rig} shows itself");
        assert_eq!(lines(&w, false), 0, "{name}: no bones with the overlay off");
        assert!(lines(&w, true) > 0, "{name}: bones with it on");
    }
    // The runner with its boxes taken off: its bones are all there is.
    let mut w = sample_world("runner");
    let rig = w.find("Runner").unwrap();
    let props: Vec<_> =
        w.entities().filter(|e| w.mesh(*e).is_some()).filter(|e| w.parent(*e) == Some(rig)).collect();
    assert!(props.len() > 3, "the runner's socketed boxes");
    for e in props {
        w.set_mesh(e, None).unwrap();
    }
    assert!(!rig_shows_itself(&w, rig));
    let bones = w.animator(rig).unwrap().skeleton().bone_count();
    // A segment to the parent (two vertices) for each bone but the root, a cross (six) each.
    assert_eq!(lines(&w, false), 2 * (bones - 1) + 6 * bones);
    assert_eq!(lines(&w, false), lines(&w, true), "the same lines as the overlay draws");
    // Its joints pick with the overlay off; the ground's box below it never did.
    let camera = Camera { target: Vec3::new(0.0, 1.0, 0.0), ..Camera::default() }.clip_from_world(1.0);
    let size = marrow_engine::glam::Vec2::new(400.0, 400.0);
    let pose = w.rig_pose(rig).unwrap();
    let knee = (w.world_matrix(rig).unwrap() * pose.model[2]).w_axis.truncate();
    let at = marrow_engine::render::world::project(camera, size, knee).unwrap();
    assert_eq!(pick_bone(&w, camera, size, at, 8.0, false), Some((rig, 2)));
    let w = sample_world("runner");
    assert_eq!(
        pick_bone(&w, camera, size, at, 8.0, false),
        None,
        "a rig that shows itself picks with the overlay on"
    );
    assert_eq!(pick_bone(&w, camera, size, at, 8.0, true), Some((w.find("Runner").unwrap(), 2)));
}
