//! The service's API from the client side: typed calls for webhooks and messages, every error
//! kind mapped to a message a person can act on.

mod client;
pub mod model;
pub mod reach;

pub(crate) use client::Transport;
pub(crate) use client::plain_serde;
pub use client::{Answered, ApiClient, ApiError, WebhookList};

/// Use ring for TLS (installed once per process; a second call is harmless).
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
