//! Server-side apply honours `metadata.resource_version` as PUT does: a stale one is 409 Conflict with the
//! apiserver's message, a matching one or none is applied.

use crate::common::{self, Kubectl, api_error};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

const STALE: &str = "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again";

fn config(data: &str, rv: Option<&str>) -> serde_json::Value {
    let mut meta = json!({"name": "a"});
    if let Some(rv) = rv {
        meta["resourceVersion"] = json!(rv);
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": data}})
}

#[tokio::test]
async fn kube_apply_with_a_stale_resource_version_is_a_conflict() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let pp = PatchParams::apply("test");
    let first = cms
        .patch("a", &pp, &Patch::Apply(config("1", None)))
        .await
        .expect("first apply");
    let first_rv = first.metadata.resource_version.clone().expect("rv");
    let second = cms
        .patch("a", &pp, &Patch::Apply(config("2", Some(&first_rv))))
        .await
        .expect("apply with the current resourceVersion");
    assert_ne!(
        second.metadata.resource_version,
        first.metadata.resource_version
    );
    let err = api_error(
        cms.patch("a", &pp, &Patch::Apply(config("3", Some(&first_rv))))
            .await
            .expect_err("stale apply"),
    );
    assert_eq!(err.code, 409);
    assert_eq!(err.reason, "Conflict");
    assert_eq!(err.message, STALE);
    let details = err.details.expect("details");
    assert_eq!(details.name, "a");
    assert_eq!(details.kind, "configmaps");
    let now = cms.get("a").await.expect("get");
    assert_eq!(
        now.data.expect("data")["k"],
        "2",
        "the stale apply wrote nothing"
    );
    // Forcing does not bypass the precondition (it only settles field ownership).
    let err = api_error(
        cms.patch(
            "a",
            &PatchParams::apply("test").force(),
            &Patch::Apply(config("3", Some(&first_rv))),
        )
        .await
        .expect_err("stale forced apply"),
    );
    assert_eq!(err.code, 409);
    cms.patch("a", &pp, &Patch::Apply(config("4", None)))
        .await
        .expect("apply without a resourceVersion");
}

#[test]
fn kubectl_server_side_apply_of_an_old_manifest_is_a_conflict() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let manifest = |k_value: &str, rv: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  resourceVersion: \"{rv}\"\ndata:\n  k: \"{k_value}\"\n"
        )
    };
    k.ok(&["create", "configmap", "a", "--from-literal=k=1"]);
    let old_rv = k.ok(&["get", "cm/a", "-o", "jsonpath={.metadata.resourceVersion}"]);
    // The manifest's resourceVersion is the current one: applied.
    k.ok(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        &k.file("current.yaml", &manifest("2", &old_rv)),
    ]);
    assert_eq!(k.ok(&["get", "cm/a", "-o", "jsonpath={.data.k}"]), "2");
    // The same manifest again, its resourceVersion now stale: 409, nothing written.
    let out = k.run(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("old.yaml", &manifest("3", &old_rv)),
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(&format!("error: {STALE}")),
        "{}",
        out.stderr
    );
    assert_eq!(k.ok(&["get", "cm/a", "-o", "jsonpath={.data.k}"]), "2");
    // Without a resourceVersion the apply is unconditional.
    let free = manifest("4", "").replace("  resourceVersion: \"\"\n", "");
    k.ok(&["apply", "--server-side", "-f", &k.file("free.yaml", &free)]);
    assert_eq!(k.ok(&["get", "cm/a", "-o", "jsonpath={.data.k}"]), "4");
}
