//! `kubectl explain` shows the real 1.33 descriptions (the OpenAPI v3 documents carry them).

use crate::common::{self, Kubectl};

/// kubectl's output with its line wrapping undone.
fn flat(out: &str) -> String {
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn kubectl_explain_shows_the_field_descriptions() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let out = flat(&k.ok(&["explain", "deploy.spec.replicas"]));
    assert!(out.contains("FIELD: replicas <integer>"), "{out}");
    assert!(
        out.contains(
            "Number of desired pods. This is a pointer to distinguish between explicit zero and"
        ),
        "{out}"
    );
    let out = flat(&k.ok(&["explain", "deployment"]));
    assert!(
        out.contains("Deployment enables declarative updates for Pods and ReplicaSets."),
        "{out}"
    );
    // A field that is a reference keeps its type and gets its own description.
    let out = flat(&k.ok(&["explain", "pods.spec.securityContext"]));
    assert!(
        out.contains("FIELD: securityContext <PodSecurityContext>"),
        "{out}"
    );
    assert!(
        out.contains("SecurityContext holds pod-level security attributes"),
        "{out}"
    );
}
