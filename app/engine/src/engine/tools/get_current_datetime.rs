//! `get_current_datetime` (capability `datetime`): the current date and/or time in any IANA time
//! zone (Hong Kong by default), written the Chinese long way (`2024年1月23日星期二 14:30:00`).
//! Time comes from the context's clock, so tests can fix it.

use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc, Weekday};
use chrono_tz::Tz;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput};

/// The zone used when the model names none.
pub const DEFAULT_TIMEZONE: &str = "Asia/Hong_Kong";

/// What part of the moment to write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DatetimeFormat {
    /// `2024年1月23日星期二 14:30:00`
    #[default]
    Full,
    /// `2024年1月23日星期二`
    Date,
    /// `14:30:00`
    Time,
}

impl DatetimeFormat {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "full" => Some(DatetimeFormat::Full),
            "date" => Some(DatetimeFormat::Date),
            "time" => Some(DatetimeFormat::Time),
            _ => None,
        }
    }
}

pub struct GetCurrentDatetime;

#[async_trait::async_trait]
impl Tool for GetCurrentDatetime {
    fn name(&self) -> &'static str {
        "get_current_datetime"
    }

    fn description(&self) -> &'static str {
        "Get the current date, weekday and time in a time zone (Hong Kong unless another IANA zone \
         is given). Use it whenever an answer depends on today's date or the current time, e.g. \
         deadlines, office hours or how long ago something happened."
    }

    fn capability(&self) -> &'static str {
        "datetime"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::READ
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "timezone": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 64,
                    "description": "IANA time zone name such as Asia/Hong_Kong, Asia/Shanghai or America/New_York. Defaults to Asia/Hong_Kong."
                },
                "format": {
                    "type": "string",
                    "enum": ["full", "date", "time"],
                    "description": "full = date, weekday and time; date = date and weekday only; time = time only. Defaults to full."
                }
            },
            "additionalProperties": false
        })
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let (timezone, format) = parse_args(&args)?;
        format_at(ctx.clock.now_ms(), &timezone, format).map(ToolOutput::result)
    }
}

/// Reads `timezone` and `format`, applying the defaults.
fn parse_args(args: &Value) -> Result<(String, DatetimeFormat), ToolError> {
    let timezone = match args.get("timezone") {
        None | Some(Value::Null) => DEFAULT_TIMEZONE.to_owned(),
        Some(Value::String(s)) if s.trim().is_empty() => DEFAULT_TIMEZONE.to_owned(),
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(other) => return Err(ToolError::InvalidArguments(format!("`timezone` must be a string, got {other}"))),
    };
    let format = match args.get("format") {
        None | Some(Value::Null) => DatetimeFormat::Full,
        Some(Value::String(s)) => DatetimeFormat::parse(s).ok_or_else(|| {
            ToolError::InvalidArguments(format!("`format` must be one of full, date, time; got `{s}`"))
        })?,
        Some(other) => return Err(ToolError::InvalidArguments(format!("`format` must be a string, got {other}"))),
    };
    Ok((timezone, format))
}

/// Finds an IANA zone by name, ignoring ASCII case (`asia/hong_kong` works too).
fn find_zone(name: &str) -> Option<Tz> {
    name.parse::<Tz>()
        .ok()
        .or_else(|| chrono_tz::TZ_VARIANTS.iter().copied().find(|tz| tz.name().eq_ignore_ascii_case(name)))
}

fn weekday_zh(day: Weekday) -> &'static str {
    match day {
        Weekday::Mon => "星期一",
        Weekday::Tue => "星期二",
        Weekday::Wed => "星期三",
        Weekday::Thu => "星期四",
        Weekday::Fri => "星期五",
        Weekday::Sat => "星期六",
        Weekday::Sun => "星期日",
    }
}

