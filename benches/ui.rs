//! The window over a store of 1,000,000 invocations: time from launch to the first frame, time
//! of a frame while the list scrolls, and resident memory.
//!
//! `cargo bench --bench ui` (options after `--`: `--rows N`, default 1,000,000; `--frames F`,
//! default 300; `--keep DIR` fills the store in DIR and leaves it there, to open it in a real
//! window with `hookscope --data-dir DIR`). Frames run through egui_kittest with no GPU: the figure is the app's own CPU
//! work per frame (layout of every panel, the list's paging), not the GPU's painting. A frame
//! while scrolling jumps the list by 37 rows, as a fast flick does, so new pages load all along.

use egui_kittest::Harness;
use hookscope::app::HookscopeApp;
use hookscope::app::engine::Engine;
use hookscope::app::state::Settings;
use hookscope::contract::Message;
use hookscope::responder::Responder;
use hookscope::store::{Durability, Invocation, Store};
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
        })
        .unwrap_or(0.0)
        / 1024.0
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let rows = arg("--rows", 1_000_000);
    let frames = arg("--frames", 300) as usize;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let temp = tempfile::tempdir().expect("temp dir");
    let args: Vec<String> = std::env::args().collect();
    let kept = args
        .iter()
        .position(|a| a == "--keep")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from);
    let dir = kept.as_deref().unwrap_or(temp.path());
    let store = Store::open(dir, Durability::Normal).expect("store");
    println!("ui benchmark: filling a store with {rows} invocations…");
    let body = serde_json::to_vec(&[Message::sample_status_report("1")]).unwrap_or_default();
    rt.block_on(async {
        let mut done = 0u64;
        while done < rows {
            let n = (rows - done).min(4096);
            let inserts = (done..done + n).map(|i| store.insert(Invocation::synthetic(i, &body)));
            for r in futures_util::future::join_all(inserts).await {
                r.expect("insert");
            }
            done += n;
        }
    });
    drop(store);
    let rss_before = rss_mib();

    // Launch: open the store, build the app, run frames until the first page of rows shows.
    let launch = Instant::now();
    let store = Store::open(dir, Durability::Normal).expect("store");
    let (engine, rx) = Engine::new(rt.handle().clone(), store, Responder::default());
    let settings = Settings {
        port: 0,
        follow: false,
        ..Settings::default()
    };
    let data_dir = dir.to_owned();
    let mut harness = Harness::builder()
        .with_size([1280.0, 800.0])
        .build_eframe(move |cc| HookscopeApp::new(&cc.egui_ctx, engine, rx, settings, data_dir));
    let first_frame = launch.elapsed();
    let deadline = Instant::now() + Duration::from_secs(30);
    while harness.state().state.list.row(0).is_none() && Instant::now() < deadline {
        harness.step();
    }
    let first_rows = launch.elapsed();
    let count = harness.state().state.list.count;

    // Scrolling: a flick of 37 rows a frame through the whole list, wrapping around.
    let mut times = Vec::with_capacity(frames);
    let mut row = 0u64;
    let mut blank_frames = 0;
    for _ in 0..frames {
        row = (row + 37) % count.max(1);
        harness.state_mut().state.list.scroll_to_row = Some(row);
        let t = Instant::now();
        harness.step();
        times.push(t.elapsed());
        if harness.state().state.list.row(row).is_none() {
            blank_frames += 1;
        }
    }
    // A jump to the oldest row, as End does.
    harness.state_mut().state.list.scroll_to_row = Some(count.saturating_sub(1));
    let t = Instant::now();
    harness.step();
    let jump = t.elapsed();
    let rss_after = rss_mib();
    times.sort();
    let median = percentile(&times, 0.5);
    println!("rows in the store: {count}");
    println!(
        "launch to first frame: {:.1} ms (target < 1000 ms)",
        first_frame.as_secs_f64() * 1e3
    );
    println!(
        "launch to first rows on screen: {:.1} ms",
        first_rows.as_secs_f64() * 1e3
    );
    println!(
        "frame while scrolling: median {:.2} ms, p95 {:.2} ms, max {:.2} ms over {frames} frames (target < 8 ms); {blank_frames} frames showed rows still loading",
        median.as_secs_f64() * 1e3,
        percentile(&times, 0.95).as_secs_f64() * 1e3,
        percentile(&times, 1.0).as_secs_f64() * 1e3
    );
    println!(
        "frame that jumps to the oldest row: {:.2} ms",
        jump.as_secs_f64() * 1e3
    );
    println!(
        "resident memory: {rss_before:.1} MiB before the window, {rss_after:.1} MiB with it (target < 200 MB); rows held in memory: {}",
        harness.state().state.list.loaded_rows()
    );
}
