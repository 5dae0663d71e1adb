//! Driving the renderer from an imported glTF scene: [`SceneRenderer`] uploads every triangle
//! primitive once (skinned primitives with their joints remapped to rig bone order, so every
//! mesh of a rig shares the rig's palette slice), then per frame extracts draw objects from a
//! [`ScenePose`]: the packed palette, morph instances rebuilt when their weights' version moves,
//! dynamic bounds (joint-local boxes moved by the posed joints, inflated by the largest morph
//! displacement), a ground plane and the skeleton overlay. [`render_gltf`] renders one frame
//! offscreen (the `marrow render` command and the tests use it).
//!
//! It does not play animations (the caller chooses the time) and does not own the device.

use std::collections::HashMap;
use std::path::Path;

use glam::{Mat4, Vec3};

use super::RenderError;
use super::camera::Camera;
use super::gpu::GpuContext;
use super::mesh::{MeshData, MeshHandle, MeshPool, upload_material_textures};
use super::morph::{self, MorphStream};
use super::renderer::{DrawObject, FrameData, FrameStats, Renderer, RendererSettings};
use super::shader::ShaderSource;
use super::types::LineVertex;
use crate::gltf::{ImportedScene, ScenePose};
use crate::skinning::{Aabb, posed_bounds};

const COLORS: [[f32; 4]; 4] =
    [[0.75, 0.55, 0.42, 1.0], [0.35, 0.5, 0.75, 1.0], [0.6, 0.7, 0.45, 1.0], [0.7, 0.45, 0.6, 1.0]];
const GROUND_COLOR: [f32; 4] = [0.55, 0.55, 0.52, 1.0];

#[derive(Clone, Copy, Debug)]
struct SceneDraw {
    node: usize,
    mesh_index: usize,
    primitive: usize,
    mesh: MeshHandle,
    /// (glTF skin, rig, binding index in the rig).
    skin: Option<(usize, usize, usize)>,
    morph: Option<usize>,
    color: [f32; 4],
    material: u32,
}

#[derive(Debug)]
struct MorphSlot {
    node: usize,
    mesh: usize,
    primitive: usize,
    stream: MorphStream,
    /// Per target, the longest position delta.
    max_delta: Vec<f32>,
}

/// One imported scene's GPU meshes and per-frame extraction state.
#[derive(Debug)]
pub struct SceneRenderer {
    draws: Vec<SceneDraw>,
    morphs: Vec<MorphSlot>,
    rig_offsets: Vec<u32>,
    ground: Option<MeshHandle>,
    joint_world: Vec<Mat4>,
    bounds: Option<Aabb>,
    morph_uploads: u64,
    /// Skeleton overlay: draw bone segments and joint dots for every rig.
    pub overlay: bool,
    /// The rig whose bones also get an axis triad (`None`: none).
    pub selected_rig: Option<usize>,
    /// Whether to add a ground plane under the posed bounds (it receives shadows).
    pub ground_plane: bool,
}

impl SceneRenderer {
    /// Uploads every triangle primitive of `scene` into `pool` (other topologies are skipped).
    pub fn upload(ctx: &GpuContext, pool: &mut MeshPool, scene: &ImportedScene) -> Result<Self, RenderError> {
        let device = &ctx.device;
        let textures = upload_material_textures(device, &ctx.queue, pool, &scene.materials, &scene.images);
        let mut cache: HashMap<(usize, usize, Option<usize>), MeshHandle> = HashMap::new();
        let mut draws = Vec::new();
        let mut morphs = Vec::new();
        for (n, node) in scene.nodes.iter().enumerate() {
            let Some(mi) = node.mesh else { continue };
            let Some(mesh) = scene.meshes.get(mi) else { continue };
            for (pi, prim) in mesh.primitives.iter().enumerate() {
                if prim.mode != 4 || prim.positions.is_empty() {
                    continue;
                }
                let skin = node.skin.filter(|_| prim.skin.is_some()).and_then(|s| {
                    let rig_index = scene.skins.get(s)?.rig;
                    let rig = scene.rigs.get(rig_index)?;
                    let binding = rig.bindings.iter().position(|b| b.node == n && b.skin == s)?;
                    Some((s, rig_index, binding))
                });
                let key = (mi, pi, skin.map(|s| s.0));
                let handle = match cache.get(&key) {
                    Some(h) => *h,
                    None => {
                        let remapped = match (skin, &prim.skin) {
                            (Some((_, r, _)), Some(stream)) => {
                                Some(stream.joints_to_bones(&scene.rigs[r].joint_to_bone))
                            }
                            _ => None,
                        };
                        let h = pool.add(device, &MeshData::of_primitive(prim, remapped.as_deref()))?;
                        cache.insert(key, h);
                        h
                    }
                };
                let mut morph = None;
                let mut mesh_handle = handle;
                if !prim.targets.is_empty() {
                    let inst = pool
                        .add_dynamic_instance(device, handle)
                        .ok_or(RenderError::UnknownMesh(handle.0))?;
                    mesh_handle = inst;
                    morph = Some(morphs.len());
                    morphs.push(MorphSlot {
                        node: n,
                        mesh: mi,
                        primitive: pi,
                        stream: MorphStream::new(inst, prim, &node.morph_weights),
                        max_delta: morph::max_deltas(prim),
                    });
                }
                let palette = if skin.is_some() { COLORS[pi % 4] } else { COLORS[(pi + 1) % 4] };
                let color =
                    prim.material.and_then(|m| scene.materials.get(m)).map_or(palette, |m| m.base_color);
                let material =
                    prim.material.and_then(|m| textures.get(m).copied().flatten()).map_or(0, |t| t.0 + 1);
                draws.push(SceneDraw {
                    node: n,
                    mesh_index: mi,
                    primitive: pi,
                    mesh: mesh_handle,
                    skin,
                    morph,
                    color,
                    material,
                });
            }
        }
        let max_joints = scene.skins.iter().map(|s| s.joints.len()).max().unwrap_or(0);
        // Scaled under the posed bounds each frame.
        let ground = ground_quad(device, pool)?;
        Ok(Self {
            draws,
            morphs,
            rig_offsets: vec![0; scene.rigs.len()],
            ground: Some(ground),
            joint_world: vec![Mat4::IDENTITY; max_joints],
            bounds: None,
            morph_uploads: 0,
            overlay: false,
            selected_rig: None,
            ground_plane: true,
        })
    }

