//! `(service api)` and `(pods api)` in a `resource` block: where the CRD's schema takes a label selector
//! (an object with `matchLabels`), the labels that select one item of the app. The block gets an empty
//! `matchLabels` while it is lowered; once every item is (the Service may come later), it is filled in:
//!
//! - `(service NAME)`: the app's name label and the fewest of the Service's own `labels:` that no other
//!   Service of the app carries too; when its own labels cannot tell it apart (it has none, or another
//!   Service has the same), `piceli.dev/service: NAME`, a label the Service then carries as well.
//! - `(pods NAME)`: the labels that select the workload's pods (its Deployment's selector).

use super::Lower;
use crate::ast::Select;
use piceli_core::Code;
use piceli_core::model::{App, Block, BlockValue, ExternalKind, Service};
use piceli_core::rules::did_you_mean;
use piceli_core::spanned::{Loc, Spanned};
use std::collections::{BTreeMap, HashSet};

/// The label a Service gets when its own labels cannot tell it apart from the app's other Services.
pub const SERVICE_LABEL: &str = "piceli.dev/service";
/// The app's name label (every object carries it).
const NAME_LABEL: &str = "app.kubernetes.io/name";
/// What a selector may name.
const KINDS: &[&str] = &["service", "pods"];
/// Own labels beyond this many are used all together (no search for the fewest).
const MOST_SEARCHED: usize = 12;

/// A selector waiting for the app's items: the `matchLabels` map to fill.
pub(super) struct Pending {
    /// The location of the empty `matchLabels` block.
    pub at: Loc,
    /// `(service api)` as written.
    pub select: Select,
}

impl Lower {
    /// `(KIND NAME)` where a label selector goes: `{ matchLabels: {} }`, filled in by [`resolve`].
    pub(super) fn selector_placeholder(&mut self, s: &Select, desc: &str) -> BlockValue {
        let outer = self.loc(s.sp, desc.to_string());
        if !KINDS.contains(&s.kind.text.as_str()) {
            let help = match did_you_mean(&s.kind.text, KINDS.iter().copied()) {
                Some(k) => format!("did you mean `({k} {})`?", s.name.text),
                None => format!(
                    "write `(service {})` (the Service's labels) or `(pods {})` (its pods')",
                    s.name.text, s.name.text
                ),
            };
            self.fail(
                Code::UnknownKey,
                s.kind.sp,
                format!("`{}` is not something a selector names", s.kind.text),
                help,
            );
            // An empty selector in its place: no error about a missing one besides.
            return BlockValue::Map(Block::new(outer, Vec::new()));
        }
        let key = self.loc(s.sp, format!("{desc} › matchLabels"));
        let at = self.loc(s.sp, format!("{desc} › matchLabels"));
        self.selects.push(Pending {
            at,
            select: s.clone(),
        });
        let labels = BlockValue::Map(Block::new(at, Vec::new()));
        BlockValue::Map(Block::new(
            outer,
            vec![(Spanned::new("matchLabels".to_string(), key), labels)],
        ))
    }
}

/// Fill in every selector, once the app's items and name are known.
pub(super) fn resolve(lw: &mut Lower) {
    let pending = std::mem::take(&mut lw.selects);
    let dynamic: HashSet<Loc> = lw.dynamics.iter().map(|d| d.at).collect();
    for p in pending {
        let name = &p.select.name;
        let labels = match p.select.kind.text.as_str() {
            "service" => service(lw, &p.select, &dynamic),
            _ => pods(lw, &p.select),
        };
        let Some(labels) = labels else { continue };
        let entries: Vec<_> = labels
            .into_iter()
            .map(|(k, v)| {
                let desc = format!("({} {}) › {k}", p.select.kind.text, name.text);
                let key = Spanned::new(k, lw.loc(p.select.sp, desc.clone()));
                let value = Spanned::new(v, lw.loc(name.sp, desc));
                (key, BlockValue::Str(value))
            })
            .collect();
        if let Some(block) = lw
            .app
            .resources
            .iter_mut()
            .find_map(|r| map_in(&mut r.fields, p.at))
        {
            *block.entries_mut() = entries;
        }
    }
}

