//! Acceptance tests driven by the kube 5 client: errors shaped like the real server's (AlreadyExists,
//! Conflict, preconditions, anonymous 403), server-side apply, paging and selectors, discovery, namespaces,
//! finalizers, dry runs, deletecollection, CRDs with status and scale.

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

#[tokio::test]
async fn crds_serve_their_kind_with_status_and_scale() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}, "color": {"type": "string"}}},
                    "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}}]}
    }))
    .expect("crd");
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("create crd");
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"replicas": 1, "color": "red"}});
    let created = widgets
        .patch("w", &PatchParams::apply("tester"), &Patch::Apply(w))
        .await
        .expect("apply widget");
    assert_eq!(created.metadata.generation, Some(1));
    let st = widgets
        .patch_status(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 1}})),
        )
        .await
        .expect("status");
    assert_eq!(st.data["status"]["replicas"], 1);
    assert_eq!(
        st.metadata.generation,
        Some(1),
        "status changes do not bump generation"
    );
    let scale = widgets
        .patch_scale(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
        )
        .await
        .expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(4));
    let got = widgets.get("w").await.expect("get");
    assert_eq!(got.data["spec"]["replicas"], 4);
    assert_eq!(got.data["spec"]["color"], "red");
    let discovered = kube::Discovery::new(client.clone())
        .run_aggregated()
        .await
        .expect("discovery");
    assert!(discovered.has_group("example.com"));
    // Schema defaults and validation.
    let bad = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "bad"}, "spec": {"replicas": "x"}});
    let err = api_error(
        widgets
            .patch("bad", &PatchParams::apply("tester"), &Patch::Apply(bad))
            .await
            .expect_err("type error"),
    );
    assert_eq!(
        err.code, 422,
        "a custom resource's wrong type is Invalid, as the apiserver says"
    );
    assert!(
        err.message
            .contains("spec.replicas in body must be of type integer"),
        "{}",
        err.message
    );
    // Deleting the CRD deletes its objects and stops serving the kind.
    crds.delete("widgets.example.com", &DeleteParams::default())
        .await
        .expect("delete crd");
    let err = api_error(widgets.get("w").await.expect_err("kind gone"));
    assert_eq!(err.code, 404);
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("re-create crd");
    assert!(
        widgets
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .is_empty(),
        "old objects went with the CRD"
    );
}

#[tokio::test]
async fn dry_run_create_stores_nothing_and_deletecollection_honours_selectors() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let out = cms
        .create(&dry, &cm("ghost", json!({})))
        .await
        .expect("dry-run create");
    assert!(out.metadata.uid.is_some());
    assert_eq!(
        api_error(cms.get("ghost").await.expect_err("not stored")).code,
        404
    );
    for (name, app) in [("a", "x"), ("b", "x"), ("c", "y")] {
        let mut c = cm(name, json!({}));
        c.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        cms.create(&PostParams::default(), &c)
            .await
            .expect("create");
    }
    cms.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("app=x"),
    )
    .await
    .expect("deletecollection");
    let left: Vec<String> = cms
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert_eq!(left, vec!["c".to_string()]);
}

#[tokio::test]
async fn more_builtin_kinds_are_served() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let event: k8s_openapi::api::events::v1::Event = serde_json::from_value(json!({
        "metadata": {"name": "e1"}, "eventTime": "2026-01-01T00:00:00.000000Z", "reason": "Started",
        "action": "Start", "reportingController": "example.com/ctl", "reportingInstance": "ctl-0",
        "type": "Normal", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}, "note": "hello"
    }))
    .expect("event");
    let events: Api<k8s_openapi::api::events::v1::Event> = Api::default_namespaced(client.clone());
    events
        .create(&PostParams::default(), &event)
        .await
        .expect("events.k8s.io event");
    let sc: k8s_openapi::api::storage::v1::StorageClass = serde_json::from_value(
        json!({"metadata": {"name": "fast"}, "provisioner": "example.com/disk"}),
    )
    .expect("sc");
    let classes: Api<k8s_openapi::api::storage::v1::StorageClass> = Api::all(client.clone());
    classes
        .create(&PostParams::default(), &sc)
        .await
        .expect("storage class");
    let node: k8s_openapi::api::core::v1::Node =
        serde_json::from_value(json!({"metadata": {"name": "node-1"}})).expect("node");
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
    nodes
        .create(&PostParams::default(), &node)
        .await
        .expect("node");
    let slices: Api<k8s_openapi::api::discovery::v1::EndpointSlice> =
        Api::default_namespaced(client);
    let slice = serde_json::from_value(
        json!({"metadata": {"name": "web-1"}, "addressType": "IPv4", "endpoints": []}),
    )
    .expect("slice");
    slices
        .create(&PostParams::default(), &slice)
        .await
        .expect("endpoint slice");
    assert_eq!(
        events.get("e1").await.expect("get").note.as_deref(),
        Some("hello")
    );
    // node-1 next to the simulated node the controllers create.
    let mut names: Vec<String> = nodes
        .list(&ListParams::default())
        .await
        .expect("nodes")
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    names.sort();
    assert!(names.contains(&"node-1".to_string()), "{names:?}");
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

