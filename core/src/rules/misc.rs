//! Small value rules: port numbers, node ports, mount and HTTP paths, cron
//! schedules, int-or-percent values (PDB, rollout surge), and durations.

use super::RuleError;
use std::time::Duration;

/// Default NodePort range of a Kubernetes API server.
pub const NODE_PORT_RANGE: std::ops::RangeInclusive<i64> = 30000..=32767;

/// A port number, 1–65535.
pub fn port_number(n: i64) -> Result<u16, RuleError> {
    match u16::try_from(n) {
        Ok(p) if p != 0 => Ok(p),
        _ => Err(RuleError::new(
            format!("port `{n}` is out of range"),
            "use a port number from 1 to 65535, e.g. `8080`",
        )),
    }
}

/// A NodePort, in the default range 30000–32767.
pub fn node_port(n: i64) -> Result<u16, RuleError> {
    match u16::try_from(n) {
        Ok(p) if NODE_PORT_RANGE.contains(&n) => Ok(p),
        _ => Err(RuleError::new(
            format!("node port `{n}` is outside the NodePort range 30000-32767"),
            "use a port from 30000 to 32767, or leave it unset to let Kubernetes choose",
        )),
    }
}

/// An absolute path (volume mount paths): starts with '/', no ':', no `..`
/// components, no control characters.
pub fn absolute_path(s: &str) -> Result<(), RuleError> {
    let help = "use an absolute path without ':' or '..', e.g. `/var/lib/data`";
    let err = |m: &str| Err(RuleError::new(format!("path `{s}` {m}"), help));
    if s.is_empty() {
        return Err(RuleError::new("path must not be empty", help));
    }
    if !s.starts_with('/') {
        return err("must start with '/'");
    }
    if s.contains(':') {
        return err("must not contain ':'");
    }
    if s.split('/').any(|c| c == "..") {
        return err("must not contain '..' components");
    }
    if s.chars().any(char::is_control) {
        return err("must not contain control characters");
    }
    Ok(())
}

/// An HTTP path (probes, ingress): starts with '/', no whitespace or control
/// characters.
pub fn http_path(s: &str) -> Result<(), RuleError> {
    let help = "use a path starting with '/', percent-encoding spaces, e.g. `/healthz`";
    if !s.starts_with('/') {
        return Err(RuleError::new(
            format!("HTTP path `{s}` must start with '/'"),
            help,
        ));
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(RuleError::new(
            format!("HTTP path `{s}` contains whitespace or control characters"),
            help,
        ));
    }
    Ok(())
}

/// A CronJob schedule as Kubernetes reads it (see [`crate::cron`]).
pub fn cron_schedule(s: &str) -> Result<(), RuleError> {
    crate::cron::Schedule::parse(s)
        .map(|_| ())
        .map_err(|e| RuleError::new(e.message, e.help))
}

/// An integer or a percentage (PodDisruptionBudget, maxSurge, maxUnavailable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOrPercent {
    /// An absolute count, e.g. `1` (at most `i32::MAX`).
    Int(u32),
    /// A percentage 0–100, e.g. `25%`.
    Percent(u8),
}

/// A non-negative integer (`1`) or a percentage from 0% to 100% (`25%`).
pub fn percent_or_int(s: &str) -> Result<IntOrPercent, RuleError> {
    let help = "write a whole number like `1` or a percentage from `0%` to `100%`, e.g. `25%`";
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    let bad = |m: &str| Err(RuleError::new(format!("`{s}` {m}"), help));
    match s.strip_suffix('%') {
        Some(p) if digits(p) => match p.parse::<u8>() {
            Ok(v) if v <= 100 => Ok(IntOrPercent::Percent(v)),
            _ => bad("is over 100%"),
        },
        Some(_) => bad("is not a whole percentage"),
        // IntOrString holds an int32.
        None if digits(s) => match s.parse::<i32>() {
            Ok(v) => Ok(IntOrPercent::Int(v.unsigned_abs())),
            Err(_) => bad("is too large"),
        },
        None => bad("is not a whole number or a percentage"),
    }
}

