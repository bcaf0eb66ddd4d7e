//! Garbage collection of the build cache (`<state>/builds`, an OCI layout): after a deploy run succeeds,
//! only the images the journal's running release and live (last succeeded) release run are kept, with
//! their blobs; every other blob and the build index's rows for dropped images go. The cache only spares
//! rebuilds (an approved `deploy` takes what its unapproved run built): what it drops is built again when
//! needed, never lost from a registry.

use std::collections::BTreeSet;
use std::path::Path;

use piceli_image::Digest;
use serde_json::Value;

use super::{ImagesError, cache_dir};
use crate::journal::{Journal, JournalError};

/// What a collection kept and removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    /// Images kept in the cache.
    pub kept: usize,
    /// Blobs removed.
    pub removed: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Rows of the build index dropped.
    pub forgotten: usize,
}

/// The manifest digests the running and the live release run (the `…@sha256:…` of every `image` field
/// of their stored plans).
pub fn referenced(journal: &Journal) -> Result<BTreeSet<Digest>, JournalError> {
    let mut keep = BTreeSet::new();
    let releases = [journal.unfinished()?, journal.last_succeeded()?];
    for release in releases.into_iter().flatten() {
        let Some(json) = journal.load_plan(&release.plan_hash)? else {
            continue;
        };
        // A plan that cannot be read references nothing here; `resume` reports it.
        if let Ok(plan) = serde_json::from_str::<Value>(&json) {
            images_in(&plan["objects"], &mut keep);
        }
    }
    Ok(keep)
}

fn images_in(v: &Value, out: &mut BTreeSet<Digest>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("image", Value::String(s)) => {
                        if let Some(d) = s.rsplit_once('@').and_then(|(_, d)| Digest::parse(d).ok())
                        {
                            out.insert(d);
                        }
                    }
                    _ => images_in(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| images_in(i, out)),
        _ => {}
    }
}

/// Keeps in the build cache of `state_dir` only what [`referenced`] names; drops the rest and its index
/// rows.
pub fn collect(journal: &Journal, state_dir: &Path) -> Result<Collected, ImagesError> {
    let store = |e: JournalError| ImagesError::Store {
        path: state_dir
            .join(crate::journal::DB_FILE)
            .display()
            .to_string(),
        detail: e.to_string(),
    };
    let keep = referenced(journal).map_err(store)?;
    let retained =
        piceli_image::layout::retain(&cache_dir(state_dir), &keep).map_err(ImagesError::Image)?;
    let kept: Vec<String> = keep.iter().map(|d| d.to_string()).collect();
    let forgotten = journal.retain_builds(&kept).map_err(store)?;
    Ok(Collected {
        kept: retained.kept,
        removed: retained.removed,
        bytes: retained.bytes,
        forgotten,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_images_of_a_plan_are_found_at_any_depth_and_tags_are_ignored() {
        let plan = serde_json::json!({"objects": [
            {"spec": {"template": {"spec": {
                "containers": [{"image": format!("r/x@sha256:{}", "a".repeat(64))}],
                "initContainers": [{"image": "busybox:1.36"}]
            }}}},
            {"spec": {"jobTemplate": {"image": format!("r/y@sha256:{}", "b".repeat(64))}}}
        ]});
        let mut found = BTreeSet::new();
        images_in(&plan["objects"], &mut found);
        assert_eq!(found.len(), 2, "{found:?}");
    }
}
