//! RFC 3339 UTC timestamps from the system clock for journal records (the calendar is jiff's, as in
//! the sim and in CronJob schedules).

use std::time::{SystemTime, UNIX_EPOCH};

use jiff::Timestamp;

/// Now, as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub(crate) fn now_rfc3339() -> String {
    // A clock before 1970 is a broken clock; record the epoch rather than fail a journal write.
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_millis(since.as_millis() as i64)
}

/// Milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub(crate) fn format_millis(millis: i64) -> String {
    // Out of jiff's range (beyond year ±9999) only with a broken clock: record the epoch instead.
    let second = Timestamp::from_second(millis.div_euclid(1000)).unwrap_or(Timestamp::UNIX_EPOCH);
    format!(
        "{}.{:03}Z",
        second.strftime("%Y-%m-%dT%H:%M:%S"),
        millis.rem_euclid(1000)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_time_known_instants() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_millis(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_millis(1_798_601_554_120), "2026-12-30T03:32:34.120Z");
        assert_eq!(format_millis(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
        assert_eq!(format_millis(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn journal_time_now_is_well_formed() {
        let now = now_rfc3339();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.ends_with('Z') && now.as_bytes()[10] == b'T', "{now}");
    }
}
