//! The keys every item accepts, one table per item kind: what lowering lists when a key is unknown (only
//! that kind's keys), what it says about a key of another workload kind, and what docs/dsl.md's key
//! reference is generated from (a test keeps the two equal). A table whose entries carry their reader
//! also drives lowering ([`read`]): each key is read by walking the table, so its name is written once.

use super::{Fields, Lower};
use crate::ast::Value;
use piceli_core::model::WorkloadKind;

mod tables;
pub use tables::*;

/// The workload kinds a key applies to (every kind for items that are not workloads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kinds(u8);

impl Kinds {
    pub const DEPLOYMENT: Kinds = Kinds(1);
    pub const STATEFUL_SET: Kinds = Kinds(2);
    pub const DAEMON_SET: Kinds = Kinds(4);
    pub const JOB: Kinds = Kinds(8);
    pub const CRON_JOB: Kinds = Kinds(16);
    pub const ALL: Kinds = Kinds(31);
    /// Deployments and StatefulSets: `replicas`, autoscalers.
    pub const SCALABLE: Kinds = Kinds(3);
    /// Workloads that run until stopped: rollout strategies.
    pub const LONG_RUNNING: Kinds = Kinds(7);
    /// Jobs and CronJobs: pods that run to completion.
    pub const TO_COMPLETION: Kinds = Kinds(24);

    /// The kind of a workload.
    pub fn of(kind: WorkloadKind) -> Kinds {
        match kind {
            WorkloadKind::Deployment => Kinds::DEPLOYMENT,
            WorkloadKind::StatefulSet => Kinds::STATEFUL_SET,
            WorkloadKind::DaemonSet => Kinds::DAEMON_SET,
            WorkloadKind::Job => Kinds::JOB,
            WorkloadKind::CronJob => Kinds::CRON_JOB,
        }
    }

    /// Whether these kinds include `kind`.
    pub fn has(self, kind: Kinds) -> bool {
        self.0 & kind.0 == kind.0
    }

    /// The workload keywords, for messages and docs (`deployment, stateful_set`).
    pub fn keywords(self) -> Vec<&'static str> {
        [
            (Kinds::DEPLOYMENT, "deployment"),
            (Kinds::STATEFUL_SET, "stateful_set"),
            (Kinds::DAEMON_SET, "daemon_set"),
            (Kinds::JOB, "job"),
            (Kinds::CRON_JOB, "cron_job"),
        ]
        .into_iter()
        .filter(|(k, _)| self.has(*k))
        .map(|(_, word)| word)
        .collect()
    }
}

/// Reads one key into the item being built: the lowering state, the item's context `C`, the item's fields
/// (to see which other keys are given, e.g. for a block; or to read a nested table from the same body, as
/// a workload's single container), the key's name, and its value — `None` when the key is absent (where
/// a required key reports itself, in table order).
pub type Reader<C> = fn(&mut Lower, &mut C, &mut Fields, &'static str, Option<&Value>);

/// One key: its name, the workload kinds it applies to, what it means, and what reads it (for items whose
/// lowering walks their table; `None` in the tables still read key by key).
pub struct Key<C: 'static = ()> {
    pub name: &'static str,
    pub kinds: Kinds,
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "read by the test that writes the docs' key tables"
        )
    )]
    pub doc: &'static str,
    pub read: Option<Reader<C>>,
}

// By hand: a derive would ask `C: Copy`, and a reader is a plain function pointer.
impl<C> Clone for Key<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for Key<C> {}

impl<C> std::fmt::Debug for Key<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key").field("name", &self.name).finish()
    }
}

impl<C> Key<C> {
    /// A key of every workload kind (or of an item that is not a workload).
    pub const fn new(name: &'static str, doc: &'static str, read: Option<Reader<C>>) -> Key<C> {
        Key {
            name,
            kinds: Kinds::ALL,
            doc,
            read,
        }
    }

    /// A key of some workload kinds only.
    pub const fn only(
        name: &'static str,
        kinds: Kinds,
        doc: &'static str,
        read: Option<Reader<C>>,
    ) -> Key<C> {
        Key {
            name,
            kinds,
            doc,
            read,
        }
    }

    /// The key without its reader, for the docs' tables.
    #[cfg(test)]
    pub fn entry(&self) -> Key {
        Key {
            name: self.name,
            kinds: self.kinds,
            doc: self.doc,
            read: None,
        }
    }
}

/// Read an item's keys by walking its table: each reader gets its key's value (or `None`), in table
/// order. The keys left over are unknown ([`Fields::finish_keys`] with the same table).
pub fn read<C>(lw: &mut Lower, f: &mut Fields, table: &[Key<C>], cx: &mut C) {
    walk(lw, f, table, cx, None);
}

