//! Hookscope: a desktop inspector for the SMS service's webhooks.
//!
//! The library holds the engine; the `hookscope` binary is its window and its CLI.
//! - [`contract`]: the webhook contract as pure code (no I/O);
//! - [`receiver`]: the embedded HTTP receiver that records every call;
//! - [`responder`]: the answer the user chose;
//! - [`store`]: durable SQLite storage of invocations;
//! - [`app`]: the egui desktop app;
//! - [`cli`]: the headless commands.

/// `eprintln!` that never panics. A closed stderr (`listen 2>&1 | head -2`) had made
/// `listen` panic as it stopped (exit status 101), leaving the database's -wal and -shm
/// behind; what it says is a courtesy, the store's closing is not.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod api;
pub mod app;
pub mod cli;
pub mod cli_api;
pub mod contract;
pub mod deliveries;
pub mod emulator;
pub mod receiver;
pub mod responder;
pub mod rules;
pub mod signals;
pub mod store;
pub mod text;
