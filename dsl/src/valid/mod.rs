//! Pass 2, validate: the generic tree becomes the typed app model, every problem collected.
//!
//! Shape problems (unknown keys, wrong value types, missing keys, secret literals) are found while
//! lowering; meaning problems (references, names, images, quantities, …) by the same
//! `piceli_core::validate` the runtime runs. Each problem becomes an error spanning the narrowest token;
//! all are reported in one build, shape problems first, then meaning problems in source order.

mod block_values;
mod blocks;
mod build;
mod checks;
mod config;
mod container;
mod container_keys;
mod controller;
mod controller_options;
mod external;
mod fields;
mod includes;
mod keys;
mod netpol;
mod network;
mod operator;
mod policy;
mod rbac;
mod resources;
mod routes;
mod secret_sources;
mod selectors;
mod service;
mod shortcuts;
mod targets;
mod workload;
mod workload_keys;

use crate::ast::{Input, Item, NameTok, Sp, Value};
use piceli_core::Code;
use piceli_core::model::App;
use piceli_core::rules::did_you_mean;
use piceli_core::spanned::{Loc, Spanned};

pub use controller::ControllerCode;
pub use fields::Fields;
pub use operator::WebhookCode;

/// The app, checked: its model and what the expansion needs to emit.
pub struct Checked {
    /// The model, with placeholders where values are Rust expressions.
    pub app: App,
    /// Values written as Rust expressions (and file contents), assigned to their places at run time.
    pub dynamics: Vec<Dynamic>,
    /// Rust paths that must resolve (code checks).
    pub paths: Vec<syn::Path>,
    /// The webhooks' handlers, for `webhooks()`.
    pub webhooks: Vec<WebhookCode>,
    /// The controllers' handlers, for `controllers()`.
    pub controllers: Vec<ControllerCode>,
    /// `include app((…))`: Rust expressions giving parts of the app, merged in when `app()` runs.
    pub parts: Vec<syn::Expr>,
    /// Files the macro read (`crds "…"`), relative to the crate: inputs of the build, so an edit rebuilds.
    pub tracked: Vec<String>,
}

/// A value known only at run time.
pub struct Dynamic {
    /// Its location, which the placeholder it replaces in the model carries (a `Spanned`'s, a block
    /// value's, or the `Loc` of `env_expr` and of an `Include::Objects`).
    pub at: Loc,
    /// What it is.
    pub kind: DynamicKind,
}

/// The kinds of run-time value.
pub enum DynamicKind {
    /// A Rust expression producing a string.
    Str(syn::Expr),
    /// A Rust expression producing an integer.
    Int(syn::Expr),
    /// A Rust expression producing any serializable value (a map, list or object in a block).
    Json(syn::Expr),
    /// The contents of a file relative to the crate (`include_str!`).
    File(String),
    /// k8s-openapi objects built in Rust.
    Objects(syn::Expr),
    /// A whole `env:` map built in Rust (pairs of names and values).
    Env(syn::Expr),
    /// A map of text built in Rust (`labels: (common())`), assigned to its field when `app()` runs.
    Pairs(syn::Expr, Place),
    /// A list of text built in Rust (`args: (flags())`), assigned to its field when `app()` runs.
    Strings(syn::Expr, Place),
}

/// The model field a map or list from Rust extends (no placeholder in the model holds its location): a
/// field of a workload, or of one of its containers.
/// The expansion turns it into a typed assignment (`|w| &mut w.pod_labels`), found by name.
pub struct Place {
    /// The workload's name.
    pub workload: String,
    /// The container's name, when the field is a container's.
    pub container: Option<String>,
    /// The field of `Workload` or `Container`.
    pub field: &'static str,
}

