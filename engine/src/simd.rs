//! The SIMD level the engine's kernels run at: one level, detected once from the CPU and
//! overridable downwards with `MARROW_SIMD`, read by every job that has a vector path (sampling's
//! key apply and lane pairs, the two-layer blend, local-to-model, the palette, skinning).
//!
//! | level | CPU features it needs | what runs |
//! |---|---|---|
//! | `portable` | none | the portable loops (glam's SSE2 on x86-64) |
//! | `avx2` | AVX, AVX2 and FMA, with the bit-manipulation set every such CPU has (POPCNT, LZCNT, BMI1, BMI2) | the eight-lane paths (sampling pairs, the two-layer blend eight bones at a time, local matrices eight at a time, the palette two registers to a bone, skinning one vertex to a register with normals normalized eight at a time, the compressed-clip decoder's bit counting) |
//! | `avx512` | the above and AVX-512F | the sixteen-lane paths (key apply, the two-layer blend sixteen bones at a time, local matrices sixteen at a time, palette, skinning sixteen vertices at a time); on Intel CPUs the blend, local-to-model and skinning with normals keep their eight-lane kernels ([`wide_kernels`]) |
//!
//! `MARROW_SIMD=portable|avx2|avx512` lowers the level (never above what the CPU has: a higher
//! request is refused with a warning and the detected level is kept), so every path can be run
//! and measured on one machine, as ozz-animation's CI keeps a scalar reference leg. The level is
//! chosen on first use and fixed for the process.
//!
//! Tests of one kernel call [`test_gate`]: it prints a loud `SKIPPED` line naming the level the
//! CPU lacks, or fails when `MARROW_REQUIRE_SIMD` asks for that level, as `MARROW_REQUIRE_GPU`
//! does for the GPU.
//!
//! Not here: the kernels themselves (they live beside their jobs) or any choice per call.

use std::sync::atomic::{AtomicU8, Ordering};

/// A SIMD level, ordered: a higher level can run every path of a lower one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SimdLevel {
    /// No vector extension beyond the target's baseline (SSE2 on x86-64).
    Portable,
    /// AVX, AVX2 and FMA (with POPCNT, LZCNT, BMI1 and BMI2).
    Avx2,
    /// AVX2, FMA and AVX-512F.
    Avx512,
}

impl SimdLevel {
    /// Every level, lowest first.
    pub const ALL: [SimdLevel; 3] = [SimdLevel::Portable, SimdLevel::Avx2, SimdLevel::Avx512];

    /// The name `MARROW_SIMD` takes and benchmarks print: `portable`, `avx2`, `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Portable => "portable",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx512 => "avx512",
        }
    }

    /// The level a name stands for (case and surrounding space ignored).
    pub fn parse(name: &str) -> Option<SimdLevel> {
        let name = name.trim().to_ascii_lowercase();
        SimdLevel::ALL.into_iter().find(|l| l.name() == name)
    }

    fn from_u8(v: u8) -> SimdLevel {
        match v {
            1 => SimdLevel::Portable,
            2 => SimdLevel::Avx2,
            _ => SimdLevel::Avx512,
        }
    }

    fn to_u8(self) -> u8 {
        match self {
            SimdLevel::Portable => 1,
            SimdLevel::Avx2 => 2,
            SimdLevel::Avx512 => 3,
        }
    }
}

impl std::fmt::Display for SimdLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The highest level this CPU supports (its features, whatever `MARROW_SIMD` says).
pub fn detected() -> SimdLevel {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let avx2 = has!("avx")
            && has!("avx2")
            && has!("fma")
            && has!("popcnt")
            && has!("lzcnt")
            && has!("bmi1")
            && has!("bmi2");
        if avx2 && has!("avx512f") {
            return SimdLevel::Avx512;
        }
        if avx2 {
            return SimdLevel::Avx2;
        }
    }
    SimdLevel::Portable
}

