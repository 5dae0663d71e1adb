//! FBX import (`marrow_engine::fbx`) on files made by a real tool: Blender 3.4's FBX exporter
//! (binary FBX 7.4, centimetres, Z up) writing the Khronos CesiumMan (a skinned walk) and the
//! CMU capture `cmu_131_01` (see `assets/fbx/README.md`). Marrow's poses agree with ufbx's own
//! scene evaluation at the same times (the keys); the capture agrees with Marrow's BVH import of the very
//! file Blender read (so the unit and axis conversion is checked against numbers known from
//! the BVH text); truncated, empty and garbage files are refused by name.

use std::path::{Path, PathBuf};

use glam::{Mat4, Vec3};
use marrow_engine::bvh::{self, BvhOptions};
use marrow_engine::clip::Clip;
use marrow_engine::fbx::{self, FbxError};
use marrow_engine::skeleton::Skeleton;

fn asset(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets").join(rel)
}

/// Every bone's model matrix playing `clip` at `time`.
fn model(sk: &Skeleton, clip: &Clip, time: f32) -> Vec<Mat4> {
    let mut out: Vec<Mat4> = Vec::with_capacity(sk.bone_count());
    for b in 0..sk.bone_count() {
        let mut t = sk.bind_pose[b];
        let ch = &clip.channels()[b];
        if let Some(v) = ch.translation.as_ref().and_then(|tr| tr.sample(time)) {
            t.translation = v;
        }
        if let Some(v) = ch.rotation.as_ref().and_then(|tr| tr.sample(time)) {
            t.rotation = v;
        }
        if let Some(v) = ch.scale.as_ref().and_then(|tr| tr.sample(time)) {
            t.scale = v;
        }
        let local = t.to_mat4();
        out.push(match sk.parent(b) {
            Some(p) => out[p] * local,
            None => local,
        });
    }
    out
}

#[test]
fn a_skinned_walk_from_blender_imports_with_its_rig_mesh_texture_and_clip() {
    let scene = fbx::import(asset("fbx/CesiumMan.fbx")).unwrap();
    assert_eq!(scene.rigs.len(), 1);
    let sk = &scene.rigs[0].skeleton;
    assert_eq!(sk.bone_count(), 19, "{:?}", sk.bone_names);
    assert!(sk.index_of("Skeleton_torso_joint_1").is_some());
    assert!(marrow_engine::skeleton::find_skeleton_fault(sk).is_none());
    assert!(scene.warnings[0].message.contains("converted to Y up and metres"), "{:?}", scene.warnings);
    assert_eq!(scene.meshes.len(), 1);
    let prim = &scene.meshes[0].primitives[0];
    let skin = prim.skin.as_ref().expect("skinned");
    assert_eq!(skin.weights.len(), prim.positions.len());
    for w in &skin.weights {
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{w:?}");
    }
    // Its material with the embedded texture, read through the UVs.
    assert_eq!(scene.materials.len(), 1, "{:?}", scene.materials);
    assert_eq!(prim.material, Some(0));
    let image = &scene.images[scene.materials[0].base_color_texture.expect("the texture")];
    assert!(matches!(image.mime_type.as_deref(), Some("image/png" | "image/jpeg")), "{:?}", image.mime_type);
    assert!(image.bytes.len() > 1000);
    assert_eq!(prim.uvs.len(), prim.positions.len());
    assert!(prim.uvs.iter().all(|uv| uv.iter().all(|c| c.is_finite())));
    assert_eq!(scene.animations.len(), 1);
    let clip = &scene.animations[0].clips[0].clip;
    assert!(marrow_engine::clip::find_clip_fault(clip, sk).is_none());
    assert!((clip.duration() - 2.0).abs() < 0.1, "{}", clip.duration());
    // Standing on the ground, about 1.5 m tall, Y up, in metres.
    let posed = model(sk, clip, 0.0);
    let heights: Vec<f32> = posed.iter().map(|m| m.w_axis.y).collect();
    let top = heights.iter().copied().fold(f32::MIN, f32::max);
    assert!((1.0..2.0).contains(&top), "{heights:?}");
}

