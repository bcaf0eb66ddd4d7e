//! CronJob schedules, parsed once for the DSL's check and the local cluster's CronJob controller: the
//! five fields `minute hour day-of-month month day-of-week` (each `*`, `?` in the day fields, numbers,
//! names JAN–DEC and SUN–SAT in any case, ranges `a-b`, steps `/n`, lists `a,b`) and the descriptors
//! @yearly/@annually, @monthly, @weekly, @daily/@midnight and @hourly, as kube-controller-manager's
//! parser (robfig/cron v3 `ParseStandard`) reads them. Times are evaluated in UTC; when both day fields
//! are restricted a day matching either runs (Vixie cron, as robfig/cron).

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// What every schedule error suggests.
const HELP: &str = "write five fields `minute hour day-of-month month day-of-week`, e.g. `*/15 * * * *` or `0 3 * * MON-FRI`, or one of @hourly, @daily, @weekly, @monthly, @yearly";

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// One field: its name in messages, its bounds, and names whose index + min is the value.
struct Field {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const FIELDS: [Field; 5] = [
    Field {
        name: "minute",
        min: 0,
        max: 59,
        names: &[],
    },
    Field {
        name: "hour",
        min: 0,
        max: 23,
        names: &[],
    },
    Field {
        name: "day-of-month",
        min: 1,
        max: 31,
        names: &[],
    },
    Field {
        name: "month",
        min: 1,
        max: 12,
        names: &MONTHS,
    },
    Field {
        name: "day-of-week",
        min: 0,
        max: 6,
        names: &DAYS,
    },
];

/// A schedule that does not parse: the message names the schedule and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronError {
    /// E.g. ``schedule `61 * * * *` has an invalid minute field `61`: `61` is out of range 0-59``.
    pub message: String,
    /// How to write it instead.
    pub help: &'static str,
}

impl std::fmt::Display for CronError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CronError {}

/// A parsed schedule: one bit per allowed value of each field.
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

