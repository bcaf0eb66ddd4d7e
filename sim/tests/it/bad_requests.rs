//! Bad requests answered as kube-apiserver 1.33 answers them: the status code, reason and message of
//! each mistake the differential schemathesis run (`benches/scripts/schemathesis-vs-real.sh`) found
//! answered otherwise — list options validated after they are decoded, the write options before the
//! object is looked up, names no path segment can be, a PUT body without a name, a patch read only
//! once its object is found, a missing namespace before an invalid object, a DeleteOptions body in an
//! unknown media type. Runs on the local cluster, and on the real control plane with
//! `PICELI_REAL_KUBECONFIG`.

use piceli_test_support::Cluster;

const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";

/// One request's answer: the code, reason and message of its `Status` (200 and empty strings for a
/// success).
async fn ask(
    client: &kube::Client,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: &str,
) -> (u16, String, String) {
    let mut req = http::Request::builder().method(method).uri(path);
    if let Some(ct) = content_type {
        req = req.header(http::header::CONTENT_TYPE, ct);
    }
    let req = req.body(body.as_bytes().to_vec()).expect("request");
    match client.request_text(req).await {
        Ok(_) => (200, String::new(), String::new()),
        Err(kube::Error::Api(s)) => (s.code, s.reason.clone(), s.message.clone()),
        Err(e) => panic!("{method} {path}: {e}"),
    }
}

/// Asserts an answer's code, reason and exact message.
async fn expect(
    client: &kube::Client,
    (method, path, ct, body): (&str, &str, Option<&str>, &str),
    code: u16,
    reason: &str,
    message: &str,
) {
    let got = ask(client, method, path, ct, body).await;
    assert_eq!(
        got,
        (code, reason.to_string(), message.to_string()),
        "{method} {path}"
    );
}

