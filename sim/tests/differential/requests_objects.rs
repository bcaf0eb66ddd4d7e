//! kubectl on plain objects (namespace `d-obj`): create and apply (client- and server-side, single
//! objects and Lists), get in every output, selectors, paging, dry runs, replace, label, delete, and
//! the errors of each.

use crate::differential::requests::Suite;

const CM_A: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: d-obj
  labels: {app: shop, tier: web}
data:
  color: blue
  size: \"3\"
";

const CM_A2: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: d-obj
  labels: {app: shop, tier: db}
  annotations: {note: changed}
data:
  color: red
";

const LIST: &str = "apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: l1, namespace: d-list, labels: {app: shop, tier: cache}}
  data: {k: v1}
- apiVersion: v1
  kind: Secret
  metadata: {name: l3, namespace: d-list}
  stringData: {password: hunter2}
";

/// The objects the rest of the suite works on, as a multi-document stream.
const STREAM: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: l1, namespace: d-obj, labels: {app: shop, tier: cache}}
data: {k: v1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: l2, namespace: d-obj, labels: {app: other}}
data: {k: v2}
---
apiVersion: v1
kind: Secret
metadata: {name: l3, namespace: d-obj}
stringData: {password: hunter2}
";

const SSA: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: s
  namespace: d-obj
data:
  owner: first
";

const SSA2: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: s
  namespace: d-obj
data:
  owner: second
  extra: yes-it-is
";

const BAD_NAME: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: Bad_Name, namespace: d-obj}
";

const UNKNOWN_FIELD: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: u, namespace: d-obj}
data: {a: b}
color: green
";

const SA_ROLE: &str = "apiVersion: v1
kind: ServiceAccount
metadata: {name: robot, namespace: d-obj}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: d-obj}
rules:
- apiGroups: [\"\"]
  resources: [configmaps]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: robot-reads, namespace: d-obj}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {kind: ServiceAccount, name: robot, namespace: d-obj}
";

