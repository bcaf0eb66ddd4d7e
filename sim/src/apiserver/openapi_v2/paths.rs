//! The `paths` of the OpenAPI v2 document, one set per served type as kube-apiserver's installer
//! and apiextensions-apiserver's builder register them (collection, object, `status`, `scale`,
//! and the `finalize` and `token` subresources the sim serves). Each operation carries `consumes`
//! (kubectl's client-side apply reads the patch types there), `x-kubernetes-action` and
//! `x-kubernetes-group-version-kind`.

use serde_json::{Map, Value, json};

use super::params::{
    DELETE_PARAMS, LIST_PARAMS, body, name_param, patch_params, query, reference, write_params,
};
use crate::apiserver::openapi::component_name;
use crate::registry::ResourceType;

pub(super) const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";

/// A group or version as kube-apiserver turns it into an operation id or tag: letters, `_` and
/// (not first) digits kept, each other character dropped and the next letter capitalized.
fn id_part(s: &str, capitalize_first: bool) -> String {
    let mut out = String::new();
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

/// `" a "`, `" an "`, or `" "` for a plural-looking kind (`Endpoints`), as kube-apiserver's
/// `GetArticleForNoun` words "create a Pod".
fn article(kind: &str) -> &'static str {
    if kind.ends_with('s') && !kind.ends_with("ss") {
        " "
    } else if kind
        .chars()
        .next()
        .is_some_and(|c| "aeiou".contains(c.to_ascii_lowercase()))
    {
        " an "
    } else {
        " a "
    }
}

/// The kinds whose delete answers with the deleted object rather than a `Status` (their
/// registries return it), by `group/plural`.
const DELETE_RETURNS_OBJECT: &[&str] = &[
    "/persistentvolumeclaims",
    "/persistentvolumes",
    "/pods",
    "/podtemplates",
    "/resourcequotas",
    "/serviceaccounts",
    "/services",
    "storage.k8s.io/csidrivers",
    "storage.k8s.io/storageclasses",
];

/// How the operations of one type are named and what they consume and produce.
struct Ops<'a> {
    t: &'a ResourceType,
    /// `AppsV1`, `CoreV1`, `ExampleComV1`.
    gv: String,
    tag: String,
    crd: bool,
}

impl Ops<'_> {
    fn new(t: &ResourceType) -> Ops<'_> {
        let group = if t.group.is_empty() {
            "core"
        } else {
            t.group.strip_suffix(".k8s.io").unwrap_or(&t.group)
        };
        Ops {
            t,
            gv: format!("{}{}", id_part(group, true), id_part(&t.version, true)),
            tag: format!("{}_{}", id_part(group, false), id_part(&t.version, false)),
            crd: t.crd,
        }
    }

    /// One operation: `verb` is the id's prefix (`read`, `list`), `rest` what follows the
    /// group-version (`NamespacedDeployment`).
    #[allow(clippy::too_many_arguments)]
    fn op(
        &self,
        action: &str,
        verb: &str,
        rest: &str,
        description: String,
        params: Vec<Value>,
        codes: &[(&str, &str)],
        schema: &str,
    ) -> Value {
        let gvk = json!({"group": self.t.group, "kind": self.t.kind, "version": self.t.version});
        self.op_for(action, verb, rest, description, params, codes, schema, gvk)
    }

    /// [`Ops::op`] for a subresource whose body is another kind (`Scale`, `TokenRequest`).
    #[allow(clippy::too_many_arguments)]
    fn op_for(
        &self,
        action: &str,
        verb: &str,
        rest: &str,
        description: String,
        params: Vec<Value>,
        codes: &[(&str, &str)],
        schema: &str,
        gvk: Value,
    ) -> Value {
        let (consumes, produces) = match (self.crd, action) {
            (true, "patch") => (
                json!([
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/apply-patch+yaml"
                ]),
                json!(["application/json", "application/yaml"]),
            ),
            (true, _) => (
                json!(["application/json", "application/yaml"]),
                json!(["application/json", "application/yaml"]),
            ),
            (false, "patch") => (
                json!([
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/strategic-merge-patch+json",
                    "application/apply-patch+yaml"
                ]),
                json!([
                    "application/json",
                    "application/yaml",
                    "application/vnd.kubernetes.protobuf"
                ]),
            ),
            (false, "list") => (
                json!(["*/*"]),
                json!([
                    "application/json",
                    "application/yaml",
                    "application/vnd.kubernetes.protobuf",
                    "application/json;stream=watch",
                    "application/vnd.kubernetes.protobuf;stream=watch"
                ]),
            ),
            (false, _) => (
                json!(["*/*"]),
                json!([
                    "application/json",
                    "application/yaml",
                    "application/vnd.kubernetes.protobuf"
                ]),
            ),
        };
        let mut responses = Map::new();
        for (code, text) in codes {
            responses.insert(
                code.to_string(),
                json!({"description": text, "schema": {"$ref": format!("#/definitions/{schema}")}}),
            );
        }
        responses.insert("401".into(), json!({"description": "Unauthorized"}));
        let mut op = json!({
            "description": description,
            "consumes": consumes,
            "produces": produces,
            "schemes": ["https"],
            "tags": [self.tag],
            "operationId": format!("{verb}{}{rest}", self.gv),
            "responses": responses,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        });
        if !params.is_empty() {
            op["parameters"] = Value::Array(params);
        }
        op
    }
}

