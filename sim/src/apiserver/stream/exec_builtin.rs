//! What a command does in a simulated container when no handler (`RunningSim::on_exec`) claims
//! it: a few programs every image has behave as in a real container — `echo`, `true`, `false`,
//! `cat` (stdin back), `hostname` (the pod's name), `env`/`printenv` (the container's literal env
//! values), `pwd`, and `sh -c` / `bash -c` scripts made of those and `exit N`, separated by `;`.
//! Any other program exits 127 with "executable file not found", as a container without it would.

use serde_json::Value;

use crate::hooks::{ExecOutput, ExecRequest};

/// Runs a built-in command.
pub fn run(pod: &Value, req: &ExecRequest) -> ExecOutput {
    let words: Vec<&str> = req.command.iter().map(String::as_str).collect();
    let mut out = ExecOutput::default();
    out.exit_code = program(pod, req, &words, &mut out, false);
    out
}

fn name_of(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Runs one program, appending to `out`; returns its exit code.
fn program(
    pod: &Value,
    req: &ExecRequest,
    words: &[&str],
    out: &mut ExecOutput,
    in_shell: bool,
) -> i32 {
    let Some((first, args)) = words.split_first() else {
        return 0;
    };
    match name_of(first) {
        "echo" => {
            let (newline, args) = match args.first() {
                Some(&"-n") => (false, &args[1..]),
                _ => (true, args),
            };
            out.stdout.extend_from_slice(args.join(" ").as_bytes());
            if newline {
                out.stdout.push(b'\n');
            }
            0
        }
        "true" => 0,
        "false" => 1,
        "cat" => {
            if args.is_empty() || args == ["-"] {
                out.stdout.extend_from_slice(&req.stdin);
                0
            } else {
                for a in args {
                    out.stderr.extend_from_slice(
                        format!("cat: {a}: No such file or directory\n").as_bytes(),
                    );
                }
                1
            }
        }
        "hostname" => {
            out.stdout
                .extend_from_slice(format!("{}\n", req.pod).as_bytes());
            0
        }
        "pwd" => {
            out.stdout.extend_from_slice(b"/\n");
            0
        }
        "env" | "printenv" => {
            let env = environment(pod, req);
            if let Some(var) = args.first() {
                match env.iter().find(|(k, _)| k == var) {
                    Some((_, v)) => {
                        out.stdout.extend_from_slice(format!("{v}\n").as_bytes());
                        0
                    }
                    None => 1,
                }
            } else {
                for (k, v) in env {
                    out.stdout
                        .extend_from_slice(format!("{k}={v}\n").as_bytes());
                }
                0
            }
        }
        "sh" | "bash" | "ash" | "dash" => {
            let script = match args {
                ["-c", script, ..] => script.to_string(),
                [] => String::from_utf8_lossy(&req.stdin).into_owned(),
                [file, ..] => {
                    out.stderr.extend_from_slice(
                        format!(
                            "{}: can't open '{file}': No such file or directory\n",
                            name_of(first)
                        )
                        .as_bytes(),
                    );
                    return 2;
                }
            };
            shell(pod, req, &script, out)
        }
        other => {
            let msg = if in_shell {
                format!("sh: {other}: not found\n")
            } else {
                format!(
                    "exec: \"{first}\": executable file not found in $PATH (piceli-sim: register a handler with RunningSim::on_exec)\n"
                )
            };
            out.stderr.extend_from_slice(msg.as_bytes());
            127
        }
    }
}

/// A tiny shell: `;`- or newline-separated commands of quoted words, `exit [N]`.
fn shell(pod: &Value, req: &ExecRequest, script: &str, out: &mut ExecOutput) -> i32 {
    let mut code = 0;
    for line in script.split(['\n', ';']) {
        let words = split_words(line);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        match words.as_slice() {
            [] => {}
            ["exit"] => return code,
            ["exit", n, ..] => return n.parse::<i32>().map_or(2, |n| n.rem_euclid(256)),
            _ => code = program(pod, req, &words, out, true),
        }
    }
    code
}

/// Splits on whitespace, honouring single and double quotes and backslash escapes.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The container's environment as a process in it sees it: PATH, HOSTNAME, HOME and the `env`
/// entries with literal values.
fn environment(pod: &Value, req: &ExecRequest) -> Vec<(String, String)> {
    let mut env = vec![
        (
            "PATH".to_string(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        ),
        ("HOSTNAME".to_string(), req.pod.clone()),
    ];
    let containers = ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .filter_map(|k| pod.pointer(&format!("/spec/{k}")).and_then(Value::as_array))
        .flatten();
    for c in containers {
        if c.get("name").and_then(Value::as_str) != Some(req.container.as_str()) {
            continue;
        }
        for e in c.get("env").and_then(Value::as_array).into_iter().flatten() {
            if let (Some(k), Some(v)) = (
                e.get("name").and_then(Value::as_str),
                e.get("value").and_then(Value::as_str),
            ) {
                env.retain(|(have, _)| have != k);
                env.push((k.to_string(), v.to_string()));
            }
        }
    }
    env.push(("HOME".to_string(), "/root".to_string()));
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exec(cmd: &[&str], stdin: &str) -> ExecOutput {
        let pod = json!({"spec": {"containers": [{"name": "app", "env": [
            {"name": "MODE", "value": "test"}, {"name": "SECRET", "valueFrom": {}}]}]}});
        let req = ExecRequest {
            pod: "web-1".into(),
            namespace: "default".into(),
            container: "app".into(),
            command: cmd.iter().map(|s| s.to_string()).collect(),
            stdin: stdin.as_bytes().to_vec(),
        };
        run(&pod, &req)
    }

    #[test]
    fn built_ins_behave_like_a_container() {
        assert_eq!(exec(&["echo", "a", "b"], "").stdout, b"a b\n");
        assert_eq!(exec(&["/bin/echo", "-n", "x"], "").stdout, b"x");
        assert_eq!(exec(&["false"], "").exit_code, 1);
        assert_eq!(exec(&["cat"], "in\n").stdout, b"in\n");
        assert_eq!(exec(&["hostname"], "").stdout, b"web-1\n");
        let env = String::from_utf8(exec(&["env"], "").stdout).unwrap();
        assert!(env.contains("MODE=test\n") && env.contains("HOSTNAME=web-1\n"));
        assert!(!env.contains("SECRET"));
        assert_eq!(exec(&["printenv", "MODE"], "").stdout, b"test\n");
        assert_eq!(exec(&["sh", "-c", "exit 3"], "").exit_code, 3);
        let s = exec(&["sh", "-c", "echo 'a  b'; exit 4"], "");
        assert_eq!((s.stdout.as_slice(), s.exit_code), (&b"a  b\n"[..], 4));
        let missing = exec(&["nosuch", "x"], "");
        assert_eq!(missing.exit_code, 127);
        assert!(String::from_utf8_lossy(&missing.stderr).contains("\"nosuch\""));
        assert_eq!(exec(&["sh", "-c", "nosuch"], "").exit_code, 127);
    }
}
