//! Runs one step against one target: kubectl (a child process with a deadline), raw HTTP and watches
//! (a `kube::Client`'s `send`, bounded by time and event count).

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;

use crate::differential::requests::Action;
use crate::differential::target::{Target, User};

/// How long one kubectl run or HTTP request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// What one request answered.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Answer {
    /// Exit code (kubectl, Python) or HTTP status.
    pub code: i64,
    /// stdout, or the response body (a watch's: one event per line).
    pub out: String,
    /// stderr (kubectl), or what went wrong reaching the server.
    pub err: String,
}

/// Runs `action` against `target`.
pub fn run(target: &Target, rt: &tokio::runtime::Runtime, action: &Action) -> Answer {
    match action {
        Action::Kubectl {
            args,
            stdin,
            user,
            retry,
        } => {
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let a = kubectl(target, *user, args, stdin.as_deref());
                if !retry || a.code == 0 || Instant::now() > deadline {
                    return a;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        }
        Action::SaveToken { namespace, sa } => {
            let args: Vec<String> = ["create", "token", sa, "-n", namespace]
                .iter()
                .map(|s| s.to_string())
                .collect();
            let a = kubectl(target, User::Admin, &args, None);
            if a.code == 0 {
                *target.sa_token.lock().expect("token") = Some(a.out.trim().to_string());
            }
            a
        }
        Action::Http {
            method,
            path,
            body,
            content_type,
            accept,
            user,
        } => rt.block_on(http(
            target,
            method,
            path,
            body.clone(),
            *content_type,
            *accept,
            *user,
        )),
        Action::Watch {
            path,
            events,
            seconds,
        } => rt.block_on(watch(target, path, *events, *seconds)),
        Action::Python { .. } => unreachable!("the Python driver runs these"),
        Action::Compact => {
            if let Some(sim) = target.as_sim() {
                sim.compact().expect("compact");
            }
            Answer::default()
        }
    }
}

fn kubectl(target: &Target, user: User, args: &[String], stdin: Option<&str>) -> Answer {
    let mut cmd = target.kubectl_command(user);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("kubectl is required and could not be run: {e}"));
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.unwrap_or_default().to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let code = loop {
        match child.try_wait().expect("kubectl wait") {
            Some(status) => break i64::from(status.code().unwrap_or(-1)),
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break -2;
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    let _ = writer.join();
    let stdout = out_reader.join().unwrap_or_default();
    let mut stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    if code == -2 {
        stderr.push_str("\n(killed after the request timeout)");
    }
    Answer {
        code,
        out: String::from_utf8_lossy(&stdout).into_owned(),
        err: stderr,
    }
}

fn request(
    target: &Target,
    method: &str,
    path: &str,
    body: Option<String>,
    content_type: Option<&str>,
    accept: Option<&str>,
) -> http::Request<kube::client::Body> {
    let mut b = http::Request::builder()
        .method(method)
        .uri(format!("{}{path}", target.url));
    if let Some(c) = content_type {
        b = b.header(http::header::CONTENT_TYPE, c);
    }
    if let Some(a) = accept {
        b = b.header(http::header::ACCEPT, a);
    }
    b.body(kube::client::Body::from(
        body.unwrap_or_default().into_bytes(),
    ))
    .expect("request")
}

async fn http(
    target: &Target,
    method: &str,
    path: &str,
    body: Option<String>,
    content_type: Option<&str>,
    accept: Option<&str>,
    user: User,
) -> Answer {
    let client = target.client(user);
    let req = request(target, method, path, body, content_type, accept);
    let sent = async {
        let resp = client.send(req).await.map_err(|e| e.to_string())?;
        let status = i64::from(resp.status().as_u16());
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok::<_, String>((status, bytes))
    };
    match tokio::time::timeout(REQUEST_TIMEOUT, sent).await {
        Ok(Ok((code, bytes))) => Answer {
            code,
            out: String::from_utf8_lossy(&bytes).into_owned(),
            err: String::new(),
        },
        Ok(Err(e)) => Answer {
            code: -1,
            out: String::new(),
            err: e,
        },
        Err(_) => Answer {
            code: -2,
            out: String::new(),
            err: "timed out".into(),
        },
    }
}

async fn watch(target: &Target, path: &str, events: usize, seconds: u64) -> Answer {
    let client = target.client(User::Admin);
    let sep = if path.contains('?') { '&' } else { '?' };
    let req = request(
        target,
        "GET",
        &format!("{path}{sep}watch=true"),
        None,
        None,
        None,
    );
    let resp = match tokio::time::timeout(REQUEST_TIMEOUT, client.send(req)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            return Answer {
                code: -1,
                out: String::new(),
                err: e.to_string(),
            };
        }
        Err(_) => {
            return Answer {
                code: -2,
                out: String::new(),
                err: "timed out".into(),
            };
        }
    };
    let code = i64::from(resp.status().as_u16());
    let mut body = resp.into_body();
    let mut buf = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    while buf.iter().filter(|b| **b == b'\n').count() < events {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    buf.extend_from_slice(data);
                }
            }
            _ => break,
        }
    }
    // The events read so far, one per line; a partial line at a deadline is dropped.
    let text = String::from_utf8_lossy(&buf).into_owned();
    let lines: Vec<&str> = text.lines().take(events).collect();
    Answer {
        code,
        out: lines.join("\n"),
        err: String::new(),
    }
}
