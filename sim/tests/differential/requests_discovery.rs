//! Discovery and the server's own documents: /api, /apis, every served group-version, aggregated
//! discovery, OpenAPI v2 and v3, /version and the health endpoints, and kubectl's views of them.

use crate::differential::requests::Suite;

/// The aggregated discovery media type (what kubectl 1.33 and client-go ask for first).
const AGGREGATED: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.9";

/// Group-versions both clusters serve (a 1.33 kube-apiserver with its default APIs).
pub const GROUP_VERSIONS: &[&str] = &[
    "apps/v1",
    "batch/v1",
    "networking.k8s.io/v1",
    "autoscaling/v1",
    "autoscaling/v2",
    "policy/v1",
    "rbac.authorization.k8s.io/v1",
    "admissionregistration.k8s.io/v1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "events.k8s.io/v1",
    "storage.k8s.io/v1",
    "scheduling.k8s.io/v1",
    "node.k8s.io/v1",
    "apiextensions.k8s.io/v1",
    "authorization.k8s.io/v1",
    "authentication.k8s.io/v1",
    "certificates.k8s.io/v1",
    "apiregistration.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1",
];

pub fn add(s: &mut Suite) {
    s.get("/api");
    s.get("/api/v1");
    s.get("/apis");
    for gv in GROUP_VERSIONS {
        s.get(&format!("/apis/{gv}"));
    }
    for group in ["apps", "batch", "rbac.authorization.k8s.io", "autoscaling"] {
        s.get(&format!("/apis/{group}"));
    }
    s.get("/apis/no.such.group");
    s.get("/apis/apps/v9");
    s.get("/api/v2");
    s.get_accept("/api", AGGREGATED);
    s.get_accept("/apis", AGGREGATED);
    s.get("/openapi/v2");
    s.get("/openapi/v3");
    s.get("/openapi/v3/apis/apps/v1");
    s.get("/version");
    s.get("/healthz");
    s.get("/livez");
    s.get("/readyz");
    s.get("/no/such/path");
    s.k("api-versions");
    s.k("api-resources");
    s.k("api-resources --namespaced=false");
    s.k("api-resources --api-group=apps -o wide");
    s.k("api-resources --verbs=list,watch -o name");
    s.k("explain configmap.data");
    s.k("explain deployment.spec.strategy");
    s.k("explain pods.spec.containers.ports --recursive");
    s.k("get --raw /api/v1");
    s.k("auth can-i create deployments");
    s.k("auth can-i --list -n default");
    s.k("auth whoami -o json");
}
