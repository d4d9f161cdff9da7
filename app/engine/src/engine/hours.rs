//! Business hours (issue 17): when an agent's people answer, in its time zone. Outside them the
//! AI keeps answering; the escalation offers to leave a message, the panel says when people are
//! back and the model is told nobody is online until then.

use chrono::{Datelike, NaiveDate, NaiveTime, TimeZone, Timelike};
use chrono_tz::Tz;

use super::Engine;
use crate::store::{DbError, hours as store};

/// Monday first.
pub const DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

pub use crate::store::hours::BusinessHours;

/// Open now, or when people are back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Availability {
    Open,
    /// Closed; back at this time (Unix ms), if within a year.
    Closed {
        reopens_at: Option<i64>,
    },
}

impl BusinessHours {
    fn tz(&self) -> Tz {
        self.time_zone.parse().unwrap_or(chrono_tz::UTC)
    }

    /// Open or closed at `now_ms`.
    pub fn at(&self, now_ms: i64) -> Availability {
        let tz = self.tz();
        let Some(local) = tz.timestamp_millis_opt(now_ms).single() else { return Availability::Open };
        let minute = (local.hour() * 60 + local.minute()) as u16;
        let today = local.date_naive();
        let open = !self.closed_dates.contains(&today)
            && self.ranges(today).iter().any(|(from, to)| *from <= minute && minute < *to);
        if open {
            return Availability::Open;
        }
        Availability::Closed { reopens_at: self.next_open(now_ms) }
    }

