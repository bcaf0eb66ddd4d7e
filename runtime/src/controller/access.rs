//! The RBAC `render` derives from an app's controller declarations (the same grants
//! [`Controllers::access`](super::Controllers) gives at run time): which namespaces each controller
//! watches, its resource's scope (built-in kinds as resolved at compile time, custom ones by their CRD),
//! the kinds that trigger it. Compiled without the `operator` feature too: an app renders its operator's
//! objects from the model alone.

use piceli_core::Code;
use piceli_core::model::{App, ControllerDecl, ControllerNamespaces, RelatedKind};

use super::rbac::{Access, Grant, Needs, grants, lease, merge};
use crate::error::Error;

/// The CRDs the app includes, by name (`lamps.example.com`), with whether they are namespaced.
fn crd_scopes(app: &App) -> Vec<(String, bool)> {
    crate::render::custom_resources(app)
        .into_iter()
        .filter_map(|o| {
            let name = o["metadata"]["name"].as_str()?;
            Some((name.to_string(), o["spec"]["scope"] != "Cluster"))
        })
        .collect()
}

/// Whether each controller's resource is namespaced: built-in kinds as resolved at compile time, custom
/// ones by their CRD. A custom resource whose CRD the app does not render is PCL0175.
fn scopes(app: &App) -> Result<Vec<bool>, Error> {
    let crds = crd_scopes(app);
    app.controllers
        .iter()
        .map(|c| {
            if !c.custom {
                return Ok(c.namespaced);
            }
            match crds.iter().find(|(name, _)| *name == c.resource.v) {
                Some((_, namespaced)) => Ok(*namespaced),
                None => Err(mismatch(c, &crds)),
            }
        })
        .collect()
}

fn mismatch(c: &ControllerDecl, crds: &[(String, bool)]) -> Error {
    let names: Vec<&str> = crds.iter().map(|(n, _)| n.as_str()).collect();
    Error::Controller {
        code: Code::CustomResourceMismatch,
        message: format!(
            "controller {} watches `{}`, but the app's custom resource types define {}",
            c.name.v,
            c.resource.v,
            if names.is_empty() {
                "no CRD".to_string()
            } else {
                names.join(", ")
            }
        ),
        help: format!(
            "write the CRD name the type defines (`{}`), or fix the type's `#[kube(group = …)]`",
            names.first().copied().unwrap_or("plural.group")
        ),
    }
}

/// The kinds that trigger a controller (`owns:`, `watches:`): (group, plural, namespaced), custom ones
/// with their CRD's scope (PCL0175 when the app renders no such CRD).
fn related(app: &App, c: &ControllerDecl) -> Result<Vec<(String, String, bool)>, Error> {
    let crds = crd_scopes(app);
    let owns = c.owns.iter();
    owns.chain(c.watches.iter().map(|(k, _)| k))
        .map(|k| {
            let namespaced = if k.custom {
                match crds.iter().find(|(name, _)| *name == k.resource) {
                    Some((_, namespaced)) => *namespaced,
                    None => return Err(mismatch_related(c, k, &crds)),
                }
            } else {
                k.namespaced
            };
            Ok((k.group.clone(), k.plural.clone(), namespaced))
        })
        .collect()
}

fn mismatch_related(c: &ControllerDecl, k: &RelatedKind, crds: &[(String, bool)]) -> Error {
    let names: Vec<&str> = crds.iter().map(|(n, _)| n.as_str()).collect();
    Error::Controller {
        code: Code::CustomResourceMismatch,
        message: format!(
            "controller {} is triggered by `{}`, but the app's custom resource types define {}",
            c.name.v,
            k.resource,
            if names.is_empty() {
                "no CRD".to_string()
            } else {
                names.join(", ")
            }
        ),
        help: format!(
            "write the CRD name the type defines (`{}`), or fix the type's `#[kube(group = …)]`",
            names.first().copied().unwrap_or("plural.group")
        ),
    }
}

/// The RBAC the declared controllers need when the operator runs in `operator_namespace` (with its
/// leader Lease when `leader`).
pub fn declared_access(app: &App, operator_namespace: &str, leader: bool) -> Result<Access, Error> {
    let scopes = scopes(app)?;
    let mut all: Vec<Grant> = Vec::new();
    for (c, namespaced) in app.controllers.iter().zip(scopes) {
        let namespaces = match (&c.namespaces, namespaced) {
            (_, false) | (ControllerNamespaces::All, _) => vec![None],
            (ControllerNamespaces::Operator, true) => vec![Some(operator_namespace.to_string())],
            (ControllerNamespaces::List(list), true) => {
                list.iter().map(|n| Some(n.v.clone())).collect()
            }
        };
        all.extend(grants(&Needs {
            group: &c.group,
            plural: &c.plural,
            namespaces,
            finalizer: c.finalizer,
            status: c.writes_status,
            writes: &c.writes,
            related: related(app, c)?,
        }));
    }
    if leader && !app.controllers.is_empty() {
        all.push(lease(operator_namespace));
    }
    Ok(merge(all))
}
