//! The session: everything derived from the document to show and preview it, never saved. It
//! holds the running [`World`] of the active scene, the asset [`Library`] (glTF imports cached
//! across rebuilds), the fixed-tick [`Clock`] and the transport (play, pause, stop, step,
//! scrub, loop preview).
//!
//! When the document's revision moves, [`Session::sync`] follows it at the cost of what changed:
//! the session keeps the project it last synced (the files' `Arc`s, shared with the document) and
//! compares identities, so an edit of one clip re-binds only the heads playing that clip (its
//! compiled form built once, every other clip's kept), and any other change rebuilds the library
//! and the world, putting every rig's playhead back by entity path. Either way editing a clip
//! keeps the playhead where it was. Nothing here pushes an undo step or marks the document dirty: a preview changes the
//! session only, and the session is never written to the project's files.
//!
//! Faults never hide the scene: the world is loaded leniently (`World::load_lenient`), so a rig
//! whose clip or graph cannot play stays with its bones and meshes in its bind pose; each such
//! fault is kept by entity path ([`Session::entity_faults`], the Animator card) and is among the
//! rebuild's faults (the Log adds it once per occurrence gap). A clip no file or model holds is
//! said to be missing, one whose file did not load to be damaged.
//!
//! Not here: GPU resources (see `crate::viewport`), selection and camera (`crate::ui_state`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use marrow_engine::animator::AnimatorSession;
use marrow_engine::clock::Clock;
use marrow_engine::graph::ParamValue;
use marrow_engine::project::{ImportCache, Library, Project, ProjectError};
use marrow_engine::scene::{Entity, SceneDesc, SceneError, SceneEvent, World};

use crate::document::{Document, tree};

/// Exponential moving average (factor 0.1; the first sample is taken as is).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ema {
    value: Option<f64>,
}

impl Ema {
    /// The smoothing factor.
    pub const FACTOR: f64 = 0.1;

    /// Adds a sample.
    pub fn add(&mut self, x: f64) {
        self.value = Some(match self.value {
            None => x,
            Some(v) => v + (x - v) * Self::FACTOR,
        });
    }

    /// The smoothed value (`None` before the first sample).
    pub fn get(&self) -> Option<f64> {
        self.value
    }
}

/// Per-frame counters of the session's work.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SessionFrame {
    /// Simulation ticks run this frame.
    pub ticks: u32,
    /// Whether the world was evaluated this frame (ticks, or a recompose after a scrub/edit).
    pub evaluated: bool,
    /// Milliseconds spent in the world's frame (animation and transform stage).
    pub animation_ms: f64,
}

/// A marker crossed by a rig's head, by playback or by a scrub (session data for the
/// timeline's event lane and the footstep sound).
#[derive(Clone, Debug, PartialEq)]
pub struct MarkerHit {
    /// The rig.
    pub rig: Entity,
    /// The marker's index in its clip.
    pub marker: usize,
    /// Its name.
    pub name: String,
    /// Its time in the clip (for a state event: the rig's head time).
    pub time: f32,
    /// Whether a scrub (not playback) crossed it.
    pub scrub: bool,
    /// Whether it is a state machine's event ("enter Walk"), not a marker.
    pub state: bool,
}

/// A graph previewed on a rig (Graph tab > Preview): session state only, never saved and never
/// an undo step. The rig's Animator plays the compiled graph in place of its authored clip until
/// the preview stops; parameter values set by the live sliders live here.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphPreview {
    /// The rig's entity path.
    pub rig: String,
    /// The graph's asset path.
    pub graph: String,
    /// Live parameter values (by name) that differ from the authored defaults.
    pub params: std::collections::BTreeMap<String, ParamValue>,
    /// Why the graph does not play on the rig (its compile errors), if it does not.
    pub error: Option<String>,
}

/// A clip previewed on a rig without being in the project (File > Retarget Clips > Preview:
/// what a retarget would make, played before it is applied): session state only, never saved
/// and never an undo step. The rig's Animator loops it in place of its authored clip until the
/// preview stops. A graph preview and a clip preview do not run together.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipPreview {
    /// The rig's entity path.
    pub rig: String,
    /// The clip (for the rig's skeleton).
    pub clip: std::sync::Arc<marrow_engine::clip::Clip>,
    /// What it is, as the window says it ("walk retargeted through retargets/a_to_b.retarget.ron").
    pub label: String,
    /// Why it does not play on the rig, if it does not.
    pub error: Option<String>,
    /// Another rig and clip played beside it, in step (a retarget's source rig playing the
    /// source clip), if the scene has one.
    pub beside: Option<(String, std::sync::Arc<marrow_engine::clip::Clip>)>,
    /// The project clip it shows (the Timeline's Show This Clip), reloaded from the library
    /// whenever the document changes so that its edits show; `None` for a clip made on the fly
    /// (a retarget's preview), which keys cannot be written to.
    pub source: Option<String>,
}