    fn ranges(&self, date: NaiveDate) -> &[(u16, u16)] {
        self.weekly.get(date.weekday().num_days_from_monday() as usize).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The next opening after `now_ms`, within a year.
    fn next_open(&self, now_ms: i64) -> Option<i64> {
        let tz = self.tz();
        let start = tz.timestamp_millis_opt(now_ms).single()?.date_naive();
        for date in start.iter_days().take(367) {
            if self.closed_dates.contains(&date) {
                continue;
            }
            let mut opens: Vec<u16> = self.ranges(date).iter().map(|(from, _)| *from).collect();
            opens.sort_unstable();
            for from in opens {
                let time = NaiveTime::from_hms_opt(u32::from(from / 60), u32::from(from % 60), 0)?;
                // A time skipped by a clock change opens at the next valid instant.
                let Some(at) = tz.from_local_datetime(&date.and_time(time)).earliest() else { continue };
                if at.timestamp_millis() > now_ms {
                    return Some(at.timestamp_millis());
                }
            }
        }
        None
    }

    /// `reopens_at` in the agent's time zone, for the model: `Monday 2026-12-07 09:00 (Europe/Paris)`.
    pub fn local_time(&self, ms: i64) -> String {
        let tz = self.tz();
        match tz.timestamp_millis_opt(ms).single() {
            Some(t) => format!(
                "{} {} ({})",
                DAYS[t.weekday().num_days_from_monday() as usize],
                t.format("%Y-%m-%d %H:%M"),
                self.time_zone
            ),
            None => String::new(),
        }
    }

    /// Milliseconds of opening hours between `from` and `to` (Unix ms): what a wait counts when
    /// the time nobody is in does not (reports' business-hours figures). At most 400 days are
    /// walked.
    pub fn open_ms_between(&self, from: i64, to: i64) -> i64 {
        if to <= from {
            return 0;
        }
        let tz = self.tz();
        let (Some(start), Some(end)) = (tz.timestamp_millis_opt(from).single(), tz.timestamp_millis_opt(to).single())
        else {
            return to - from;
        };
        let at = |date: NaiveDate, minute: u16| -> Option<i64> {
            let (date, minute) = if minute >= 1440 { (date.succ_opt()?, 0) } else { (date, minute) };
            let time = NaiveTime::from_hms_opt(u32::from(minute / 60), u32::from(minute % 60), 0)?;
            tz.from_local_datetime(&date.and_time(time)).earliest().map(|t| t.timestamp_millis())
        };
        let mut open = 0;
        for date in start.date_naive().iter_days().take(400).take_while(|d| *d <= end.date_naive()) {
            if self.closed_dates.contains(&date) {
                continue;
            }
            for &(a, b) in self.ranges(date) {
                let (Some(a), Some(b)) = (at(date, a), at(date, b)) else { continue };
                open += (b.min(to) - a.max(from)).max(0);
            }
        }
        open
    }

    /// Hours from the console's form: a time zone, one line of ranges per day
    /// (`09:00-12:00, 13:00-17:30`; empty: closed) and dates (`YYYY-MM-DD`, separated by commas
    /// or lines). Errors name the field.
    pub fn parse(time_zone: &str, days: &[String], closed: &str) -> Result<BusinessHours, (String, String)> {
        let time_zone = time_zone.trim();
        if time_zone.parse::<Tz>().is_err() {
            return Err(("time_zone".into(), format!("`{time_zone}` is not a time zone name (e.g. Europe/Paris).")));
        }
        if days.len() != 7 {
            return Err(("days".into(), "Seven days, Monday first.".into()));
        }
        let mut weekly = Vec::with_capacity(7);
        for (i, line) in days.iter().enumerate() {
            weekly.push(parse_ranges(line).map_err(|e| (format!("day{i}"), format!("{}: {e}", DAYS[i])))?);
        }
        let mut closed_dates = Vec::new();
        for part in closed.split([',', '\n', ';']).map(str::trim).filter(|p| !p.is_empty()) {
            let date = NaiveDate::parse_from_str(part, "%Y-%m-%d")
                .map_err(|_| ("closed_dates".to_owned(), format!("`{part}` is not a date like 2026-12-25.")))?;
            if !closed_dates.contains(&date) {
                closed_dates.push(date);
            }
        }
        closed_dates.sort_unstable();
        Ok(BusinessHours { time_zone: time_zone.to_owned(), weekly, closed_dates })
    }

    /// A day's ranges as the form shows them.
    pub fn day_text(&self, day: usize) -> String {
        let hm = |m: u16| format!("{:02}:{:02}", m / 60, m % 60);
        self.weekly
            .get(day)
            .map(|r| r.iter().map(|(a, b)| format!("{}-{}", hm(*a), hm(*b))).collect::<Vec<_>>().join(", "))
            .unwrap_or_default()
    }
}

fn parse_ranges(line: &str) -> Result<Vec<(u16, u16)>, String> {
    let minute = |s: &str| -> Result<u16, String> {
        let (h, m) = s.trim().split_once(':').ok_or_else(|| format!("`{}` is not a time like 09:30", s.trim()))?;
        let (h, m): (u16, u16) = (h.parse().map_err(|_| "bad hour")?, m.parse().map_err(|_| "bad minute")?);
        if h > 24 || m > 59 || (h == 24 && m > 0) {
            return Err(format!("`{}` is not a time of day", s.trim()));
        }
        Ok(h * 60 + m)
    };
    let mut out: Vec<(u16, u16)> = Vec::new();
    for part in line.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').ok_or_else(|| format!("`{part}` is not a range like 09:00-17:00"))?;
        let (a, b) = (minute(a)?, minute(b)?);
        if a >= b {
            return Err(format!("`{part}` ends before it starts"));
        }
        out.push((a, b));
    }
    out.sort_unstable();
    if out.windows(2).any(|w| w[1].0 < w[0].1) {
        return Err("the ranges overlap".into());
    }
    Ok(out)
}

impl Engine {
    /// The agent's hours, if it has any (none: people are always reachable).
    pub async fn business_hours(&self, agent_id: &str) -> Result<Option<BusinessHours>, DbError> {
        store::of_agent(self.db(), agent_id).await
    }

    /// Open now or not, for an agent with hours (`None`: it has none).
    pub async fn availability(&self, agent_id: &str) -> Result<Option<(BusinessHours, Availability)>, DbError> {
        Ok(self.business_hours(agent_id).await?.map(|h| {
            let now = self.at_now(&h);
            (h, now)
        }))
    }

