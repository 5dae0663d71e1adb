//! The BVH grammar: a tokenizer that keeps every token's line and column, the `HIERARCHY`
//! blocks (read with an explicit stack, never recursion), and the `MOTION` section's frames,
//! one per line, checked against the budgets before anything is allocated from a declared count.
//!
//! Nothing here knows about skeletons or clips; see `build.rs`.

use super::{BvhFault, MAX_DEPTH, MAX_JOINTS, MAX_KEYS, MAX_VALUES, Position};

/// One of the six BVH channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChannelKind {
    /// `Xposition`.
    Xposition,
    /// `Yposition`.
    Yposition,
    /// `Zposition`.
    Zposition,
    /// `Xrotation`.
    Xrotation,
    /// `Yrotation`.
    Yrotation,
    /// `Zrotation`.
    Zrotation,
}

impl ChannelKind {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "Xposition" => Self::Xposition,
            "Yposition" => Self::Yposition,
            "Zposition" => Self::Zposition,
            "Xrotation" => Self::Xrotation,
            "Yrotation" => Self::Yrotation,
            "Zrotation" => Self::Zrotation,
            _ => return None,
        })
    }

    /// The axis (0 = X, 1 = Y, 2 = Z).
    pub(crate) fn axis(self) -> usize {
        match self {
            Self::Xposition | Self::Xrotation => 0,
            Self::Yposition | Self::Yrotation => 1,
            Self::Zposition | Self::Zrotation => 2,
        }
    }

    /// Whether this is a rotation channel.
    pub(crate) fn is_rotation(self) -> bool {
        matches!(self, Self::Xrotation | Self::Yrotation | Self::Zrotation)
    }
}

/// A `ROOT`, `JOINT` or `End Site` block.
#[derive(Clone, Debug)]
pub(crate) struct JointDecl {
    /// The joint's name (`PARENT_end` for an End Site).
    pub name: String,
    /// The enclosing joint.
    pub parent: Option<usize>,
    /// `OFFSET x y z`, as written.
    pub offset: [f64; 3],
    /// `CHANNELS`, in declared order (empty for an End Site).
    pub channels: Vec<ChannelKind>,
    /// Index of the first of its channels in a frame's values.
    pub first_value: usize,
    /// Whether it is an `End Site`.
    pub end_site: bool,
    /// Where its block starts.
    pub at: Position,
}

/// A parsed BVH file.
#[derive(Clone, Debug)]
pub(crate) struct Parsed {
    /// Every block, parents before children (the file's depth-first order).
    pub joints: Vec<JointDecl>,
    /// Values per frame (all joints' channels).
    pub channels: usize,
    /// `Frames:`.
    pub frames: usize,
    /// `Frame Time:`, seconds.
    pub frame_time: f64,
    /// Frame-major values, `frames * channels`.
    pub values: Vec<f32>,
    /// Where `Frames:` is (budget faults found after parsing point here).
    pub frames_at: Position,
}

/// A token and where it starts.
#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    text: &'a str,
    at: Position,
}

/// Splits text into whitespace-separated tokens, counting lines and columns (1-based, in
/// characters).
struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
    col: usize,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0, line: 1, col: 1 }
    }

    fn here(&self) -> Position {
        Position { line: self.line, col: self.col }
    }

    fn skip_space(&mut self) {
        let rest = &self.text[self.pos..];
        for c in rest.chars() {
            if !c.is_whitespace() {
                break;
            }
            self.pos += c.len_utf8();
            if c == '\n' {
                self.line += 1;
                self.col = 1;
            } else if c != '\r' {
                self.col += 1;
            }
        }
    }

    fn peek(&mut self) -> Option<Token<'a>> {
        self.skip_space();
        let rest = &self.text[self.pos..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        (end > 0).then(|| Token { text: &rest[..end], at: self.here() })
    }

    fn next(&mut self) -> Option<Token<'a>> {
        let t = self.peek()?;
        self.pos += t.text.len();
        self.col += t.text.chars().count();
        Some(t)
    }
}

