//! Acceptance tests driven by the kube 5 client: errors shaped like the real server's (AlreadyExists,
//! Conflict, preconditions, anonymous 403), server-side apply, paging and selectors, discovery, namespaces,
//! finalizers, dry runs, deletecollection, CRDs with status and scale.

mod kinds;

use crate::common;

use common::{api_error, cm};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions};
use kube::core::{DynamicObject, GroupVersionKind};
use kube::discovery::ApiResource;
use serde_json::json;

#[tokio::test]
async fn create_twice_is_already_exists() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    cms.create(&PostParams::default(), &cm("a", json!({"k": "v"})))
        .await
        .expect("first create");
    let err = api_error(
        cms.create(&PostParams::default(), &cm("a", json!({})))
            .await
            .expect_err("second create"),
    );
    assert_eq!(err.code, 409);
    assert_eq!(err.reason, "AlreadyExists");
    assert_eq!(err.message, "configmaps \"a\" already exists");
}

#[tokio::test]
async fn stale_put_is_a_conflict_with_the_real_message() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let first = cms
        .create(&PostParams::default(), &cm("a", json!({"k": "1"})))
        .await
        .expect("create");
    let mut changed = first.clone();
    changed.data = Some([("k".to_string(), "2".to_string())].into());
    cms.replace("a", &PostParams::default(), &changed)
        .await
        .expect("first replace");
    let err = api_error(
        cms.replace("a", &PostParams::default(), &changed)
            .await
            .expect_err("stale replace"),
    );
    assert_eq!(err.code, 409);
    assert_eq!(err.reason, "Conflict");
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[tokio::test]
async fn delete_with_a_wrong_uid_precondition_conflicts() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let created = cms
        .create(&PostParams::default(), &cm("a", json!({})))
        .await
        .expect("create");
    let dp = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    let err = api_error(cms.delete("a", &dp).await.expect_err("precondition fails"));
    assert_eq!(err.code, 409);
    assert!(
        err.message
            .contains("the UID in the precondition (not-the-uid) does not match the UID in record"),
        "{}",
        err.message
    );
    let uid = created.metadata.uid.clone();
    let dp = DeleteParams {
        preconditions: Some(Preconditions {
            uid,
            resource_version: None,
        }),
        ..Default::default()
    };
    cms.delete("a", &dp).await.expect("right uid deletes");
    let err = api_error(cms.get("a").await.expect_err("gone"));
    assert_eq!(err.code, 404);
}

#[tokio::test]
async fn requests_without_credentials_are_anonymous_and_forbidden() {
    let sim = common::sim();
    let mut config = kube::Config::new(sim.url().parse().expect("url"));
    let kc = kube::config::Kubeconfig::from_yaml(sim.kubeconfig_yaml()).expect("kubeconfig");
    let ca = kc.clusters[0]
        .cluster
        .as_ref()
        .and_then(|c| c.certificate_authority_data.clone())
        .expect("ca data");
    use base64::Engine;
    let pem = base64::engine::general_purpose::STANDARD
        .decode(ca)
        .expect("base64");
    let der = rustls_pki_types::pem::PemObject::from_pem_slice(&pem)
        .map(|c: rustls_pki_types::CertificateDer<'_>| c.to_vec())
        .expect("pem");
    config.root_cert = Some(vec![der]);
    let client = kube::Client::try_from(config).expect("client without credentials");
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let err = api_error(
        cms.list(&ListParams::default())
            .await
            .expect_err("anonymous"),
    );
    // As kube-apiserver 1.33 (anonymous auth on, RBAC): 403 for system:anonymous, not 401.
    assert_eq!(err.code, 403);
    assert_eq!(
        err.message,
        "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
}

#[tokio::test]
async fn server_side_apply_no_op_writes_nothing() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let pp = PatchParams::apply("tester");
    let a = cms
        .patch("a", &pp, &Patch::Apply(cm("a", json!({"k": "v"}))))
        .await
        .expect("apply");
    let rv_before = sim.resource_version().expect("rv");
    let b = cms
        .patch("a", &pp, &Patch::Apply(cm("a", json!({"k": "v"}))))
        .await
        .expect("re-apply");
    assert_eq!(a.metadata.resource_version, b.metadata.resource_version);
    assert_eq!(a.metadata.managed_fields, b.metadata.managed_fields);
    assert_eq!(
        sim.resource_version().expect("rv"),
        rv_before,
        "no write happened"
    );
    let dry = PatchParams::apply("tester").dry_run();
    let d = cms
        .patch("a", &dry, &Patch::Apply(cm("a", json!({"k": "changed"}))))
        .await
        .expect("dry run");
    assert_eq!(
        d.data.as_ref().and_then(|m| m.get("k")).map(String::as_str),
        Some("changed")
    );
    assert_eq!(
        sim.resource_version().expect("rv"),
        rv_before,
        "dry run stored nothing"
    );
}

#[tokio::test]
async fn apply_conflicts_carry_causes_and_force_takes_over() {
    let sim = common::sim();
    let deploys: Api<Deployment> = Api::default_namespaced(sim.client().expect("client"));
    let d = |replicas: i32| -> Deployment {
        serde_json::from_value(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}))
        .expect("deployment")
    };
    deploys
        .patch("web", &PatchParams::apply("one"), &Patch::Apply(d(1)))
        .await
        .expect("apply one");
    let err = api_error(
        deploys
            .patch("web", &PatchParams::apply("two"), &Patch::Apply(d(3)))
            .await
            .expect_err("conflict"),
    );
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"one\": .spec.replicas"
    );
    let causes = err
        .details
        .as_ref()
        .map(|d| d.causes.clone())
        .unwrap_or_default();
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].field, ".spec.replicas");
    assert_eq!(causes[0].reason, "FieldManagerConflict");
    let forced = deploys
        .patch(
            "web",
            &PatchParams::apply("two").force(),
            &Patch::Apply(d(3)),
        )
        .await
        .expect("forced");
    assert_eq!(forced.spec.as_ref().and_then(|s| s.replicas), Some(3));
    assert_eq!(forced.metadata.generation, Some(2));
    let managers: Vec<String> = forced
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(
        managers.contains(&"one".to_string()) && managers.contains(&"two".to_string()),
        "{managers:?}"
    );
}

