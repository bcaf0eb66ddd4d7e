//! `metric` checks: scrape Prometheus text exposition through a port forward and hold every series
//! matching `name{label="value",…}` to a minimum and/or maximum.

use super::code::CheckContext;
use piceli_core::model::PortRef;

/// Label pairs, in the order written.
pub type Labels = Vec<(String, String)>;

/// A series selector: a metric name and labels that must all match.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    /// The metric name.
    pub name: String,
    /// Label pairs that must be present with these values.
    pub labels: Labels,
}

/// One sample of the exposition.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The metric name.
    pub name: String,
    /// Its labels.
    pub labels: Labels,
    /// Its value.
    pub value: f64,
}

/// Parses `name` or `name{a="x",b="y"}`.
pub fn parse_selector(text: &str) -> Result<Selector, String> {
    let text = text.trim();
    let (name, rest) = match text.find('{') {
        Some(i) => (&text[..i], Some(&text[i..])),
        None => (text, None),
    };
    if name.is_empty() {
        return Err(format!("series `{text}` has no metric name"));
    }
    let labels = match rest {
        None => Vec::new(),
        Some(rest) => {
            let (labels, after) = parse_labels(rest)?;
            if !after.trim().is_empty() {
                return Err(format!("unexpected `{after}` after the labels of `{text}`"));
            }
            labels
        }
    };
    Ok(Selector {
        name: name.trim().to_string(),
        labels,
    })
}

/// Parses `{a="x",b="y"}` at the start of `text`; returns the labels and what follows.
fn parse_labels(text: &str) -> Result<(Labels, &str), String> {
    let mut rest = text
        .strip_prefix('{')
        .ok_or_else(|| format!("expected `{{` in `{text}`"))?;
    let mut labels = Vec::new();
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((labels, after));
        }
        let eq = rest
            .find('=')
            .ok_or_else(|| format!("a label without `=` in `{text}`"))?;
        let key = rest[..eq].trim().to_string();
        rest = rest[eq + 1..].trim_start();
        rest = rest
            .strip_prefix('"')
            .ok_or_else(|| format!("label `{key}` has no quoted value in `{text}`"))?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err(format!("label `{key}` is not closed in `{text}`")),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c)) => value.push(c),
                    None => return Err(format!("label `{key}` is not closed in `{text}`")),
                },
                Some((_, c)) => value.push(c),
            }
        };
        labels.push((key, value));
        rest = &rest[end + 1..];
    }
}

/// Parses the text exposition format (comments and blank lines skipped; timestamps ignored).
pub fn parse_exposition(text: &str) -> Result<Vec<Sample>, String> {
    let mut samples = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: String| format!("line {}: {why}: `{line}`", n + 1);
        let name_end = line.find(['{', ' ', '\t']).unwrap_or(line.len());
        let name = line[..name_end].to_string();
        let (labels, rest) = if line[name_end..].starts_with('{') {
            parse_labels(&line[name_end..]).map_err(bad)?
        } else {
            (Vec::new(), &line[name_end..])
        };
        let value = rest
            .split_whitespace()
            .next()
            .ok_or_else(|| bad("no value".into()))?;
        let value: f64 = value
            .parse()
            .map_err(|_| bad(format!("`{value}` is not a number")))?;
        samples.push(Sample {
            name,
            labels,
            value,
        });
    }
    Ok(samples)
}

/// Whether a sample is one of the selected series.
pub fn matches(selector: &Selector, sample: &Sample) -> bool {
    sample.name == selector.name
        && selector
            .labels
            .iter()
            .all(|(k, v)| sample.labels.iter().any(|(sk, sv)| sk == k && sv == v))
}

/// Judges an exposition: at least one series matches, and every match is within `min..=max`.
pub fn judge(
    exposition: &str,
    series: &str,
    min: Option<f64>,
    max: Option<f64>,
) -> Result<String, String> {
    let selector = parse_selector(series)?;
    let samples = parse_exposition(exposition)?;
    let found: Vec<&Sample> = samples.iter().filter(|s| matches(&selector, s)).collect();
    if found.is_empty() {
        return Err(format!("no series `{series}` in the scrape"));
    }
    for s in &found {
        if min.is_some_and(|m| s.value.is_nan() || s.value < m) {
            return Err(format!(
                "`{series}` is {}, below the minimum {}",
                s.value,
                min.unwrap_or_default()
            ));
        }
        if max.is_some_and(|m| s.value.is_nan() || s.value > m) {
            return Err(format!(
                "`{series}` is {}, above the maximum {}",
                s.value,
                max.unwrap_or_default()
            ));
        }
    }
    let values: Vec<String> = found.iter().map(|s| s.value.to_string()).collect();
    Ok(format!("`{series}` = {}", values.join(", ")))
}

/// Scrapes `path` of a declared Service or workload through a port forward.
pub async fn scrape(
    cx: &CheckContext,
    target: &str,
    port: Option<&PortRef>,
    path: &str,
) -> Result<String, String> {
    let response = super::http::fetch(cx, target, port, "GET", path).await?;
    if response.status != 200 {
        return Err(format!("scraping `{path}` got status {}", response.status));
    }
    Ok(response.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRAPE: &str = r#"# HELP http_requests_total Requests.
# TYPE http_requests_total counter
http_requests_total{method="GET",code="200"} 1027 1395066363000
http_requests_total{method="POST",code="500"} 3
orders_failed_total 0
up 1
weird{path="a \"quoted\", b"} 2.5e1
temperature -Inf
"#;

    #[test]
    fn parses_series_with_labels_escapes_and_timestamps() {
        let samples = parse_exposition(SCRAPE).unwrap();
        assert_eq!(samples.len(), 6);
        assert_eq!(samples[0].value, 1027.0);
        assert_eq!(
            samples[4].labels,
            [("path".to_string(), "a \"quoted\", b".to_string())]
        );
        assert_eq!(samples[4].value, 25.0);
        assert_eq!(samples[5].value, f64::NEG_INFINITY);
        assert!(parse_exposition("up one").unwrap_err().contains("line 1"));
    }

    #[test]
    fn selects_by_name_and_label_subset() {
        let sel = parse_selector(r#"http_requests_total{code="500"}"#).unwrap();
        assert_eq!(sel.name, "http_requests_total");
        assert_eq!(
            judge(
                SCRAPE,
                r#"http_requests_total{code="500"}"#,
                None,
                Some(5.0)
            )
            .unwrap(),
            "`http_requests_total{code=\"500\"}` = 3"
        );
        assert!(parse_selector(r#"x{a=1}"#).is_err());
        assert!(parse_selector("{a=\"1\"}").is_err());
    }

    #[test]
    fn holds_every_match_to_the_bounds() {
        assert!(judge(SCRAPE, "up", Some(1.0), None).is_ok());
        assert!(judge(SCRAPE, "orders_failed_total", None, Some(0.0)).is_ok());
        let low = judge(SCRAPE, "up", Some(2.0), None).unwrap_err();
        assert_eq!(low, "`up` is 1, below the minimum 2");
        let high = judge(SCRAPE, "http_requests_total", None, Some(100.0)).unwrap_err();
        assert!(high.contains("above the maximum 100"), "{high}");
        let missing = judge(SCRAPE, "down", Some(1.0), None).unwrap_err();
        assert_eq!(missing, "no series `down` in the scrape");
        assert!(judge(SCRAPE, "temperature", Some(0.0), None).is_err());
    }
}
