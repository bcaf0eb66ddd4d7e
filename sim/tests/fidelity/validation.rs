//! Request validation kube-apiserver does, with its status codes and messages: field selectors,
//! `dryRun`, media types, integer parameters, size limits, custom resource types, Secret rules.

use std::time::Duration;

use crate::common::{self, Kubectl, api_error, cm};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget}
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
            properties:
              size: {type: integer}
";

fn raw(method: &str, uri: &str, content_type: &str, body: Vec<u8>) -> http::Request<Vec<u8>> {
    http::Request::builder()
        .method(method)
        .uri(uri)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(body)
        .expect("request")
}

#[test]
fn kubectl_unknown_field_selectors_are_400_with_the_real_message() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let out = k.run(&["get", "configmaps", "--field-selector", "foo=bar"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("Error from server (BadRequest)")
            && out.stderr.contains(
                "\"foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            ),
        "{}",
        out.stderr
    );
    let out = k.run(&["get", "pods", "--field-selector", "spec.bogus=x"]);
    assert!(
        out.stderr.contains("field label not supported: spec.bogus"),
        "{}",
        out.stderr
    );
    k.ok(&[
        "get",
        "pods",
        "--field-selector",
        "status.phase=Running,spec.nodeName=n",
    ]);
    k.ok(&[
        "get",
        "configmaps",
        "--field-selector",
        "metadata.name=kube-root-ca.crt",
    ]);
}

#[tokio::test]
async fn kube_dry_run_other_than_all_is_422_and_writes_nothing() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let body = serde_json::to_vec(&cm("a", json!({"k": "v"}))).expect("json");
    let err = api_error(
        client
            .request::<ConfigMap>(raw(
                "POST",
                "/api/v1/namespaces/default/configmaps?dryRun=Bogus",
                "application/json",
                body,
            ))
            .await
            .expect_err("dryRun=Bogus"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(err.reason, "Invalid");
    assert_eq!(
        err.message,
        "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Bogus\"}: supported values: \"All\""
    );
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    assert!(
        cms.get_opt("a").await.expect("get").is_none(),
        "nothing was written"
    );
}

#[tokio::test]
async fn kube_text_plain_bodies_are_415() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let body = serde_json::to_vec(&cm("a", json!({}))).expect("json");
    let err = api_error(
        client
            .request::<ConfigMap>(raw(
                "POST",
                "/api/v1/namespaces/default/configmaps",
                "text/plain",
                body.clone(),
            ))
            .await
            .expect_err("text/plain create"),
    );
    assert_eq!(err.code, 415);
    assert_eq!(err.reason, "UnsupportedMediaType");
    assert_eq!(
        err.message,
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    let err = api_error(
        client
            .request::<ConfigMap>(raw(
                "PATCH",
                "/api/v1/namespaces/default/configmaps/a",
                "text/plain",
                b"{}".to_vec(),
            ))
            .await
            .expect_err("text/plain patch"),
    );
    assert_eq!(err.code, 415);
    // kube-apiserver 1.33's go-restful router refuses a PATCH of a type no route consumes itself.
    assert_eq!(err.message, "415: Unsupported Media Type");
}

#[tokio::test]
async fn kube_integer_parameters_that_do_not_parse_are_400_at_once() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let get = |uri: &str| {
        http::Request::get(uri.to_string())
            .body(Vec::new())
            .expect("request")
    };
    for (uri, value) in [
        ("/api/v1/namespaces/default/configmaps?limit=abc", "abc"),
        (
            "/api/v1/namespaces/default/configmaps?timeoutSeconds=abc",
            "abc",
        ),
        (
            "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=abc",
            "abc",
        ),
    ] {
        let answer = tokio::time::timeout(
            Duration::from_secs(10),
            client.request::<serde_json::Value>(get(uri)),
        )
        .await
        .unwrap_or_else(|_| panic!("{uri} hung"));
        let err = api_error(answer.expect_err(uri));
        assert_eq!(err.code, 400, "{uri}");
        assert_eq!(err.reason, "BadRequest");
        assert_eq!(
            err.message,
            format!("strconv.ParseInt: parsing \"{value}\": invalid syntax")
        );
    }
    // A negative limit means no paging, as etcd3's store reads it.
    let list: serde_json::Value = client
        .request(get("/api/v1/namespaces/default/configmaps?limit=-1"))
        .await
        .expect("limit=-1");
    assert!(list["metadata"].get("continue").is_none(), "{list}");
}

#[tokio::test]
async fn kube_oversized_request_heads_are_431_with_a_status() {
    // A request line and headers over kube-apiserver's 1 MiB. (URIs themselves cannot exceed 64 KiB
    // with the `http` crate, on kube's side and on the server's: a longer one is 414, below.)
    let sim = common::sim();
    let client = sim.client().expect("client");
    let selector: Vec<String> = (0..5_000).map(|i| format!("k{i}=v")).collect();
    let req = http::Request::get(format!(
        "/api/v1/namespaces/default/configmaps?labelSelector={}",
        selector.join(",")
    ))
    .header("x-padding", "p".repeat(1024 * 1024))
    .body(Vec::new())
    .expect("request");
    let err = api_error(
        client
            .request::<serde_json::Value>(req)
            .await
            .expect_err("oversized"),
    );
    assert_eq!(err.code, 431);
    assert_eq!(err.reason, "RequestHeaderFieldsTooLarge");
    assert_eq!(
        err.message,
        "Request Header Fields Too Large: the request line and headers are longer than 1048576 bytes"
    );
    // The same selector alone (about 40 KiB) is served.
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    cms.list(&ListParams::default().labels(&selector.join(",")))
        .await
        .expect("a long selector under the limit");
}

#[test]
fn kubectl_a_label_selector_longer_than_a_uri_can_be_is_414_with_a_status() {
    // hyper (the `http` crate) holds URIs up to 65,534 bytes and answers a longer request line itself,
    // with no body; the server puts a Status in its place so kubectl can say why.
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let selector: Vec<String> = (0..10_000).map(|i| format!("k{i}=v")).collect();
    let selector = selector.join(",");
    assert!(selector.len() < 128 * 1024, "one argument's limit");
    let out = k.run(&["get", "configmaps", "-l", &selector]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "Error from server (RequestURITooLong): Request-URI Too Long: the request's URI is longer than 65534 bytes"
        ),
        "{}",
        out.stderr
    );
    // The server goes on serving.
    k.ok(&["get", "configmaps"]);
}