#[test]
fn marrows_poses_of_an_fbx_walk_agree_with_ufbxs_own_evaluation() {
    for file in ["fbx/CesiumMan.fbx", "fbx/cmu_131_01.fbx"] {
        let bytes = std::fs::read(asset(file)).unwrap();
        let scene = fbx::import_slice(&bytes, Path::new(file)).unwrap();
        let sk = &scene.rigs[0].skeleton;
        let clip = &scene.animations[0].clips[0].clip;
        // At the keys (between them ufbx interpolates the file's Euler curves, Marrow the
        // quaternions it baked them to).
        let keys = clip.channels().iter().find_map(|c| c.rotation.as_ref()).unwrap().times().to_vec();
        for k in 0..6 {
            let time = keys[(keys.len() - 1) * k / 5];
            let ours = model(sk, clip, time);
            let theirs = fbx::ufbx_world_transforms(&bytes, 0, f64::from(time)).unwrap();
            let mut compared = 0;
            for (name, m) in &theirs {
                let Some(b) = sk.index_of(name) else { continue };
                let d = (ours[b].w_axis - m.w_axis).truncate().length();
                assert!(d < 1e-3, "{file} {name} at {time}: {} vs {}", ours[b].w_axis, m.w_axis);
                // Orientation: the axes' directions (Marrow's bones carry no uniform scale: the
                // exporter's x100 armature is folded into the translations).
                for axis in 0..3 {
                    let (a, c) =
                        (ours[b].col(axis).truncate().normalize(), m.col(axis).truncate().normalize());
                    assert!((a - c).length() < 1e-3, "{file} {name} axis {axis} at {time}: {a} vs {c}");
                }
                compared += 1;
            }
            assert_eq!(compared, sk.bone_count(), "{file}: every bone compared");
        }
    }
}

#[test]
fn the_capture_through_blender_and_fbx_poses_as_its_bvh_does() {
    // Blender read the BVH at a scale of 0.056444 and wrote centimetres, Z up; Marrow converts
    // back to metres, Y up: the joints land where the BVH import at that scale puts them.
    let from_fbx = fbx::import(asset("fbx/cmu_131_01.fbx")).unwrap();
    let from_bvh = bvh::import(
        asset("bvh/cmu_131_01.bvh"),
        &BvhOptions { scale: 0.056444, end_sites: bvh::EndSites::Drop },
    )
    .unwrap();
    let (sf, cf) = (&from_fbx.rigs[0].skeleton, &from_fbx.animations[0].clips[0].clip);
    let (sb, cb) = (&from_bvh.rigs[0].skeleton, &from_bvh.animations[0].clips[0].clip);
    assert_eq!(cf.frame_rate, 120.0);
    for frame in [0usize, 100, 450, 990] {
        let time = frame as f32 / 120.0;
        let (pf, pb) = (model(sf, cf, time), model(sb, cb, time));
        for (b, name) in sb.bone_names.iter().enumerate() {
            let f = sf.index_of(name).unwrap_or_else(|| panic!("{name} in the FBX rig"));
            let (x, y) = (pf[f].w_axis.truncate(), pb[b].w_axis.truncate());
            assert!((x - y).length() < 2e-3, "{name} at frame {frame}: fbx {x} bvh {y}");
        }
    }
    // The numbers known from the text: the capture's hips start 16.9 units up and 5.2 along X.
    let hips = model(sf, cf, 0.0)[sf.index_of("Hips").unwrap()].w_axis.truncate();
    let expect = Vec3::new(5.23, 16.9002, -33.8986) * 0.056444;
    assert!((hips - expect).length() < 2e-3, "{hips} vs {expect}");
}

#[test]
fn truncated_empty_and_garbage_files_are_refused_by_name() {
    let whole = std::fs::read(asset("fbx/CesiumMan.fbx")).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty.fbx", Vec::new()),
        ("truncated.fbx", whole[..whole.len() / 3].to_vec()),
        ("header-only.fbx", whole[..27].to_vec()),
        ("garbage.fbx", (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect()),
        ("text.fbx", b"; FBX 7.4.0 project file\nFBXHeaderExtension:  {\n FBXVersion: nan\n".to_vec()),
    ];
    for (name, bytes) in cases {
        match fbx::import_slice(&bytes, Path::new(name)) {
            Err(FbxError::Rejected { file, reason }) => {
                assert_eq!(file, Path::new(name));
                assert!(!reason.is_empty(), "{name}");
            }
            Err(other) => assert!(other.to_string().starts_with(name), "{name}: {other}"),
            Ok(scene) => assert!(scene.rigs.is_empty() && scene.meshes.is_empty(), "{name} holds nothing"),
        }
    }
    let missing = fbx::import(asset("fbx/no-such-file.fbx")).unwrap_err();
    assert!(matches!(missing, FbxError::Io { .. }), "{missing}");
}

