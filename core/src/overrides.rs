//! Applying a target's overrides (`web.replicas: 3`) to the app model.

use crate::model::{App, EnvValue, EnvVar, OverrideValue, Workload};
use crate::spanned::Spanned;

/// The app as the target `target` deploys it: its overrides applied. Overrides that name nothing are
/// reported by [`crate::validate`]; here they are ignored.
pub fn for_target(app: &App, target: &str) -> App {
    let mut out = app.clone();
    let Some(t) = app.target(target) else {
        return out;
    };
    for o in &t.overrides {
        let Some(w) = out.workloads.iter_mut().find(|w| w.name.v == o.object.v) else {
            continue;
        };
        apply_one(w, &o.field, &o.value);
    }
    out
}

fn apply_one(w: &mut Workload, field: &Spanned<String>, value: &OverrideValue) {
    let text = match value {
        OverrideValue::Str(s) => s.clone(),
        OverrideValue::Int(n) => Spanned::new(n.v.to_string(), n.at),
    };
    let Some(main) = w.containers.first_mut() else {
        return;
    };
    match field.v.as_str() {
        "replicas" => {
            if let OverrideValue::Int(n) = value {
                w.replicas = Some(n.clone());
            }
        }
        "image" => {
            main.image = text;
        }
        f if f.starts_with("env.") => {
            let name = &f[4..];
            let value = EnvValue::Literal(text);
            match main.env.iter_mut().find(|e| e.name.v == name) {
                Some(e) => e.value = value,
                None => main.env.push(EnvVar {
                    name: Spanned::new(name.to_string(), field.at),
                    value,
                }),
            }
        }
        f => {
            let Some((side, resource)) = f.split_once('.') else {
                return;
            };
            let list = match side {
                "requests" => &mut main.resources.requests,
                "limits" => &mut main.resources.limits,
                _ => return,
            };
            match list.iter_mut().find(|(k, _)| k.v == resource) {
                Some((_, v)) => *v = text,
                None => list.push((Spanned::new(resource.to_string(), field.at), text)),
            }
        }
    }
}
