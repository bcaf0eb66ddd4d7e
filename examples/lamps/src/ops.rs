//! The handlers: `reconcile_lamp` (level-based, with a finalizer) keeps each Lamp's ConfigMap child and
//! its status; `Audit` (edge style) records an Event on each audited ConfigMap it sees created or changed.

use std::collections::BTreeMap;
use std::sync::Arc;

use piceli::controller::status::{condition, set_condition};
use piceli::controller::{Action, Context, Controller, Event, EventType};
use piceli::k8s_openapi::api::core::v1::ConfigMap;
use piceli::kube::ResourceExt;
use piceli::kube::api::{Patch, PatchParams};

/// A lamp: it shines in a colour.
#[piceli::custom_resource(
    group = "example.com",
    version = "v1",
    kind = "Lamp",
    namespaced,
    status = "LampStatus"
)]
pub struct LampSpec {
    /// The colour it shines in.
    pub color: String,
}

/// What the controller reports.
#[piceli::schema]
#[derive(Default)]
pub struct LampStatus {
    /// Ready, with observedGeneration.
    #[serde(default)]
    #[schemars(schema_with = "conditions_schema")]
    pub conditions: Vec<piceli::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
    /// The colour it shines in now.
    pub shining: Option<String>,
}

fn conditions_schema(_: &mut piceli::schemars::SchemaGenerator) -> piceli::schemars::Schema {
    piceli::schemars::json_schema!({
        "type": "array",
        "items": { "type": "object", "x-kubernetes-preserve-unknown-fields": true }
    })
}

/// The Lamp the app ships with (`include objects`): the plan creates the Lamp CRD before it.
pub fn shipped() -> Vec<piceli::Object> {
    let hall = Lamp::new(
        "hall",
        LampSpec {
            color: "white".into(),
        },
    );
    vec![piceli::Object(
        piceli::serde_json::to_value(&hall).unwrap_or_default(),
    )]
}

/// The name of a Lamp's ConfigMap.
pub fn child_name(lamp: &str) -> String {
    format!("lamp-{lamp}")
}

/// Keeps the Lamp's ConfigMap (owned, so it goes with the Lamp) and its status; on delete, removes the
/// ConfigMap before the finalizer lets the Lamp go.
pub async fn reconcile_lamp(ev: Event<Lamp>, cx: Context) -> Result<Action, piceli::kube::Error> {
    match ev {
        Event::Apply(lamp) => shine(lamp, &cx).await,
        Event::Cleanup(lamp) => {
            let name = child_name(&lamp.name_any());
            match cx
                .api::<ConfigMap>()
                .delete(&name, &Default::default())
                .await
            {
                Ok(_) => {}
                Err(piceli::kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
            Ok(Action::await_change())
        }
    }
}

async fn shine(lamp: Arc<Lamp>, cx: &Context) -> Result<Action, piceli::kube::Error> {
    let name = child_name(&lamp.name_any());
    let child = ConfigMap {
        metadata: piceli::kube::api::ObjectMeta {
            name: Some(name.clone()),
            owner_references: Context::owner_ref(lamp.as_ref()).map(|o| vec![o]),
            ..Default::default()
        },
        data: Some(BTreeMap::from([("color".into(), lamp.spec.color.clone())])),
        ..Default::default()
    };
    cx.api::<ConfigMap>()
        .patch(
            &name,
            &PatchParams::apply("lamps").force(),
            &Patch::Apply(&child),
        )
        .await?;
    let mut conditions = lamp.status.clone().unwrap_or_default().conditions;
    let message = format!("shining {}", lamp.spec.color);
    set_condition(
        &mut conditions,
        condition(lamp.as_ref(), "Ready", true, "Shining", &message),
    );
    let status =
        piceli::serde_json::json!({ "conditions": conditions, "shining": lamp.spec.color });
    cx.patch_status(lamp.as_ref(), status).await?;
    cx.event(lamp.as_ref(), EventType::Normal, "Shining", &message)
        .await?;
    Ok(Action::await_change())
}

/// Audits ConfigMaps labelled `audit=yes` in every namespace: an Event on each change.
pub struct Audit;

impl Controller<ConfigMap> for Audit {
    type Error = piceli::kube::Error;

    async fn on_create(&self, cm: &ConfigMap, cx: &Context) -> Result<(), Self::Error> {
        cx.event(cm, EventType::Normal, "Audited", "created").await
    }

    async fn on_update(
        &self,
        _old: &ConfigMap,
        new: &ConfigMap,
        cx: &Context,
    ) -> Result<(), Self::Error> {
        cx.event(new, EventType::Normal, "Audited", "changed").await
    }
}
