//! Browsing history through the tabwire extension, searched by text and time. Times are
//! given as people write them, in the user's time zone: ISO dates (`2026-11-30`,
//! `2026-11-30T14:30:00`, with an optional zone; without one, the user's wall clock),
//! `now`, `today`, `yesterday`, or `N minutes|hours|days|weeks|months|years ago`.

use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan, Zoned, civil};
use serde::Serialize;
use serde_json::json;

use crate::browser::Browser;
use crate::error::{EngineError, Input, Result};

const MINUTE: f64 = 60_000.0;
const DAY: f64 = 86_400_000.0;

/// One visited page.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryItem {
    pub id: String,
    pub url: String,
    pub title: String,
    pub last_visit_ms: f64,
    pub visit_count: u64,
    pub typed_count: u64,
}

/// Pages whose URL or title holds `text`, last visited between `start` and `end` (ms
/// since the epoch), newest first, at most `max`.
pub async fn search(
    browser: &Browser,
    text: &str,
    start: f64,
    end: f64,
    max: u64,
) -> Result<Vec<HistoryItem>> {
    let items = browser
        .extension_call(
            "history.search",
            json!({ "text": text, "startTime": start, "endTime": end, "maxResults": max }),
        )
        .await?;
    let mut items: Vec<HistoryItem> = items
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| HistoryItem {
            id: item["id"].as_str().unwrap_or_default().to_owned(),
            url: item["url"].as_str().unwrap_or_default().to_owned(),
            title: item["title"].as_str().unwrap_or_default().to_owned(),
            last_visit_ms: item["lastVisitTime"].as_f64().unwrap_or_default(),
            visit_count: item["visitCount"].as_u64().unwrap_or_default(),
            typed_count: item["typedCount"].as_u64().unwrap_or_default(),
        })
        // chrome.history matches by visit; the last visit may fall just outside.
        .filter(|item| item.last_visit_ms >= start - MINUTE && item.last_visit_ms <= end + MINUTE)
        .collect();
    items.sort_by(|a, b| b.last_visit_ms.total_cmp(&a.last_visit_ms));
    items.truncate(max as usize);
    Ok(items)
}

/// Now, in the user's time zone (the system's), which `parse_time` reads times in.
pub fn local_now() -> Zoned {
    Zoned::now()
}

/// A time as people write it → ms since the epoch. As the original reads them, times
/// are the user's: `today` starts at their midnight, `3 months ago` is calendar months
/// back, and an ISO time without a zone is their wall clock.
pub fn parse_time(text: &str, now: &Zoned) -> Result<f64> {
    let t = text.trim().to_ascii_lowercase();
    let ms = |zoned: Zoned| zoned.timestamp().as_millisecond() as f64;
    let today = || now.start_of_day().map_err(|_| bad_time(text));
    match t.as_str() {
        "now" => return Ok(ms(now.clone())),
        "today" => return today().map(ms),
        "yesterday" => {
            return today()?
                .checked_sub(1.day())
                .map(ms)
                .map_err(|_| bad_time(text));
        }
        _ => {}
    }
    if let Some(ago) = t.strip_suffix(" ago") {
        return ago_time(ago, now).ok_or_else(|| bad_time(text));
    }
    parse_iso(text.trim(), now.time_zone()).ok_or_else(|| bad_time(text))
}

/// `N unit` back from `now`: whole numbers by the calendar, fractions by fixed lengths.
fn ago_time(ago: &str, now: &Zoned) -> Option<f64> {
    let mut parts = ago.split_whitespace();
    let (Some(n), Some(unit), None) = (parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    let unit = unit.trim_end_matches('s');
    if let Ok(n) = n.parse::<i64>() {
        if n < 0 {
            return None;
        }
        let span = match unit {
            "second" => n.seconds(),
            "minute" => n.minutes(),
            "hour" => n.hours(),
            "day" => n.days(),
            "week" => n.weeks(),
            "month" => n.months(),
            "year" => n.years(),
            _ => return None,
        };
        let then = now.checked_sub(span).ok()?;
        return Some(then.timestamp().as_millisecond() as f64);
    }
    let n: f64 = n
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)?;
    let unit_ms = match unit {
        "second" => 1000.0,
        "minute" => MINUTE,
        "hour" => 60.0 * MINUTE,
        "day" => DAY,
        "week" => 7.0 * DAY,
        "month" => 30.0 * DAY,
        "year" => 365.0 * DAY,
        _ => return None,
    };
    Some(now.timestamp().as_millisecond() as f64 - n * unit_ms)
}

