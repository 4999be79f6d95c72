//! Helpers shared by the integration tests: a receiver on 127.0.0.1 port 0 with its own data
//! directory, typical invocations, and polling with a deadline.
#![allow(dead_code)]

use hookscope::contract::{Brand, Message};
use hookscope::receiver::{self, ReceiverConfig, Running};
use hookscope::responder::{Answer, Responder, ResponderConfig};
use hookscope::store::{Durability, Store};
use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

pub struct Rig {
    pub running: Running,
    pub store: Store,
    pub responder: Responder,
    pub dir: tempfile::TempDir,
    pub client: reqwest::Client,
}

/// A plain HTTP client for tests (TLS needs the process's crypto provider installed first).
pub fn http() -> reqwest::Client {
    hookscope::api::install_tls_provider();
    reqwest::Client::new()
}

impl Rig {
    pub async fn start(answer: Answer) -> Rig {
        Rig::start_with(answer, |_| {}).await
    }

    pub async fn start_with(answer: Answer, tweak: impl FnOnce(&mut ReceiverConfig)) -> Rig {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(dir.path(), Durability::Full).expect("store");
        let responder = Responder::new(ResponderConfig {
            answer,
            pass_registration_check: true,
        });
        let mut config = ReceiverConfig {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            ..ReceiverConfig::default()
        };
        tweak(&mut config);
        let running = receiver::start(config, store.clone(), responder.clone())
            .await
            .expect("receiver starts");
        Rig {
            running,
            store,
            responder,
            dir,
            client: http(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.running.addr, path)
    }
}

/// The headers the service's invoker sends.
pub fn invoker_headers(event: &str, delivery: &str, attempt: u32) -> Vec<(String, String)> {
    let b = Brand::default();
    vec![
        (b.event_header().to_owned(), event.to_owned()),
        (b.delivery_header().to_owned(), delivery.to_owned()),
        (b.attempt_header().to_owned(), attempt.to_string()),
        (b.webhook_id_header().to_owned(), "234".to_owned()),
        ("Content-Type".to_owned(), "application/json".to_owned()),
        ("User-Agent".to_owned(), b.user_agent().to_owned()),
    ]
}

pub fn status_report_body(id: &str) -> Vec<u8> {
    serde_json::to_vec(&[Message::sample_status_report(id)]).expect("json")
}

pub fn incoming_body(id: &str) -> Vec<u8> {
    serde_json::to_vec(&[Message::sample_incoming(id)]).expect("json")
}

/// Build a POST with the given headers and body.
pub fn post(
    client: &reqwest::Client,
    url: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> reqwest::RequestBuilder {
    let mut req = client.post(url).body(body);
    for (n, v) in headers {
        req = req.header(n.as_str(), v.as_str());
    }
    req
}

/// Poll `f` until it returns `Some`, or give `None` at `deadline` (so the caller can say what
/// it found instead).
pub async fn eventually_or_not<T>(
    deadline: Duration,
    mut f: impl FnMut() -> Option<T>,
) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if start.elapsed() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Poll `f` until it returns `Some`, or panic after `deadline`.
pub async fn eventually<T>(deadline: Duration, what: &str, f: impl FnMut() -> Option<T>) -> T {
    match eventually_or_not(deadline, f).await {
        Some(v) => v,
        None => panic!("timed out waiting for {what}"),
    }
}

/// Send the registration check the service makes before it accepts a URL: a POST of `[]` with
/// JSON content type and the invoker's User-Agent. Returns the status answered.
pub async fn registration_check(client: &reqwest::Client, url: &str) -> u16 {
    client
        .post(url)
        .header("Content-Type", "application/json")
        .header("User-Agent", "Service Invoker")
        .body("[]")
        .send()
        .await
        .expect("the registration check is answered")
        .status()
        .as_u16()
}