const OK: &[(&str, &str)] = &[("200", "OK")];
const WRITTEN: &[(&str, &str)] = &[("200", "OK"), ("201", "Created")];
const CREATED: &[(&str, &str)] = &[("200", "OK"), ("201", "Created"), ("202", "Accepted")];
const DELETED: &[(&str, &str)] = &[("200", "OK"), ("202", "Accepted")];

/// The paths of one served type, added to `out`.
fn paths_for(t: &ResourceType, out: &mut Map<String, Value>) {
    let ops = Ops::new(t);
    let kind = &t.kind;
    let schema = component_name(t);
    let base = if t.group.is_empty() {
        format!("/api/{}", t.version)
    } else {
        format!("/apis/{}/{}", t.group, t.version)
    };
    let (coll, scoped) = if t.namespaced {
        (
            format!("{base}/namespaces/{{namespace}}/{}", t.plural),
            format!("Namespaced{kind}"),
        )
    } else {
        (format!("{base}/{}", t.plural), kind.clone())
    };
    let scope_params: Vec<Value> = if t.namespaced {
        vec![reference("namespace-vgWSWtn3")]
    } else {
        Vec::new()
    };
    let pretty = reference("pretty-tJGM1-ng");
    // The legacy `bindings` collection is create-only too (the handler binds; there is no BindingList).
    if t.create_only || (t.group.is_empty() && t.plural == "bindings") {
        let mut params = vec![
            query("dryRun"),
            reference("fieldManager-Qy4HdaTW"),
            query("fieldValidation"),
        ];
        params.extend(scope_params);
        params.push(pretty);
        out.insert(
            coll,
            json!({
                "post": ops.op("post", "create", &scoped, format!("create{}{kind}", article(kind)), vec![body(&schema)], CREATED, &schema),
                "parameters": params,
            }),
        );
        return;
    }
    let list_params = || LIST_PARAMS.iter().map(|k| reference(k)).collect::<Vec<_>>();
    let list_schema = format!("{schema}List");
    let list_doc = if t.crd {
        format!("list objects of kind {kind}")
    } else {
        format!("list or watch objects of kind {kind}")
    };
    if t.namespaced {
        let mut params = list_params();
        params.insert(5, pretty.clone());
        out.insert(
            format!("{base}/{}", t.plural),
            json!({
                "get": ops.op("list", "list", &format!("{kind}ForAllNamespaces"), list_doc.clone(), Vec::new(), OK, &list_schema),
                "parameters": params,
            }),
        );
    }
    let delete_collection = if t.crd {
        // apiextensions-apiserver gives deletecollection the list options.
        list_params()
    } else {
        let mut params = vec![reference("body-2Y1dVQaQ"), reference("continue-QfD61s0i")];
        params.push(query("dryRun"));
        params.push(reference("fieldSelector-xIcQKXFG"));
        params.extend(DELETE_PARAMS[..2].iter().map(|k| reference(k)));
        params.push(reference("labelSelector-5Zw57w4C"));
        params.push(reference("limit-1NfNmdNH"));
        params.extend(DELETE_PARAMS[2..].iter().map(|k| reference(k)));
        params.extend(LIST_PARAMS[5..9].iter().map(|k| reference(k)));
        params
    };
    let mut coll_params = scope_params.clone();
    coll_params.push(pretty.clone());
    let mut collection = json!({
        "get": ops.op("list", "list", &scoped, list_doc, list_params(), OK, &list_schema),
        "post": ops.op("post", "create", &scoped, format!("create{}{kind}", article(kind)), write_params(&schema), CREATED, &schema),
        "parameters": coll_params,
    });
    // Namespaces cannot be deleted as a collection.
    if !(t.group.is_empty() && t.plural == "namespaces") {
        collection["delete"] = ops.op(
            "deletecollection",
            "delete",
            &format!("Collection{scoped}"),
            format!("delete collection of {kind}"),
            delete_collection,
            OK,
            &format!("{META}.Status"),
        );
    }
    out.insert(coll.clone(), collection);
    let mut item_params = vec![name_param(kind)];
    item_params.extend(scope_params);
    item_params.push(pretty);
    let read_params = || {
        if t.crd {
            vec![reference("resourceVersion-5WAnf1kx")]
        } else {
            Vec::new()
        }
    };
    let patched = if t.crd { OK } else { WRITTEN };
    let deleted = if DELETE_RETURNS_OBJECT.contains(&t.store_key().as_str()) {
        schema.clone()
    } else {
        format!("{META}.Status")
    };
    let mut delete = vec![reference("body-2Y1dVQaQ"), query("dryRun")];
    delete.extend(DELETE_PARAMS.iter().map(|k| reference(k)));
    out.insert(
        format!("{coll}/{{name}}"),
        json!({
            "get": ops.op("get", "read", &scoped, format!("read the specified {kind}"), read_params(), OK, &schema),
            "put": ops.op("put", "replace", &scoped, format!("replace the specified {kind}"), write_params(&schema), WRITTEN, &schema),
            "delete": ops.op("delete", "delete", &scoped, format!("delete{}{kind}", article(kind)), delete, DELETED, &deleted),
            "patch": ops.op("patch", "patch", &scoped, format!("partially update the specified {kind}"), patch_params(), patched, &schema),
            "parameters": item_params,
        }),
    );
    let own_gvk = json!({"group": t.group, "kind": kind, "version": t.version});
    let mut subresources: Vec<(&str, String, Value)> = Vec::new();
    if t.status_subresource {
        subresources.push(("status", schema.clone(), own_gvk.clone()));
    }
    if t.scale.is_some() {
        // Built-in scale operations carry the Scale kind, a CRD's its own.
        let scale_gvk = if t.crd {
            own_gvk
        } else {
            json!({"group": "autoscaling", "kind": "Scale", "version": "v1"})
        };
        subresources.push((
            "scale",
            "io.k8s.api.autoscaling.v1.Scale".to_string(),
            scale_gvk,
        ));
    }
    for (sub, sub_schema, gvk) in subresources {
        let rest = format!("{scoped}{}{}", sub[..1].to_uppercase(), &sub[1..]);
        out.insert(
            format!("{coll}/{{name}}/{sub}"),
            json!({
                "get": ops.op_for("get", "read", &rest, format!("read {sub} of the specified {kind}"), read_params(), OK, &sub_schema, gvk.clone()),
                "put": ops.op_for("put", "replace", &rest, format!("replace {sub} of the specified {kind}"), write_params(&sub_schema), WRITTEN, &sub_schema, gvk.clone()),
                "patch": ops.op_for("patch", "patch", &rest, format!("partially update {sub} of the specified {kind}"), patch_params(), patched, &sub_schema, gvk),
                "parameters": out.get(&format!("{coll}/{{name}}")).and_then(|p| p.get("parameters")).cloned().unwrap_or_default(),
            }),
        );
    }
    let write_query = || {
        vec![
            query("dryRun"),
            reference("fieldManager-Qy4HdaTW"),
            query("fieldValidation"),
            name_param(kind),
        ]
    };
    if t.group.is_empty() && t.plural == "namespaces" {
        let mut params = write_query();
        params.push(reference("pretty-tJGM1-ng"));
        out.insert(
            format!("{coll}/{{name}}/finalize"),
            json!({
                "put": ops.op("put", "replace", &format!("{kind}Finalize"), format!("replace finalize of the specified {kind}"), vec![body(&schema)], WRITTEN, &schema),
                "parameters": params,
            }),
        );
    }
    if t.group.is_empty() && t.plural == "serviceaccounts" {
        let token = "io.k8s.api.authentication.v1.TokenRequest";
        let mut params = write_query();
        params.push(reference("namespace-vgWSWtn3"));
        params.push(reference("pretty-tJGM1-ng"));
        out.insert(
            format!("{coll}/{{name}}/token"),
            json!({
                "post": ops.op_for("post", "create", &format!("{scoped}Token"), format!("create token of a {kind}"), vec![body(token)], CREATED, token,
                    json!({"group": "authentication.k8s.io", "kind": "TokenRequest", "version": "v1"})),
                "parameters": params,
            }),
        );
    }
}