    /// World bounds of everything drawn by the last [`SceneRenderer::extract`] (ground excluded).
    pub fn bounds(&self) -> Option<Aabb> {
        self.bounds
    }

    /// Where each scene object [`SceneRenderer::extract`] pushes comes from, in push order
    /// (the ground plane, pushed last, is not listed): `(node, mesh, primitive)`.
    pub fn draw_origins(&self) -> Vec<(usize, usize, usize)> {
        self.draws.iter().map(|d| (d.node, d.mesh_index, d.primitive)).collect()
    }

    /// Morph vertex uploads so far (one per morph instance whose weights really changed).
    pub fn morph_uploads(&self) -> u64 {
        self.morph_uploads
    }

    /// How many morph instances the scene has.
    pub fn morph_instances(&self) -> usize {
        self.morphs.len()
    }

    /// Appends this scene's draw objects, palettes (as version `pose_version`) and overlay lines
    /// to `frame`, and rebuilds the morph instances whose weights changed. `scene` must be the
    /// scene given to [`SceneRenderer::upload`] (another one gives wrong draws or an error, never
    /// a panic). Calling it several times into one frame appends several instances (crowds).
    pub fn extract(
        &mut self,
        ctx: &GpuContext,
        pool: &mut MeshPool,
        scene: &ImportedScene,
        pose: &ScenePose,
        pose_version: u64,
        frame: &mut FrameData,
    ) -> Result<(), RenderError> {
        frame.palette_version = pose_version;
        for (r, offset) in self.rig_offsets.iter_mut().enumerate() {
            *offset = frame.palette.len() as u32;
            if let Some(p) = pose.rig_palette.get(r) {
                frame.palette.extend_from_slice(p);
            }
        }
        // Morphs: rebuild the dynamic stream from the base when the version moved.
        for slot in &mut self.morphs {
            if let Some(w) = pose.morph_weights.get(slot.node) {
                slot.stream.state.set_weights(w);
            }
            let Some(prim) = scene.meshes.get(slot.mesh).and_then(|m| m.primitives.get(slot.primitive))
            else {
                return Err(RenderError::Mesh(format!(
                    "the scene has no mesh {} primitive {}",
                    slot.mesh, slot.primitive
                )));
            };
            if slot.stream.upload(prim, pool, &ctx.queue)? {
                self.morph_uploads += 1;
            }
        }
        let mut all: Option<Aabb> = None;
        for d in &self.draws {
            let inflate = d
                .morph
                .and_then(|m| self.morphs.get(m))
                .map_or(0.0, |s| morph::inflation(s.stream.state.weights(), &s.max_delta));
            let mesh = pool.get(d.mesh).ok_or(RenderError::UnknownMesh(d.mesh.0))?;
            let (world_from_model, palette_offset, bounds) = match d.skin {
                Some((skin, rig, binding)) => {
                    let joints =
                        scene.skins.get(skin).map_or(0, |s| s.joints.len()).min(self.joint_world.len());
                    let jw = &mut self.joint_world[..joints];
                    pose.joint_world(scene, skin, jw);
                    let b = scene
                        .rigs
                        .get(rig)
                        .and_then(|r| r.bindings.get(binding))
                        .and_then(|b| posed_bounds(&b.joint_bounds, jw));
                    let world = pose.rig_world(scene, rig);
                    let offset = self.rig_offsets.get(rig).copied().unwrap_or(0);
                    (world, offset, b.unwrap_or_else(|| mesh.bounds.transformed(&world)))
                }
                None => {
                    let world = pose.world.get(d.node).copied().unwrap_or(Mat4::IDENTITY);
                    (world, 0, mesh.bounds.transformed(&world))
                }
            };
            // The morph inflation is in model units; scale it by the largest axis scale.
            let scale =
                world_from_model.x_axis.truncate().length().max(world_from_model.y_axis.truncate().length());
            let pad = Vec3::splat(inflate * scale.max(1.0));
            let bounds = Aabb { min: bounds.min - pad, max: bounds.max + pad };
            all = Some(all.map_or(bounds, |a| a.union(bounds)));
            frame.objects.push(DrawObject {
                mesh: d.mesh,
                world_from_model,
                color: d.color,
                material: d.material,
                palette_offset,
                bounds: Some(bounds),
                casts_shadow: true,
                outlined: d.skin.is_some(),
                pick_id: 0,
            });
        }
        self.bounds = all;
        if let (true, Some(ground), Some(b)) = (self.ground_plane, self.ground, all) {
            frame.objects.push(DrawObject { material: 1, ..ground_under(ground, b, b.min.y, 1.5) });
        }
        if self.overlay {
            self.skeleton_lines(scene, pose, &mut frame.lines);
        }
        Ok(())
    }

