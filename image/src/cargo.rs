//! Builds a package's binary with cargo (release, `--locked`) and finds the executable it made.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::ImageError;

/// What to build.
#[derive(Debug, Clone)]
pub struct CargoBuild {
    /// The workspace (or package) directory cargo runs in.
    pub dir: PathBuf,
    /// `-p PACKAGE`.
    pub package: String,
    /// `--bin BIN` (the package's name when not given).
    pub bin: Option<String>,
    /// `--target-dir`; cargo's default when `None`.
    pub target_dir: Option<PathBuf>,
}

impl CargoBuild {
    /// The binary's name.
    pub fn bin_name(&self) -> &str {
        self.bin.as_deref().unwrap_or(&self.package)
    }

    /// Runs `cargo build --release --locked -p PACKAGE --bin BIN` and returns the executable's path.
    /// Cargo's own diagnostics go to stderr as usual.
    pub fn run(&self) -> Result<PathBuf, ImageError> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(&self.dir)
            .args([
                "build",
                "--release",
                "--locked",
                "--message-format=json-render-diagnostics",
                "-p",
            ])
            .arg(&self.package)
            .arg("--bin")
            .arg(self.bin_name())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(dir) = &self.target_dir {
            cmd.arg("--target-dir").arg(dir);
        }
        let fail = |detail: String| ImageError::Build {
            package: self.package.clone(),
            detail,
        };
        let out = cmd
            .output()
            .map_err(|e| fail(format!("cannot run cargo: {e}")))?;
        if !out.status.success() {
            return Err(fail(format!(
                "cargo build exited with {} (its errors are above)",
                out.status
            )));
        }
        executable(&String::from_utf8_lossy(&out.stdout), self.bin_name())
            .ok_or_else(|| fail(format!("cargo built no binary named `{}`", self.bin_name())))
    }
}

/// The `executable` of the `compiler-artifact` message for binary `bin`.
fn executable(messages: &str, bin: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == bin)
        .filter(|m| {
            m["target"]["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "bin"))
        })
        .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
        .next_back()
}

/// The toolchain cargo uses here (`rustc -V`), part of a build's identity.
pub fn rustc_version(dir: &Path) -> Result<String, ImageError> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .arg("-V")
        .current_dir(dir)
        .output()
        .map_err(|e| ImageError::Build {
            package: String::new(),
            detail: format!("cannot run rustc -V: {e}"),
        })?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bin_artifact_is_found_among_cargo_messages() {
        let messages = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"dep","kind":["lib"]},"executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"name":"app","kind":["bin"]},"executable":"/t/release/app"}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#
        );
        assert_eq!(
            executable(messages, "app"),
            Some(PathBuf::from("/t/release/app"))
        );
        assert_eq!(executable(messages, "other"), None);
    }
}
