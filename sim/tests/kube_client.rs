//! Acceptance tests driven by the kube 5 client: CRUD errors shaped like the real server's,
//! server-side apply, watchers (default and streaming lists, expiry and re-list), discovery, CRDs,
//! subresources, namespaces, finalizers and authentication.

mod common;

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions};
use kube::core::{DynamicObject, GroupVersionKind};
use kube::discovery::ApiResource;
use kube::runtime::watcher;
use serde_json::json;

fn cm(name: &str, data: serde_json::Value) -> ConfigMap {
    serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}),
    )
    .expect("configmap")
}

fn api_error(e: kube::Error) -> Box<kube::core::Status> {
    match e {
        kube::Error::Api(s) => s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

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
            .contains("Precondition failed: UID in precondition: not-the-uid"),
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
async fn requests_without_the_token_get_401() {
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
            .expect_err("unauthenticated"),
    );
    assert_eq!(err.code, 401);
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
        "Apply failed with 1 conflict: conflict with \"one\" using apps/v1: .spec.replicas"
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

async fn wait_for<T>(mut f: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..100 {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("condition not reached in 5s");
}

async fn watcher_sees_init_and_changes(config: watcher::Config) {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    cms.create(&PostParams::default(), &cm("before", json!({})))
        .await
        .expect("create");
    let mut stream = watcher(cms.clone(), config).boxed();
    let mut seen_init = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .expect("event in time")
            .expect("ok")
            .expect("open")
        {
            watcher::Event::InitApply(c) => seen_init.push(c.metadata.name.unwrap_or_default()),
            watcher::Event::InitDone => break,
            _ => {}
        }
    }
    assert_eq!(seen_init, vec!["before".to_string()]);
    cms.create(&PostParams::default(), &cm("after", json!({})))
        .await
        .expect("create after");
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .expect("event in time")
            .expect("ok")
            .expect("open")
        {
            watcher::Event::Apply(c) if c.metadata.name.as_deref() == Some("after") => break,
            _ => {}
        }
    }
    cms.delete("after", &DeleteParams::default())
        .await
        .expect("delete");
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .expect("event in time")
            .expect("ok")
            .expect("open")
        {
            watcher::Event::Delete(c) if c.metadata.name.as_deref() == Some("after") => break,
            _ => {}
        }
    }
}

#[tokio::test]
async fn default_watcher_reaches_init_done_and_sees_later_changes() {
    watcher_sees_init_and_changes(watcher::Config::default()).await;
}

#[tokio::test]
async fn streaming_lists_watcher_reaches_init_done_and_sees_later_changes() {
    watcher_sees_init_and_changes(watcher::Config::default().streaming_lists()).await;
}

#[tokio::test]
async fn expired_watch_makes_kube_relist() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::default_namespaced(client);
    cms.create(&PostParams::default(), &cm("a", json!({})))
        .await
        .expect("create");
    // Short watch timeouts make the watcher resume from its last resourceVersion often.
    let mut stream = watcher(cms.clone(), watcher::Config::default().timeout(1)).boxed();
    let mut init_done = 0;
    while init_done < 1 {
        if let watcher::Event::InitDone = stream.try_next().await.expect("ok").expect("open") {
            init_done += 1;
        }
    }
    // Changes the watcher does not see move the store on; compaction then expires its version.
    for i in 0..3 {
        let s: k8s_openapi::api::core::v1::Secret =
            serde_json::from_value(json!({"metadata": {"name": format!("s{i}")}})).expect("secret");
        secrets
            .create(&PostParams::default(), &s)
            .await
            .expect("secret");
    }
    sim.compact().expect("compact");
    let relisted = tokio::time::timeout(Duration::from_secs(15), async {
        let mut saw_expiry = false;
        loop {
            // The watcher reports the 410 as an error item, then re-lists on the next poll.
            match stream.next().await.expect("open") {
                Err(e) => {
                    saw_expiry |= e.to_string().contains("410") || e.to_string().contains("too old")
                }
                Ok(watcher::Event::InitDone) => return saw_expiry,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert_eq!(
        relisted.ok(),
        Some(true),
        "the watcher saw the expiry and re-listed"
    );
}

#[tokio::test]
async fn raw_watch_from_an_expired_version_is_a_410_error_event_in_a_200_stream() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let first = cms
        .create(&PostParams::default(), &cm("a", json!({})))
        .await
        .expect("create");
    cms.create(&PostParams::default(), &cm("b", json!({})))
        .await
        .expect("create");
    sim.compact().expect("compact");
    let rv = first.metadata.resource_version.expect("rv");
    let req = http::Request::get(format!(
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}"
    ))
    .body(Vec::new())
    .expect("request");
    let text = client.request_text(req).await.expect("200 stream");
    let line: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("one event")).expect("json");
    assert_eq!(line["type"], "ERROR");
    assert_eq!(line["object"]["code"], 410);
    assert_eq!(line["object"]["reason"], "Expired");
}

