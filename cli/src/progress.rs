//! Progress of readiness waits, as the output allows: a line per workload on a TTY (ready/desired, the
//! time waited, why it is not ready yet), `progress` JSON lines in `deploy -o json`, and nothing in CI
//! or with other JSON output.

use crate::prelude::Output;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use piceli_runtime::engine::ready::{Progress, ProgressFn};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

/// The reporter for a command: `json_lines` when its `-o json` output is a stream of events.
pub fn reporter(output: Output, json_lines: bool) -> Option<Arc<ProgressFn>> {
    if output == Output::Json {
        return json_lines.then(json_reporter);
    }
    std::io::stderr().is_terminal().then(tty_reporter)
}

/// One `{"event": "progress", …}` line each time an object's state changes (not at every poll).
fn json_reporter() -> Arc<ProgressFn> {
    let last: Mutex<HashMap<String, (i64, bool, String)>> = Mutex::new(HashMap::new());
    Arc::new(move |p: &Progress| {
        let now = (p.ready, p.done, p.waiting.clone());
        let mut seen = last.lock().unwrap_or_else(|e| e.into_inner());
        if seen.get(&p.object) == Some(&now) {
            return;
        }
        seen.insert(p.object.clone(), now);
        let mut line = serde_json::to_value(p).unwrap_or_default();
        if let Some(map) = line.as_object_mut() {
            map.insert("event".into(), "progress".into());
        }
        println!("{line}");
    })
}

/// A spinner line per object on stderr, finished with a check mark once ready.
fn tty_reporter() -> Arc<ProgressFn> {
    let bars = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
    let lines: Mutex<HashMap<String, ProgressBar>> = Mutex::new(HashMap::new());
    let style = ProgressStyle::with_template("  {spinner} {prefix} {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    Arc::new(move |p: &Progress| {
        let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
        let bar = lines.entry(p.object.clone()).or_insert_with(|| {
            let bar = bars.add(ProgressBar::new_spinner());
            bar.set_style(style.clone());
            bar.set_prefix(p.object.clone());
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        });
        if bar.is_finished() {
            return;
        }
        if p.done {
            bar.finish_with_message(format!("ready {}/{}", p.ready, p.desired));
        } else {
            bar.set_message(format!("{}/{} ready — {}", p.ready, p.desired, p.waiting));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_unless_a_tty_or_a_json_stream() {
        // Tests run with stderr captured (not a TTY): text output is quiet, JSON only for event streams.
        if !std::io::stderr().is_terminal() {
            assert!(reporter(Output::Text, false).is_none());
        }
        assert!(reporter(Output::Json, false).is_none());
        assert!(reporter(Output::Json, true).is_some());
    }
}
