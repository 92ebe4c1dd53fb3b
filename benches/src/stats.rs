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
