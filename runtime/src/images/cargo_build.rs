//! The cargo side of a build: finding a package's directory and building its binary into an image.

use std::path::{Path, PathBuf};

use piceli_core::model::ImageBuild;
use piceli_image::{DockerConfig, Image, ImageError, ImageSpec, PinnedImage};

use super::identity::SourceIdentity;
use super::{BuildOptions, ImagesError};

pub(super) async fn build_image(
    build: &ImageBuild,
    workspace: &Path,
    opts: &BuildOptions,
    identity: &SourceIdentity,
    auth: Option<&DockerConfig>,
) -> Result<Image, ImagesError> {
    let cargo = piceli_image::cargo::CargoBuild {
        dir: workspace.to_path_buf(),
        package: build.package.v.clone(),
        bin: build.bin.as_ref().map(|b| b.v.clone()),
        target_dir: opts.target_dir.clone(),
    };
    let binary = tokio::task::spawn_blocking(move || cargo.run())
        .await
        .map_err(|e| {
            ImagesError::Image(ImageError::Build {
                package: build.package.v.clone(),
                detail: e.to_string(),
            })
        })?
        .map_err(ImagesError::Image)?;
    let base = match &build.base {
        Some(b) => {
            let pinned = PinnedImage::parse(&b.v).map_err(ImagesError::Image)?;
            Some(
                piceli_image::pull_base(&pinned, auth)
                    .await
                    .map_err(ImagesError::Image)?,
            )
        }
        None => None,
    };
    let mut spec = ImageSpec::new(binary, build.bin_name());
    if build.this_app {
        // `build(self)`: the app's own binary, run as its operator.
        spec.args = vec!["serve".to_string()];
    }
    spec.revision = identity.commit.clone();
    spec.annotations.insert(
        "dev.piceli.image.inputs".into(),
        identity.inputs.to_string(),
    );
    if identity.dirty {
        spec.annotations
            .insert("dev.piceli.image.dirty".into(), "true".into());
    }
    piceli_image::assemble(&spec, base.as_ref()).map_err(ImagesError::Image)
}

/// The directory of `package` in the workspace, and the directories of its path dependencies outside it
/// (followed through the workspace's members), from `cargo metadata --no-deps`.
pub(super) fn package_dirs(
    workspace: &Path,
    package: &str,
) -> Result<(PathBuf, Vec<PathBuf>), ImagesError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(workspace)
        .output()
        .map_err(|e| ImagesError::Sources {
            path: workspace.display().to_string(),
            detail: e.to_string(),
        })?;
    let fail = |detail: String| {
        ImagesError::Image(ImageError::Build {
            package: package.to_string(),
            detail,
        })
    };
    if !out.status.success() {
        return Err(fail(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| fail(format!("cargo metadata: {e}")))?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let dir_of = |name: &str| {
        packages
            .iter()
            .find(|p| p["name"] == name)
            .and_then(|p| p["manifest_path"].as_str())
            .and_then(|m| Path::new(m).parent().map(Path::to_path_buf))
    };
    let root = dir_of(package).ok_or_else(|| {
        fail(format!(
            "the workspace at {} has no package `{package}`",
            workspace.display()
        ))
    })?;
    // Path dependencies, breadth first; a workspace member's own path dependencies are followed too.
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut queue = vec![package.to_string()];
    while let Some(name) = queue.pop() {
        let Some(p) = packages.iter().find(|p| p["name"] == name.as_str()) else {
            continue;
        };
        for dep in p["dependencies"].as_array().into_iter().flatten() {
            let Some(path) = dep["path"].as_str().map(PathBuf::from) else {
                continue;
            };
            if path.starts_with(&root) || path == root || seen.contains(&path) {
                continue;
            }
            seen.push(path);
            if let Some(dep_name) = dep["name"].as_str() {
                queue.push(dep_name.to_string());
            }
        }
    }
    seen.sort();
    Ok((root, seen))
}