/// The level chosen from what the CPU supports and a `MARROW_SIMD` value: the requested level
/// when it is not above `detected`, else `detected`; with the warning to print when the request
/// was refused or not understood.
pub fn choose(detected: SimdLevel, request: Option<&str>) -> (SimdLevel, Option<String>) {
    let Some(request) = request.filter(|r| !r.trim().is_empty()) else { return (detected, None) };
    match SimdLevel::parse(request) {
        Some(asked) if asked <= detected => (asked, None),
        Some(asked) => (
            detected,
            Some(format!(
                "MARROW_SIMD={request}: this CPU supports {detected} at most; running at {detected}, not {asked}"
            )),
        ),
        None => (
            detected,
            Some(format!(
                "MARROW_SIMD={request} is not a level (portable, avx2 or avx512); running at {detected}"
            )),
        ),
    }
}

/// 0 until chosen, then [`SimdLevel::to_u8`].
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The level the jobs run at: [`detected`], lowered by `MARROW_SIMD`; chosen on first call
/// (a refused override is logged then, once) and the same for the rest of the process.
#[inline]
pub fn level() -> SimdLevel {
    match LEVEL.load(Ordering::Relaxed) {
        0 => choose_once(),
        v => SimdLevel::from_u8(v),
    }
}

#[cold]
fn choose_once() -> SimdLevel {
    let request = std::env::var("MARROW_SIMD").ok();
    let (chosen, warning) = choose(detected(), request.as_deref());
    // Two threads may both get here; they choose the same level, and one of them warns twice
    // at worst.
    if LEVEL.swap(chosen.to_u8(), Ordering::Relaxed) == 0
        && let Some(w) = warning
    {
        log::warn!("{w}");
    }
    chosen
}

/// Whether the jobs run their AVX2 (eight-lane) paths: the level is `avx2` or above.
#[inline]
pub fn avx2() -> bool {
    level() >= SimdLevel::Avx2
}

/// Whether the jobs run their AVX-512F (sixteen-lane) paths: the level is `avx512`.
#[inline]
pub fn avx512() -> bool {
    level() >= SimdLevel::Avx512
}

/// Whether the two-layer blend, local-to-model and skinning with normals take their sixteen-lane
/// AVX-512 kernels: the level is `avx512` and the CPU is not Intel's. Those kernels were written
/// and measured on an AMD Zen 4 (equal to or faster than the eight-lane ones there); on an Intel
/// Xeon (Emerald Rapids) they measured 10-35% slower than the eight-lane kernels, which the jobs
/// run there instead (the blend and local-to-model give the same bits; every kernel is tested
/// against the portable one directly). The palette, sampling and skinning of positions alone keep
/// their AVX-512 paths everywhere. `MARROW_WIDE_KERNELS=1` or `0`
/// overrides the choice (to measure both on one machine). Chosen on first use, fixed for the
/// process.
#[inline]
pub fn wide_kernels() -> bool {
    avx512()
        && match WIDE.load(Ordering::Relaxed) {
            0 => choose_wide_once(),
            v => v == 2,
        }
}

/// 0 until chosen, then 1 (eight-lane kernels) or 2 (sixteen-lane).
static WIDE: AtomicU8 = AtomicU8::new(0);

#[cold]
fn choose_wide_once() -> bool {
    let wide = match std::env::var("MARROW_WIDE_KERNELS").ok().as_deref().map(str::trim) {
        Some("1") => true,
        Some("0") => false,
        _ => !intel_cpu(),
    };
    WIDE.store(if wide { 2 } else { 1 }, Ordering::Relaxed);
    wide
}

/// Whether the level is `avx512` on an Intel CPU: where the many-chain two-bone IK job solves
/// its groups of sixteen with an AVX-512 build of the lane solve (one register per sixteen
/// lanes; 14% faster than the AVX2 build on an Intel Xeon, Emerald Rapids, and slower on the AMD
/// Zen 4 the AVX2 build was chosen on, where 512-bit operations take two passes and the solve's
/// many live values spill). The same bits either way. The vendor is read once.
#[inline]
pub fn intel_avx512() -> bool {
    avx512() && intel_cpu()
}

