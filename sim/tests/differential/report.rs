//! The report: each difference (request, both raw answers, both normalised) in
//! `target/differential.json`, and the one summary line.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::differential::requests::Step;
use crate::differential::run::Answer;

/// One compared request.
pub struct Outcome {
    /// The step.
    pub step: Step,
    /// The sim's answer, raw and normalised.
    pub sim: (Answer, Value),
    /// The real cluster's (or the second sim's) answer, raw and normalised.
    pub real: (Answer, Value),
}

impl Outcome {
    /// Whether the normalised answers are the same.
    pub fn identical(&self) -> bool {
        self.sim.1 == self.real.1
    }
}

/// The requests `sim/FIDELITY.md` lists as differing from kube-apiserver: the first cell of each
/// table row, between backticks.
pub fn listed_differences() -> std::collections::BTreeSet<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/FIDELITY.md");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once("` |").map(|(id, _)| id.replace("\\|", "|")))
        .collect()
}

/// The workspace's target directory: `CARGO_TARGET_DIR`, else the workspace root's `target/`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the workspace root")
            .join("target"),
    }
}

/// Writes `target/differential.json` and returns (requests, identical).
pub fn write(outcomes: &[Outcome], against: &str) -> (usize, usize) {
    let identical = outcomes.iter().filter(|o| o.identical()).count();
    let differences: Vec<Value> = outcomes
        .iter()
        .filter(|o| !o.identical())
        .map(|o| {
            json!({
                "request": o.step.id,
                "action": format!("{:?}", o.step.action),
                "sim": o.sim.0,
                "real": o.real.0,
                "normalised": {"sim": o.sim.1, "real": o.real.1},
            })
        })
        .collect();
    let report = json!({
        "against": against,
        "requests": outcomes.len(),
        "identical": identical,
        "differences": differences,
    });
    let dir = target_dir();
    std::fs::create_dir_all(&dir).expect("target dir");
    let text = serde_json::to_string_pretty(&report).expect("report");
    std::fs::write(dir.join("differential.json"), text).expect("write differential.json");
    (outcomes.len(), identical)
}