fn bad_time(text: &str) -> EngineError {
    EngineError::invalid(
        Input::Date,
        format!(
            "'{text}' is not a time; use an ISO date (2026-11-30 or 2026-11-30T14:30:00), now, today, yesterday, or \"3 days ago\""
        ),
    )
}

/// `YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|±HH:MM]` → ms since the epoch; without a zone, a
/// wall-clock time in `zone`.
fn parse_iso(text: &str, zone: &TimeZone) -> Option<f64> {
    let instant = if let Ok(instant) = text.parse::<Timestamp>() {
        instant
    } else if let Ok(wall) = text.parse::<civil::DateTime>() {
        wall.to_zoned(zone.clone()).ok()?.timestamp()
    } else {
        let day = text.parse::<civil::Date>().ok()?;
        day.to_zoned(zone.clone()).ok()?.timestamp()
    };
    Some(instant.as_millisecond() as f64)
}

/// `yyyy-MM-dd HH:mm:ss` in the user's time zone, as the original shows a time range.
pub fn format_time(ms: f64, zone: &TimeZone) -> String {
    match Timestamp::from_millisecond(ms as i64) {
        Ok(instant) => instant
            .to_zoned(zone.clone())
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string(),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2025-12-01T12:00:00Z, seen from a zone two hours behind UTC.
    const NOW_MS: f64 = 1_764_590_400_000.0;
    const HOUR: f64 = 3_600_000.0;

    fn now_in(offset_hours: i8) -> Zoned {
        let zone = TimeZone::fixed(jiff::tz::offset(offset_hours));
        Timestamp::from_millisecond(NOW_MS as i64)
            .unwrap()
            .to_zoned(zone)
    }

    #[test]
    fn times_are_read_as_people_write_them() {
        let now = now_in(0);
        let at = |text: &str| parse_time(text, &now).unwrap();
        assert_eq!(at("now"), NOW_MS);
        assert_eq!(at("today"), 1_764_547_200_000.0);
        assert_eq!(at("yesterday"), 1_764_460_800_000.0);
        assert_eq!(at("2 days ago"), NOW_MS - 2.0 * DAY);
        assert_eq!(at("1 week ago"), NOW_MS - 7.0 * DAY);
        assert_eq!(at("1.5 hours ago"), NOW_MS - 1.5 * HOUR);
        // Calendar months: November has 30 days, October and November 61.
        assert_eq!(at("1 month ago"), NOW_MS - 30.0 * DAY);
        assert_eq!(at("2 months ago"), NOW_MS - 61.0 * DAY);
        assert_eq!(at("2025-12-01"), 1_764_547_200_000.0);
        assert_eq!(at("2025-12-01T12:00:00"), NOW_MS);
        assert_eq!(at("2025-12-01 12:00"), NOW_MS);
        assert_eq!(at("2025-12-01T12:00:00Z"), NOW_MS);
        assert_eq!(at("2025-12-01T14:00:00+02:00"), NOW_MS);
        assert_eq!(at("1970-01-01"), 0.0);
        for bad in [
            "soon",
            "3 fortnights ago",
            "-2 days ago",
            "2025-13-01",
            "2025-12-01T25:00",
            "",
        ] {
            let error = parse_time(bad, &now).unwrap_err();
            assert_eq!(error.input(), Some(Input::Date), "{bad}");
        }
    }

    #[test]
    fn today_starts_at_the_users_midnight_not_utcs() {
        // At 12:00 UTC it is 10:00 two hours west and 23:00 eleven hours east: their
        // days began at 02:00 UTC that day, and at 13:00 UTC the day before.
        let west = now_in(-2);
        assert_eq!(
            parse_time("today", &west).unwrap(),
            1_764_547_200_000.0 + 2.0 * HOUR
        );
        assert_eq!(
            parse_time("2025-12-01", &west).unwrap(),
            1_764_547_200_000.0 + 2.0 * HOUR
        );
        assert_eq!(parse_time("2025-12-01T10:00", &west).unwrap(), NOW_MS);
        let east = now_in(11);
        assert_eq!(
            parse_time("today", &east).unwrap(),
            1_764_547_200_000.0 - 11.0 * HOUR
        );
        assert_eq!(
            parse_time("yesterday", &east).unwrap(),
            1_764_547_200_000.0 - 11.0 * HOUR - DAY
        );
        // A zone given in the text wins over the user's.
        assert_eq!(parse_time("2025-12-01T12:00:00Z", &east).unwrap(), NOW_MS);
        assert_eq!(format_time(NOW_MS, east.time_zone()), "2025-12-01 23:00:00");
        assert_eq!(format_time(NOW_MS, west.time_zone()), "2025-12-01 10:00:00");
    }
}
