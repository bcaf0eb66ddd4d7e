//! The app's name when `--app` gives none: what the manifests call it (`app.kubernetes.io/part-of`, else
//! `app.kubernetes.io/name` when most objects share it), else the namespace — never a made-up `imported`.

use serde_json::Value;

/// The label naming the application an object is part of.
const PART_OF: &str = "app.kubernetes.io/part-of";
/// The label naming the application (a chart's name, on every object it renders).
const NAME: &str = "app.kubernetes.io/name";

/// The app's name: the most common `part-of`, else the `name` at least half the objects carry, else the
/// namespace; made a DNS label (`My App` → `my-app`).
pub fn app_name(objects: &[Value], namespace: &str) -> String {
    let from_labels = most_common(objects, PART_OF, 1).or_else(|| {
        let half = objects.len().div_ceil(2).max(1);
        most_common(objects, NAME, half)
    });
    dns_label(from_labels.as_deref().unwrap_or(namespace))
}

/// The value of `label` most objects carry (the first read on a tie), if at least `at_least` carry it.
fn most_common(objects: &[Value], label: &str, at_least: usize) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for o in objects {
        if let Some(v) = o["metadata"]["labels"][label].as_str() {
            match counts.iter_mut().find(|(n, _)| *n == v) {
                Some((_, c)) => *c += 1,
                None => counts.push((v, 1)),
            }
        }
    }
    let mut best: Option<(&str, usize)> = None;
    for (v, n) in counts {
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((v, n));
        }
    }
    best.filter(|(v, n)| *n >= at_least && !dns_label(v).is_empty())
        .map(|(v, _)| v.to_string())
}

/// `My App` → `my-app`: a DNS label for `app NAME;` (`app-` before one that would start with a digit).
pub fn dns_label(s: &str) -> String {
    let mut n: String = s
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    n = n.trim_matches('-').to_string();
    n.truncate(63);
    let n = n.trim_end_matches('-').to_string();
    if n.is_empty() || n.starts_with(|c: char| c.is_ascii_digit()) {
        format!("app-{n}").trim_end_matches('-').to_string()
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labelled(labels: Value) -> Value {
        json!({"metadata": {"labels": labels}})
    }

    #[test]
    fn part_of_names_the_app_first() {
        let objects = [
            labelled(json!({PART_OF: "Sock Shop", NAME: "carts"})),
            labelled(json!({PART_OF: "Sock Shop", NAME: "orders"})),
        ];
        assert_eq!(app_name(&objects, "prod"), "sock-shop");
    }

    #[test]
    fn a_name_most_objects_share_names_it_else_the_namespace() {
        let chart = [
            labelled(json!({NAME: "podinfo"})),
            labelled(json!({NAME: "podinfo"})),
            labelled(json!({})),
        ];
        assert_eq!(app_name(&chart, "prod"), "podinfo");
        // Each component its own name: none of them is the app's.
        let parts = [
            labelled(json!({NAME: "web"})),
            labelled(json!({NAME: "api"})),
            labelled(json!({NAME: "db"})),
        ];
        assert_eq!(app_name(&parts, "shop"), "shop");
        assert_eq!(app_name(&[], "default"), "default");
    }

    #[test]
    fn names_become_dns_labels() {
        assert_eq!(dns_label("My App"), "my-app");
        assert_eq!(dns_label("2048"), "app-2048");
        assert_eq!(dns_label("--"), "app");
    }
}
