//! Easing curves: names, endpoints and reference values from the standard formulas
//! (easings.net), computed independently in double precision.

// The reference table holds computed values (sin(pi/4) among them), not approximated constants.
#![allow(clippy::approx_constant)]

use marrow_engine::easing::{CubicBezier, Ease, Easing};

/// `(name, [f(0.25), f(0.5), f(0.75)])` from the standard formulas, evaluated in f64.
const REFERENCE: &[(&str, [f64; 3])] = &[
    ("linear", [0.250000000, 0.500000000, 0.750000000]),
    ("easeInQuad", [0.062500000, 0.250000000, 0.562500000]),
    ("easeOutQuad", [0.437500000, 0.750000000, 0.937500000]),
    ("easeInOutQuad", [0.125000000, 0.500000000, 0.875000000]),
    ("easeInCubic", [0.015625000, 0.125000000, 0.421875000]),
    ("easeOutCubic", [0.578125000, 0.875000000, 0.984375000]),
    ("easeInOutCubic", [0.062500000, 0.500000000, 0.937500000]),
    ("easeInQuart", [0.003906250, 0.062500000, 0.316406250]),
    ("easeOutQuart", [0.683593750, 0.937500000, 0.996093750]),
    ("easeInOutQuart", [0.031250000, 0.500000000, 0.968750000]),
    ("easeInQuint", [0.000976562, 0.031250000, 0.237304688]),
    ("easeOutQuint", [0.762695312, 0.968750000, 0.999023438]),
    ("easeInOutQuint", [0.015625000, 0.500000000, 0.984375000]),
    ("easeInSine", [0.076120467, 0.292893219, 0.617316568]),
    ("easeOutSine", [0.382683432, 0.707106781, 0.923879533]),
    ("easeInOutSine", [0.146446609, 0.500000000, 0.853553391]),
    ("easeInExpo", [0.005524272, 0.031250000, 0.176776695]),
    ("easeOutExpo", [0.823223305, 0.968750000, 0.994475728]),
    ("easeInOutExpo", [0.015625000, 0.500000000, 0.984375000]),
    ("easeInCirc", [0.031754163, 0.133974596, 0.338562172]),
    ("easeOutCirc", [0.661437828, 0.866025404, 0.968245837]),
    ("easeInOutCirc", [0.066987298, 0.500000000, 0.933012702]),
    ("easeInBack", [-0.064136563, -0.087697500, 0.182590312]),
    ("easeOutBack", [0.817409688, 1.087697500, 1.064136563]),
    ("easeInOutBack", [-0.099681844, 0.500000000, 1.099681844]),
    ("easeInElastic", [-0.005524272, -0.015625000, 0.088388348]),
    ("easeOutElastic", [0.911611652, 1.015625000, 1.005524272]),
    ("easeInOutElastic", [0.011969444, 0.500000000, 0.988030556]),
    ("easeInBounce", [0.027343750, 0.234375000, 0.527343750]),
    ("easeOutBounce", [0.472656250, 0.765625000, 0.972656250]),
    ("easeInOutBounce", [0.117187500, 0.500000000, 0.882812500]),
];

#[test]
fn every_easing_name_round_trips() {
    for &e in Easing::ALL {
        assert_eq!(Easing::from_name(e.name()), Ok(e));
        assert_eq!(e.name().parse::<Easing>(), Ok(e));
        assert_eq!(e.to_string(), e.name());
        // Through serde (RON), by name.
        let text = ron::to_string(&e).unwrap();
        assert_eq!(text, format!("\"{}\"", e.name()));
        assert_eq!(ron::from_str::<Easing>(&text).unwrap(), e);
    }
    assert!(Easing::from_name("easeInSomething").is_err());
    assert!(ron::from_str::<Easing>("\"bogus\"").is_err());
}

#[test]
fn all_31_curves_start_at_0_and_end_at_1() {
    assert_eq!(Easing::ALL.len(), 31);
    for &e in Easing::ALL {
        assert_eq!(e.apply(0.0), 0.0, "{e}");
        assert_eq!(e.apply(1.0), 1.0, "{e}");
        // Just inside the ends the curves are continuous with the endpoints (within the
        // steepest slope: the circular curves are vertical at one end, sqrt(2e-6) ~ 1.4e-3).
        assert!(e.apply(1e-6).abs() < 2e-3, "{e} near 0");
        assert!((e.apply(1.0 - 1e-6) - 1.0).abs() < 2e-3, "{e} near 1");
    }
}

#[test]
fn reference_values_per_family_match_the_standard_formulas() {
    assert_eq!(REFERENCE.len(), 31);
    for (name, expected) in REFERENCE {
        let e = Easing::from_name(name).unwrap();
        for (u, want) in [0.25f32, 0.5, 0.75].iter().zip(expected) {
            let got = e.apply(*u) as f64;
            assert!((got - want).abs() < 2e-6, "{name}({u}) = {got}, expected {want}");
        }
    }
}

#[test]
fn cubic_bezier_matches_css_reference_curves() {
    // CSS `ease` = cubic-bezier(0.25, 0.1, 0.25, 1); at x = 0.5, y ~= 0.8024033877399112.
    let ease = CubicBezier::new(0.25, 0.1, 0.25, 1.0).unwrap();
    assert!((ease.apply(0.5) - 0.802_403_4).abs() < 1e-5, "{}", ease.apply(0.5));
    // The linear control points give the identity.
    let lin = CubicBezier::new(1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0).unwrap();
    for i in 0..=10 {
        let x = i as f32 / 10.0;
        assert!((lin.apply(x) - x).abs() < 1e-5);
    }
    assert_eq!(Ease::Bezier(ease).apply(0.0), 0.0);
    assert_eq!(Ease::Bezier(ease).apply(1.0), 1.0);
    // An overshooting curve (y outside [0, 1]) is allowed.
    let back = CubicBezier::new(0.6, -0.28, 0.735, 0.045).unwrap();
    assert!(back.apply(0.2) < 0.0);
}
