//! Kinds and what the server sets: CRDs with status and scale, dry runs and deletecollection, more built-in kinds, admission plugins, generated names, allocated fields, a new CRD's conditions.

use super::*;

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