/// The map located at `at`, anywhere in `block`.
fn map_in(block: &mut Block, at: Loc) -> Option<&mut Block> {
    if block.at == at {
        return Some(block);
    }
    block
        .entries_mut()
        .iter_mut()
        .find_map(|(_, v)| map_in_value(v, at))
}

fn map_in_value(v: &mut BlockValue, at: Loc) -> Option<&mut Block> {
    match v {
        BlockValue::Map(m) => map_in(m, at),
        BlockValue::List(_, items) => items.iter_mut().find_map(|i| map_in_value(i, at)),
        _ => None,
    }
}

/// The labels of a Service, with the keys whose value is known only at run time.
fn labels_of(
    app: &App,
    s: &Service,
    dynamic: &HashSet<Loc>,
) -> (BTreeMap<String, String>, Vec<String>) {
    let unknown = s
        .labels
        .iter()
        .chain(&app.labels)
        .filter(|(_, v)| dynamic.contains(&v.at))
        .map(|(k, _)| k.v.clone())
        .collect();
    (piceli_core::validate::service_labels(app, s), unknown)
}

/// `(service NAME)`: see the module's doc.
fn service(lw: &mut Lower, s: &Select, dynamic: &HashSet<Loc>) -> Option<BTreeMap<String, String>> {
    let app = &lw.app;
    let name = &s.name.text;
    let declared = app.services.iter().position(|x| x.name.v == *name);
    let included = app.included_services.iter().find(|x| x.name.v == *name);
    let Some(this) = declared.map(|i| &app.services[i]).or(included) else {
        let external = app.is_external(ExternalKind::Service, name);
        let names: Vec<&str> = app
            .services
            .iter()
            .chain(&app.included_services)
            .map(|x| x.name.v.as_str())
            .collect();
        let help = match did_you_mean(name, names.iter().copied()) {
            Some(n) => format!("did you mean `{n}`?"),
            None if external => {
                "its labels are not the app's to know: write the selector, `{ matchLabels: { … } }`"
                    .into()
            }
            None if names.is_empty() => {
                format!("declare it: `service {name} -> WORKLOAD {{ port: 80 => http }}`")
            }
            None => format!("declared: {}", piceli_core::validate::list(&names)),
        };
        let message = if external {
            format!("`(service {name})` names an external Service")
        } else {
            format!("no Service named `{name}`")
        };
        lw.fail(Code::UnknownService, s.name.sp, message, help);
        return None;
    };
    let (labels, unknown) = labels_of(app, this, dynamic);
    let base = labels
        .get(NAME_LABEL)
        .map(|v| (NAME_LABEL.to_string(), v.clone()));
    let own: Vec<(String, String)> = this
        .labels
        .iter()
        .map(|(k, _)| k.v.clone())
        .filter(|k| k != NAME_LABEL && !unknown.contains(k))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter_map(|k| labels.get(&k).map(|v| (k, v.clone())))
        .collect();
    let others: Vec<(BTreeMap<String, String>, Vec<String>)> = app
        .services
        .iter()
        .chain(&app.included_services)
        .filter(|x| x.name.v != *name)
        .map(|x| labels_of(app, x, dynamic))
        .collect();
    let selects_another = |set: &BTreeMap<String, String>| {
        others.iter().any(|(labels, unknown)| {
            set.iter()
                .all(|(k, v)| unknown.contains(k) || labels.get(k) == Some(v))
        })
    };
    if let Some(found) = fewest(&own, base.clone(), &selects_another) {
        return Some(found);
    }
    // Its own labels cannot tell it apart: a label of its own.
    let Some(i) = declared else {
        lw.fail(
            Code::InvalidValue,
            s.name.sp,
            format!("Service `{name}` of an included file carries no label that tells it apart from the app's other Services"),
            "write the selector, `{ matchLabels: { … } }`, or give the Service a label of its own in its file",
        );
        return None;
    };
    if !lw.app.services[i]
        .labels
        .iter()
        .any(|(k, _)| k.v == SERVICE_LABEL)
    {
        let key = lw.loc(s.sp, format!("Service {name} › labels › {SERVICE_LABEL}"));
        let value = lw.loc(
            s.name.sp,
            format!("Service {name} › labels › {SERVICE_LABEL}"),
        );
        lw.app.services[i].labels.push((
            Spanned::new(SERVICE_LABEL.into(), key),
            Spanned::new(name.clone(), value),
        ));
    }
    let mut set: BTreeMap<String, String> = base.into_iter().collect();
    set.insert(SERVICE_LABEL.into(), name.clone());
    Some(set)
}

