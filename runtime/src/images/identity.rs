//! A build's source identity: the git commit (and whether the tree is dirty), and one digest of its
//! inputs: Cargo.lock, every file of the package's directory and of its path dependencies outside it, the
//! toolchain and the build's settings.

use std::path::{Path, PathBuf};
use std::process::Command;

use piceli_image::Digest;
use serde::{Deserialize, Serialize};

use super::ImagesError;

/// Where a build's sources are and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceIdentity {
    /// `git rev-parse HEAD` of the workspace, when it is a git checkout.
    pub commit: Option<String>,
    /// Files of the package, its path dependencies or Cargo.lock differ from the commit (allowed, and
    /// said).
    pub dirty: bool,
    /// The digest of the inputs (`sha256:…`).
    pub inputs: Digest,
    /// `rustc -V`.
    pub toolchain: String,
}

/// Directories never part of a package's sources.
const SKIPPED: &[&str] = &["target", ".git", ".piceli"];

/// What every build of one workspace shares, found once per run: its toolchain (`rustc -V` as the
/// workspace's `rust-toolchain.toml` selects it) and its git commit. An app with several `build(…)` images
/// asks for them once, not once per image (each is a process: through rustup, tens of milliseconds).
#[derive(Debug, Clone)]
pub struct Workspace {
    dir: PathBuf,
    toolchain: String,
    commit: Option<String>,
}

impl Workspace {
    /// Reads the toolchain and the commit of the workspace at `dir`.
    pub fn read(dir: &Path) -> Result<Workspace, ImagesError> {
        let toolchain = piceli_image::cargo::rustc_version(dir).map_err(ImagesError::Image)?;
        let commit = git(dir, &["rev-parse", "HEAD"]);
        Ok(Workspace {
            dir: dir.to_path_buf(),
            toolchain,
            commit,
        })
    }
}

/// The identity of building `package_dir` (with the path dependencies in `dep_dirs`) in `workspace`
/// with `settings` (package, bin, base).
pub fn identity(
    workspace: &Workspace,
    package_dir: &Path,
    dep_dirs: &[PathBuf],
    settings: &str,
) -> Result<SourceIdentity, ImagesError> {
    let toolchain = workspace.toolchain.clone();
    // (name in the listing, path): the package's files as `src/…`, dependency N's as `depN/…` (the
    // listing names no absolute path, so the same sources give the same digest on any machine).
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for (prefix, dir) in std::iter::once(("src".to_string(), package_dir)).chain(
        dep_dirs
            .iter()
            .enumerate()
            .map(|(i, d)| (format!("dep{i}"), d.as_path())),
    ) {
        let mut found = Vec::new();
        walk(dir, dir, &mut found).map_err(|e| ImagesError::Sources {
            path: dir.display().to_string(),
            detail: e.to_string(),
        })?;
        found.sort();
        files.extend(
            found
                .into_iter()
                .map(|rel| (format!("{prefix}/{}", rel.display()), dir.join(rel))),
        );
    }
    let mut listing: Vec<u8> = Vec::new();
    let mut add = |name: &str, bytes: &[u8]| {
        listing.extend_from_slice(name.as_bytes());
        listing.push(0);
        listing.extend_from_slice(Digest::of(bytes).as_str().as_bytes());
        listing.push(b'\n');
    };
    add("settings", settings.as_bytes());
    add("toolchain", toolchain.as_bytes());
    let lock = workspace.dir.join("Cargo.lock");
    add("Cargo.lock", &std::fs::read(&lock).unwrap_or_default());
    for (name, path) in &files {
        let bytes = std::fs::read(path).map_err(|e| ImagesError::Sources {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        add(name, &bytes);
    }
    let mut dirs = vec![package_dir.to_path_buf()];
    dirs.extend(dep_dirs.iter().cloned());
    Ok(SourceIdentity {
        commit: workspace.commit.clone(),
        dirty: dirty(workspace, &dirs),
        inputs: Digest::of(&listing),
        toolchain,
    })
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !SKIPPED.iter().any(|s| name == *s) {
                walk(root, &entry.path(), out)?;
            }
        } else if kind.is_file() {
            out.push(
                entry
                    .path()
                    .strip_prefix(root)
                    .unwrap_or(&entry.path())
                    .to_path_buf(),
            );
        }
    }
    Ok(())
}

/// Whether the files of `dirs` or Cargo.lock differ from the workspace's commit (always, outside git).
fn dirty(workspace: &Workspace, dirs: &[PathBuf]) -> bool {
    if workspace.commit.is_none() {
        return true;
    }
    let mut args = vec!["status".to_string(), "--porcelain".into(), "--".into()];
    args.extend(dirs.iter().map(|d| d.to_string_lossy().into_owned()));
    args.push("Cargo.lock".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    git(&workspace.dir, &args).is_none_or(|s| !s.is_empty())
}

/// The trimmed output of `git ARGS` in `dir`, when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_changes_the_inputs_digest() {
        let dir = tempfile::tempdir().expect("temp");
        std::fs::create_dir_all(dir.path().join("app/src")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("app/target")).expect("mkdir");
        std::fs::write(dir.path().join("Cargo.lock"), "lock").expect("write");
        std::fs::write(dir.path().join("app/src/main.rs"), "fn main() {}").expect("write");
        std::fs::write(dir.path().join("app/target/junk"), "1").expect("write");
        let ws = Workspace::read(dir.path()).expect("the workspace's toolchain");
        let a = identity(&ws, &dir.path().join("app"), &[], "app").expect("identity");
        std::fs::write(dir.path().join("app/target/junk"), "2").expect("write");
        assert_eq!(
            identity(&ws, &dir.path().join("app"), &[], "app").expect("identity"),
            a
        );
        std::fs::write(dir.path().join("app/src/main.rs"), "fn main() { }").expect("write");
        let b = identity(&ws, &dir.path().join("app"), &[], "app").expect("identity");
        assert_ne!(a.inputs, b.inputs);
        assert!(
            a.commit.is_none() && a.dirty,
            "not a git checkout: no commit, said dirty"
        );
        assert_ne!(
            identity(&ws, &dir.path().join("app"), &[], "other")
                .expect("identity")
                .inputs,
            b.inputs
        );
        // A path dependency outside the package is an input too.
        std::fs::create_dir_all(dir.path().join("core/src")).expect("mkdir");
        std::fs::write(dir.path().join("core/src/lib.rs"), "pub fn f() {}").expect("write");
        let deps = [dir.path().join("core")];
        let with = identity(&ws, &dir.path().join("app"), &deps, "app").expect("identity");
        assert_ne!(with.inputs, b.inputs);
        std::fs::write(dir.path().join("core/src/lib.rs"), "pub fn g() {}").expect("write");
        let changed = identity(&ws, &dir.path().join("app"), &deps, "app").expect("identity");
        assert_ne!(changed.inputs, with.inputs);
    }
}
