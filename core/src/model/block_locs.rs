//! A block's locations as one short string (model format 4, `block_serde.rs`).
//!
//! The locations are written in the order the block's JSON is walked, each as the difference from the
//! one before (the macro numbers a block's locations in that same order, so the difference is nearly
//! always 1), zigzag-encoded so that a step back stays small. A value's number also carries one bit: set
//! when the value is JSON from a Rust expression. Each number is written in groups of 5 bits, lowest first:
//! every group but the last as one of `A`–`Z`, `w`–`z`, `-`, `_`, the last as one of `0`–`9`, `a`–`v`.
//! No character needs escaping in JSON, so the string is read in place; a location stepping by 1 is one
//! character.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

use crate::spanned::Loc;

/// The last group of a number.
const LAST: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
/// Any other group.
const MORE: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZwxyz-_";

/// Writes a block's locations.
#[derive(Debug, Default)]
pub(super) struct Writer {
    text: String,
    prev: i64,
}

impl Writer {
    /// A location that is not a value's (the block's braces, a key).
    pub(super) fn plain(&mut self, at: Loc) {
        let zz = self.step(at);
        self.number(zz);
    }

    /// A value's location, and whether the value is a Rust expression's JSON.
    pub(super) fn value(&mut self, at: Loc, json: bool) {
        let zz = self.step(at);
        self.number(zz << 1 | u64::from(json));
    }

    /// The string so far.
    pub(super) fn as_str(&self) -> &str {
        &self.text
    }

    fn step(&mut self, at: Loc) -> u64 {
        let now = i64::from(at.0);
        let delta = now - self.prev;
        self.prev = now;
        ((delta << 1) ^ (delta >> 63)) as u64
    }

    fn number(&mut self, mut n: u64) {
        while n >= 32 {
            self.text.push(MORE[(n & 31) as usize] as char);
            n >>= 5;
        }
        self.text.push(LAST[n as usize] as char);
    }
}

/// Why a block's locations could not be read.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct LocsError(&'static str);

impl fmt::Display for LocsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a block's locations: {}", self.0)
    }
}

/// Reads a block's locations back, in the order they were written.
#[derive(Debug)]
pub(super) struct Reader<'de> {
    text: Cow<'de, str>,
    pos: usize,
    prev: i64,
}

impl Reader<'_> {
    /// A location written by [`Writer::plain`].
    pub(super) fn plain(&mut self) -> Result<Loc, LocsError> {
        let zz = self.number()?;
        self.step(zz)
    }

    /// A location written by [`Writer::value`], and whether the value is JSON.
    pub(super) fn value(&mut self) -> Result<(Loc, bool), LocsError> {
        let n = self.number()?;
        Ok((self.step(n >> 1)?, n & 1 == 1))
    }

    /// Whether every location has been read.
    pub(super) fn is_done(&self) -> bool {
        self.pos == self.text.len()
    }

    fn step(&mut self, zz: u64) -> Result<Loc, LocsError> {
        let delta = (zz >> 1) as i64 ^ -((zz & 1) as i64);
        let now = self
            .prev
            .checked_add(delta)
            .ok_or(LocsError("a location out of range"))?;
        let loc = u32::try_from(now).map_err(|_| LocsError("a location out of range"))?;
        self.prev = now;
        Ok(Loc(loc))
    }

    fn number(&mut self) -> Result<u64, LocsError> {
        let bytes = self.text.as_bytes();
        let mut n = 0u64;
        let mut shift = 0u32;
        loop {
            let Some(&c) = bytes.get(self.pos) else {
                return Err(LocsError("fewer locations than values"));
            };
            self.pos += 1;
            if shift > 35 {
                return Err(LocsError("a number too long"));
            }
            let (group, last) = match c {
                b'0'..=b'9' => (c - b'0', true),
                b'a'..=b'v' => (c - b'a' + 10, true),
                b'A'..=b'Z' => (c - b'A', false),
                b'w'..=b'z' => (c - b'w' + 26, false),
                b'-' => (30, false),
                b'_' => (31, false),
                _ => return Err(LocsError("an unexpected character")),
            };
            n |= u64::from(group) << shift;
            if last {
                return Ok(n);
            }
            shift += 5;
        }
    }
}

impl<'de> Deserialize<'de> for Reader<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(ReaderVisitor)
    }
}

struct ReaderVisitor;

impl<'de> Visitor<'de> for ReaderVisitor {
    type Value = Reader<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a block's locations as a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Reader<'de>, E> {
        Ok(Reader::new(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Reader<'de>, E> {
        Ok(Reader::new(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Reader<'de>, E> {
        Ok(Reader::new(Cow::Owned(v)))
    }
}

impl<'de> Reader<'de> {
    /// A reader of `text` from its start.
    pub(super) fn borrowed(text: &'de str) -> Self {
        Reader::new(Cow::Borrowed(text))
    }

    /// The whole text read (as an owned string).
    pub(super) fn into_text(self) -> Box<str> {
        self.text.into_owned().into_boxed_str()
    }

    fn new(text: Cow<'de, str>) -> Self {
        Reader {
            text,
            pos: 0,
            prev: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_round_trip_small_steps_are_one_character() {
        let locs = [3, 4, 5, 6, 2, 40_000, u32::MAX, 0, 7];
        let mut w = Writer::default();
        w.plain(Loc(locs[0]));
        for (i, l) in locs[1..].iter().enumerate() {
            w.value(Loc(*l), i % 2 == 0);
        }
        assert!(w.as_str().starts_with("654"), "{}", w.as_str());
        let mut r = Reader::new(Cow::Borrowed(w.as_str()));
        assert_eq!(r.plain(), Ok(Loc(3)));
        for (i, l) in locs[1..].iter().enumerate() {
            assert_eq!(r.value(), Ok((Loc(*l), i % 2 == 0)));
        }
        assert!(r.is_done());
        assert!(r.plain().is_err());
    }

    #[test]
    fn malformed_locations_are_errors() {
        for bad in ["A", "\"", "_____________0", "1"] {
            let mut r = Reader::new(Cow::Borrowed(bad));
            assert!(r.plain().and_then(|_| r.plain()).is_err(), "{bad}");
        }
        // Stepping below 0 or past u32::MAX.
        let mut r = Reader::new(Cow::Borrowed("1"));
        assert!(r.plain().is_err());
    }
}