/// The Animator of the rig at path `rig` a preview plays on, or why there is none.
fn preview_animator<'w>(
    world: &'w mut World,
    rig: &str,
) -> Result<&'w mut marrow_engine::animator::Animator, String> {
    let e = world.find(rig).ok_or_else(|| format!("no rig {rig:?} in this scene"))?;
    world.animator_mut(e).ok_or_else(|| format!("{rig} has no Animator"))
}

/// How many marker hits the session keeps.
const HIT_LOG: usize = 256;

/// The running preview of a document.
#[derive(Debug)]
pub struct Session {
    world: World,
    library: Library,
    imports: ImportCache,
    clock: Clock,
    scene: Option<String>,
    built: Option<u64>,
    root: Option<PathBuf>,
    pose_version: u64,
    recompose: bool,
    /// Faults of the last rebuild (library imports, scene instantiation), for the Log.
    faults: Vec<ProjectError>,
    /// How many of the world's fault log entries were already handed out.
    faults_seen: usize,
    last: SessionFrame,
    events: Vec<SceneEvent>,
    /// The rewind debugger's recording of the previewed graph (when it has state machines).
    recording: Option<crate::rewind::Recording>,
    /// Marker hits, numbered (the number only grows).
    hits: std::collections::VecDeque<(u64, MarkerHit)>,
    next_hit: u64,
    /// Per rig: a preview range playback stays inside.
    ranges: HashMap<Entity, (f32, f32)>,
    /// The graph preview, if one runs.
    preview: Option<GraphPreview>,
    /// The clip preview, if one runs.
    clip_preview: Option<ClipPreview>,
    /// Per entity path: what of it could not be loaded (it stands in its bind pose).
    entity_faults: Vec<(String, EntityFault)>,
    /// The project as of the last sync (its files' `Arc`s, shared with the document: no copy),
    /// to tell which files the next revision replaced.
    synced: Option<Project>,
    /// How the last sync followed the document.
    last_sync: SyncKind,
}

/// How [`Session::sync`] followed a new revision of the document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SyncKind {
    /// Nothing to follow (the same revision, or no file replaced).
    #[default]
    Unchanged,
    /// Only clip files changed: the library took the new clips and the heads playing them were
    /// re-bound in place (the world was not rebuilt).
    Rebound,
    /// The library and the world were rebuilt.
    Rebuilt,
}

/// Something of an entity that the last rebuild could not load (a clip or graph its Animator
/// cannot play: the rig stands in its bind pose; a missing mesh or rig file).
#[derive(Clone, Debug, PartialEq)]
pub struct EntityFault {
    /// The field ("animator.clip", "animator.graph", "animator.rig", "mesh", ...).
    pub field: &'static str,
    /// What is wrong ("clip clips/walk.clip.ron is missing").
    pub message: String,
}

/// The reference faults of a lenient scene load of `desc`, by entity path; a clip the library
/// does not hold at all is said to be damaged (a file of `doc` that did not load) or missing.
fn entity_faults(
    doc: &Document,
    desc: &SceneDesc,
    library: &Library,
    list: Vec<SceneError>,
) -> Vec<(String, EntityFault)> {
    list.into_iter()
        .filter_map(|e| match e {
            SceneError::Reference { entity, field, message } => {
                Some((entity, EntityFault { field, message }))
            }
            _ => None,
        })
        .map(|(entity, mut f)| {
            let clip =
                tree::find(desc, &entity).and_then(|e| e.animator.as_ref()).and_then(|a| a.clip.as_ref());
            if f.field == "animator.clip"
                && let Some(r) = clip
                && library.clips(r).is_empty()
            {
                f.message = match doc.damaged().find(|d| d.path == *r) {
                    Some(d) => format!("clip {r} is damaged ({})", d.error),
                    None => format!("clip {r} is missing"),
                };
            }
            (entity, f)
        })
        .collect()
}

