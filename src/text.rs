//! Small text helpers: safe printing of untrusted text, hex, sizes and durations.

use std::fmt::Write;
use std::time::Duration;

/// A character that can drive a terminal or reorder what it shows: the controls (C0, DEL, C1),
/// the Unicode line separators, the bidirectional overrides and isolates, and the invisible
/// direction marks (LRM, RLM, ALM), which move the neutral characters around them.
pub fn risky(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{061c}'
        )
}

/// Text taken from a request, made safe for a terminal: control characters (including ESC, CR,
/// LF and the C1 range) are shown escaped, so a hostile payload cannot drive the terminal.
pub fn escape_control(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if risky(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// Text from a payload or a rules file shown on one line of the window: a line break or a tab
/// reads as `\n`, `\r` or `\t`, and the other characters [`escape_control`] escapes as `\u{..}`
/// (egui draws a control character as an empty box, and a break would hide the rest of the
/// line in a table's cell). Text without any is borrowed as it is.
pub fn single_line(s: &str) -> std::borrow::Cow<'_, str> {
    escaped_for_window(s, |c| match c {
        '\n' => Some("\\n"),
        '\r' => Some("\\r"),
        '\t' => Some("\\t"),
        _ => None,
    })
}

/// Text from a payload shown as it is in the window, lines and tabs kept: a character
/// [`risky`] escapes reads as `\u{..}` (egui draws a control character as an empty box, so an
/// ESC could not be told from a NUL, and a direction mark would turn the text around).
pub fn shown_controls(s: &str) -> std::borrow::Cow<'_, str> {
    escaped_for_window(s, |c| match c {
        '\n' => Some("\n"),
        '\t' => Some("\t"),
        _ => None,
    })
}

/// `s` with each character [`risky`] escapes written as `special` gives it, or as `\u{..}`;
/// borrowed as it is when that would change nothing (no risky character, or only ones
/// `special` keeps as they are).
fn escaped_for_window(
    s: &str,
    special: impl Fn(char) -> Option<&'static str>,
) -> std::borrow::Cow<'_, str> {
    let changes = |c: char| risky(c) && special(c) != Some(c.encode_utf8(&mut [0; 4]));
    if !s.chars().any(changes) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match special(c) {
            Some(text) => out.push_str(text),
            None if risky(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            None => out.push(c),
        }
    }
    out.into()
}

/// A JSON string's text as the JSON view shows it: in quotes, with a quote and a backslash
/// escaped, and a line break, a tab or a character [`risky`] escapes as in [`single_line`].
/// Every other letter is kept as it is: Rust's `{:?}`, used before, also escaped combining
/// marks, so Hindi's "हिन्दी" read "हिन\u{94d}दी", and a Thai tone mark or an emoji's
/// variation selector the same.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push_str(&single_line(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out.push('"');
    out
}

/// A name for a sentence or a heading: on one line ([`single_line`]) and at most `max`
/// characters, cut with "…" (a webhook named with a whole page filled the Service panel's
/// status line).
pub fn short_name(name: &str, max: usize) -> String {
    match head_chars(name, max) {
        (whole, 0) => single_line(whole).into_owned(),
        (head, _) => format!("{}…", single_line(head)),
    }
}

/// Serialized JSON made safe for a terminal without changing what it means: the characters
/// [`escape_control`] escapes that JSON leaves raw (DEL, the C1 controls such as U+009B, which a
/// terminal reads as the start of an escape sequence, and the bidirectional overrides) become
/// `\u` escapes. They can only stand inside strings, where the escape reads back the same.
/// (The C0 controls inside strings are escaped by JSON itself; outside them, a newline or a tab
/// is the layout of pretty-printed JSON, and stays.)
pub fn json_for_terminal(json: String) -> String {
    let raw_in_json = |c: char| c >= '\u{7f}' && risky(c);
    if !json.chars().any(raw_in_json) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if raw_in_json(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Bytes from hex; `None` when the text is not hex.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A size or a duration that could not be read: not one at all, or one too large to hold.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("\"{}\" is {}; examples: {examples}", escape_control(input), self.verdict())]
pub struct ParseError {
    input: String,
    what: &'static str,
    examples: &'static str,
    /// A number of the right form, only past what it can be.
    pub too_large: bool,
}

impl ParseError {
    /// What is wrong with it: "not a duration", "too large for a size", or, for one that
    /// reads as it should once its minus is taken away, that it cannot be negative.
    fn verdict(&self) -> String {
        let what = self.what;
        let t = self.input.trim();
        if self.too_large {
            format!("too large for {what}")
        } else if let Some(rest) = t.strip_prefix('-')
            && match what {
                "a duration" => parse_duration(rest).is_ok(),
                "a size" => parse_size(rest).is_ok(),
                _ => false,
            }
        {
            format!("not {what}: it cannot be negative")
        } else {
            format!("not {what}")
        }
    }
}

/// A brand word for the header names (`X-<WORD>-Event`): one token of ASCII letters, digits,
/// `-` or `_`.
pub fn parse_brand(s: &str) -> Result<String, String> {
    let word = s.trim();
    if crate::contract::Brand::is_word(word) {
        Ok(word.to_owned())
    } else {
        Err(format!(
            "\"{}\" cannot be a header word: use one word of ASCII letters (A-Z, a-z), digits, - or _ (it makes X-<WORD>-Event)",
            escape_control(s)
        ))
    }
}

/// The receiver's body limit: a size of at least 1 KiB, so the registration check and any
/// ordinary call fit.
pub fn parse_body_limit(s: &str) -> Result<u64, String> {
    let too_large = || {
        format!(
            "{} is too large a body limit: give at most 512MiB (a body is kept as one value in the database, and SQLite's values stop at 1 GB)",
            s.trim()
        )
    };
    // Digits past what a 64-bit size holds, with a unit or without: a size, too large.
    let n = parse_size(s).map_err(|e| {
        if e.too_large {
            too_large()
        } else {
            e.to_string()
        }
    })?;
    if n < 1024 {
        return Err(format!(
            "{s} is too small a body limit: give at least 1KiB (a webhook call with one message is about half of that)"
        ));
    }
    if n > MAX_BODY_LIMIT {
        return Err(too_large());
    }
    Ok(n)
}

/// The largest body limit: SQLite keeps values of up to 1,000,000,000 bytes, and a call's row
/// holds its headers and findings too.
pub const MAX_BODY_LIMIT: u64 = 512 << 20;

/// A whole number from `min` to `max`, or a sentence saying what it is not and what to give.
fn whole_number(s: &str, min: u64, max: u64, what: &str, give: &str) -> Result<u64, String> {
    let digits = s.trim();
    let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    match digits.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        // A whole number, only too large: said so, not "not a whole number".
        Ok(n) if n > max => Err(format!("\"{s}\" is too large for {what}: give {give}")),
        Err(_) if all_digits => Err(format!(
            "\"{s}\" is too large a number for {what} (at most {max}): give {give}"
        )),
        _ => Err(format!("\"{s}\" is not {what}: give {give}")),
    }
}

/// How many calls to list: 1 or more.
pub fn parse_limit(s: &str) -> Result<u64, String> {
    whole_number(
        s,
        1,
        u64::MAX,
        "a number of calls",
        "a whole number, 1 or more",
    )
}

/// A port to listen on; 0 picks a free one.
pub fn parse_port(s: &str) -> Result<u16, String> {
    whole_number(
        s,
        0,
        65_535,
        "a port",
        "a number from 0 to 65535 (0 picks a free one)",
    )
    .map(|n| n as u16)
}

