//! A report's period in the owner's time zone: local days from `from` to `to` (both counted),
//! the period of the same length before it, and the time zone's offsets over both, for grouping
//! by local day in SQL ([`LocalDays`]).

use chrono::{Datelike, Duration, NaiveDate, Offset, TimeZone};
use chrono_tz::Tz;

use crate::store::reports::query::LocalDays;

/// The longest period a report covers.
pub const MAX_DAYS: i64 = 366;

#[derive(Clone, Debug, PartialEq)]
pub struct Period {
    pub tz: Tz,
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub weeks: bool,
}

/// Days since 1970-01-01.
pub fn day_number(d: NaiveDate) -> i64 {
    (d - NaiveDate::from_ymd_opt(1970, 1, 1).expect("a date")).num_days()
}

pub fn date_of(day: i64) -> NaiveDate {
    NaiveDate::from_ymd_opt(1970, 1, 1).expect("a date") + Duration::days(day)
}

impl Period {
    /// From the query's text; errors name the field.
    pub fn parse(from: &str, to: &str, time_zone: &str, by: &str) -> Result<Period, (&'static str, String)> {
        let date = |field: &'static str, s: &str| {
            NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d")
                .map_err(|_| (field, format!("`{}` is not a date like 2026-12-01.", s.trim())))
        };
        let (from, to) = (date("from", from)?, date("to", to)?);
        if to < from {
            return Err(("to", "The period ends before it starts.".into()));
        }
        if (to - from).num_days() + 1 > MAX_DAYS {
            return Err(("to", format!("A report covers at most {MAX_DAYS} days.")));
        }
        let zone = time_zone.trim();
        let tz: Tz = if zone.is_empty() {
            chrono_tz::UTC
        } else {
            zone.parse().map_err(|_| ("time_zone", format!("`{zone}` is not a time zone name (e.g. Europe/Paris).")))?
        };
        let weeks = match by.trim() {
            "" | "day" => false,
            "week" => true,
            other => return Err(("by", format!("`{other}`: by day or by week."))),
        };
        Ok(Period { tz, from, to, weeks })
    }

    pub fn days(&self) -> i64 {
        (self.to - self.from).num_days() + 1
    }

    /// The period before, of the same length.
    pub fn previous(&self) -> (NaiveDate, NaiveDate) {
        (self.from - Duration::days(self.days()), self.from - Duration::days(1))
    }

    /// Local midnight of `date` (the first valid instant of the day where a clock change skips it).
    pub fn start_of(&self, date: NaiveDate) -> i64 {
        let mut t = date.and_hms_opt(0, 0, 0).expect("midnight");
        for _ in 0..4 {
            if let Some(at) = self.tz.from_local_datetime(&t).earliest() {
                return at.timestamp_millis();
            }
            t += Duration::minutes(30);
        }
        date.and_hms_opt(0, 0, 0).expect("midnight").and_utc().timestamp_millis()
    }

    /// `[from, to)` of the period in Unix ms.
    pub fn current_ms(&self) -> (i64, i64) {
        (self.start_of(self.from), self.start_of(self.to + Duration::days(1)))
    }

    /// `[from, to)` of the period before in Unix ms.
    pub fn previous_ms(&self) -> (i64, i64) {
        (self.start_of(self.previous().0), self.start_of(self.from))
    }

    fn offset_at(&self, ms: i64) -> i64 {
        match chrono::DateTime::from_timestamp_millis(ms) {
            Some(t) => i64::from(self.tz.offset_from_utc_datetime(&t.naive_utc()).fix().local_minus_utc()) * 1000,
            None => 0,
        }
    }

    /// The zone's offsets over the previous and current periods (a day's margin either side),
    /// each from the exact instant it starts.
    pub fn local_days(&self, weeks: bool) -> LocalDays {
        let first = self.previous().0 - Duration::days(1);
        let last = self.to + Duration::days(2);
        let mut offsets = vec![(i64::MIN, self.offset_at(self.start_of(first)))];
        let mut day = first;
        while day < last {
            let (a, b) = (self.start_of(day), self.start_of(day + Duration::days(1)));
            let before = offsets.last().expect("one").1;
            if self.offset_at(b) != before {
                // The change lies in (a, b]: find its first minute.
                let (mut lo, mut hi) = (a, b);
                while hi - lo > 60_000 {
                    let mid = lo + (hi - lo) / 2;
                    if self.offset_at(mid) == before { lo = mid } else { hi = mid }
                }
                let start = (hi / 60_000) * 60_000;
                offsets.push((start, self.offset_at(start)));
            }
            day += Duration::days(1);
        }
        LocalDays { offsets, weeks }
    }

    /// Buckets of the current period in order: their number (as [`LocalDays`] computes it, day or
    /// week) and first local day within the period.
    pub fn buckets(&self) -> Vec<(i64, NaiveDate)> {
        let mut out: Vec<(i64, NaiveDate)> = Vec::new();
        let mut d = self.from;
        while d <= self.to {
            let n = self.bucket_of(day_number(d));
            if out.last().is_none_or(|(last, _)| *last != n) {
                out.push((n, d));
            }
            d += Duration::days(1);
        }
        out
    }

    /// The bucket (day or week number) of a local day number.
    pub fn bucket_of(&self, day: i64) -> i64 {
        if self.weeks { (day + 3).div_euclid(7) } else { day }
    }

    /// Whether a local day number lies in the current period.
    pub fn is_current(&self, day: i64) -> bool {
        (day_number(self.from)..=day_number(self.to)).contains(&day)
    }
}