impl Default for Session {
    fn default() -> Self {
        let mut clock = Clock::default();
        clock.set_paused(true);
        Self {
            world: World::new(),
            library: Library::default(),
            imports: ImportCache::new(),
            clock,
            scene: None,
            built: None,
            root: None,
            pose_version: 0,
            recompose: true,
            faults: Vec::new(),
            faults_seen: 0,
            last: SessionFrame::default(),
            events: Vec::new(),
            recording: None,
            hits: std::collections::VecDeque::new(),
            next_hit: 0,
            ranges: HashMap::new(),
            preview: None,
            clip_preview: None,
            entity_faults: Vec::new(),
            synced: None,
            last_sync: SyncKind::Unchanged,
        }
    }
}

impl Session {
    /// A paused session with nothing built.
    pub fn new() -> Self {
        Self::default()
    }

    /// The running world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The asset library the world was built from.
    pub fn library(&self) -> &Library {
        &self.library
    }

    /// The clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The scene the world shows (a path of the project).
    pub fn scene(&self) -> Option<&str> {
        self.scene.as_deref()
    }

    /// Whether the transport is playing.
    pub fn is_playing(&self) -> bool {
        !self.clock.is_paused()
    }

    /// Bumped each time the poses were evaluated (the renderer skips unchanged palettes).
    pub fn pose_version(&self) -> u64 {
        self.pose_version
    }

    /// What the last [`Session::update`] did.
    pub fn last_frame(&self) -> SessionFrame {
        self.last
    }

    /// The marker events published by the last evaluated frame.
    pub fn events(&self) -> &[SceneEvent] {
        &self.events
    }

    /// Faults of the last rebuild.
    pub fn faults(&self) -> &[ProjectError] {
        &self.faults
    }

    /// What of the entity at `path` the last rebuild could not load (its Animator's clip or graph,
    /// its mesh), in field order.
    pub fn entity_faults(&self, path: &str) -> impl Iterator<Item = &EntityFault> {
        self.entity_faults.iter().filter(move |(p, _)| p == path).map(|(_, f)| f)
    }

    /// World faults raised since the last call (each once per occurrence gap).
    pub fn take_new_world_faults(&mut self) -> Vec<String> {
        let all = self.world.faults().entries();
        let new = all.get(self.faults_seen..).unwrap_or_default().to_vec();
        self.faults_seen = all.len();
        new
    }

    /// The entity at `path` in the running world.
    pub fn entity(&self, path: &str) -> Option<Entity> {
        self.world.find(path)
    }

    /// Shows scene `scene` (rebuilt on the next sync).
    pub fn set_scene(&mut self, scene: Option<String>) {
        if self.scene != scene {
            self.scene = scene;
            self.built = None;
        }
    }

    /// Brings the world up to the document's revision, at the cost of what the revision changed:
    /// when only clip files changed, the library takes the new clips and the heads playing them
    /// are re-bound in place (playheads, play state, loop previews and temporary poses stay);
    /// otherwise (or when the scene shown changed) the library and world are rebuilt and every
    /// rig's playhead, play state and loop preview are put back by entity path. Returns whether
    /// anything was rebuilt or re-bound ([`Session::last_sync`] says which).
    pub fn sync(&mut self, doc: &Document) -> bool {
        if self.built == Some(doc.revision()) && self.root.as_deref() == doc.root() {
            return false;
        }
        self.last_sync = match self.follow_in_place(doc) {
            Some(kind) => kind,
            None => {
                self.rebuild(doc);
                SyncKind::Rebuilt
            }
        };
        self.built = Some(doc.revision());
        self.synced = Some(doc.project().clone());
        self.last_sync != SyncKind::Unchanged
    }

    /// Models or their data changed on disk (`paths`, relative to the project folder): when one
    /// is a model the project lists, or sits in the folder of one (its buffers, its images),
    /// every import is read again and the world rebuilt on the next sync (playheads kept, as
    /// after any rebuild). Returns whether it will.
    pub fn reload_models(&mut self, doc: &Document, paths: &[String]) -> bool {
        let assets = &doc.project().manifest.assets;
        let folder = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
        let used = paths.iter().any(|p| assets.iter().any(|a| a == p || folder(a) == folder(p)));
        if used {
            self.imports.clear();
            self.built = None;
        }
        used
    }

    /// How the last [`Session::sync`] followed the document.
    pub fn last_sync(&self) -> SyncKind {
        self.last_sync
    }