#[test]
fn bad_requests_are_answered_as_kube_apiserver_answers_them() {
    let cluster = Cluster::start();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = cluster.client().expect("client");
        let c = &client;
        // ComponentStatus's storage lists without paging: a `continue` no store wrote is not read.
        expect(c, ("GET", "/api/v1/componentstatuses?continue=abc&limit=1", None, ""), 200, "", "").await;
        // ListOptions: decoded (400), then validated (422).
        expect(c, ("GET", "/apis/apps/v1/deployments?resourceVersionMatch=Exact", None, ""), 422, "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided").await;
        expect(c, ("GET", &format!("{DEPLOYS}?resourceVersion=1&resourceVersionMatch=Bogus&continue=abc"), None, ""), 422, "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, resourceVersionMatch: Unsupported value: \"Bogus\": supported values: \"Exact\", \"NotOlderThan\", \"\"]").await;
        // A deprecated /watch/ path is validated as the list its parameters describe.
        expect(c, ("GET", "/apis/apps/v1/watch/namespaces/default/deployments?sendInitialEvents=true&timeoutSeconds=1", None, ""), 422, "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list").await;
        // A watch: the real control plane adds that its WatchList gate is off (the sim serves them).
        let (code, reason, message) = ask(c, "GET", &format!("{DEPLOYS}?watch=true&sendInitialEvents=true&timeoutSeconds=1"), None, "").await;
        assert_eq!((code, reason.as_str()), (422, "Invalid"), "{message}");
        assert!(message.contains("resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"), "{message}");
        expect(c, ("GET", &format!("{DEPLOYS}?labelSelector=__main__&resourceVersionMatch=Exact"), None, ""), 400, "BadRequest",
            "unable to parse requirement: <nil>: Invalid value: \"__main__\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')").await;
        expect(c, ("GET", &format!("{DEPLOYS}?labelSelector=a%3D-x"), None, ""), 400, "BadRequest",
            "unable to parse requirement: values[0][a]: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')").await;
        // The storage's checks of a list's resourceVersion.
        expect(c, ("GET", &format!("{DEPLOYS}?resourceVersion=x1"), None, ""), 400, "BadRequest",
            "invalid resource version: resourceVersion: Invalid value: \"x1\": strconv.ParseUint: parsing \"x1\": invalid syntax").await;
        // deletecollection: the list options before the DeleteOptions.
        expect(c, ("DELETE", &format!("{DEPLOYS}?fieldSelector=abc&dryRun=Bogus"), None, ""), 400, "BadRequest",
            "invalid selector: 'abc'; can't understand 'abc'").await;
        // Names: the store's key before the lookup.
        expect(c, ("GET", &format!("{DEPLOYS}/a%25b"), None, ""), 400, "BadRequest",
            "Name parameter invalid: \"a%b\": may not contain '%'").await;
        for (method, path, ct) in [
            ("DELETE", format!("{DEPLOYS}/a%25b"), None),
            ("GET", format!("{DEPLOYS}/a%25b/scale"), None),
            ("PATCH", format!("{DEPLOYS}/a%25b/scale"), Some("application/merge-patch+json")),
        ] {
            expect(c, (method, &path, ct, "{}"), 400, "BadRequest",
                "Name parameter invalid: \"a%b\": may not contain '%'").await;
        }
        // PUT: the body must name the object.
        let nameless = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{}}"#;
        expect(c, ("PUT", &format!("{DEPLOYS}/web"), Some("application/json"), nameless), 400, "BadRequest",
            "the name of the object (web based on URL) was undeterminable: name must be provided").await;
        expect(c, ("PUT", &format!("{DEPLOYS}/web/scale"), Some("application/json"), r#"{"spec":{"replicas":1}}"#), 400, "BadRequest",
            "the name of the object (web based on URL) was undeterminable: name must be provided").await;
        // PATCH: the options before the lookup; a patch other than apply read only once the object is found.
        expect(c, ("PATCH", &format!("{DEPLOYS}/missing?force=false"), Some("application/merge-patch+json"), "{}"), 422, "Invalid",
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch").await;
        expect(c, ("PATCH", &format!("{DEPLOYS}/missing/scale"), Some("application/apply-patch+yaml"), "{}"), 422, "Invalid",
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch").await;
        expect(c, ("PATCH", &format!("{DEPLOYS}/missing?fieldValidation=Bogus"), Some("application/strategic-merge-patch+json"), "{}"), 422, "Invalid",
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"").await;
        expect(c, ("PATCH", &format!("{DEPLOYS}/missing/status"), Some("application/json-patch+json"), "5"), 404, "NotFound",
            "deployments.apps \"missing\" not found").await;
        // POST: the create options (422); a missing namespace before an object without a name.
        expect(c, ("POST", &format!("{DEPLOYS}?fieldManager=a%C2%86"), Some("application/json"), "{}"), 422, "Invalid",
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Invalid value: \"a\\u0086\": invalid character U+0086 (at position 1)").await;
        expect(c, ("POST", "/apis/apps/v1/namespaces/no-such-ns-34/deployments", Some("application/json"), r#"{"apiVersion":"apps/v1","kind":"Deployment"}"#), 404, "NotFound",
            "namespaces \"no-such-ns-34\" not found").await;
        expect(c, ("PATCH", &format!("{DEPLOYS}/missing/scale"), Some("application/json-patch+json"), ""), 404, "NotFound",
            "deployments.apps \"missing\" not found").await;
        // The body's kind is the decoder's 400, before admission's namespace check.
        expect(c, ("POST", "/apis/apps/v1/namespaces/no-such-ns-34/deployments", Some("application/json"), r#"{"apiVersion":"apps/v1","kind":"Secret"}"#), 400, "BadRequest",
            "Secret in version \"v1\" cannot be handled as a Deployment: no kind \"Secret\" is registered for version \"apps/v1\" in scheme \"pkg/runtime/scheme.go:110\"").await;
        // DELETE: the options decoded (400) before they are validated (422).
        expect(c, ("DELETE", &format!("{DEPLOYS}/missing?propagationPolicy=x&gracePeriodSeconds=true"), None, ""), 400, "BadRequest",
            "strconv.ParseInt: parsing \"true\": invalid syntax").await;
        // Core v1: proxies and streams look their object up first; pod log options are validated
        // (422) before the pod is looked up; an Eviction names its pod; a Binding's namespace is
        // admission's; the cluster's own namespaces may not be deleted; a field selector's terms are
        // not trimmed; a LimitRange without a name is named by the server.
        let pods = "/api/v1/namespaces/default/pods";
        for path in [format!("{pods}/a%25b/proxy/x"), "/api/v1/nodes/a%25b/proxy".to_string()] {
            expect(c, ("GET", &path, None, ""), 400, "BadRequest", "Name parameter invalid: \"a%b\": may not contain '%'").await;
        }
        expect(c, ("GET", &format!("{pods}/missing/log?tailLines=-1&limitBytes=0"), None, ""), 422, "Invalid",
            "PodLogOptions \"missing\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]").await;
        expect(c, ("POST", &format!("{pods}/missing/eviction"), Some("application/json"), r#"{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"other"}}"#), 400, "BadRequest",
            "name in URL does not match name in Eviction object").await;
        expect(c, ("POST", "/api/v1/namespaces/no-such-ns-34/pods/p/binding", Some("application/json"), r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{}}"#), 404, "NotFound",
            "namespaces \"no-such-ns-34\" not found").await;
        expect(c, ("POST", &format!("{pods}/p/binding"), Some("application/json"), r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"q"},"target":{"name":"n"}}"#), 400, "BadRequest",
            "name in URL does not match name in Binding object").await;
        expect(c, ("POST", "/api/v1/namespaces/no-such-ns-34/pods/p/eviction", Some("application/json"), r#"{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"q"}}"#), 404, "NotFound",
            "namespaces \"no-such-ns-34\" not found").await;
        expect(c, ("GET", &format!("{pods}/missing/portforward?ports=4476681"), None, ""), 400, "BadRequest",
            "cannot convert to []int32: strconv.ParseUint: parsing \"4476681\": value out of range").await;
        expect(c, ("DELETE", "/api/v1/namespaces/kube-system?dryRun=All", None, ""), 403, "Forbidden",
            "namespaces \"kube-system\" is forbidden: this namespace may not be deleted").await;
        expect(c, ("GET", "/api/v1/namespaces/default/configmaps?fieldSelector=%0D", None, ""), 400, "BadRequest",
            "invalid selector: '\r'; can't understand '\r'").await;
        expect(c, ("POST", "/api/v1/namespaces/default/limitranges?dryRun=All", Some("application/json"), r#"{"apiVersion":"v1","kind":"LimitRange","spec":{"limits":[]}}"#), 200, "", "").await;
        // DELETE: a DeleteOptions body in a media type no decoder takes.
        expect(c, ("DELETE", &format!("{DEPLOYS}/missing?dryRun=Bogus"), Some("text/plain"), "{}"), 415, "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf").await;
    });
    cluster.stop();
}
