//! Letters egui's own fonts do not have, from the system's fonts: a message in Arabic, Hebrew,
//! Chinese, Japanese, Korean, Thai or Hindi drew as a row of empty boxes. The fonts found are
//! added after egui's, so they draw only what egui's cannot (egui shapes each run of one font,
//! so Devanagari conjuncts and Arabic joining work within a word; see [`install`] for whole
//! right-to-left phrases).

use std::path::{Path, PathBuf};

/// The scripts looked for, each with a letter a font must have to be taken for it.
pub const SCRIPTS: [(&str, char); 7] = [
    ("Arabic", '\u{0628}'),
    ("Hebrew", '\u{05D0}'),
    ("Chinese", '\u{4E2D}'),
    ("Japanese kana", '\u{3042}'),
    ("Korean", '\u{D55C}'),
    ("Thai", '\u{0E01}'),
    ("Devanagari", '\u{0915}'),
];

/// The letters of [`SCRIPTS`].
fn wanted() -> Vec<char> {
    SCRIPTS.iter().map(|(_, c)| *c).collect()
}

/// The largest font file read. A CJK font is large (Noto Sans CJK is about 20 MB); one is
/// read only when no smaller font before it has the letters.
const MAX_FONT_BYTES: u64 = 32 << 20;

/// Font files that usually hold those letters, per system, in order of preference: for each
/// script the smaller fonts first.
pub const CANDIDATES: &[&str] = &[
    // Debian, Ubuntu; Fedora; Arch: Arabic and Hebrew.
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/noto/NotoSansArabic-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSansHebrew-Regular.ttf",
    "/usr/share/fonts/noto/NotoSansArabic-Regular.ttf",
    "/usr/share/fonts/noto/NotoSansHebrew-Regular.ttf",
    // Thai and Devanagari.
    "/usr/share/fonts/truetype/tlwg/Loma.ttf",
    "/usr/share/fonts/truetype/noto/NotoSansThai-Regular.ttf",
    "/usr/share/fonts/noto/NotoSansThai-Regular.ttf",
    "/usr/share/fonts/google-noto/NotoSansThai-Regular.ttf",
    "/usr/share/fonts/truetype/lohit-devanagari/Lohit-Devanagari.ttf",
    "/usr/share/fonts/truetype/noto/NotoSansDevanagari-Regular.ttf",
    "/usr/share/fonts/noto/NotoSansDevanagari-Regular.ttf",
    "/usr/share/fonts/google-noto/NotoSansDevanagari-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSerif.ttf",
    // Chinese, Japanese and Korean.
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/wenquanyi/wqy-microhei/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/google-droid-sans-fonts/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    // macOS.
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
    "/System/Library/Fonts/Thonburi.ttc",
    "/System/Library/Fonts/Kohinoor.ttc",
    "/System/Library/Fonts/AppleSDGothicNeo.ttc",
    "/System/Library/Fonts/Hiragino Sans GB.ttc",
    "/System/Library/Fonts/Supplemental/Arial Unicode.ttf",
    // Windows.
    "C:\\Windows\\Fonts\\arial.ttf",
    "C:\\Windows\\Fonts\\tahoma.ttf",
    "C:\\Windows\\Fonts\\Nirmala.ttf",
    "C:\\Windows\\Fonts\\mangal.ttf",
    "C:\\Windows\\Fonts\\malgun.ttf",
    "C:\\Windows\\Fonts\\msyh.ttc",
    "C:\\Windows\\Fonts\\simsun.ttc",
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
    let mut missing = wanted();
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
    for (script, _) in SCRIPTS.iter().filter(|(_, c)| missing.contains(c)) {
        tracing::debug!("no font with {script} letters found: they are drawn as boxes");
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

/// The family a stretch of right-to-left letters is laid out in (see [`install`]).
pub const RTL_FAMILY: &str = "hookscope-right-to-left";

/// [`RTL_FAMILY`] as egui names it.
pub fn rtl_family() -> egui::FontFamily {
    egui::FontFamily::Name(RTL_FAMILY.into())
}

/// Whether `ctx` has [`RTL_FAMILY`] (laying text out in a family it lacks panics).
pub fn has_rtl_family(ctx: &egui::Context) -> bool {
    let family = rtl_family();
    ctx.fonts(|f| f.families().contains(&family))
}

/// Add `fonts` to `ctx` after egui's own, for text and monospace alike. Those with Arabic or
/// Hebrew letters also make [`RTL_FAMILY`], ahead of egui's fonts: a right-to-left stretch laid
/// out in it takes its spaces and punctuation from the same font as its letters, so egui
/// shapes the stretch as one run, right to left, its words in their order and Arabic letters
/// joined (egui shapes each run of one font apart, and its own font's spaces cut a sentence
/// into words laid out left to right: "ל ק" read "ק ל").
pub fn install(ctx: &egui::Context, fonts: Vec<Fallback>) {
    use egui::epaint::text::{FontInsert, FontPriority, InsertFontFamily};
    let right_to_left: Vec<Vec<u8>> = fonts
        .iter()
        .filter(|f| !letters_in(&f.bytes, &[SCRIPTS[0].1, SCRIPTS[1].1]).is_empty())
        .map(|f| f.bytes.clone())
        .collect();
    let rtl = |priority| {
        vec![InsertFontFamily {
            family: rtl_family(),
            priority,
        }]
    };
    if !right_to_left.is_empty() {
        for (i, bytes) in right_to_left.into_iter().enumerate().rev() {
            ctx.add_font(FontInsert::new(
                &format!("system-right-to-left-{i}"),
                egui::FontData::from_owned(bytes),
                rtl(FontPriority::Highest),
            ));
        }
        // Then egui's own, for whatever else the stretch holds (an emoji, say).
        let own = egui::FontDefinitions::default();
        let names = own
            .families
            .get(&egui::FontFamily::Proportional)
            .cloned()
            .unwrap_or_default();
        for name in names {
            if let Some(data) = own.font_data.get(&name) {
                ctx.add_font(FontInsert::new(
                    &format!("right-to-left-{name}"),
                    (**data).clone(),
                    rtl(FontPriority::Lowest),
                ));
            }
        }
    }
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
        assert!(letters_in(b"", &wanted()).is_empty());
    }

    /// With the usual fonts on the machine, egui draws each script's letters once they are
    /// installed, where it had none. CI installs a font for every script (DejaVu, Loma,
    /// Lohit Devanagari, WenQuanYi Micro Hei): there every one must be found.
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
        let covered: Vec<(&str, char, bool)> = SCRIPTS
            .iter()
            .map(|(script, c)| {
                let has = found
                    .iter()
                    .any(|f| !letters_in(&f.bytes, &[*c]).is_empty());
                (*script, *c, has)
            })
            .collect();
        if std::env::var_os("CI").is_some() {
            let missing: Vec<_> = covered.iter().filter(|s| !s.2).map(|s| s.0).collect();
            assert!(missing.is_empty(), "no font found for {missing:?}");
        }
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
        for (script, c) in SCRIPTS {
            assert!(!has(&ctx, c), "egui's own fonts have {script}");
        }
        install(&ctx, found);
        frame(&ctx);
        for (script, c, found) in covered {
            assert_eq!(has(&ctx, c), found, "{script}");
        }
        // egui's own letters still come from its own font.
        assert!(has(&ctx, 'a'));
    }
}
