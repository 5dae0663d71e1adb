//! The rewind debugger's recording: while a graph with state machines is previewed and playing,
//! the last 30 seconds of frames (the parameter values each frame started with, its tick count,
//! each machine's state and transition after it, its state events) and a checkpoint of the
//! graph's instance every four seconds. Rewinding to a recorded frame replays the recorded
//! parameters from the checkpoint before it on a copy of the instance, so the rig is posed
//! exactly as it was then (the same inputs through the same code give the same bits); resuming
//! continues from there (the later frames dropped) or from the moment the rewind started.
//!
//! Session state: never saved, never an undo step. What the recording costs (measured by
//! `cargo bench -p marrow-editor --bench rewind`, in BENCHMARKS.md): a frame record of 64 bytes
//! plus 8 a parameter and 12 a machine, the frames' ring reserved once (it never doubles), and a
//! checkpoint (one clone of the instance, some 8 KiB for the locomotion controller) every 240
//! ticks, so 30 seconds of the controller hold about 250 KiB; posing at a recorded frame replays
//! at most 240 ticks (some 40 us). Not here: drawing the timeline (the Graph panel), playing (the
//! engine).

use std::collections::VecDeque;

use marrow_engine::graph::machine::StateEventKind;
use marrow_engine::graph::{EventKind, GraphInstance, ParamValue};
use marrow_engine::scene::Entity;

/// How much is kept, in seconds of ticks.
pub const SECONDS: f32 = 30.0;
/// Ticks between checkpoints: a rewind replays at most this many (about 40 us for the
/// controller sample); fewer would cost a checkpoint's clone more often.
const CHECKPOINT_TICKS: u64 = 240;

/// A machine after a frame: its active state and the transition running (its index and
/// progress).
pub type MachineAt = (u16, Option<(u16, f32)>);

/// One recorded frame.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameRecord {
    /// The tick count at the frame's end (ticks since the recording started).
    pub end: u64,
    /// Ticks the frame ran.
    pub ticks: u32,
    /// The graph's parameter values when the frame started (program order).
    pub params: Box<[ParamValue]>,
    /// Per machine (program order): the active state after the frame and the transition
    /// running (its index and progress).
    pub states: Box<[MachineAt]>,
    /// The state machine events of the frame, as the event lane names them (most frames have
    /// none: an empty box allocates nothing).
    pub events: Box<[String]>,
}

impl FrameRecord {
    /// The tick count at the frame's start.
    pub fn start(&self) -> u64 {
        self.end - u64::from(self.ticks)
    }
}

/// The graph's instance and head time at the start of a frame.
#[derive(Clone, Debug)]
struct Checkpoint {
    at: u64,
    instance: GraphInstance,
    time: f32,
}

/// The frame a rewind shows, and the live state to go back to.
#[derive(Clone, Debug)]
pub struct Rewound {
    /// The tick count the rig is posed at (a recorded frame's end).
    pub at: u64,
    live: (GraphInstance, f32),
}

/// The recording of one previewed graph on one rig.
#[derive(Clone, Debug)]
pub struct Recording {
    /// The rig.
    pub rig: Entity,
    /// Seconds per tick times the Animator's speed (the head's travel per tick).
    travel: f32,
    /// Ticks kept.
    capacity: u64,
    frames: VecDeque<FrameRecord>,
    checkpoints: VecDeque<Checkpoint>,
    /// Ticks recorded so far.
    now: u64,
    /// Parameters at the start of the frame being run.
    pending: Option<Box<[ParamValue]>>,
    /// The rewind in progress.
    pub rewound: Option<Rewound>,
}

fn params_of(g: &GraphInstance) -> Box<[ParamValue]> {
    (0..g.program().parameters().len()).filter_map(|i| g.parameter_at(i)).collect()
}

impl Recording {
    /// An empty recording for `rig` ticking `tick_seconds` at Animator speed `speed`.
    pub fn new(rig: Entity, tick_seconds: f32, speed: f32) -> Self {
        let capacity = (SECONDS / tick_seconds.max(1e-4)).ceil() as u64;
        Recording {
            rig,
            travel: tick_seconds * speed,
            capacity,
            frames: VecDeque::new(),
            checkpoints: VecDeque::new(),
            now: 0,
            pending: None,
            rewound: None,
        }
    }

    /// The recorded frames, oldest first.
    pub fn frames(&self) -> &VecDeque<FrameRecord> {
        &self.frames
    }

