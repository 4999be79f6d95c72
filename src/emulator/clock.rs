//! The emulator's clock: emulated time runs `speed` times faster than real time, so a two-day
//! retry schedule plays out in minutes in a demo and in seconds in a test.

use chrono::{DateTime, TimeDelta, Utc};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug)]
struct Base {
    real: Instant,
    emulated: DateTime<Utc>,
    speed: f64,
}

/// Cheap to clone; all clones share the time and the speed.
#[derive(Clone, Debug)]
pub struct Clock(Arc<Mutex<Base>>);

impl Clock {
    pub fn new(speed: f64) -> Self {
        Clock(Arc::new(Mutex::new(Base {
            real: Instant::now(),
            emulated: Utc::now(),
            speed: sanitize(speed),
        })))
    }

    fn base(&self) -> std::sync::MutexGuard<'_, Base> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn now(&self) -> DateTime<Utc> {
        let b = self.base();
        let real = b.real.elapsed().mul_f64(b.speed);
        b.emulated + TimeDelta::from_std(real).unwrap_or(TimeDelta::MAX)
    }

    pub fn speed(&self) -> f64 {
        self.base().speed
    }

    /// Change the speed from now on; emulated time does not jump.
    pub fn set_speed(&self, speed: f64) {
        let now = self.now();
        let mut b = self.base();
        b.real = Instant::now();
        b.emulated = now;
        b.speed = sanitize(speed);
    }

    /// Real time that `d` of emulated time takes at the current speed.
    pub fn real(&self, d: Duration) -> Duration {
        d.div_f64(self.speed())
    }

    /// Sleep until emulated time `at` (re-reading the speed, which may change meanwhile).
    pub async fn sleep_until(&self, at: DateTime<Utc>) {
        loop {
            let left = (at - self.now()).to_std().unwrap_or_default();
            if left.is_zero() {
                return;
            }
            // Wake at least every 200 ms so a speed change takes effect soon.
            let real = self.real(left).min(Duration::from_millis(200));
            tokio::time::sleep(real.max(Duration::from_millis(1))).await;
        }
    }
}

fn sanitize(speed: f64) -> f64 {
    if speed.is_finite() && speed > 0.0 {
        speed.clamp(0.01, super::MAX_SPEED)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_scales_time_and_changes_without_a_jump() {
        let c = Clock::new(1000.0);
        assert_eq!(c.real(Duration::from_secs(90)), Duration::from_millis(90));
        let before = c.now();
        c.set_speed(1.0);
        let after = c.now();
        assert!(after >= before && after - before < TimeDelta::seconds(5));
        assert_eq!(Clock::new(-3.0).speed(), 1.0);
        assert_eq!(Clock::new(f64::NAN).speed(), 1.0);
    }
}
