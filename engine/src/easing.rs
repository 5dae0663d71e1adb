//! Easing curves: the 31 named curves and a CSS-style cubic Bézier.
//!
//! The named curves are declared once, in the `easings!` list at the bottom of this file; the
//! [`Easing`] enum, its stable names and its function table are all generated from that list, so
//! they cannot disagree. A curve's identity is its name: saved files carry [`Easing::name`], never
//! an index or a function pointer.
//!
//! This module only maps a normalized segment parameter `u` in `[0, 1]` to an eased parameter. It
//! deliberately knows nothing about keys, tracks or time; see [`crate::track`] for that.

use std::f32::consts::PI;
use std::fmt;

/// A curve applied to the parameter of a LINEAR track segment: a named curve or a custom Bézier.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ease {
    /// One of the 31 named curves.
    Named(Easing),
    /// A custom CSS-style `cubic-bezier(x1, y1, x2, y2)` curve.
    Bezier(CubicBezier),
}

impl Default for Ease {
    fn default() -> Self {
        Ease::Named(Easing::Linear)
    }
}

impl From<Easing> for Ease {
    fn from(e: Easing) -> Self {
        Ease::Named(e)
    }
}

impl Ease {
    /// True for the identity curve (plain linear), which samplers may skip.
    #[inline]
    pub fn is_linear(&self) -> bool {
        matches!(self, Ease::Named(Easing::Linear))
    }

    /// Maps `u` (clamped to `[0, 1]`) through the curve. `apply(0) == 0` and `apply(1) == 1` exactly.
    #[inline]
    pub fn apply(&self, u: f32) -> f32 {
        match self {
            Ease::Named(e) => e.apply(u),
            Ease::Bezier(b) => b.apply(u),
        }
    }
}

/// A CSS-style cubic Bézier easing: the curve from (0,0) to (1,1) with control points
/// `(x1, y1)` and `(x2, y2)`. `x1` and `x2` must lie in `[0, 1]` so that the curve is a function of
/// x; `y1` and `y2` may overshoot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicBezier {
    /// First control point, x (in `[0, 1]`).
    pub x1: f32,
    /// First control point, y.
    pub y1: f32,
    /// Second control point, x (in `[0, 1]`).
    pub x2: f32,
    /// Second control point, y.
    pub y2: f32,
}

/// Why a [`CubicBezier`] cannot be used as an easing.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum BezierError {
    /// A control point coordinate is NaN or infinite.
    #[error("cubic-bezier control point is not finite ({0}, {1}, {2}, {3})")]
    NotFinite(f32, f32, f32, f32),
    /// `x1` or `x2` lies outside `[0, 1]`, so the curve is not a function of x.
    #[error("cubic-bezier x1 and x2 must lie in [0, 1] (got x1 = {0}, x2 = {1})")]
    XOutOfRange(f32, f32),
}

impl CubicBezier {
    /// Builds a curve, checking that it is a valid easing.
    pub fn new(x1: f32, y1: f32, x2: f32, y2: f32) -> Result<Self, BezierError> {
        if ![x1, y1, x2, y2].iter().all(|v| v.is_finite()) {
            return Err(BezierError::NotFinite(x1, y1, x2, y2));
        }
        if !(0.0..=1.0).contains(&x1) || !(0.0..=1.0).contains(&x2) {
            return Err(BezierError::XOutOfRange(x1, x2));
        }
        Ok(Self { x1, y1, x2, y2 })
    }

    #[inline]
    fn coord(p1: f32, p2: f32, s: f32) -> f32 {
        // B(s) = 3(1-s)^2 s p1 + 3(1-s) s^2 p2 + s^3
        let c = 3.0 * p1;
        let b = 3.0 * (p2 - p1) - c;
        let a = 1.0 - c - b;
        ((a * s + b) * s + c) * s
    }

    #[inline]
    fn coord_derivative(p1: f32, p2: f32, s: f32) -> f32 {
        let c = 3.0 * p1;
        let b = 3.0 * (p2 - p1) - c;
        let a = 1.0 - c - b;
        (3.0 * a * s + 2.0 * b) * s + c
    }