    /// Follows a revision that replaced no file, or only clip files, without a rebuild: the
    /// library takes the new clips and the world re-binds the heads playing them
    /// ([`World::rebind_clips`]). `None`: a rebuild is needed (another kind of file changed, the
    /// folder or the scene did, a graph preview runs, a rig stands faulted, or the world refused).
    fn follow_in_place(&mut self, doc: &Document) -> Option<SyncKind> {
        let project = doc.project();
        let before = self.synced.as_ref()?;
        let scene_kept = self.scene.as_ref().is_some_and(|s| project.scenes.contains_key(s));
        if self.built.is_none() || self.root.as_deref() != doc.root() || !scene_kept {
            return None;
        }
        let changed = project.changed_files(before);
        if changed.is_empty() {
            return Some(SyncKind::Unchanged);
        }
        if !changed.only_clips()
            || self.preview.is_some()
            || self.clip_preview.is_some()
            || !self.entity_faults.is_empty()
        {
            return None;
        }
        self.library.replace_clips(project, &changed.clips);
        match self.world.rebind_clips(&changed.clips, &self.library) {
            Ok(_) => {
                self.recompose = true;
                Some(SyncKind::Rebound)
            }
            Err(why) => {
                log::debug!("clip edit needs a rebuild: {why}");
                None
            }
        }
    }

    /// Rebuilds the library and the world from the document, putting every rig's playhead, play
    /// state and loop preview back by entity path.
    fn rebuild(&mut self, doc: &Document) {
        let project = doc.project();
        if self.scene.as_ref().is_none_or(|s| !project.scenes.contains_key(s)) {
            self.scene = project.manifest.scenes.iter().find(|s| project.scenes.contains_key(*s)).cloned();
        }
        // Keep every rig's session by path.
        type Kept = (AnimatorSession, Vec<(u16, marrow_engine::math::Transform)>, Option<(f32, f32)>);
        let kept: HashMap<String, Kept> = self
            .world
            .rigs()
            .filter_map(|r| {
                let a = self.world.animator(r)?;
                Some((
                    self.world.path(r)?,
                    (a.session(), a.pose_overrides().to_vec(), self.ranges.get(&r).copied()),
                ))
            })
            .collect();
        let previewed = self.preview_head();
        let clip_previewed = self.clip_preview_head();
        let root = doc.root().map(Path::to_owned).unwrap_or_default();
        let (library, mut faults) = Library::load_cached(project, &root, &mut self.imports);
        self.library = library;
        match self.scene.as_ref().and_then(|s| project.scenes.get(s).map(|d| (s, d))) {
            Some((path, desc)) => {
                let file = root.join(path);
                match self.world.load_lenient(desc, &self.library) {
                    Ok(list) => {
                        self.entity_faults = entity_faults(doc, desc, &self.library, list);
                        faults.extend(self.entity_faults.iter().map(|(entity, f)| ProjectError::Fault {
                            path: file.clone(),
                            message: format!("entity {entity:?}, {}: {}", f.field, f.message),
                        }));
                    }
                    Err(e) => {
                        self.entity_faults.clear();
                        faults.push(ProjectError::Fault { path: file, message: e.to_string() });
                    }
                }
            }
            None => {
                self.world.clear();
                self.entity_faults.clear();
            }
        }
        let rigs: Vec<Entity> = self.world.rigs().collect();
        self.ranges.clear();
        for r in rigs {
            if let Some((s, overrides, range)) = self.world.path(r).and_then(|p| kept.get(&p).cloned())
                && let Some(a) = self.world.animator_mut(r)
            {
                a.restore_session(&s);
                for (b, t) in overrides {
                    a.set_pose_override(b as usize, Some(t));
                }
                if let Some(range) = range {
                    self.ranges.insert(r, range);
                }
            }
        }
        if let Some(p) = &mut self.preview
            && !project.graphs.contains_key(&p.graph)
        {
            self.preview = None; // its graph was deleted or renamed away
        }
        let (time, playing) = previewed.unwrap_or((0.0, false));
        self.apply_preview(time, playing);
        // A project clip shown in place of the rig's own playing follows the document's edits
        // (ends when its file is gone).
        if let Some(p) = &mut self.clip_preview
            && let Some(source) = &p.source
        {
            match self.library.clips(source).first() {
                Some(clip) => p.clip = clip.clone(),
                None => self.clip_preview = None,
            }
        }
        let (time, playing) = clip_previewed.unwrap_or((0.0, false));
        self.apply_clip_preview(time, playing);
        self.faults = faults;
        self.faults_seen = 0;
        self.root = doc.root().map(Path::to_owned);
        self.recompose = true;
    }

