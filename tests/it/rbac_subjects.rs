//! Bindings to users, groups, ServiceAccounts of other namespaces and ClusterRoles the app does not
//! declare render as the RBAC API writes them, in the written order, and parse back into k8s-openapi.

use piceli::k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding, RoleRef, Subject};
use piceli::runtime::render::{Options, render};
use serde_json::Value;

piceli::app! {
    app access;
    target local = local(namespace: "shop");

    service_account api;
    role pod-reader {
        rules: [rule(groups: [""], resources: ["pods"], verbs: ["get", "list"])],
    }
    cluster_role installer {
        rules: [rule(groups: ["certificates.k8s.io"], resources: ["signers"], verbs: ["approve"])],
    }

    role_binding readers {
        role: pod-reader,
        subjects: [user("jane@example.com"), api, group("team-a"), service_account("ci", "deployer")],
    }
    role_binding viewers { role: cluster_role("view"), subjects: [group("system:authenticated")] }
    cluster_role_binding installers {
        role: installer,
        subjects: [service_account("csr-signer", "installer")],
    }
    cluster_role_binding aggregate { role: cluster_role("system:aggregate-to-view"), subjects: [api] }
}

fn find(objects: &[Value], kind: &str, name: &str) -> Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn subject(kind: &str, name: &str, namespace: Option<&str>) -> Subject {
    Subject {
        api_group: (kind != "ServiceAccount").then(|| "rbac.authorization.k8s.io".into()),
        kind: kind.into(),
        name: name.into(),
        namespace: namespace.map(String::from),
    }
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: "rbac.authorization.k8s.io".into(),
        kind: kind.into(),
        name: name.into(),
    }
}

#[test]
fn subjects_and_role_refs_render_as_the_rbac_api_writes_them() {
    let objects = render(&access::app(), &Options::default())
        .expect("renders")
        .objects;
    let readers: RoleBinding =
        serde_json::from_value(find(&objects, "RoleBinding", "readers")).expect("a RoleBinding");
    assert_eq!(readers.role_ref, role_ref("Role", "pod-reader"));
    assert_eq!(
        readers.subjects.expect("subjects"),
        [
            subject("User", "jane@example.com", None),
            subject("ServiceAccount", "api", Some("shop")),
            subject("Group", "team-a", None),
            subject("ServiceAccount", "deployer", Some("ci")),
        ]
    );
    let viewers: RoleBinding =
        serde_json::from_value(find(&objects, "RoleBinding", "viewers")).expect("a RoleBinding");
    assert_eq!(viewers.role_ref, role_ref("ClusterRole", "view"));
    let installers: ClusterRoleBinding =
        serde_json::from_value(find(&objects, "ClusterRoleBinding", "installers"))
            .expect("a ClusterRoleBinding");
    assert_eq!(installers.role_ref, role_ref("ClusterRole", "installer"));
    assert_eq!(
        installers.subjects.expect("subjects"),
        [subject("ServiceAccount", "installer", Some("csr-signer"))]
    );
    let aggregate: ClusterRoleBinding =
        serde_json::from_value(find(&objects, "ClusterRoleBinding", "aggregate"))
            .expect("a ClusterRoleBinding");
    assert_eq!(
        aggregate.role_ref,
        role_ref("ClusterRole", "system:aggregate-to-view")
    );
    // Nothing is rendered for the ClusterRoles someone else makes.
    assert!(
        !objects
            .iter()
            .any(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == "view")
    );
}