    /// Maps `x` (clamped to `[0, 1]`) to the curve's y: solves `x(s) = x` (Newton, then bisection
    /// as a fallback) and returns `y(s)`.
    pub fn apply(&self, x: f32) -> f32 {
        if x <= 0.0 {
            return 0.0;
        }
        if x >= 1.0 {
            return 1.0;
        }
        let mut s = x;
        for _ in 0..8 {
            let err = Self::coord(self.x1, self.x2, s) - x;
            if err.abs() < 1e-7 {
                return Self::coord(self.y1, self.y2, s);
            }
            let d = Self::coord_derivative(self.x1, self.x2, s);
            if d.abs() < 1e-6 {
                break;
            }
            s -= err / d;
        }
        // Bisection: x(s) is monotonic for x1, x2 in [0, 1].
        let (mut lo, mut hi) = (0.0f32, 1.0f32);
        s = x;
        for _ in 0..40 {
            let v = Self::coord(self.x1, self.x2, s);
            if (v - x).abs() < 1e-7 {
                break;
            }
            if v < x {
                lo = s;
            } else {
                hi = s;
            }
            s = 0.5 * (lo + hi);
        }
        Self::coord(self.y1, self.y2, s)
    }
}

/// An error naming an easing that does not exist.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown easing {0:?} (expected one of linear, easeInQuad, ..., easeInOutBounce)")]
pub struct UnknownEasing(pub String);

macro_rules! easings {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal, $f:path; )*) => {
        /// One of the 31 named easing curves. Its identity is its [`name`](Easing::name).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Easing {
            $( $(#[$doc])* $variant, )*
        }

        const FUNCTIONS: &[fn(f32) -> f32] = &[ $( $f, )* ];

        impl Easing {
            /// Every named curve, in declaration order.
            pub const ALL: &'static [Easing] = &[ $( Easing::$variant, )* ];

            /// The stable name written to files (`linear`, `easeInQuad`, ... `easeInOutBounce`).
            pub const fn name(self) -> &'static str {
                match self { $( Easing::$variant => $name, )* }
            }

            /// Looks a curve up by its stable name.
            pub fn from_name(name: &str) -> Result<Easing, UnknownEasing> {
                match name {
                    $( $name => Ok(Easing::$variant), )*
                    _ => Err(UnknownEasing(name.to_owned())),
                }
            }
        }
    };
}

impl Easing {
    /// Maps `u` (clamped to `[0, 1]`) through the curve. `apply(0) == 0` and `apply(1) == 1`
    /// exactly for every curve.
    #[inline]
    pub fn apply(self, u: f32) -> f32 {
        if u <= 0.0 {
            return 0.0;
        }
        if u >= 1.0 {
            return 1.0;
        }
        FUNCTIONS[self as usize](u)
    }
}

impl fmt::Display for Easing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Easing {
    type Err = UnknownEasing;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Easing::from_name(s)
    }
}

impl serde::Serialize for Easing {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Easing {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Easing::from_name(&name).map_err(serde::de::Error::custom)
    }
}

mod curves {
    use super::PI;

