//! Browsing history through the tabwire extension, searched by text and time. Times are
//! given as people write them: ISO dates (`2026-11-30`, `2026-11-30T14:30:00`, with an
//! optional zone; without one, UTC), `now`, `today`, `yesterday`, or `N minutes|hours|
//! days|weeks|months|years ago`.

use serde::Serialize;
use serde_json::{Value, json};

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

/// A time as people write it → ms since the epoch, relative to `now_ms`.
pub fn parse_time(text: &str, now_ms: f64) -> Result<f64> {
    let t = text.trim().to_ascii_lowercase();
    let today = (now_ms / DAY).floor() * DAY;
    match t.as_str() {
        "now" => return Ok(now_ms),
        "today" => return Ok(today),
        "yesterday" => return Ok(today - DAY),
        _ => {}
    }
    if let Some(ago) = t.strip_suffix(" ago") {
        let mut parts = ago.split_whitespace();
        let (Some(n), Some(unit), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad_time(text));
        };
        let n: f64 = n.parse().map_err(|_| bad_time(text))?;
        let unit = unit.trim_end_matches('s');
        let span = match unit {
            "second" => 1000.0,
            "minute" => MINUTE,
            "hour" => 60.0 * MINUTE,
            "day" => DAY,
            "week" => 7.0 * DAY,
            "month" => 30.0 * DAY,
            "year" => 365.0 * DAY,
            _ => return Err(bad_time(text)),
        };
        return Ok(now_ms - n * span);
    }
    parse_iso(text.trim()).ok_or_else(|| bad_time(text))
}

fn bad_time(text: &str) -> EngineError {
    EngineError::invalid(
        Input::Date,
        format!(
            "'{text}' is not a time; use an ISO date (2026-11-30 or 2026-11-30T14:30:00), now, today, yesterday, or \"3 days ago\""
        ),
    )
}

/// `YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|±HH:MM]` → ms since the epoch (UTC without a zone).
fn parse_iso(text: &str) -> Option<f64> {
    let (date, rest) = text.split_at(text.find(['T', ' ']).unwrap_or(text.len()));
    let mut ymd = date.split('-');
    let (y, m, d) = (
        ymd.next()?.parse::<i64>().ok()?,
        ymd.next()?.parse::<u32>().ok()?,
        ymd.next()?.parse::<u32>().ok()?,
    );
    if ymd.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, m, d) as f64 * DAY;
    let time = rest.trim_start_matches(['T', ' ']);
    if time.is_empty() {
        return Some(ms);
    }
    let (clock, zone) = match time.find(['Z', 'z', '+', '-']) {
        Some(at) => time.split_at(at),
        None => (time, ""),
    };
    let mut hms = clock.split(':');
    let h: f64 = hms.next()?.parse().ok()?;
    let min: f64 = hms.next().unwrap_or("0").parse().ok()?;
    let s: f64 = hms.next().unwrap_or("0").parse().ok()?;
    if h > 23.0 || min > 59.0 || s >= 61.0 {
        return None;
    }
    ms += h * 3_600_000.0 + min * MINUTE + s * 1000.0;
    if let Some(offset) = zone.strip_prefix(['+', '-']) {
        let sign = if zone.starts_with('-') { -1.0 } else { 1.0 };
        let mut parts = offset.split(':');
        let oh: f64 = parts.next()?.parse().ok()?;
        let om: f64 = parts.next().unwrap_or("0").parse().ok()?;
        ms -= sign * (oh * 3_600_000.0 + om * MINUTE);
    }
    Some(ms)
}

/// (year, month, day) → days since 1970-01-01, proleptic Gregorian.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A history item as JSON for a face (ms since the epoch kept as a number).
pub fn item_json(item: &HistoryItem) -> Value {
    json!({
        "id": item.id, "url": item.url, "title": item.title, "lastVisitTime": item.last_visit_ms,
        "visitCount": item.visit_count, "typedCount": item.typed_count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: f64 = 1_764_590_400_000.0; // 2025-12-01T12:00:00Z

    #[test]
    fn times_are_read_as_people_write_them() {
        assert_eq!(parse_time("now", NOW).unwrap(), NOW);
        assert_eq!(parse_time("today", NOW).unwrap(), 1_764_547_200_000.0);
        assert_eq!(parse_time("yesterday", NOW).unwrap(), 1_764_460_800_000.0);
        assert_eq!(parse_time("2 days ago", NOW).unwrap(), NOW - 2.0 * DAY);
        assert_eq!(parse_time("1 week ago", NOW).unwrap(), NOW - 7.0 * DAY);
        assert_eq!(parse_time("2025-12-01", NOW).unwrap(), 1_764_547_200_000.0);
        assert_eq!(parse_time("2025-12-01T12:00:00", NOW).unwrap(), NOW);
        assert_eq!(parse_time("2025-12-01T12:00:00Z", NOW).unwrap(), NOW);
        assert_eq!(parse_time("2025-12-01T14:00:00+02:00", NOW).unwrap(), NOW);
        assert_eq!(parse_time("1970-01-01", NOW).unwrap(), 0.0);
        for bad in [
            "soon",
            "3 fortnights ago",
            "2025-13-01",
            "2025-12-01T25:00",
            "",
        ] {
            let error = parse_time(bad, NOW).unwrap_err();
            assert_eq!(error.input(), Some(Input::Date), "{bad}");
        }
    }
}
