//! The shared libraries a binary links, as the build host resolves them (`ldd`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::ImageError;

/// The absolute paths of the libraries (and the dynamic loader) `binary` needs, sorted; empty for a static
/// binary. `linux-vdso` and other kernel-provided objects are left out.
pub fn shared_libraries(binary: &Path) -> Result<Vec<PathBuf>, ImageError> {
    let out = Command::new("ldd")
        .arg(binary)
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| {
            ImageError::assemble(format!("cannot run ldd on {}: {e}", binary.display()))
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let text = format!("{stdout}{stderr}");
    if text.contains("not a dynamic executable") || text.contains("statically linked") {
        return Ok(Vec::new());
    }
    if !out.status.success() {
        return Err(ImageError::assemble(format!(
            "ldd {} failed: {}",
            binary.display(),
            text.trim()
        )));
    }
    parse_ldd(&stdout)
}

/// Reads `ldd`'s lines: `libc.so.6 => /lib/…/libc.so.6 (0x…)`, `/lib64/ld-linux-x86-64.so.2 (0x…)`,
/// `linux-vdso.so.1 (0x…)`.
pub fn parse_ldd(text: &str) -> Result<Vec<PathBuf>, ImageError> {
    let mut found = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let path = match line.split_once("=>") {
            Some((name, rest)) => {
                let rest = rest.trim();
                if rest.starts_with("not found") {
                    return Err(ImageError::assemble(format!(
                        "the build host has no `{}` that the binary links",
                        name.trim()
                    )));
                }
                rest.split_whitespace().next().unwrap_or_default()
            }
            None => line.split_whitespace().next().unwrap_or_default(),
        };
        if path.starts_with('/') {
            found.push(PathBuf::from(path));
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_lines_give_the_library_paths() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                    \tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f1)\n\
                    \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f3)\n";
        let libs = parse_ldd(text).expect("parse");
        assert_eq!(
            libs,
            [
                PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6"),
                PathBuf::from("/lib/x86_64-linux-gnu/libgcc_s.so.1"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2"),
            ]
        );
    }

    #[test]
    fn a_missing_library_is_an_error() {
        let err = parse_ldd("\tlibfoo.so.1 => not found\n").expect_err("missing");
        assert!(err.to_string().contains("libfoo.so.1"), "{err}");
    }
}