/// Every served type's paths.
pub fn paths(types: &[ResourceType]) -> Map<String, Value> {
    let mut out = Map::new();
    for t in types {
        paths_for(t, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn names_operations_as_kube_apiserver() {
        assert_eq!(id_part("rbac.authorization", true), "RbacAuthorization");
        assert_eq!(id_part("example.com", false), "exampleCom");
        assert_eq!(id_part("v1beta1", true), "V1beta1");
        let p = paths(&Registry::default().all());
        let item = &p["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
        assert_eq!(
            item["patch"]["operationId"],
            "patchAppsV1NamespacedDeployment"
        );
        assert_eq!(
            item["patch"]["consumes"][2],
            "application/strategic-merge-patch+json"
        );
        assert_eq!(
            item["get"]["x-kubernetes-group-version-kind"]["kind"],
            "Deployment"
        );
        let all = &p["/api/v1/configmaps"]["get"];
        assert_eq!(all["operationId"], "listCoreV1ConfigMapForAllNamespaces");
        assert_eq!(
            p["/apis/apps/v1/namespaces/{namespace}/deployments"]["delete"]["operationId"],
            "deleteAppsV1CollectionNamespacedDeployment"
        );
        assert_eq!(
            p["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["get"]["operationId"],
            "readAppsV1NamespacedDeploymentScale"
        );
        assert_eq!(
            p["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]["post"]["operationId"],
            "createAuthorizationV1SelfSubjectAccessReview"
        );
    }
}
