//! What the engine commands share: the session options from the global flags, and a runtime to run on.

use crate::exit::Failure;
use crate::prelude::Global;
use piceli_core::Code;
use piceli_core::model::App;
use piceli_runtime::engine::session::SessionOptions;
use piceli_runtime::engine::target::ConnectOptions;
use std::path::PathBuf;

/// Session options from the global flags.
pub fn options(global: &Global) -> SessionOptions {
    SessionOptions {
        target: global.target.clone(),
        namespace: global.namespace.clone(),
        connect: ConnectOptions {
            kubeconfig: global.kubeconfig.clone(),
            context: global.context.clone(),
        },
        state_dir: global.state_dir.clone(),
        wait: (global.timeout > 0).then(|| std::time::Duration::from_secs(global.timeout)),
        wait_lock: global.wait_lock.then(|| {
            std::time::Duration::from_secs(if global.timeout > 0 {
                global.timeout
            } else {
                300
            })
        }),
        env_files: global.env_file.clone(),
    }
}

/// Run an async operation to completion on a runtime of its own.
pub fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, Failure> {
    block_on_with_workers(2, f)
}

/// Run an async operation to completion on a runtime with `workers` worker threads (at least one).
pub fn block_on_with_workers<F: std::future::Future>(
    workers: usize,
    f: F,
) -> Result<F::Output, Failure> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(1))
        .thread_name("piceli-worker")
        .enable_all()
        .build()
        .map_err(|e| {
            Failure::new(
                Code::ClusterError,
                format!("cannot start the async runtime: {e}"),
                "this is a system resource problem (threads, file descriptors)".into(),
            )
        })?;
    Ok(rt.block_on(f))
}

/// The state directory for the chosen target (no cluster needed).
pub fn state_dir(app: &App, global: &Global) -> Result<PathBuf, Failure> {
    if let Some(dir) = &global.state_dir {
        return Ok(dir.clone());
    }
    let target = match &global.target {
        Some(t) => app.target(t),
        None => app.targets.first(),
    }
    .ok_or_else(|| {
        Failure::new(
            Code::UnknownTargetFlag,
            format!(
                "no target named `{}`",
                global.target.clone().unwrap_or_default()
            ),
            format!(
                "pass one of: {}",
                app.targets
                    .iter()
                    .map(|t| t.name.v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    Ok(piceli_runtime::engine::state::StateDir::default_path(
        &app.name.v,
        &target.name.v,
    ))
}
