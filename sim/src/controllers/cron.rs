//! Standard 5-field cron schedules (minute, hour, day of month, month, day of week; `*`, `?`,
//! values, names `JAN`/`MON`, ranges `a-b`, steps `*/n` and `a-b/n`, lists `a,b`, day of week 7 as
//! Sunday) and the `@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/`@midnight`, `@hourly`
//! macros, evaluated in UTC. As in Vixie cron, when both day fields are restricted a day matching
//! either runs.

/// A parsed schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    minutes: u64,
    hours: u64,
    days: u64,
    months: u64,
    weekdays: u64,
    /// Day of month and day of week both restricted: either matches.
    either_day: bool,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

fn value(text: &str, names: &[&str], offset: u32) -> Option<u32> {
    if let Ok(n) = text.parse::<u32>() {
        return Some(n);
    }
    let upper = text.to_ascii_uppercase();
    names
        .iter()
        .position(|n| *n == upper)
        .map(|i| i as u32 + offset)
}

/// One field as a bit set; `Err` names what is wrong. The bool says whether it was `*`/`?`.
fn field(
    text: &str,
    min: u32,
    max: u32,
    names: &[&str],
    offset: u32,
) -> Result<(u64, bool), String> {
    let mut bits = 0u64;
    let mut star = false;
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let step = s
                    .parse::<u32>()
                    .ok()
                    .filter(|s| *s > 0)
                    .ok_or_else(|| format!("invalid step {s:?}"))?;
                (r, Some(step))
            }
            None => (part, None),
        };
        let (lo, hi) = if range == "*" || range == "?" {
            star = step.is_none() && text.split(',').count() == 1;
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            let a = value(a, names, offset).ok_or_else(|| format!("invalid value {a:?}"))?;
            let b = value(b, names, offset).ok_or_else(|| format!("invalid value {b:?}"))?;
            (a, b)
        } else {
            let a =
                value(range, names, offset).ok_or_else(|| format!("invalid value {range:?}"))?;
            (a, if step.is_some() { max } else { a })
        };
        if lo < min || hi > max || lo > hi {
            return Err(format!("{part:?} is out of range {min}-{max}"));
        }
        let mut v = lo;
        while v <= hi {
            bits |= 1 << v;
            v += step.unwrap_or(1);
        }
    }
    Ok((bits, star))
}