impl Schedule {
    /// Parses a schedule (`*/5 * * * *`, `0 3 * * MON-FRI`, `@hourly`, …).
    pub fn parse(s: &str) -> Result<Schedule, CronError> {
        let err = |m: String, help: &'static str| CronError {
            message: format!("schedule `{s}` {m}"),
            help,
        };
        let t = s.trim();
        if t.is_empty() {
            return Err(CronError {
                message: "schedule must not be empty".into(),
                help: HELP,
            });
        }
        if t.starts_with("TZ=") || t.starts_with("CRON_TZ=") {
            return Err(err(
                "sets a time zone inline".into(),
                "remove the `TZ=` part and set the CronJob's time zone field instead",
            ));
        }
        let expanded = match t.strip_prefix('@') {
            Some("yearly" | "annually") => "0 0 1 1 *",
            Some("monthly") => "0 0 1 * *",
            Some("weekly") => "0 0 * * 0",
            Some("daily" | "midnight") => "0 0 * * *",
            Some("hourly") => "0 * * * *",
            Some(d) => return Err(err(format!("uses an unknown descriptor `@{d}`"), HELP)),
            None => t,
        };
        let fields: Vec<&str> = expanded.split_whitespace().collect();
        if fields.len() != 5 {
            let help = if fields.len() == 6 {
                "Kubernetes schedules have no seconds field: remove the first field"
            } else {
                HELP
            };
            return Err(err(
                format!("has {} fields, expected 5", fields.len()),
                help,
            ));
        }
        let mut sets = [(0u64, false); 5];
        for ((text, field), set) in fields.iter().zip(FIELDS.iter()).zip(sets.iter_mut()) {
            *set = parse_field(text, field).map_err(|m| {
                err(
                    format!("has an invalid {} field `{text}`: {m}", field.name),
                    HELP,
                )
            })?;
        }
        let [
            (minutes, _),
            (hours, _),
            (days, dom_star),
            (months, _),
            (weekdays, dow_star),
        ] = sets;
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
        let limit = after.saturating_add(5 * 366 * 86_400);
        while t <= limit {
            let days = t.div_euclid(86_400);
            let date = Timestamp::from_second(t).ok()?.to_zoned(TimeZone::UTC);
            let weekday = date.weekday().to_sunday_zero_offset() as u32;
            if self.months & (1 << date.month()) == 0
                || !self.day_matches(date.day() as u32, weekday)
            {
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

/// One field as a bit set, and whether it is unrestricted (`*` or `?` without a step, as robfig/cron
/// marks it); `Err` says what is wrong.
fn parse_field(text: &str, f: &Field) -> Result<(u64, bool), String> {
    let mut bits = 0u64;
    let mut star = false;
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((r, st)) => match st.parse::<u32>() {
                Ok(n) if n >= 1 && st.bytes().all(|b| b.is_ascii_digit()) => (r, Some(n)),
                _ => return Err(format!("step `{st}` must be a positive number")),
            },
            None => (item, None),
        };
        let any = range == "*" || (f.name.starts_with("day") && range == "?");
        let (lo, hi) = if any {
            star |= step.is_none_or(|n| n == 1);
            (f.min, f.max)
        } else if let Some((a, b)) = range.split_once('-') {
            let (a, b) = (value(a, f)?, value(b, f)?);
            if a > b {
                return Err(format!("range `{range}` runs backwards"));
            }
            (a, b)
        } else {
            // `a/n` with a single value means every n from a to the maximum.
            let a = value(range, f)?;
            (a, if step.is_some() { f.max } else { a })
        };
        let mut v = lo;
        while v <= hi {
            bits |= 1 << v;
            v += step.unwrap_or(1);
        }
    }
    Ok((bits, star))
}

/// One value: a number in the field's bounds or one of its names.
fn value(v: &str, f: &Field) -> Result<u32, String> {
    let n = match f.names.iter().position(|n| n.eq_ignore_ascii_case(v)) {
        Some(i) => i as u32 + f.min,
        None if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => v
            .parse()
            .map_err(|_| format!("`{v}` is out of range {}-{}", f.min, f.max))?,
        None if v.is_empty() => return Err("a value is missing".into()),
        None => match (f.names.first(), f.names.last()) {
            (Some(a), Some(b)) => return Err(format!("`{v}` is not a number or a name {a}-{b}")),
            _ => return Err(format!("`{v}` is not a number")),
        },
    };
    if (f.min..=f.max).contains(&n) {
        Ok(n)
    } else {
        Err(format!("`{v}` is out of range {}-{}", f.min, f.max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> i64 {
        s.parse::<Timestamp>().expect("timestamp").as_second()
    }

    fn next(expr: &str, after: &str) -> String {
        let s = Schedule::parse(expr).expect("schedule");
        let t = s.next_after(at(after)).expect("a next run");
        Timestamp::from_second(t).expect("in range").to_string()
    }

    #[test]
    fn accepts_what_kubernetes_accepts() {
        for s in "* * * * *|*/15 * * * *|0 3 * * MON-FRI|0 0 1 JAN *|\
            0,30 8-18/2 * * 1-5|59 23 31 12 6|5/10 * * * *|0 0 ? * sun|  0  0 * * *  |\
            @hourly|@daily|@weekly|@monthly|@yearly|@annually|@midnight|\
            0 0 1-31/7 jan-dec/3 *"
            .split('|')
        {
            assert!(Schedule::parse(s).is_ok(), "{s}: {:?}", Schedule::parse(s));
        }
    }

    #[test]
    fn rejects_with_the_field_and_the_reason() {
        for s in "|* * * *|0 * * * * *|60 * * * *|* 24 * * *|* * 0 * *|* * 32 * *|\
            * * * 13 *|* * * * 7|*/0 * * * *|5-1 * * * *|a * * * *|* * * FOO *|\
            ? * * * *|@reboot|@every 1h|@HOURLY|1,,2 * * * *|*/ * * * *|- * * * *|\
            TZ=UTC 0 0 * * *|99999999999 * * * *"
            .split('|')
        {
            assert!(Schedule::parse(s).is_err(), "{s} should be rejected");
        }
        let e = Schedule::parse("0 0 0 * * *").expect_err("six fields");
        assert!(
            e.message.contains("6 fields") && e.help.contains("no seconds"),
            "{e:?}"
        );
        let e = Schedule::parse("0 0 * FOO *").expect_err("bad month");
        assert!(
            e.message
                .ends_with("`FOO` is not a number or a name JAN-DEC"),
            "{e:?}"
        );
        let e = Schedule::parse("61 * * * *").expect_err("bad minute");
        assert_eq!(
            e.message,
            "schedule `61 * * * *` has an invalid minute field `61`: `61` is out of range 0-59"
        );
    }

    #[test]
    fn runs_step_like_cron() {
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
        assert_eq!(
            next("0 0 * * 0", "2026-03-02T00:00:00Z"),
            "2026-03-08T00:00:00Z"
        );
        // Both day fields restricted: either one matches (the 6th is a Friday, before the 13th).
        assert_eq!(
            next("0 0 13 * 5", "2026-03-01T00:00:00Z"),
            "2026-03-06T00:00:00Z"
        );
        // `*/1` is still unrestricted, so only the day of month decides.
        assert_eq!(
            next("0 0 13 * */1", "2026-03-01T00:00:00Z"),
            "2026-03-13T00:00:00Z"
        );
        let s = Schedule::parse("* * * * *").expect("every minute");
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