#[tokio::test]
async fn lists_page_with_limit_and_continue_and_filter_by_labels() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    for i in 0..5 {
        let mut c = cm(&format!("c{i}"), json!({}));
        c.metadata.labels = Some([("even".to_string(), (i % 2 == 0).to_string())].into());
        cms.create(&PostParams::default(), &c)
            .await
            .expect("create");
    }
    let page = cms
        .list(&ListParams::default().limit(2))
        .await
        .expect("page 1");
    assert_eq!(page.items.len(), 2);
    let token = page.metadata.continue_.clone().expect("continue token");
    let page2 = cms
        .list(&ListParams::default().limit(10).continue_token(&token))
        .await
        .expect("page 2");
    assert_eq!(page2.items.len(), 3);
    assert!(page2.metadata.continue_.is_none());
    assert!(page.metadata.resource_version.is_some());
    let even = cms
        .list(&ListParams::default().labels("even=true"))
        .await
        .expect("selector");
    assert_eq!(even.items.len(), 3);
    // Objects without labels, negated requirements, and labels with a field selector together.
    cms.create(&PostParams::default(), &cm("plain", json!({})))
        .await
        .expect("create");
    let names = |list: kube::core::ObjectList<ConfigMap>| -> Vec<String> {
        let mut names: Vec<String> = list
            .items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .filter(|n| n != "kube-root-ca.crt")
            .collect();
        names.sort();
        names
    };
    let unlabelled = cms
        .list(&ListParams::default().labels("!even"))
        .await
        .expect("selector");
    assert_eq!(names(unlabelled), ["plain"]);
    let odd_or_none = cms
        .list(&ListParams::default().labels("even!=true"))
        .await
        .expect("selector");
    assert_eq!(names(odd_or_none), ["c1", "c3", "plain"]);
    let both = cms
        .list(
            &ListParams::default()
                .labels("even in (true)")
                .fields("metadata.name!=c2"),
        )
        .await
        .expect("selector");
    assert_eq!(names(both), ["c0", "c4"]);
}

#[tokio::test]
async fn discovery_finds_builtins_legacy_and_aggregated() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let legacy = kube::Discovery::new(client.clone())
        .run()
        .await
        .expect("legacy discovery");
    assert!(legacy.has_group("apps"));
    let aggregated = kube::Discovery::new(client)
        .run_aggregated()
        .await
        .expect("aggregated discovery");
    let (ar, caps) = aggregated
        .resolve_gvk(&GroupVersionKind::gvk("apps", "v1", "Deployment"))
        .expect("deployments discovered");
    assert_eq!(ar.plural, "deployments");
    assert!(
        caps.subresources
            .iter()
            .any(|(s, _)| s.plural == "deployments/scale" || s.plural == "scale"),
        "{:?}",
        caps.subresources
    );
}

#[tokio::test]
async fn missing_namespace_is_not_found_and_namespace_deletion_removes_its_objects() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let in_team: Api<ConfigMap> = Api::namespaced(client.clone(), "team");
    let err = api_error(
        in_team
            .create(&PostParams::default(), &cm("a", json!({})))
            .await
            .expect_err("no namespace"),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (404, "namespaces \"team\" not found")
    );
    let namespaces: Api<Namespace> = Api::all(client);
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "team"}})).expect("namespace");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("create namespace");
    in_team
        .create(&PostParams::default(), &cm("a", json!({})))
        .await
        .expect("create in namespace");
    namespaces
        .delete("team", &DeleteParams::default())
        .await
        .expect("delete namespace");
    assert_eq!(
        api_error(in_team.get("a").await.expect_err("object gone")).code,
        404
    );
    assert_eq!(
        api_error(namespaces.get("team").await.expect_err("namespace gone")).code,
        404
    );
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let mut c = cm("held", json!({}));
    c.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    cms.create(&PostParams::default(), &c)
        .await
        .expect("create");
    cms.delete("held", &DeleteParams::default())
        .await
        .expect("delete");
    let held = cms.get("held").await.expect("still there");
    assert!(held.metadata.deletion_timestamp.is_some());
    cms.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("remove finalizer");
    assert_eq!(
        api_error(cms.get("held").await.expect_err("deleted")).code,
        404
    );
}

struct LabelAndDeny;

impl piceli_sim::admission::Admission for LabelAndDeny {
    fn mutate(
        &self,
        req: &piceli_sim::admission::AdmissionRequest<'_>,
        object: &mut serde_json::Value,
    ) -> Result<(), piceli_sim::status::ApiError> {
        if req.resource.kind == "ConfigMap" {
            object["metadata"]["labels"]["admitted"] = json!("yes");
        }
        Ok(())
    }

    fn validate(
        &self,
        req: &piceli_sim::admission::AdmissionRequest<'_>,
        _object: &serde_json::Value,
    ) -> Result<(), piceli_sim::status::ApiError> {
        if req.name == "forbidden" {
            return Err(piceli_sim::admission::denied(
                req,
                "LabelAndDeny",
                "that name is not allowed",
            ));
        }
        Ok(())
    }
}