/// A value the file holds as a finite double can still pass what 32-bit floats hold: the morph
/// cube (binary, from Blender) with its node's `RotationOffset` z set to -2.8e101 (what a
/// random mutation found: it imported and then posed its node at infinity) is refused, naming
/// the node and the limit; the file as it was imports.
#[test]
fn a_transform_value_past_what_32_bit_floats_hold_is_refused_naming_its_node() {
    let whole = std::fs::read(asset("fbx/AnimatedMorphCube.fbx")).unwrap();
    assert!(fbx::import_slice(&whole, Path::new("cube.fbx")).is_ok());
    // The property's three doubles: `D` and eight bytes each, after its name and type strings.
    let at = whole.windows(14).position(|w| w == b"RotationOffset").expect("a RotationOffset property");
    let z = (at..whole.len() - 27)
        .find(|&i| whole[i] == b'D' && whole[i + 9] == b'D' && whole[i + 18] == b'D')
        .expect("its three doubles")
        + 19;
    let mut bad = whole.clone();
    bad[z..z + 8].copy_from_slice(&(-2.8e101f64).to_le_bytes());
    match fbx::import_slice(&bad, Path::new("cube.fbx")) {
        Err(FbxError::Invalid { file, at, what }) => {
            assert_eq!(file, Path::new("cube.fbx"));
            assert!(at.starts_with("node \""), "{at}");
            assert!(what.contains("32-bit floats"), "{what}");
        }
        other => panic!("{:?}", other.map(|s| s.nodes.iter().map(|n| n.transform).collect::<Vec<_>>())),
    }
}

#[test]
fn an_ascii_fbx_with_two_bones_imports_in_metres() {
    // FBX 7.4 ASCII with no GlobalSettings: FBX's default unit, the centimetre.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions/fbx_import/sound-ascii-two-bones.fbx");
    let scene = fbx::import(&path).unwrap();
    let sk = &scene.rigs[0].skeleton;
    assert_eq!(sk.bone_names, ["Hips", "Spine"]);
    let rest = model(sk, &Clip::new("rest", sk), 0.0);
    assert!((rest[1].w_axis.truncate() - Vec3::new(0.0, 1.0, 0.0)).length() < 1e-5, "{}", rest[1].w_axis);
    assert!(scene.animations.is_empty());
}

#[test]
fn blend_shapes_come_in_as_morph_targets_equal_to_the_gltf_they_were_made_from() {
    let from_fbx = fbx::import(asset("fbx/AnimatedMorphCube.fbx")).unwrap();
    let from_gltf =
        marrow_engine::gltf::import(asset("gltf/AnimatedMorphCube/AnimatedMorphCube.glb")).unwrap();
    let (mf, mg) = (&from_fbx.meshes[0], &from_gltf.meshes[0]);
    assert_eq!(mf.target_names, ["thin", "angle"]);
    let (pf, pg) = (&mf.primitives[0], &mg.primitives[0]);
    assert_eq!(pf.targets.len(), 2);
    let node = from_fbx.nodes.iter().find(|n| n.mesh == Some(0)).unwrap();
    assert_eq!(node.morph_weights.len(), 2);
    // The same displacement per target in the world (each file places its mesh with its node:
    // Blender's FBX keeps the geometry in centimetres under a node scaled by 100): the largest
    // move of any vertex, and every moved FBX corner on a glTF vertex moved alike.
    let world = |scene: &marrow_engine::gltf::ImportedScene| {
        let n = scene.nodes.iter().position(|n| n.mesh == Some(0)).unwrap();
        assert!(scene.nodes[n].parent.is_none());
        scene.nodes[n].transform.to_mat4()
    };
    let (wf, wg) = (world(&from_fbx), world(&from_gltf));
    for t in 0..2 {
        let moved = |p: &marrow_engine::mesh::Primitive, w: glam::Mat4| -> Vec<(glam::Vec3, glam::Vec3)> {
            p.positions
                .iter()
                .zip(&p.targets[t].positions)
                .map(|(q, d)| {
                    (w.transform_point3(glam::Vec3::from(*q)), w.transform_vector3(glam::Vec3::from(*d)))
                })
                .collect()
        };
        let (f, g) = (moved(pf, wf), moved(pg, wg));
        let most = |m: &[(glam::Vec3, glam::Vec3)]| m.iter().map(|(_, d)| d.length()).fold(0.0f32, f32::max);
        let (a, b) = (most(&f), most(&g));
        assert!(a > 1e-3 && (a - b).abs() < 1e-4 * b.max(1.0), "target {t}: fbx {a} gltf {b}");
        for (p, d) in f.iter().filter(|(_, d)| d.length() > 1e-6) {
            let found = g.iter().any(|(q, e)| (*q - *p).length() < 1e-4 && (*e - *d).length() < 1e-4);
            assert!(found, "target {t}: corner at {p} moving {d} has no glTF counterpart");
        }
    }
}