pub fn add(s: &mut Suite) {
    s.k("create namespace d-obj");
    s.k("create namespace d-obj");
    s.k_until("get serviceaccount default -n d-obj -o name");
    s.k_until("get configmap kube-root-ca.crt -n d-obj -o name");
    s.k("get namespace d-obj -o json");
    s.k("get namespace d-obj -o yaml");
    s.k("get configmap kube-root-ca.crt -n d-obj -o yaml");
    s.k("get serviceaccount default -n d-obj -o json");

    // Client-side apply.
    s.k_in("apply -f -", CM_A);
    s.k("get configmap a -n d-obj -o json");
    s.k("get configmap a -n d-obj -o yaml");
    s.k("get configmap a -n d-obj");
    s.k("get configmap a -n d-obj -o wide");
    s.k("get configmap a -n d-obj -o name");
    s.k("get configmap a -n d-obj --show-labels");
    s.k_in("apply -f -", CM_A);
    s.k_in("apply -f - --dry-run=client -o yaml", CM_A2);
    s.k_in("apply -f - --dry-run=server -o yaml", CM_A2);
    s.k("get configmap a -n d-obj -o jsonpath={.data}");
    s.k_in("apply -f -", CM_A2);
    s.k("get configmap a -n d-obj -o yaml");
    s.k_in("diff -f -", CM_A);
    // A List (kubectl validates its items with /openapi/v2) in its own namespace, then the same kind of
    // objects as a multi-document stream.
    s.k("create namespace d-list");
    s.k_in("apply -f -", LIST);
    s.k_in("apply -f -", LIST);
    s.k_in("apply --server-side -f -", LIST);
    s.k("get configmaps,secrets -n d-list -o name");
    s.k_in("apply -f -", STREAM);
    s.k_in("apply -f -", STREAM);
    s.k("get configmaps,secrets -n d-obj -o name");
    s.k("get secret l3 -n d-obj -o json");

    // Server-side apply, conflicts and forcing.
    s.k_in("apply --server-side -f -", SSA);
    s.k("get configmap s -n d-obj -o yaml --show-managed-fields");
    s.k_in("apply --server-side --field-manager=other -f -", SSA2);
    s.k_in(
        "apply --server-side --field-manager=other --force-conflicts -f -",
        SSA2,
    );
    s.k("get configmap s -n d-obj -o json --show-managed-fields");
    s.k_in("apply --server-side --dry-run=server -f -", SSA);
    s.k_in("apply --server-side -f -", STREAM);
    s.k("get configmap l1 -n d-obj -o json --show-managed-fields");

    // Create and its errors.
    s.k_in("create -f -", CM_A);
    s.k("create configmap c1 -n d-obj --from-literal=a=1 --from-literal=b=2");
    s.k("create configmap c2 -n d-obj --from-literal=a=1 --dry-run=client -o yaml");
    s.k("create configmap c2 -n d-obj --from-literal=a=1 --dry-run=server -o yaml");
    s.k("get configmap c2 -n d-obj");
    s.k_in("create -f -", BAD_NAME);
    s.k_in("create -f - --validate=strict", UNKNOWN_FIELD);
    s.k_in("create -f - --validate=false", UNKNOWN_FIELD);
    s.k("get configmap u -n d-obj -o yaml");
    s.k("create secret generic pw -n d-obj --from-literal=user=admin --from-literal=pass=s3cret");
    s.k("get secret pw -n d-obj -o yaml");
    s.k("create secret docker-registry reg -n d-obj --docker-server=registry.invalid --docker-username=u --docker-password=p");
    s.k("get secret reg -n d-obj -o jsonpath={.type}");
    s.k("create service clusterip web -n d-obj --tcp=80:8080");
    s.k("get service web -n d-obj -o yaml");
    s.k("get service web -n d-obj -o wide");
    s.k_in("apply -f -", SA_ROLE);
    s.k("get role reader -n d-obj -o yaml");
    s.k("get rolebinding robot-reads -n d-obj -o wide");
    s.k("get serviceaccount robot -n d-obj -o yaml");
    s.k("create role maker -n d-obj --verb=create --resource=configmaps");
    s.k("create rolebinding maker -n d-obj --role=maker --user=jane");
    s.k("auth can-i create configmaps -n d-obj --as=jane");
    s.k("auth can-i delete configmaps -n d-obj --as=jane");
    s.k("auth can-i list configmaps -n d-obj --as=system:serviceaccount:d-obj:robot");

    // Replace.
    s.k_in("replace -f -", CM_A);
    s.k("get configmap a -n d-obj -o yaml");
    s.k_in(
        "replace -f -",
        &CM_A.replace("name: a\n", "name: nothing-here\n"),
    );
    s.k_in("replace --force -f -", CM_A2);
    s.k("get configmap a -n d-obj -o jsonpath={.data.color}");

    // Labels and annotations.
    s.k("label configmap a -n d-obj stage=prod");
    s.k("label configmap a -n d-obj stage=dev");
    s.k("label configmap a -n d-obj stage=dev --overwrite");
    s.k("label configmap a -n d-obj stage-");
    s.k("annotate configmap a -n d-obj owner=team-a");
    s.k("annotate configmap l1 -n d-obj owner=team-b --resource-version=1");

    // Selectors, sorting, paging and other outputs.
    s.k("get configmaps -n d-obj");
    s.k("get configmaps -n d-obj -l app=shop");
    s.k("get configmaps -n d-obj -l app=shop,tier!=db -o name");
    s.k("get configmaps -n d-obj -l app -o name");
    s.k("get configmaps -n d-obj -l !app -o name");
    s.k_args(
        &[
            "get",
            "configmaps",
            "-n",
            "d-obj",
            "-l",
            "tier in (db,cache)",
            "-o",
            "name",
        ],
        None,
    );
    s.k_args(
        &[
            "get",
            "configmaps",
            "-n",
            "d-obj",
            "-l",
            "tier notin (db)",
            "-o",
            "name",
        ],
        None,
    );
    s.k("get configmaps -n d-obj -l app=shop -L tier");
    s.k("get configmaps -n d-obj -l =bad");
    s.k("get configmaps -n d-obj --field-selector metadata.name=l2 -o name");
    s.k("get configmaps -n d-obj --field-selector metadata.name!=l2,metadata.namespace=d-obj -o name");
    s.k("get configmaps -n d-obj --field-selector data.k=v1");
    s.k("get secrets -n d-obj --field-selector type=Opaque -o name");
    s.k("get configmaps -n d-obj --chunk-size=1 -o name");
    s.k("get configmaps -n d-obj --chunk-size=2");
    s.k("get configmaps,secrets -n d-obj --chunk-size=1 -o json");
    s.k("get configmaps -n d-obj --sort-by=.metadata.name -o name");
    s.k("get configmaps -n d-obj -o custom-columns=NAME:.metadata.name,TIER:.metadata.labels.tier");
    s.k_args(
        &[
            "get",
            "configmaps",
            "-n",
            "d-obj",
            "-o",
            "go-template={{range.items}}{{.metadata.name}}:{{len .data}},{{end}}",
        ],
        None,
    );
    s.k("get configmap a%2Fb -n d-obj");
    s.k("get configmaps -A -l app=shop -o name");
    s.k("get configmaps -A -l app=shop");
    s.k("get all -n d-obj");
    s.k("get configmap missing -n d-obj");
    s.k("get configmap missing -n d-obj --ignore-not-found");
    s.k("get nosuchkind");
    s.k("get configmaps -n no-such-namespace");

    // Deletion.
    s.k("delete configmap c1 -n d-obj --dry-run=server");
    s.k("delete configmap c1 -n d-obj --dry-run=client");
    s.k("get configmap c1 -n d-obj -o name");
    s.k("delete configmap c1 -n d-obj");
    s.k("delete configmap c1 -n d-obj");
    s.k("delete configmap c1 -n d-obj --ignore-not-found");
    s.k("delete configmaps -n d-obj -l app=other");
    s.k("delete configmap l1 -n d-obj --cascade=orphan");
    s.k("delete configmap a -n d-obj --cascade=foreground");
    s.k("delete configmap s -n d-obj --grace-period=0 --force");
    s.k("delete secret pw -n d-obj --now");
    s.k("get configmaps -n d-obj -o name");

    // A namespace's life.
    s.k("create namespace d-tmp");
    s.k("create configmap x -n d-tmp --from-literal=a=b");
    s.k("delete namespace d-tmp --timeout=60s");
    s.k("get namespace d-tmp");
    s.k("create namespace Bad_Namespace");
}