type Fail = (Position, BvhFault);

fn found(t: Option<Token<'_>>) -> String {
    match t {
        Some(t) => format!("{:?}", shorten(t.text)),
        None => "the end of the file".into(),
    }
}

/// A token as quoted in a fault (at most 40 characters).
fn shorten(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_owned(),
    }
}

struct Parser<'a> {
    lex: Lexer<'a>,
    joints: Vec<JointDecl>,
    channels: usize,
}

impl<'a> Parser<'a> {
    fn expected(&mut self, what: &str, t: Option<Token<'a>>) -> Fail {
        let at = t.map_or_else(|| self.lex.here(), |t| t.at);
        (at, BvhFault::Expected { expected: what.to_owned(), found: found(t) })
    }

    fn expect(&mut self, word: &str) -> Result<Token<'a>, Fail> {
        match self.lex.next() {
            Some(t) if t.text == word => Ok(t),
            t => Err(self.expected(&format!("{word:?}"), t)),
        }
    }

    fn number(&mut self, what: &str) -> Result<f64, Fail> {
        let Some(t) = self.lex.next() else {
            let at = self.lex.here();
            return Err((at, BvhFault::Expected { expected: what.to_owned(), found: found(None) }));
        };
        let v: f64 = t
            .text
            .parse()
            .map_err(|_| (t.at, BvhFault::BadNumber { what: what.to_owned(), token: shorten(t.text) }))?;
        if !v.is_finite() {
            return Err((t.at, BvhFault::NotFinite { what: what.to_owned(), token: shorten(t.text) }));
        }
        Ok(v)
    }

    /// `CHANNELS n name...` (the keyword already read at `at`).
    fn channels(&mut self, at: Position) -> Result<Vec<ChannelKind>, Fail> {
        let Some(t) = self.lex.next() else { return Err(self.expected("a channel count", None)) };
        let declared: usize = t.text.parse().map_err(|_| {
            (t.at, BvhFault::BadNumber { what: "channel count".into(), token: shorten(t.text) })
        })?;
        if declared > 6 {
            return Err((t.at, BvhFault::TooManyChannels { declared }));
        }
        let mut out = Vec::with_capacity(declared);
        while let Some(t) = self.lex.peek() {
            let Some(kind) = ChannelKind::from_name(t.text) else {
                let is_keyword =
                    matches!(t.text, "JOINT" | "End" | "}" | "{" | "OFFSET" | "CHANNELS" | "MOTION");
                if out.len() < declared && !is_keyword {
                    return Err((t.at, BvhFault::UnknownChannel { name: shorten(t.text) }));
                }
                break;
            };
            if out.len() == declared {
                // A further channel name: the list is longer than declared.
                let mut named = declared + 1;
                self.lex.next();
                while self.lex.peek().is_some_and(|t| ChannelKind::from_name(t.text).is_some()) && named <= 6
                {
                    self.lex.next();
                    named += 1;
                }
                return Err((at, BvhFault::ChannelCount { declared, named }));
            }
            if out.contains(&kind) {
                return Err((t.at, BvhFault::RepeatedChannel { name: t.text.to_owned() }));
            }
            out.push(kind);
            self.lex.next();
        }
        if out.len() < declared {
            return Err((at, BvhFault::ChannelCount { declared, named: out.len() }));
        }
        Ok(out)
    }

    /// Opens a block: its name (read here unless an End Site), `{`, `OFFSET` and (not for an End
    /// Site) an optional `CHANNELS`. Returns the new joint's index.
    fn open(
        &mut self,
        at: Position,
        parent: Option<usize>,
        end_site: bool,
        depth: usize,
    ) -> Result<usize, Fail> {
        if self.joints.len() >= MAX_JOINTS {
            return Err((at, BvhFault::TooManyJoints { limit: MAX_JOINTS }));
        }
        if depth > MAX_DEPTH {
            return Err((at, BvhFault::TooDeep { limit: MAX_DEPTH }));
        }
        let name = if end_site {
            let p = parent.and_then(|p| self.joints.get(p)).map_or("", |j| j.name.as_str());
            format!("{p}_end")
        } else {
            match self.lex.next() {
                Some(t) if t.text != "{" => t.text.to_owned(),
                t => return Err(self.expected("a joint name", t)),
            }
        };
        if let Some(first) = self.joints.iter().find(|j| j.name == name) {
            return Err((at, BvhFault::DuplicateName { name, first_line: first.at.line }));
        }
        self.expect("{")?;
        self.expect("OFFSET")?;
        let offset = [self.number("OFFSET x")?, self.number("OFFSET y")?, self.number("OFFSET z")?];
        let mut channels = Vec::new();
        if !end_site && self.lex.peek().is_some_and(|t| t.text == "CHANNELS") {
            let kw = self.lex.next().map_or(at, |t| t.at);
            channels = self.channels(kw)?;
        }
        let first_value = self.channels;
        self.channels += channels.len();
        self.joints.push(JointDecl { name, parent, offset, channels, first_value, end_site, at });
        Ok(self.joints.len() - 1)
    }

    /// A `ROOT` block and everything inside it (the keyword already read at `at`).
    fn root(&mut self, at: Position) -> Result<(), Fail> {
        let root = self.open(at, None, false, 1)?;
        let mut stack = vec![root];
        while let Some(&top) = stack.last() {
            let top_is_end = self.joints.get(top).is_some_and(|j| j.end_site);
            let t = self.lex.next();
            match t.map(|t| t.text) {
                Some("}") => {
                    stack.pop();
                }
                Some("JOINT") if !top_is_end => {
                    let at = t.map_or(at, |t| t.at);
                    let j = self.open(at, Some(top), false, stack.len() + 1)?;
                    stack.push(j);
                }
                Some("End") if !top_is_end => {
                    let at = t.map_or(at, |t| t.at);
                    self.expect("Site")?;
                    let j = self.open(at, Some(top), true, stack.len() + 1)?;
                    stack.push(j);
                }
                _ if top_is_end => return Err(self.expected("\"}\" closing the End Site", t)),
                _ => return Err(self.expected("\"JOINT\", \"End Site\" or \"}\"", t)),
            }
        }
        Ok(())
    }

    /// `MOTION`'s header: `Frames: n` and `Frame Time: t`.
    fn motion_header(&mut self) -> Result<(usize, f64, Position), Fail> {
        let frames_at = self.expect("Frames:")?.at;
        let Some(t) = self.lex.next() else { return Err(self.expected("a frame count", None)) };
        let frames: usize = t.text.parse().map_err(|_| {
            (t.at, BvhFault::BadNumber { what: "frame count".into(), token: shorten(t.text) })
        })?;
        self.expect("Frame")?;
        self.expect("Time:")?;
        let at = self.lex.peek().map_or(self.lex.here(), |t| t.at);
        let frame_time = match self.number("frame time") {
            Err((at, BvhFault::NotFinite { token, .. })) => {
                return Err((at, BvhFault::FrameTime { value: token }));
            }
            r => r?,
        };
        if frame_time <= 0.0 || !(frame_time as f32).is_normal() {
            return Err((at, BvhFault::FrameTime { value: frame_time.to_string() }));
        }
        Ok((frames, frame_time, frames_at))
    }
}

