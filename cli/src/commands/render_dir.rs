//! `render --out DIR`: one YAML file per object, named `NN-kind-name.yaml` in apply order, and a
//! `kustomization.yaml` listing them (for Argo CD or Flux). Deterministic; never contacts a cluster.

use piceli_core::Code;
use piceli_runtime::render;
use serde_json::Value;
use std::path::Path;

use crate::prelude::Failure;

/// The file kustomize reads.
pub const KUSTOMIZATION: &str = "kustomization.yaml";

/// Whether `--out PATH` names a directory: one that exists, or a path written with a trailing `/`.
pub fn is_dir(path: &Path) -> bool {
    path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/')
}

/// The file name of the object at `index` of `count`: `03-deployment-api.yaml` (the number as wide as
/// the largest one, at least two digits, so names sort in apply order).
pub fn file_name(index: usize, count: usize, object: &Value) -> String {
    let width = count.saturating_sub(1).to_string().len().max(2);
    let kind = object["kind"].as_str().unwrap_or("object").to_lowercase();
    let name = object["metadata"]["name"].as_str().unwrap_or("unnamed");
    // Names are DNS subdomains (or, for RBAC, may hold `:`): keep the file name portable.
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{index:0width$}-{kind}-{name}.yaml")
}

/// The `kustomization.yaml` listing `files` in order (`sortOptions: fifo` keeps that order, kustomize 5).
pub fn kustomization(files: &[String]) -> String {
    let mut text = String::from(
        "# Written by `piceli render --out`: the app's objects in apply order.\n\
         apiVersion: kustomize.config.k8s.io/v1beta1\n\
         kind: Kustomization\n\
         sortOptions:\n  order: fifo\n\
         resources:\n",
    );
    for f in files {
        text.push_str("- ");
        text.push_str(f);
        text.push('\n');
    }
    text
}

/// Write `objects` into `dir` (created if missing): one file each and the kustomization. Files of an
/// earlier render (`NN-….yaml`) no longer rendered are removed, so the directory holds exactly this
/// render; other files are left alone. Returns the objects' file names in order.
pub fn write(objects: &[Value], dir: &Path) -> Result<Vec<String>, Failure> {
    let fail = |what: &Path, e: std::io::Error| {
        Failure::new(
            Code::OutputFailed,
            format!("cannot write {}: {e}", what.display()),
            "check the directory's path and permissions, and free space".into(),
        )
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(dir, e))?;
    let mut files = Vec::with_capacity(objects.len());
    for (i, o) in objects.iter().enumerate() {
        let name = file_name(i, objects.len(), o);
        let text = render::to_yaml(std::slice::from_ref(o))?;
        let path = dir.join(&name);
        std::fs::write(&path, text.as_bytes()).map_err(|e| fail(&path, e))?;
        files.push(name);
    }
    let path = dir.join(KUSTOMIZATION);
    std::fs::write(&path, kustomization(&files)).map_err(|e| fail(&path, e))?;
    for entry in std::fs::read_dir(dir).map_err(|e| fail(dir, e))? {
        let entry = entry.map_err(|e| fail(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_rendered(&name) && !files.contains(&name) {
            std::fs::remove_file(entry.path()).map_err(|e| fail(&entry.path(), e))?;
        }
    }
    Ok(files)
}

/// Whether a file name is one `write` makes: digits, `-`, and `.yaml`.
fn is_rendered(name: &str) -> bool {
    let Some((number, rest)) = name.split_once('-') else {
        return false;
    };
    !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) && rest.ends_with(".yaml")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn file_names_sort_in_apply_order() {
        let o = json!({ "kind": "ClusterRoleBinding", "metadata": { "name": "system:shop" } });
        assert_eq!(
            file_name(3, 12, &o),
            "03-clusterrolebinding-system_shop.yaml"
        );
        assert_eq!(
            file_name(7, 150, &o),
            "007-clusterrolebinding-system_shop.yaml"
        );
    }

    #[test]
    fn only_rendered_files_are_recognised() {
        assert!(is_rendered("03-deployment-api.yaml"));
        assert!(!is_rendered("kustomization.yaml"));
        assert!(!is_rendered("my-notes.yaml"));
        assert!(!is_rendered("03-deployment-api.yml"));
    }

    #[test]
    fn the_kustomization_lists_files_in_order() {
        let text = kustomization(&[
            "00-namespace-shop.yaml".into(),
            "01-service-api.yaml".into(),
        ]);
        assert!(text.ends_with("resources:\n- 00-namespace-shop.yaml\n- 01-service-api.yaml\n"));
        assert!(text.contains("order: fifo"));
    }
}