/// An address to listen on: an IP address (a host name would be resolved, and could name
/// several; `localhost` is taken as the loopback address it always means).
pub fn parse_bind(s: &str) -> Result<std::net::IpAddr, String> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("localhost") {
        return Ok(std::net::Ipv4Addr::LOCALHOST.into());
    }
    s.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .map_err(|_| {
            format!(
                "\"{}\" is not an IP address: use 127.0.0.1 (this machine only), 0.0.0.0 (every address, so other machines can reach it) or one of this machine's addresses",
                escape_control(s)
            )
        })
}

/// An HTTP status code the service could get: 100 to 599.
pub fn parse_status_code(s: &str) -> Result<u16, String> {
    whole_number(s, 100, 599, "an HTTP status code", "one from 100 to 599").map(|n| n as u16)
}

/// A status code to answer with; which ones HTTP can send is checked with the rest of the
/// answer (200 to 599).
pub fn parse_answer_code(s: &str) -> Result<u16, String> {
    let code = whole_number(s, 0, 999, "a status code", "one from 200 to 599")? as u16;
    if (200..=599).contains(&code) {
        Ok(code)
    } else {
        // The same sentence the answer's own check gives, at the command line's exit code 2.
        Err(crate::responder::AnswerError::Status(code).to_string())
    }
}

/// A trigger scope as the service takes it: SENT or RECEIVED, in capitals (it is
/// case-sensitive).
pub fn parse_scope(s: &str) -> Result<String, String> {
    match crate::contract::TriggerScope::parse(s) {
        Some(scope) => Ok(scope.as_str().to_owned()),
        None => Err(format!(
            "\"{s}\" is not a trigger scope: give SENT or RECEIVED (in capitals: the service's are case-sensitive)"
        )),
    }
}

/// A webhook id as the service gives it: a whole number.
pub fn parse_webhook_id(s: &str) -> Result<u64, String> {
    whole_number(
        s,
        0,
        u64::MAX,
        "a webhook id",
        "the number in the first column of `hookscope webhooks list`",
    )
}

/// A number of seconds, 0 or more.
pub fn parse_seconds(s: &str) -> Result<u64, String> {
    whole_number(
        s,
        0,
        u64::MAX,
        "a number of seconds",
        "a whole number, 0 or more",
    )
}

/// A Retry-After value as the header carries it: seconds, or an HTTP date
/// (`Sun, 22 Nov 2026 14:00:00 GMT`). Kept as given; the wait is read at the time of use.
pub fn parse_retry_after_value(s: &str) -> Result<String, String> {
    match crate::contract::RetryAfter::parse(s) {
        Some(_) => Ok(s.trim().to_owned()),
        None => Err(format!(
            "\"{s}\" is not a Retry-After value: {}",
            crate::contract::RetryAfter::refusal(s)
        )),
    }
}

/// An HTTP date to show as an example: tomorrow at 14:00 GMT (a fixed one was soon in the past,
/// and read as a date that would be refused).
pub fn example_http_date() -> String {
    let tomorrow = chrono::Utc::now().date_naive() + chrono::Days::new(1);
    tomorrow
        .and_hms_opt(14, 0, 0)
        .map(|t| crate::contract::imf_fixdate(t.and_utc()))
        .unwrap_or_default()
}

/// `text` with its first letter in capitals: an error the terminal prints after "error: " is a
/// sentence of its own in the window ("Cannot connect to ...").
/// A sentence that starts with an address or a path (`http://…/v1/webhooks answered 404`,
/// `/tmp/x is a file`) is left as it is: "Http://" is no address.
pub fn first_upper(text: &str) -> String {
    let first_word = text.split_whitespace().next().unwrap_or("");
    if first_word.contains("://") || first_word.starts_with('/') {
        return text.to_owned();
    }
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// The emulator's clock speed: from 0.01 to 1,000,000 (1 is real time; the clock runs no
/// slower than a hundredth of real time).
/// A clock speed for `emulate --speed`: from 1 (real time) to 1,000,000. A slower clock is not
/// taken: its calls wait longer than the service's 30 s for an answer, while Hookscope reads a
/// call's time-out on its emulator's clock from real time up (0.5x had its 35 s answers called
/// too late by `listen` and succeeded by the emulator).
pub fn parse_speed(s: &str) -> Result<f64, String> {
    const TAKES: &str =
        "give a number from 1 (real time) to 1000000 (60 runs a minute of schedule a second)";
    let typed = escape_control(s.trim());
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (1.0..=crate::emulator::MAX_SPEED).contains(&v) => Ok(v),
        Ok(v) if v.is_finite() && v > 0.0 && v < 1.0 => Err(format!(
            "\"{typed}\" is slower than real time, which the emulator does not run: {TAKES}"
        )),
        _ => Err(format!("\"{typed}\" is not a clock speed: {TAKES}")),
    }
}

/// An invocation id, as `hookscope log` prints it: a whole number from 1.
pub fn parse_id(s: &str) -> Result<i64, String> {
    let id = whole_number(
        s,
        1,
        i64::MAX as u64,
        "an invocation id",
        "the number in the first column of `hookscope log` (ids are whole numbers from 1)",
    )?;
    // At most i64::MAX, as asked of `whole_number`.
    Ok(i64::try_from(id).unwrap_or(i64::MAX))
}

/// Credits for the emulator's account: a number, 0 or more.
pub fn parse_credits(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "\"{s}\" is not a number of credits: give 0 or more"
        )),
    }
}

/// A size such as `32MiB`, `512KiB`, `10MB`, `1048576`.
pub fn parse_size(s: &str) -> Result<u64, ParseError> {
    let err = || ParseError {
        input: s.to_owned(),
        what: "a size",
        examples: "32MiB, 512KiB, 10MB, 1048576",
        too_large: false,
    };
    let too_large = || ParseError {
        too_large: true,
        ..err()
    };
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| if num.is_empty() { err() } else { too_large() })?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        "t" | "tb" => 1_000_000_000_000,
        "tib" => 1 << 40,
        _ => return Err(err()),
    };
    n.checked_mul(mult).ok_or_else(too_large)
}

/// A duration such as `500ms`, `2s`, `1m`, `1h`, or plain seconds `30`.
pub fn parse_duration(s: &str) -> Result<Duration, ParseError> {
    parse_duration_rounded(s).map(|(d, _)| d)
}

/// [`parse_duration`], and whether the value was rounded to the millisecond (`0.4ms`,
/// `1.0005s`): a delay given finer than that is refused by `listen`, not held for 0 ms.
/// Parts with their units add up: `1m30s`, `1h 30m`, `2s500ms` (`1m30s` had been "not a
/// duration"); each part names its unit, and a part alone may leave it out (seconds).
pub fn parse_duration_rounded(s: &str) -> Result<(Duration, bool), ParseError> {
    let parts = duration_parts(s.trim());
    if parts.len() < 2 {
        return parse_one_duration(s);
    }
    let whole = |e: ParseError| ParseError {
        input: s.to_owned(),
        ..e
    };
    let mut total = Duration::ZERO;
    let mut rounded = false;
    for part in parts {
        if part.ends_with(|c: char| c.is_ascii_digit() || c == '.') {
            // `1m30`: which unit the 30 is in is not said.
            return Err(whole(duration_error(s, false)));
        }
        let (d, r) = parse_one_duration(part).map_err(whole)?;
        total = total
            .checked_add(d)
            .filter(|t| t.as_millis() <= u128::from(u64::MAX / 2))
            .ok_or_else(|| duration_error(s, true))?;
        rounded |= r;
    }
    Ok((total, rounded))
}