/// An FBX 7.4 ASCII file, written here as a tool would, with two bones and two animation stacks,
/// each with its own layer, curve node and linear curve: `walk` turns the Spine 90 degrees about
/// Z over one second, `wave` moves it 5 cm along X over half a second.
fn two_stacks_fbx() -> String {
    const SECOND: i64 = 46_186_158_000; // FBX time units
    let stack = |id: u32, name: &str, seconds: f64, value: f64, node: &str| {
        let end = (seconds * SECOND as f64) as i64;
        format!(
            r#"	AnimationStack: {id}, "AnimStack::{name}", "" {{
		Properties70:  {{
			P: "LocalStart", "KTime", "Time", "",0
			P: "LocalStop", "KTime", "Time", "",{end}
		}}
	}}
	AnimationLayer: {l}, "AnimLayer::BaseLayer", "" {{
	}}
	AnimationCurveNode: {n}, "AnimCurveNode::{node}", "" {{
		Properties70:  {{
			P: "d|X", "Number", "", "A",0
			P: "d|Y", "Number", "", "A",0
			P: "d|Z", "Number", "", "A",0
		}}
	}}
	AnimationCurve: {c}, "AnimCurve::", "" {{
		Default: 0
		KeyVer: 4008
		KeyTime: *2 {{
			a: 0,{end}
		}}
		KeyValueFloat: *2 {{
			a: 0,{value}
		}}
		KeyAttrFlags: *1 {{
			a: 4
		}}
		KeyAttrDataFloat: *4 {{
			a: 0,0,0,0
		}}
		KeyAttrRefCount: *1 {{
			a: 2
		}}
	}}
"#,
            l = id + 1,
            n = id + 2,
            c = id + 3,
        )
    };
    let links = |id: u32, property: &str, channel: &str| {
        format!(
            "\tC: \"OO\",{l},{id}\n\tC: \"OO\",{n},{l}\n\tC: \"OP\",{n},2,\"{property}\"\n\tC: \"OP\",{c},{n},\"{channel}\"\n",
            l = id + 1,
            n = id + 2,
            c = id + 3
        )
    };
    format!(
        r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {{
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}}
Objects:  {{
	NodeAttribute: 10, "NodeAttribute::", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	NodeAttribute: 20, "NodeAttribute::", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	Model: 1, "Model::Hips", "LimbNode" {{
		Properties70:  {{
			P: "Lcl Translation", "Lcl Translation", "", "A",0,90,0
		}}
	}}
	Model: 2, "Model::Spine", "LimbNode" {{
		Properties70:  {{
			P: "Lcl Translation", "Lcl Translation", "", "A",0,10,0
		}}
	}}
{walk}{wave}}}
Connections:  {{
	C: "OO",10,1
	C: "OO",20,2
	C: "OO",1,0
	C: "OO",2,1
{walk_links}{wave_links}}}
"#,
        walk = stack(100, "walk", 1.0, 90.0, "R"),
        wave = stack(200, "wave", 0.5, 5.0, "T"),
        walk_links = links(100, "Lcl Rotation", "d|Z"),
        wave_links = links(200, "Lcl Translation", "d|X"),
    )
}

