//! How the YAML emitter ([`super::yaml`]) writes one string: plain when every YAML 1.1 and 1.2 reader
//! reads it back as this string, a literal block for multi-line text, else double-quoted.

use super::yaml::pad;
use std::fmt::Write as _;

/// Byte classes for plain scalars, as bit flags (OR-ed over a string in one pass).
const BAD: u8 = 1; // never in a plain scalar (also every non-ASCII byte)
const SPACE: u8 = 2;
const NOT_NUMERIC: u8 = 4; // not in [0-9_.:eE+-]
const DIGIT: u8 = 8;
const DOT: u8 = 16;
const CLASS: [u8; 256] = {
    let mut t = [BAD | NOT_NUMERIC; 256];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = match b {
            b'0'..=b'9' => DIGIT,
            b'.' => DOT,
            b'_' | b':' | b'e' | b'E' | b'+' | b'-' => 0,
            b'a'..=b'z' | b'A'..=b'Z' | b'/' | b'@' | b'=' | b'~' | b',' => NOT_NUMERIC,
            b' ' => SPACE | NOT_NUMERIC,
            _ => BAD | NOT_NUMERIC,
        };
        c += 1;
    }
    t
};

/// Whether `s` can be written as a plain scalar that every YAML 1.1 and 1.2 reader resolves to this string,
/// in block context (keys and values alike). Allowed: ASCII letters and digits, `-._/:@=+~,` and inner spaces.
pub(super) fn is_plain_safe(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false; // empty: null
    };
    // First character: no indicator (`-` only as `-x`, for flags such as `--port=80`), no space.
    match first {
        b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'/' | b'_' | b'+' => {}
        b'-' if b.len() > 1 && b[1] != b' ' => {}
        _ => return false,
    }
    if last == b' ' || last == b':' || b.starts_with(b"---") || b.starts_with(b"...") {
        return false;
    }
    let class = b.iter().fold(0, |acc, &c| acc | CLASS[c as usize]);
    if class & BAD != 0 || (class & SPACE != 0 && b.windows(2).any(|w| w == b": ")) {
        return false; // `: ` would end a key
    }
    if class & NOT_NUMERIC == 0 {
        // Only `[0-9_.:eE+-]`: ints, floats, sexagesimals, dates, versions such as `1.2.3` if there is a digit;
        // with a point but no digit, still a float to the YAML 1.1 regular expression (`.`, `+.`, `._`).
        return class & (DIGIT | DOT) == 0;
    }
    !is_special_word(b) && !looks_numeric(b)
}

/// Booleans and nulls of YAML 1.1 and 1.2, in any case.
fn is_special_word(b: &[u8]) -> bool {
    const WORDS: [&[u8]; 10] = [
        b"y", b"n", b"yes", b"no", b"on", b"off", b"true", b"false", b"null", b"~",
    ];
    b.len() <= 5 && WORDS.iter().any(|w| w.eq_ignore_ascii_case(b))
}

/// The numbers and timestamps that contain other characters than `[0-9_.:eE+-]` (strings made only of those and a
/// digit are all quoted by `is_plain_safe`): ints with a base prefix, timestamps, `.inf` and `.nan` in any case.
fn looks_numeric(b: &[u8]) -> bool {
    let r = match b {
        [b'+' | b'-', rest @ ..] => rest,
        _ => b,
    };
    // 0x.., 0o.., 0b.. (any case)
    if let [b'0', p, ..] = r
        && matches!(p | 0x20, b'x' | b'o' | b'b')
    {
        return true;
    }
    // Dates and timestamps: 2024-01-01T00:00:00Z, 2001-12-14 21:59:43.10 -5.
    if b.len() >= 5 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' {
        return true;
    }
    // .inf, -.Inf, .NaN, and (for readers that accept them) inf, infinity, nan.
    let r = r.strip_prefix(b".").unwrap_or(r);
    [&b"inf"[..], b"infinity", b"nan"]
        .iter()
        .any(|w| w.eq_ignore_ascii_case(r))
}

/// Characters that are never written raw: control characters (C0, DEL, C1 including NEL), the Unicode line and
/// paragraph separators (line breaks to YAML 1.1), the BOM and the non-characters YAML does not allow.
pub(super) fn is_unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
}

/// Whether `s` can be a literal block, and if so whether it needs an indentation indicator (its first non-empty
/// line starts with a space). Requires a line break, some content, no other control characters, and no trailing
/// spaces on any line (editors and some tools strip them).
pub(super) fn literal_style(s: &str) -> Option<bool> {
    if !s.contains('\n') {
        return None;
    }
    let mut prev = '\n';
    let mut content = false;
    for c in s.chars() {
        if c == '\n' {
            if prev == ' ' {
                return None;
            }
        } else if is_unprintable(c) {
            return None;
        } else {
            content = true;
        }
        prev = c;
    }
    if !content || prev == ' ' {
        return None;
    }
    Some(s.trim_start_matches('\n').starts_with(' '))
}

/// A literal block: header (`|`, chomping, optional indicator) and the lines at `content_indent`.
/// Written without a trailing newline after the last line's own (the caller's line ends inside).
pub(super) fn write_literal(out: &mut String, s: &str, content_indent: usize, indicator: bool) {
    out.push('|');
    if indicator {
        // Relative to the parent node's indentation, which is `content_indent - 2`.
        out.push('2');
    }
    let body = match s.strip_suffix('\n') {
        None => {
            out.push('-'); // strip: no final line break
            s
        }
        Some(body) if body.ends_with('\n') => {
            out.push('+'); // keep: the trailing empty lines are content
            body
        }
        Some(body) => body, // clip: exactly one final line break
    };
    out.push('\n');
    for line in body.split('\n') {
        if !line.is_empty() {
            pad(out, content_indent);
            out.push_str(line);
        }
        out.push('\n');
    }
}

/// A double-quoted scalar with JSON-compatible escapes.
pub(super) fn write_quoted(out: &mut String, s: &str) {
    out.push('"');
    let b = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            let escape = match c {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\t' => "\\t",
                b'\r' => "\\r",
                0x08 => "\\b",
                0x0c => "\\f",
                0x00..=0x1f | 0x7f => "",
                _ => {
                    i += 1;
                    continue;
                }
            };
            out.push_str(&s[start..i]);
            if escape.is_empty() {
                let _ = write!(out, "\\u{c:04X}");
            } else {
                out.push_str(escape);
            }
            i += 1;
            start = i;
        } else {
            let ch = s[i..].chars().next().unwrap_or_default();
            let len = ch.len_utf8();
            if is_unprintable(ch) {
                out.push_str(&s[start..i]);
                let _ = write!(out, "\\u{:04X}", ch as u32);
                start = i + len;
            }
            i += len;
        }
    }
    out.push_str(&s[start..]);
    out.push('"');
}