/// A duration's parts, each a number and its unit: `1m30s` is `1m` and `30s`; a number
/// that follows a unit starts a new part.
fn duration_parts(t: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut in_unit) = (0, false);
    for (i, c) in t.char_indices() {
        if (c.is_ascii_digit() || c == '.') && in_unit {
            parts.push(t[start..i].trim());
            (start, in_unit) = (i, false);
        } else if c.is_alphabetic() {
            in_unit = true;
        }
    }
    parts.push(t[start..].trim());
    parts
}

/// The error for `s`, not a duration (or one too large).
fn duration_error(s: &str, too_large: bool) -> ParseError {
    ParseError {
        input: s.to_owned(),
        what: "a duration",
        examples: "500ms, 1.5s, 35s, 1m, 1m30s, 30",
        too_large,
    }
}

/// One number and its unit: `1.5s`, `500ms`, `30`.
fn parse_one_duration(s: &str) -> Result<(Duration, bool), ParseError> {
    let err = || duration_error(s, false);
    let too_large = || ParseError {
        too_large: true,
        ..err()
    };
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    // Milliseconds in one of the unit, over `per` (a microsecond is a thousandth of one: read,
    // so that `100us` is named as finer than a delay can be, not as no duration at all).
    let (ms, per): (u64, u128) = match unit.trim() {
        "us" | "µs" | "μs" => (1, 1_000),
        "ms" => (1, 1),
        "" | "s" | "sec" => (1_000, 1),
        "m" | "min" => (60_000, 1),
        "h" => (3_600_000, 1),
        _ => return Err(err()),
    };
    if !num.contains('.') && per == 1 {
        let n: u64 = num
            .parse()
            .map_err(|_| if num.is_empty() { err() } else { too_large() })?;
        return n
            .checked_mul(ms)
            .map(|ms| (Duration::from_millis(ms), false))
            .ok_or_else(too_large);
    }
    // A fraction, as Hookscope writes gaps ("1.5 s"), to the millisecond: read as the decimal
    // it is, not a float, so that whether it is finer than a millisecond, and the nearest
    // millisecond, are exact ("1.0005s" and "4.0005s" alike round up; a float had rounded one
    // down and the other up, and taken 0.00000000000000000001 for 0 without a word).
    let (whole, fraction) = num.split_once('.').unwrap_or((num, ""));
    if fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) {
        return Err(err());
    }
    // Eighteen places are more than a millisecond of an hour needs; a digit past them only
    // says the value is finer than that.
    const PLACES: usize = 18;
    let kept = &fraction[..fraction.len().min(PLACES)];
    let beyond = fraction[kept.len()..].bytes().any(|b| b != b'0');
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_large())?
    };
    let scale = 10u128.pow(kept.len() as u32) * per;
    let digits: u128 = if kept.is_empty() {
        0
    } else {
        kept.parse().map_err(|_| err())?
    };
    let numerator = whole
        .checked_mul(10u128.pow(kept.len() as u32))
        .and_then(|w| w.checked_add(digits))
        .and_then(|n| n.checked_mul(u128::from(ms)))
        .ok_or_else(too_large)?;
    let (millis, rest) = (numerator / scale, numerator % scale);
    let nearest = millis + u128::from(rest * 2 >= scale);
    let total = u64::try_from(nearest)
        .ok()
        .filter(|t| *t <= u64::MAX / 2)
        .ok_or_else(too_large)?;
    Ok((Duration::from_millis(total), rest != 0 || beyond))
}

/// A human size: `1.5 KiB`, `32 MiB`.
pub fn human_size(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

/// How deep [`pretty_json`] indents: past it, the text is left as it came (indented, 100,000
/// nested arrays would take 100,000 lines of up to 200,000 spaces each).
pub const PRETTY_DEPTH: usize = 64;

/// `text` re-indented two spaces a level, if it is JSON nested at most [`PRETTY_DEPTH`] deep;
/// every token kept exactly as it came (key order, number spelling, escapes), which a round
/// trip through a parsed value would not keep (big numbers turned to floats, keys sorted).
pub fn pretty_json(text: &str) -> Option<String> {
    serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                // An empty object or array stays on one line.
                while chars.peek().is_some_and(|n| n.is_whitespace()) {
                    chars.next();
                }
                if matches!(chars.peek(), Some('}' | ']')) {
                    if let Some(close) = chars.next() {
                        out.push(close);
                    }
                } else {
                    depth += 1;
                    if depth > PRETTY_DEPTH {
                        return None;
                    }
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    Some(out)
}

/// `n` and the noun, singular for one: `1 call`, `2 calls`.
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `n` as an English ordinal: `1st`, `2nd`, `3rd`, `11th`, `22nd`.
pub fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// `text` up to `max` characters, and how many characters were left out (0 when whole): what a
/// window shows of a value that may be megabytes long.
pub fn head_chars(text: &str, max: usize) -> (&str, usize) {
    match text.char_indices().nth(max) {
        None => (text, 0),
        Some((cut, _)) => (&text[..cut], text[cut..].chars().count()),
    }
}

/// `text` cut to `max` characters, with how many more there were: `abc… (99880 more
/// characters)`; whole when it fits. For a value taken from a request (a delivery id, a path)
/// on a line of its own: one of 100,000 characters had made a 100 KB line.
pub fn cut_chars(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match head_chars(text, max) {
        (whole, 0) => whole.into(),
        (head, rest) => format!("{head}… ({rest} more characters)").into(),
    }
}

/// `text` with the spaces of each date in it as Hookscope writes one (`26 Nov 18:52`,
/// `26 Nov 18:52:07`) made non-breaking, for the window: a wrapped line then breaks before or
/// after the date, not inside it.
pub fn glue_dates(text: &str) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut out = text.to_owned();
    for m in MONTHS {
        let spaced = format!(" {m} ");
        let mut from = 0;
        while let Some(at) = out[from..].find(&spaced).map(|i| i + from) {
            let day = out[..at].ends_with(|c: char| c.is_ascii_digit());
            let time = out[at + spaced.len()..].starts_with(|c: char| c.is_ascii_digit());
            from = if day && time {
                let glued = format!("\u{a0}{m}\u{a0}");
                out.replace_range(at..at + spaced.len(), &glued);
                at + glued.len()
            } else {
                at + 1
            };
        }
    }
    out
}

/// `text` with the spaces that must not break a line made non-breaking: between a number and
/// its unit (`120 s`, `1.5 min`), and after `Retry-After`.
pub fn glue_units(text: &str) -> String {
    const UNITS: [&str; 5] = ["ms", "s", "min", "h", "d"];
    let mut out = String::with_capacity(text.len());
    let mut before = None;
    for (i, c) in text.char_indices() {
        let rest = &text[i + c.len_utf8()..];
        let word = rest
            .split(|w: char| !w.is_alphanumeric())
            .next()
            .unwrap_or_default();
        let unit = before.is_some_and(|b: char| b.is_ascii_digit()) && UNITS.contains(&word);
        let glued = c == ' ' && (unit || text[..i].ends_with("Retry-After"));
        out.push(if glued { '\u{a0}' } else { c });
        before = Some(c);
    }
    out
}

/// What reading a text of at most so many bytes ([`read_text_capped`]) found wrong.
#[derive(Debug)]
pub enum CappedText {
    Io(std::io::Error),
    /// More bytes than the cap: refused once past it, not read whole first.
    TooLarge,
    /// Not UTF-8: byte `at` (counting from 1) is where it stops being text.
    NotText {
        at: usize,
    },
}

/// The UTF-8 text `reader` holds, of at most `max` bytes: a larger one (`size`, where its
/// file says) is refused at once, and an endless one (`/dev/zero`) once past the cap. The
/// buffer is taken at the size given, so a file is not held twice while it is read. For
/// `--body-file` and rule files alike.
pub fn read_text_capped(
    reader: impl std::io::Read,
    size: u64,
    max: u64,
) -> Result<String, CappedText> {
    use std::io::Read;
    if size > max {
        return Err(CappedText::TooLarge);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    reader
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(CappedText::Io)?;
    if bytes.len() as u64 > max {
        return Err(CappedText::TooLarge);
    }
    String::from_utf8(bytes).map_err(|e| CappedText::NotText {
        at: e.utf8_error().valid_up_to() + 1,
    })
}

/// `text` escaped as [`escape_control`] does and cut to at most `max` characters as printed,
/// without spaces, for a `key=value` on a line a script splits at spaces: `abc…(+99880)`. The
/// cut falls between two characters of `text`, never inside an escape (a lone `\` had been
/// left), and the count after it is of `text`'s characters left out, not of their escapes.
/// A space (any whitespace) is escaped too, `\u{20}`: a value with spaces had split into
/// fields of its own, and `X-Service-Delivery: d1  attempt=5` had printed a second `attempt=`.
/// An empty value is written `""`, so that it still takes its field.
pub fn escape_cut_compact(text: &str, max: usize) -> String {
    if text.is_empty() {
        return "\"\"".to_owned();
    }
    let mut out = String::new();
    let mut printed = 0;
    let mut one = String::new();
    for (taken, c) in text.chars().enumerate() {
        one.clear();
        if risky(c) || c.is_whitespace() {
            let _ = write!(one, "\\u{{{:x}}}", c as u32);
        } else {
            one.push(c);
        }
        let width = one.chars().count();
        if printed + width > max {
            let rest = text.chars().count() - taken;
            return format!("{out}…(+{rest})");
        }
        printed += width;
        out.push_str(&one);
    }
    out
}

/// `text` with each `(from, to)` replaced in turn.
pub fn replace_each(text: &str, pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .fold(text.to_owned(), |out, (from, to)| out.replace(from, to))
}

/// Whether `text` reads as an e-mail address: something before and after one `@`, no spaces.
/// (Whether it reaches anyone is for the mail server to say.)
pub fn is_email(text: &str) -> bool {
    let mut parts = text.split('@');
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(user), Some(host), None) if !user.is_empty() && !host.is_empty()
    ) && !text.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// An I/O error in plain words, without Rust's `(os error 2)`: "there is no such file or
/// directory", "it is a directory, not a file", "it is not UTF-8 text".
pub fn io_words(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => "there is no such file or directory".into(),
        K::PermissionDenied => "permission denied (see who owns it, and its mode)".into(),
        K::IsADirectory => "it is a directory, not a file".into(),
        K::NotADirectory => "a part of the path is a file, not a directory".into(),
        K::StorageFull => "the disk is full".into(),
        K::ReadOnlyFilesystem => "the file system is read-only".into(),
        K::InvalidData if e.to_string().contains("valid UTF-8") => "it is not UTF-8 text".into(),
        _ => {
            let text = e.to_string();
            // `Some words (os error 5)`: the number means nothing to a reader.
            let text = match text.rfind(" (os error ") {
                Some(at) if text.ends_with(')') => text[..at].to_owned(),
                _ => text,
            };
            let mut chars = text.chars();
            chars
                .next()
                .map_or_else(String::new, |c| c.to_lowercase().chain(chars).collect())
        }
    }
}