/// Monday of a week number as [`LocalDays`] counts weeks.
pub fn monday_of(week: i64) -> NaiveDate {
    let d = date_of(week * 7 - 3);
    debug_assert_eq!(d.weekday(), chrono::Weekday::Mon);
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses_by_field() {
        let p = Period::parse("2026-03-01", "2026-03-31", "Europe/Paris", "week").unwrap();
        assert_eq!((p.days(), p.weeks), (31, true));
        assert_eq!(
            p.previous(),
            (NaiveDate::from_ymd_opt(2026, 1, 29).unwrap(), NaiveDate::from_ymd_opt(2026, 2, 28).unwrap())
        );
        assert_eq!(Period::parse("2026-03-02", "2026-03-01", "", "").unwrap_err().0, "to");
        assert_eq!(Period::parse("2026-3-x", "2026-03-01", "", "").unwrap_err().0, "from");
        assert_eq!(Period::parse("2026-03-01", "2026-03-01", "Mars/Olympus", "").unwrap_err().0, "time_zone");
        assert_eq!(Period::parse("2026-03-01", "2026-03-01", "", "month").unwrap_err().0, "by");
        assert_eq!(Period::parse("2025-01-01", "2026-03-01", "", "").unwrap_err().0, "to");
    }

    #[test]
    fn local_days_change_offset_at_the_clock_change() {
        // Paris moves to summer time on 2026-03-29 at 01:00 UTC.
        let p = Period::parse("2026-03-20", "2026-04-05", "Europe/Paris", "day").unwrap();
        let days = p.local_days(false);
        let change = chrono::DateTime::parse_from_rfc3339("2026-03-29T01:00:00Z").unwrap().timestamp_millis();
        assert!(days.offsets.contains(&(change, 7_200_000)), "{:?}", days.offsets);
        assert_eq!(days.offsets[0].1, 3_600_000);
        // 23:30 local on 2026-03-29 (21:30 UTC) is still the 29th.
        let t = chrono::DateTime::parse_from_rfc3339("2026-03-29T21:30:00Z").unwrap().timestamp_millis();
        let offset = days.offsets.iter().rev().find(|(s, _)| *s <= t).unwrap().1;
        assert_eq!(date_of((t + offset) / 86_400_000), NaiveDate::from_ymd_opt(2026, 3, 29).unwrap());
        assert_eq!(p.start_of(NaiveDate::from_ymd_opt(2026, 3, 30).unwrap()), change + 21 * 3_600_000);
    }

    #[test]
    fn weeks_start_on_monday() {
        let p = Period::parse("2026-12-02", "2026-12-15", "UTC", "week").unwrap();
        let b = p.buckets();
        assert_eq!(b.len(), 3);
        assert_eq!(b[0].1, NaiveDate::from_ymd_opt(2026, 12, 2).unwrap());
        assert_eq!(monday_of(b[1].0), NaiveDate::from_ymd_opt(2026, 12, 7).unwrap());
        assert_eq!(b[2].1, NaiveDate::from_ymd_opt(2026, 12, 14).unwrap());
    }
}