    fn at_now(&self, hours: &BusinessHours) -> Availability {
        hours.at(self.now_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paris() -> BusinessHours {
        let week = ["09:00-12:00, 13:00-17:30", "09:00-17:30", "09:00-17:30", "09:00-17:30", "09:00-16:00", "", ""];
        let days: Vec<String> = week.iter().map(|s| s.to_string()).collect();
        BusinessHours::parse("Europe/Paris", &days, "2026-12-25, 2026-12-28").unwrap()
    }

    fn ms(text: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(text).unwrap().timestamp_millis()
    }

    #[test]
    fn open_and_closed_in_the_agents_time_zone() {
        let h = paris();
        // Thursday 2026-12-03 10:00 in Paris is 09:00 UTC.
        assert_eq!(h.at(ms("2026-12-03T09:00:00Z")), Availability::Open);
        // Monday's lunch break: back at 13:00 Paris (12:00 UTC).
        assert_eq!(
            h.at(ms("2026-11-30T11:30:00Z")),
            Availability::Closed { reopens_at: Some(ms("2026-11-30T12:00:00Z")) }
        );
        // Friday 16:30 Paris: closed for the weekend, back Monday 09:00.
        assert_eq!(
            h.at(ms("2026-12-04T15:30:00Z")),
            Availability::Closed { reopens_at: Some(ms("2026-12-07T08:00:00Z")) }
        );
        // Christmas is a Friday; the 28th (Monday) closed too: back Tuesday the 29th.
        assert_eq!(
            h.at(ms("2026-12-24T18:00:00Z")),
            Availability::Closed { reopens_at: Some(ms("2026-12-29T08:00:00Z")) }
        );
        assert_eq!(h.local_time(ms("2026-12-07T08:00:00Z")), "Monday 2026-12-07 09:00 (Europe/Paris)");
    }

    #[test]
    fn open_time_between_two_instants_skips_nights_weekends_and_holidays() {
        let h = paris();
        let hour = 3_600_000;
        // Within one morning: all of it.
        assert_eq!(h.open_ms_between(ms("2026-12-03T09:00:00Z"), ms("2026-12-03T10:30:00Z")), 90 * 60_000);
        // Monday 11:00 to 14:00 Paris: the lunch hour does not count.
        assert_eq!(h.open_ms_between(ms("2026-11-30T10:00:00Z"), ms("2026-11-30T13:00:00Z")), 2 * hour);
        // Friday 15:00 Paris to Monday 10:00 Paris: Friday's last hour and Monday's first.
        assert_eq!(h.open_ms_between(ms("2026-12-04T14:00:00Z"), ms("2026-12-07T09:00:00Z")), 2 * hour);
        // Over Christmas (Friday) and the 28th: Thursday 17:00 to Tuesday 09:30 is an hour.
        assert_eq!(h.open_ms_between(ms("2026-12-24T16:00:00Z"), ms("2026-12-29T08:30:00Z")), hour);
        assert_eq!(h.open_ms_between(ms("2026-12-29T08:30:00Z"), ms("2026-12-24T16:00:00Z")), 0);
    }

    #[test]
    fn daylight_saving_time_is_the_zones() {
        let h = paris();
        // Summer: Paris is UTC+2; Monday 2026-07-06 08:30 UTC is 10:30 there.
        assert_eq!(h.at(ms("2026-07-06T08:30:00Z")), Availability::Open);
        assert!(matches!(h.at(ms("2026-07-06T06:30:00Z")), Availability::Closed { .. }));
    }

    #[test]
    fn the_form_is_checked() {
        let days = |d: &str| -> Vec<String> { (0..7).map(|_| d.to_owned()).collect() };
        assert_eq!(BusinessHours::parse("Mars/Olympus", &days(""), "").unwrap_err().0, "time_zone");
        assert!(BusinessHours::parse("UTC", &days("17:00-09:00"), "").unwrap_err().1.contains("ends before"));
        assert!(BusinessHours::parse("UTC", &days("9-5"), "").unwrap_err().1.contains("not a time"));
        assert!(BusinessHours::parse("UTC", &days("09:00-12:00, 11:00-13:00"), "").unwrap_err().1.contains("overlap"));
        assert_eq!(BusinessHours::parse("UTC", &days(""), "25/12").unwrap_err().0, "closed_dates");
        let never = BusinessHours::parse("UTC", &days(""), "").unwrap();
        assert_eq!(never.at(0), Availability::Closed { reopens_at: None });
        assert_eq!(paris().day_text(0), "09:00-12:00, 13:00-17:30");
    }
}