#[test]
fn every_animation_stack_of_a_file_becomes_a_clip_of_its_own_and_the_report_says_what_was_resampled() {
    let scene = fbx::import_slice(two_stacks_fbx().as_bytes(), Path::new("two_stacks.fbx")).unwrap();
    let sk = &scene.rigs[0].skeleton;
    assert_eq!(sk.bone_names, ["Hips", "Spine"]);
    let clips: Vec<&Clip> = scene.animations.iter().flat_map(|a| a.clips.iter().map(|c| &c.clip)).collect();
    let names: Vec<&str> = clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["walk", "wave"], "one clip a stack, named by it");
    let spine = |clip: &Clip, t: f32| {
        let m = model(sk, clip, t);
        m[0].inverse() * m[1]
    };
    let (walk, wave) = (clips[0], clips[1]);
    assert!((walk.duration() - 1.0).abs() < 1e-3 && (wave.duration() - 0.5).abs() < 1e-3);
    for k in 0..=4 {
        let (t, f) = (k as f32 / 4.0, k as f32 / 4.0);
        let x = spine(walk, t).transform_vector3(Vec3::X);
        let turned = x.y.atan2(x.x).to_degrees();
        assert!((turned - 90.0 * f).abs() < 0.05, "walk at {t}: {turned} degrees");
        let moved = spine(wave, 0.5 * t).w_axis.x;
        assert!((moved - 0.05 * f).abs() < 1e-5, "wave at {}: {moved} m", 0.5 * t);
    }
    // The report says what the bake did: the linear translation kept its two keys; the rotation,
    // Euler angles, was resampled at the file's rate (its quaternions follow the angle).
    let said: Vec<String> = scene.warnings.iter().map(|w| w.to_string()).collect();
    let has = |said: &[String], line: &str| said.iter().any(|w| w.contains(line));
    assert!(
        has(&said, "animation stack \"wave\": 1 channel(s) kept at their own keys, 0 resampled"),
        "{said:#?}"
    );
    assert!(
        has(&said, "animation stack \"walk\": 0 channel(s) kept at their own keys, 1 resampled at")
            && has(&said, "Spine Lcl Rotation"),
        "{said:#?}"
    );
    assert_eq!(wave.channels()[1].translation.as_ref().unwrap().len(), 2, "two keys kept");
    assert!(walk.channels()[1].rotation.as_ref().unwrap().len() > 2, "resampled");
    // A cubic curve is resampled too, and named.
    let text = two_stacks_fbx();
    let at = text.find("AnimStack::wave").unwrap();
    let cubic = format!(
        "{}{}",
        &text[..at],
        text[at..].replacen("KeyAttrFlags: *1 {\n\t\t\ta: 4", "KeyAttrFlags: *1 {\n\t\t\ta: 8", 1)
    );
    assert_ne!(cubic, text);
    let scene = fbx::import_slice(cubic.as_bytes(), Path::new("cubic.fbx")).unwrap();
    let said: Vec<String> = scene.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        has(&said, "animation stack \"wave\": 0 channel(s) kept at their own keys, 1 resampled at")
            && has(&said, "Spine Lcl Translation"),
        "{said:#?}"
    );
    let wave = &scene.animations[1].clips[0].clip;
    assert!(wave.channels()[1].translation.as_ref().unwrap().len() > 2, "resampled: more than its two keys");
}

/// A quad with one blend shape (`Lift`: two corners up 50 cm) whose `DeformPercent` a stack
/// animates from 0 to 100 over a second: FBX 7.4 ASCII, no skeleton.
const ANIMATED_BLEND_SHAPE: &str = r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}
Objects:  {
	Geometry: 30, "Geometry::Quad", "Mesh" {
		Vertices: *12 {
			a: 0,0,0,100,0,0,100,100,0,0,100,0
		}
		PolygonVertexIndex: *4 {
			a: 0,1,2,-4
		}
	}
	Model: 3, "Model::Quad", "Mesh" {
	}
	Deformer: 40, "Deformer::Morph", "BlendShape" {
		Version: 100
	}
	Deformer: 41, "SubDeformer::Lift", "BlendShapeChannel" {
		Version: 100
		DeformPercent: 0
		FullWeights: *1 {
			a: 100
		}
	}
	Geometry: 42, "Geometry::Lift", "Shape" {
		Version: 100
		Indexes: *2 {
			a: 2,3
		}
		Vertices: *6 {
			a: 0,0,50,0,0,50
		}
	}
	AnimationStack: 100, "AnimStack::lift", "" {
		Properties70:  {
			P: "LocalStart", "KTime", "Time", "",0
			P: "LocalStop", "KTime", "Time", "",46186158000
		}
	}
	AnimationLayer: 101, "AnimLayer::BaseLayer", "" {
	}
	AnimationCurveNode: 102, "AnimCurveNode::DeformPercent", "" {
		Properties70:  {
			P: "d|DeformPercent", "Number", "", "A",0
		}
	}
	AnimationCurve: 103, "AnimCurve::", "" {
		Default: 0
		KeyVer: 4008
		KeyTime: *2 {
			a: 0,46186158000
		}
		KeyValueFloat: *2 {
			a: 0,100
		}
		KeyAttrFlags: *1 {
			a: 4
		}
		KeyAttrDataFloat: *4 {
			a: 0,0,0,0
		}
		KeyAttrRefCount: *1 {
			a: 2
		}
	}
}
Connections:  {
	C: "OO",3,0
	C: "OO",30,3
	C: "OO",40,30
	C: "OO",41,40
	C: "OO",42,41
	C: "OO",101,100
	C: "OO",102,101
	C: "OP",102,41,"DeformPercent"
	C: "OP",103,102,"d|DeformPercent"
}
"#;