impl Schedule {
    /// Parses a schedule (`*/5 * * * *`, `@hourly`, ...).
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let text = text.trim();
        let expanded = match text.to_ascii_lowercase().as_str() {
            "@yearly" | "@annually" => "0 0 1 1 *".to_string(),
            "@monthly" => "0 0 1 * *".to_string(),
            "@weekly" => "0 0 * * 0".to_string(),
            "@daily" | "@midnight" => "0 0 * * *".to_string(),
            "@hourly" => "0 * * * *".to_string(),
            _ if text.starts_with('@') => return Err(format!("unknown macro {text:?}")),
            _ => text.to_string(),
        };
        let f: Vec<&str> = expanded.split_whitespace().collect();
        let [mi, h, dom, mo, dow] = f.as_slice() else {
            return Err(format!(
                "expected exactly 5 fields, found {}: {text:?}",
                f.len()
            ));
        };
        let (minutes, _) = field(mi, 0, 59, &[], 0)?;
        let (hours, _) = field(h, 0, 23, &[], 0)?;
        let (days, dom_star) = field(dom, 1, 31, &[], 0)?;
        let (months, _) = field(mo, 1, 12, &MONTHS, 1)?;
        let (mut weekdays, dow_star) = field(dow, 0, 7, &DAYS, 0)?;
        if weekdays & (1 << 7) != 0 {
            weekdays |= 1;
        }
        Ok(Schedule {
            minutes,
            hours,
            days,
            months,
            weekdays,
            either_day: !dom_star && !dow_star,
        })
    }

    fn day_matches(&self, day: u32, weekday: u32) -> bool {
        let d = self.days & (1 << day) != 0;
        let w = self.weekdays & (1 << weekday) != 0;
        if self.either_day { d || w } else { d && w }
    }

    /// The first scheduled time (Unix seconds, on a minute) strictly after `after`, within about
    /// five years.
    pub fn next_after(&self, after: i64) -> Option<i64> {
        let mut t = (after.div_euclid(60) + 1) * 60;
        let limit = after + 5 * 366 * 86_400;
        while t <= limit {
            let days = t.div_euclid(86_400);
            let (_, month, day, weekday) = crate::time::civil_date(t);
            if self.months & (1 << month) == 0 || !self.day_matches(day, weekday) {
                t = (days + 1) * 86_400;
                continue;
            }
            let secs = t.rem_euclid(86_400);
            let (hour, minute) = ((secs / 3600) as u32, ((secs % 3600) / 60) as u32);
            if self.hours & (1 << hour) == 0 {
                t = days * 86_400 + (hour as i64 + 1) * 3600;
                continue;
            }
            if self.minutes & (1 << minute) == 0 {
                t += 60;
                continue;
            }
            return Some(t);
        }
        None
    }

    /// The latest scheduled time in `(after, now]`, if any. Looks back at most 100,000 runs.
    pub fn latest_between(&self, after: i64, now: i64) -> Option<i64> {
        let mut found = None;
        let mut t = after;
        for _ in 0..100_000 {
            match self.next_after(t) {
                Some(n) if n <= now => {
                    found = Some(n);
                    t = n;
                }
                _ => return found,
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> i64 {
        crate::time::parse_rfc3339(s).unwrap()
    }

    fn next(expr: &str, after: &str) -> String {
        let s = Schedule::parse(expr).unwrap();
        crate::time::format_rfc3339(s.next_after(at(after)).unwrap())
    }

    #[test]
    fn parses_and_steps_like_cron() {
        assert_eq!(
            next("*/5 * * * *", "2026-03-01T10:02:30Z"),
            "2026-03-01T10:05:00Z"
        );
        assert_eq!(
            next("*/5 * * * *", "2026-03-01T10:05:00Z"),
            "2026-03-01T10:10:00Z"
        );
        assert_eq!(
            next("@hourly", "2026-03-01T10:02:00Z"),
            "2026-03-01T11:00:00Z"
        );
        assert_eq!(
            next("30 2 * * *", "2026-03-01T10:02:00Z"),
            "2026-03-02T02:30:00Z"
        );
        assert_eq!(
            next("0 9-17/4 * * MON-FRI", "2026-03-06T18:00:00Z"),
            "2026-03-09T09:00:00Z"
        );
        assert_eq!(
            next("0 0 1 JAN,jul *", "2026-03-01T00:00:00Z"),
            "2026-07-01T00:00:00Z"
        );
        assert_eq!(
            next("0 0 29 2 *", "2026-03-01T00:00:00Z"),
            "2028-02-29T00:00:00Z"
        );
        // Sunday as 7, and either day field when both are restricted.
        assert_eq!(
            next("0 0 * * 7", "2026-03-02T00:00:00Z"),
            "2026-03-08T00:00:00Z"
        );
        assert_eq!(
            next("0 0 13 * 5", "2026-03-01T00:00:00Z"),
            "2026-03-06T00:00:00Z"
        );
        for bad in [
            "* * * *",
            "61 * * * *",
            "*/0 * * * *",
            "@often",
            "a b c d e",
        ] {
            assert!(Schedule::parse(bad).is_err(), "{bad}");
        }
        let s = Schedule::parse("* * * * *").unwrap();
        assert_eq!(
            s.latest_between(at("2026-03-01T10:00:30Z"), at("2026-03-01T10:03:10Z")),
            Some(at("2026-03-01T10:03:00Z"))
        );
        assert_eq!(
            s.latest_between(at("2026-03-01T10:03:00Z"), at("2026-03-01T10:03:10Z")),
            None
        );
    }
}