    /// Appends the skeleton overlay: per bone a segment to its parent and a dot (a small
    /// three-axis cross) at the joint; bones of [`SceneRenderer::selected_rig`] also get an
    /// axis triad (X red, Y green, Z blue).
    pub fn skeleton_lines(&self, scene: &ImportedScene, pose: &ScenePose, out: &mut Vec<LineVertex>) {
        let size = self.bounds.map_or(0.05, |b| (b.max - b.min).length() * 0.012);
        let line = |out: &mut Vec<LineVertex>, a: Vec3, b: Vec3, color: [f32; 4]| {
            out.push(LineVertex { position: a.to_array(), color });
            out.push(LineVertex { position: b.to_array(), color });
        };
        for (r, rig) in scene.rigs.iter().enumerate() {
            let Some(model) = pose.rig_model.get(r) else { continue };
            let world = pose.rig_world(scene, r);
            for (b, m) in model.iter().enumerate() {
                let world_from_bone = world * *m;
                let p = world_from_bone.w_axis.truncate();
                if let Some(parent) = rig.skeleton.parent(b) {
                    let q = (world * model[parent]).w_axis.truncate();
                    line(out, q, p, [1.0, 0.85, 0.2, 1.0]);
                }
                for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                    line(out, p - axis * size * 0.5, p + axis * size * 0.5, [1.0, 1.0, 1.0, 1.0]);
                }
                if self.selected_rig == Some(r) {
                    let cols = [[1.0, 0.15, 0.15, 1.0], [0.2, 1.0, 0.2, 1.0], [0.25, 0.4, 1.0, 1.0]];
                    for (axis, color) in
                        [world_from_bone.x_axis, world_from_bone.y_axis, world_from_bone.z_axis]
                            .into_iter()
                            .zip(cols)
                    {
                        let dir = axis.truncate().try_normalize().unwrap_or(Vec3::ZERO);
                        line(out, p, p + dir * size * 2.5, color);
                    }
                }
            }
        }
    }
}

/// What [`render_gltf`] draws.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderRequest {
    /// Animation index (`None`: the rest pose).
    pub animation: Option<usize>,
    /// Time in seconds.
    pub time: f32,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Draw the skeleton overlay (with axis triads on rig 0).
    pub overlay: bool,
    /// Outline width in pixels around the characters, 1 to 8 (`None`: no outline).
    pub outline: Option<f32>,
    /// Shader source.
    pub shaders: ShaderSource,
}

impl Default for RenderRequest {
    fn default() -> Self {
        Self {
            animation: None,
            time: 0.0,
            width: 256,
            height: 256,
            overlay: false,
            outline: None,
            shaders: ShaderSource::Embedded,
        }
    }
}

/// A rendered frame.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Tightly packed RGBA8 rows, sRGB-encoded.
    pub rgba: Vec<u8>,
    /// What the frame did.
    pub stats: FrameStats,
    /// Posed world bounds the camera was framed on.
    pub bounds: Option<Aabb>,
}