/// The state of pass 2: the model being built, the location table, and the errors so far.
pub struct Lower {
    errors: Vec<syn::Error>,
    spans: Vec<Sp>,
    locations: Vec<String>,
    dynamics: Vec<Dynamic>,
    paths: Vec<syn::Path>,
    parts: Vec<syn::Expr>,
    webhooks: Vec<WebhookCode>,
    controllers: controller::State,
    /// Included objects that name a namespace of their own, checked against the targets' at the end.
    included_namespaces: Vec<IncludedNamespace>,
    /// The CRDs `crds` items read, and what `resource` items need of them.
    crds: resources::Crds,
    /// Lowering a `resource` item's block: a bare name where the schema takes a string is that string
    /// (`backendRefs: [{ name: api, port: 80 }]`, as the app's items are named).
    bare_names: bool,
    /// `(service api)` selectors in `resource` blocks, filled in once every item is lowered.
    selects: Vec<selectors::Pending>,
    /// `http_route` items, made `resource` HTTPRoutes once every item is lowered.
    routes: Vec<routes::Pending>,
    /// The app being built.
    pub app: App,
}

/// An included object that names its own namespace (`metadata.namespace`).
pub(crate) struct IncludedNamespace {
    /// `k8s/legacy.yaml:12: Deployment `api``.
    pub what: String,
    /// The namespace it names.
    pub namespace: String,
    /// The file's token.
    pub sp: Sp,
}

/// The top-level keywords, in the order `did you mean` prefers.
const KEYWORDS: &[&str] = &[
    "app",
    "target",
    "labels",
    "annotations",
    "deployment",
    "stateful_set",
    "daemon_set",
    "job",
    "cron_job",
    "service",
    "config_map",
    "secret",
    "pvc",
    "network_policy",
    "ingress",
    "http_route",
    "autoscaler",
    "disruption_budget",
    "service_account",
    "role",
    "cluster_role",
    "role_binding",
    "cluster_role_binding",
    "check",
    "include",
    "external",
    "operator",
    "validate",
    "mutate",
    "controller",
    "custom_resource",
    "crds",
    "resource",
];

/// Run pass 2. On failure, every error found (shape and meaning), in source order.
///
/// `operator`: whether piceli's `operator` feature is on; without it a controller or webhook is PCL0240.
pub fn check(input: Input, operator: bool) -> Result<Checked, (Vec<syn::Error>, Option<String>)> {
    let mut lw = Lower {
        errors: Vec::new(),
        spans: Vec::new(),
        locations: Vec::new(),
        dynamics: Vec::new(),
        paths: Vec::new(),
        parts: Vec::new(),
        webhooks: Vec::new(),
        controllers: controller::State::default(),
        included_namespaces: Vec::new(),
        crds: resources::Crds::default(),
        bare_names: false,
        selects: Vec::new(),
        routes: Vec::new(),
        app: App::default(),
    };
    let mut app_names: Vec<NameTok> = Vec::new();
    // CRD files first: a `resource` may come before the `crds` that defines its kind.
    for item in input.items.iter().filter(|i| i.keyword.text == "crds") {
        resources::crds(&mut lw, item);
    }
    for item in &input.items {
        lw.item(item, &mut app_names);
    }
    controller::resolve(&mut lw);
    other_namespaces(&mut lw);
    if !operator {
        operator_feature_off(&mut lw, &input);
    }
    match app_names.as_slice() {
        [one] => lw.app.name = Spanned::new(one.text.clone(), lw.loc(one.sp, "app name")),
        [] => {
            let sp = input
                .items
                .first()
                .map(|i| i.keyword.sp)
                .unwrap_or(Sp::one(proc_macro2::Span::call_site()));
            lw.fail(
                Code::MissingAppName,
                sp,
                "the app has no name",
                "start with `app NAME;`, e.g. `app hello;`",
            )
        }
        [_, second, ..] => lw.fail(
            Code::MissingAppName,
            second.sp,
            "the app is named twice",
            "keep one `app NAME;`",
        ),
    }
    routes::resolve(&mut lw);
    selectors::resolve(&mut lw);
    lw.app.locations = piceli_core::model::Locations::Owned(lw.locations.clone());
    lw.app.dynamic = lw.dynamics.iter().map(|d| d.at).collect();
    for d in piceli_core::validate::validate(&lw.app) {
        let sp = lw.span_at(d.at);
        let help = match d.earlier.and_then(|first| lw.span_at(first).line()) {
            Some(line) => format!("{}; the first is on line {line}", d.help),
            None => d.help.clone(),
        };
        lw.errors
            .push(sp.error(format!("{}\n\nhelp: {help}", d.headline())));
    }
    let name = app_names.first().map(|n| n.text.clone());
    if lw.errors.is_empty() {
        Ok(Checked {
            app: lw.app,
            dynamics: lw.dynamics,
            paths: lw.paths,
            webhooks: lw.webhooks,
            controllers: lw.controllers.code,
            parts: lw.parts,
            tracked: lw.crds.files,
        })
    } else {
        Err((lw.errors, name))
    }
}

