//! Stopping on Ctrl-C, SIGTERM and SIGHUP alike: a terminal's Ctrl-C, `kill`, a closed terminal
//! or a logout (SIGHUP), or a service manager all ask the same thing, and each gets the same
//! orderly stop.

/// The signals that ask the process to stop, registered when this is made (so one that arrives
/// before anything waits for it is not lost). Make it inside the tokio runtime.
pub struct StopSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    pub fn register() -> StopSignals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            StopSignals {
                term: signal(SignalKind::terminate()).ok(),
                int: signal(SignalKind::interrupt()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// Resolves at the next SIGINT (Ctrl-C) only (Ctrl-C elsewhere): while an orderly stop is
    /// under way, only the user's second Ctrl-C asks to quit at once. A service manager sends
    /// SIGTERM then SIGHUP to the same stop (systemd's `SendSIGHUP`): that is one request, not two.
    pub async fn next_interrupt(&mut self) {
        #[cfg(unix)]
        {
            let received = match &mut self.int {
                Some(s) => s.recv().await.is_some(),
                None => false,
            };
            if !received {
                std::future::pending::<()>().await;
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Resolves at the next SIGINT, SIGTERM or SIGHUP (Ctrl-C elsewhere); never if none could
    /// be registered.
    pub async fn next(&mut self) {
        #[cfg(unix)]
        {
            async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
                let received = match s {
                    Some(s) => s.recv().await.is_some(),
                    None => false,
                };
                if !received {
                    std::future::pending::<()>().await;
                }
            }
            tokio::select! {
                _ = one(&mut self.term) => {}
                _ = one(&mut self.int) => {}
                _ = one(&mut self.hup) => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::StopSignals;
    use futures_util::FutureExt;
    use tokio::signal::unix::{SignalKind, signal};

    /// During an orderly stop only a second Ctrl-C quits at once: the SIGHUP a service manager
    /// sends after its SIGTERM is not one.
    #[tokio::test]
    async fn only_ctrl_c_asks_to_quit_at_once() {
        let mut stops = StopSignals::register();
        let mut seen = signal(SignalKind::hangup()).expect("a SIGHUP handler");
        // SAFETY: a signal to this process, which handles it (registered above).
        assert_eq!(unsafe { libc::raise(libc::SIGHUP) }, 0);
        // Once this handler has it, every handler has had it.
        tokio::time::timeout(std::time::Duration::from_secs(10), seen.recv())
            .await
            .expect("the SIGHUP arrives");
        assert!(
            stops.next_interrupt().now_or_never().is_none(),
            "a SIGHUP is no Ctrl-C"
        );
        // SAFETY: as above, for SIGINT.
        assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
        tokio::time::timeout(std::time::Duration::from_secs(10), stops.next_interrupt())
            .await
            .expect("Ctrl-C asks to quit at once");
    }
}