#[test]
fn an_animated_blend_shape_weight_comes_in_as_a_morph_weight_track() {
    let scene = fbx::import_slice(ANIMATED_BLEND_SHAPE.as_bytes(), Path::new("morph.fbx")).unwrap();
    assert_eq!(scene.meshes.len(), 1);
    assert_eq!(scene.meshes[0].target_names, ["Lift"]);
    let offsets = &scene.meshes[0].primitives[0].targets[0].positions;
    let most = offsets.iter().map(|d| Vec3::from(*d).length()).fold(0.0f32, f32::max);
    assert!((most - 0.5).abs() < 1e-4, "the shape lifts two corners 50 cm: {most}");
    // No skeleton: no rig, but the stack that animates the weight is kept.
    assert!(scene.rigs.is_empty());
    assert_eq!(scene.animations.len(), 1);
    let lift = &scene.animations[0];
    assert_eq!(lift.name, "lift");
    assert!(lift.clips.is_empty());
    assert_eq!(lift.morphs.len(), 1);
    let morph = &lift.morphs[0];
    assert_eq!(scene.nodes[morph.node].mesh, Some(0), "on the quad's node");
    assert_eq!(morph.weights.len(), 1, "a track per target");
    for (t, w) in [(0.0f32, 0.0f32), (0.25, 0.25), (0.5, 0.5), (1.0, 1.0)] {
        let got = morph.weights[0].sample(t).unwrap();
        assert!((got - w).abs() < 1e-4, "weight at {t}: {got}, want {w}");
    }
}

#[test]
fn an_in_between_shape_is_a_target_of_its_own_weighted_as_fbx_interpolates_it() {
    // The quad's channel with an in-between at 50%: corners up 20 cm there, 50 cm at 100% (a
    // plain scaling of the full shape would give 25 cm halfway).
    let text = ANIMATED_BLEND_SHAPE
        .replace("FullWeights: *1 {\n\t\t\ta: 100", "FullWeights: *2 {\n\t\t\ta: 50,100")
        .replace(
            "\tAnimationStack: 100,",
            "\tGeometry: 43, \"Geometry::LiftHalf\", \"Shape\" {\n\t\tVersion: 100\n\t\tIndexes: *2 {\n\t\t\ta: 2,3\n\t\t}\n\t\tVertices: *6 {\n\t\t\ta: 0,0,20,0,0,20\n\t\t}\n\t}\n\tAnimationStack: 100,",
        )
        .replace("\tC: \"OO\",42,41\n", "\tC: \"OO\",43,41\n\tC: \"OO\",42,41\n");
    assert_ne!(text, ANIMATED_BLEND_SHAPE);
    let scene = fbx::import_slice(text.as_bytes(), Path::new("in_between.fbx")).unwrap();
    let mesh = &scene.meshes[0];
    assert_eq!(mesh.target_names, ["Lift@50", "Lift"]);
    assert_eq!(mesh.weights, [0.0, 0.0], "at DeformPercent 0 neither shows");
    let lift = |k: usize| -> f32 {
        mesh.primitives[0].targets[k].positions.iter().map(|d| Vec3::from(*d).length()).fold(0.0, f32::max)
    };
    assert!((lift(0) - 0.2).abs() < 1e-4 && (lift(1) - 0.5).abs() < 1e-4, "{} {}", lift(0), lift(1));
    let morph = &scene.animations[0].morphs[0];
    assert_eq!(morph.weights.len(), 2);
    assert!(morph.weights[0].times().contains(&0.5), "a key where the channel passes the in-between");
    // The corners' height as the channel runs from 0 to 100: through the in-between's 20 cm.
    for (t, height) in [(0.0f32, 0.0f32), (0.25, 0.1), (0.5, 0.2), (0.75, 0.35), (1.0, 0.5)] {
        let w = [0, 1].map(|k| morph.weights[k].sample(t).unwrap());
        let got = w[0] * lift(0) + w[1] * lift(1);
        assert!((got - height).abs() < 1e-4, "at {t}: weights {w:?} lift {got}, want {height}");
    }
}