    /// Runs one editor frame of the session: the clock turns `real_seconds` into ticks (none
    /// while paused, one after [`Session::step`]); the world is evaluated when a tick ran or a
    /// scrub or rebuild asked for a recompose. A paused, unscrubbed session evaluates nothing.
    pub fn update(&mut self, real_seconds: f64) -> SessionFrame {
        let ticks = self.clock.advance(real_seconds.max(0.0));
        let mut frame = SessionFrame { ticks, ..Default::default() };
        if ticks > 0 || self.recompose {
            let t0 = Instant::now();
            self.record_begin(ticks);
            self.world.frame(ticks, self.clock.tick_seconds() as f32);
            frame.animation_ms = t0.elapsed().as_secs_f64() * 1e3;
            frame.evaluated = true;
            self.pose_version += 1;
            self.recompose = false;
            self.events.clear();
            self.events.extend_from_slice(self.world.events());
            self.record_end(ticks);
            let played: Vec<MarkerHit> = self
                .events
                .iter()
                .map(|e| match e.event.state() {
                    Some(s) => MarkerHit {
                        rig: e.entity,
                        marker: e.event.marker,
                        name: match &s.from {
                            Some(from) => format!("{} {from} -> {}", s.kind.name(), s.state),
                            None => format!("{} {}", s.kind.name(), s.state),
                        },
                        time: self.world.animator(e.entity).map_or(0.0, |a| a.time()),
                        scrub: false,
                        state: true,
                    },
                    None => MarkerHit {
                        rig: e.entity,
                        marker: e.event.marker,
                        name: e.event.name().to_owned(),
                        time: e.event.time(),
                        scrub: false,
                        state: false,
                    },
                })
                .collect();
            for h in played {
                self.push_hit(h);
            }
            // Preview ranges: a head that left its range starts it again.
            let ranges: Vec<(Entity, (f32, f32))> = self.ranges.iter().map(|(e, r)| (*e, *r)).collect();
            for (rig, (a, b)) in ranges {
                if let Some(an) = self.world.animator_mut(rig)
                    && an.is_playing()
                    && (an.time() > b || an.time() < a)
                {
                    an.seek(a);
                    self.recompose = true;
                }
            }
        }
        self.last = frame;
        frame
    }

    fn push_hit(&mut self, h: MarkerHit) {
        if self.hits.len() == HIT_LOG {
            self.hits.pop_front();
        }
        self.hits.push_back((self.next_hit, h));
        self.next_hit += 1;
    }

    /// Marker hits numbered `since` and later, with their numbers.
    pub fn hits_since(&self, since: u64) -> impl Iterator<Item = &(u64, MarkerHit)> {
        self.hits.iter().filter(move |(n, _)| *n >= since)
    }

    /// The number the next marker hit will get.
    pub fn next_hit(&self) -> u64 {
        self.next_hit
    }

    /// Sets (or clears) the range `rig`'s playback stays inside while previewing.
    pub fn set_preview_range(&mut self, rig: Entity, range: Option<(f32, f32)>) {
        match range {
            Some((a, b)) if a.is_finite() && b.is_finite() && b > a => {
                self.ranges.insert(rig, (a, b));
            }
            _ => {
                self.ranges.remove(&rig);
            }
        }
    }

    /// The preview range of `rig`.
    pub fn preview_range(&self, rig: Entity) -> Option<(f32, f32)> {
        self.ranges.get(&rig).copied()
    }

    /// A temporary pose of one bone (shown until the playhead moves; never saved): `None`
    /// clears it.
    pub fn set_pose_override(&mut self, rig: Entity, bone: usize, t: Option<marrow_engine::math::Transform>) {
        if let Some(a) = self.world.animator_mut(rig) {
            a.set_pose_override(bone, t);
            self.recompose = true;
        }
    }

    /// Drops `rig`'s temporary pose.
    pub fn clear_pose(&mut self, rig: Entity) {
        if let Some(a) = self.world.animator_mut(rig)
            && !a.pose_overrides().is_empty()
        {
            a.clear_pose_overrides();
            self.recompose = true;
        }
    }

    fn rigs(&self) -> Vec<Entity> {
        self.world.rigs().collect()
    }

