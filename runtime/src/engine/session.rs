//! One engine command's context — the app for a target, its state directory and journal, and a
//! connection to its cluster — and the operations the CLI calls: plan and apply.

use super::apply::{Applied, FaultHook, apply, resume};
use super::error::EngineError;
use super::plan::{ActionKind, ObjectRef, Plan, PlanOptions, Source, plan, plan_source};
use super::secrets::digest_key;
use super::target::{ConnectOptions, Connection, connect};
use crate::journal::{ApplyLock, Journal};
use crate::render;
use piceli_core::model::{App, Target};
use std::path::PathBuf;

/// How one object differs between two releases.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ObjectDiff {
    /// `Kind/namespace/name`.
    pub object: String,
    /// `added`, `removed` or `changed`.
    pub change: &'static str,
    /// Field changes (for `changed`).
    pub diff: Vec<super::diff::Change>,
}

/// Compare two sets of objects by identity.
pub fn diff_objects(from: &[serde_json::Value], to: &[serde_json::Value]) -> Vec<ObjectDiff> {
    let key = |o: &serde_json::Value| {
        let kind = o["kind"].as_str().unwrap_or_default();
        let name = o["metadata"]["name"].as_str().unwrap_or_default();
        match o["metadata"]["namespace"].as_str() {
            Some(ns) => format!("{kind}/{ns}/{name}"),
            None => format!("{kind}/{name}"),
        }
    };
    let mut out = Vec::new();
    for a in from {
        match to.iter().find(|b| key(b) == key(a)) {
            None => out.push(ObjectDiff {
                object: key(a),
                change: "removed",
                diff: Vec::new(),
            }),
            Some(b) => {
                // A value generated at apply was a placeholder in its plan: not a difference.
                let placeholder = |v: &Option<serde_json::Value>| {
                    v.as_ref().and_then(|v| v.as_str()) == Some(super::secrets::TO_GENERATE)
                };
                let mut d = super::diff::diff(a, b);
                d.retain(|c| !placeholder(&c.before) && !placeholder(&c.after));
                if !d.is_empty() {
                    out.push(ObjectDiff {
                        object: key(a),
                        change: "changed",
                        diff: d,
                    });
                }
            }
        }
    }
    for b in to {
        if !from.iter().any(|a| key(a) == key(b)) {
            out.push(ObjectDiff {
                object: key(b),
                change: "added",
                diff: Vec::new(),
            });
        }
    }
    out
}

/// How a command was asked to run.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// `--target` (default: the first declared).
    pub target: Option<String>,
    /// `--namespace`.
    pub namespace: Option<String>,
    /// `--kubeconfig`, `--context`.
    pub connect: ConnectOptions,
    /// `--state-dir` (default `.piceli/<app>/<target>/`).
    pub state_dir: Option<PathBuf>,
    /// How long `apply` and `resume` wait for workloads to be ready (`None`: do not wait).
    pub wait: Option<std::time::Duration>,
}

/// An open session.
pub struct Session {
    /// The app.
    pub app: App,
    /// The target.
    pub target: Target,
    /// Render options (target and namespace).
    pub render: render::Options,
    /// The state directory.
    pub state_dir: PathBuf,
    /// Its journal.
    pub journal: Journal,
    /// The cluster.
    pub conn: Connection,
    /// Test-only: stop an apply or resume at a chosen point, as a kill would.
    pub fault_hook: Option<std::sync::Arc<FaultHook>>,
    /// How long to wait for readiness after writing (`None`: do not wait).
    pub wait: Option<std::time::Duration>,
}

impl Session {
    /// Resolve the target, open the journal and connect.
    pub async fn open(app: App, opts: &SessionOptions) -> Result<Session, EngineError> {
        super::flags::validate(opts)?;
        let target = match &opts.target {
            Some(name) => app.target(name).cloned(),
            None => app.targets.first().cloned(),
        }
        .ok_or_else(|| {
            EngineError::Render(crate::Error::UnknownTarget {
                name: opts.target.clone().unwrap_or_else(|| "(none)".into()),
                declared: app.targets.iter().map(|t| t.name.v.clone()).collect(),
            })
        })?;
        let state_dir = opts.state_dir.clone().unwrap_or_else(|| {
            PathBuf::from(".piceli")
                .join(&app.name.v)
                .join(&target.name.v)
        });
        let journal = Journal::open(&state_dir).map_err(EngineError::from)?;
        let conn = connect(&target, &opts.connect).await?;
        let render = render::Options {
            target: Some(target.name.v.clone()),
            namespace: opts.namespace.clone(),
        };
        Ok(Session {
            app,
            target,
            render,
            state_dir,
            journal,
            conn,
            fault_hook: None,
            wait: opts.wait,
        })
    }

