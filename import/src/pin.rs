//! `--pin`: the images not pinned by digest, and rewriting them once a registry named their digests. The
//! registry calls are the caller's (the `piceli` binary asks with piceli-image's client); what could not be
//! resolved stays `unpinned("…")`, with the reason in a warning (PCL0189) and in the `// piceli:` comment.

use crate::read::Source;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Container lists of a pod spec, wherever they are (Deployment, CronJob, Pod, a custom resource's template).
const CONTAINER_LISTS: &[&str] = &["containers", "initContainers", "ephemeralContainers"];

/// Whether an image reference names its digest (`…@sha256:…`).
pub fn is_pinned(image: &str) -> bool {
    image.contains("@sha256:")
}

/// Every image of the sources' containers that is not pinned by digest, once each.
pub fn unpinned_images(sources: &[Source]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in sources {
        visit(&s.object, &mut |image| {
            if !is_pinned(image) {
                out.insert(image.to_string());
            }
        });
    }
    out
}

/// Rewrite each image that `pins` has a pinned reference for (`nginx:1.27` → `nginx:1.27@sha256:…`).
pub fn apply(sources: &mut [Source], pins: &BTreeMap<String, String>) {
    for s in sources {
        rewrite(&mut s.object, pins);
    }
}

/// `nginx:1.27` → (`nginx`, `1.27`); no tag is `latest`; a port in the host is not a tag.
pub fn split_tag(image: &str) -> (&str, &str) {
    let slash = image.rfind('/').map_or(0, |i| i + 1);
    match image[slash..].rfind(':') {
        Some(i) => (&image[..slash + i], &image[slash + i + 1..]),
        None => (image, "latest"),
    }
}

fn visit(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if CONTAINER_LISTS.contains(&k.as_str())
                    && let Some(list) = v.as_array()
                {
                    for c in list {
                        if let Some(image) = c["image"].as_str() {
                            f(image);
                        }
                    }
                }
                visit(v, f);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| visit(i, f)),
        _ => {}
    }
}

fn rewrite(v: &mut Value, pins: &BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if CONTAINER_LISTS.contains(&k.as_str())
                    && let Some(list) = v.as_array_mut()
                {
                    for c in list {
                        let pinned = c["image"].as_str().and_then(|i| pins.get(i)).cloned();
                        if let (Some(p), Some(obj)) = (pinned, c.as_object_mut()) {
                            obj.insert("image".into(), Value::String(p));
                        }
                    }
                }
                rewrite(v, pins);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| rewrite(i, pins)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tags_split_after_the_last_slash() {
        assert_eq!(split_tag("nginx:1.27"), ("nginx", "1.27"));
        assert_eq!(split_tag("nginx"), ("nginx", "latest"));
        assert_eq!(
            split_tag("127.0.0.1:5000/shop/api:v2"),
            ("127.0.0.1:5000/shop/api", "v2")
        );
        assert_eq!(
            split_tag("127.0.0.1:5000/shop/api"),
            ("127.0.0.1:5000/shop/api", "latest")
        );
    }

    #[test]
    fn every_container_list_is_found_and_rewritten() {
        let o = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {
            "initContainers": [{"name": "i", "image": "busybox:1.36"}],
            "containers": [{"name": "c", "image": "nginx:1.27"}, {"name": "p", "image": "a@sha256:00"}],
        }}}}}});
        let mut sources = vec![Source {
            origin: "t".into(),
            object: o,
        }];
        let found = unpinned_images(&sources);
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            vec!["busybox:1.36".to_string(), "nginx:1.27".to_string()]
        );
        let pins = BTreeMap::from([("nginx:1.27".to_string(), "nginx:1.27@sha256:ab".to_string())]);
        apply(&mut sources, &pins);
        let c = &sources[0].object["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"];
        assert_eq!(c[0]["image"], "nginx:1.27@sha256:ab");
        assert_eq!(c[1]["image"], "a@sha256:00");
    }
}