/// The name label and the fewest of `own` (the first such set in key order) that select no other
/// Service; `None` when even all of them do.
fn fewest(
    own: &[(String, String)],
    base: Option<(String, String)>,
    selects_another: &dyn Fn(&BTreeMap<String, String>) -> bool,
) -> Option<BTreeMap<String, String>> {
    let with = |picked: &mut dyn Iterator<Item = &(String, String)>| {
        let mut set: BTreeMap<String, String> = base.iter().cloned().collect();
        set.extend(picked.cloned());
        set
    };
    if own.len() > MOST_SEARCHED {
        let all = with(&mut own.iter());
        return (!selects_another(&all)).then_some(all);
    }
    let mut masks: Vec<u32> = (0..1u32 << own.len()).collect();
    masks.sort_by_key(|m| (m.count_ones(), std::cmp::Reverse(m.reverse_bits())));
    masks.into_iter().find_map(|m| {
        let set = with(
            &mut own
                .iter()
                .enumerate()
                .filter(|(i, _)| m & (1 << i) != 0)
                .map(|(_, l)| l),
        );
        (!selects_another(&set)).then_some(set)
    })
}

/// `(pods NAME)`: the labels that select the workload's pods.
fn pods(lw: &mut Lower, s: &Select) -> Option<BTreeMap<String, String>> {
    let app = &lw.app;
    let name = &s.name.text;
    let known =
        app.workloads.iter().any(|w| w.name.v == *name) || app.included_workload(name).is_some();
    if !known {
        let names: Vec<&str> = app
            .workloads
            .iter()
            .map(|w| w.name.v.as_str())
            .chain(
                app.included_workloads
                    .iter()
                    .map(|w| w.workload.name.v.as_str()),
            )
            .collect();
        let help = match did_you_mean(name, names.iter().copied()) {
            Some(n) => format!("did you mean `{n}`?"),
            None if names.is_empty() => {
                format!("declare it: `deployment {name} {{ image: …, ports: {{ http: 8080 }} }}`")
            }
            None => format!("declared: {}", piceli_core::validate::list(&names)),
        };
        lw.fail(
            Code::UnknownWorkload,
            s.name.sp,
            format!("no workload named `{name}`"),
            help,
        );
        return None;
    }
    Some(
        piceli_core::validate::pod_selector(app, name)
            .into_iter()
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::fewest;
    use std::collections::BTreeMap;

    fn l(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_fewest_own_labels_that_no_other_service_carries() {
        let own = l(&[("team", "shop"), ("tier", "api")]);
        let base = Some(("app.kubernetes.io/name".to_string(), "shop".to_string()));
        // Another Service has `team: shop` too: `tier` alone tells them apart.
        let other: BTreeMap<String, String> =
            l(&[("app.kubernetes.io/name", "shop"), ("team", "shop")])
                .into_iter()
                .collect();
        let found = fewest(&own, base.clone(), &|set| {
            set.iter().all(|(k, v)| other.get(k) == Some(v))
        })
        .expect("found");
        assert_eq!(
            found,
            l(&[("app.kubernetes.io/name", "shop"), ("tier", "api")])
                .into_iter()
                .collect()
        );
        // No other Service: the name label alone.
        let found = fewest(&own, base.clone(), &|_| false).expect("found");
        assert_eq!(found.len(), 1);
        // Every set selects another: none.
        assert!(fewest(&own, base, &|_| true).is_none());
    }
}