/// A duration to the second, every unit given: `1 d 23 h 52 min 30 s` (where the rounding of
/// [`human_duration`] would make the last retries of the window all read "2 d").
pub fn exact_duration(d: Duration) -> String {
    let mut left = d.as_secs() + u64::from(d.subsec_millis() >= 500);
    if left == 0 {
        return human_duration(d);
    }
    let mut parts = Vec::new();
    for (unit, name) in [(86_400, "d"), (3_600, "h"), (60, "min"), (1, "s")] {
        let v = left / unit;
        left %= unit;
        if v > 0 {
            parts.push(format!("{v} {name}"));
        }
    }
    parts.join(" ")
}

/// A wait someone asked for (a Retry-After), to the second, in the same words wherever it is
/// shown; past a year (a mistyped value) in seconds, with that said, not in 10^14 days.
pub fn wait_words(d: Duration) -> String {
    if d.as_secs() == u64::MAX {
        // Where a number too large for 64 bits ends up (read as forever): not that number,
        // which nobody typed.
        "more seconds than can be counted, over a year".to_owned()
    } else if d > Duration::from_secs(365 * 86_400) {
        format!("{} s, over a year", d.as_secs())
    } else {
        exact_duration(d)
    }
}

/// How long `d` of a clock running `speed` times faster than real time takes in real time, as
/// [`human_duration`] says it ("under 1 ms" for what a very fast clock makes of a short wait).
pub fn human_duration_at(d: Duration, speed: f64) -> String {
    let real = if speed.is_finite() && speed > 0.0 {
        d.div_f64(speed)
    } else {
        d
    };
    if !d.is_zero() && real.is_zero() {
        "under 1 ms".to_owned()
    } else {
        human_duration(real)
    }
}

/// The time left before something due, as a countdown that ticks: whole seconds rounded up, so it
/// reads 3 s, 2 s, 1 s and never "0 s" before it goes, and the same units as [`human_duration`]
/// above a minute. Never tenths or milliseconds, which jump between "4.8 s" and "647 ms" as it
/// is redrawn.
pub fn countdown(left: Duration) -> String {
    let whole = (left.as_secs() + u64::from(left.subsec_nanos() > 0)).max(1);
    human_duration(Duration::from_secs(whole))
}

/// The time since something, as a count that ticks with [`countdown`]: whole seconds, rounded
/// down ("under 1 s" in the first), the same units as [`human_duration`] above a minute.
pub fn elapsed(since: Duration) -> String {
    if since < Duration::from_secs(1) {
        "under 1 s".to_owned()
    } else {
        human_duration(Duration::from_secs(since.as_secs()))
    }
}

/// A human duration: `1.5 s`, `1 min 30 s`, `4 min 12 s`, `1 h 31 min`, `2 d`: under 10 s to
/// the tenth, otherwise its two largest units, rounded to the smaller of them (so 47 h 59 min
/// 59 s is `2 d`, not `1 d 23 h`); `under 1 ms` for a few microseconds, not `0 ms`.
pub fn human_duration(d: Duration) -> String {
    if d.is_zero() {
        return "0 s".to_owned();
    }
    if d < Duration::from_millis(1) {
        return "under 1 ms".to_owned();
    }
    if d.as_secs() == 0 {
        return format!("{} ms", d.as_millis());
    }
    if d < Duration::from_secs(10) {
        let tenths = (d.as_millis() + 50) / 100;
        return if tenths.is_multiple_of(10) {
            format!("{} s", tenths / 10)
        } else {
            format!("{}.{} s", tenths / 10, tenths % 10)
        };
    }
    const UNITS: [(u64, &str); 4] = [(86_400, "d"), (3_600, "h"), (60, "min"), (1, "s")];
    let secs = d.saturating_add(Duration::from_millis(500)).as_secs();
    let largest = UNITS.iter().position(|(u, _)| secs >= *u).unwrap_or(3);
    let finest = UNITS[(largest + 1).min(3)].0;
    let rounded = secs.saturating_add(finest / 2) / finest * finest;
    let mut left = rounded;
    let parts: Vec<String> = UNITS
        .iter()
        .map(|(u, name)| {
            let v = left / u;
            left %= u;
            (v, name)
        })
        .filter(|(v, _)| *v > 0)
        .take(2)
        .map(|(v, u)| format!("{v} {u}"))
        .collect();
    parts.join(" ")
}

