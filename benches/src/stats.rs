use std::time::Duration;

#[derive(Default)]
pub struct Samples(Vec<f64>);

impl Samples {
    pub fn push(&mut self, d: Duration) {
        self.0.push(d.as_secs_f64() * 1e3);
    }

    fn percentile(&self, p: f64) -> f64 {
        let mut sorted = self.0.clone();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() {
            return f64::NAN;
        }
        let rank = (p * (sorted.len() - 1) as f64).round() as usize;
        sorted[rank]
    }

    pub fn median(&self) -> f64 {
        self.percentile(0.5)
    }

    pub fn p90(&self) -> f64 {
        self.percentile(0.9)
    }

    /// "median 12.3 ms (p10 10.1, p90 15.0)"
    pub fn summary(&self) -> String {
        format!(
            "median {:7.2} ms (p10 {:.2}, p90 {:.2})",
            self.median(),
            self.percentile(0.1),
            self.percentile(0.9)
        )
    }

    /// "p50 12.3 ms, p90 15.0, p99 30.2, max 41.0"
    pub fn tail_summary(&self) -> String {
        format!(
            "p50 {:.1} ms, p90 {:.1}, p99 {:.1}, max {:.1}",
            self.median(),
            self.percentile(0.9),
            self.percentile(0.99),
            self.percentile(1.0)
        )
    }
}

/// Chromium draws (and so captures) on a 60 Hz frame clock. A capture asked for the
/// moment the previous reply arrived lands on the same phase of that clock every time,
/// one server always early and another always late, by up to a frame. Pausing a
/// different fraction of a frame before each timed capture spreads every server's
/// captures over the whole frame alike. The `n`th pause of a golden-ratio sequence:
/// evenly spread, and the same from run to run.
pub fn frame_phase(n: usize) -> Duration {
    const FRAME_MS: f64 = 1000.0 / 60.0;
    let fraction = (n as f64 * 0.618_033_988_75).fract();
    Duration::from_secs_f64(fraction * FRAME_MS / 1e3)
}

/// How long an agent is taken to pause between calls where a row says so: shorter than
/// any model's turn, and longer than the 100 ms of DOM quiet Chrome DevTools MCP's own
/// navigation waits for (so every server's next call meets a settled page).
pub const AGENT_PAUSE: Duration = Duration::from_millis(200);

#[cfg(test)]
mod tests {
    #[test]
    fn frame_phases_cover_one_frame_evenly() {
        let phases: Vec<f64> = (0..60)
            .map(|n| super::frame_phase(n).as_secs_f64() * 1e3)
            .collect();
        assert!(phases.iter().all(|&ms| (0.0..16.7).contains(&ms)));
        for sixth in 0..6 {
            let (lo, hi) = (sixth as f64 * 16.67 / 6.0, (sixth + 1) as f64 * 16.67 / 6.0);
            let inside = phases.iter().filter(|&&ms| ms >= lo && ms < hi).count();
            assert!(
                (7..=13).contains(&inside),
                "{inside} phases in [{lo}, {hi})"
            );
        }
    }
}