/// A 1x1 PNG.
const PNG: [u8; 70] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 31,
    21, 196, 137, 0, 0, 0, 13, 73, 68, 65, 84, 120, 218, 99, 252, 207, 192, 240, 31, 0, 5, 5, 2, 0, 95, 200,
    241, 210, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

/// The ASCII quad with a material whose diffuse texture is not embedded: the file it names,
/// as `file_name` (the author's absolute path) and `relative`.
fn textured_quad(file_name: &str, relative: &str) -> String {
    ANIMATED_BLEND_SHAPE
        .replace(
            "\t\tPolygonVertexIndex: *4 {\n\t\t\ta: 0,1,2,-4\n\t\t}\n",
            "\t\tPolygonVertexIndex: *4 {\n\t\t\ta: 0,1,2,-4\n\t\t}\n\t\tLayerElementMaterial: 0 {\n\t\t\tVersion: 101\n\t\t\tMappingInformationType: \"AllSame\"\n\t\t\tReferenceInformationType: \"IndexToDirect\"\n\t\t\tMaterials: *1 {\n\t\t\t\ta: 0\n\t\t\t}\n\t\t}\n\t\tLayer: 0 {\n\t\t\tVersion: 100\n\t\t\tLayerElement:  {\n\t\t\t\tType: \"LayerElementMaterial\"\n\t\t\t\tTypedIndex: 0\n\t\t\t}\n\t\t}\n",
        )
        .replace(
            "\tAnimationStack: 100,",
            &format!(
                "\tMaterial: 50, \"Material::Skin\", \"\" {{\n\t\tProperties70:  {{\n\t\t\tP: \"DiffuseColor\", \"Color\", \"\", \"A\",1,1,1\n\t\t}}\n\t}}\n\tTexture: 60, \"Texture::SkinTex\", \"\" {{\n\t\tType: \"TextureVideoClip\"\n\t\tFileName: \"{file_name}\"\n\t\tRelativeFilename: \"{relative}\"\n\t}}\n\tAnimationStack: 100,"
            ),
        )
        .replace("\tC: \"OO\",3,0\n", "\tC: \"OO\",3,0\n\tC: \"OO\",50,3\n\tC: \"OP\",60,50,\"DiffuseColor\"\n")
}

