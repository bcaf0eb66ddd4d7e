//! `kubectl apply -f` of a `kind: List`: kubectl validates the items client-side against the
//! OpenAPI v2 document (`/openapi/v2`, as protobuf), since a List has no OpenAPI v3 path that
//! says the server validates fields; it then applies each item. Expected texts are kube-apiserver
//! 1.33's with kubectl 1.33.

use crate::common::{self, Kubectl};

const LIST: &str = "apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: settings}
  data: {mode: fast}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web}
  spec:
    replicas: 1
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec:
        containers:
        - name: web
          image: nginx:1.27
          ports: [{containerPort: 80}]
- apiVersion: v1
  kind: Service
  metadata: {name: web}
  spec:
    selector: {app: web}
    ports: [{port: 80}]
";

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer}
              color: {type: string, enum: [red, blue]}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
";

const WIDGET_LIST: &str = "apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: widget-settings}
  data: {a: \"1\"}
- apiVersion: example.com/v1
  kind: Widget
  metadata: {name: w1}
  spec: {size: 2, color: red, extra: {anything: [1, 2]}}
";

fn jsonpath(k: &Kubectl, what: &str, path: &str) -> String {
    k.ok(&["get", what, "-o", &format!("jsonpath={path}")])
}

#[test]
fn a_list_of_built_in_objects_applies_client_side() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let f = k.file("list.yaml", LIST);
    let out = k.ok(&["apply", "-f", &f]);
    for line in [
        "configmap/settings created",
        "deployment.apps/web created",
        "service/web created",
    ] {
        assert!(out.contains(line), "{out}");
    }
    let again = k.ok(&["apply", "-f", &f]);
    for line in [
        "configmap/settings unchanged",
        "deployment.apps/web unchanged",
        "service/web unchanged",
    ] {
        assert!(again.contains(line), "{again}");
    }
    let changed = k.file(
        "list2.yaml",
        &LIST
            .replace("mode: fast", "mode: slow")
            .replace("replicas: 1", "replicas: 3"),
    );
    let out = k.ok(&["apply", "-f", &changed]);
    assert!(out.contains("configmap/settings configured"), "{out}");
    assert!(out.contains("deployment.apps/web configured"), "{out}");
    assert!(out.contains("service/web unchanged"), "{out}");
    assert_eq!(jsonpath(&k, "cm/settings", "{.data.mode}"), "slow");
    assert_eq!(jsonpath(&k, "deploy/web", "{.spec.replicas}"), "3");
}

#[test]
fn a_list_of_built_in_objects_applies_server_side() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let f = k.file("list.yaml", LIST);
    let out = k.ok(&["apply", "--server-side", "-f", &f]);
    for line in [
        "configmap/settings serverside-applied",
        "deployment.apps/web serverside-applied",
        "service/web serverside-applied",
    ] {
        assert!(out.contains(line), "{out}");
    }
    assert_eq!(
        jsonpath(&k, "svc/web", "{.metadata.managedFields[0].manager}"),
        "kubectl"
    );
    assert_eq!(
        jsonpath(&k, "svc/web", "{.metadata.managedFields[0].operation}"),
        "Apply"
    );
    assert_eq!(jsonpath(&k, "deploy/web", "{.spec.replicas}"), "1");
}

#[test]
fn a_list_holding_a_custom_resource_applies() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&["apply", "-f", &k.file("crd.yaml", CRD)]);
    k.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
    ]);
    let f = k.file("widgets.yaml", WIDGET_LIST);
    let out = k.ok(&["apply", "-f", &f]);
    assert!(out.contains("configmap/widget-settings created"), "{out}");
    assert!(out.contains("widget.example.com/w1 created"), "{out}");
    let again = k.ok(&["apply", "-f", &f]);
    assert!(again.contains("widget.example.com/w1 unchanged"), "{again}");
    // A client-side apply of a custom resource is a merge patch: kubectl finds no strategic merge
    // patch among the patch types the v2 document lists for it.
    let changed = k.file("widgets2.yaml", &WIDGET_LIST.replace("size: 2", "size: 5"));
    let out = k.ok(&["apply", "-f", &changed]);
    assert!(out.contains("widget.example.com/w1 configured"), "{out}");
    assert_eq!(jsonpath(&k, "widget/w1", "{.spec.size}"), "5");
    assert_eq!(jsonpath(&k, "widget/w1", "{.spec.extra.anything[1]}"), "2");
    let out = k.ok(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        &changed,
    ]);
    assert!(
        out.contains("widget.example.com/w1 serverside-applied"),
        "{out}"
    );
}

#[test]
fn a_list_with_unknown_fields_is_refused_by_kubectls_validation() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let bad = LIST
        .replace(
            "          ports: [{containerPort: 80}]\n",
            "          ports: [{containerPort: 80}]\n          bogus: 1\n",
        )
        .replace("    replicas: 1\n", "    replicas: 1\n    nonsense: true\n");
    let f = k.file("bad.yaml", &bad);
    for args in [
        vec!["apply", "-f", &f],
        vec!["apply", "--server-side", "-f", &f],
    ] {
        let out = k.run(&args);
        assert_eq!(out.code, 1, "{args:?}: {out:?}");
        assert_eq!(
            out.stderr.trim_end(),
            "error: error validating \"bad.yaml\": error validating data: \
             [ValidationError(Deployment.spec): unknown field \"nonsense\" in io.k8s.api.apps.v1.DeploymentSpec, \
             ValidationError(Deployment.spec.template.spec.containers[0]): unknown field \"bogus\" in io.k8s.api.core.v1.Container]; \
             if you choose to ignore these errors, turn validation off with --validate=false",
            "{args:?}"
        );
    }
    // Nothing of the List was written.
    let out = k.run(&["get", "cm/settings"]);
    assert_eq!(out.code, 1, "{out:?}");

    k.ok(&["apply", "-f", &k.file("crd.yaml", CRD)]);
    let widgets = k.file(
        "widgets.yaml",
        &WIDGET_LIST.replace(
            "  spec: {size: 2, color: red, extra: {anything: [1, 2]}}\n",
            "  spec: {color: red, shade: dark}\n  junk: 1\n",
        ),
    );
    let out = k.run(&["apply", "-f", &widgets]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr.trim_end(),
        "error: error validating \"widgets.yaml\": error validating data: \
         [ValidationError(Widget): unknown field \"junk\" in com.example.v1.Widget, \
         ValidationError(Widget.spec): unknown field \"shade\" in com.example.v1.Widget.spec, \
         ValidationError(Widget.spec): missing required field \"size\" in com.example.v1.Widget.spec]; \
         if you choose to ignore these errors, turn validation off with --validate=false"
    );
}