/// The tool's answer for the instant `now_ms` (Unix milliseconds) seen in `timezone`.
pub fn format_at(now_ms: i64, timezone: &str, format: DatetimeFormat) -> Result<Value, ToolError> {
    let tz = find_zone(timezone).ok_or_else(|| {
        ToolError::InvalidArguments(format!(
            "unknown time zone `{timezone}`; use an IANA name such as Asia/Hong_Kong, Asia/Shanghai or Europe/London"
        ))
    })?;
    let utc = DateTime::<Utc>::from_timestamp_millis(now_ms)
        .ok_or_else(|| ToolError::Failed(format!("the clock reads an impossible time ({now_ms} ms)")))?;
    let local = utc.with_timezone(&tz);
    let date = format!("{}年{}月{}日{}", local.year(), local.month(), local.day(), weekday_zh(local.weekday()));
    let time = format!("{:02}:{:02}:{:02}", local.hour(), local.minute(), local.second());
    let datetime = match format {
        DatetimeFormat::Full => format!("{date} {time}"),
        DatetimeFormat::Date => date,
        DatetimeFormat::Time => time,
    };
    let name = tz.name();
    Ok(json!({
        "success": true,
        "datetime": datetime,
        "timezone": name,
        "timestamp": utc.to_rfc3339_opts(SecondsFormat::Millis, true),
        "message": format!("当前{name}时间: {datetime}"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2024-01-23T06:30:00Z
    const T0: i64 = 1_705_991_400_000;

    fn ms(rfc3339: &str) -> i64 {
        DateTime::parse_from_rfc3339(rfc3339).unwrap().timestamp_millis()
    }

    #[test]
    fn get_current_datetime_full_in_hong_kong_has_the_exact_shape() {
        assert_eq!(ms("2024-01-23T06:30:00Z"), T0);
        let out = format_at(T0, "Asia/Hong_Kong", DatetimeFormat::Full).unwrap();
        assert_eq!(
            out,
            json!({
                "success": true,
                "datetime": "2024年1月23日星期二 14:30:00",
                "timezone": "Asia/Hong_Kong",
                "timestamp": "2024-01-23T06:30:00.000Z",
                "message": "当前Asia/Hong_Kong时间: 2024年1月23日星期二 14:30:00"
            })
        );
    }

    #[test]
    fn get_current_datetime_date_and_time_formats() {
        let date = format_at(T0 + 45_678, "Asia/Hong_Kong", DatetimeFormat::Date).unwrap();
        assert_eq!(date["datetime"], "2024年1月23日星期二");
        assert_eq!(date["message"], "当前Asia/Hong_Kong时间: 2024年1月23日星期二");
        let time = format_at(T0 + 45_678, "Asia/Hong_Kong", DatetimeFormat::Time).unwrap();
        assert_eq!(time["datetime"], "14:30:45");
        // The timestamp always carries the full UTC instant, with milliseconds.
        assert_eq!(time["timestamp"], "2024-01-23T06:30:45.678Z");
    }

    #[test]
    fn get_current_datetime_across_the_date_line() {
        let t = ms("2024-01-23T12:30:00Z");
        let east = format_at(t, "Pacific/Kiritimati", DatetimeFormat::Full).unwrap();
        assert_eq!(east["datetime"], "2024年1月24日星期三 02:30:00");
        let west = format_at(t, "Pacific/Pago_Pago", DatetimeFormat::Full).unwrap();
        assert_eq!(west["datetime"], "2024年1月23日星期二 01:30:00");
        let ny = format_at(ms("2024-01-01T03:05:09Z"), "America/New_York", DatetimeFormat::Full).unwrap();
        assert_eq!(ny["datetime"], "2023年12月31日星期日 22:05:09");
        // Summer time moves New York to UTC-4.
        let summer = format_at(ms("2024-07-04T16:00:00Z"), "America/New_York", DatetimeFormat::Time).unwrap();
        assert_eq!(summer["datetime"], "12:00:00");
        assert_eq!(summer["timestamp"], "2024-07-04T16:00:00.000Z");
    }

    #[test]
    fn get_current_datetime_zone_names_ignore_case_and_report_the_canonical_name() {
        let out = format_at(T0, "asia/shanghai", DatetimeFormat::Time).unwrap();
        assert_eq!(out["timezone"], "Asia/Shanghai");
        assert_eq!(out["datetime"], "14:30:00");
        let utc = format_at(T0, "UTC", DatetimeFormat::Full).unwrap();
        assert_eq!(utc["datetime"], "2024年1月23日星期二 06:30:00");
    }

    #[test]
    fn get_current_datetime_unknown_zone_is_invalid_arguments_naming_it() {
        let err = format_at(T0, "Mars/Olympus_Mons", DatetimeFormat::Full).unwrap_err();
        match err {
            ToolError::InvalidArguments(msg) => assert!(msg.contains("Mars/Olympus_Mons"), "{msg}"),
            other => panic!("expected InvalidArguments, got {other:?}"),
        }
    }

    #[test]
    fn get_current_datetime_arguments_default_to_hong_kong_and_full() {
        assert_eq!(parse_args(&json!({})).unwrap(), (DEFAULT_TIMEZONE.to_owned(), DatetimeFormat::Full));
        assert_eq!(
            parse_args(&json!({"timezone": " Europe/London ", "format": "date"})).unwrap(),
            ("Europe/London".to_owned(), DatetimeFormat::Date)
        );
        assert!(matches!(parse_args(&json!({"format": "iso"})), Err(ToolError::InvalidArguments(_))));
        assert!(matches!(parse_args(&json!({"timezone": 8})), Err(ToolError::InvalidArguments(_))));
    }

    #[test]
    fn get_current_datetime_schema_compiles_and_is_strict() {
        let tool = GetCurrentDatetime;
        assert_eq!((tool.name(), tool.capability()), ("get_current_datetime", "datetime"));
        let schema = tool.schema();
        assert_eq!(schema["additionalProperties"], false);
        let v = jsonschema::validator_for(&schema).unwrap();
        assert!(v.is_valid(&json!({})));
        assert!(v.is_valid(&json!({"timezone": "Asia/Tokyo", "format": "time"})));
        assert!(!v.is_valid(&json!({"format": "iso"})));
        assert!(!v.is_valid(&json!({"tz": "Asia/Tokyo"})));
        assert!(!v.is_valid(&json!({"timezone": ""})));
    }
}
