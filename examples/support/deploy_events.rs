//! What the example deploy tests read from `deploy -o json`: its JSON lines (progress left out), the
//! stages as `stage:outcome`, and one event by name. Included by each test with `#[path]`.

/// The JSON lines a command printed, without `progress` events.
pub fn lines(out: &assert_cmd::assert::Assert) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .filter(|l: &serde_json::Value| l["event"] != "progress")
        .collect()
}

/// Each `stage` event as `stage:outcome`, in order.
pub fn stages(lines: &[serde_json::Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["event"] == "stage")
        .map(|l| {
            format!(
                "{}:{}",
                l["stage"].as_str().unwrap_or("?"),
                l["outcome"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// The first event named `name` (the test fails without one).
pub fn event<'a>(lines: &'a [serde_json::Value], name: &str) -> &'a serde_json::Value {
    lines
        .iter()
        .find(|l| l["event"] == name)
        .unwrap_or_else(|| panic!("no `{name}` event in {lines:#?}"))
}