    /// Play: the clock runs and every rig's head plays (a head held at the end of a clip that
    /// does not loop starts again from its start).
    pub fn play(&mut self) {
        // Playing from a rewound frame continues from it.
        if let Some(rec) = &mut self.recording {
            rec.resume(true);
        }
        for r in self.rigs() {
            self.clear_pose(r);
            if let Some(a) = self.world.animator_mut(r) {
                let at_end = a.current_looping() == Some(false) && a.time() >= a.current_duration();
                if at_end && a.current_duration() > 0.0 {
                    a.seek(0.0);
                }
                a.play();
            }
        }
        self.clock.set_paused(false);
    }

    /// Pause: the clock stops; heads hold where they are.
    pub fn pause(&mut self) {
        self.clock.set_paused(true);
    }

    /// Stop: pause and put every rig back at its authored start.
    pub fn stop(&mut self) {
        self.clock.set_paused(true);
        for r in self.rigs() {
            if let Some(a) = self.world.animator_mut(r) {
                a.reset_session();
                a.clear_pose_overrides();
            }
        }
        self.apply_preview(0.0, false);
        self.apply_clip_preview(0.0, false);
        self.recompose = true;
    }

    /// Step: pause (if playing) and run exactly one fixed tick with every head playing.
    pub fn step(&mut self) {
        self.clock.set_paused(true);
        for r in self.rigs() {
            if let Some(a) = self.world.animator_mut(r) {
                a.play();
            }
        }
        self.clock.request_step();
    }

    /// Scrub: moves `rig`'s head to `time` (clamped to its clip) and recomposes the pose (the
    /// overlay and socketed props follow); the temporary pose is dropped. The markers the scrub
    /// swept are recorded as hits, by the engine's sweep rule (arrival closed, departure open),
    /// in the scrub's direction and without wrapping; the head itself announces nothing.
    pub fn seek(&mut self, rig: Entity, time: f32) {
        self.clear_pose(rig);
        let Some(a) = self.world.animator_mut(rig) else { return };
        let from = a.time();
        a.seek(time);
        let to = a.time();
        self.recompose = true;
        let Some(clip) = a.current_clip().cloned() else { return };
        let step = marrow_engine::playback::PlaybackStep { from, to, travel: to - from };
        let mut hits = Vec::new();
        let times = clip.markers().iter().map(|m| m.time);
        marrow_engine::playback::swept_markers(times, &step, clip.duration(), false, |i, _| hits.push(i));
        for i in hits {
            let m = &clip.markers()[i];
            let hit =
                MarkerHit { rig, marker: i, name: m.name.clone(), time: m.time, scrub: true, state: false };
            self.push_hit(hit);
        }
    }

    /// The loop preview of `rig`'s head (session only; the clip's authored flag is untouched).
    pub fn set_looping(&mut self, rig: Entity, looping: bool) {
        if let Some(a) = self.world.animator_mut(rig) {
            a.set_looping(looping);
        }
    }

    /// The graph preview, if one runs.
    pub fn preview(&self) -> Option<&GraphPreview> {
        self.preview.as_ref()
    }

    /// Starts previewing `graph` on the rig at path `rig` (from its start, held while the
    /// transport is paused), or stops the preview (`None`): the rig goes back to its authored
    /// clip (the world is rebuilt on the next sync).
    pub fn set_preview(&mut self, target: Option<(String, String)>) {
        match target {
            Some((rig, graph)) => {
                if self.clip_preview.take().is_some() {
                    self.built = None; // the clip preview's rig goes back to its own clip
                }
                let keep = self
                    .preview
                    .as_ref()
                    .filter(|p| p.rig == rig && p.graph == graph)
                    .map(|p| p.params.clone());
                if self.preview.as_ref().is_some_and(|p| p.rig != rig) {
                    self.built = None; // the previous rig goes back to its own clip
                }
                self.preview =
                    Some(GraphPreview { rig, graph, params: keep.unwrap_or_default(), error: None });
                self.apply_preview(0.0, !self.clock.is_paused());
            }
            None => {
                if self.preview.take().is_some() {
                    self.built = None;
                }
            }
        }
    }

    /// The clip preview, if one runs.
    pub fn clip_preview(&self) -> Option<&ClipPreview> {
        self.clip_preview.as_ref()
    }

