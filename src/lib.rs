//! # Piceli
//!
//! Kubernetes applications described as typed Rust with [`app!`], checked by the compiler, and compiled
//! into the app's own deploy binary. This is the one crate an app depends on.
//!
//! ```text
//! piceli::app! {
//!     app hello;
//!     target local = local(namespace: "hello");
//!     deployment web {
//!         image: "docker.io/library/nginx:1.27@sha256:…",
//!         ports: { http: 80 },
//!     }
//!     service web -> web { port: 80 => http }
//! }
//! fn main() -> std::process::ExitCode { hello::main() }
//! ```
//!
//! See `docs/dsl.md` for the DSL and `docs/errors.md` for every error code.

pub use piceli_macros::{app, custom_resource, fragment, schema};

/// The allocator of every binary built with piceli (the `mimalloc` feature, on by default): the app's
/// deploy binary and its operator allocate per object rendered and per request served.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub use piceli_core as core;
pub use piceli_runtime as runtime;
pub use piceli_runtime::Object;

/// Kubernetes API types (k8s-openapi), for `include objects((…))`.
pub use k8s_openapi;
/// The Kubernetes client (kube), for code checks: `cx.client()` is a `piceli::kube::Client`.
pub use piceli_runtime::kube;
/// `tracing`, which the runtime logs through: a handler's `piceli::tracing::info!(…)` lands in the span
/// of its reconcile (controller, object) or admission review (webhook, uid); `serve` prints it.
pub use piceli_runtime::tracing;
/// serde, schemars and serde_json as custom resource types use them (`#[piceli::custom_resource]` and
/// `#[piceli::schema]` derive through these paths, so an operator crate depends on `piceli` alone).
pub use schemars;
/// serde (see [`schemars`](mod@schemars)).
pub use serde;
/// serde_json (see [`schemars`](mod@schemars)).
pub use serde_json;

/// Code checks: `check code(path)` in `app!` names an async function of this shape, run after a deploy
/// (and by `check`):
///
/// ```
/// use piceli::checks::{CheckContext, CheckError};
///
/// pub async fn orders_flow(cx: CheckContext) -> Result<(), CheckError> {
///     let page = cx.http_get("api", "/orders").await?;
///     if page.status != 200 {
///         return Err(CheckError::new(format!("GET /orders answered {}", page.status)));
///     }
///     Ok(())
/// }
/// ```
///
/// Any `Result<(), E>` with `E: Display` works as the return type; `?` turns any error into a
/// [`CheckError`](checks::CheckError). Each attempt is bounded by the check's timeout (10s) and retried
/// (3 attempts, 2s apart) unless the check says otherwise.
pub mod checks {
    pub use piceli_runtime::checks::http::HttpResponse;
    pub use piceli_runtime::checks::{CheckContext, CheckError, CheckOutput};
    pub use piceli_runtime::forward::Forward;
}

/// Admission webhooks: handlers typed by the resource they admit, served by the app's `serve`.
///
/// ```
/// use piceli::webhook::{Mutation, Request, Verdict, Webhooks};
/// use piceli::k8s_openapi::api::{apps::v1::Deployment, core::v1::Pod};
///
/// pub async fn no_latest_tag(req: Request<Deployment>) -> Verdict {
///     let pod = req.object().spec.as_ref().and_then(|s| s.template.spec.as_ref());
///     let images = pod.map(|p| p.containers.iter().filter_map(|c| c.image.as_deref()));
///     match images.into_iter().flatten().find(|i| i.ends_with(":latest")) {
///         Some(image) => Verdict::deny(format!("image {image} uses :latest")),
///         None => Verdict::allow(),
///     }
/// }
/// pub fn add_team(req: Request<Pod>) -> Mutation {
///     let mut pod = req.object().clone();
///     pod.metadata.labels.get_or_insert_with(Default::default).insert("team".into(), "shop".into());
///     Mutation::object(pod)
/// }
/// let hooks = Webhooks::new()
///     .validate("no-latest-tag", no_latest_tag)
///     .mutate_all("pod-defaults", (add_team,));
/// ```
///
/// See `docs/webhooks.md`. With the `operator` feature.
#[cfg(feature = "operator")]
pub use piceli_runtime::webhook;

/// Controllers on any resource: level-based `reconcile(obj, cx)` functions (with a finalizer:
/// `Event::Apply | Event::Cleanup`) and edge-style [`Controller`](controller::Controller) impls
/// (`on_create` / `on_update(old, new)` / `on_delete` / `on_timer`), on kube's runtime, with per-object
/// backoff, timers, Lease leader election and the RBAC they need.
///
/// ```
/// use std::sync::Arc;
/// use piceli::controller::{Action, Context, Controller, ControllerOptions, Controllers};
/// use piceli::k8s_openapi::api::core::v1::ConfigMap;
///
/// pub async fn reconcile(cm: Arc<ConfigMap>, cx: Context) -> Result<Action, piceli::kube::Error> {
///     let _configmaps = cx.api::<ConfigMap>();
///     Ok(Action::requeue(std::time::Duration::from_secs(300)))
/// }
/// pub struct Audit;
/// impl Controller<ConfigMap> for Audit {
///     type Error = piceli::kube::Error;
///     async fn on_update(&self, old: &ConfigMap, new: &ConfigMap, _cx: &Context) -> Result<(), Self::Error> {
///         println!("{:?} changed: {:?} -> {:?}", new.metadata.name, old.data, new.data);
///         Ok(())
///     }
/// }
/// let controllers = Controllers::new("shop")
///     .reconcile("config", ControllerOptions::default(), reconcile)
///     .edge("audit", ControllerOptions::default().all_namespaces(), Audit);
/// assert_eq!(controllers.names(), ["config", "audit"]);
/// ```
///
/// See `docs/controllers.md`. With the `operator` feature.
#[cfg(feature = "operator")]
pub use piceli_runtime::controller;

