//! `exec` checks: a command in a ready pod of a workload (kube's exec over the API server), judged by
//! its exit code and, optionally, its stdout.

use super::code::CheckContext;
use crate::forward::{PortTarget, ready_pod};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::api::{Api, AttachParams};
use tokio::io::AsyncReadExt;

/// What a command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecResult {
    /// Its exit code (from the status channel).
    pub exit_code: i64,
    /// Its standard output (lossy UTF-8).
    pub stdout: String,
    /// Its standard error (lossy UTF-8): its tail is shown when the check fails.
    pub stderr: String,
}

/// Runs `command` in a running, ready pod of `workload` (its first declared container).
pub async fn run(
    cx: &CheckContext,
    workload: &str,
    command: &[String],
) -> Result<ExecResult, String> {
    let declared = cx
        .app()
        .workload(workload)
        .ok_or_else(|| format!("`{workload}` is not a workload of this app"))?;
    let target = PortTarget {
        workload: workload.to_string(),
        port: 0,
    };
    let pod = ready_pod(cx.client(), cx.app(), cx.namespace(), &target)
        .await
        .map_err(|e| e.to_string())?
        .pod;
    let mut params = AttachParams::default()
        .stdout(true)
        .stderr(true)
        .stdin(false);
    if let Some(container) = declared.containers.first() {
        params = params.container(container.name.v.clone());
    }
    let pods: Api<Pod> = Api::namespaced(cx.client().clone(), cx.namespace());
    let mut process = pods
        .exec(&pod, command.iter().map(String::as_str), &params)
        .await
        .map_err(|e| format!("exec in pod `{pod}` failed: {e}"))?;
    let status = process.take_status();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    // Both streams at once: a command that fills one while the other is not read would stall.
    let (out, err) = (process.stdout(), process.stderr());
    let read_out = async {
        match out {
            Some(mut out) => out.read_to_end(&mut stdout).await.map(|_| ()),
            None => Ok(()),
        }
    };
    let read_err = async {
        match err {
            Some(mut err) => err.read_to_end(&mut stderr).await.map(|_| ()),
            None => Ok(()),
        }
    };
    let (read_out, read_err) = tokio::join!(read_out, read_err);
    read_out.map_err(|e| format!("reading stdout of pod `{pod}` failed: {e}"))?;
    read_err.map_err(|e| format!("reading stderr of pod `{pod}` failed: {e}"))?;
    let status = match status {
        Some(status) => status.await,
        None => None,
    };
    process.abort();
    let exit_code = exit_code(status.as_ref())
        .ok_or_else(|| format!("pod `{pod}` did not report how the command exited"))?;
    Ok(ExecResult {
        exit_code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}

/// The last few lines of a command's stderr (at most 5 lines, 400 characters), for a failure message.
pub fn stderr_tail(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.trim_end().lines().collect();
    let tail = lines[lines.len().saturating_sub(5)..].join("\n");
    let count = tail.chars().count();
    let tail: String = tail.chars().skip(count.saturating_sub(400)).collect();
    (!tail.trim().is_empty()).then_some(tail)
}

/// The exit code a status-channel message carries: `Success` is 0; `Failure` with reason
/// `NonZeroExitCode` carries it as the `ExitCode` cause.
pub fn exit_code(status: Option<&Status>) -> Option<i64> {
    let status = status?;
    if status.status.as_deref() == Some("Success") {
        return Some(0);
    }
    status
        .details
        .as_ref()?
        .causes
        .as_ref()?
        .iter()
        .find(|c| c.reason.as_deref() == Some("ExitCode"))?
        .message
        .as_deref()?
        .trim()
        .parse()
        .ok()
}

/// Judges a run: the exit code must equal `expect`, and stdout contain `output` when given.
pub fn judge(result: &ExecResult, expect: i64, output: Option<&str>) -> Result<String, String> {
    if result.exit_code != expect {
        let stderr = stderr_tail(&result.stderr)
            .map(|t| format!("; stderr: {t:?}"))
            .unwrap_or_default();
        return Err(format!(
            "exited with {}, expected {expect}{stderr}",
            result.exit_code
        ));
    }
    if let Some(want) = output
        && !result.stdout.contains(want)
    {
        let seen: String = result.stdout.trim().chars().take(120).collect();
        let stderr = stderr_tail(&result.stderr)
            .map(|t| format!(", stderr: {t:?}"))
            .unwrap_or_default();
        return Err(format!(
            "exited with {expect}, but stdout does not contain `{want}` (stdout: {seen:?}{stderr})"
        ));
    }
    Ok(format!("exited with {expect}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_shows_the_tail_of_stderr() {
        let result = ExecResult {
            exit_code: 2,
            stdout: String::new(),
            stderr: "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\npsql: connection refused\n"
                .into(),
        };
        let message = judge(&result, 0, None).expect_err("fails");
        assert!(message.contains("psql: connection refused"), "{message}");
        assert!(!message.contains("line 1"), "only the tail: {message}");
        let quiet = ExecResult {
            stderr: "  \n".into(),
            ..result
        };
        assert_eq!(
            judge(&quiet, 0, None).expect_err("fails"),
            "exited with 2, expected 0"
        );
        assert_eq!(stderr_tail(&"x".repeat(1000)).map(|t| t.len()), Some(400));
    }
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{StatusCause, StatusDetails};

    fn failure(code: &str) -> Status {
        Status {
            status: Some("Failure".into()),
            reason: Some("NonZeroExitCode".into()),
            details: Some(StatusDetails {
                causes: Some(vec![StatusCause {
                    reason: Some("ExitCode".into()),
                    message: Some(code.into()),
                    ..StatusCause::default()
                }]),
                ..StatusDetails::default()
            }),
            ..Status::default()
        }
    }

    #[test]
    fn exit_codes_come_from_the_status_channel() {
        let ok = Status {
            status: Some("Success".into()),
            ..Status::default()
        };
        assert_eq!(exit_code(Some(&ok)), Some(0));
        assert_eq!(exit_code(Some(&failure("3"))), Some(3));
        assert_eq!(exit_code(Some(&failure("three"))), None);
        assert_eq!(exit_code(Some(&Status::default())), None);
        assert_eq!(exit_code(None), None);
    }

    #[test]
    fn judged_by_exit_code_then_stdout() {
        let r = ExecResult {
            exit_code: 0,
            stdout: "/tmp:5432 - accepting connections\n".into(),
            stderr: String::new(),
        };
        assert_eq!(judge(&r, 0, Some("accepting")).unwrap(), "exited with 0");
        assert!(
            judge(&r, 1, None)
                .unwrap_err()
                .contains("exited with 0, expected 1")
        );
        assert!(
            judge(&r, 0, Some("rejecting"))
                .unwrap_err()
                .contains("does not contain `rejecting`")
        );
    }
}
