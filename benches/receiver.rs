//! Receiver throughput against a bare axum server, measured in the same run.
//!
//! `cargo bench --bench receiver` drives, on loopback, concurrent clients that send a typical
//! 1-message status-report to (a) a bare axum server that answers 200 without recording and
//! (b) Hookscope's durable receiver (every call committed to SQLite, fsync on, before the answer).
//! Rounds alternate so both see the same machine state; the medians and their ratio are printed.
//!
//! Options (after `--`): `--calls N` per round (default 20000), `--concurrency C` (default 64),
//! `--rounds R` (default 3), `--no-fsync` (commit without fsync, as `listen --no-fsync`),
//! `--durable-only` (skip the bare server, for profiling the receiver alone), `--bare-only` (the
//! bare server alone, to compare a profile against), `--validate` (only the check of a body,
//! its fast path against the general one, in alternating rounds), `--million` to also
//! record 1,000,000 invocations and print the resident memory and the size of the WAL every
//! 100,000 (both should stay flat).

use axum::Router;
use hookscope::contract::{Brand, Message};
use hookscope::receiver::{self, ReceiverConfig};
use hookscope::responder::{Answer, Responder, ResponderConfig};
use hookscope::store::{Durability, Store};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

struct Opts {
    calls: u64,
    concurrency: u64,
    rounds: usize,
    million: bool,
    no_fsync: bool,
    durable_only: bool,
    bare_only: bool,
    validate: bool,
}

fn opts() -> Opts {
    let mut o = Opts {
        calls: 20_000,
        concurrency: 64,
        rounds: 3,
        million: false,
        no_fsync: false,
        durable_only: false,
        bare_only: false,
        validate: false,
    };
    let args: Vec<String> = std::env::args().collect();
    let num = |i: usize| args.get(i + 1).and_then(|v| v.parse().ok());
    for (i, a) in args.iter().enumerate() {
        match a.as_str() {
            "--calls" => o.calls = num(i).unwrap_or(o.calls),
            "--concurrency" => o.concurrency = num(i).unwrap_or(o.concurrency),
            "--rounds" => o.rounds = num(i).map_or(o.rounds, |n: u64| n as usize),
            "--million" => o.million = true,
            "--no-fsync" => o.no_fsync = true,
            "--durable-only" => o.durable_only = true,
            "--bare-only" => o.bare_only = true,
            "--validate" => o.validate = true,
            _ => {}
        }
    }
    o
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// CPU seconds the whole machine has been busy so far (all cores; the client, both servers and
/// the kernel's work for them all run here).
fn cpu_secs() -> f64 {
    let busy = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| {
            let line = s.lines().next()?.to_owned();
            let f: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .filter_map(|x| x.parse().ok())
                .collect();
            // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
            let total: u64 = f.iter().take(8).sum();
            Some(total - f.get(3)? - f.get(4)?)
        })
        .unwrap_or(0);
    busy as f64 / 100.0
}

/// Send `calls` status-reports with `concurrency` workers; returns calls per second.
async fn drive(addr: SocketAddr, calls: u64, concurrency: u64) -> f64 {
    let brand = Brand::default();
    let body = serde_json::to_vec(&[Message::sample_status_report("1000000000000000001")])
        .unwrap_or_default();
    hookscope::api::install_tls_provider();
    let client = reqwest::Client::new();
    let next = Arc::new(AtomicU64::new(0));
    let failures = Arc::new(AtomicU64::new(0));
    let url = format!("http://{addr}/hook");
    let start = Instant::now();
    let cpu0 = cpu_secs();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, next, failures, url, body, brand) = (
            client.clone(),
            next.clone(),
            failures.clone(),
            url.clone(),
            body.clone(),
            brand.clone(),
        );
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= calls {
                    break;
                }
                let r = client
                    .post(&url)
                    .header(brand.event_header(), "status-report")
                    .header(brand.delivery_header(), format!("bench-{i}"))
                    .header(brand.attempt_header(), "1")
                    .header(brand.webhook_id_header(), "234")
                    .header("Content-Type", "application/json")
                    .header("User-Agent", brand.user_agent())
                    .body(body.clone())
                    .send()
                    .await;
                if !matches!(r, Ok(ref r) if r.status() == 200) {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_secs() - cpu0;
    if std::env::var_os("BENCH_CPU").is_some() {
        eprintln!("    {calls} calls: {:.2} cores busy", cpu / secs);
    }
    let failed = failures.load(Ordering::Relaxed);
    if failed > 0 {
        eprintln!("warning: {failed} calls were not answered 200");
    }
    calls as f64 / secs
}

