//! The RBAC `render` derives from an app's controller declarations (the same grants
//! [`Controllers::access`](super::Controllers) gives at run time): which namespaces each controller
//! watches, its resource's scope (built-in kinds as resolved at compile time, custom ones by their CRD),
//! the kinds that trigger it. Compiled without the `operator` feature too: an app renders its operator's
//! objects from the model alone.

use piceli_core::Code;
use piceli_core::model::{App, ControllerDecl, ControllerNamespaces};

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
fn scopes(app: &App, crds: &[(String, bool)]) -> Result<Vec<bool>, Error> {
    app.controllers
        .iter()
        .map(|c| {
            if !c.custom {
                return Ok(c.namespaced);
            }
            match crds.iter().find(|(name, _)| *name == c.resource.v) {
                Some((_, namespaced)) => Ok(*namespaced),
                None => Err(mismatch(
                    format!("controller {} watches `{}`", c.name.v, c.resource.v),
                    crds,
                )),
            }
        })
        .collect()
}

/// PCL0175 for `who`, naming the CRDs the app does define.
fn mismatch(who: String, crds: &[(String, bool)]) -> Error {
    let names: Vec<&str> = crds.iter().map(|(n, _)| n.as_str()).collect();
    Error::unknown_crd(Code::CustomResourceMismatch, who, &names)
}

/// The kinds that trigger a controller (`owns:`, `watches:`): (group, plural, namespaced), custom ones
/// with their CRD's scope (PCL0175 when the app renders no such CRD).
fn related(
    c: &ControllerDecl,
    crds: &[(String, bool)],
) -> Result<Vec<(String, String, bool)>, Error> {
    let owns = c.owns.iter();
    owns.chain(c.watches.iter().map(|(k, _)| k))
        .map(|k| {
            let namespaced = if k.custom {
                match crds.iter().find(|(name, _)| *name == k.resource) {
                    Some((_, namespaced)) => *namespaced,
                    None => {
                        return Err(mismatch(
                            format!("controller {} is triggered by `{}`", c.name.v, k.resource),
                            crds,
                        ));
                    }
                }
            } else {
                k.namespaced
            };
            Ok((k.group.clone(), k.plural.clone(), namespaced))
        })
        .collect()
}

/// The RBAC the declared controllers need when the operator runs in `operator_namespace` (with its
/// leader Lease when `leader`).
pub fn declared_access(app: &App, operator_namespace: &str, leader: bool) -> Result<Access, Error> {
    // The app's CRDs, rendered once for every controller's scope and triggers.
    let crds = crd_scopes(app);
    let scopes = scopes(app, &crds)?;
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
            related: related(c, &crds)?,
        }));
    }
    if leader && !app.controllers.is_empty() {
        all.push(lease(operator_namespace));
    }
    Ok(merge(all))
}
