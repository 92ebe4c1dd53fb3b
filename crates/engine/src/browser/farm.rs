//! CDP endpoints as a pool: one or more `--cdp-endpoint`s, each possibly a browser farm
//! (Browserless, a grid) that starts a fresh browser per connection.
//!
//! A connection takes a seat at the endpoint with the fewest seats taken; an endpoint
//! that refused or could not be reached is skipped for [`COOL_DOWN`] while another is
//! there to try. The seat is given back when the connection's browser goes.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long an endpoint that failed is passed over, while another can be tried.
pub const COOL_DOWN: Duration = Duration::from_secs(30);

/// The configured endpoints and how busy each is.
pub struct Pool {
    endpoints: Vec<Arc<Endpoint>>,
}

struct Endpoint {
    url: String,
    seats: AtomicUsize,
    failed_at: Mutex<Option<Instant>>,
}

/// An endpoint to try.
pub struct Candidate(Arc<Endpoint>);

impl Candidate {
    /// Takes a seat there for the connection about to be made.
    pub fn take(self) -> Seat {
        self.0.seats.fetch_add(1, Ordering::Relaxed);
        Seat { endpoint: self.0 }
    }
}

/// A connection's place at one endpoint; dropping it gives the place back.
pub struct Seat {
    endpoint: Arc<Endpoint>,
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.endpoint.seats.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Seat {
    pub fn url(&self) -> &str {
        &self.endpoint.url
    }

    /// The endpoint refused or could not be reached: pass it over for a while.
    pub fn failed(&self) {
        *self.endpoint.failed_at.lock() = Some(Instant::now());
    }
}

impl Pool {
    pub fn new(urls: &[String]) -> Pool {
        Pool {
            endpoints: urls
                .iter()
                .map(|url| {
                    Arc::new(Endpoint {
                        url: url.clone(),
                        seats: AtomicUsize::new(0),
                        failed_at: Mutex::new(None),
                    })
                })
                .collect(),
        }
    }

    /// The endpoints to try, in order: those not cooling down, fewest seats taken first
    /// (the configured order breaks ties), then those cooling down, the longest-failed
    /// first. A seat is taken only at the endpoint being tried (`Candidate::take`).
    pub fn candidates(&self) -> Vec<Candidate> {
        let now = Instant::now();
        let mut order: Vec<(bool, usize, Option<Instant>, usize)> = self
            .endpoints
            .iter()
            .enumerate()
            .map(|(index, endpoint)| {
                let failed_at = *endpoint.failed_at.lock();
                let cooling = failed_at.is_some_and(|at| now.duration_since(at) < COOL_DOWN);
                let seats = endpoint.seats.load(Ordering::Relaxed);
                (cooling, if cooling { 0 } else { seats }, failed_at, index)
            })
            .collect();
        order.sort_unstable();
        order
            .into_iter()
            .map(|(.., index)| Candidate(self.endpoints[index].clone()))
            .collect()
    }

    /// Seats taken now, by endpoint (shown as given, without its query).
    pub fn load(&self) -> Vec<(String, usize)> {
        self.endpoints
            .iter()
            .map(|e| (cdp::without_query(&e.url), e.seats.load(Ordering::Relaxed)))
            .collect()
    }
}

/// The URL a browser of one agent session is asked for: a farm is told not to end the
/// session by its own clock (Browserless's `timeout`, 30 s unless asked), since tabwire
/// ends it when the agent's session ends or idles. A `timeout` the operator put in the
/// URL is kept.
pub fn session_url(url: &str) -> String {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    if query.split('&').any(|pair| pair.starts_with("timeout=")) {
        return url.to_owned();
    }
    let joiner = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joiner}timeout=0")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("ws://farm{i}/chromium")).collect()
    }

    #[test]
    fn the_least_loaded_endpoint_comes_first_and_seats_come_back() {
        let pool = Pool::new(&urls(2));
        let first = pool.candidates().remove(0).take();
        assert_eq!(first.url(), "ws://farm0/chromium");
        // farm0 holds one seat now: farm1 is next.
        let second = pool.candidates().remove(0).take();
        assert_eq!(second.url(), "ws://farm1/chromium");
        drop(first);
        assert_eq!(pool.load()[0].1, 0);
        assert_eq!(pool.load()[1].1, 1);
    }

    #[test]
    fn a_failed_endpoint_is_tried_last_while_it_cools_down() {
        let pool = Pool::new(&urls(2));
        pool.candidates().remove(0).take().failed();
        let order: Vec<String> = pool
            .candidates()
            .into_iter()
            .map(|c| c.take().url().to_owned())
            .collect();
        assert_eq!(order, ["ws://farm1/chromium", "ws://farm0/chromium"]);
    }

    #[test]
    fn a_session_asks_the_farm_for_no_clock_of_its_own() {
        assert_eq!(
            session_url("ws://h/chromium?token=t"),
            "ws://h/chromium?token=t&timeout=0"
        );
        assert_eq!(session_url("ws://h/chromium"), "ws://h/chromium?timeout=0");
        assert_eq!(
            session_url("ws://h/chromium?timeout=600000&token=t"),
            "ws://h/chromium?timeout=600000&token=t"
        );
    }
}