async fn bare_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let app = Router::new().fallback(|body: axum::body::Bytes| async move {
        std::hint::black_box(body);
        "ok"
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Time the check of a typical body, the fast path against the general one, alternating rounds.
fn validate_bench() {
    use hookscope::contract::{EventKind, FastPath, check_body};
    let body = serde_json::to_string(&[Message::sample_status_report("1000000000000000001")])
        .unwrap_or_default();
    let per_call = |fast: FastPath| {
        let n = 200_000u32;
        let start = Instant::now();
        for _ in 0..n {
            let mut findings = Vec::new();
            let count = check_body(
                std::hint::black_box(&body),
                Some(EventKind::StatusReport),
                &mut findings,
                fast,
            );
            std::hint::black_box((count, findings));
        }
        start.elapsed().as_secs_f64() * 1e6 / f64::from(n)
    };
    let (mut fast, mut general) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        fast.push(per_call(FastPath::Try));
        general.push(per_call(FastPath::Skip));
    }
    let (f, g) = (median(fast), median(general));
    println!(
        "checking a 1-message status-report body: fast path {f:.2} µs, general path {g:.2} µs (fast/general {:.2}, medians of 5 alternating rounds)",
        f / g
    );
}

#[tokio::main]
async fn main() {
    let o = opts();
    if o.validate {
        validate_bench();
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let durability = if o.no_fsync {
        Durability::Normal
    } else {
        Durability::Full
    };
    let store = Store::open(dir.path(), durability).expect("store");
    let running = receiver::start(
        ReceiverConfig {
            port: 0,
            ..ReceiverConfig::default()
        },
        store.clone(),
        Responder::new(ResponderConfig {
            answer: Answer::status(200),
            pass_registration_check: true,
        }),
    )
    .await
    .expect("receiver");
    let bare = bare_server().await;

    println!(
        "receiver benchmark: {} calls a round, {} concurrent clients, {} rounds, 1-message status-report",
        o.calls, o.concurrency, o.rounds
    );
    // Warm-up: connections, page cache, allocator.
    drive(bare, o.calls / 10, o.concurrency).await;
    drive(running.addr, o.calls / 10, o.concurrency).await;

    let (mut b, mut d) = (Vec::new(), Vec::new());
    for round in 1..=o.rounds {
        let rb = if o.durable_only {
            f64::NAN
        } else {
            drive(bare, o.calls, o.concurrency).await
        };
        let rd = if o.bare_only {
            println!("  round {round}: bare {rb:>9.0}/s");
            b.push(rb);
            continue;
        } else {
            drive(running.addr, o.calls, o.concurrency).await
        };
        if o.durable_only {
            println!("  round {round}: durable {rd:>9.0}/s");
        } else {
            println!(
                "  round {round}: bare {rb:>9.0}/s   durable {rd:>9.0}/s   ratio {:.2}",
                rd / rb
            );
        }
        b.push(rb);
        d.push(rd);
    }
    if o.bare_only {
        println!(
            "bare axum (answers 200, records nothing): {:.0} invocations/s (median)",
            median(b)
        );
        running.shutdown().await;
        return;
    }
    let (mb, md) = (median(b), median(d));
    if !o.durable_only {
        println!("bare axum (answers 200, records nothing): {mb:.0} invocations/s (median)");
    }
    println!("Hookscope durable receiver (fsync'd SQLite): {md:.0} invocations/s (median)");
    if !o.durable_only {
        println!("ratio durable/bare: {:.2} (target >= 0.5)", md / mb);
    }

    if o.million {
        let target = 1_000_000u64;
        let already = store
            .count(&hookscope::store::Filter::default())
            .unwrap_or(0);
        println!("memory over {target} recorded invocations (resident set of this process):");
        let start_rss = rss_kib();
        let mut recorded = already;
        let mut samples = Vec::new();
        while recorded < target {
            let step = (100_000 - recorded % 100_000).min(target - recorded);
            drive(running.addr, step, o.concurrency).await;
            recorded += step;
            let rss = rss_kib();
            samples.push(rss);
            let wal = std::fs::metadata(store.wal_path())
                .map(|m| m.len())
                .unwrap_or(0);
            println!(
                "  {recorded:>8} recorded: RSS {:.1} MiB, WAL {:.1} MiB",
                rss as f64 / 1024.0,
                wal as f64 / (1 << 20) as f64
            );
        }
        let (lo, hi) = (
            samples.iter().copied().min().unwrap_or(0),
            samples.iter().copied().max().unwrap_or(0),
        );
        println!(
            "RSS at start {:.1} MiB; over the run {:.1}..{:.1} MiB (max/min {:.2})",
            start_rss as f64 / 1024.0,
            lo as f64 / 1024.0,
            hi as f64 / 1024.0,
            hi as f64 / lo.max(1) as f64
        );
        let db = std::fs::metadata(store.db_path())
            .map(|m| m.len())
            .unwrap_or(0);
        println!("database size: {:.1} MiB", db as f64 / (1 << 20) as f64);
    }
    running.shutdown().await;
}

// The same allocator as the `hookscope` binary, for both servers.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
