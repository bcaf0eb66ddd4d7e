//! The syntax error Go's `encoding/json` reports for a body that is not JSON, worded as its scanner
//! words it (`invalid character 'n' looking for beginning of object key string`, `unexpected end of
//! JSON input`), since kube-apiserver passes that text on in its 400s.

/// What the scanner expects next.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    Value,
    ObjectKeyOrEnd,
    ObjectKey,
    Colon,
    ObjectCommaOrEnd,
    ArrayValueOrEnd,
    ArrayCommaOrEnd,
    End,
}

/// Go's `quoteChar`: the offending byte as the message shows it.
fn quote(c: u8) -> String {
    match c {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        0x20..=0x7e => format!("'{}'", c as char),
        b'\n' => "'\\n'".into(),
        b'\r' => "'\\r'".into(),
        b'\t' => "'\\t'".into(),
        // `strconv.Quote(string(rune(c)))`: control characters and bytes from 0x7f as \u escapes.
        _ => format!("'\\u{:04x}'", c),
    }
}

fn invalid(c: u8, context: &str) -> String {
    format!("invalid character {} {context}", quote(c))
}

/// The error Go's `json.Unmarshal` gives for `data`, or `None` when it is valid JSON syntax.
pub fn syntax_error(data: &[u8]) -> Option<String> {
    let mut stack: Vec<u8> = Vec::new();
    let mut want = Want::Value;
    let mut i = 0;
    let after_value = |stack: &Vec<u8>| match stack.last() {
        Some(b'{') => Want::ObjectCommaOrEnd,
        Some(_) => Want::ArrayCommaOrEnd,
        None => Want::End,
    };
    while i < data.len() {
        let c = data[i];
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
            continue;
        }
        match want {
            Want::Value | Want::ArrayValueOrEnd => {
                if want == Want::ArrayValueOrEnd && c == b']' {
                    stack.pop();
                    want = after_value(&stack);
                    i += 1;
                    continue;
                }
                match c {
                    b'{' => {
                        stack.push(b'{');
                        want = Want::ObjectKeyOrEnd;
                        i += 1;
                    }
                    b'[' => {
                        stack.push(b'[');
                        want = Want::ArrayValueOrEnd;
                        i += 1;
                    }
                    b'"' => {
                        i = string_end(data, i)?;
                        want = after_value(&stack);
                    }
                    b't' | b'f' | b'n' => {
                        let word: &[u8] = match c {
                            b't' => b"true",
                            b'f' => b"false",
                            _ => b"null",
                        };
                        for (k, expected) in word.iter().enumerate().skip(1) {
                            match data.get(i + k) {
                                None => return Some("unexpected end of JSON input".into()),
                                Some(got) if got != expected => {
                                    let name = std::str::from_utf8(word).unwrap_or_default();
                                    return Some(invalid(
                                        *got,
                                        &format!(
                                            "in literal {name} (expecting '{}')",
                                            *expected as char
                                        ),
                                    ));
                                }
                                _ => {}
                            }
                        }
                        i += word.len();
                        want = after_value(&stack);
                    }
                    b'-' | b'0'..=b'9' => {
                        i += 1;
                        while i < data.len()
                            && matches!(data[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
                        {
                            i += 1;
                        }
                        want = after_value(&stack);
                    }
                    _ => return Some(invalid(c, "looking for beginning of value")),
                }
            }
            Want::ObjectKeyOrEnd | Want::ObjectKey => {
                if want == Want::ObjectKeyOrEnd && c == b'}' {
                    stack.pop();
                    want = after_value(&stack);
                    i += 1;
                } else if c == b'"' {
                    i = string_end(data, i)?;
                    want = Want::Colon;
                } else {
                    return Some(invalid(c, "looking for beginning of object key string"));
                }
            }
            Want::Colon => {
                if c != b':' {
                    return Some(invalid(c, "after object key"));
                }
                want = Want::Value;
                i += 1;
            }
            Want::ObjectCommaOrEnd => {
                match c {
                    b',' => want = Want::ObjectKey,
                    b'}' => {
                        stack.pop();
                        want = after_value(&stack);
                    }
                    _ => return Some(invalid(c, "after object key:value pair")),
                }
                i += 1;
            }
            Want::ArrayCommaOrEnd => {
                match c {
                    b',' => want = Want::Value,
                    b']' => {
                        stack.pop();
                        want = after_value(&stack);
                    }
                    _ => return Some(invalid(c, "after array element")),
                }
                i += 1;
            }
            Want::End => return Some(invalid(c, "after top-level value")),
        }
    }
    (want != Want::End).then(|| "unexpected end of JSON input".into())
}

/// Past the closing quote of the string starting at `at`; `Err`-like `None` is never returned for a
/// missing end (that is `unexpected end of JSON input`, reported by the caller's end check).
fn string_end(data: &[u8], at: usize) -> Option<usize> {
    let mut j = at + 1;
    while j < data.len() {
        match data[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    Some(data.len())
}

/// kube-apiserver's `summarizeData`: the body as text when it starts with `{`, else in hex; at most 30
/// bytes and ` ...` after.
pub fn summary(data: &[u8]) -> String {
    let cut = &data[..data.len().min(30)];
    let more = if data.len() > 30 { " ..." } else { "" };
    match data.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(cut)),
        Some(_) => format!(
            "{}{more}",
            cut.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_go_writes_them() {
        assert_eq!(
            syntax_error(b"{not json").as_deref(),
            Some("invalid character 'n' looking for beginning of object key string")
        );
        assert_eq!(
            syntax_error(br#"{"data":"#).as_deref(),
            Some("unexpected end of JSON input")
        );
        assert_eq!(
            syntax_error(b"not json").as_deref(),
            Some("invalid character 'o' in literal null (expecting 'u')")
        );
        assert_eq!(
            syntax_error(&[0x81]).as_deref(),
            Some("invalid character '\\u0081' looking for beginning of value")
        );
        assert_eq!(syntax_error(br#"{"a":[1,2,{"b":null}]}"#), None);
        assert_eq!(summary(b"{not json"), "{not json");
    }
}
