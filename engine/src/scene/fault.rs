//! Edge-latched fault reporting: a fault is named once when it appears, stays quiet while it
//! persists, and is named again only after it went away and came back ("once per gap").
//!
//! [`FaultLatch`] is one latch (one per fault kind per entity); [`FaultLog`] is where raised
//! faults go: each is logged through `log::warn!` and kept in a list for tools and tests.
//! Formatting a message happens only on a rising edge, so a persisting fault costs a branch per
//! frame and no allocation. This module does not decide what is a fault; the scene does.

/// One edge-triggered latch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultLatch {
    active: bool,
}

impl FaultLatch {
    /// Whether the fault is currently present.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// States whether the fault is present this frame. On a rising edge the message is built and
    /// logged into `log`; returns true exactly then.
    pub fn update(&mut self, present: bool, log: &mut FaultLog, message: impl FnOnce() -> String) -> bool {
        let rising = present && !self.active;
        self.active = present;
        if rising {
            log.raise(message());
        }
        rising
    }
}

/// The faults raised so far (each also logged with `log::warn!`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultLog {
    entries: Vec<String>,
}

impl FaultLog {
    /// Logs a fault and keeps its message.
    pub fn raise(&mut self, message: String) {
        log::warn!("{message}");
        self.entries.push(message);
    }

    /// Every fault raised, oldest first.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// How many raised faults contain `needle`.
    pub fn count_containing(&self, needle: &str) -> usize {
        self.entries.iter().filter(|e| e.contains(needle)).count()
    }

    /// Forgets the kept messages (latches are not reset).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}