/// A slip in a JSON text's grammar, from serde_json's error: where, and in plain words.
#[derive(Debug, PartialEq)]
pub struct JsonSlip {
    pub line: usize,
    pub column: usize,
    /// What is wrong, in plain words; None for what this has no words for.
    pub reason: Option<String>,
    /// serde_json's own words, without its place.
    pub said: String,
}

/// `e`, an error of reading `text` as JSON, in plain words: `it` names the text where it ends
/// ("the file"), `whole` where more comes after its end ("the rule file"). A line break typed
/// inside a text is placed where it is, at the end of its line (serde_json stops at the start of
/// the next).
pub fn json_slip(e: &serde_json::Error, text: &str, it: &str, whole: &str) -> JsonSlip {
    let said = e.to_string();
    let said = said.split(" at line").next().unwrap_or("").to_owned();
    let (mut line, mut column) = (e.line(), e.column());
    if said == "control character (\\u0000-\\u001F) found while parsing a string" {
        let (reason, at) = raw_control(text, line, column);
        column = at;
        if column == 0 && line > 1 {
            line -= 1;
            column = text.split('\n').nth(line - 1).map_or(0, str::len) + 1;
        }
        return JsonSlip {
            line,
            column,
            reason: Some(reason),
            said,
        };
    }
    let reason = match said.as_str() {
        "trailing characters" => Some(format!(
            "there is more after the end of {whole} (an extra }} or ], or a second value?)"
        )),
        "trailing comma" => Some("a comma before a closing } or ] (JSON allows none there)".into()),
        "EOF while parsing an object" => Some(format!("{it} ends inside an object: a }} is missing")),
        "EOF while parsing a list" => Some(format!("{it} ends inside a list: a ] is missing")),
        "EOF while parsing a string" => Some(format!(
            "{it} ends inside a text: its closing \" is missing"
        )),
        "EOF while parsing a value" => Some(format!("{it} ends where a value was expected")),
        "expected value" => Some(
            "a value was expected here: a number, \"text\" in double quotes, true, false, null, {...} or [...]"
                .into(),
        ),
        "expected ident" => {
            Some("a value was expected here: true, false or null (in lower case)".into())
        }
        "key must be a string" => {
            Some("a name in an object must be in double quotes: {\"name\": ...}".into())
        }
        "expected `:`" => Some("a : was expected after the name".into()),
        "expected `,` or `}`" => Some(
            "a , (before the next field) or a } (to close the object) was expected here".into(),
        ),
        "expected `,` or `]`" => {
            Some("a , (before the next item) or a ] (to close the list) was expected here".into())
        }
        "invalid escape" => Some(
            "a \\ in a text starts an escape such as \\n or \\\\: write \\\\ for a backslash".into(),
        ),
        "invalid number" => Some("this is not a number JSON can read".into()),
        "invalid unicode code point" => {
            Some("a \\u escape names no character (four hex digits are needed)".into())
        }
        _ => None,
    };
    // serde_json counts columns from 1, but says 0 at the very start of a line (where a text
    // cut short ends, after its last newline).
    JsonSlip {
        line,
        column: column.max(1),
        reason,
        said,
    }
}

