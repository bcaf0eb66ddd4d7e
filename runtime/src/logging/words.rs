//! An error in words for a log line: its `Display`, without the `Debug` dumps some errors append (kube's
//! API errors print `ApiError: MESSAGE: REASON (Status { status: …, code: 403, … })`).

use std::fmt::Display;

/// `e`'s message with every parenthesised `Debug` dump of a struct (` (Name { … })`) left out.
pub fn words(e: &(impl Display + ?Sized)) -> String {
    let text = e.to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(" (") {
        let after = &rest[at + 2..];
        match dump_len(after) {
            Some(len) => {
                out.push_str(&rest[..at]);
                rest = &after[len..];
            }
            None => {
                out.push_str(&rest[..at + 2]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The length of `Name { … })` at the start of `s` (through the closing parenthesis), when it is one.
fn dump_len(s: &str) -> Option<usize> {
    let name = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    let first = s.chars().next()?;
    if name == 0 || !first.is_ascii_uppercase() || !s[name..].starts_with(" {") {
        return None;
    }
    // Nesting of (), {} and [] outside string literals; the dump ends at the `)` that closes ours.
    let mut depth = 1usize;
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if quoted {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '(' | '{' | '[' => depth += 1,
            ')' | '}' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return (c == ')').then_some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kube_api_error_is_its_message() {
        let status = kube::core::Status::failure(
            "configmaps \"x\" is forbidden: User \"system:serviceaccount:a:b\" cannot create (resource \"configmaps\") {sic}",
            "Forbidden",
        )
        .with_code(403);
        let e = kube::Error::Api(Box::new(status));
        assert!(
            e.to_string().contains("Status {"),
            "kube's own Display: {e}"
        );
        assert_eq!(
            words(&e),
            "ApiError: configmaps \"x\" is forbidden: User \"system:serviceaccount:a:b\" cannot create (resource \"configmaps\") {sic}: Forbidden"
        );
        let wrapped = format!("reconciling: {e} (after 2 attempts)");
        assert!(
            words(&wrapped).ends_with(": Forbidden (after 2 attempts)"),
            "{}",
            words(&wrapped)
        );
    }

    #[test]
    fn plain_parentheses_stay() {
        for text in [
            "a (b) c",
            "retry (Later { x",
            "end (",
            "x (Y {}",
            "(Z { a: 1 })",
        ] {
            assert_eq!(words(text), text);
        }
    }
}