#[tokio::test]
async fn kube_a_head_over_the_connection_buffer_is_431_with_a_status() {
    // Heads up to 2 MiB reach the handler, which answers those over 1 MiB; a longer one is refused by
    // hyper while reading it, with the same Status.
    let sim = common::sim();
    let client = sim.client().expect("client");
    let req = http::Request::get("/api/v1/namespaces/default/configmaps")
        .header("x-padding", "p".repeat(3 * 1024 * 1024))
        .body(Vec::new())
        .expect("request");
    let err = api_error(
        client
            .request::<serde_json::Value>(req)
            .await
            .expect_err("oversized"),
    );
    assert_eq!(err.code, 431);
    assert_eq!(err.reason, "RequestHeaderFieldsTooLarge");
    assert_eq!(
        err.message,
        "Request Header Fields Too Large: the request line and headers are longer than 1048576 bytes"
    );
}

#[tokio::test]
async fn kube_50_mb_body_is_413() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let big = cm("big", json!({"k": "x".repeat(50 * 1024 * 1024)}));
    let err = api_error(
        cms.create(&PostParams::default(), &big)
            .await
            .expect_err("50 MB"),
    );
    assert_eq!(err.code, 413);
    assert_eq!(err.reason, "RequestEntityTooLarge");
    assert_eq!(err.message, "Request entity too large: limit is 3145728");
    // The connection pool still works afterwards.
    cms.create(&PostParams::default(), &cm("small", json!({})))
        .await
        .expect("a normal create after the 413");
}

#[test]
fn kubectl_body_over_3_mib_is_413() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let manifest = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata:\n  k: {}\n",
        "x".repeat(4 * 1024 * 1024)
    );
    let out = k.run(&["create", "-f", &k.file("big.yaml", &manifest)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Error from server (RequestEntityTooLarge)")
            && out
                .stderr
                .contains("Request entity too large: limit is 3145728"),
        "{}",
        out.stderr
    );
}

#[test]
fn kubectl_custom_resource_of_the_wrong_type_is_422() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&["apply", "--server-side", "-f", &k.file("crd.yaml", CRD)]);
    let w = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: big}\n";
    let out = k.run(&["apply", "--server-side", "-f", &k.file("w.yaml", w)]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(
            "The Widget \"w\" is invalid: spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
        ),
        "{}",
        out.stderr
    );
    let ok = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3}\n";
    k.ok(&["apply", "--server-side", "-f", &k.file("ok.yaml", ok)]);
}

#[test]
fn kubectl_secret_type_is_immutable_and_data_limited_to_1_mib() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&["create", "secret", "generic", "s", "--from-literal=a=b"]);
    let out = k.run(&[
        "patch",
        "secret",
        "s",
        "-p",
        r#"{"type":"example.com/other"}"#,
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(
            "The Secret \"s\" is invalid: type: Invalid value: \"example.com/other\": field is immutable"
        ),
        "{}",
        out.stderr
    );
    std::fs::write(k.work.path().join("blob"), vec![7u8; 1024 * 1024 + 1]).expect("blob");
    let out = k.run(&["create", "secret", "generic", "big", "--from-file=blob"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(
            "Secret \"big\" is invalid: data: Too long: may not be more than 1048576 bytes"
        ),
        "{}",
        out.stderr
    );
    std::fs::write(k.work.path().join("blob"), vec![7u8; 1024 * 1024]).expect("blob");
    k.ok(&["create", "secret", "generic", "big", "--from-file=blob"]);
}
