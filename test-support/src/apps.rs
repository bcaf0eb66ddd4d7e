//! One target directory and one build environment for the app crates the tests build with cargo outside
//! the test's own build: the project outside the workspace (`piceli` `external_project::`), the crate
//! `piceli import --crate` writes (`piceli-bin` `import_crate::`) and the operator `build(self)` builds
//! (`self-built` `deploy`).
//!
//! Each of them depends on `piceli` and nothing else, so cargo resolves the same packages with the same
//! features for all three (the workspace-hack is in every graph). Cargo reuses a dependency's artifacts
//! in one target directory when its unit hash matches: package id, features, profile settings, mode,
//! target and rustflags. So the three build in one directory, [`target_dir`], with one profile and no
//! rustflags ([`cargo`]): the first of them compiles the dependency tree, the others compile their own
//! crate (and the piceli crates once more for the self-built operator, whose build is a workspace member's:
//! cargo hashes a path dependency's path relative to the workspace root when it lies under it).
//!
//! The profile is `release`, because `build(self)` runs `cargo build --release` (what users get), with
//! `opt-level = 0` (the binaries' speed is not under test; the local cluster runs no container) and the
//! dev profile's checks (`debug-assertions`, `overflow-checks`), so the two crates a user would build with
//! `cargo build` keep the checks a dev build has. Cargo's own lock on the directory serialises builds that
//! run at the same time.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The shared target directory under the running test's `CARGO_TARGET_TMPDIR` (pass
/// `Path::new(env!("CARGO_TARGET_TMPDIR"))`): `<target-dir>/tmp/apps`, for any `CARGO_TARGET_DIR`.
pub fn target_dir(target_tmpdir: &Path) -> PathBuf {
    target_tmpdir.join("apps")
}

/// Where a binary `name` built with [`cargo`] lands.
pub fn binary(target_tmpdir: &Path, name: &str) -> PathBuf {
    target_dir(target_tmpdir).join("release").join(name)
}

/// The profile every app build uses, as cargo's environment overrides of `[profile.release]`.
/// The workspace's and an operator crate's thin LTO is off: it would only lengthen the link of unoptimised code.
pub const PROFILE: [(&str, &str); 6] = [
    ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0"),
    ("CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS", "true"),
    ("CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS", "true"),
    ("CARGO_PROFILE_RELEASE_LTO", "off"),
    ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16"),
    ("CARGO_INCREMENTAL", "0"),
];

/// Flags of the outer build that would change the units' hashes if one app build saw them and another
/// did not: none of them reaches an app build.
pub const REMOVED: [&str; 4] = [
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_BUILD_TARGET",
];

/// Points `cmd` (a `cargo build --release …`, or a program that runs one, such as an app's `deploy` with
/// `build(self)`) at the shared directory with the shared profile.
pub fn cargo<'a>(cmd: &'a mut Command, target_tmpdir: &Path) -> &'a mut Command {
    cmd.env("CARGO_TARGET_DIR", target_dir(target_tmpdir));
    for (key, value) in PROFILE {
        cmd.env(key, value);
    }
    for key in REMOVED {
        cmd.env_remove(key);
    }
    cmd
}

/// `$CARGO` (the cargo running the tests) or `cargo`, with [`cargo`]'s environment, in `dir`:
/// `build --release` and the given arguments.
pub fn cargo_build(dir: &Path, target_tmpdir: &Path, args: &[&str]) -> Command {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| OsStr::new("cargo").to_owned());
    let mut cmd = Command::new(program);
    cmd.current_dir(dir).args(["build", "--release"]).args(args);
    cargo(&mut cmd, target_tmpdir);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_build_gets_the_directory_the_profile_and_no_rustflags() {
        let tmp = Path::new("/t/tmp");
        let cmd = cargo_build(Path::new("/app"), tmp, &["--offline"]);
        let envs: Vec<(String, Option<String>)> = cmd
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        assert!(envs.contains(&("CARGO_TARGET_DIR".into(), Some("/t/tmp/apps".into()))));
        assert!(envs.contains(&("CARGO_PROFILE_RELEASE_OPT_LEVEL".into(), Some("0".into()))));
        assert!(envs.contains(&("RUSTFLAGS".into(), None)));
        let args: Vec<_> = cmd.get_args().collect();
        assert_eq!(args, ["build", "--release", "--offline"]);
        assert_eq!(binary(tmp, "shop"), Path::new("/t/tmp/apps/release/shop"));
    }
}