    pub fn linear(x: f32) -> f32 {
        x
    }
    pub fn in_quad(x: f32) -> f32 {
        x * x
    }
    pub fn out_quad(x: f32) -> f32 {
        1.0 - (1.0 - x) * (1.0 - x)
    }
    pub fn in_out_quad(x: f32) -> f32 {
        if x < 0.5 { 2.0 * x * x } else { 1.0 - (-2.0 * x + 2.0).powi(2) / 2.0 }
    }
    pub fn in_cubic(x: f32) -> f32 {
        x * x * x
    }
    pub fn out_cubic(x: f32) -> f32 {
        1.0 - (1.0 - x).powi(3)
    }
    pub fn in_out_cubic(x: f32) -> f32 {
        if x < 0.5 { 4.0 * x * x * x } else { 1.0 - (-2.0 * x + 2.0).powi(3) / 2.0 }
    }
    pub fn in_quart(x: f32) -> f32 {
        x.powi(4)
    }
    pub fn out_quart(x: f32) -> f32 {
        1.0 - (1.0 - x).powi(4)
    }
    pub fn in_out_quart(x: f32) -> f32 {
        if x < 0.5 { 8.0 * x.powi(4) } else { 1.0 - (-2.0 * x + 2.0).powi(4) / 2.0 }
    }
    pub fn in_quint(x: f32) -> f32 {
        x.powi(5)
    }
    pub fn out_quint(x: f32) -> f32 {
        1.0 - (1.0 - x).powi(5)
    }
    pub fn in_out_quint(x: f32) -> f32 {
        if x < 0.5 { 16.0 * x.powi(5) } else { 1.0 - (-2.0 * x + 2.0).powi(5) / 2.0 }
    }
    pub fn in_sine(x: f32) -> f32 {
        1.0 - (x * PI / 2.0).cos()
    }
    pub fn out_sine(x: f32) -> f32 {
        (x * PI / 2.0).sin()
    }
    pub fn in_out_sine(x: f32) -> f32 {
        -((PI * x).cos() - 1.0) / 2.0
    }
    pub fn in_expo(x: f32) -> f32 {
        2f32.powf(10.0 * x - 10.0)
    }
    pub fn out_expo(x: f32) -> f32 {
        1.0 - 2f32.powf(-10.0 * x)
    }
    pub fn in_out_expo(x: f32) -> f32 {
        if x < 0.5 { 2f32.powf(20.0 * x - 10.0) / 2.0 } else { (2.0 - 2f32.powf(-20.0 * x + 10.0)) / 2.0 }
    }
    pub fn in_circ(x: f32) -> f32 {
        1.0 - (1.0 - x * x).max(0.0).sqrt()
    }
    pub fn out_circ(x: f32) -> f32 {
        (1.0 - (x - 1.0) * (x - 1.0)).max(0.0).sqrt()
    }
    pub fn in_out_circ(x: f32) -> f32 {
        if x < 0.5 {
            (1.0 - (1.0 - (2.0 * x).powi(2)).max(0.0).sqrt()) / 2.0
        } else {
            ((1.0 - (-2.0 * x + 2.0).powi(2)).max(0.0).sqrt() + 1.0) / 2.0
        }
    }
    const C1: f32 = 1.70158;
    const C2: f32 = C1 * 1.525;
    const C3: f32 = C1 + 1.0;
    pub fn in_back(x: f32) -> f32 {
        C3 * x * x * x - C1 * x * x
    }
    pub fn out_back(x: f32) -> f32 {
        1.0 + C3 * (x - 1.0).powi(3) + C1 * (x - 1.0).powi(2)
    }
    pub fn in_out_back(x: f32) -> f32 {
        if x < 0.5 {
            ((2.0 * x).powi(2) * ((C2 + 1.0) * 2.0 * x - C2)) / 2.0
        } else {
            ((2.0 * x - 2.0).powi(2) * ((C2 + 1.0) * (x * 2.0 - 2.0) + C2) + 2.0) / 2.0
        }
    }
    const C4: f32 = (2.0 * PI) / 3.0;
    const C5: f32 = (2.0 * PI) / 4.5;
    pub fn in_elastic(x: f32) -> f32 {
        -(2f32.powf(10.0 * x - 10.0)) * ((x * 10.0 - 10.75) * C4).sin()
    }
    pub fn out_elastic(x: f32) -> f32 {
        2f32.powf(-10.0 * x) * ((x * 10.0 - 0.75) * C4).sin() + 1.0
    }
    pub fn in_out_elastic(x: f32) -> f32 {
        if x < 0.5 {
            -(2f32.powf(20.0 * x - 10.0) * ((20.0 * x - 11.125) * C5).sin()) / 2.0
        } else {
            (2f32.powf(-20.0 * x + 10.0) * ((20.0 * x - 11.125) * C5).sin()) / 2.0 + 1.0
        }
    }
    pub fn out_bounce(x: f32) -> f32 {
        const N1: f32 = 7.5625;
        const D1: f32 = 2.75;
        if x < 1.0 / D1 {
            N1 * x * x
        } else if x < 2.0 / D1 {
            let x = x - 1.5 / D1;
            N1 * x * x + 0.75
        } else if x < 2.5 / D1 {
            let x = x - 2.25 / D1;
            N1 * x * x + 0.9375
        } else {
            let x = x - 2.625 / D1;
            N1 * x * x + 0.984375
        }
    }
    pub fn in_bounce(x: f32) -> f32 {
        1.0 - out_bounce(1.0 - x)
    }
    pub fn in_out_bounce(x: f32) -> f32 {
        if x < 0.5 {
            (1.0 - out_bounce(1.0 - 2.0 * x)) / 2.0
        } else {
            (1.0 + out_bounce(2.0 * x - 1.0)) / 2.0
        }
    }
}