impl RenderedImage {
    /// Writes the image as a PNG: encoded in memory, then written whole or not at all
    /// ([`crate::project::write_atomic`]: an old image stays until the new one is complete).
    pub fn save_png(&self, path: &Path) -> Result<(), RenderError> {
        use image::ImageEncoder;
        let mut png = Vec::new();
        image::codecs::png::PngEncoder::new(&mut png)
            .write_image(&self.rgba, self.width, self.height, image::ExtendedColorType::Rgba8)
            .map_err(|e| RenderError::Image(format!("{}: {e}", path.display())))?;
        crate::project::write_atomic(path, &png).map_err(|e| RenderError::Image(e.to_string()))
    }
}

/// Renders one frame of `scene` offscreen: posed at the request's animation and time, with a
/// camera framed on the posed bounds, a ground plane, the light's shadow, and optionally the
/// skeleton overlay and outline.
pub fn render_gltf(
    ctx: &GpuContext,
    scene: &ImportedScene,
    request: &RenderRequest,
) -> Result<RenderedImage, RenderError> {
    let mut renderer =
        Renderer::new(ctx, RendererSettings { shaders: request.shaders.clone(), ..Default::default() })?;
    let mut pool = MeshPool::new();
    let mut sr = SceneRenderer::upload(ctx, &mut pool, scene)?;
    sr.overlay = request.overlay;
    sr.selected_rig = request.overlay.then_some(0);
    let mut pose = ScenePose::new(scene);
    pose.evaluate(scene, request.animation, request.time).map_err(|e| RenderError::Pose(e.to_string()))?;
    let mut frame = FrameData { outline_width: request.outline, ..Default::default() };
    // First extraction finds the posed bounds; the overlay sizes itself from them.
    sr.extract(ctx, &mut pool, scene, &pose, 1, &mut frame)?;
    if request.overlay {
        frame.clear();
        sr.extract(ctx, &mut pool, scene, &pose, 1, &mut frame)?;
    }
    let bounds = sr.bounds();
    if let Some(b) = bounds {
        frame.camera = Camera::framing(b, request.width as f32 / request.height.max(1) as f32);
    }
    renderer.check_target(request.width, request.height)?;
    let target = renderer.create_target(request.width, request.height);
    let stats = renderer.render(&pool, &frame, &target)?;
    let rgba = renderer.read_color(&target)?;
    Ok(RenderedImage { width: target.width, height: target.height, rgba, stats, bounds })
}

/// Renders particle discs (world space) offscreen with a ground plane under them (receiving their
/// shadow) and a camera framed on them: `marrow particles` uses it.
pub fn render_particles(
    ctx: &GpuContext,
    particles: &[super::ParticleInstance],
    width: u32,
    height: u32,
    shaders: ShaderSource,
) -> Result<RenderedImage, RenderError> {
    let mut renderer = Renderer::new(ctx, RendererSettings { shaders, ..Default::default() })?;
    let mut pool = MeshPool::new();
    let mut frame = FrameData { particles: particles.to_vec(), ..Default::default() };
    let bounds = super::renderer::particle_bounds(particles);
    if let Some(b) = bounds {
        let ground = ground_quad(&ctx.device, &mut pool)?;
        frame.objects.push(ground_under(ground, b, b.min.y, 1.5));
        frame.camera = Camera::framing(b, width as f32 / height.max(1) as f32);
    }
    renderer.check_target(width, height)?;
    let target = renderer.create_target(width, height);
    let stats = renderer.render(&pool, &frame, &target)?;
    let rgba = renderer.read_color(&target)?;
    Ok(RenderedImage { width: target.width, height: target.height, rgba, stats, bounds })
}

/// A unit ground quad (`y = 0`, facing +Y, from -1 to 1 in X and Z) in `pool`.
pub(crate) fn ground_quad(device: &wgpu::Device, pool: &mut MeshPool) -> Result<MeshHandle, RenderError> {
    pool.add(
        device,
        &MeshData {
            positions: &[[-1.0, 0.0, -1.0], [1.0, 0.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]],
            normals: &[[0.0, 1.0, 0.0]; 4],
            indices: Some(&[0, 2, 1, 0, 3, 2]),
            ..Default::default()
        },
    )
}

/// The ground quad `mesh` under `b` at height `y`, spanning `scale` times the box's diagonal:
/// receives shadows, casts none.
pub(crate) fn ground_under(mesh: MeshHandle, b: Aabb, y: f32, scale: f32) -> DrawObject {
    let c = (b.min + b.max) * 0.5;
    let r = (b.max - b.min).length().max(1e-3) * scale;
    let mut g = DrawObject::new(
        mesh,
        Mat4::from_translation(Vec3::new(c.x, y, c.z)) * Mat4::from_scale(Vec3::splat(r)),
    );
    g.color = GROUND_COLOR;
    g.casts_shadow = false;
    g
}
