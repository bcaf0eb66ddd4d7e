//! SPDY/3.1 framing: splitting a byte stream into data and control frames, and encoding the frames
//! a port-forward server sends (SYN_REPLY, DATA, RST_STREAM, PING, GOAWAY, WINDOW_UPDATE).
//!
//! Control frame: `1 | version(15) | type(16) | flags(8) | length(24) | payload`.
//! Data frame: `0 | stream-id(31) | flags(8) | length(24) | data`.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::SpdyError;

/// The SPDY version spoken (3, for SPDY/3.1).
pub const VERSION: u16 = 3;

/// Control frame type SYN_STREAM: opens a stream.
pub const SYN_STREAM: u16 = 1;
/// Control frame type SYN_REPLY: accepts a stream.
pub const SYN_REPLY: u16 = 2;
/// Control frame type RST_STREAM: ends a stream abnormally.
pub const RST_STREAM: u16 = 3;
/// Control frame type PING.
pub const PING: u16 = 6;
/// Control frame type GOAWAY: no new streams on the session.
pub const GOAWAY: u16 = 7;
/// Control frame type HEADERS: more headers for a stream.
pub const HEADERS: u16 = 8;
/// Control frame type WINDOW_UPDATE: flow-control credit.
pub const WINDOW_UPDATE: u16 = 9;

/// FLAG_FIN of data frames and SYN_STREAM/SYN_REPLY/HEADERS.
pub const FLAG_FIN: u8 = 0x01;

/// RST_STREAM status PROTOCOL_ERROR.
pub const PROTOCOL_ERROR: u32 = 1;

/// The largest control frame accepted (header blocks are small).
const MAX_CONTROL: usize = 1 << 20;

/// One frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A data frame.
    Data {
        /// The stream id (31 bits).
        stream: u32,
        /// The frame's flags (`FLAG_FIN`).
        flags: u8,
        /// The frame's data.
        data: Bytes,
    },
    /// A control frame.
    Control {
        /// The SPDY version (15 bits).
        version: u16,
        /// The frame type (`SYN_STREAM`, `PING`, …).
        kind: u16,
        /// The frame's flags.
        flags: u8,
        /// The payload after the 8-byte header.
        payload: Bytes,
    },
}

/// Takes one whole frame off the front of `buf`, if it holds one.
pub fn take(buf: &mut BytesMut) -> Result<Option<Frame>, SpdyError> {
    if buf.len() < 8 {
        return Ok(None);
    }
    let first = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    let flags = buf[4];
    let len = u32::from_be_bytes([0, buf[5], buf[6], buf[7]]) as usize;
    let control = first & 0x8000_0000 != 0;
    if control && len > MAX_CONTROL {
        return Err(SpdyError::Protocol(format!(
            "control frame of {len} bytes is too large"
        )));
    }
    if buf.len() < 8 + len {
        buf.reserve(8 + len - buf.len());
        return Ok(None);
    }
    let mut whole = buf.split_to(8 + len).freeze();
    whole.advance(8);
    Ok(Some(if control {
        Frame::Control {
            version: ((first >> 16) & 0x7fff) as u16,
            kind: (first & 0xffff) as u16,
            flags,
            payload: whole,
        }
    } else {
        Frame::Data {
            stream: first & 0x7fff_ffff,
            flags,
            data: whole,
        }
    }))
}

fn header(out: &mut BytesMut, word: u32, flags: u8, len: usize) {
    out.put_u32(word);
    out.put_u32((u32::from(flags) << 24) | (len as u32 & 0x00ff_ffff));
}

/// A control frame.
pub fn control(kind: u16, flags: u8, payload: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(8 + payload.len());
    header(
        &mut out,
        0x8000_0000 | (u32::from(VERSION) << 16) | u32::from(kind),
        flags,
        payload.len(),
    );
    out.put_slice(payload);
    out.freeze()
}

/// A data frame (`data` at most 16 MiB - 1).
pub fn data(stream: u32, fin: bool, data: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(8 + data.len());
    header(
        &mut out,
        stream & 0x7fff_ffff,
        if fin { FLAG_FIN } else { 0 },
        data.len(),
    );
    out.put_slice(data);
    out.freeze()
}

/// SYN_REPLY with an already compressed header block.
pub fn syn_reply(stream: u32, block: &[u8]) -> Bytes {
    let mut p = Vec::with_capacity(4 + block.len());
    p.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    p.extend_from_slice(block);
    control(SYN_REPLY, 0, &p)
}

/// RST_STREAM.
pub fn rst_stream(stream: u32, status: u32) -> Bytes {
    let mut p = [0u8; 8];
    p[..4].copy_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    p[4..].copy_from_slice(&status.to_be_bytes());
    control(RST_STREAM, 0, &p)
}

/// GOAWAY.
pub fn goaway(last_good: u32, status: u32) -> Bytes {
    let mut p = [0u8; 8];
    p[..4].copy_from_slice(&(last_good & 0x7fff_ffff).to_be_bytes());
    p[4..].copy_from_slice(&status.to_be_bytes());
    control(GOAWAY, 0, &p)
}

/// WINDOW_UPDATE (stream 0 updates the session window).
pub fn window_update(stream: u32, delta: u32) -> Bytes {
    let mut p = [0u8; 8];
    p[..4].copy_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    p[4..].copy_from_slice(&(delta & 0x7fff_ffff).to_be_bytes());
    control(WINDOW_UPDATE, 0, &p)
}

/// The fixed part of a SYN_STREAM: stream id, associated stream id and the header block.
pub fn syn_stream_parts(payload: &Bytes) -> Result<(u32, Bytes), SpdyError> {
    if payload.len() < 10 {
        return Err(SpdyError::Protocol("short SYN_STREAM".into()));
    }
    let id = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff;
    Ok((id, payload.slice(10..)))
}

/// The leading 31-bit stream id of RST_STREAM, HEADERS and WINDOW_UPDATE payloads.
pub fn stream_of(payload: &[u8]) -> Option<u32> {
    let b: [u8; 4] = payload.get(..4)?.try_into().ok()?;
    Some(u32::from_be_bytes(b) & 0x7fff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let mut buf = BytesMut::new();
        buf.put_slice(&data(5, true, b"abc"));
        buf.put_slice(&rst_stream(7, PROTOCOL_ERROR)[..6]);
        assert_eq!(
            take(&mut buf).unwrap(),
            Some(Frame::Data {
                stream: 5,
                flags: FLAG_FIN,
                data: Bytes::from_static(b"abc")
            })
        );
        assert_eq!(take(&mut buf).unwrap(), None);
        buf.put_slice(&rst_stream(7, PROTOCOL_ERROR)[6..]);
        match take(&mut buf).unwrap() {
            Some(Frame::Control {
                version,
                kind,
                payload,
                ..
            }) => {
                assert_eq!((version, kind), (3, RST_STREAM));
                assert_eq!(stream_of(&payload), Some(7));
            }
            other => panic!("{other:?}"),
        }
        assert!(buf.is_empty());
    }

    #[test]
    fn oversized_control_frames_are_refused() {
        let mut buf = BytesMut::new();
        buf.put_u32(0x8003_0001);
        buf.put_u32(0x00ff_ffff);
        assert!(take(&mut buf).is_err());
    }
}