#[tokio::test]
async fn admission_plugins_mutate_and_reject() {
    let sim = common::sim();
    sim.add_admission(std::sync::Arc::new(LabelAndDeny));
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let created = cms
        .create(&PostParams::default(), &cm("ok", json!({})))
        .await
        .expect("admitted");
    assert_eq!(
        created
            .metadata
            .labels
            .and_then(|l| l.get("admitted").cloned())
            .as_deref(),
        Some("yes")
    );
    let rv = sim.resource_version().expect("rv");
    cms.patch(
        "ok",
        &PatchParams::apply("t"),
        &Patch::Apply(cm("ok", json!({}))),
    )
    .await
    .expect("apply");
    let err = api_error(
        cms.create(&PostParams::default(), &cm("forbidden", json!({})))
            .await
            .expect_err("denied"),
    );
    assert_eq!(err.code, 403);
    assert!(
        err.message
            .contains("denied the request: that name is not allowed"),
        "{}",
        err.message
    );
    assert!(sim.resource_version().expect("rv") > rv);
}

#[tokio::test]
async fn a_generated_name_cuts_a_long_prefix_to_stay_a_valid_name() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let prefix = "p".repeat(70);
    let mut object = cm("", json!({}));
    object.metadata.name = None;
    object.metadata.generate_name = Some(prefix.clone());
    let made = cms
        .create(&PostParams::default(), &object)
        .await
        .expect("create");
    let name = made.metadata.name.expect("name");
    assert_eq!(name.len(), 63, "{name}");
    assert!(name.starts_with(&prefix[..58]), "{name}");
}

#[tokio::test]
async fn allocated_service_fields_and_server_set_fields_belong_to_no_manager() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let services: Api<k8s_openapi::api::core::v1::Service> = Api::default_namespaced(client);
    let svc = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}))
    .expect("service");
    let created = services
        .create(&PostParams::default(), &svc)
        .await
        .expect("create");
    assert!(
        created
            .spec
            .as_ref()
            .and_then(|s| s.cluster_ip.as_ref())
            .is_some()
    );
    let fields = serde_json::to_value(&created.metadata.managed_fields).expect("fields");
    let spec = &fields[0]["fieldsV1"]["f:spec"];
    // As kube-apiserver: the creator owns what it sent and the defaults, not the allocated IPs,
    // and a nested struct (the spec) is no member of its own.
    assert!(spec.get("f:clusterIP").is_none(), "{spec}");
    assert!(spec.get("f:ipFamilyPolicy").is_none(), "{spec}");
    assert!(spec.get("f:internalTrafficPolicy").is_some(), "{spec}");
    assert!(spec.get(".").is_none(), "{spec}");
}

#[tokio::test]
async fn a_new_crd_is_answered_unaccepted_then_established_by_kube_apiserver() {
    let sim = common::sim();
    let crds: Api<CustomResourceDefinition> = Api::all(sim.client().expect("client"));
    let crd = serde_json::from_value(json!({"apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition", "metadata": {"name": "gizmos.diff.piceli.dev"},
        "spec": {"group": "diff.piceli.dev", "scope": "Namespaced",
            "names": {"plural": "gizmos", "kind": "Gizmo"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}}))
    .expect("crd");
    let created = crds
        .create(&PostParams::default(), &crd)
        .await
        .expect("create");
    // As kube-apiserver answers the create: before its naming controller ran.
    let status = created.status.expect("status");
    assert!(status.conditions.is_none_or(|c| c.is_empty()));
    assert_eq!(status.accepted_names.map(|n| n.kind).as_deref(), Some(""));
    assert_eq!(created.spec.names.list_kind.as_deref(), Some("GizmoList"));
    let stored = crds.get("gizmos.diff.piceli.dev").await.expect("get");
    let conditions = stored.status.and_then(|s| s.conditions).unwrap_or_default();
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    );
    let managers: Vec<(String, Option<String>)> = stored
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|m| (m.manager.unwrap_or_default(), m.subresource))
        .collect();
    assert!(
        managers.contains(&("kube-apiserver".into(), Some("status".into()))),
        "{managers:?}"
    );
}
