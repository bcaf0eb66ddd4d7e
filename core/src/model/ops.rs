//! What runs after a deploy (checks) and what an app brings along unchanged (includes).

use super::PortRef;
use crate::spanned::{Loc, Name, Spanned};
use serde::{Deserialize, Serialize};

/// A post-deploy check.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Its name (defaults to `KIND-TARGET`, numbered when repeated).
    pub name: Name,
    /// What it checks.
    pub kind: CheckKind,
    /// Give up after this long per attempt (e.g. `"10s"`).
    pub timeout: Option<Spanned<String>>,
    /// Attempts before it fails.
    pub retries: Option<Spanned<i64>>,
    /// Wait between attempts (e.g. `"2s"`).
    pub interval: Option<Spanned<String>>,
}

/// The kinds of check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CheckKind {
    /// An HTTP request through a port forward: `http(web, "/", expect: 200)`.
    Http {
        /// A declared Service or workload.
        target: Name,
        /// Which port (Service port or container port); default the first.
        port: Option<PortRef>,
        /// Request path.
        path: Spanned<String>,
        /// HTTP method.
        method: Option<Spanned<String>>,
        /// Expected status.
        expect: Spanned<i64>,
        /// A substring the body must contain.
        body: Option<Spanned<String>>,
    },
    /// A command in a pod of a workload: `exec(db, ["pg_isready"], expect: 0)`.
    Exec {
        /// A declared workload.
        workload: Name,
        /// The command.
        command: Vec<Spanned<String>>,
        /// Expected exit code.
        expect: Spanned<i64>,
        /// A substring stdout must contain.
        output: Option<Spanned<String>>,
    },
    /// A Prometheus series through a port forward: `metric(web, "/metrics", series: "up", min: 1)`.
    Metric {
        /// A declared Service or workload.
        target: Name,
        /// Which port.
        port: Option<PortRef>,
        /// Scrape path.
        path: Spanned<String>,
        /// Series name (with optional `{labels}`).
        series: Spanned<String>,
        /// Lowest acceptable value.
        min: Option<Spanned<f64>>,
        /// Highest acceptable value.
        max: Option<Spanned<f64>>,
    },
    /// A user's async Rust function: `code(checks::orders_flow)`.
    Code {
        /// The function's path as written.
        function: Spanned<String>,
    },
}

impl Default for CheckKind {
    fn default() -> Self {
        CheckKind::Code {
            function: Spanned::default(),
        }
    }
}

/// Objects an app brings along as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Include {
    /// A YAML (multi-document) or JSON file relative to the app crate, read at compile time.
    File {
        /// The path as written.
        path: Spanned<String>,
        /// Its contents (filled in by `include_str!`).
        contents: Spanned<String>,
        /// JSON rather than YAML.
        json: bool,
    },
    /// Objects built in Rust (k8s-openapi types), converted to JSON at run time.
    Objects {
        /// The expression's location.
        at: Loc,
        /// The objects (filled in at run time).
        objects: Vec<serde_json::Value>,
        /// `{ namespace: keep }`: an object may name a namespace other than the targets'.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        keep_namespace: bool,
        /// `{ images: unpinned }`: images without a digest are accepted.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        images_unpinned: bool,
    },
}

impl Include {
    /// Objects built in Rust, checked as an included file's are (the namespace and images too).
    pub fn objects(at: Loc, objects: Vec<serde_json::Value>) -> Include {
        Include::Objects {
            at,
            objects,
            keep_namespace: false,
            images_unpinned: false,
        }
    }
}