    /// Starts previewing a clip on a rig (looping from its start, playing unless the transport
    /// is paused; a graph preview stops), or stops it (`None`: the rig goes back to its authored
    /// clip when the world is rebuilt on the next sync).
    pub fn set_clip_preview(&mut self, preview: Option<ClipPreview>) {
        let before = self.clip_preview.as_ref().map(|p| p.rig.clone());
        self.set_preview(None);
        match preview {
            Some(p) => {
                if before.is_some_and(|r| r != p.rig) {
                    self.built = None; // the previous rig goes back to its own clip
                }
                self.clip_preview = Some(p);
                self.apply_clip_preview(0.0, !self.clock.is_paused());
            }
            None => {
                if self.clip_preview.take().is_some() {
                    self.built = None;
                }
            }
        }
    }

    /// The clip-previewed rig's head time and play state.
    fn clip_preview_head(&self) -> Option<(f32, bool)> {
        let p = self.clip_preview.as_ref()?;
        let a = self.world.animator(self.world.find(&p.rig)?)?;
        Some((a.time(), a.is_playing()))
    }

    /// Puts the clip preview's clip on its rig at `time`; records why when it cannot play there.
    fn apply_clip_preview(&mut self, time: f32, playing: bool) {
        let Some(p) = &mut self.clip_preview else { return };
        let a = match preview_animator(&mut self.world, &p.rig) {
            Ok(a) => a,
            Err(e) => {
                p.error = Some(e);
                return;
            }
        };
        if let Some(fault) = marrow_engine::clip::find_clip_fault(&p.clip, a.skeleton()) {
            p.error = Some(format!("{} cannot play on {}: {fault}", p.label, p.rig));
            return;
        }
        p.error = None;
        let play = |a: &mut marrow_engine::animator::Animator,
                    clip: &std::sync::Arc<marrow_engine::clip::Clip>| {
            a.clear_pose_overrides();
            a.play_clip(clip.clone(), true);
            if !playing {
                a.stop();
            }
            a.seek(time);
        };
        play(a, &p.clip);
        // The source beside it, from the same time (skipped when it cannot play there).
        if let Some((rig, clip)) = &p.beside
            && let Ok(b) = preview_animator(&mut self.world, rig)
            && marrow_engine::clip::find_clip_fault(clip, b.skeleton()).is_none()
        {
            play(b, clip);
        }
        self.recompose = true;
    }

    /// The rewind debugger's recording of the previewed graph, if it has state machines and has
    /// played.
    pub fn recording(&self) -> Option<&crate::rewind::Recording> {
        self.recording.as_ref()
    }

    /// Before a frame's ticks: records the previewed graph's parameters (and a checkpoint when
    /// due) while it plays a machine and no rewind is shown.
    fn record_begin(&mut self, ticks: u32) {
        let Some(p) = &self.preview else {
            self.recording = None;
            return;
        };
        let (Some(rig), true) = (self.world.find(&p.rig), ticks > 0) else { return };
        let Some(a) = self.world.animator(rig) else { return };
        let Some(g) = a.current_graph().filter(|g| !g.program().machines().is_empty()) else { return };
        if !a.is_playing() || self.recording.as_ref().is_some_and(|r| r.rewound.is_some() || r.rig != rig) {
            return;
        }
        let tick = self.clock.tick_seconds() as f32;
        let speed = a.settings().speed;
        let rec = self.recording.get_or_insert_with(|| crate::rewind::Recording::new(rig, tick, speed));
        rec.begin_frame(g, a.time());
    }

    /// After a frame's ticks: records what the previewed graph's machines did.
    fn record_end(&mut self, ticks: u32) {
        let Some(rec) = &mut self.recording else { return };
        let Some(g) = self.world.animator(rec.rig).and_then(|a| a.current_graph()) else { return };
        let rig = rec.rig;
        let kinds = self.events.iter().filter(|e| e.entity == rig).map(|e| e.event.kind.clone());
        rec.end_frame(g, ticks, kinds);
    }

    /// Shows the previewed rig as it was at the recorded frame ending at or before `tick`
    /// (replayed from the recording; the clock pauses). False when nothing is recorded there.
    pub fn rewind_to(&mut self, tick: u64) -> bool {
        let Some(rec) = &mut self.recording else { return false };
        let Some(end) = rec.frame_at(tick).map(|f| f.end) else { return false };
        let Some(a) = self.world.animator_mut(rec.rig) else { return false };
        let Some(g) = a.current_graph() else { return false };
        let live = (g.clone(), a.time());
        let Some((inst, time)) = rec.rewind(end, || live) else { return false };
        a.restore_graph(&inst, time);
        // The Parameters panel shows that frame's values.
        if let (Some(p), Some(f)) = (&mut self.preview, rec.frame_at(end)) {
            for (d, v) in inst.program().parameters().iter().zip(&f.params) {
                if !matches!(v, ParamValue::Trigger(_)) {
                    p.params.insert(d.name.clone(), *v);
                }
            }
        }
        self.clock.set_paused(true);
        self.recompose = true;
        true
    }

