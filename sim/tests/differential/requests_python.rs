//! The official Python client (namespace `d-py`): typed CoreV1/AppsV1 calls, the dynamic client's
//! discovery and server-side apply, custom objects, watches, and the ApiException bodies of errors.

use serde_json::json;

use crate::differential::requests::Suite;

pub fn add(s: &mut Suite) {
    s.py("create_ns", json!({"name": "d-py"}));
    s.py("create_ns", json!({"name": "d-py"}));
    s.py("version", json!({}));
    s.py("api_versions", json!({}));
    s.py("api_groups", json!({}));
    s.py("core_resources", json!({}));
    s.py(
        "create_cm",
        json!({"ns": "d-py", "name": "one", "data": {"a": "1"}, "labels": {"py": "yes"}}),
    );
    s.py(
        "create_cm",
        json!({"ns": "d-py", "name": "two", "data": {"b": "2"}, "labels": {"py": "yes"}}),
    );
    s.py(
        "create_cm",
        json!({"ns": "d-py", "name": "one", "data": {}, "labels": {}}),
    );
    s.py(
        "create_cm",
        json!({"ns": "d-py", "name": "-bad-", "data": {}, "labels": {}}),
    );
    s.py("read_cm", json!({"ns": "d-py", "name": "one"}));
    s.py("read_cm", json!({"ns": "d-py", "name": "zero"}));
    s.py("list_cm", json!({"ns": "d-py", "label_selector": "py=yes"}));
    s.py(
        "list_cm",
        json!({"ns": "d-py", "label_selector": "py=yes", "limit": 1}),
    );
    s.py(
        "list_cm",
        json!({"ns": "d-py", "field_selector": "metadata.name=two"}),
    );
    s.py(
        "replace_cm",
        json!({"ns": "d-py", "name": "one", "data": {"a": "11"}}),
    );
    s.py(
        "stale_replace_cm",
        json!({"ns": "d-py", "name": "one", "data": {"a": "12"}}),
    );
    s.py(
        "patch_cm",
        json!({"ns": "d-py", "name": "one", "body": {"data": {"c": "3"}}}),
    );
    s.py(
        "patch_cm",
        json!({"ns": "d-py", "name": "one", "body": [{"op": "add", "path": "/data/d", "value": "4"}]}),
    );
    s.py(
        "watch_cm",
        json!({"ns": "d-py", "count": 2, "timeout_seconds": 5, "label_selector": "py=yes"}),
    );
    s.py(
        "watch_cm",
        json!({"ns": "d-py", "count": 3, "timeout_seconds": 5, "label_selector": "py=yes",
               "allow_watch_bookmarks": true, "send_initial_events": true,
               "resource_version_match": "NotOlderThan"}),
    );
    s.py(
        "delete_cm",
        json!({"ns": "d-py", "name": "two", "propagation_policy": "Background"}),
    );
    s.py(
        "delete_cm",
        json!({"ns": "d-py", "name": "two", "propagation_policy": "Background"}),
    );
    s.py(
        "delete_cm",
        json!({"ns": "d-py", "name": "one", "dry_run": "All"}),
    );
    s.py(
        "delete_collection_cm",
        json!({"ns": "d-py", "label_selector": "py=yes"}),
    );
    s.py("list_cm", json!({"ns": "d-py", "label_selector": "py=yes"}));

    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"k": "1"}});
    s.py(
        "dyn_apply",
        json!({"api_version": "v1", "kind": "ConfigMap", "ns": "d-py", "body": cm, "manager": "one"}),
    );
    let cm2 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"k": "2"}});
    s.py(
        "dyn_apply",
        json!({"api_version": "v1", "kind": "ConfigMap", "ns": "d-py", "body": cm2, "manager": "two"}),
    );
    s.py(
        "dyn_apply",
        json!({"api_version": "v1", "kind": "ConfigMap", "ns": "d-py", "body": cm2, "manager": "two", "force": true}),
    );
    s.py(
        "dyn_get",
        json!({"api_version": "v1", "kind": "ConfigMap", "ns": "d-py", "name": "ssa"}),
    );
    s.py(
        "dyn_list",
        json!({"api_version": "v1", "kind": "ConfigMap", "ns": "d-py", "field_selector": "metadata.name=ssa"}),
    );
    for (v, k) in [
        ("apps/v1", "Deployment"),
        ("v1", "Pod"),
        ("batch/v1", "CronJob"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("autoscaling/v1", "HorizontalPodAutoscaler"),
    ] {
        s.py("dyn_resource", json!({"api_version": v, "kind": k}));
    }

    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "pyweb"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "pyweb"}},
                 "template": {"metadata": {"labels": {"app": "pyweb"}},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}}
    });
    s.py(
        "create_deployment",
        json!({"ns": "d-py", "body": deployment}),
    );
    s.py("read_scale", json!({"ns": "d-py", "name": "pyweb"}));
    s.py(
        "patch_scale",
        json!({"ns": "d-py", "name": "pyweb", "replicas": 0}),
    );
    s.py("read_scale", json!({"ns": "d-py", "name": "nothing"}));
    let bad = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "pybad"},
        "spec": {"selector": {"matchLabels": {"app": "x"}},
                 "template": {"metadata": {"labels": {"app": "y"}},
                              "spec": {"containers": [{"name": "main", "image": "nginx"}]}}}
    });
    s.py("create_deployment", json!({"ns": "d-py", "body": bad}));
    let secret =
        json!({"metadata": {"name": "sec"}, "stringData": {"token": "abc"}, "type": "Opaque"});
    s.py("create_secret", json!({"ns": "d-py", "body": secret}));
    s.py("read_secret", json!({"ns": "d-py", "name": "sec"}));
    let svc = json!({"metadata": {"name": "pysvc"}, "spec": {"ports": [{"port": 80}], "selector": {"app": "pyweb"}}});
    s.py("create_service", json!({"ns": "d-py", "body": svc}));
    let bad_svc = json!({"metadata": {"name": "pysvc2"}, "spec": {"ports": [{"port": 70000}]}});
    s.py("create_service", json!({"ns": "d-py", "body": bad_svc}));
    let widget = json!({"apiVersion": "diff.piceli.dev/v1", "kind": "Widget", "metadata": {"name": "pyw"}, "spec": {"size": 1}});
    s.py(
        "create_custom",
        json!({"group": "diff.piceli.dev", "version": "v1", "ns": "d-py", "plural": "widgets", "body": widget}),
    );
    s.py(
        "list_custom",
        json!({"group": "diff.piceli.dev", "version": "v1", "ns": "d-py", "plural": "widgets"}),
    );
    s.py(
        "patch_custom_status",
        json!({"group": "diff.piceli.dev", "version": "v1", "ns": "d-py", "plural": "widgets", "name": "pyw", "body": {"status": {"ready": true}}}),
    );
    s.py(
        "list_custom",
        json!({"group": "diff.piceli.dev", "version": "v1", "ns": "d-py", "plural": "gadgets"}),
    );
}
