//! Opening the window: display check, data directory, demo data, screenshot mode.

use super::engine::Engine;
use super::{HookscopeApp, ScreenshotPlan};
use crate::responder::Responder;
use crate::store::{Durability, Store};
use std::path::PathBuf;

#[derive(Debug, Default, Clone)]
pub struct WindowOptions {
    pub data_dir: PathBuf,
    /// Fill a fresh temporary store with sample calls (and start from default settings).
    pub demo: bool,
    /// Save a PNG of the window here once it has rendered, then exit.
    pub screenshot: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error(
        "Hookscope's window needs a display, and none was found (DISPLAY and WAYLAND_DISPLAY are not set). Without a window, run `hookscope listen` to capture calls, and `hookscope log` to read them."
    )]
    NoDisplay,
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("cannot create a temporary directory for the demo: {0}")]
    TempDir(std::io::Error),
    #[error(
        "the window could not be opened: {0}. On Linux it needs OpenGL (Mesa's libgl1-mesa-dri and libegl1 provide a software one); `hookscope listen` works without a window"
    )]
    Renderer(String),
    #[error(
        "the window could not reach the display {display}: {reason}. Check that it names a running X server (DISPLAY) or Wayland compositor (WAYLAND_DISPLAY); `hookscope listen` works without a window"
    )]
    DisplayUnreachable { display: String, reason: String },
    #[error("the screenshot was not saved: {0}")]
    Screenshot(String),
}

impl WindowError {
    /// What eframe said when the window failed: a display that is named but cannot be reached
    /// (no X server on that DISPLAY, no compositor) is not a missing OpenGL.
    pub fn from_renderer(
        error: String,
        display: Option<String>,
        wayland: Option<String>,
    ) -> WindowError {
        let lower = error.to_lowercase();
        let reason = if lower.contains("x server") {
            Some(("X", display))
        } else if lower.contains("wayland compositor") || lower.contains("wayland display") {
            Some(("Wayland", wayland))
        } else {
            None
        };
        match reason {
            Some((kind, named)) => WindowError::DisplayUnreachable {
                display: match named.filter(|d| !d.is_empty()) {
                    Some(d) => format!("\"{d}\""),
                    None => format!("({kind})"),
                },
                // The error's own words, without the source path winit puts before them.
                reason: error
                    .rsplit(": ")
                    .next()
                    .unwrap_or(&error)
                    .trim_end_matches('.')
                    .to_owned(),
            },
            None => WindowError::Renderer(error),
        }
    }
}

/// Whether this machine has a display for a window.
pub fn has_display() -> bool {
    if cfg!(any(
        target_os = "linux",
        target_os = "freebsd",
        target_os = "openbsd"
    )) {
        ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
    } else {
        true
    }
}

/// Open the window (blocking until it closes). `rt` runs all I/O.
/// A close asked for by a signal, and the window's context once there is one. Whichever comes
/// second sends the close, so a signal that arrives while the window is still opening closes it
/// as soon as it is up.
#[derive(Default)]
struct CloseRequest(std::sync::Mutex<(bool, Option<egui::Context>)>);

impl CloseRequest {
    fn close(ctx: &egui::Context) {
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        ctx.request_repaint();
    }

    fn requested(&self) {
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        s.0 = true;
        if let Some(ctx) = &s.1 {
            Self::close(ctx);
        }
    }

    fn window_up(&self, ctx: &egui::Context) {
        let mut s = self.0.lock().unwrap_or_else(|p| p.into_inner());
        s.1 = Some(ctx.clone());
        if s.0 {
            Self::close(ctx);
        }
    }
}

/// Ctrl-C in the terminal, SIGTERM (`kill`) or SIGHUP (a closed terminal) closes the window as its close button
/// would: the settings and the window's layout are saved on the way out, not lost.
fn close_on_signal(rt: &tokio::runtime::Handle) -> std::sync::Arc<CloseRequest> {
    let request = std::sync::Arc::new(CloseRequest::default());
    let on_signal = request.clone();
    // Registered here, before anything else starts, not when the task first runs.
    let mut signals = {
        let _inside = rt.enter();
        crate::signals::StopSignals::register()
    };
    rt.spawn(async move {
        signals.next().await;
        on_signal.requested();
    });
    request
}