/// An included object deploys to the namespace it names, so one naming another namespace than a target's
/// is refused unless its `include` says `namespace: keep`.
fn other_namespaces(lw: &mut Lower) {
    let pending = std::mem::take(&mut lw.included_namespaces);
    for inc in pending {
        use piceli_core::include::{OTHER_NAMESPACE_HELP, other_namespace};
        if let Some(message) = other_namespace(&inc.what, &inc.namespace, &lw.app.targets) {
            lw.fail(
                Code::IncludeOtherNamespace,
                inc.sp,
                message,
                OTHER_NAMESPACE_HELP,
            );
        }
    }
}

/// The help for a key given twice: keep one, naming the line of the first when the compiler knows it.
fn keep_one(first: Sp) -> String {
    match first.line() {
        Some(line) => format!("keep one of them; the first is on line {line}"),
        None => "keep one of them".to_string(),
    }
}

impl Lower {
    /// Record where a value came from; returns its location.
    pub fn loc(&mut self, sp: Sp, description: impl Into<String>) -> Loc {
        self.spans.push(sp);
        self.locations.push(description.into());
        Loc(self.spans.len() as u32 - 1)
    }

    /// The tokens a location was recorded for (the macro's call site when unknown).
    pub(super) fn span_at(&self, at: Loc) -> Sp {
        self.spans
            .get(at.0 as usize)
            .copied()
            .unwrap_or(Sp::one(proc_macro2::Span::call_site()))
    }

    /// Record a problem found while lowering.
    pub fn fail(
        &mut self,
        code: Code,
        sp: Sp,
        message: impl std::fmt::Display,
        help: impl std::fmt::Display,
    ) {
        self.errors
            .push(sp.error(format!("{code}: {message}\n\nhelp: {help}")));
    }

    /// Record a value known only at run time.
    pub fn dynamic(&mut self, at: Loc, kind: DynamicKind) {
        self.dynamics.push(Dynamic { at, kind });
    }

    /// Record a Rust path that must resolve.
    pub fn rust_path(&mut self, path: syn::Path) {
        self.paths.push(path);
    }

