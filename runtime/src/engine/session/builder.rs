//! Opening a [`Session`]: its options (target, namespace, connection, state directory, waits, env files)
//! and what a caller attaches before the first command runs (a progress reporter, a test's fault hook).

use super::super::error::EngineError;
use super::super::state::StateDir;
use super::super::target::connect;
use super::{FaultHook, Session, SessionOptions};
use crate::render;
use piceli_core::model::App;
use std::sync::Arc;

/// A [`Session`] to open: `Session::builder(app, options).progress(p).open().await`.
pub struct SessionBuilder {
    app: App,
    options: SessionOptions,
    progress: Option<Arc<super::super::ready::ProgressFn>>,
    fault_hook: Option<Arc<FaultHook>>,
}

impl SessionBuilder {
    pub(super) fn new(app: App, options: SessionOptions) -> SessionBuilder {
        SessionBuilder {
            app,
            options,
            progress: None,
            fault_hook: None,
        }
    }

    /// Where readiness waits report progress.
    pub fn progress(mut self, progress: Option<Arc<super::super::ready::ProgressFn>>) -> Self {
        self.progress = progress;
        self
    }

    /// Test-only: where applies and resumes stop as if killed (see [`FaultHook`]).
    pub fn fault_hook(mut self, hook: Arc<FaultHook>) -> Self {
        self.fault_hook = Some(hook);
        self
    }

    /// Resolve the target, open the journal and connect.
    pub async fn open(self) -> Result<Session, EngineError> {
        let SessionBuilder {
            app,
            options: opts,
            progress,
            fault_hook,
        } = self;
        super::super::flags::validate(&opts)?;
        let env = Arc::new(super::super::env_file::SecretEnv::load(&opts.env_files)?);
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
        let state_dir = opts
            .state_dir
            .clone()
            .unwrap_or_else(|| StateDir::default_path(&app.name.v, &target.name.v));
        // Connect first: a command that fails before it reaches the cluster leaves no state directory.
        let conn = connect(&target, &opts.connect).await?;
        let state = StateDir::open(state_dir)?;
        let render = render::Options {
            target: Some(target.name.v.clone()),
            namespace: opts.namespace.clone(),
        };
        Ok(Session {
            app,
            target,
            render,
            state,
            conn,
            fault_hook,
            wait: opts.wait,
            wait_lock: opts.wait_lock,
            progress,
            env,
        })
    }
}