/// [`intel`], read once: what [`wide_kernels`] and [`intel_avx512`] both ask.
#[inline]
fn intel_cpu() -> bool {
    match INTEL.load(Ordering::Relaxed) {
        0 => {
            let yes = intel();
            INTEL.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
        v => v == 2,
    }
}

/// 0 until read, then 1 (another vendor) or 2 (`GenuineIntel`).
static INTEL: AtomicU8 = AtomicU8::new(0);

/// Whether the CPU's vendor string is `GenuineIntel`.
fn intel() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: CPUID leaf 0 exists on every x86-64 CPU.
        #[allow(unused_unsafe)]
        let r = unsafe { std::arch::x86_64::__cpuid(0) };
        let mut vendor = [0u8; 12];
        vendor[..4].copy_from_slice(&r.ebx.to_le_bytes());
        vendor[4..8].copy_from_slice(&r.edx.to_le_bytes());
        vendor[8..].copy_from_slice(&r.ecx.to_le_bytes());
        &vendor == b"GenuineIntel"
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// For tests of one kernel at `needed`: `true` when the CPU supports it (the test runs the
/// kernel directly, whatever `MARROW_SIMD` lowered the jobs to). Otherwise prints a loud
/// `SKIPPED` line naming `what` and the level missing and returns `false`, or panics when
/// `MARROW_REQUIRE_SIMD` names `needed` or a higher level.
#[doc(hidden)]
pub fn test_gate(needed: SimdLevel, what: &str) -> bool {
    let have = detected();
    if have >= needed {
        return true;
    }
    let required = std::env::var("MARROW_REQUIRE_SIMD").ok().and_then(|r| SimdLevel::parse(&r));
    if required.is_some_and(|r| r >= needed) {
        panic!(
            "MARROW_REQUIRE_SIMD asks for {needed}, but this CPU supports {have} at most: {what} cannot run"
        );
    }
    eprintln!(
        "SKIPPED: {what} needs {needed}; this CPU supports {have} at most (MARROW_REQUIRE_SIMD={needed} makes this a failure)"
    );
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_lowers_the_level_and_never_raises_it() {
        use SimdLevel::*;
        assert_eq!(choose(Avx512, None), (Avx512, None));
        assert_eq!(choose(Avx512, Some("avx2")), (Avx2, None));
        assert_eq!(choose(Avx512, Some(" Portable ")), (Portable, None));
        assert_eq!(choose(Avx2, Some("avx2")), (Avx2, None));
        let (level, warning) = choose(Avx2, Some("avx512"));
        assert_eq!(level, Avx2);
        assert!(warning.unwrap().contains("supports avx2 at most"));
        let (level, warning) = choose(Portable, Some("avx2"));
        assert_eq!(level, Portable);
        assert!(warning.is_some());
        let (level, warning) = choose(Avx2, Some("sse9"));
        assert_eq!(level, Avx2);
        assert!(warning.unwrap().contains("not a level"));
        assert_eq!(choose(Avx2, Some("")), (Avx2, None));
    }

    #[test]
    fn the_chosen_level_is_the_override_or_the_cpu() {
        let (expected, _) = choose(detected(), std::env::var("MARROW_SIMD").ok().as_deref());
        assert_eq!(level(), expected);
        assert!(level() <= detected());
        assert_eq!(avx2(), level() >= SimdLevel::Avx2);
        assert_eq!(avx512(), level() == SimdLevel::Avx512);
        eprintln!("SIMD level: {} (CPU: {})", level(), detected());
    }

    #[test]
    fn names_round_trip() {
        for l in SimdLevel::ALL {
            assert_eq!(SimdLevel::parse(l.name()), Some(l));
            assert_eq!(l.to_string(), l.name());
            assert_eq!(SimdLevel::from_u8(l.to_u8()), l);
        }
        assert!(SimdLevel::Portable < SimdLevel::Avx2 && SimdLevel::Avx2 < SimdLevel::Avx512);
    }
}