    /// Ends a rewind and plays on: from the rewound frame (`from_here`: the recording after it
    /// is dropped), or from the moment the rewind started.
    pub fn resume(&mut self, from_here: bool) {
        let Some(rec) = &mut self.recording else { return };
        if let Some((inst, time)) = rec.resume(from_here)
            && let Some(a) = self.world.animator_mut(rec.rig)
        {
            a.restore_graph(&inst, time);
            if let Some(p) = &mut self.preview {
                for (i, d) in inst.program().parameters().iter().enumerate() {
                    if let Some(v) = inst.parameter_at(i).filter(|v| !matches!(v, ParamValue::Trigger(_))) {
                        p.params.insert(d.name.clone(), v);
                    }
                }
            }
        }
        self.play();
    }

    /// Sets a live parameter of the preview (the document does not change). While paused the
    /// pose is recomputed at the same time with the new value.
    pub fn set_preview_parameter(&mut self, name: &str, value: ParamValue) {
        let Some(p) = &mut self.preview else { return };
        // A trigger is an instant: it is set on the instance (until a transition consumes it),
        // never kept to be set again when the preview is rebuilt.
        if !matches!(value, ParamValue::Trigger(_)) {
            p.params.insert(name.to_owned(), value);
        }
        let Some(rig) = self.world.find(&p.rig) else { return };
        let paused = self.clock.is_paused();
        if let Some(a) = self.world.animator_mut(rig)
            && let Some(g) = a.current_graph_mut()
            && let Some(i) = g.program().parameter_index(name)
        {
            g.set_parameter(i, value);
            // A graph with machines keeps its states (a seek would replay it from its entry).
            let machines = !g.program().machines().is_empty();
            if (paused || !a.is_playing()) && !machines {
                let t = a.time();
                a.seek(t);
            }
            self.recompose = true;
        }
    }

    /// The previewed rig's head time and play state, while its graph plays.
    fn preview_head(&self) -> Option<(f32, bool)> {
        let p = self.preview.as_ref()?;
        let a = self.world.animator(self.world.find(&p.rig)?)?;
        a.current_graph().map(|_| (a.time(), a.is_playing()))
    }

    /// Puts the preview's graph on its rig at `time` (compiled for the rig's skeleton with the
    /// library's clips), with the live parameter values; records why when it does not compile.
    fn apply_preview(&mut self, time: f32, playing: bool) {
        // A new instance: what was recorded of the old one cannot be replayed on it.
        self.recording = None;
        let Some(p) = &mut self.preview else { return };
        let a = match preview_animator(&mut self.world, &p.rig) {
            Ok(a) => a,
            Err(e) => {
                p.error = Some(e);
                return;
            }
        };
        let program = match self.library.compile_graph(&p.graph, a.skeleton()) {
            Ok(program) => std::sync::Arc::new(program),
            Err(errors) => {
                p.error = Some(if errors.is_empty() {
                    format!("no graph {:?}", p.graph)
                } else {
                    errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
                });
                return;
            }
        };
        p.error = None;
        a.clear_pose_overrides();
        a.play_graph(program);
        if let Some(g) = a.current_graph_mut() {
            p.params
                .retain(|name, v| g.program().parameter_index(name).is_some_and(|i| g.set_parameter(i, *v)));
        }
        if !playing {
            a.stop();
        }
        a.seek(time);
        self.recompose = true;
    }

    /// How far a rig's head can be scrubbed: its clip's duration, or for a graph the longest
    /// clip the graph plays (at least a second).
    pub fn head_length(&self, rig: Entity) -> f32 {
        let Some(a) = self.world.animator(rig) else { return 0.0 };
        match a.current_graph() {
            Some(g) => {
                let p = g.program();
                p.players()
                    .iter()
                    .map(|x| x.duration)
                    .chain(p.members().iter().map(|m| m.duration))
                    .fold(1.0, f32::max)
            }
            None => a.current_duration(),
        }
    }

    /// Asks for a recompose on the next update (after a change of the view that needs poses).
    pub fn request_recompose(&mut self) {
        self.recompose = true;
    }

    /// The world, mutably (tests and previews that need engine access).
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }
}
