//! `--env-file FILE`: where `from_env("VAR")` secret sources look first, then the process environment.
//!
//! The format is the dotenv one most tools read: `KEY=VALUE` per line, `#` comments and blank lines
//! ignored, an optional `export ` prefix, values optionally in single quotes (taken as written) or double
//! quotes (`\n`, `\t`, `\"` and `\\` escapes). No interpolation. A later file overrides an earlier one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::EngineError;

/// The variables of the `--env-file` files, in front of the process environment.
#[derive(Debug, Clone, Default)]
pub struct SecretEnv {
    from_files: BTreeMap<String, String>,
}

impl SecretEnv {
    /// Read the files in order (a later one overrides an earlier one).
    pub fn load(paths: &[PathBuf]) -> Result<SecretEnv, EngineError> {
        let mut from_files = BTreeMap::new();
        for path in paths {
            let text = std::fs::read_to_string(path).map_err(|e| EngineError::EnvFile {
                path: path.display().to_string(),
                line: None,
                reason: e.to_string(),
            })?;
            from_files.extend(parse(path, &text)?);
        }
        Ok(SecretEnv { from_files })
    }

    /// The value of `name`: from the files, else from the process environment.
    pub fn get(&self, name: &str) -> Option<String> {
        self.from_files
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    }
}

/// The variables of one file.
fn parse(path: &Path, text: &str) -> Result<Vec<(String, String)>, EngineError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let fail = |reason: &str| EngineError::EnvFile {
            path: path.display().to_string(),
            line: Some(i + 1),
            reason: reason.to_string(),
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(fail("expected `KEY=VALUE`"));
        };
        let key = key.trim();
        let valid_key = key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid_key {
            return Err(fail(
                "a variable name is letters, digits and `_`, not starting with a digit",
            ));
        }
        out.push((key.to_string(), unquote(value.trim()).map_err(fail)?));
    }
    Ok(out)
}

fn unquote(value: &str) -> Result<String, &'static str> {
    if let Some(rest) = value.strip_prefix('\'') {
        return rest
            .strip_suffix('\'')
            .map(str::to_string)
            .ok_or("a single-quoted value must end with `'` on the same line");
    }
    let Some(rest) = value.strip_prefix('"') else {
        // Unquoted: an inline comment starts at ` #`.
        let end = value.find(" #").unwrap_or(value.len());
        return Ok(value[..end].trim_end().to_string());
    };
    let Some(inner) = rest.strip_suffix('"') else {
        return Err("a double-quoted value must end with `\"` on the same line");
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => return Err("a value cannot end with a lone `\\`"),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(text: &str) -> Result<Vec<(String, String)>, EngineError> {
        parse(Path::new("t.env"), text)
    }

    #[test]
    fn reads_the_dotenv_forms() {
        let got = vars(
            "# comment\n\nA=plain\nexport B = spaced # note\nC='single $x \\n'\nD=\"two\\nlines \\\"q\\\"\"\nE=\n",
        )
        .expect("parses");
        let want = [
            ("A", "plain"),
            ("B", "spaced"),
            ("C", "single $x \\n"),
            ("D", "two\nlines \"q\""),
            ("E", ""),
        ];
        assert_eq!(got.len(), want.len());
        for ((k, v), (wk, wv)) in got.iter().zip(want) {
            assert_eq!((k.as_str(), v.as_str()), (wk, wv));
        }
    }

    #[test]
    fn bad_lines_name_the_file_and_line() {
        for (text, line) in [("A=1\nnot a pair\n", 2), ("1A=x", 1), ("A=\"open", 1)] {
            let err = vars(text).expect_err(text);
            assert!(
                matches!(&err, EngineError::EnvFile { line: Some(l), .. } if *l == line),
                "{err}"
            );
            assert!(
                err.to_string().starts_with(&format!("t.env:{line}: ")),
                "{err}"
            );
        }
    }

    #[test]
    fn files_come_before_the_process_environment_and_later_files_win() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (dir.path().join("a.env"), dir.path().join("b.env"));
        std::fs::write(&a, "PICELI_ENV_FILE_TEST=first\nPATH=from-file\n").expect("write");
        std::fs::write(&b, "PICELI_ENV_FILE_TEST=second\n").expect("write");
        let env = SecretEnv::load(&[a, b]).expect("load");
        assert_eq!(env.get("PICELI_ENV_FILE_TEST").as_deref(), Some("second"));
        assert_eq!(env.get("PATH").as_deref(), Some("from-file"));
        assert!(env.get("HOME").is_some() || std::env::var("HOME").is_err());
        let missing = SecretEnv::load(&[dir.path().join("none.env")]).expect_err("missing");
        assert!(missing.to_string().contains("none.env"), "{missing}");
    }
}
