//! CustomResourceDefinition upgrades that cannot strand stored objects, end to end (in process, on the
//! local cluster or the real control plane of `PICELI_REAL_KUBECONFIG`): release 1 installs a CRD with
//! version v1 and a custom resource of it; a release whose CRD drops v1 (still in `status.storedVersions`)
//! or marks no storage version is refused at plan with PCL0231 and nothing changes; a release that adds v2
//! as the storage version beside v1 applies, and its custom resource is written in v2 once v2 is served.

use piceli::runtime::Coded;
use piceli::runtime::engine::session::Session;
use piceli_test_support::Cluster;

const GROUP: &str = "crdv.example.com";

/// The `widgets.crdv.example.com` CRD with `versions` (name, storage), and one Widget `w1` written in
/// `written_in`.
fn widgets(versions: &[(&str, bool)], written_in: &str) -> Vec<piceli::Object> {
    let versions: Vec<serde_json::Value> = versions
        .iter()
        .map(|(name, storage)| {
            serde_json::json!({
                "name": name, "served": true, "storage": storage,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }}}
            })
        })
        .collect();
    vec![
        piceli::Object(serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("widgets.{GROUP}")},
            "spec": {
                "group": GROUP, "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
                "versions": versions
            }
        })),
        piceli::Object(serde_json::json!({
            "apiVersion": format!("{GROUP}/{written_in}"), "kind": "Widget",
            "metadata": {"name": "w1"},
            "spec": {"size": written_in}
        })),
    ]
}

mod v1 {
    use super::widgets;
    piceli::app! {
        app crdv-test;
        target local = local(namespace: "crdv");
        include objects((widgets(&[("v1", true)], "v1")));
    }
}

mod v2_only {
    use super::widgets;
    piceli::app! {
        app crdv-test;
        target local = local(namespace: "crdv");
        include objects((widgets(&[("v2", true)], "v2")));
    }
}

mod no_storage {
    use super::widgets;
    piceli::app! {
        app crdv-test;
        target local = local(namespace: "crdv");
        include objects((widgets(&[("v1", false)], "v1")));
    }
}

mod v2_beside_v1 {
    use super::widgets;
    piceli::app! {
        app crdv-test;
        target local = local(namespace: "crdv");
        include objects((widgets(&[("v1", false), ("v2", true)], "v2")));
    }
}

use crate::cluster_session::options;

/// The live CRD's versions (name, storage) and `status.storedVersions`.
fn live_crd(cluster: &Cluster) -> (Vec<(String, bool)>, Vec<String>) {
    let out = cluster
        .kubectl()
        .args(["get", "crd", &format!("widgets.{GROUP}"), "-o", "json"])
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let crd: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let versions = crd["spec"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap_or_default().to_string(),
                v["storage"] == true,
            )
        })
        .collect();
    let stored = crd["status"]["storedVersions"]
        .as_array()
        .expect("storedVersions")
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    (versions, stored)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crd_upgrades_keep_every_stored_version_and_write_in_the_new_one_once_served() {
    let cluster = Cluster::start();
    let state = tempfile::tempdir().expect("state dir");
    let opts = options(&cluster, state.path());

    let first = Session::open(v1::crdv_test::app(), &opts)
        .await
        .expect("session");
    let plan = first.plan(vec![], false).await.expect("plan 1");
    first.apply(&plan.hash).await.expect("release 1");
    let v1_only = (vec![("v1".to_string(), true)], vec!["v1".to_string()]);
    assert_eq!(live_crd(&cluster), v1_only);

    // Dropping v1, still stored, and a CRD without a storage version: refused at plan, nothing written.
    for (app, says) in [
        (
            v2_only::crdv_test::app(),
            "drops version v1, which status.storedVersions still lists",
        ),
        (
            no_storage::crdv_test::app(),
            "marks no version as the storage version",
        ),
    ] {
        let session = Session::open(app, &opts).await.expect("session");
        let err = session.plan(vec![], false).await.expect_err("refused");
        assert_eq!(err.code().as_str(), "PCL0231", "{err}");
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("CustomResourceDefinition/widgets.{GROUP} {says}")),
            "{message}"
        );
        assert_eq!(live_crd(&cluster), v1_only);
    }

    // v2 as the storage version beside v1: applied, and the Widget written in v2.
    let third = Session::open(v2_beside_v1::crdv_test::app(), &opts)
        .await
        .expect("session");
    let plan = third.plan(vec![], false).await.expect("plan 3");
    third.apply(&plan.hash).await.expect("release 2");
    let (versions, stored) = live_crd(&cluster);
    assert_eq!(
        versions,
        [("v1".to_string(), false), ("v2".to_string(), true)]
    );
    assert_eq!(stored, ["v1", "v2"], "storedVersions only grows");
    let out = cluster
        .kubectl()
        .args([
            "get",
            &format!("widgets.v2.{GROUP}"),
            "w1",
            "-n",
            "crdv",
            "-o",
            "json",
        ])
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let widget: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(widget["spec"]["size"], "v2");
    assert_eq!(widget["apiVersion"], format!("{GROUP}/v2"));
    // A re-plan changes nothing.
    let again = third.plan(vec![], false).await.expect("re-plan");
    assert!(!again.has_changes(), "{:?}", again.actions);
}