#[tokio::test]
async fn watch_filters_by_label_selector_and_sends_bookmarks_for_initial_events() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let mut labelled = cm("yes", json!({}));
    labelled.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
    cms.create(&PostParams::default(), &labelled)
        .await
        .expect("create");
    cms.create(&PostParams::default(), &cm("no", json!({})))
        .await
        .expect("create");
    let req = http::Request::get(
        "/api/v1/namespaces/default/configmaps?watch=true&labelSelector=app%3Dweb&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1",
    )
    .body(Vec::new())
    .expect("request");
    let text = client.request_text(req).await.expect("stream");
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(events.len(), 2, "{text}");
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["metadata"]["name"], "yes");
    assert_eq!(events[1]["type"], "BOOKMARK");
    assert_eq!(
        events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
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
    assert_eq!(err.code, 400);
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
async fn cluster_directories_keep_objects_across_restarts_and_share_them_between_servers() {
    let dir = tempfile::tempdir().expect("dir");
    let config = piceli_sim::SimConfig {
        dir: Some(dir.path().to_path_buf()),
        port: None,
    };
    {
        let sim = piceli_sim::Sim::start(config.clone()).expect("start");
        let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
        cms.create(&PostParams::default(), &cm("kept", json!({"k": "v"})))
            .await
            .expect("create");
    }
    let one = piceli_sim::Sim::start(config.clone()).expect("restart");
    let two = piceli_sim::Sim::start(config).expect("second server on the same directory");
    let a: Api<ConfigMap> = Api::default_namespaced(one.client().expect("client"));
    let b: Api<ConfigMap> = Api::default_namespaced(two.client().expect("client"));
    assert_eq!(
        a.get("kept")
            .await
            .expect("kept across restart")
            .data
            .and_then(|d| d.get("k").cloned())
            .as_deref(),
        Some("v")
    );
    let mut stream = watcher(b.clone(), watcher::Config::default()).boxed();
    while !matches!(
        stream.try_next().await.expect("ok").expect("open"),
        watcher::Event::InitDone
    ) {}
    a.create(&PostParams::default(), &cm("from-one", json!({})))
        .await
        .expect("create via one");
    let seen = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let watcher::Event::Apply(c) = stream.try_next().await.expect("ok").expect("open")
                && c.metadata.name.as_deref() == Some("from-one")
            {
                return;
            }
        }
    })
    .await;
    assert!(
        seen.is_ok(),
        "a watch on the second server sees writes made through the first"
    );
    let listed = wait_for(async || {
        let l = b.list(&ListParams::default()).await.ok()?;
        (l.items.len() == 2).then_some(l.items.len())
    })
    .await;
    assert_eq!(listed, 2);
}

#[tokio::test]
async fn selector_watches_see_objects_leave_and_enter_the_selection() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let mut c = cm("x", json!({}));
    c.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
    let created = cms
        .create(&PostParams::default(), &c)
        .await
        .expect("create");
    let rv = created.metadata.resource_version.expect("rv");
    let writer = cms.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let relabel = |app: &str| Patch::Merge(json!({"metadata": {"labels": {"app": app}}}));
        writer
            .patch("x", &PatchParams::default(), &relabel("other"))
            .await
            .expect("leave");
        writer
            .patch("x", &PatchParams::default(), &relabel("web"))
            .await
            .expect("enter");
    });
    let req = http::Request::get(format!(
        "/api/v1/namespaces/default/configmaps?watch=true&labelSelector=app%3Dweb&resourceVersion={rv}&timeoutSeconds=2"
    ))
    .body(Vec::new())
    .expect("request");
    let text = client.request_text(req).await.expect("stream");
    let types: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("json")["type"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(
        types,
        vec!["DELETED".to_string(), "ADDED".to_string()],
        "{text}"
    );
}

#[tokio::test]
async fn metadata_only_get_list_and_watch() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let mut c = cm("m", json!({"big": "value"}));
    c.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
    cms.create(&PostParams::default(), &c)
        .await
        .expect("create");
    let meta = cms.get_metadata("m").await.expect("metadata");
    assert_eq!(
        meta.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app"))
            .map(String::as_str),
        Some("web")
    );
    assert_eq!(
        meta.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    let list = cms
        .list_metadata(&ListParams::default())
        .await
        .expect("list metadata");
    assert_eq!(list.items.len(), 1);
    let metas: Api<kube::core::PartialObjectMeta<ConfigMap>> =
        Api::default_namespaced(sim.client().expect("client"));
    let mut stream = watcher(metas, watcher::Config::default()).boxed();
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .expect("in time")
            .expect("ok")
            .expect("open")
        {
            watcher::Event::InitApply(m) => assert_eq!(m.metadata.name.as_deref(), Some("m")),
            watcher::Event::InitDone => break,
            _ => {}
        }
    }
}
