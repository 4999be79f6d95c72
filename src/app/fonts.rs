//! Letters egui's own fonts do not have, from the system's fonts: a message in Arabic or Hebrew
//! drew as a row of empty boxes. The fonts found are added after egui's, so they draw only what
//! egui's cannot.

use std::path::{Path, PathBuf};

/// Letters a fallback font must have to be worth adding: Arabic's beh and Hebrew's alef.
const WANTED: [char; 2] = ['\u{0628}', '\u{05D0}'];

/// The largest font file read: a pan-Unicode font of 20 MB is not loaded for two scripts.
const MAX_FONT_BYTES: u64 = 8 << 20;

/// Font files that usually hold Arabic or Hebrew letters, per system, in order of preference.
pub const CANDIDATES: &[&str] = &[
    // Debian, Ubuntu; Fedora; Arch.
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/noto/NotoSansArabic-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSansHebrew-Regular.ttf",
    "/usr/share/fonts/noto/NotoSansArabic-Regular.ttf",
    "/usr/share/fonts/noto/NotoSansHebrew-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    // macOS.
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
    // Windows.
    "C:\\Windows\\Fonts\\arial.ttf",
    "C:\\Windows\\Fonts\\tahoma.ttf",
];

/// A font file read, and which of the wanted letters it has.
#[derive(Debug)]
pub struct Fallback {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

/// The fonts among `candidates` that add a wanted letter no font before them has: read, parsed
/// as fonts (a file that is not one is skipped, never handed to egui, which would panic on it),
/// and at most one per letter.
pub fn find(candidates: &[impl AsRef<Path>]) -> Vec<Fallback> {
    let mut found = Vec::new();
    let mut missing: Vec<char> = WANTED.to_vec();
    for path in candidates {
        if missing.is_empty() {
            break;
        }
        let path = path.as_ref();
        let Some(bytes) = read_small(path) else {
            continue;
        };
        let has = letters_in(&bytes, &missing);
        if has.is_empty() {
            continue;
        }
        missing.retain(|c| !has.contains(c));
        found.push(Fallback {
            path: path.to_owned(),
            bytes,
        });
    }
    found
}

fn read_small(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FONT_BYTES {
        return None;
    }
    std::fs::read(path).ok()
}

/// Which of `letters` the font in `bytes` has; none when it is not a font.
fn letters_in(bytes: &[u8], letters: &[char]) -> Vec<char> {
    use skrifa::MetadataProvider;
    let Ok(font) = skrifa::FontRef::from_index(bytes, 0) else {
        return Vec::new();
    };
    let map = font.charmap();
    letters
        .iter()
        .copied()
        .filter(|c| map.map(*c).is_some())
        .collect()
}

/// Add `fonts` to `ctx` after egui's own, for text and monospace alike.
pub fn install(ctx: &egui::Context, fonts: Vec<Fallback>) {
    use egui::epaint::text::{FontInsert, FontPriority, InsertFontFamily};
    for (i, f) in fonts.into_iter().enumerate() {
        let families = [egui::FontFamily::Proportional, egui::FontFamily::Monospace]
            .into_iter()
            .map(|family| InsertFontFamily {
                family,
                priority: FontPriority::Lowest,
            })
            .collect();
        tracing::debug!("fallback font {}", f.path.display());
        ctx.add_font(FontInsert::new(
            &format!("system-fallback-{i}"),
            egui::FontData::from_owned(f.bytes),
            families,
        ));
    }
    ctx.request_repaint();
}

/// Look for the fallback fonts on a thread of their own (reading a font file is I/O: the window
/// does not wait for it) and add those found.
pub fn install_in_background(ctx: &egui::Context) {
    let ctx = ctx.clone();
    let spawned = std::thread::Builder::new()
        .name("fonts".into())
        .spawn(move || install(&ctx, find(CANDIDATES)));
    if let Err(e) = spawned {
        tracing::warn!("no fallback fonts: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_that_are_not_fonts_or_lack_the_letters_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let not_a_font = dir.path().join("fake.ttf");
        std::fs::write(&not_a_font, b"not a font at all").unwrap();
        let missing = dir.path().join("missing.ttf");
        let too_large = dir.path().join("large.ttf");
        std::fs::write(&too_large, vec![0u8; (MAX_FONT_BYTES + 1) as usize]).unwrap();
        assert!(find(&[not_a_font, missing, too_large, dir.path().to_owned()]).is_empty());
        assert!(letters_in(b"", &WANTED).is_empty());
    }

    /// With one of the usual fonts on the machine (CI installs DejaVu), egui draws Arabic and
    /// Hebrew letters once it is installed, where it had none.
    #[test]
    fn a_system_font_gives_egui_the_letters() {
        let found = find(CANDIDATES);
        if found.is_empty() {
            assert!(
                CANDIDATES.iter().all(|p| !Path::new(p).exists()),
                "a usual font is there but was not taken"
            );
            eprintln!("skipped: none of the usual fonts is on this machine");
            return;
        }
        // Found once, not once per letter.
        let twice = find(&[CANDIDATES, CANDIDATES].concat());
        assert_eq!(twice.len(), found.len());
        let ctx = egui::Context::default();
        let font = egui::FontId::proportional(14.0);
        let has = |ctx: &egui::Context, c: char| ctx.fonts_mut(|f| f.has_glyph(&font, c));
        // A frame, its texture changes cleared as a renderer would take them.
        let frame = |ctx: &egui::Context| {
            ctx.run_ui(Default::default(), |_| {})
                .textures_delta
                .clear();
        };
        frame(&ctx);
        assert!(!has(&ctx, WANTED[0]) && !has(&ctx, WANTED[1]));
        install(&ctx, found);
        frame(&ctx);
        assert!(has(&ctx, WANTED[0]) && has(&ctx, WANTED[1]));
        // egui's own letters still come from its own font.
        assert!(has(&ctx, 'a'));
    }
}