    fn item(&mut self, item: &Item, app_names: &mut Vec<NameTok>) {
        let kw = item.keyword.text.as_str();
        match kw {
            "app" => match &item.name {
                Some(n) => app_names.push(n.clone()),
                None => self.fail(
                    Code::MissingAppName,
                    item.keyword.sp,
                    "`app` needs a name",
                    "write `app hello;`",
                ),
            },
            "target" => targets::target(self, item),
            "labels" | "annotations" => {
                let body = item.body.as_ref().or(item.eq.as_ref());
                let labels = match body {
                    Some(v) => self.labels(v, kw),
                    None => Vec::new(),
                };
                if kw == "labels" {
                    self.app.labels.extend(labels);
                } else {
                    self.app.annotations.extend(labels);
                }
            }
            "deployment" | "stateful_set" | "daemon_set" | "job" | "cron_job" => {
                workload::workload(self, item)
            }
            "service" => service::service(self, item),
            "network_policy" => network::network_policy(self, item),
            "ingress" => network::ingress(self, item),
            "http_route" => routes::http_route(self, item),
            "config_map" => config::config_map(self, item),
            "secret" => config::secret(self, item),
            "pvc" => config::pvc(self, item),
            "autoscaler" => policy::autoscaler(self, item),
            "disruption_budget" => policy::disruption_budget(self, item),
            "service_account" => rbac::service_account(self, item),
            "role" | "cluster_role" => rbac::role(self, item),
            "role_binding" | "cluster_role_binding" => rbac::role_binding(self, item),
            "check" => checks::check(self, item),
            "include" => includes::include(self, item),
            "crds" => {} // read before the other items
            "resource" => resources::resource(self, item),
            "external" => external::external(self, item),
            "operator" => operator::operator(self, item),
            "validate" | "mutate" => operator::webhook(self, item),
            "controller" => controller::controller(self, item),
            "custom_resource" => controller::custom_resource(self, item),
            other => {
                let help = match did_you_mean(other, KEYWORDS.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "see docs/dsl.md for the keywords".to_string(),
                };
                self.fail(
                    Code::UnknownKey,
                    item.keyword.sp,
                    format!("unknown keyword `{other}`"),
                    help,
                );
            }
        }
    }

    /// The declared name of an item, or an error saying it is missing.
    pub fn item_name(&mut self, item: &Item) -> Option<Spanned<String>> {
        match &item.name {
            Some(n) => {
                let at = self.loc(n.sp, format!("{} {}", item.keyword.text, n.text));
                Some(Spanned::new(n.text.clone(), at))
            }
            None => {
                self.fail(
                    Code::MissingKey,
                    item.keyword.sp,
                    format!("`{}` needs a name", item.keyword.text),
                    format!("write `{} NAME {{ … }}`", item.keyword.text),
                );
                None
            }
        }
    }

    /// The `-> NAME` of an item, or an error saying it is missing.
    pub fn item_arrow(&mut self, item: &Item, what: &str, owner: &str) -> Option<Spanned<String>> {
        match &item.arrow {
            Some(n) => {
                let at = self.loc(n.sp, format!("{owner} › {what}"));
                Some(Spanned::new(n.text.clone(), at))
            }
            None => {
                self.fail(
                    Code::MissingKey,
                    item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp),
                    format!("`{owner}` does not say which {what} it is for"),
                    format!("write `{} NAME -> {what} {{ … }}`", item.keyword.text),
                );
                None
            }
        }
    }

    /// Record a webhook's handlers for the expansion.
    pub fn webhook_code(&mut self, code: WebhookCode) {
        self.webhooks.push(code);
    }

    /// Report a value of the wrong type.
    pub fn wrong_type(&mut self, v: &Value, expected: &str, example: &str) {
        self.fail(
            Code::WrongType,
            v.sp(),
            format!("expected {expected}, found {}", v.describe()),
            format!("write e.g. `{example}`"),
        );
    }
}

/// PCL0240 at the first controller or webhook when piceli's `operator` feature is off: one error, since
/// one line of Cargo.toml fixes them all (the expansion then emits no operator code to fail after it).
fn operator_feature_off(lw: &mut Lower, input: &Input) {
    let first = input.items.iter().find(|i| {
        matches!(
            i.keyword.text.as_str(),
            "controller" | "validate" | "mutate"
        )
    });
    if let Some(item) = first {
        let what = if item.keyword.text == "controller" {
            "a controller"
        } else {
            "an admission webhook"
        };
        lw.fail(
            Code::OperatorFeatureOff,
            item.keyword.sp,
            format!("this app declares {what}, but piceli's `operator` feature is off"),
            "turn it on in Cargo.toml: `piceli = { version = \"0.1\", features = [\"operator\"] }`",
        );
    }
}