/// The app model and its builder: parts of an app made by Rust functions (N similar workers, a shared
/// sidecar), added to an `app!` with `include app((parts()))` or run on their own with [`run`].
///
/// ```
/// use piceli::{App, Service, Workload};
///
/// const NGINX: &str = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";
///
/// pub fn workers(n: usize) -> App {
///     (0..n).fold(App::new("workers"), |app, i| {
///         let name = format!("worker-{i}");
///         app.with_workload(Workload::deployment(&name, NGINX).port("http", 8080).env("SHARD", i.to_string()))
///             .with_service(Service::to(&name, &name).port(80, "http"))
///     })
/// }
/// assert_eq!(workers(3).workloads.len(), 3);
/// ```
///
/// A part is checked when the binary runs, by the same rules and codes `app!` applies at compile time,
/// before anything is rendered or sent to a cluster.
pub use piceli_core::model::{App, ConfigMap, Container, Service, Workload, WorkloadKind};

/// Runs the deploy command line (`render`, `plan`, `deploy`, `status`, …) of an app built in Rust rather
/// than declared with [`app!`] (whose generated `main()` does the same for its app). The app is checked
/// by the same rules as `app!` checks at compile time before any command renders or sends anything.
///
/// ```no_run
/// use piceli::{App, Workload};
///
/// fn main() -> std::process::ExitCode {
///     let image = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";
///     piceli::run(App::new("solo").with_workload(Workload::deployment("web", image)))
/// }
/// ```
pub fn run(app: App) -> std::process::ExitCode {
    telemetry();
    piceli_cli::AppBinary::new(app).main()
}

/// With the `otlp` feature: spans are exported over OTLP when the environment names a collector
/// (docs/controllers.md, "Traces over OTLP").
fn telemetry() {
    #[cfg(feature = "otlp")]
    piceli_otlp::install();
}

/// What the code generated by `app!` calls. Not a stable API.
#[doc(hidden)]
pub mod __private {
    /// The model's types, for the places of values written as Rust expressions (`model::EnvValue::Literal`).
    pub use piceli_core::model;
    pub use piceli_core::model::App;
    pub use piceli_runtime::assign::{assign, assign_container, assign_workload, pairs, strings};
    pub use piceli_runtime::checks::{CodeCheck, code_check};
    pub use piceli_runtime::load::{env, int, json, load, objects, string};

    /// What `app!`'s `main()` builds: the app binary of `piceli-cli`, with this crate's features (the
    /// `otlp` exporter) turned on before it runs.
    pub struct AppBinary(piceli_cli::AppBinary);

    impl AppBinary {
        /// The app model (with the values written as Rust expressions filled in) and its `check code(…)`
        /// functions.
        pub fn new(app: App, code_checks: Vec<CodeCheck>) -> Self {
            let mut binary = piceli_cli::AppBinary::new(app);
            binary.code_checks = code_checks;
            AppBinary(binary)
        }

        /// The app's admission webhooks and controllers, which `serve` runs.
        #[cfg(feature = "operator")]
        pub fn operator(
            mut self,
            webhooks: fn() -> piceli_runtime::webhook::Webhooks,
            controllers: fn() -> piceli_runtime::controller::Controllers,
        ) -> Self {
            self.0.operator = piceli_cli::Operator {
                webhooks,
                controllers,
            };
            self
        }

        /// Runs the command line of the process's arguments.
        pub fn main(self) -> std::process::ExitCode {
            super::telemetry();
            self.0.main()
        }
    }

    /// `include app((…))`: the expression must give a [`piceli::App`](crate::App).
    pub fn part(app: App) -> App {
        app
    }

    #[cfg(feature = "operator")]
    pub use piceli_runtime::webhook::{mutator, validator};

    /// A webhook's options from its declaration: the handler gets a little less than the configuration's
    /// `timeoutSeconds`, so the API server receives the failure's reason rather than its own timeout.
    #[cfg(feature = "operator")]
    pub fn webhook_options(
        timeout_seconds: u64,
        ignore_failures: bool,
    ) -> piceli_runtime::webhook::WebhookOptions {
        let millis = timeout_seconds * 1000;
        piceli_runtime::webhook::WebhookOptions {
            timeout: std::time::Duration::from_millis(millis - (millis / 5).min(1000)),
            failure_policy: if ignore_failures {
                piceli_runtime::webhook::FailurePolicy::Ignore
            } else {
                piceli_runtime::webhook::FailurePolicy::Fail
            },
        }
    }

    pub use piceli_runtime::controller::{UnknownCrdName, crd_name_mismatch, custom_resource};
    #[cfg(feature = "operator")]
    pub use piceli_runtime::controller::{
        backoff_fn, controller, finalizing_controller, options as controller_options,
        reconcile_all_on,
    };
}
