//! The suite's steps: what one request is ([`Action`]), and the whole table in order, gathered from
//! the `requests_*` modules.

use serde_json::Value;

use crate::differential::target::User;

/// What one step sends.
#[derive(Debug, Clone)]
pub enum Action {
    /// `kubectl ARGS` (with `STDIN`), as `user`; with `retry`, run again (up to 60 s) until it exits 0
    /// (for what a cluster's controllers make eventually, such as a namespace's default ServiceAccount).
    Kubectl {
        args: Vec<String>,
        stdin: Option<String>,
        user: User,
        retry: bool,
    },
    /// One HTTP request.
    Http {
        method: &'static str,
        path: String,
        body: Option<String>,
        content_type: Option<&'static str>,
        accept: Option<&'static str>,
        user: User,
    },
    /// A watch (`?watch=true` is added): read until `events` events came or `seconds` passed.
    Watch {
        path: String,
        events: usize,
        seconds: u64,
    },
    /// One operation of the Python driver (`python_driver.py`): `op` with `args`.
    Python { op: &'static str, args: Value },
    /// `kubectl create token SA -n NS`, kept as the [`User::Sa`] credential.
    SaveToken { namespace: String, sa: String },
    /// Not a request: drops the watch history of an in-process sim, as an etcd compaction does on a
    /// real cluster's own schedule (a real kube-apiserver keeps no history from before its watch cache
    /// started), so an old resourceVersion is too old on both.
    Compact,
}

/// One step of the suite.
#[derive(Debug, Clone)]
pub struct Step {
    /// A short description, unique in the suite (`cm: apply ConfigMap`).
    pub id: String,
    /// What it sends.
    pub action: Action,
}

impl Step {
    /// Whether this step is a request that is compared (everything but [`Action::Compact`]).
    pub fn counted(&self) -> bool {
        !matches!(self.action, Action::Compact)
    }
}

/// Builds steps; every builder adds one.
#[derive(Default)]
pub struct Suite {
    /// The steps so far.
    pub steps: Vec<Step>,
}

impl Suite {
    fn push(&mut self, id: String, action: Action) {
        self.steps.push(Step { id, action });
    }

    /// `kubectl ARGS` (split on spaces) as the admin.
    pub fn k(&mut self, args: &str) {
        self.kubectl(args, None, User::Admin, false);
    }

    /// `kubectl ARGS` with a manifest on stdin.
    pub fn k_in(&mut self, args: &str, stdin: &str) {
        self.kubectl(args, Some(stdin), User::Admin, false);
    }

    /// `kubectl ARGS`, retried until it succeeds.
    pub fn k_until(&mut self, args: &str) {
        self.kubectl(args, None, User::Admin, true);
    }

    /// `kubectl ARGS` as another user.
    pub fn k_as(&mut self, user: User, args: &str) {
        self.kubectl(args, None, user, false);
    }

    /// `kubectl` with arguments given one by one (for values with spaces).
    pub fn k_args(&mut self, args: &[&str], stdin: Option<&str>) {
        let id = format!("kubectl {}", args.join(" "));
        self.push(
            id,
            Action::Kubectl {
                args: args.iter().map(|s| s.to_string()).collect(),
                stdin: stdin.map(str::to_string),
                user: User::Admin,
                retry: false,
            },
        );
    }

    fn kubectl(&mut self, args: &str, stdin: Option<&str>, user: User, retry: bool) {
        let mut id = format!("kubectl {args}");
        if user != User::Admin {
            id = format!("{id} (as {user:?})");
        }
        if stdin.is_some() {
            id.push_str(" <manifest>");
        }
        self.push(
            id,
            Action::Kubectl {
                args: args.split_whitespace().map(str::to_string).collect(),
                stdin: stdin.map(str::to_string),
                user,
                retry,
            },
        );
    }

    /// An HTTP GET as the admin.
    pub fn get(&mut self, path: &str) {
        self.http("GET", path, None, None, None, User::Admin);
    }

    /// An HTTP GET with an `Accept` header.
    pub fn get_accept(&mut self, path: &str, accept: &'static str) {
        self.http("GET", path, None, None, Some(accept), User::Admin);
    }

    /// An HTTP request of any kind.
    pub fn http(
        &mut self,
        method: &'static str,
        path: &str,
        body: Option<&str>,
        content_type: Option<&'static str>,
        accept: Option<&'static str>,
        user: User,
    ) {
        let mut id = format!("{method} {path}");
        if let Some(a) = accept {
            id = format!("{id} (Accept: {a})");
        }
        if let Some(c) = content_type {
            id = format!("{id} ({c})");
        }
        if user != User::Admin {
            id = format!("{id} (as {user:?})");
        }
        self.push(
            id,
            Action::Http {
                method,
                path: path.into(),
                body: body.map(str::to_string),
                content_type,
                accept,
                user,
            },
        );
    }

    /// A watch.
    pub fn watch(&mut self, path: &str, events: usize, seconds: u64) {
        self.push(
            format!("WATCH {path}"),
            Action::Watch {
                path: path.into(),
                events,
                seconds,
            },
        );
    }

    /// A Python client operation.
    pub fn py(&mut self, op: &'static str, args: Value) {
        self.push(format!("python {op} {args}"), Action::Python { op, args });
    }

    /// Saves a ServiceAccount token as the [`User::Sa`] credential.
    pub fn save_token(&mut self, namespace: &str, sa: &str) {
        self.push(
            format!("kubectl create token {sa} -n {namespace}"),
            Action::SaveToken {
                namespace: namespace.into(),
                sa: sa.into(),
            },
        );
    }

    /// Compacts the sims' watch history (not a request).
    pub fn compact(&mut self) {
        self.push("compact".into(), Action::Compact);
    }
}

/// The whole suite, in order.
pub fn suite() -> Vec<Step> {
    let mut s = Suite::default();
    crate::differential::requests_discovery::add(&mut s);
    crate::differential::requests_objects::add(&mut s);
    crate::differential::requests_patch::add(&mut s);
    crate::differential::requests_workloads::add(&mut s);
    crate::differential::requests_http::add(&mut s);
    crate::differential::requests_python::add(&mut s);
    let mut ids = std::collections::BTreeSet::new();
    for step in &mut s.steps {
        let mut n = 2;
        let base = step.id.clone();
        while !ids.insert(step.id.clone()) {
            step.id = format!("{base} #{n}");
            n += 1;
        }
    }
    s.steps
}