#[test]
fn a_texture_beside_the_file_is_read_and_nothing_outside_its_folder_is() {
    let dir = std::env::temp_dir().join(format!("marrow-fbx-textures-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (folder, outside) = (dir.join("model"), dir.join("secret.png"));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("quad.png"), PNG).unwrap();
    std::fs::write(&outside, PNG).unwrap();
    let import = |name: &str, text: String| {
        let path = folder.join(name);
        std::fs::write(&path, text).unwrap();
        fbx::import(&path).unwrap()
    };
    // Named relatively, and by the author's absolute path (its file name found beside the FBX).
    for (file_name, relative) in [("quad.png", "quad.png"), ("C:\\\\Users\\\\artist\\\\maps\\\\quad.png", "")]
    {
        let scene = import("quad.fbx", textured_quad(file_name, relative));
        assert_eq!(scene.materials.len(), 1, "{file_name}");
        let said: Vec<String> = scene.warnings.iter().map(|w| w.to_string()).collect();
        let image =
            scene.materials[0].base_color_texture.unwrap_or_else(|| panic!("the texture is read: {said:#?}"));
        assert_eq!(&*scene.images[image].bytes, &PNG[..]);
        assert_eq!(scene.images[image].mime_type.as_deref(), Some("image/png"));
        assert_eq!(
            marrow_engine::fbx::texture_files(textured_quad(file_name, relative).as_bytes()),
            ["quad.png"]
        );
    }
    // A file outside the folder is never read: by climbing out, or by an absolute path whose file
    // name is not beside the FBX.
    for (file_name, relative) in [("../secret.png", "../secret.png"), (outside.to_str().unwrap(), "")] {
        let scene = import("leak.fbx", textured_quad(file_name, relative));
        assert_eq!(scene.materials[0].base_color_texture, None, "{file_name}");
        let said: Vec<String> = scene.warnings.iter().map(|w| w.to_string()).collect();
        assert!(said.iter().any(|w| w.contains("SkinTex") && w.contains("left out")), "{said:#?}");
    }
    // Read from memory, only embedded textures are.
    let scene = fbx::import_slice(textured_quad("quad.png", "quad.png").as_bytes(), &folder.join("quad.fbx"))
        .unwrap();
    assert_eq!(scene.materials[0].base_color_texture, None);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An FBX 6.1 ASCII file, written as the FBX SDK of that version wrote them: `Properties60`, models
/// named in their connections, and the animation in a `Takes` section (a take `walk` turning the
/// Spine 90 degrees about Z over a second, FBX 6's `Key:` rows).
const FBX_6_1: &str = r#"; FBX 6.1.0 project file
; ----------------------------------------------------

FBXHeaderExtension:  {
	FBXHeaderVersion: 1003
	FBXVersion: 6100
}

; Object definitions
;------------------------------------------------------------------

Definitions:  {
	Version: 100
	Count: 2
	ObjectType: "Model" {
		Count: 2
	}
}

; Object properties
;------------------------------------------------------------------

Objects:  {
	Model: "Model::Hips", "Limb" {
		Version: 232
		Properties60:  {
			Property: "Lcl Translation", "Lcl Translation", "A+",0,90,0
			Property: "Lcl Rotation", "Lcl Rotation", "A+",0,0,0
			Property: "Lcl Scaling", "Lcl Scaling", "A+",1,1,1
		}
		MultiLayer: 0
		MultiTake: 1
		Shading: Y
		Culling: "CullingOff"
		TypeFlags: "Skeleton"
	}
	Model: "Model::Spine", "Limb" {
		Version: 232
		Properties60:  {
			Property: "Lcl Translation", "Lcl Translation", "A+",0,10,0
			Property: "Lcl Rotation", "Lcl Rotation", "A+",0,0,0
			Property: "Lcl Scaling", "Lcl Scaling", "A+",1,1,1
		}
		MultiLayer: 0
		MultiTake: 1
		Shading: Y
		Culling: "CullingOff"
		TypeFlags: "Skeleton"
	}
}

; Object connections
;------------------------------------------------------------------

Connections:  {
	Connect: "OO", "Model::Hips", "Model::Scene"
	Connect: "OO", "Model::Spine", "Model::Hips"
}

;Takes and animation section
;----------------------------------------------------

Takes:  {
	Current: "walk"
	Take: "walk" {
		FileName: "walk.tak"
		LocalTime: 0,46186158000
		ReferenceTime: 0,46186158000
		Model: "Model::Spine" {
			Version: 1.1
			Channel: "Transform" {
				Channel: "R" {
					Channel: "X" {
						Default: 0
						KeyVer: 4005
						KeyCount: 1
						Key: 
							0,0,L
						Color: 1,0,0
					}
					Channel: "Y" {
						Default: 0
						KeyVer: 4005
						KeyCount: 1
						Key: 
							0,0,L
						Color: 0,1,0
					}
					Channel: "Z" {
						Default: 0
						KeyVer: 4005
						KeyCount: 2
						Key: 
							0,0,L,46186158000,90,L
						Color: 0,0,1
					}
					LayerType: 2
				}
			}
		}
	}
}
"#;

#[test]
fn an_fbx_6_1_file_imports_its_rig_and_its_take_as_a_clip() {
    let scene = fbx::import_slice(FBX_6_1.as_bytes(), Path::new("six.fbx")).unwrap();
    let sk = &scene.rigs[0].skeleton;
    assert_eq!(sk.bone_names, ["Hips", "Spine"]);
    let rest = model(sk, &Clip::new("rest", sk), 0.0);
    assert!(
        (rest[1].w_axis.truncate() - Vec3::new(0.0, 1.0, 0.0)).length() < 1e-5,
        "cm to m: {}",
        rest[1].w_axis
    );
    assert_eq!(scene.animations.len(), 1);
    let walk = &scene.animations[0].clips[0].clip;
    assert_eq!(walk.name, "walk");
    assert!((walk.duration() - 1.0).abs() < 1e-3, "{}", walk.duration());
    for k in 0..=4 {
        let t = k as f32 / 4.0;
        let m = model(sk, walk, t);
        let x = (m[0].inverse() * m[1]).transform_vector3(Vec3::X);
        let turned = x.y.atan2(x.x).to_degrees();
        assert!((turned - 90.0 * t).abs() < 0.05, "at {t}: {turned} degrees");
    }
}
