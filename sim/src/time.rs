//! Wall-clock timestamps in the RFC 3339 form Kubernetes uses, and kubectl-style ages.

use std::time::{SystemTime, UNIX_EPOCH};

use jiff::Timestamp;

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Milliseconds since the Unix epoch, now.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `2026-01-02T03:04:05Z` for the current time.
pub fn now_rfc3339() -> String {
    format_rfc3339(now_secs())
}

/// Formats Unix seconds as `YYYY-MM-DDTHH:MM:SSZ` (the `metav1.Time` form).
pub fn format_rfc3339(secs: i64) -> String {
    let ts = Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH);
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Parses an RFC 3339 timestamp (any offset, optional fraction, as Go's `time.RFC3339` parsing
/// accepts) into Unix seconds, the fraction dropped.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    s.parse::<Timestamp>().ok().map(|t| t.as_second())
}

/// An RFC 3339 timestamp as the apiserver stores a `metav1.Time`: UTC, whole seconds
/// (`2026-01-02T03:04:05.821675+00:00` → `2026-01-02T03:04:05Z`); `None` when it is not one.
pub fn normalize_rfc3339(s: &str) -> Option<String> {
    parse_rfc3339(s).map(format_rfc3339)
}

/// An RFC 3339 timestamp as the apiserver stores a `metav1.MicroTime`: UTC with six fraction
/// digits (`2026-01-02T03:04:05.821675Z`).
pub fn normalize_micro(s: &str) -> Option<String> {
    let ts = s.parse::<Timestamp>().ok()?;
    let micros = ts.subsec_microsecond();
    Some(format!("{}.{micros:06}Z", ts.strftime("%Y-%m-%dT%H:%M:%S")))
}

/// Age as kubectl prints it: `5s`, `3m2s`, `4h`, `2d3h`, `40d`.
pub fn human_age(secs: i64) -> String {
    let s = secs.max(0);
    if s < 120 {
        format!("{s}s")
    } else if s < 600 {
        let (m, r) = (s / 60, s % 60);
        if r == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{r}s")
        }
    } else if s < 3 * 3600 {
        format!("{}m", s / 60)
    } else if s < 8 * 3600 {
        let (h, m) = (s / 3600, (s % 3600) / 60);
        if m == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{m}m")
        }
    } else if s < 48 * 3600 {
        format!("{}h", s / 3600)
    } else if s < 8 * 86_400 {
        let (d, h) = (s / 86_400, (s % 86_400) / 3600);
        if h == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{h}h")
        }
    } else {
        format!("{}d", s / 86_400)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_round_trip() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(parse_rfc3339("2023-11-14T22:13:20Z"), Some(1_700_000_000));
        assert_eq!(parse_rfc3339("garbage"), None);
        assert_eq!(
            normalize_rfc3339("2023-11-14T23:13:20.821675+01:00").as_deref(),
            Some("2023-11-14T22:13:20Z")
        );
        assert_eq!(
            normalize_micro("2023-11-14T22:13:20.5Z").as_deref(),
            Some("2023-11-14T22:13:20.500000Z")
        );
    }

    #[test]
    fn ages_look_like_kubectl() {
        assert_eq!(human_age(5), "5s");
        assert_eq!(human_age(182), "3m2s");
        assert_eq!(human_age(4 * 3600), "4h");
        assert_eq!(human_age(50 * 86_400), "50d");
    }
}
