//! A controller's own functions besides its handler: `reconcile_all_on` (a function or an `async fn`
//! giving a stream whose items reconcile every object) and `backoff` as a function of the error and the
//! attempt, or of the attempt alone, by path or by a name in scope.

mod ops {
    use std::sync::Arc;
    use std::time::Duration;

    use piceli::controller::{Action, Context, Event, HandlerError, Stream, stream};
    use piceli::k8s_openapi::api::core::v1::ConfigMap;

    pub async fn reconcile(_cm: Arc<ConfigMap>, _cx: Context) -> Result<Action, String> {
        Ok(Action::await_change())
    }
    pub async fn tidy(_ev: Event<ConfigMap>, _cx: Context) -> Result<Action, String> {
        Ok(Action::await_change())
    }
    pub fn config_changes() -> impl Stream<Item = ()> + Send + 'static {
        stream::pending()
    }
    pub async fn remote_changes() -> impl Stream<Item = ()> + Send + 'static {
        stream::iter([(), ()])
    }
    pub fn by_attempt(attempt: u32) -> Duration {
        Duration::from_secs(u64::from(attempt))
    }
    pub fn my_backoff(error: &HandlerError, attempt: u32) -> Duration {
        let per_attempt = if error.0.contains("conflict") { 10 } else { 500 };
        Duration::from_millis(per_attempt * u64::from(attempt.min(20)))
    }
}

use ops::my_backoff;

piceli::app! {
    app gens;
    target local = local(namespace: "gens-system");
    operator gens { image: "ghcr.io/acme/gen:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }

    controller gen on configmaps { reconcile_all_on: ops::config_changes, backoff: ops::my_backoff } => ops::reconcile;
    controller kept on configmaps (finalizer) { backoff: my_backoff } => ops::tidy;
    controller remote on configmaps { reconcile_all_on: ops::remote_changes, backoff: ops::by_attempt } => ops::reconcile;
}

fn main() -> std::process::ExitCode {
    let _ = gens::controllers();
    gens::main()
}
