//! `kubectl explain` shows the real 1.33 descriptions (the OpenAPI v3 documents carry them, and the
//! v2 document for `--output=plaintext-openapiv2`).

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

#[test]
fn kubectl_explain_reads_openapi_v2_when_asked() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    // kube-apiserver 1.33's output, word for word.
    assert_eq!(
        k.ok(&[
            "explain",
            "deploy.spec.replicas",
            "--output=plaintext-openapiv2"
        ]),
        "KIND:     Deployment\nVERSION:  apps/v1\n\nFIELD:    replicas <integer>\n\nDESCRIPTION:\n     \
         Number of desired pods. This is a pointer to distinguish between explicit\n     \
         zero and not specified. Defaults to 1.\n"
    );
}
