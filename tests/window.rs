//! A real window: under Xvfb with Mesa's software OpenGL, `hookscope --screenshot FILE --demo`
//! renders the app and saves a PNG that is not blank. Without Xvfb or OpenGL on the machine the
//! test says why it is skipped (`.ci/run` installs both, so CI runs it).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn on_path(bin: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
}

fn has_opengl() -> bool {
    Command::new("ldconfig")
        .arg("-p")
        .output()
        .map(|o| {
            let libs = String::from_utf8_lossy(&o.stdout);
            libs.contains("libGL.so.1") || libs.contains("libEGL.so.1")
        })
        .unwrap_or(false)
}

/// Start Xvfb on a free display; returns the process and the display name.
fn start_xvfb() -> (KillOnDrop, String) {
    let mut child = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb starts");
    let stdout = child.stdout.take().expect("stdout");
    let guard = KillOnDrop(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("Xvfb reports its display in time");
    let n: u32 = line.trim().parse().expect("a display number");
    (guard, format!(":{n}"))
}

fn pixels(path: &std::path::Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).expect("the PNG exists");
    let decoder = png::Decoder::new(std::io::BufReader::new(file));
    let mut reader = decoder.read_info().expect("a valid PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Whether this machine can run a real window; if not, says why `test` is skipped.
fn can_open_a_window(test: &str) -> bool {
    if !on_path("Xvfb") {
        eprintln!(
            "SKIPPED {test}: Xvfb is not installed (apt-get install xvfb xauth libgl1-mesa-dri libegl1; .ci/run does)"
        );
        return false;
    }
    if !has_opengl() {
        eprintln!(
            "SKIPPED {test}: no OpenGL library (apt-get install libgl1-mesa-dri libegl1 libgl1; .ci/run does)"
        );
        return false;
    }
    true
}

/// Wait for `child` to end, at most `secs`.
fn wait_for_exit(app: &mut KillOnDrop, secs: u64, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(s) = app.0.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < deadline, "{what} took over {secs} s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `hookscope` on `display`, with software OpenGL, its data and settings under `home`.
fn window_command(display: &str, home: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hookscope"));
    cmd.env("DISPLAY", display)
        .env_remove("WAYLAND_DISPLAY")
        .env("LIBGL_ALWAYS_SOFTWARE", "1")
        .env("HOME", home)
        .env("XDG_DATA_HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// What the ended app wrote to stderr.
fn stderr_of(app: &mut KillOnDrop) -> String {
    let mut err = String::new();
    if let Some(mut e) = app.0.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    err
}

#[test]
fn screenshot_demo_renders_a_non_blank_png() {
    if !can_open_a_window("screenshot_demo_renders_a_non_blank_png") {
        return;
    }
    let (_xvfb, display) = start_xvfb();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("shot.png");
    let child = window_command(&display, dir.path())
        .arg("--screenshot")
        .arg(&out)
        .arg("--demo")
        .spawn()
        .expect("hookscope starts");
    let mut app = KillOnDrop(child);
    let status = wait_for_exit(&mut app, 120, "the screenshot");
    let err = stderr_of(&mut app);
    assert!(status.success(), "hookscope --screenshot failed: {err}");
    let (w, h, px) = pixels(&out);
    assert!(w >= 640 && h >= 400, "{w}x{h}");
    // Not blank: many distinct colours (text, the table, the coloured outcomes).
    let mut colours: Vec<[u8; 4]> = px
        .chunks_exact(4)
        .step_by(7)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        colours.len() > 20,
        "only {} colours: a blank window?",
        colours.len()
    );
}

#[test]
fn without_a_display_the_window_points_to_listen() {
    let out = Command::new(env!("CARGO_BIN_EXE_hookscope"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs a display"), "{err}");
    assert!(err.contains("hookscope listen"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A DISPLAY that names no X server: a clear error, and the new `--data-dir` the run made for
/// its store is not left behind.
#[cfg(target_os = "linux")]
#[test]
fn an_unreachable_display_leaves_no_new_store_behind() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("new-store");
    let out = Command::new(env!("CARGO_BIN_EXE_hookscope"))
        .env("DISPLAY", ":54321")
        .env_remove("WAYLAND_DISPLAY")
        .env("HOME", dir.path())
        .arg("--data-dir")
        .arg(&data)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("could not reach the display \":54321\""),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!data.exists(), "the new data directory was left behind");
}

/// SIGTERM (a logout, `kill`) closes the window the way its close button does: it exits
/// cleanly and saves its settings on the way out, even when the signal comes while the window
/// is still opening.
#[cfg(unix)]
#[test]
fn sigterm_closes_the_window_and_saves_its_settings() {
    if !can_open_a_window("sigterm_closes_the_window_and_saves_its_settings") {
        return;
    }
    let (_xvfb, display) = start_xvfb();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let child = window_command(&display, dir.path())
        .arg("--data-dir")
        .arg(&data)
        .spawn()
        .expect("hookscope starts");
    let mut app = KillOnDrop(child);
    // The store is opened after the signal handler is in place, before the window opens.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !data.join("hookscope.sqlite3").is_file() {
        assert!(app.0.try_wait().unwrap().is_none(), "hookscope ended early");
        assert!(
            Instant::now() < deadline,
            "the store was not opened in time"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = i32::try_from(app.0.id()).expect("a pid");
    // SAFETY: a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = wait_for_exit(&mut app, 60, "closing on SIGTERM");
    let err = stderr_of(&mut app);
    assert!(status.success(), "{status:?}: {err}");
    // Beside the store chosen with --data-dir, not in the place every session shares.
    assert!(
        data.join("app.ron").is_file(),
        "the settings were not saved on the way out"
    );
    assert!(
        !dir.path().join("hookscope").join("app.ron").exists(),
        "the settings went to the shared place, not beside the store"
    );
}