    /// The tick count of the newest recorded frame's end.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Seconds per tick of head travel.
    pub fn tick_seconds(&self) -> f32 {
        self.travel
    }

    /// Before a frame's ticks: the parameters they will read, and a checkpoint when one is due.
    pub fn begin_frame(&mut self, graph: &GraphInstance, time: f32) {
        self.pending = Some(params_of(graph));
        let due = self.checkpoints.back().is_none_or(|c| self.now - c.at >= CHECKPOINT_TICKS);
        if due {
            self.checkpoints.push_back(Checkpoint { at: self.now, instance: graph.clone(), time });
        }
    }

    /// After a frame's `ticks`: what the machines did and said.
    pub fn end_frame(&mut self, graph: &GraphInstance, ticks: u32, events: impl Iterator<Item = EventKind>) {
        let Some(params) = self.pending.take() else { return };
        self.now += u64::from(ticks);
        let states = graph
            .machines()
            .map(|(c, m)| {
                let running = m.transition(c).map(|t| (t.transition as u16, t.progress));
                (m.active_state() as u16, running)
            })
            .collect();
        let events = events
            .filter_map(|k| match k {
                EventKind::State(s) if s.kind != StateEventKind::Exit => Some(match &s.from {
                    Some(f) => format!("{} {f} -> {}", s.kind.name(), s.state),
                    None => format!("{} {}", s.kind.name(), s.state),
                }),
                _ => None,
            })
            .collect();
        if self.frames.is_empty() {
            // At most one frame a tick (and the one pushed before the oldest goes): the ring never
            // grows past this, so it never doubles.
            self.frames.reserve_exact(usize::try_from(self.capacity + 2).unwrap_or(0).min(1 << 16));
        }
        self.frames.push_back(FrameRecord { end: self.now, ticks, params, states, events });
        // Keep the last `capacity` ticks, and the newest checkpoint at or before the first frame.
        while self.frames.front().is_some_and(|f| self.now - f.end > self.capacity) {
            self.frames.pop_front();
        }
        let first = self.frames.front().map_or(self.now, FrameRecord::start);
        while self.checkpoints.len() > 1 && self.checkpoints[1].at <= first {
            self.checkpoints.pop_front();
        }
    }

    /// The recorded frame ending at or before tick `tick` (the first one before them all).
    pub fn frame_at(&self, tick: u64) -> Option<&FrameRecord> {
        let k = self.frames.partition_point(|f| f.end <= tick);
        self.frames.get(k.saturating_sub(1))
    }

    /// The graph's instance and head time at the end of the frame ending at `end`, replayed
    /// from the checkpoint before it with the recorded parameters.
    pub fn replay(&self, end: u64) -> Option<(GraphInstance, f32)> {
        let target = self.frames.iter().find(|f| f.end == end)?;
        let cp = self.checkpoints.iter().rev().find(|c| c.at <= target.start())?;
        let mut inst = cp.instance.clone();
        let mut time = cp.time;
        for f in self.frames.iter().filter(|f| f.start() >= cp.at && f.end <= end) {
            for (i, v) in f.params.iter().enumerate() {
                inst.set_parameter(i, *v);
            }
            for _ in 0..f.ticks {
                inst.advance_with(self.travel, false);
                time += self.travel;
            }
        }
        Some((inst, time))
    }

    /// Starts (or moves) a rewind to the frame ending at `end`; `live` is the graph's state now
    /// (kept to resume from). Returns the instance and time to pose the rig with.
    pub fn rewind(
        &mut self,
        end: u64,
        live: impl FnOnce() -> (GraphInstance, f32),
    ) -> Option<(GraphInstance, f32)> {
        let posed = self.replay(end)?;
        let live = match self.rewound.take() {
            Some(r) => r.live,
            None => live(),
        };
        self.rewound = Some(Rewound { at: end, live });
        Some(posed)
    }

    /// Ends the rewind: from its frame (the later frames are dropped; the rig stays as posed),
    /// or from the moment it started (returns the live instance and time to put back).
    pub fn resume(&mut self, from_here: bool) -> Option<(GraphInstance, f32)> {
        let r = self.rewound.take()?;
        if from_here {
            self.frames.retain(|f| f.end <= r.at);
            self.checkpoints.retain(|c| c.at <= r.at);
            self.now = r.at;
            None
        } else {
            Some(r.live)
        }
    }
}