easings! {
    /// The identity curve.
    Linear => "linear", curves::linear;
    /// Quadratic, accelerating.
    InQuad => "easeInQuad", curves::in_quad;
    /// Quadratic, decelerating.
    OutQuad => "easeOutQuad", curves::out_quad;
    /// Quadratic, accelerating then decelerating.
    InOutQuad => "easeInOutQuad", curves::in_out_quad;
    /// Cubic, accelerating.
    InCubic => "easeInCubic", curves::in_cubic;
    /// Cubic, decelerating.
    OutCubic => "easeOutCubic", curves::out_cubic;
    /// Cubic, accelerating then decelerating.
    InOutCubic => "easeInOutCubic", curves::in_out_cubic;
    /// Quartic, accelerating.
    InQuart => "easeInQuart", curves::in_quart;
    /// Quartic, decelerating.
    OutQuart => "easeOutQuart", curves::out_quart;
    /// Quartic, accelerating then decelerating.
    InOutQuart => "easeInOutQuart", curves::in_out_quart;
    /// Quintic, accelerating.
    InQuint => "easeInQuint", curves::in_quint;
    /// Quintic, decelerating.
    OutQuint => "easeOutQuint", curves::out_quint;
    /// Quintic, accelerating then decelerating.
    InOutQuint => "easeInOutQuint", curves::in_out_quint;
    /// Sinusoidal, accelerating.
    InSine => "easeInSine", curves::in_sine;
    /// Sinusoidal, decelerating.
    OutSine => "easeOutSine", curves::out_sine;
    /// Sinusoidal, accelerating then decelerating.
    InOutSine => "easeInOutSine", curves::in_out_sine;
    /// Exponential, accelerating.
    InExpo => "easeInExpo", curves::in_expo;
    /// Exponential, decelerating.
    OutExpo => "easeOutExpo", curves::out_expo;
    /// Exponential, accelerating then decelerating.
    InOutExpo => "easeInOutExpo", curves::in_out_expo;
    /// Circular, accelerating.
    InCirc => "easeInCirc", curves::in_circ;
    /// Circular, decelerating.
    OutCirc => "easeOutCirc", curves::out_circ;
    /// Circular, accelerating then decelerating.
    InOutCirc => "easeInOutCirc", curves::in_out_circ;
    /// Overshooting backwards first.
    InBack => "easeInBack", curves::in_back;
    /// Overshooting the target, then settling.
    OutBack => "easeOutBack", curves::out_back;
    /// Overshooting at both ends.
    InOutBack => "easeInOutBack", curves::in_out_back;
    /// Elastic wind-up.
    InElastic => "easeInElastic", curves::in_elastic;
    /// Elastic settle.
    OutElastic => "easeOutElastic", curves::out_elastic;
    /// Elastic at both ends.
    InOutElastic => "easeInOutElastic", curves::in_out_elastic;
    /// Bouncing into motion.
    InBounce => "easeInBounce", curves::in_bounce;
    /// Bouncing to rest.
    OutBounce => "easeOutBounce", curves::out_bounce;
    /// Bouncing at both ends.
    InOutBounce => "easeInOutBounce", curves::in_out_bounce;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_31_curves_with_distinct_names() {
        assert_eq!(Easing::ALL.len(), 31);
        assert_eq!(FUNCTIONS.len(), 31);
        let mut names: Vec<_> = Easing::ALL.iter().map(|e| e.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 31);
    }

    #[test]
    fn bezier_rejects_x_outside_unit_range() {
        assert_eq!(CubicBezier::new(1.5, 0.0, 0.5, 1.0), Err(BezierError::XOutOfRange(1.5, 0.5)));
        assert!(matches!(CubicBezier::new(f32::NAN, 0.0, 0.5, 1.0), Err(BezierError::NotFinite(..))));
    }
}
