//! The app's live objects read with one list per kind and namespace (by the app's labels), instead of
//! a GET per object: what a plan of an app that is already applied reads.

use super::plan::Desired;
use super::resources::Served;
use super::target::Connection;
use futures::{StreamExt, stream};
use kube::api::ListParams;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// How many lists run at once.
const CONCURRENCY: usize = 8;

/// `(group, kind, namespace, name)` of a live object.
type Key = (String, String, Option<String>, String);

/// Live objects found by the lists.
#[derive(Default)]
pub struct Listed {
    objects: HashMap<Key, Value>,
}

impl Listed {
    /// The listed live object, if the lists found it (an object they did not find may still exist
    /// without the app's labels: read it alone).
    pub fn get(&self, served: &Served, namespace: Option<&str>, name: &str) -> Option<&Value> {
        let key = (
            served.resource.group.clone(),
            served.resource.kind.clone(),
            namespace.map(str::to_string),
            name.to_string(),
        );
        self.objects.get(&key)
    }
}

/// List the app's objects of every kind (and namespace) the desired objects have. A list that fails
/// (forbidden, say) is left out: its objects are read one by one, which reports a real error.
pub async fn ours(
    conn: &Connection,
    desired: &[Desired],
    app: &str,
    namespace_exists: bool,
) -> Listed {
    let mut lists: BTreeSet<(String, String, Option<String>)> = BTreeSet::new();
    let mut served_by: HashMap<(String, String), &Served> = HashMap::new();
    for d in desired {
        if d.namespace.is_some() && !namespace_exists {
            continue;
        }
        let r = &d.served.resource;
        lists.insert((r.group.clone(), r.kind.clone(), d.namespace.clone()));
        served_by.insert((r.group.clone(), r.kind.clone()), &d.served);
    }
    let selector = format!("app.kubernetes.io/managed-by=piceli,app.kubernetes.io/name={app}");
    let found: Vec<Vec<(Key, Value)>> = stream::iter(lists.into_iter().filter_map(|(g, k, ns)| {
        let served = *served_by.get(&(g, k))?;
        let selector = &selector;
        Some(async move { list(conn, served, ns, selector).await })
    }))
    .buffer_unordered(CONCURRENCY)
    .collect()
    .await;
    Listed {
        objects: found.into_iter().flatten().collect(),
    }
}

async fn list(
    conn: &Connection,
    served: &Served,
    namespace: Option<String>,
    selector: &str,
) -> Vec<(Key, Value)> {
    let params = ListParams::default().labels(selector);
    let Ok(items) =
        super::resources::list(&conn.client, served, namespace.as_deref(), &params).await
    else {
        return Vec::new();
    };
    let r = &served.resource;
    items
        .into_iter()
        .filter_map(|mut value| {
            // As a GET shows it (`resources::read`): list items may come without their type.
            let map = value.as_object_mut()?;
            map.entry("apiVersion")
                .or_insert_with(|| Value::String(r.api_version.clone()));
            map.entry("kind")
                .or_insert_with(|| Value::String(r.kind.clone()));
            let name = value["metadata"]["name"].as_str()?.to_string();
            let ns = served
                .namespaced
                .then(|| value["metadata"]["namespace"].as_str().map(str::to_string))
                .flatten();
            Some(((r.group.clone(), r.kind.clone(), ns, name), value))
        })
        .collect()
}
