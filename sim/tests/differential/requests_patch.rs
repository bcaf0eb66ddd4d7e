//! Patches of every type (namespace `d-patch`): kubectl patch with json, merge and strategic patches,
//! server-side apply as a patch, and the same over raw HTTP with each content type, with their errors.

use crate::differential::requests::Suite;
use crate::differential::target::User;

const TEMPLATE: &str = "apiVersion: v1
kind: PodTemplate
metadata: {name: tpl, namespace: d-patch, labels: {app: tpl}}
template:
  metadata: {labels: {app: tpl}}
  spec:
    containers:
    - name: main
      image: nginx:1.27
      ports: [{containerPort: 80, name: http}]
      env: [{name: A, value: \"1\"}, {name: B, value: \"2\"}]
    - name: side
      image: busybox:1.36
";

const SERVICE: &str = "apiVersion: v1
kind: Service
metadata: {name: svc, namespace: d-patch}
spec:
  selector: {app: tpl}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: https, port: 443, targetPort: 8443}
";

const JSON_PATCH: &str = "application/json-patch+json";
const MERGE_PATCH: &str = "application/merge-patch+json";
const SMP: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

pub fn add(s: &mut Suite) {
    s.k("create namespace d-patch");
    s.k("create configmap p -n d-patch --from-literal=a=1 --from-literal=b=2");
    s.k_in("apply -f -", TEMPLATE);
    s.k_in("apply -f -", SERVICE);

    // kubectl patch, each type.
    s.k_args(
        &[
            "patch",
            "configmap",
            "p",
            "-n",
            "d-patch",
            "--type=merge",
            "-p",
            r#"{"data":{"b":null,"c":"3"}}"#,
        ],
        None,
    );
    s.k_args(
        &[
            "patch",
            "configmap",
            "p",
            "-n",
            "d-patch",
            "--type=json",
            "-p",
            r#"[{"op":"add","path":"/data/d","value":"4"},{"op":"remove","path":"/data/a"}]"#,
        ],
        None,
    );
    s.k_args(
        &[
            "patch",
            "configmap",
            "p",
            "-n",
            "d-patch",
            "--type=json",
            "-p",
            r#"[{"op":"test","path":"/data/c","value":"nope"}]"#,
        ],
        None,
    );
    s.k_args(
        &[
            "patch",
            "configmap",
            "p",
            "-n",
            "d-patch",
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/data/zzz"}]"#,
        ],
        None,
    );
    s.k_args(
        &[
            "patch",
            "configmap",
            "p",
            "-n",
            "d-patch",
            "-p",
            r#"{"metadata":{"labels":{"x":"y"}}}"#,
        ],
        None,
    );
    s.k_args(
        &[
            "patch",
            "configmap",
            "p",
            "-n",
            "d-patch",
            "--type=merge",
            "-p",
            r#"{"data":{"c":"33"}}"#,
            "--dry-run=server",
            "-o",
            "yaml",
        ],
        None,
    );
    s.k("get configmap p -n d-patch -o yaml");
    s.k_args(
        &[
            "patch",
            "configmap",
            "missing",
            "-n",
            "d-patch",
            "--type=merge",
            "-p",
            r#"{"data":{"c":"3"}}"#,
        ],
        None,
    );
    s.k_args(
        &[
            "patch",
            "configmap",
            "p",
            "-n",
            "d-patch",
            "--type=merge",
            "-p",
            r#"{"data":"#,
        ],
        None,
    );
    s.k_args(
        &[
            "patch",
            "configmap",
            "p",
            "-n",
            "d-patch",
            "--type=merge",
            "-p",
            r#"{"data":{"c":"3"}}"#,
        ],
        None,
    );
    // Strategic merge on lists with merge keys.
    s.k_args(
        &[
            "patch",
            "podtemplate",
            "tpl",
            "-n",
            "d-patch",
            "-p",
            r#"{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.28"}]}}}"#,
        ],
        None,
    );
    s.k_args(
        &["patch", "podtemplate", "tpl", "-n", "d-patch", "-p", r#"{"template":{"spec":{"containers":[{"name":"main","env":[{"name":"C","value":"3"}]}]}}}"#],
        None,
    );
    s.k("get podtemplate tpl -n d-patch -o json");
    s.k_args(
        &[
            "patch",
            "podtemplate",
            "tpl",
            "-n",
            "d-patch",
            "-p",
            r#"{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}"#,
        ],
        None,
    );
    s.k_args(
        &["patch", "podtemplate", "tpl", "-n", "d-patch", "-p", r#"{"template":{"spec":{"$setElementOrder/containers":[{"name":"extra"},{"name":"main"}],"containers":[{"name":"extra","image":"alpine:3"}]}}}"#],
        None,
    );
    s.k("get podtemplate tpl -n d-patch -o yaml");
    s.k_args(
        &[
            "patch",
            "podtemplate",
            "tpl",
            "-n",
            "d-patch",
            "--type=merge",
            "-p",
            r#"{"template":{"spec":{"containers":[{"name":"only","image":"alpine:3"}]}}}"#,
        ],
        None,
    );
    s.k("get podtemplate tpl -n d-patch -o jsonpath={.template.spec.containers[*].name}");
    s.k_args(
        &[
            "patch",
            "service",
            "svc",
            "-n",
            "d-patch",
            "-p",
            r#"{"spec":{"ports":[{"name":"http","port":80,"targetPort":9090}]}}"#,
        ],
        None,
    );
    s.k("get service svc -n d-patch -o jsonpath={.spec.ports}");
    s.k_args(
        &[
            "patch",
            "service",
            "svc",
            "-n",
            "d-patch",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/clusterIP","value":"10.0.0.99"}]"#,
        ],
        None,
    );
    s.k_args(
        &[
            "patch",
            "service",
            "svc",
            "-n",
            "d-patch",
            "--type=merge",
            "-p",
            r#"{"spec":{"type":"NodePort"}}"#,
        ],
        None,
    );
    s.k("get service svc -n d-patch -o jsonpath={.spec.type}");

    // Raw HTTP patches.
    let cm = "/api/v1/namespaces/d-patch/configmaps/p";
    let patch = |s: &mut Suite, body: &str, ct: &'static str, query: &str| {
        s.http(
            "PATCH",
            &format!("{cm}{query}"),
            Some(body),
            Some(ct),
            None,
            User::Admin,
        );
    };
    patch(
        s,
        r#"[{"op":"add","path":"/data/e","value":"5"}]"#,
        JSON_PATCH,
        "",
    );
    patch(
        s,
        r#"[{"op":"replace","path":"/data/nothing","value":"5"}]"#,
        JSON_PATCH,
        "",
    );
    patch(
        s,
        r#"[{"op":"move","from":"/data/e","path":"/data/f"}]"#,
        JSON_PATCH,
        "",
    );
    patch(
        s,
        r#"[{"op":"copy","from":"/data/f","path":"/data/g"}]"#,
        JSON_PATCH,
        "",
    );
    patch(s, r#"{"op":"add"}"#, JSON_PATCH, "");
    patch(s, r#"{"data":{"g":null,"h":"8"}}"#, MERGE_PATCH, "");
    patch(s, r#"{"data":{"h":9}}"#, MERGE_PATCH, "");
    patch(s, r#"not json"#, MERGE_PATCH, "");
    patch(s, r#"{"data":{"i":"10"}}"#, SMP, "");
    patch(s, r#"{"data":{"i":"10"}}"#, "application/xml", "");
    patch(
        s,
        r#"{"metadata":{"resourceVersion":"1"},"data":{"j":"1"}}"#,
        MERGE_PATCH,
        "",
    );
    patch(s, r#"{"data":{"k":"1"}}"#, MERGE_PATCH, "?dryRun=All");
    patch(
        s,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata: {z: applied}\n",
        APPLY,
        "",
    );
    patch(
        s,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata: {z: applied}\n",
        APPLY,
        "?fieldManager=raw",
    );
    patch(
        s,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata: {h: mine}\n",
        APPLY,
        "?fieldManager=raw2",
    );
    patch(
        s,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata: {h: mine}\n",
        APPLY,
        "?fieldManager=raw2&force=true",
    );
    patch(
        s,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {h: mine}\n",
        APPLY,
        "?fieldManager=raw2",
    );
    s.get(cm);
    s.http(
        "PATCH",
        "/api/v1/namespaces/d-patch/configmaps/created-by-apply?fieldManager=raw",
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: created-by-apply}\ndata: {a: b}\n"),
        Some(APPLY),
        None,
        User::Admin,
    );
    s.http(
        "PATCH",
        "/api/v1/namespaces/d-patch/configmaps/not-there",
        Some(r#"{"data":{"a":"b"}}"#),
        Some(MERGE_PATCH),
        None,
        User::Admin,
    );
    s.http(
        "PATCH",
        "/api/v1/namespaces/d-patch/podtemplates/tpl",
        Some(r#"{"template":{"spec":{"containers":[{"name":"only","ports":[{"containerPort":81}]}]}}}"#),
        Some(SMP),
        None,
        User::Admin,
    );
    s.http(
        "PATCH",
        "/api/v1/namespaces/d-patch/podtemplates/tpl",
        Some(r#"{"template":{"spec":{"containers":[{"name":"only","image":""}]}}}"#),
        Some(SMP),
        None,
        User::Admin,
    );
}