/// Parses BVH text.
pub(crate) fn parse(text: &str) -> Result<Parsed, Fail> {
    let mut p = Parser { lex: Lexer::new(text), joints: Vec::new(), channels: 0 };
    p.expect("HIERARCHY")?;
    loop {
        let t = p.lex.next();
        match t.map(|t| t.text) {
            Some("ROOT") => p.root(t.map_or(Position { line: 1, col: 1 }, |t| t.at))?,
            Some("MOTION") if !p.joints.is_empty() => break,
            _ if p.joints.is_empty() => return Err(p.expected("\"ROOT\"", t)),
            _ => return Err(p.expected("\"ROOT\" or \"MOTION\"", t)),
        }
    }
    let (frames, frame_time, frames_at) = p.motion_header()?;
    let channels = p.channels;
    let values = frames.checked_mul(channels).filter(|&v| v <= MAX_VALUES);
    let Some(count) = values else {
        return Err((frames_at, BvhFault::TooManyValues { frames, channels, limit: MAX_VALUES }));
    };
    let tracks: usize = p
        .joints
        .iter()
        .map(|j| {
            usize::from(j.channels.iter().any(|c| c.is_rotation()))
                + usize::from(j.channels.iter().any(|c| !c.is_rotation()))
        })
        .sum();
    if frames.checked_mul(tracks).is_none_or(|k| k > MAX_KEYS) {
        return Err((frames_at, BvhFault::TooManyKeys { frames, tracks, limit: MAX_KEYS }));
    }
    if ((frames.max(1) - 1) as f64 * frame_time) as f32 > f32::MAX / 2.0 {
        return Err((frames_at, BvhFault::TooLong { frames, frame_time }));
    }
    // Every value takes at least one character and one separator: a count the rest of the file
    // cannot hold is refused before anything is allocated from it.
    let rest = &text[p.lex.pos..];
    if count.saturating_mul(2) > rest.len() + 1 {
        return Err((
            frames_at,
            BvhFault::FramesPastFile {
                frames,
                channels,
                needed: count.saturating_mul(2) - 1,
                left: rest.len(),
            },
        ));
    }
    let values = frames_of(rest, Position { line: p.lex.line, col: p.lex.col }, frames, channels, count)?;
    Ok(Parsed { joints: p.joints, channels, frames, frame_time, values, frames_at })
}

