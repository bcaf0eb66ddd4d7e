//! SPDY/3 name/value header blocks: `count(32) | (len(32) name len(32) value)*`, compressed with
//! zlib and the dictionary the SPDY/3 draft defines (§2.6.10.1). Each direction of a session has one
//! compression context for all its blocks; each block ends with a sync flush.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress};

use super::SpdyError;

/// The length-prefixed words that open the SPDY/3 dictionary.
const WORDS: &[&str] = &[
    "options",
    "head",
    "post",
    "put",
    "delete",
    "trace",
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "connection",
    "content-base",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-md5",
    "content-range",
    "content-type",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "location",
    "max-forwards",
    "pragma",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "retry-after",
    "server",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
    "via",
    "warning",
    "www-authenticate",
    "method",
    "get",
    "status",
    "200 OK",
    "version",
    "HTTP/1.1",
    "url",
    "public",
    "set-cookie",
    "keep-alive",
    "origin",
];

/// The plain text that closes the SPDY/3 dictionary.
const TAIL: &[&str] = &[
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505",
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized",
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable",
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT",
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,",
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.",
];

/// The SPDY/3 header compression dictionary.
pub fn dictionary() -> Vec<u8> {
    let mut d = Vec::with_capacity(1500);
    for w in WORDS {
        d.extend_from_slice(&(w.len() as u32).to_be_bytes());
        d.extend_from_slice(w.as_bytes());
    }
    for t in TAIL {
        d.extend_from_slice(t.as_bytes());
    }
    d
}

/// The largest decompressed header block accepted.
const MAX_BLOCK: usize = 256 * 1024;

/// Decompresses the header blocks one peer sends.
pub struct Decoder {
    z: Decompress,
    dict: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            z: Decompress::new(true),
            dict: dictionary(),
        }
    }
}

impl Decoder {
    /// Decodes one compressed block into (lower-case name, value) pairs.
    pub fn decode(&mut self, input: &[u8]) -> Result<Vec<(String, String)>, SpdyError> {
        let mut out: Vec<u8> = Vec::with_capacity(input.len() * 4 + 256);
        let mut pos = 0;
        loop {
            if out.capacity() - out.len() < 256 {
                out.reserve(out.capacity().max(1024));
            }
            if out.len() > MAX_BLOCK {
                return Err(SpdyError::Compression("header block too large".into()));
            }
            let (in0, out0) = (self.z.total_in(), out.len());
            let res = self
                .z
                .decompress_vec(&input[pos..], &mut out, FlushDecompress::Sync);
            pos += (self.z.total_in() - in0) as usize;
            match res {
                Ok(_) => {
                    if pos >= input.len() && out.len() < out.capacity() {
                        break;
                    }
                    if self.z.total_in() == in0 && out.len() == out0 {
                        return Err(SpdyError::Compression("header block stalled".into()));
                    }
                }
                Err(e) if e.needs_dictionary().is_some() => {
                    self.z
                        .set_dictionary(&self.dict)
                        .map_err(|e| SpdyError::Compression(format!("dictionary: {e}")))?;
                }
                Err(e) => return Err(SpdyError::Compression(e.to_string())),
            }
        }
        parse(&out)
    }
}

fn parse(raw: &[u8]) -> Result<Vec<(String, String)>, SpdyError> {
    let bad = || SpdyError::Protocol("malformed header block".into());
    let mut rest = raw;
    let u32_of = |rest: &mut &[u8]| -> Result<usize, SpdyError> {
        let (n, r) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
        *rest = r;
        Ok(u32::from_be_bytes(*n) as usize)
    };
    let count = u32_of(&mut rest)?;
    let mut pairs = Vec::with_capacity(count.min(64));
    for _ in 0..count {
        let n = u32_of(&mut rest)?;
        let (name, r) = rest.split_at_checked(n).ok_or_else(bad)?;
        rest = r;
        let n = u32_of(&mut rest)?;
        let (value, r) = rest.split_at_checked(n).ok_or_else(bad)?;
        rest = r;
        pairs.push((
            String::from_utf8_lossy(name).to_ascii_lowercase(),
            String::from_utf8_lossy(value).into_owned(),
        ));
    }
    Ok(pairs)
}

/// Compresses the header blocks this side sends.
pub struct Encoder {
    z: Compress,
}

impl Encoder {
    /// An encoder primed with the SPDY/3 header dictionary.
    pub fn new() -> Result<Encoder, SpdyError> {
        let mut z = Compress::new(Compression::default(), true);
        z.set_dictionary(&dictionary())
            .map_err(|e| SpdyError::Compression(format!("dictionary: {e}")))?;
        Ok(Encoder { z })
    }

    /// One compressed block of `pairs`.
    pub fn encode(&mut self, pairs: &[(&str, &str)]) -> Result<Vec<u8>, SpdyError> {
        let mut raw = Vec::new();
        raw.extend_from_slice(&(pairs.len() as u32).to_be_bytes());
        for (k, v) in pairs {
            for s in [k, v] {
                raw.extend_from_slice(&(s.len() as u32).to_be_bytes());
                raw.extend_from_slice(s.as_bytes());
            }
        }
        let mut out = Vec::with_capacity(raw.len() + 64);
        let mut pos = 0;
        loop {
            if out.capacity() - out.len() < 64 {
                out.reserve(256);
            }
            let in0 = self.z.total_in();
            self.z
                .compress_vec(&raw[pos..], &mut out, FlushCompress::Sync)
                .map_err(|e| SpdyError::Compression(e.to_string()))?;
            pos += (self.z.total_in() - in0) as usize;
            if pos >= raw.len() && out.len() < out.capacity() {
                return Ok(out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dictionary_has_the_draft_size() {
        // 1423 bytes, as the SPDY/3 draft's dictionary.
        assert_eq!(dictionary().len(), 1423);
    }

    #[test]
    fn blocks_round_trip_through_one_context_each_way() {
        let mut enc = Encoder::new().unwrap();
        let mut dec = Decoder::default();
        for i in 0..3 {
            let port = format!("{}", 8000 + i);
            let block = enc
                .encode(&[("streamtype", "data"), ("port", &port), ("requestid", "0")])
                .unwrap();
            let pairs = dec.decode(&block).unwrap();
            assert_eq!(pairs[1], ("port".to_string(), port));
        }
        let empty = enc.encode(&[]).unwrap();
        assert!(dec.decode(&empty).unwrap().is_empty());
        assert!(dec.decode(b"\x00garbage").is_err());
    }
}