    /// The objects the last succeeded release applied (what pruning compares against).
    fn previous_objects(&self) -> Vec<ObjectRef> {
        let Ok(Some(release)) = self.journal.last_succeeded() else {
            return Vec::new();
        };
        let Ok(Some(json)) = self.journal.load_plan(&release.plan_hash) else {
            return Vec::new();
        };
        let Ok(plan) = serde_json::from_str::<Plan>(&json) else {
            return Vec::new();
        };
        plan.actions
            .into_iter()
            .filter(|a| a.action != ActionKind::Delete)
            .map(|a| ObjectRef {
                api_version: a.api_version,
                kind: a.kind,
                namespace: a.namespace,
                name: a.name,
            })
            .collect()
    }

    fn plan_options(
        &self,
        adopt: Vec<String>,
        adopt_all: bool,
    ) -> Result<PlanOptions, EngineError> {
        Ok(PlanOptions {
            adopt,
            adopt_all,
            previous: self.previous_objects(),
            digest_key: digest_key(&self.state_dir)?,
            force_dry_run: false,
        })
    }

    /// Plan a rollback to release `to` (default: the succeeded release before the live one), store it,
    /// and return it: like any change it needs `apply --approve HASH`. Secrets keep the values the cluster
    /// holds (values are never stored, so no older value can be restored).
    pub async fn plan_rollback(&self, to: Option<u64>) -> Result<Plan, EngineError> {
        let journal = |e: crate::journal::JournalError| EngineError::Journal(e.to_string());
        let succeeded: Vec<_> = self
            .journal
            .releases()
            .map_err(journal)?
            .into_iter()
            .filter(|r| r.state == crate::journal::ReleaseState::Succeeded)
            .collect();
        let target = match to {
            Some(n) => succeeded.iter().find(|r| r.number == n).ok_or_else(|| {
                EngineError::UnknownRelease(format!("release {n} is not a succeeded release of this target (see `history`)"))
            })?,
            None => succeeded.get(1).ok_or_else(|| {
                EngineError::UnknownRelease("there is no earlier release to roll back to (a first release has nothing before it)".into())
            })?,
        };
        let json = self
            .journal
            .load_plan(&target.plan_hash)
            .map_err(journal)?
            .ok_or_else(|| EngineError::UnknownPlan(target.plan_hash.clone()))?;
        let old: Plan =
            serde_json::from_str(&json).map_err(|e| EngineError::Journal(e.to_string()))?;
        let opts = self.plan_options(Vec::new(), false)?;
        let source = Source {
            target: old.target.clone(),
            namespace: old.namespace.clone(),
            objects: old.objects.clone(),
            rollback_of: Some(target.number),
        };
        let (plan, _) = plan_source(&self.app, &self.conn, source, &opts).await?;
        let json = serde_json::to_string(&plan).map_err(|e| EngineError::Journal(e.to_string()))?;
        self.journal
            .save_plan(&plan.hash, &plan.target, &json)
            .map_err(journal)?;
        Ok(plan)
    }

    /// The plan a release applied (its objects are what the release made live).
    fn release_plan(&self, number: u64) -> Result<Plan, EngineError> {
        let journal = |e: crate::journal::JournalError| EngineError::Journal(e.to_string());
        let release = self
            .journal
            .release(crate::journal::ReleaseId(number))
            .map_err(journal)?
            .ok_or_else(|| {
                EngineError::UnknownRelease(format!("there is no release {number} (see `history`)"))
            })?;
        let json = self
            .journal
            .load_plan(&release.plan_hash)
            .map_err(journal)?
            .ok_or_else(|| EngineError::UnknownPlan(release.plan_hash.clone()))?;
        serde_json::from_str(&json).map_err(|e| EngineError::Journal(e.to_string()))
    }

