//! `code` checks: async Rust functions of the app, compiled into its binary, and the typed context
//! they get.
//!
//! ```text
//! use piceli::checks::{CheckContext, CheckError};
//!
//! pub async fn orders_flow(cx: CheckContext) -> Result<(), CheckError> {
//!     let page = cx.http_get("api", "/orders").await?;
//!     if page.status != 200 {
//!         return Err(CheckError::new(format!("GET /orders answered {}", page.status)));
//!     }
//!     Ok(())
//! }
//! ```
//!
//! The `app!` macro registers every `check code(path)` with [`code_check`]; any `Result<(), E>` with
//! `E: Display` works as the return type.

use super::http::HttpResponse;
use crate::forward::{self, Forward};
use piceli_core::model::{App, PortRef};
use piceli_core::spanned::Spanned;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What a code check gets: a client for the target's cluster, the namespace, the app and the release.
/// Cheap to clone.
#[derive(Clone)]
pub struct CheckContext {
    client: kube::Client,
    namespace: String,
    app: Arc<App>,
    release: Option<u64>,
}

impl fmt::Debug for CheckContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckContext")
            .field("app", &self.app.name.v)
            .field("namespace", &self.namespace)
            .field("release", &self.release)
            .finish_non_exhaustive()
    }
}

impl CheckContext {
    /// A context for checks of `app` in `namespace` (the runtime makes it; tests may too).
    pub fn new(
        client: kube::Client,
        namespace: String,
        app: Arc<App>,
        release: Option<u64>,
    ) -> Self {
        CheckContext {
            client,
            namespace,
            app,
            release,
        }
    }

    /// A client for the target's cluster (the kubeconfig and context the target names).
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// The namespace the app is deployed in.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The app model.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The live release the checks run against (`None`: none is journaled).
    pub fn release(&self) -> Option<u64> {
        self.release
    }

    /// A port forward to a declared Service or workload: `port` is a port name or number (`None`: the
    /// first declared port). Read and write `forward.stream`.
    pub async fn forward(&self, target: &str, port: Option<&str>) -> Result<Forward, CheckError> {
        let port = port.map(|p| match p.parse::<i64>() {
            Ok(n) => PortRef::Number(Spanned::bare(n)),
            Err(_) => PortRef::Name(Spanned::bare(p.to_string())),
        });
        self.open_forward(target, port.as_ref())
            .await
            .map_err(CheckError::new)
    }

    /// `GET path` on a declared Service or workload (its first port) through a port forward.
    pub async fn http_get(&self, target: &str, path: &str) -> Result<HttpResponse, CheckError> {
        super::http::fetch(self, target, None, "GET", path)
            .await
            .map_err(CheckError::new)
    }

    pub(crate) async fn open_forward(
        &self,
        target: &str,
        port: Option<&PortRef>,
    ) -> Result<Forward, String> {
        forward::connect(&self.client, &self.app, &self.namespace, target, port)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Why a code check failed: a message. `?` turns any error into one; [`CheckError::new`] makes one from
/// text.
pub struct CheckError(String);

impl CheckError {
    /// A failure with this message.
    pub fn new(message: impl fmt::Display) -> Self {
        CheckError(message.to_string())
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CheckError({:?})", self.0)
    }
}

impl<E: std::error::Error> From<E> for CheckError {
    fn from(e: E) -> Self {
        CheckError(e.to_string())
    }
}

/// What a code check returns: `Result<(), E>` with `E: Display`.
#[diagnostic::on_unimplemented(
    message = "a code check must return `Result<(), E>` where `E: Display`, not `{Self}`",
    label = "this check's result",
    note = "write `async fn NAME(cx: piceli::checks::CheckContext) -> Result<(), piceli::checks::CheckError>`"
)]
pub trait CheckOutput {
    /// `Ok(())`, or the failure's text.
    fn into_outcome(self) -> Result<(), String>;
}

impl<E: fmt::Display> CheckOutput for Result<(), E> {
    fn into_outcome(self) -> Result<(), String> {
        self.map_err(|e| e.to_string())
    }
}

/// The boxed future a registered check returns.
pub type CheckFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// A registered code check: the path as written in `check code(path)` and the function.
#[derive(Clone)]
pub struct CodeCheck {
    /// The path, without spaces (`checks::orders_flow`).
    pub path: &'static str,
    run: Arc<dyn Fn(CheckContext) -> CheckFuture + Send + Sync>,
}

impl fmt::Debug for CodeCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeCheck")
            .field("path", &self.path)
            .finish()
    }
}

impl CodeCheck {
    /// Runs it.
    pub fn call(&self, cx: CheckContext) -> CheckFuture {
        (self.run)(cx)
    }
}

/// Registers an async check function (what the `app!` macro emits for each `check code(path)`).
pub fn code_check<F, Fut>(path: &'static str, function: F) -> CodeCheck
where
    F: Fn(CheckContext) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: CheckOutput,
{
    CodeCheck {
        path,
        run: Arc::new(move |cx| {
            let fut = function(cx);
            Box::pin(async move { fut.await.into_outcome() })
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn passes(_cx: CheckContext) -> Result<(), CheckError> {
        Ok(())
    }

    async fn fails(_cx: CheckContext) -> Result<(), String> {
        Err("orders are stuck".into())
    }

    async fn io_fails(_cx: CheckContext) -> Result<(), CheckError> {
        let _ = std::fs::read("/definitely/not/here")?;
        Ok(())
    }

    #[test]
    fn any_display_error_becomes_the_message() {
        let ok = code_check("passes", passes);
        let bad = code_check("fails", fails);
        let io = code_check("io_fails", io_fails);
        assert_eq!(bad.path, "fails");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let cx = || {
            let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
            let client = kube::Client::try_from(config).unwrap();
            CheckContext::new(client, "ns".into(), Arc::new(App::default()), Some(2))
        };
        rt.block_on(async {
            assert_eq!(ok.call(cx()).await, Ok(()));
            assert_eq!(bad.call(cx()).await, Err("orders are stuck".to_string()));
            let message = io.call(cx()).await.unwrap_err();
            assert!(message.contains("No such file"), "{message}");
        });
    }
}