/// [`read`] for a workload of kind `kind`: a key of other kinds is not read but reported where it would
/// be (`replicas` in a job: "does not apply to a job", naming the kinds it applies to).
pub fn read_kind<C>(
    lw: &mut Lower,
    f: &mut Fields,
    table: &[Key<C>],
    cx: &mut C,
    kind: WorkloadKind,
) {
    walk(lw, f, table, cx, Some(kind));
}

fn walk<C>(
    lw: &mut Lower,
    f: &mut Fields,
    table: &[Key<C>],
    cx: &mut C,
    kind: Option<WorkloadKind>,
) {
    for key in table {
        let Some(read) = key.read else { continue };
        if let Some(kind) = kind
            && !key.kinds.has(Kinds::of(kind))
        {
            if let Some(k) = f.key(key.name) {
                f.take(key.name);
                lw.fail(
                    piceli_core::Code::UnknownKey,
                    k.sp,
                    format!("`{}` does not apply to a {}", key.name, kind.keyword()),
                    format!(
                        "remove it: `{}` applies to {}",
                        key.name,
                        key.kinds.keywords().join(", ")
                    ),
                );
            }
            continue;
        }
        let value = f.take(key.name);
        read(lw, cx, f, key.name, value);
    }
}

/// The keys of `keys` that apply to `kind`, in table order.
pub fn names<C>(keys: &[Key<C>], kind: Kinds) -> Vec<&'static str> {
    keys.iter()
        .filter(|k| k.kinds.has(kind))
        .map(|k| k.name)
        .collect()
}

/// The entry for a key, if the table has it.
pub fn find<C>(keys: &[Key<C>], name: &str) -> Option<Key<C>> {
    keys.iter().find(|k| k.name == name).copied()
}

/// The key reference of docs/dsl.md, between its markers.
#[cfg(test)]
pub fn markdown() -> String {
    let mut out = String::new();
    for t in tables() {
        out.push_str(&format!("\n#### {}\n\n", t.item));
        if t.per_kind {
            out.push_str("| key | applies to | meaning |\n|---|---|---|\n");
        } else {
            out.push_str("| key | meaning |\n|---|---|\n");
        }
        for k in &t.keys {
            if t.per_kind {
                let kinds = if k.kinds == Kinds::ALL {
                    "every workload".to_string()
                } else {
                    k.kinds.keywords().join(", ")
                };
                out.push_str(&format!("| `{}` | {kinds} | {} |\n", k.name, k.doc));
            } else {
                out.push_str(&format!("| `{}` | {} |\n", k.name, k.doc));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "<!-- keys: generated from dsl/src/valid/keys.rs -->\n";
    const END: &str = "<!-- end of keys -->";

    /// docs/dsl.md's key reference, and the rustdoc of `app!` (what an editor shows on hover), are this
    /// table; `PICELI_UPDATE_DOCS=1 cargo test -p piceli-dsl` rewrites them after a change.
    #[test]
    fn the_dsl_reference_and_the_macros_rustdoc_list_every_key_of_the_table() {
        let generated = markdown();
        for file in ["../docs/dsl.md", "../macros/src/app_doc.md"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            let doc = std::fs::read_to_string(&path).expect(file);
            let (Some(start), Some(end)) = (doc.find(START), doc.find(END)) else {
                panic!("{file} lacks the key reference markers `{START}` … `{END}`");
            };
            let current = &doc[start + START.len()..end];
            if current == generated {
                continue;
            }
            if std::env::var_os("PICELI_UPDATE_DOCS").is_some() {
                let updated = format!("{}{START}{generated}{}", &doc[..start], &doc[end..]);
                std::fs::write(&path, updated).expect(file);
            } else {
                panic!(
                    "{file}'s key reference is out of date: run `PICELI_UPDATE_DOCS=1 cargo test -p piceli-dsl`"
                );
            }
        }
    }

    #[test]
    fn no_table_lists_a_key_twice() {
        for t in tables() {
            for (i, k) in t.keys.iter().enumerate() {
                assert!(
                    !t.keys[..i].iter().any(|e| e.name == k.name),
                    "{} lists `{}` twice",
                    t.item,
                    k.name
                );
            }
        }
        for k in crate::valid::container_keys::CONTAINER {
            assert!(
                find(crate::valid::workload_keys::WORKLOAD, k.name).is_none(),
                "`{}` is in both",
                k.name
            );
        }
    }

    #[test]
    fn a_deployment_accepts_replicas_and_not_schedule() {
        let workload = crate::valid::workload_keys::WORKLOAD;
        let keys = names(workload, Kinds::DEPLOYMENT);
        assert!(keys.contains(&"replicas") && !keys.contains(&"schedule"));
        assert_eq!(
            find(workload, "schedule").map(|k| k.kinds.keywords()),
            Some(vec!["cron_job"])
        );
    }
}