/// A duration like `30s`, `5m`, `1h30m`, `500ms` or `1.5h` (units ns, us,
/// µs, ms, s, m, h); a bare `0` is allowed.
pub fn duration(s: &str) -> Result<Duration, RuleError> {
    let help = "write a number with a unit (h, m, s, ms, us, ns), e.g. `30s`, `5m` or `1h30m`";
    let bad = |m: String, h: &str| Err(RuleError::new(format!("duration `{s}` {m}"), h));
    if s.is_empty() {
        return Err(RuleError::new("duration must not be empty", help));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.starts_with('-') {
        return bad("must not be negative".into(), help);
    }
    // Kubernetes durations are Go `time.Duration`s: at most i64::MAX ns (~292 years).
    let too_big = || {
        RuleError::new(
            format!("duration `{s}` is too long"),
            "use a duration of at most 292 years, e.g. `8760h` for a year",
        )
    };
    let mut rest = s;
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(n);
        let u = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(u);
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
            return bad(format!("has no number before `{unit}`"), help);
        }
        let scale: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => {
                return bad(
                    format!("has no unit after `{num}`"),
                    &format!("add a unit, e.g. `{num}s`"),
                );
            }
            "d" => {
                return bad(
                    "uses days".into(),
                    &format!(
                        "write hours instead, e.g. `{}h`",
                        int.parse::<u128>().unwrap_or(1).saturating_mul(24)
                    ),
                );
            }
            _ => {
                let guess = match unit.to_ascii_lowercase().as_str() {
                    "sec" | "secs" | "second" | "seconds" => Some("s"),
                    "min" | "mins" | "minute" | "minutes" => Some("m"),
                    "hr" | "hrs" | "hour" | "hours" => Some("h"),
                    "msec" | "millis" => Some("ms"),
                    u => super::suggest::did_you_mean(u, ["ns", "us", "ms", "s", "m", "h"]),
                };
                let h = guess.map_or(help.to_string(), |g| format!("did you mean `{num}{g}`?"));
                return bad(format!("has an unknown unit `{unit}`"), &h);
            }
        };
        let whole: u128 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| too_big())?
        };
        let mut part = whole.checked_mul(scale).ok_or_else(too_big)?;
        let mut unit_frac = scale;
        for d in frac.bytes().take(20) {
            unit_frac /= 10;
            part += u128::from(d - b'0') * unit_frac;
        }
        total = total.checked_add(part).ok_or_else(too_big)?;
        rest = next;
    }
    if total > i64::MAX as u128 {
        return Err(too_big());
    }
    let secs = (total / 1_000_000_000) as u64;
    Ok(Duration::new(secs, (total % 1_000_000_000) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports() {
        assert_eq!(port_number(1), Ok(1));
        assert_eq!(port_number(65535), Ok(65535));
        for n in [0, -1, 65536, i64::MAX, i64::MIN] {
            let e = port_number(n).unwrap_err();
            assert!(e.message.contains(&format!("`{n}`")));
        }
        assert_eq!(node_port(30000), Ok(30000));
        assert_eq!(node_port(32767), Ok(32767));
        for n in [29999, 32768, 80, 0, -30000] {
            assert!(node_port(n).is_err(), "{n}");
        }
    }

    #[test]
    fn paths() {
        for s in "/|/data|/var/lib/x.y|/a/..b/c..|/a/./b".split('|') {
            assert!(absolute_path(s).is_ok(), "{s}");
        }
        for s in "|data|./data|/a/../b|/..|/a/..|/c:/x|/a\0b".split('|') {
            assert!(absolute_path(s).is_err(), "{s}");
        }
        for s in "/|/healthz|/api/v1?x=1|/a%20b".split('|') {
            assert!(http_path(s).is_ok(), "{s}");
        }
        for s in "|healthz|/a b|http://x/healthz|/a\n".split('|') {
            assert!(http_path(s).is_err(), "{s}");
        }
    }

    #[test]
    fn cron_schedules_are_checked_by_the_shared_parser() {
        assert!(cron_schedule("0 3 * * MON-FRI").is_ok());
        let e = cron_schedule("0 0 0 * * *").unwrap_err();
        assert!(
            e.message.contains("6 fields") && e.help.contains("no seconds"),
            "{e:?}"
        );
        let e = cron_schedule("61 * * * *").unwrap_err();
        assert_eq!(
            e.message,
            "schedule `61 * * * *` has an invalid minute field `61`: `61` is out of range 0-59"
        );
    }

    #[test]
    fn int_or_percent() {
        assert_eq!(percent_or_int("25%"), Ok(IntOrPercent::Percent(25)));
        assert_eq!(percent_or_int("0%"), Ok(IntOrPercent::Percent(0)));
        assert_eq!(percent_or_int("100%"), Ok(IntOrPercent::Percent(100)));
        assert_eq!(percent_or_int("0"), Ok(IntOrPercent::Int(0)));
        assert_eq!(percent_or_int("3"), Ok(IntOrPercent::Int(3)));
        assert_eq!(
            percent_or_int("2147483647"),
            Ok(IntOrPercent::Int(2147483647))
        );
        assert!(percent_or_int("2147483648").is_err());
        for s in "|%|101%|-1|-5%|2.5%|25 %|abc|1e3|99999999999|256%".split('|') {
            let e = percent_or_int(s).unwrap_err();
            assert!(e.message.contains(&format!("`{s}`")), "{e:?}");
        }
    }

    #[test]
    fn durations() {
        let ms = Duration::from_millis;
        assert_eq!(duration("30s"), Ok(ms(30_000)));
        assert_eq!(duration("5m"), Ok(ms(300_000)));
        assert_eq!(duration("1h30m"), Ok(ms(5_400_000)));
        assert_eq!(duration("500ms"), Ok(ms(500)));
        assert_eq!(duration("1.5h"), Ok(ms(5_400_000)));
        assert_eq!(duration(".5s"), Ok(ms(500)));
        assert_eq!(duration("10us"), Ok(Duration::from_micros(10)));
        assert_eq!(duration("7ns"), Ok(Duration::from_nanos(7)));
        assert_eq!(duration("0"), Ok(Duration::ZERO));
        assert_eq!(duration("0s"), Ok(Duration::ZERO));
        assert_eq!(
            duration("2562047h"),
            Ok(Duration::from_secs(2_562_047 * 3600))
        );
        assert!(duration("2562048h").is_err(), "over Go's ~292 years");
        for s in "|30|s|-1s|1x|1.2.3s|1 s| 1s|1h 30m|99999999999999999999999999h".split('|') {
            assert!(duration(s).is_err(), "{s} should be rejected");
        }
        assert_eq!(duration("30").unwrap_err().help, "add a unit, e.g. `30s`");
        assert!(duration("-1s").unwrap_err().message.contains("negative"));
        assert!(duration("2d").unwrap_err().help.contains("`48h`"));
        assert_eq!(duration("5sec").unwrap_err().help, "did you mean `5s`?");
    }
}