/// How long closing the window waits for the receiver's calls in progress.
const STOP_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Where the window keeps its settings for the store in `data_dir`: beside it when a data
/// directory of its own was chosen (`--data-dir`, `HOOKSCOPE_DATA_DIR`), so that two sessions on
/// two stores never share or overwrite each other's answer, rules or theme; `None` (eframe's own
/// place, which on Linux is that same directory) for the default store under `platform_data`.
pub fn settings_file(
    data_dir: &std::path::Path,
    platform_data: Option<&std::path::Path>,
) -> Option<std::path::PathBuf> {
    let default = platform_data.map(|d| d.join("hookscope"));
    (default.as_deref() != Some(data_dir)).then(|| data_dir.join("app.ron"))
}

pub fn run_window(rt: &tokio::runtime::Runtime, opts: WindowOptions) -> Result<(), WindowError> {
    if !has_display() {
        return Err(WindowError::NoDisplay);
    }
    let close = close_on_signal(rt.handle());
    // The demo's store is fresh and temporary; it is removed when the window closes.
    let demo_dir = if opts.demo {
        Some(
            tempfile::Builder::new()
                .prefix("hookscope-demo-")
                .tempdir()
                .map_err(WindowError::TempDir)?,
        )
    } else {
        None
    };
    let data_dir = demo_dir
        .as_ref()
        .map_or(opts.data_dir.clone(), |d| d.path().to_owned());
    // A directory this run makes is removed again if the window cannot open (see below).
    let made_here = demo_dir.is_none() && !data_dir.exists();
    let store = Store::open(&data_dir, Durability::Full)?;
    let show = if opts.demo {
        rt.block_on(super::demo::fill(&store))?
    } else {
        None
    };
    let (engine, rx) = Engine::new(rt.handle().clone(), store, Responder::default());
    let stopper = engine.receiver_stopper();
    let fixed_look = opts.demo || opts.screenshot.is_some();
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("Hookscope")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([720.0, 480.0]),
        renderer: eframe::Renderer::Glow,
        persist_window: !fixed_look,
        // A demo or a screenshot starts from a clean look: nothing saved by the user's own
        // sessions (panel sizes, theme) is read or overwritten.
        persistence_path: demo_dir
            .as_ref()
            .filter(|_| fixed_look)
            .map(|d| d.path().join("window.ron"))
            .or_else(|| {
                fixed_look.then(|| std::env::temp_dir().join("hookscope-screenshot-window.ron"))
            })
            .or_else(|| settings_file(&data_dir, dirs::data_dir().as_deref())),
        ..Default::default()
    };
    let result_slot = std::sync::Arc::new(std::sync::Mutex::new(None));
    let slot = result_slot.clone();
    let screenshot = opts.screenshot.clone();
    let app_dir = data_dir.clone();
    let result = eframe::run_native(
        "hookscope",
        native,
        Box::new(move |cc| {
            let mut settings = if fixed_look {
                super::state::Settings::default()
            } else {
                HookscopeApp::load_settings(cc.storage)
            };
            if opts.demo {
                // Never collide with a Hookscope already on 8787.
                settings.port = 0;
            }
            close.window_up(&cc.egui_ctx);
            super::fonts::install_in_background(&cc.egui_ctx);
            let mut app = HookscopeApp::new(&cc.egui_ctx, engine, rx, settings, app_dir);
            if opts.demo {
                app.state.service.sample_webhook = Some(super::demo::SAMPLE_WEBHOOK);
            }
            if let Some(id) = show {
                app.select(id);
                app.state.detail_tab = super::state::DetailTab::Delivery;
            }
            if let Some(path) = screenshot {
                app = app.with_screenshot(ScreenshotPlan {
                    path,
                    after_frames: 12,
                });
                if let Ok(mut s) = slot.lock() {
                    *s = Some(app.screenshot_result());
                }
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| {
        let var = |name| std::env::var(name).ok();
        WindowError::from_renderer(e.to_string(), var("DISPLAY"), var("WAYLAND_DISPLAY"))
    });
    // The calls in progress (an answer held back by a delay, say) are answered and stored
    // before the process ends, within a bound: a store that cannot write must not hang the exit.
    let stopped = rt.block_on(async { tokio::time::timeout(STOP_WITHIN, stopper.stop()).await });
    if stopped.is_err() {
        crate::say!(
            "warning: the receiver did not stop within {} s; calls still in progress were not stored",
            STOP_WITHIN.as_secs()
        );
    }
    if made_here
        && matches!(
            result,
            Err(WindowError::DisplayUnreachable { .. } | WindowError::Renderer(_))
        )
    {
        remove_if_unused(&data_dir);
    }
    result?;
    drop(demo_dir);
    if opts.screenshot.is_some() {
        let taken = result_slot
            .lock()
            .ok()
            .and_then(|s| s.clone())
            .and_then(|r| r.lock().ok().and_then(|r| r.clone()));
        match taken {
            Some(Ok(())) => {}
            Some(Err(e)) => return Err(WindowError::Screenshot(e)),
            None => {
                return Err(WindowError::Screenshot(
                    "the window closed before it rendered".into(),
                ));
            }
        }
    }
    Ok(())
}

/// Remove a data directory that holds nothing but an empty store: the one a window that could
/// not open made (a mistyped DISPLAY must not leave `--data-dir new-dir` behind). Anything stored
/// in it keeps it. Whether it was removed.
fn remove_if_unused(dir: &std::path::Path) -> bool {
    let empty = Store::open_read(dir)
        .and_then(|store| store.last_id())
        .is_ok_and(|last| last.is_none());
    let only_the_store = std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().all(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(crate::store::DB_FILE))
        })
    });
    empty && only_the_store && std::fs::remove_dir_all(dir).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn only_an_unused_store_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let empty = tmp.path().join("empty");
        drop(Store::open(&empty, Durability::Full).unwrap());
        assert!(remove_if_unused(&empty));
        assert!(!empty.exists());
        // A call stored in it keeps it.
        let used = tmp.path().join("used");
        let store = Store::open(&used, Durability::Full).unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(store.insert(crate::store::Invocation::synthetic(1, b"[]")))
            .unwrap();
        drop(store);
        assert!(!remove_if_unused(&used));
        assert!(used.join(crate::store::DB_FILE).is_file());
        // So does a file of the user's beside an empty store.
        let mine = tmp.path().join("mine");
        drop(Store::open(&mine, Durability::Full).unwrap());
        std::fs::write(mine.join("notes.txt"), "keep").unwrap();
        assert!(!remove_if_unused(&mine));
        assert!(mine.join("notes.txt").is_file());
    }

    #[test]
    fn a_store_of_its_own_keeps_its_own_settings() {
        let platform = Path::new("/home/u/.local/share");
        // The default store: eframe's place, where the settings always were.
        assert_eq!(
            settings_file(Path::new("/home/u/.local/share/hookscope"), Some(platform)),
            None
        );
        // Another store: its settings beside it.
        assert_eq!(
            settings_file(Path::new("/tmp/qa"), Some(platform)),
            Some(Path::new("/tmp/qa/app.ron").to_owned())
        );
        // No platform data directory known: beside the store too.
        assert_eq!(
            settings_file(Path::new("hookscope-data"), None),
            Some(Path::new("hookscope-data/app.ron").to_owned())
        );
    }

    #[test]
    fn an_unreachable_display_is_not_blamed_on_opengl() {
        let x = "winit EventLoopError: os error at /src/linux/mod.rs:788: Failed to open connection to X server";
        let e = WindowError::from_renderer(x.into(), Some(":99".into()), None).to_string();
        assert!(
            e.contains(
                "could not reach the display \":99\": Failed to open connection to X server."
            ),
            "{e}"
        );
        assert!(!e.contains("OpenGL") && !e.contains("/src/"), "{e}");
        let w = "winit EventLoopError: os error at /src/wayland/mod.rs:89: Could not find wayland compositor";
        let e = WindowError::from_renderer(w.into(), None, Some("wl-9".into())).to_string();
        assert!(
            e.contains("display \"wl-9\": Could not find wayland compositor"),
            "{e}"
        );
        // Anything else is still the renderer's.
        let gl =
            WindowError::from_renderer("no suitable GL config".into(), Some(":0".into()), None);
        assert!(matches!(gl, WindowError::Renderer(_)));
        assert!(gl.to_string().contains("OpenGL"));
    }
}