/// The frames after `Frame Time:`: `rest` starts at `start` (just after the frame time), each
/// non-blank line is one frame of exactly `channels` finite numbers.
fn frames_of(
    rest: &str,
    start: Position,
    frames: usize,
    channels: usize,
    count: usize,
) -> Result<Vec<f32>, Fail> {
    let mut values = Vec::with_capacity(count);
    let mut frame = 0usize;
    let mut last_line = start.line;
    for (k, text) in rest.split('\n').enumerate() {
        let line = start.line + k;
        last_line = line;
        let first_col = if k == 0 { start.col } else { 1 };
        let col_of = |token: &str| Position {
            line,
            col: text[..token.as_ptr() as usize - text.as_ptr() as usize].chars().count() + first_col,
        };
        if k == 0 {
            // The rest of the `Frame Time:` line.
            if let Some(t) = text.split_whitespace().next() {
                return Err((
                    col_of(t),
                    BvhFault::Expected { expected: "a new line".into(), found: format!("{:?}", shorten(t)) },
                ));
            }
            continue;
        }
        let n = text.split_whitespace().count();
        if n == 0 {
            continue;
        }
        if frame == frames || channels == 0 {
            let at = Position { line, col: 1 };
            return Err((at, BvhFault::ExtraFrames { declared: frames }));
        }
        frame += 1;
        if n != channels {
            return Err((
                Position { line, col: 1 },
                BvhFault::FrameLength { frame, found: n, declared: channels },
            ));
        }
        for t in text.split_whitespace() {
            let v: f32 = t.parse().map_err(|_| {
                (col_of(t), BvhFault::BadNumber { what: format!("frame {frame}"), token: shorten(t) })
            })?;
            if !v.is_finite() {
                return Err((
                    col_of(t),
                    BvhFault::NotFinite { what: format!("frame {frame}"), token: shorten(t) },
                ));
            }
            values.push(v);
        }
    }
    if frame < frames && channels > 0 {
        return Err((
            Position { line: last_line, col: 1 },
            BvhFault::MissingFrames { declared: frames, found: frame },
        ));
    }
    Ok(values)
}
