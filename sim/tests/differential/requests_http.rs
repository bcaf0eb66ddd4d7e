//! Raw HTTP (namespace `d-http`): create/get/list/update/delete with their options, error bodies (404,
//! 409, 422, 400, 405, 415, 403 with a ServiceAccount token that has no rights, 401 with a bad token),
//! watches (resourceVersion, bookmarks, 410 Gone), and a CRD with its custom resources.

use crate::differential::requests::Suite;
use crate::differential::target::User;

const JSON: Option<&str> = Some("application/json");
const CMS: &str = "/api/v1/namespaces/d-http/configmaps";

const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.diff.piceli.dev"},
"spec":{"group":"diff.piceli.dev","scope":"Namespaced",
"names":{"plural":"widgets","singular":"widget","kind":"Widget","shortNames":["wd"]},
"versions":[{"name":"v1","served":true,"storage":true,
"subresources":{"status":{}},
"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}],
"schema":{"openAPIV3Schema":{"type":"object","properties":{
"spec":{"type":"object","properties":{"size":{"type":"integer"},"color":{"type":"string"}}},
"status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}}}]}}"#;

fn post(s: &mut Suite, path: &str, body: &str) {
    s.http("POST", path, Some(body), JSON, None, User::Admin);
}

fn cm(name: &str, extra: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","labels":{{"set":"h"}}}},"data":{{"k":"v"}}{extra}}}"#
    )
}

pub fn add(s: &mut Suite) {
    post(
        s,
        "/api/v1/namespaces",
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"d-http"}}"#,
    );
    post(
        s,
        "/api/v1/namespaces",
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"d-http"}}"#,
    );
    s.get("/api/v1/namespaces/d-http");

    // CRUD and its errors.
    post(s, CMS, &cm("h1", ""));
    post(s, CMS, &cm("h1", ""));
    post(s, CMS, &cm("h2", ""));
    post(s, &format!("{CMS}?dryRun=All"), &cm("dry", ""));
    s.get(&format!("{CMS}/dry"));
    post(
        s,
        CMS,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"gen-"},"data":{}}"#,
    );
    post(
        s,
        CMS,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"UPPER"}}"#,
    );
    post(
        s,
        CMS,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"bad key!":"v"}}"#,
    );
    post(
        s,
        CMS,
        r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"wrong-kind"}}"#,
    );
    post(
        s,
        CMS,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"h3","namespace":"elsewhere"}}"#,
    );
    post(s, CMS, "{not json");
    post(
        s,
        CMS,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"typed"},"data":{"n":5}}"#,
    );
    post(
        s,
        &format!("{CMS}?fieldValidation=Strict"),
        &cm("strict", r#","bogus":1"#),
    );
    post(
        s,
        &format!("{CMS}?fieldValidation=Warn"),
        &cm("warn", r#","bogus":1"#),
    );
    post(s, "/api/v1/namespaces/no-such-ns/configmaps", &cm("h9", ""));
    s.http(
        "POST",
        CMS,
        Some(&cm("yaml", "")),
        Some("application/yaml"),
        None,
        User::Admin,
    );
    s.http(
        "POST",
        CMS,
        Some("<xml/>"),
        Some("application/xml"),
        None,
        User::Admin,
    );
    s.get(&format!("{CMS}/h1"));
    s.get(&format!("{CMS}/nope"));
    s.get(&format!("{CMS}?labelSelector=set%3Dh"));
    s.get(&format!("{CMS}?labelSelector=set%3Dh&limit=1"));
    s.get(&format!("{CMS}?labelSelector=set%3D%3D%3D"));
    s.get(&format!("{CMS}?fieldSelector=metadata.name%3Dh2"));
    s.get(&format!("{CMS}?fieldSelector=spec.nothing%3Dx"));
    s.get(&format!("{CMS}?limit=1&continue=garbage"));
    s.get(&format!("{CMS}?resourceVersion=0&labelSelector=set%3Dh"));
    s.get("/api/v1/configmaps?labelSelector=set%3Dh");
    s.get("/api/v1/namespaces/d-http/nothings");
    s.get_accept(
        &format!("{CMS}/h1"),
        "application/json;as=Table;v=v1;g=meta.k8s.io",
    );
    s.get_accept(
        &format!("{CMS}?labelSelector=set%3Dh"),
        "application/json;as=Table;v=v1;g=meta.k8s.io",
    );
    s.get_accept(
        &format!("{CMS}/h1"),
        "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    );
    s.get_accept(&format!("{CMS}/h1"), "application/yaml");
    s.get_accept(&format!("{CMS}/h1"), "text/html");
    s.http(
        "PUT",
        &format!("{CMS}/h2"),
        Some(&cm("h2", r#","immutable":false"#)),
        JSON,
        None,
        User::Admin,
    );
    s.http(
        "PUT",
        &format!("{CMS}/h2"),
        Some(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"h2","resourceVersion":"1"},"data":{}}"#),
        JSON,
        None,
        User::Admin,
    );
    s.http(
        "PUT",
        &format!("{CMS}/other"),
        Some(&cm("h2", "")),
        JSON,
        None,
        User::Admin,
    );
    s.http(
        "PUT",
        &format!("{CMS}/made-by-put"),
        Some(&cm("made-by-put", "")),
        JSON,
        None,
        User::Admin,
    );
    post(s, CMS, &cm("frozen", r#","immutable":true"#));
    s.http(
        "PUT",
        &format!("{CMS}/frozen"),
        Some(&cm(
            "frozen",
            r#","immutable":true,"binaryData":{"b":"AAAA"}"#,
        )),
        JSON,
        None,
        User::Admin,
    );
    s.http("DELETE", &format!("{CMS}/h2"), Some(r#"{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}"#), JSON, None, User::Admin);
    s.http(
        "DELETE",
        &format!("{CMS}/h2?dryRun=All"),
        None,
        None,
        None,
        User::Admin,
    );
    s.http(
        "DELETE",
        &format!("{CMS}/h2?propagationPolicy=Orphan"),
        None,
        None,
        None,
        User::Admin,
    );
    // The orphan finalizer is the garbage collector's to remove: wait for it rather than race it.
    s.k("wait --for=delete configmap/h2 -n d-http --timeout=30s");
    s.http(
        "DELETE",
        &format!("{CMS}/h2"),
        None,
        None,
        None,
        User::Admin,
    );
    s.http(
        "DELETE",
        &format!("{CMS}/h1?propagationPolicy=Sideways"),
        None,
        None,
        None,
        User::Admin,
    );
    s.http(
        "DELETE",
        &format!("{CMS}?labelSelector=set%3Dnone"),
        None,
        None,
        None,
        User::Admin,
    );
    s.http(
        "POST",
        &format!("{CMS}/h1"),
        Some("{}"),
        JSON,
        None,
        User::Admin,
    );
    s.http("PUT", CMS, Some("{}"), JSON, None, User::Admin);

    // Watches.
    s.watch(
        &format!("{CMS}?labelSelector=set%3Dh&resourceVersion=0&timeoutSeconds=5"),
        2,
        5,
    );
    s.watch(
        &format!("{CMS}?labelSelector=set%3Dh&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5"),
        2,
        5,
    );
    s.watch(
        &format!("{CMS}?fieldSelector=metadata.name%3Dh1&timeoutSeconds=2"),
        5,
        4,
    );
    s.compact();
    s.watch(&format!("{CMS}?resourceVersion=1&timeoutSeconds=5"), 1, 5);
    s.watch(
        &format!("{CMS}?resourceVersion=notanumber&timeoutSeconds=5"),
        1,
        5,
    );
    s.get(&format!(
        "{CMS}?resourceVersion=1&resourceVersionMatch=Exact"
    ));

    // Who may: a ServiceAccount with no rights, a bad token, nobody.
    post(
        s,
        "/api/v1/namespaces/d-http/serviceaccounts",
        r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"nobody"}}"#,
    );
    s.save_token("d-http", "nobody");
    s.http("GET", CMS, None, None, None, User::Sa);
    s.http("GET", &format!("{CMS}/h1"), None, None, None, User::Sa);
    s.http("POST", CMS, Some(&cm("sa", "")), JSON, None, User::Sa);
    s.http("GET", "/api/v1/nodes", None, None, None, User::Sa);
    s.http("GET", "/apis", None, None, None, User::Sa);
    s.http("GET", "/version", None, None, None, User::Sa);
    s.http(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        Some(r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#),
        JSON,
        None,
        User::Sa,
    );
    s.http(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        Some(r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"namespace":"d-http","verb":"list","resource":"configmaps"}}}"#),
        JSON,
        None,
        User::Sa,
    );
    s.k_as(User::Sa, "get configmaps -n d-http");
    s.k_as(User::Sa, "auth can-i list configmaps -n d-http");
    s.k_as(User::Sa, "auth whoami");
    s.http("GET", CMS, None, None, None, User::Bad);
    s.http("GET", "/version", None, None, None, User::Bad);
    s.http("GET", "/apis", None, None, None, User::Bad);
    s.k_as(User::Bad, "get configmaps -n d-http");
    s.http("GET", CMS, None, None, None, User::Anonymous);
    s.http("GET", "/version", None, None, None, User::Anonymous);
    s.http("GET", "/healthz", None, None, None, User::Anonymous);
    s.http("GET", "/api", None, None, None, User::Anonymous);

    // A CRD and its custom resources.
    post(
        s,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        CRD,
    );
    s.k("wait --for=condition=Established crd/widgets.diff.piceli.dev --timeout=60s");
    s.k_until("get widgets -n d-http");
    s.get("/apis/diff.piceli.dev/v1");
    let widgets = "/apis/diff.piceli.dev/v1/namespaces/d-http/widgets";
    post(
        s,
        widgets,
        r#"{"apiVersion":"diff.piceli.dev/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":3,"color":"red"}}"#,
    );
    post(
        s,
        widgets,
        r#"{"apiVersion":"diff.piceli.dev/v1","kind":"Widget","metadata":{"name":"w2"},"spec":{"size":"big"}}"#,
    );
    post(
        s,
        &format!("{widgets}?fieldValidation=Strict"),
        r#"{"apiVersion":"diff.piceli.dev/v1","kind":"Widget","metadata":{"name":"w3"},"spec":{"size":1,"shape":"round"}}"#,
    );
    s.get(&format!("{widgets}/w1"));
    s.http(
        "PATCH",
        &format!("{widgets}/w1/status"),
        Some(r#"{"status":{"ready":true}}"#),
        Some("application/merge-patch+json"),
        None,
        User::Admin,
    );
    s.http(
        "PATCH",
        &format!("{widgets}/w1"),
        Some(r#"{"spec":{"size":4},"status":{"ready":false}}"#),
        Some("application/merge-patch+json"),
        None,
        User::Admin,
    );
    s.http(
        "PATCH",
        &format!("{widgets}/w1"),
        Some(r#"{"spec":{"size":5}}"#),
        Some("application/strategic-merge-patch+json"),
        None,
        User::Admin,
    );
    s.k("get widgets -n d-http");
    s.k("get wd w1 -n d-http -o yaml");
    s.k("get widgets.v1.diff.piceli.dev -n d-http -o wide");
    s.k("explain widget.spec");
    s.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.diff.piceli.dev");
    s.http(
        "DELETE",
        &format!("{widgets}/w1"),
        None,
        None,
        None,
        User::Admin,
    );
}
