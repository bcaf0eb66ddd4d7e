//! What triggers a controller besides its own objects, against the test's cluster (local or real) with the
//! real kubectl: kube-rs's configmapgen shape, a ConfigMapGenerator that owns the ConfigMap it writes and
//! watches Secrets labelled with its name. An edit or a deletion of the owned ConfigMap, and a labelled
//! Secret, reconcile the generator within 1 s of the API server accepting the change (made through the
//! client, so kubectl's start-up is not counted); its handler never asks for a requeue, so nothing else
//! would.

use crate::controller_support as support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Patch, PatchParams};
use kube::{CustomResource, ResourceExt};
use piceli_runtime::controller::{
    Action, Context, ControllerOptions, Controllers, OwnerMapping, RunOptions,
};
use piceli_test_support::Cluster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use support::{Operator, kubectl, kubectl_stdin, ok, wait_for};

/// kube-rs's example resource: a ConfigMap with this content.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "ConfigMapGenerator",
    namespaced
)]
pub struct ConfigMapGeneratorSpec {
    /// The ConfigMap's `content`.
    pub content: String,
}

const NS: &str = "gens";

/// When each reconcile of a generator ran.
#[derive(Clone, Default)]
struct Reconciles(Arc<Mutex<Vec<Instant>>>);

impl Reconciles {
    fn count(&self) -> usize {
        self.0.lock().expect("reconciles").len()
    }

    /// How long after `since` the first reconcile after it ran, waiting up to 10 s.
    fn next_after(&self, since: Instant) -> Duration {
        wait_for(
            "a reconcile of the generator",
            Duration::from_secs(10),
            || {
                self.0
                    .lock()
                    .expect("reconciles")
                    .iter()
                    .any(|t| *t > since)
            },
        );
        let runs = self.0.lock().expect("reconciles");
        runs.iter()
            .find(|t| **t > since)
            .map(|t| t.duration_since(since))
            .unwrap_or_default()
    }
}

async fn generate(
    gen_: Arc<ConfigMapGenerator>,
    cx: Context,
    runs: Reconciles,
) -> Result<Action, kube::Error> {
    runs.0.lock().expect("reconciles").push(Instant::now());
    let name = format!("{}-cm", gen_.name_any());
    let child = ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(name.clone()),
            owner_references: Context::owner_ref(gen_.as_ref()).map(|o| vec![o]),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            "content".into(),
            gen_.spec.content.clone(),
        )])),
        ..Default::default()
    };
    cx.api::<ConfigMap>()
        .patch(
            &name,
            &PatchParams::apply("gen").force(),
            &Patch::Apply(&child),
        )
        .await?;
    Ok(Action::await_change())
}

fn content(kc: &std::path::Path) -> Option<String> {
    let (code, out, _) = kubectl(
        kc,
        &[
            "-n",
            NS,
            "get",
            "configmap",
            "g-cm",
            "-o",
            "jsonpath={.data.content}",
        ],
    );
    (code == 0).then_some(out)
}

#[test]
fn an_owned_child_edited_or_deleted_and_a_watched_secret_reconcile_the_owner_within_a_second() {
    let cluster = Cluster::start();
    let kc = cluster.kubeconfig_path().to_path_buf();
    let crd = piceli_runtime::controller::custom_resource_definition::<ConfigMapGenerator>();
    let crd = serde_json::to_string(&crd.0).expect("CRD as JSON");
    let (code, _, err) = kubectl_stdin(&kc, &["apply", "-f", "-"], Some(&crd));
    assert_eq!(code, 0, "{err}");
    ok(&kc, &["create", "namespace", NS]);
    wait_for("the kind to be served", Duration::from_secs(30), || {
        kubectl(&kc, &["-n", NS, "get", "configmapgenerators"]).0 == 0
    });

    let runs = Reconciles::default();
    let handler_runs = runs.clone();
    let options = ControllerOptions::default()
        .owns::<ConfigMap>()
        .watches::<Secret>(OwnerMapping::Label("generator".into()));
    let controllers = Controllers::new("gen").reconcile("gen", options, move |g, cx| {
        generate(g, cx, handler_runs.clone())
    });
    let operator = Operator::start(
        controllers,
        || cluster.client().expect("client"),
        RunOptions {
            operator_namespace: NS.into(),
            identity: "test-operator".into(),
            leader: None,
        },
    );

    let generator = format!(
        "apiVersion: example.com/v1\nkind: ConfigMapGenerator\nmetadata: {{name: g, namespace: {NS}}}\nspec: {{content: hello}}\n"
    );
    let (code, _, err) = kubectl_stdin(&kc, &["apply", "-f", "-"], Some(&generator));
    assert_eq!(code, 0, "{err}");
    wait_for("the generated ConfigMap", Duration::from_secs(15), || {
        content(&kc).as_deref() == Some("hello")
    });
    // Changes are made through the client, on a runtime of the test's own.
    let api = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let client = api.block_on(async { cluster.client().expect("client") });
    let configmaps: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), NS);
    let secrets: kube::Api<Secret> = kube::Api::namespaced(client, NS);
    // The reconcile's own write is seen too; let it settle before measuring.
    std::thread::sleep(Duration::from_millis(500));

    // Edited: the owner puts its content back.
    let before = runs.count();
    let edited = Instant::now();
    api.block_on(configmaps.patch(
        "g-cm",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({ "data": { "content": "tampered" } })),
    ))
    .expect("the child edited");
    let took = runs.next_after(edited);
    assert!(
        took < Duration::from_secs(1),
        "the owner reconciled {took:?} after its child was edited"
    );
    assert!(runs.count() > before);
    wait_for("the content restored", Duration::from_secs(5), || {
        content(&kc).as_deref() == Some("hello")
    });
    std::thread::sleep(Duration::from_millis(500));

    // Deleted: the owner writes it again.
    let deleted = Instant::now();
    api.block_on(configmaps.delete("g-cm", &Default::default()))
        .expect("the child deleted");
    let took = runs.next_after(deleted);
    assert!(
        took < Duration::from_secs(1),
        "the owner reconciled {took:?} after its child was deleted"
    );
    wait_for(
        "the ConfigMap written again",
        Duration::from_secs(5),
        || content(&kc).as_deref() == Some("hello"),
    );
    std::thread::sleep(Duration::from_millis(500));

    // A Secret whose label names the generator reconciles it; one naming no generator does not.
    ok(
        &kc,
        &[
            "-n",
            NS,
            "create",
            "secret",
            "generic",
            "other",
            "--from-literal=k=v",
        ],
    );
    let quiet = runs.count();
    ok(
        &kc,
        &[
            "-n",
            NS,
            "create",
            "secret",
            "generic",
            "creds",
            "--from-literal=k=v",
        ],
    );
    let labelled = Instant::now();
    api.block_on(secrets.patch(
        "creds",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({ "metadata": { "labels": { "generator": "g" } } })),
    ))
    .expect("the Secret labelled");
    let took = runs.next_after(labelled);
    assert!(
        took < Duration::from_secs(1),
        "the generator reconciled {took:?} after a Secret labelled with its name"
    );
    assert_eq!(
        quiet,
        runs.count() - 1,
        "an unlabelled Secret triggers nothing; the labelled one once"
    );
    operator.stop();
}
