//! Go's text formatting where kube-apiserver's messages depend on it: `%q` (strconv.Quote), `%#U`, and
//! `unicode.IsPrint` (which decides, for one, whether a `fieldManager` is valid).
//!
//! `is_print` follows Go's definition (letters, marks, numbers, punctuation, symbols and the ASCII
//! space) without Unicode's tables: control, format, private-use, surrogate and separator code points
//! and the unassigned planes 3–13 (but for CJK extensions G and H) are not printable; every other code
//! point is taken as assigned.

/// Whether Go's `unicode.IsPrint` holds for `c` (see the module's note on unassigned code points).
pub fn is_print(c: char) -> bool {
    let u = c as u32;
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let format = matches!(u,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F);
    let private = matches!(u, 0xE000..=0xF8FF | 0xF0000..=0x10FFFF);
    let nonchar = (0xFDD0..=0xFDEF).contains(&u) || u & 0xFFFE == 0xFFFE;
    let unassigned_plane = (0x30000..=0xDFFFF).contains(&u) && !(0x30000..=0x323AF).contains(&u);
    let plane14 = (0xE0000..=0xEFFFF).contains(&u) && !(0xE0100..=0xE01EF).contains(&u);
    !(format || private || nonchar || unassigned_plane || plane14)
}

/// Go's `strconv.Quote` (`%q` of a string).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if is_print(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Go's `%#U` of a rune: `U+0086` and, when printable, the character quoted (`U+0041 'A'`).
pub fn rune_u(c: char) -> String {
    if is_print(c) {
        format!("U+{:04X} '{c}'", c as u32)
    } else {
        format!("U+{:04X}", c as u32)
    }
}

/// Go's `%#v` of a `[]string`.
pub fn string_slice(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| quote(v)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_as_go_does() {
        assert_eq!(quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(quote("\u{3}x\u{7f}"), r#""\x03x\x7f""#);
        assert_eq!(quote("é\u{91}"), r#""é\u0091""#);
        assert_eq!(quote("\u{b8a46}"), r#""\U000b8a46""#);
        assert_eq!(quote("日本\n"), r#""日本\n""#);
    }

    #[test]
    fn printable_as_go_decides() {
        assert!(is_print('a') && is_print(' ') && is_print('é') && is_print('𝄞'));
        assert!(!is_print('\u{86}') && !is_print('\u{a0}') && !is_print('\u{200b}'));
        assert!(!is_print('\u{f0000}') && !is_print('\u{e000}') && !is_print('\u{5fce7}'));
        assert_eq!(rune_u('\u{86}'), "U+0086");
        assert_eq!(rune_u('A'), "U+0041 'A'");
    }
}