/// What JSON does not allow in a text as it is, named, and its column: serde_json stops on it or
/// just after it (as it reads the text for a value or skips it), and after a line break at column
/// 0 of the next line.
fn raw_control(text: &str, line: usize, column: usize) -> (String, usize) {
    let on_line = text.split('\n').nth(line.saturating_sub(1)).unwrap_or("");
    // The line's bytes and the line break that ends it.
    let byte_at = |i: usize| match on_line.as_bytes().get(i) {
        Some(b) => Some(*b),
        None => (i == on_line.len()).then_some(b'\n'),
    };
    let found = match column.checked_sub(1) {
        None => Some((b'\n', 0)),
        Some(at) => [at, column]
            .into_iter()
            .find_map(|i| byte_at(i).filter(|b| *b < 0x20).map(|b| (b, i + 1))),
    };
    let (what, escape) = match found.map(|(b, _)| b) {
        Some(b'\n') => ("a line break".to_owned(), "\\n".to_owned()),
        Some(b'\r') => ("a carriage return".to_owned(), "\\r".to_owned()),
        Some(b'\t') => ("a tab".to_owned(), "\\t".to_owned()),
        Some(b) => (
            format!("the control character U+{b:04X}"),
            format!("\\u{b:04x}"),
        ),
        None => (
            "a control character".to_owned(),
            "such as \\n, \\t or \\u001b".to_owned(),
        ),
    };
    let column = found.map_or(column, |(_, c)| c);
    (
        format!("a text holds {what} as it is: JSON takes it only as an escape, {escape}"),
        column,
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_window_shows_control_characters_escaped_and_keeps_lines_and_tabs() {
        assert_eq!(shown_controls("a\tb\nc"), "a\tb\nc");
        assert!(matches!(
            shown_controls("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            shown_controls("X-Bad: \u{1b}[31mred\u{7} \u{202e}txt"),
            "X-Bad: \\u{1b}[31mred\\u{7} \\u{202e}txt"
        );
        assert_eq!(shown_controls("a\rb\0"), "a\\u{d}b\\u{0}");
    }

    #[test]
    fn a_quoted_string_keeps_every_letter_and_escapes_what_would_mislead() {
        use super::quoted;
        // Combining marks, which `{:?}` escaped: a virama, Thai vowel and tone marks, Hebrew
        // points, an emoji's variation selector and a family joined by ZWJ.
        for text in ["हिन्दी", "ที่นี่", "שָׁלוֹם", "❤️", "👨‍👩‍👧", "中文 한국어"]
        {
            assert_eq!(quoted(text), format!("\"{text}\""));
        }
        assert_eq!(quoted(r#"say "hi" \n"#), r#""say \"hi\" \\n""#);
        assert_eq!(
            quoted("a\nb\tc\u{1b}[2J\u{202e}d"),
            r#""a\nb\tc\u{1b}[2J\u{202e}d""#
        );
        assert_eq!(quoted(""), r#""""#);
    }

    #[test]
    fn the_example_http_date_is_tomorrow_and_reads_as_one() {
        let example = super::example_http_date();
        let at = crate::contract::RetryAfter::parse(&example).expect("an HTTP date");
        let tomorrow = chrono::Utc::now().date_naive() + chrono::Days::new(1);
        assert!(
            example.contains(&tomorrow.format("%d %b %Y").to_string()),
            "{example}"
        );
        assert!(
            matches!(at, crate::contract::RetryAfter::Until(_)),
            "{example}"
        );
    }

    #[test]
    fn a_long_name_is_cut_for_a_sentence() {
        assert_eq!(super::short_name("orders", 60), "orders");
        assert_eq!(
            super::short_name(&"é".repeat(61), 60),
            format!("{}…", "é".repeat(60))
        );
        assert_eq!(super::short_name("a\nb", 60), "a\\nb");
    }

    #[test]
    fn text_shown_on_one_line_has_its_breaks_and_controls_written_out() {
        assert!(matches!(
            super::single_line("plain, ünïcode"),
            std::borrow::Cow::Borrowed("plain, ünïcode")
        ));
        assert_eq!(
            super::single_line("Hi\r\nthere\tyou\u{1}\u{1b}[31m\u{202e}x"),
            "Hi\\r\\nthere\\tyou\\u{1}\\u{1b}[31m\\u{202e}x"
        );
    }

    #[test]
    fn io_errors_are_said_in_plain_words() {
        use std::io::Error;
        assert_eq!(
            io_words(&Error::from_raw_os_error(2)),
            "there is no such file or directory"
        );
        assert_eq!(
            io_words(&Error::from_raw_os_error(21)),
            "it is a directory, not a file"
        );
        let not_utf8 = std::fs::read_to_string("/proc/self/exe").unwrap_err();
        assert_eq!(io_words(&not_utf8), "it is not UTF-8 text");
        // Others keep their words, without the number.
        let other = io_words(&Error::from_raw_os_error(5));
        assert!(!other.contains("os error"), "{other}");
        assert_eq!(io_words(&Error::other("Odd")), "odd");
    }

    #[test]
    fn ordinals() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 1000]
            .into_iter()
            .map(ordinal)
            .collect();
        assert_eq!(
            got,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd",
                "101st", "111th", "1000th"
            ]
        );
    }

    #[test]
    fn the_head_of_a_text_counts_what_it_leaves_out() {
        assert_eq!(super::head_chars("short", 10), ("short", 0));
        assert_eq!(super::head_chars("ééé", 3), ("ééé", 0));
        assert_eq!(super::head_chars("éééé", 2), ("éé", 2));
        assert_eq!(super::replace_each("a-b", &[("a", "b"), ("b", "c")]), "c-c");
    }

    #[test]
    fn an_exact_duration_keeps_every_unit() {
        use std::time::Duration;
        let d = |s| super::exact_duration(Duration::from_secs(s));
        assert_eq!(d(47 * 3600 + 52 * 60 + 30), "1 d 23 h 52 min 30 s");
        assert_eq!(d(47 * 3600 + 37 * 60), "1 d 23 h 37 min");
        assert_eq!(d(90), "1 min 30 s");
        assert_eq!(d(0), "0 s");
        assert_eq!(super::exact_duration(Duration::from_millis(1500)), "2 s");
    }

    #[test]
    fn an_email_address_has_one_at_with_something_either_side() {
        for ok in ["ops@example.com", "a@b"] {
            assert!(super::is_email(ok), "{ok}");
        }
        for bad in [
            "notanemail",
            "@example.com",
            "ops@",
            "a@b@c",
            "o ps@example.com",
            "a\u{1b}[2J@b.c",
            "",
        ] {
            assert!(!super::is_email(bad), "{bad}");
        }
    }

    #[test]
    fn json_for_a_terminal_escapes_what_json_leaves_raw_and_means_the_same() {
        let v =
            serde_json::json!({"event": "st\u{9b}31mat\u{1b}[2J\u{7f}\u{202e}x", "n": ["a\nb"]});
        for json in [v.to_string(), serde_json::to_string_pretty(&v).unwrap()] {
            let safe = json_for_terminal(json.clone());
            assert!(!safe.chars().any(|c| c >= '\u{7f}' && risky(c)), "{safe}");
            assert!(safe.contains("st\\u009b31mat"), "{safe}");
            let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
            assert_eq!(back, v);
            // The layout of pretty JSON stays.
            assert_eq!(safe.lines().count(), json.lines().count());
        }
        let plain = r#"{"a":"b"}"#.to_owned();
        assert_eq!(json_for_terminal(plain.clone()), plain);
    }

    use super::*;

    #[test]
    fn a_retry_after_value_is_seconds_or_an_http_date() {
        use crate::contract::RetryAfter;
        assert_eq!(parse_retry_after_value(" 120 ").as_deref(), Ok("120"));
        let date = "Sun, 22 Nov 2026 14:00:00 GMT";
        assert_eq!(parse_retry_after_value(date).as_deref(), Ok(date));
        for bad in ["", "1.5", "tomorrow", "2026-11-22T14:00:00Z"] {
            let err = parse_retry_after_value(bad).unwrap_err();
            assert!(
                err.contains("whole seconds (120) or an HTTP date"),
                "{bad}: {err}"
            );
        }
        // A sign: what to give is said once, in the reason's own words.
        assert_eq!(
            parse_retry_after_value("-5").unwrap_err(),
            "\"-5\" is not a Retry-After value: a wait cannot be negative: give 0 or more seconds"
        );
        assert_eq!(
            parse_retry_after_value("+120").unwrap_err(),
            "\"+120\" is not a Retry-After value: the seconds take no sign: give the digits alone"
        );
        // The wait of a date rounds up to whole seconds: the service never comes back early.
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-22T13:59:58.250Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let seconds = |v: &str| crate::cli::retry_after_seconds(RetryAfter::parse(v).unwrap(), now);
        assert_eq!(seconds(date), 2);
        assert_eq!(seconds("7"), 7);
        assert_eq!(seconds("Sat, 21 Nov 2026 14:00:00 GMT"), 0);
        assert_eq!(seconds("99999999999999999999999"), u64::MAX);
    }

    #[test]
    fn flag_values_are_refused_with_a_reason() {
        assert_eq!(parse_brand(" Acme "), Ok("Acme".to_owned()));
        assert!(parse_brand("a b").is_err_and(|e| e.contains("one word")));
        assert!(parse_brand("").is_err());
        // Ü is a letter, but not one a header name takes: the refusal says which letters do.
        assert!(parse_brand("Ünï").is_err_and(|e| e.contains("ASCII letters (A-Z, a-z)")));
        assert_eq!(parse_body_limit("2KiB"), Ok(2048));
        assert!(parse_body_limit("0").is_err_and(|e| e.contains("at least 1KiB")));
        assert_eq!(parse_body_limit("512MiB"), Ok(512 << 20));
        // A body over SQLite's largest value could not be stored: refused up front.
        for big in [
            "513MiB",
            "2GiB",
            "1TiB",
            "99999999999999999999",
            "99999999999TiB",
        ] {
            assert!(
                parse_body_limit(big).is_err_and(|e| e.contains("too large a body limit")),
                "{big}"
            );
        }
        assert!(parse_body_limit("-1").is_err_and(|e| e.contains("is not a size")));
        // A terminal escape in a refused brand is shown escaped, not sent to the terminal.
        assert!(
            parse_brand("x\u{1b}[31m").is_err_and(|e| e.starts_with("\"x\\u{1b}[31m\" cannot"))
        );
        assert_eq!(parse_speed("60"), Ok(60.0));
        assert_eq!(parse_speed("1.5"), Ok(1.5));
        for bad in ["0", "-1", "NaN", "inf", "1e9", "fast", "0.5", "0.01"] {
            assert!(parse_speed(bad).is_err(), "{bad}");
        }
        assert!(parse_speed("0.5").is_err_and(|e| e.contains("slower than real time")));
        assert_eq!(parse_credits("0"), Ok(0.0));
        assert!(parse_credits("-5").is_err());
        assert_eq!(parse_id(" 42 "), Ok(42));
        // Ids start at 1: 0 and negatives are refused as "abc" is, not looked up.
        for bad in ["0", "-1", "abc", "99999999999999999999", "1.5", ""] {
            assert!(parse_id(bad).is_err_and(|e| e.contains("from 1")), "{bad}");
        }
        // A whole number past the largest id is too large, not "not an id".
        assert!(parse_id("99999999999999999999").is_err_and(|e| e.contains("too large")));
        assert!(parse_id("abc").is_err_and(|e| e.contains("is not an invocation id")));
    }

    #[test]
    fn pretty_json_leaves_a_deeply_nested_text_as_it_came() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let at_limit = super::pretty_json(&deep(super::PRETTY_DEPTH + 1)).unwrap();
        assert_eq!(at_limit.lines().count(), 2 * super::PRETTY_DEPTH + 1);
        assert_eq!(super::pretty_json(&deep(super::PRETTY_DEPTH + 2)), None);
        assert_eq!(super::pretty_json(&deep(100_000)), None);
    }

    #[test]
    fn pretty_json_keeps_every_token_as_it_came() {
        let raw = r#"[{"id":12345678901234567890123,"x":1.10,"b":"a\"b,{c}","a":[],"o":{ }}]"#;
        let pretty = pretty_json(raw).unwrap();
        assert_eq!(
            pretty,
            "[\n  {\n    \"id\": 12345678901234567890123,\n    \"x\": 1.10,\n    \"b\": \"a\\\"b,{c}\",\n    \"a\": [],\n    \"o\": {}\n  }\n]"
        );
        // The same JSON, token for token.
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(squeeze(&pretty).replace(": ", ":"), squeeze(raw));
        assert_eq!(pretty_json("not json"), None);
        assert_eq!(pretty_json("[]").as_deref(), Some("[]"));
    }

    #[test]
    fn numbers_are_refused_with_a_sentence() {
        assert_eq!(parse_limit("5"), Ok(5));
        for (r, says) in [
            (parse_limit("0").map(|_| ()), "is not a number of calls"),
            (parse_limit("-3").map(|_| ()), "1 or more"),
            (parse_port("-5").map(|_| ()), "0 to 65535"),
            (parse_port("70000").map(|_| ()), "is too large for a port"),
            (
                parse_limit("99999999999999999999").map(|_| ()),
                "is too large a number for a number of calls (at most 18446744073709551615)",
            ),
            (parse_status_code("999").map(|_| ()), "100 to 599"),
            (parse_answer_code("abc").map(|_| ()), "200 to 599"),
            (parse_answer_code("99").map(|_| ()), "use 200-599"),
            (
                parse_answer_code("150").map(|_| ()),
                "1xx codes are informational",
            ),
            (parse_webhook_id("abc").map(|_| ()), "is not a webhook id"),
            (parse_scope("sent").map(|_| ()), "in capitals"),
            (parse_seconds("-5").map(|_| ()), "0 or more"),
        ] {
            assert!(r.as_ref().is_err_and(|e| e.contains(says)), "{r:?}");
        }
        assert_eq!(parse_port("0"), Ok(0));
        assert_eq!(parse_status_code("503"), Ok(503));
        assert_eq!(parse_answer_code("410"), Ok(410));
        assert_eq!(parse_webhook_id(" 42 "), Ok(42));
        assert_eq!(parse_seconds("300"), Ok(300));
    }

    #[test]
    fn counts_are_singular_for_one() {
        assert_eq!(count(1u64, "call", "calls"), "1 call");
        assert_eq!(count(0u64, "call", "calls"), "0 calls");
        assert_eq!(count(2u32, "attempt", "attempts"), "2 attempts");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_control("a\x1b[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(escape_control("x\r\ny\u{9b}"), "x\\u{d}\\u{a}y\\u{9b}");
        assert_eq!(escape_control("bidi\u{202e}"), "bidi\\u{202e}");
        assert_eq!(
            escape_control("a\u{200f}b\u{200e}c\u{61c}"),
            "a\\u{200f}b\\u{200e}c\\u{61c}"
        );
        assert_eq!(escape_control("héllo ✓"), "héllo ✓");
    }

    #[test]
    fn hex_round_trip() {
        assert_eq!(hex(b"\x00\xff"), "00ff");
        assert_eq!(unhex("00ff"), Some(vec![0, 255]));
        assert_eq!(unhex("0"), None);
        assert_eq!(unhex("zz"), None);
    }

    #[test]
    fn first_upper_makes_a_sentence() {
        assert_eq!(first_upper("cannot connect to x"), "Cannot connect to x");
        assert_eq!(first_upper("élan"), "Élan");
        assert_eq!(first_upper("Already"), "Already");
        assert_eq!(first_upper("2 rules"), "2 rules");
        assert_eq!(first_upper(""), "");
    }

    #[test]
    fn a_sentence_starts_with_a_capital_unless_it_starts_with_an_address() {
        assert_eq!(first_upper("cannot connect"), "Cannot connect");
        assert_eq!(
            first_upper("http://10.255.255.1/v1/webhooks answered 404"),
            "http://10.255.255.1/v1/webhooks answered 404"
        );
        assert_eq!(first_upper("/tmp/x is a file"), "/tmp/x is a file");
        assert_eq!(first_upper(""), "");
    }

    #[test]
    fn a_countdown_ticks_in_whole_seconds() {
        let ms = Duration::from_millis;
        // Rounded up: 3 s, 2 s, 1 s, never "0 s" or "647 ms".
        assert_eq!(countdown(ms(4_800)), "5 s");
        assert_eq!(countdown(ms(4_000)), "4 s");
        assert_eq!(countdown(ms(1_001)), "2 s");
        assert_eq!(countdown(ms(1_000)), "1 s");
        assert_eq!(countdown(ms(647)), "1 s");
        assert_eq!(countdown(Duration::ZERO), "1 s");
        // Since: rounded down, in whole seconds too.
        assert_eq!(elapsed(ms(822)), "under 1 s");
        assert_eq!(elapsed(ms(1_800)), "1 s");
        assert_eq!(elapsed(ms(9_900)), "9 s");
        assert_eq!(elapsed(ms(61_900)), "1 min 1 s");
        // Above a minute, the units of every other duration.
        assert_eq!(countdown(ms(837_100)), "13 min 58 s");
        assert_eq!(countdown(Duration::from_secs(7_200)), "2 h");
    }

    #[test]
    fn a_date_is_glued_and_nothing_else() {
        assert_eq!(
            glue_dates("194 retries left until 26 Nov 18:52"),
            "194 retries left until 26\u{a0}Nov\u{a0}18:52"
        );
        assert_eq!(
            glue_dates("at 1 May 09:00:01, then 2 Dec 10:00"),
            "at 1\u{a0}May\u{a0}09:00:01, then 2\u{a0}Dec\u{a0}10:00"
        );
        // A month's name that is not in a date is left alone.
        assert_eq!(glue_dates("in May we go"), "in May we go");
        assert_eq!(glue_dates("retries 3 Nov of them"), "retries 3 Nov of them");
    }

    #[test]
    fn a_number_keeps_its_unit_and_retry_after_its_value() {
        assert_eq!(
            glue_units("Answering 503 (Retry-After 120 s) after 2.5 s"),
            "Answering 503 (Retry-After\u{a0}120\u{a0}s) after 2.5\u{a0}s"
        );
        // A code before a bracket or a word stays breakable, as does a count and its noun.
        assert_eq!(
            glue_units("Answering by 2 rules, else 503 after 1.5 min (Retry-After 9 d)"),
            "Answering by 2 rules, else 503 after 1.5\u{a0}min (Retry-After\u{a0}9\u{a0}d)"
        );
        assert_eq!(glue_units("200 seconds"), "200 seconds");
        // The Timeline's heading: "(in 9 / s)" had broken at zoom 2.
        assert_eq!(
            glue_units("expected at 21:42:48 (in 9 min 46 s), 184 retries left"),
            "expected at 21:42:48 (in 9\u{a0}min 46\u{a0}s), 184 retries left"
        );
    }

    /// A text read up to a cap: whole at the cap, refused a byte past it (or at once when its
    /// size says so), and named where it stops being UTF-8.
    #[test]
    fn a_text_is_read_up_to_its_cap() {
        let read = |bytes: &[u8], size: u64| read_text_capped(bytes, size, 4);
        assert_eq!(read(b"abcd", 4).ok().as_deref(), Some("abcd"));
        assert!(matches!(read(b"abcde", 0), Err(CappedText::TooLarge)));
        assert!(matches!(read(b"", 5), Err(CappedText::TooLarge)));
        assert!(matches!(
            read(b"ab\xffd", 4),
            Err(CappedText::NotText { at: 3 })
        ));
        assert_eq!(read(b"", 0).ok().as_deref(), Some(""));
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_size("32MiB"), Ok(32 << 20));
        assert_eq!(parse_size("10 MB"), Ok(10_000_000));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999999GiB").is_err());
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("35s"), Ok(Duration::from_secs(35)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        // Fractions, as `show` writes gaps, to the millisecond.
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1.5 s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("0.25 min"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration(".5"), Ok(Duration::from_millis(500)));
        // Whether a fraction was rounded to the millisecond.
        assert_eq!(
            parse_duration_rounded("1.5s"),
            Ok((Duration::from_millis(1500), false))
        );
        assert_eq!(parse_duration_rounded("0.4ms"), Ok((Duration::ZERO, true)));
        assert_eq!(
            parse_duration_rounded("1.0006s"),
            Ok((Duration::from_millis(1001), true))
        );
        assert_eq!(
            parse_duration_rounded("2"),
            Ok((Duration::from_secs(2), false))
        );
        // Exact decimals: halves round up alike, and a digit far past the millisecond counts.
        for (typed, millis, rounded) in [
            ("1.0005s", 1001, true),
            ("4.0005s", 4001, true),
            ("0.00000000000000000001", 0, true),
            ("0.00049999999999999999", 0, true),
            ("1.9999999999999999999", 2000, true),
            ("1.500000000000000000000", 1500, false),
            ("1.", 1000, false),
            // Microseconds are read, whole milliseconds of them exactly (`100us` had been
            // "not a duration" where `0.4ms` was named as too fine).
            ("100us", 0, true),
            ("1500µs", 2, true),
            ("2000us", 2, false),
            ("2.5us", 0, true),
            ("1000000 us", 1000, false),
        ] {
            assert_eq!(
                parse_duration_rounded(typed),
                Ok((Duration::from_millis(millis), rounded)),
                "{typed}"
            );
        }
        // Parts with their units add up.
        for (typed, millis, rounded) in [
            ("1m30s", 90_000, false),
            ("1h 30m", 5_400_000, false),
            ("2s500ms", 2_500, false),
            (" 1 m 30 s ", 90_000, false),
            ("1m0.0005s", 60_001, true),
        ] {
            assert_eq!(
                parse_duration_rounded(typed),
                Ok((Duration::from_millis(millis), rounded)),
                "{typed}"
            );
        }
        for bad in ["1m30", "1mx30s", "m30s", "1m30s2"] {
            let e = parse_duration(bad).unwrap_err();
            assert_eq!(e.input, bad);
            assert!(!e.too_large, "{bad}");
        }
        assert!(
            parse_duration("99999999999999999h 1s")
                .unwrap_err()
                .too_large
        );
        for bad in ["1.2.3s", ".", "1e3s", "1.5x", "99999999999999999999.5h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .to_string()
                .contains("500ms")
        );
        // A minus is named as what is wrong, for a duration and a size alike.
        assert_eq!(
            parse_duration("-1s").unwrap_err().to_string(),
            "\"-1s\" is not a duration: it cannot be negative; examples: 500ms, 1.5s, 35s, 1m, 1m30s, 30"
        );
        assert!(
            parse_size("-1MiB")
                .unwrap_err()
                .to_string()
                .starts_with("\"-1MiB\" is not a size: it cannot be negative;")
        );
        for bad in ["-x", "-1foo", "--1s"] {
            let e = parse_duration(bad).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("\"{bad}\" is not a duration;")),
                "{e}"
            );
        }
        // Well formed, only too large to hold: said so.
        for huge in [
            "99999999999999999999s",
            "99999999999999999999.5h",
            "9999999999999999h",
        ] {
            let e = parse_duration(huge).unwrap_err().to_string();
            assert!(e.contains("is too large for a duration"), "{e}");
        }
        let e = parse_size("99999999999999GiB").unwrap_err().to_string();
        assert!(e.contains("is too large for a size"), "{e}");
        assert!(
            parse_size("lots")
                .unwrap_err()
                .to_string()
                .contains("is not a size")
        );
        // What is quoted back is escaped.
        let e = parse_duration("\u{1b}[2J").unwrap_err().to_string();
        assert!(e.contains("\\u{1b}[2J") && !e.contains('\u{1b}'), "{e}");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_duration(Duration::from_secs(252)), "4 min 12 s");
        assert_eq!(human_duration(Duration::from_secs(172_800)), "2 d");
        // To the nearest second, as read: a 6 s retry at 60x that came at 5.998 s.
        assert_eq!(human_duration(Duration::from_millis(5_998)), "6 s");
        assert_eq!(human_duration(Duration::from_millis(11_499)), "11 s");
        assert_eq!(human_duration(Duration::from_millis(59_600)), "1 min");
        assert_eq!(human_duration(Duration::from_millis(250)), "250 ms");
        assert_eq!(human_duration(Duration::ZERO), "0 s");
        // An answer in microseconds did take time.
        assert_eq!(human_duration(Duration::from_micros(300)), "under 1 ms");
        // On a fast clock: 90 s at 60x, 2 days at 60x, 90 s at 1,000,000x.
        assert_eq!(human_duration_at(Duration::from_secs(90), 60.0), "1.5 s");
        assert_eq!(
            human_duration_at(Duration::from_secs(172_800), 60.0),
            "48 min"
        );
        assert_eq!(
            human_duration_at(Duration::from_secs(90), 1e6),
            "under 1 ms"
        );
        assert_eq!(human_duration_at(Duration::ZERO, 1e6), "0 s");
        assert_eq!(
            human_duration_at(Duration::from_secs(90), f64::NAN),
            "1 min 30 s"
        );
        assert_eq!(
            super::parse_bind("localhost"),
            Ok(std::net::Ipv4Addr::LOCALHOST.into())
        );
        assert_eq!(
            super::parse_bind("[::1]"),
            Ok(std::net::Ipv6Addr::LOCALHOST.into())
        );
        assert_eq!(
            super::parse_bind("0.0.0.0"),
            Ok(std::net::Ipv4Addr::UNSPECIFIED.into())
        );
        let e = super::parse_bind("my-laptop").unwrap_err();
        assert!(
            e.starts_with("\"my-laptop\" is not an IP address: use 127.0.0.1"),
            "{e}"
        );
        assert_eq!(human_duration(Duration::from_millis(1_500)), "1.5 s");
        assert_eq!(human_duration(Duration::from_millis(1_199)), "1.2 s");
        assert_eq!(human_duration(Duration::from_millis(9_960)), "10 s");
        assert_eq!(human_duration(Duration::from_secs(172_799)), "2 d");
        assert_eq!(human_duration(Duration::from_secs(5_445)), "1 h 31 min");
        assert_eq!(human_duration(Duration::from_secs(90)), "1 min 30 s");
        assert!(human_duration(Duration::MAX).starts_with("213503982334601 d"));
    }
}
