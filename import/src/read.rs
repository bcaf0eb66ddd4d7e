//! Reading inputs: files, directories (recursively, `.yaml`/`.yml`/`.json`), and `-` (standard input),
//! each holding multi-document YAML, a JSON object or a JSON `List`.

use crate::error::ImportError;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};

/// One object read, with where it came from (`file:line`).
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// `path:line` of the document.
    pub origin: String,
    /// The object as written.
    pub object: Value,
}

/// Read every input in order; `-` reads `stdin` (once).
pub fn read_inputs(paths: &[String], stdin: &mut dyn Read) -> Result<Vec<Source>, ImportError> {
    let mut out = Vec::new();
    for p in paths {
        if p == "-" {
            let mut text = String::new();
            stdin
                .read_to_string(&mut text)
                .map_err(|e| ImportError::Unreadable {
                    path: "-".into(),
                    message: e.to_string(),
                })?;
            out.extend(parse_text(&text, "<stdin>", None)?);
            continue;
        }
        let path = Path::new(p);
        let mut files = Vec::new();
        collect(path, &mut files)?;
        for f in files {
            let text = std::fs::read_to_string(&f).map_err(|e| ImportError::Unreadable {
                path: f.display().to_string(),
                message: e.to_string(),
            })?;
            let json = f.extension().is_some_and(|e| e == "json");
            out.extend(parse_text(&text, &f.display().to_string(), Some(json))?);
        }
    }
    Ok(out)
}

/// A path's files: itself, or a directory's manifest files in name order, recursively.
fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), ImportError> {
    let unreadable = |e: std::io::Error| ImportError::Unreadable {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(unreadable)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for e in entries {
        if e.is_dir() {
            collect(&e, out)?;
        } else if e
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| matches!(x, "yaml" | "yml" | "json"))
        {
            out.push(e);
        }
    }
    Ok(())
}

/// Parse one input's text. `json: None` guesses from the first character (JSON is also valid YAML, but
/// the JSON parser gives better positions).
pub fn parse_text(
    text: &str,
    origin: &str,
    json: Option<bool>,
) -> Result<Vec<Source>, ImportError> {
    let json = json.unwrap_or_else(|| text.trim_start().starts_with(['{', '[']));
    let parsed = match piceli_core::include::parse_objects(text, json) {
        Err(_) if json => piceli_core::include::parse_objects(text, false),
        other => other,
    };
    let objects = parsed.map_err(|e| ImportError::Malformed {
        origin: format!("{origin}:{}:{}", e.line, e.column),
        message: e.message,
    })?;
    Ok(objects
        .into_iter()
        .map(|o| Source {
            origin: format!("{origin}:{}", o.line),
            object: o.object,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_document_yaml_and_json_lists() {
        let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n";
        let got = parse_text(yaml, "x.yaml", None).unwrap_or_default();
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].origin, "x.yaml:7");
        let json = r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}]}"#;
        assert_eq!(parse_text(json, "x", None).map(|v| v.len()).ok(), Some(1));
    }

    #[test]
    fn bad_documents_name_the_place() {
        let err = parse_text("kind: [\n", "bad.yaml", None).err();
        assert!(
            matches!(err, Some(ImportError::Malformed { ref origin, .. }) if origin.starts_with("bad.yaml:"))
        );
        let err = parse_text("apiVersion: v1\nkind: ConfigMap\n", "x", None).err();
        assert!(
            matches!(err, Some(ImportError::Malformed { ref message, .. }) if message.contains("metadata.name"))
        );
    }

    #[test]
    fn missing_path_is_unreadable() {
        let err = read_inputs(&["/nonexistent/x.yaml".into()], &mut std::io::empty()).err();
        assert!(matches!(err, Some(ImportError::Unreadable { .. })));
    }
}
