//! File dialogs, behind a small interface: rfd's native dialogs in the app, a stand-in in tests
//! (rfd has no portal under Xvfb or in CI).

use std::path::PathBuf;

pub trait FilePicker: Send + Sync {
    /// Ask for a rule file to open.
    fn open_rules(&self) -> Option<PathBuf>;
    /// Ask where to save a rule file.
    fn save_rules(&self) -> Option<PathBuf>;
}

/// The platform's file dialogs.
pub struct NativePicker;

impl FilePicker for NativePicker {
    fn open_rules(&self) -> Option<PathBuf> {
        rfd::FileDialog::new()
            .set_title("Load answer rules")
            .add_filter("Rule files (JSON or TOML)", &["json", "toml"])
            .pick_file()
    }

    fn save_rules(&self) -> Option<PathBuf> {
        rfd::FileDialog::new()
            .set_title("Save answer rules")
            .add_filter("Rule files (JSON or TOML)", &["json", "toml"])
            .set_file_name("rules.json")
            .save_file()
    }
}
