//! `/openapi/v2` as kube-apiserver 1.33 serves it (kube-openapi's handler): JSON by default,
//! gnostic's protobuf `Document` for client-go's `Accept`, 406 for other media types; one ETag
//! (SHA-512 of the JSON, upper-case hex) for both, 304 for `If-None-Match`, gzip when accepted,
//! and a new ETag when a CRD changes the served types.

use bytes::Bytes;
use http::{HeaderMap, StatusCode, header};
use http_body_util::BodyExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::common;

const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

async fn get(client: &kube::Client, headers: &[(&str, &str)]) -> (StatusCode, HeaderMap, Bytes) {
    let mut req = http::Request::get("/openapi/v2");
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let req = req
        .body(kube::client::Body::from(Vec::new()))
        .expect("request");
    let resp = client.send(req).await.expect("response");
    let (parts, body) = resp.into_parts();
    let bytes = body.collect().await.expect("body").to_bytes();
    (parts.status, parts.headers, bytes)
}

fn header(h: &HeaderMap, name: header::HeaderName) -> &str {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

#[tokio::test]
async fn openapi_v2_is_served_as_json_and_protobuf_under_one_etag() {
    let sim = common::sim();
    let client = sim.client().expect("client");

    let (status, h, json_body) = get(&client, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&h, header::CONTENT_TYPE), "application/json");
    let etag = header(&h, header::ETAG).to_string();
    let hex = etag.trim_matches('"');
    assert!(
        etag.starts_with('"')
            && hex.len() == 128
            && hex
                .chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()),
        "{etag}"
    );
    assert!(header(&h, header::LAST_MODIFIED).ends_with(" GMT"));
    let vary: Vec<&str> = h
        .get_all(header::VARY)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    assert_eq!(vary, ["Accept-Encoding", "Accept"]);
    let doc: Value = serde_json::from_slice(&json_body).expect("JSON");
    assert_eq!(doc["swagger"], "2.0");
    assert_eq!(
        doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );

    let (status, h, proto_body) = get(&client, &[("accept", PROTOBUF)]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        header(&h, header::CONTENT_TYPE),
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    );
    assert_eq!(header(&h, header::ETAG), etag);
    // Field 1 (`swagger`), length 3, "2.0".
    assert!(
        proto_body.starts_with(b"\x0a\x032.0"),
        "{:?}",
        &proto_body[..8]
    );

    for accept in ["application/json", PROTOBUF] {
        let (status, h, body) = get(&client, &[("accept", accept), ("if-none-match", &etag)]).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED, "{accept}");
        assert!(body.is_empty());
        assert_eq!(header(&h, header::ETAG), etag);
    }
    let (status, _, _) = get(&client, &[("accept", "text/html")]).await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);

    let (status, h, gz) = get(&client, &[("accept-encoding", "gzip")]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&h, header::CONTENT_ENCODING), "gzip");
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut plain)
        .expect("gunzip");
    assert_eq!(plain, json_body);

    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]}
    }))
    .expect("crd");
    Api::<CustomResourceDefinition>::all(client.clone())
        .create(&PostParams::default(), &crd)
        .await
        .expect("create the CRD");
    let (status, h, body) = get(&client, &[("if-none-match", &etag)]).await;
    assert_eq!(status, StatusCode::OK, "a new CRD changes the document");
    assert_ne!(header(&h, header::ETAG), etag);
    let doc: Value = serde_json::from_slice(&body).expect("JSON");
    let widget = &doc["definitions"]["com.example.v1.Widget"];
    assert_eq!(
        widget["properties"]["spec"]["properties"]["size"]["type"],
        "integer"
    );
    assert_eq!(
        widget["x-kubernetes-group-version-kind"],
        json!([{"group": "example.com", "kind": "Widget", "version": "v1"}])
    );
}