    /// The number of the live release (the newest succeeded one).
    pub fn live_release(&self) -> Result<Option<u64>, EngineError> {
        Ok(self
            .journal
            .last_succeeded()
            .map_err(|e| EngineError::Journal(e.to_string()))?
            .map(|r| r.number))
    }

    /// Field-level differences between the objects of two releases (secret values as digests).
    pub fn diff_releases(&self, from: u64, to: u64) -> Result<Vec<ObjectDiff>, EngineError> {
        let (a, b) = (self.release_plan(from)?, self.release_plan(to)?);
        Ok(diff_objects(&a.objects, &b.objects))
    }

    /// What differs between a release's objects and the live cluster (drift): the release's objects
    /// dry-run against the cluster, as a plan would, without storing anything.
    pub async fn diff_live(&self, release: u64) -> Result<Plan, EngineError> {
        let old = self.release_plan(release)?;
        let mut opts = self.plan_options(Vec::new(), true)?;
        opts.previous.clear();
        opts.force_dry_run = true;
        let source = Source {
            target: old.target,
            namespace: old.namespace,
            objects: old.objects,
            rollback_of: Some(release),
        };
        Ok(plan_source(&self.app, &self.conn, source, &opts).await?.0)
    }

    /// Plan and store the plan under its hash.
    pub async fn plan(&self, adopt: Vec<String>, adopt_all: bool) -> Result<Plan, EngineError> {
        let opts = self.plan_options(adopt, adopt_all)?;
        let (plan, _) = plan(&self.app, &self.conn, &self.render, &opts).await?;
        let json = serde_json::to_string(&plan).map_err(|e| EngineError::Journal(e.to_string()))?;
        self.journal
            .save_plan(&plan.hash, &plan.target, &json)
            .map_err(|e| EngineError::Journal(e.to_string()))?;
        Ok(plan)
    }

    /// Apply the stored plan `hash`, holding the target's lock.
    pub async fn apply(&self, hash: &str) -> Result<Applied, EngineError> {
        let _lock: ApplyLock =
            Journal::lock(&self.state_dir).map_err(|e| EngineError::Locked(e.to_string()))?;
        let stored = self
            .journal
            .load_plan(hash)
            .map_err(|e| EngineError::Journal(e.to_string()))?;
        let Some(stored) = stored else {
            return Err(EngineError::UnknownPlan(hash.to_string()));
        };
        let planned: Plan =
            serde_json::from_str(&stored).map_err(|e| EngineError::Journal(e.to_string()))?;
        let adopt: Vec<String> = planned
            .actions
            .iter()
            .filter(|a| a.action == ActionKind::Adopt)
            .map(|a| format!("{}/{}", a.kind, a.name))
            .collect();
        let opts = self.plan_options(adopt, false)?;
        let applied = apply(
            &self.app,
            &self.conn,
            &self.journal,
            hash,
            &opts,
            self.fault_hook.as_deref(),
        )
        .await?;
        if let Some(timeout) = self.wait {
            super::ready::wait(&self.conn, &planned, timeout).await?;
        }
        Ok(applied)
    }

    /// Continue the release an interrupted apply left running (nothing to do: `release` is `None`).
    pub async fn resume(&self) -> Result<Applied, EngineError> {
        let _lock: ApplyLock =
            Journal::lock(&self.state_dir).map_err(|e| EngineError::Locked(e.to_string()))?;
        let opts = self.plan_options(Vec::new(), false)?;
        let unfinished = self
            .journal
            .unfinished()
            .map_err(|e| EngineError::Journal(e.to_string()))?;
        let applied = resume(
            &self.app,
            &self.conn,
            &self.journal,
            &opts,
            self.fault_hook.as_deref(),
        )
        .await?;
        if let (Some(timeout), Some(release)) = (self.wait, unfinished) {
            let plan = self.release_plan(release.number)?;
            super::ready::wait(&self.conn, &plan, timeout).await?;
        }
        Ok(applied)
    }
}
