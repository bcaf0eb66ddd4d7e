//! What `status` reports: the documented JSON document (`schema: 1`, see docs/commands.md) and the compact
//! text table.

use super::health::WorkloadHealth;
use super::rules::State;
use super::urls::Url;
use crate::journal::CheckResult;
use serde::Serialize;
use std::fmt::Write as _;

/// The version of the JSON schema; bumped only when a field changes meaning or goes away.
pub const SCHEMA: u32 = 1;

/// The live release as the journal and the cluster record it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReleaseInfo {
    /// The newest succeeded release in this state directory's journal.
    pub journal: Option<u64>,
    /// The release the cluster's record (`ConfigMap piceli-release-<app>`) names.
    pub cluster: Option<u64>,
    /// The plan hash the cluster's record names.
    pub plan: Option<String>,
    /// How the journal's live release was approved: `{kind, command, approved_at, sealed}`.
    pub approval: Option<ApprovalInfo>,
}

/// An approval as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovalInfo {
    /// `approved`, `unchanged`, `rollback` or `migrated`.
    pub kind: String,
    /// The command that gave it (`deploy --approve 1a2b3c4d5e6f`).
    pub command: String,
    /// When (RFC 3339 UTC).
    pub approved_at: String,
    /// Whether this user's approval key reproduces its seal (`false`: edited, planted, sealed with another
    /// key, or older than seals — `resume` refuses it with PCL0220).
    pub sealed: bool,
}

/// The whole status of an app on one target.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The app.
    pub app: String,
    /// The target.
    pub target: String,
    /// The namespace.
    pub namespace: String,
    /// The API server.
    pub server: String,
    /// The app's state.
    pub state: State,
    /// Why it is not up (empty when up).
    pub reasons: Vec<String>,
    /// The live release.
    pub release: ReleaseInfo,
    /// Each declared workload's health, in declaration order.
    pub workloads: Vec<WorkloadHealth>,
    /// The last check results.
    pub checks: Vec<CheckResult>,
    /// How to reach the app.
    pub urls: Vec<Url>,
    /// The generated certificates' expiry (none: the app generates none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<super::certs::Certificate>,
}

impl Report {
    /// The JSON document.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The compact text form.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let release = match (self.release.journal, self.release.cluster) {
            (_, Some(n)) => format!("release {n}"),
            (Some(n), None) => format!("release {n} (journal)"),
            (None, None) => "no release".into(),
        };
        let release = match &self.release.approval {
            Some(a) if a.sealed => format!("{release}, approved by `{}`", a.command),
            Some(a) => format!(
                "{release}, approved by `{}` (not sealed by your approval key)",
                a.command
            ),
            None => release,
        };
        let _ = writeln!(
            out,
            "{} on {} (namespace {}): {} — {release}",
            self.app,
            self.target,
            self.namespace,
            self.state.as_str()
        );
        for r in &self.reasons {
            let _ = writeln!(out, "  ! {r}");
        }
        if !self.workloads.is_empty() {
            let _ = writeln!(
                out,
                "  {:<12} {:<20} {:<12} {:>7}  reason",
                "kind", "name", "health", "ready"
            );
        }
        for w in &self.workloads {
            let ready = format!("{}/{}", w.ready, w.desired);
            let _ = writeln!(
                out,
                "  {:<12} {:<20} {:<12} {:>7}  {}",
                w.kind,
                w.name,
                w.health.as_str(),
                ready,
                w.reason.as_deref().unwrap_or("")
            );
        }
        for c in &self.checks {
            let verdict = if c.passed { "passed" } else { "FAILED" };
            let _ = writeln!(out, "  check {:<20} {verdict}  {}", c.name, c.message);
        }
        for c in &self.certificates {
            let _ = writeln!(
                out,
                "  certificate {}/{} expires {} ({} days left)",
                c.secret, c.key, c.not_after, c.days_left
            );
            if let Some(w) = &c.warning {
                let _ = writeln!(out, "  ! {w}");
            }
        }
        for u in &self.urls {
            let url = u.url.as_deref().unwrap_or("(no address yet)");
            let note = u
                .note
                .as_deref()
                .map(|n| format!("  ({n})"))
                .unwrap_or_default();
            let _ = writeln!(out, "  {:<14} {:<20} {url}{note}", u.kind, u.name);
        }
        out
    }
}
