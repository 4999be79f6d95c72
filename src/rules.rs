//! Answer rules for QA: ordered rules, each a condition and an answer; the first match wins and
//! the fixed choice is the fallback. A rule can retire after N uses. Rule files are JSON or
//! TOML (by the file's extension, `.json` or `.toml`; by its text otherwise), the same fields
//! either way.
//!
//! ```json
//! {"rules": [
//!   {"name": "fail the first 2 attempts", "when": {"attempt": {"at_most": 2}},
//!    "answer": {"status": 503}},
//!   {"name": "then succeed", "answer": {"status": 200}}
//! ]}
//! ```
//!
//! ```toml
//! [[rules]]
//! name = "fail the first 2 attempts"
//! when = { attempt = { at_most = 2 } }
//! answer = { status = 503 }
//!
//! [[rules]]
//! name = "then succeed"
//! answer = { status = 200 }
//! ```

use crate::responder::Answer;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// A condition on the attempt number.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttemptCond {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<u32>,
}

impl AttemptCond {
    /// Why no attempt number (1 or more) can meet it, if none can.
    fn never_holds(&self) -> Option<String> {
        let least = self.at_least.unwrap_or(1).max(1);
        let most = self.at_most.unwrap_or(u32::MAX);
        if self.equals == Some(0) || self.at_most == Some(0) {
            return Some("attempts are numbered from 1".to_owned());
        }
        if let Some(e) = self.equals {
            if self.at_least.is_some_and(|l| e < l) {
                return Some(format!("equals {e} is under at_least {least}"));
            }
            if self.at_most.is_some_and(|m| e > m) {
                return Some(format!("equals {e} is over at_most {most}"));
            }
        }
        (least > most).then(|| format!("at_least {least} is more than at_most {most}"))
    }

    fn matches(&self, attempt: Option<u32>) -> bool {
        let Some(a) = attempt else { return false };
        self.equals.is_none_or(|e| a == e)
            && self.at_most.is_none_or(|m| a <= m)
            && self.at_least.is_none_or(|m| a >= m)
    }
}

/// A condition on a field of any message in the body, e.g. `to` = 1111111 or `status.type` =
/// DELIVERED; `field` is a dotted path.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldCond {
    pub field: String,
    /// Text, or a number or true/false as the file writes it (`"equals": 0`); a number in the
    /// message matches it by value (1 equals 1.0), and `"null"` matches a null.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "scalar_text"
    )]
    pub equals: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
}

impl FieldCond {
    fn matches(&self, messages: &[Value]) -> bool {
        messages.iter().any(|m| {
            let mut cur = m;
            for part in self.field.split('.') {
                match cur.get(part) {
                    Some(next) => cur = next,
                    None => return false,
                }
            }
            // An object or a list (`status`) by the values it holds, never by its keys:
            // "contains": "type" had matched every status by its key name.
            if cur.is_object() || cur.is_array() {
                let mut leaves = Vec::new();
                leaf_texts(cur, &mut leaves);
                return self.equals.is_none()
                    && self
                        .contains
                        .as_ref()
                        .is_some_and(|c| leaves.iter().any(|t| t.contains(c.as_str())));
            }
            let text = value_text(cur);
            // A number by its value, not its spelling; text only ever by its text ("+27..."
            // is not the number 27...).
            let same_number = |e: &str| {
                // Whole numbers exactly (ids run past 2^53), others as floats (1 equals 1.0).
                let whole = |t: &str| t.trim().parse::<i128>().ok();
                match (whole(&text), whole(e)) {
                    (Some(a), Some(b)) => a == b,
                    _ => cur
                        .as_f64()
                        .zip(e.trim().parse::<f64>().ok())
                        .is_some_and(|(a, b)| a == b),
                }
            };
            self.equals
                .as_ref()
                .is_none_or(|e| &text == e || (cur.is_number() && same_number(e)))
                && self
                    .contains
                    .as_ref()
                    .is_none_or(|c| text.contains(c.as_str()))
        })
    }
}

/// A value that is not an object or a list as a condition reads it: text as itself, a
/// null as `null`, a number or true/false as JSON writes it.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_owned(),
        other => other.to_string(),
    }
}

/// The texts of every value inside `v`, at any depth, its keys left out.
fn leaf_texts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.values().for_each(|x| leaf_texts(x, out)),
        Value::Array(a) => a.iter().for_each(|x| leaf_texts(x, out)),
        other => out.push(value_text(other)),
    }
}

/// Every part that is set must match.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// The event header value: `status-report` or `incoming-message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Given as a string or a number (the Webhooks API's ids are numbers).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "webhook_id"
    )]
    pub webhook_id: Option<String>,
    /// The request path, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<AttemptCond>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<FieldCond>,
    /// Match every Nth call that meets the rest of the condition (3: the 3rd, 6th, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_nth: Option<u32>,
}

impl Condition {
    /// Whether every call meets it: nothing set but, at most, `every_nth: 1`.
    pub fn matches_every_call(&self) -> bool {
        let Condition {
            event,
            webhook_id,
            path,
            attempt,
            message,
            every_nth,
        } = self;
        event.is_none()
            && webhook_id.is_none()
            && path.is_none()
            && attempt.is_none()
            && message.is_none()
            && every_nth.is_none_or(|n| n == 1)
    }
}

/// One rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Required: one left out is refused by the check of the file, which names the rule and
    /// its line (serde's "missing field" had pointed at line 1 of a TOML file).
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub when: Condition,
    pub answer: Answer,
    /// Retire after answering this many calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

/// A rule file: `{"rules": [...]}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    pub rules: Vec<Rule>,
}

/// What a rule sees of a call.
#[derive(Clone, Copy, Debug)]
pub struct CallFacts<'a> {
    pub event: Option<&'a str>,
    pub webhook_id: Option<&'a str>,
    pub path: &'a str,
    pub attempt: Option<u32>,
    pub body: &'a [u8],
}

/// Rules with their counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    /// Calls each rule's condition (without `every_nth`) has met.
    seen: Vec<u64>,
    /// Calls each rule has answered.
    used: Vec<u64>,
}

/// The most a rule file may hold: room for a rule or two answering with a body of the most an
/// answer takes (32 MiB) and many more rules, and a bound on what a wrong path (`/dev/zero`, a
/// disk image) can make Hookscope read.
pub const MAX_RULE_FILE: u64 = 64 << 20;

/// The text of the rule file at `path`, read up to [`MAX_RULE_FILE`]: a larger file, or an
/// endless one, is refused at once rather than read whole into memory first.
pub fn read_rule_file(path: &Path) -> Result<String, RuleError> {
    use crate::text::CappedText;
    let shown = || path.display().to_string();
    let fail = |source| RuleError::Read {
        path: shown(),
        source,
    };
    let file = std::fs::File::open(path).map_err(fail)?;
    let size = file
        .metadata()
        .map_or(0, |m| if m.is_file() { m.len() } else { 0 });
    crate::text::read_text_capped(file, size, MAX_RULE_FILE).map_err(|e| match e {
        CappedText::Io(source) => fail(source),
        CappedText::TooLarge => RuleError::TooLarge { path: shown() },
        CappedText::NotText { at } => fail(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("it is not UTF-8 text (byte {at} is not)"),
        )),
    })
}

#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("cannot read the rule file {path}: {}", crate::text::io_words(.source))]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// No file at a `--rules` path, which names none of Hookscope's own recipes either.
    #[error("{}", no_rule_file(.path, .near))]
    NoFile {
        path: String,
        /// The recipe whose name is like the one given (its case, its extension), if one is.
        near: Option<&'static str>,
    },
    #[error(
        "the rule file {path} is larger than {} MiB, the most a rule file may hold: is it the right file?",
        MAX_RULE_FILE >> 20
    )]
    TooLarge { path: String },
    #[error("{path}: line {line}, column {column}: {reason}")]
    Syntax {
        path: String,
        line: usize,
        column: usize,
        reason: String,
    },
    #[error("{path}: line {line}: rule {index}{}: {reason}", named(.name))]
    Invalid {
        path: String,
        /// Where the rule's name is given.
        line: usize,
        index: usize,
        name: String,
        reason: String,
    },
    #[error("cannot write the rule file {path}: {}", crate::text::io_words(.source))]
    Write {
        path: String,
        source: std::io::Error,
    },
}

impl RuleSet {
    /// The first rule that answers every call for good (no condition, or only `every_nth: 1`;
    /// no `times`), with its index: the rules after it and the fixed choice are never used.
    pub fn catch_all(&self) -> Option<(usize, &Rule)> {
        self.rules
            .iter()
            .enumerate()
            .find(|(_, r)| r.when.matches_every_call() && r.times.is_none())
    }

    pub fn new(rules: Vec<Rule>) -> Self {
        let n = rules.len();
        RuleSet {
            rules,
            seen: vec![0; n],
            used: vec![0; n],
        }
    }

    /// How many calls rule `i` has answered.
    pub fn used(&self, i: usize) -> u64 {
        self.used.get(i).copied().unwrap_or(0)
    }

    /// How many rules still answer calls (those whose `times` are used up do not).
    pub fn in_force(&self) -> usize {
        (0..self.rules.len()).filter(|&i| !self.retired(i)).count()
    }

    pub fn retired(&self, i: usize) -> bool {
        self.rules
            .get(i)
            .and_then(|r| r.times)
            .is_some_and(|t| self.used(i) >= u64::from(t))
    }

    /// The first rule that matches, counting the call against it; `None` leaves the call to the
    /// fixed choice.
    pub fn decide(&mut self, call: &CallFacts<'_>) -> Option<(usize, Answer)> {
        let (met, answering) = self.find(call);
        for i in met {
            self.seen[i] += 1;
        }
        let i = answering?;
        self.used[i] += 1;
        Some((i, self.rules[i].answer.clone()))
    }

    /// What [`RuleSet::decide`] would answer, counting nothing.
    pub fn preview(&self, call: &CallFacts<'_>) -> Option<(usize, Answer)> {
        let i = self.find(call).1?;
        Some((i, self.rules[i].answer.clone()))
    }

    /// The rules in force whose conditions the call meets, up to the one that answers it (an
    /// `every_nth` rule meets a call without answering it until its turn), and that one.
    fn find(&self, call: &CallFacts<'_>) -> (Vec<usize>, Option<usize>) {
        let needs_body = self.rules.iter().any(|r| r.when.message.is_some());
        let messages: Vec<Value> = if needs_body {
            match serde_json::from_slice::<Value>(call.body) {
                Ok(Value::Array(items)) => items,
                _ => Vec::new(),
            }
        } else {
            Vec::new()
        };
        // The request's path as it arrived (percent-encoded where it has to be), and decoded:
        // a rule may give either, /crème or /cr%C3%A8me.
        let decoded_path = std::cell::OnceCell::new();
        let decoded = || {
            decoded_path
                .get_or_init(|| percent_encoding::percent_decode_str(call.path).decode_utf8_lossy())
                .as_ref()
        };
        let mut met = Vec::new();
        for i in 0..self.rules.len() {
            if self.retired(i) {
                continue;
            }
            let w = &self.rules[i].when;
            let base = w.event.as_deref().is_none_or(|e| call.event == Some(e))
                && w.webhook_id
                    .as_deref()
                    .is_none_or(|id| call.webhook_id == Some(id))
                && w.path
                    .as_deref()
                    .is_none_or(|p| call.path == p || decoded() == p)
                && w.attempt.as_ref().is_none_or(|a| a.matches(call.attempt))
                && w.message.as_ref().is_none_or(|m| m.matches(&messages));
            if !base {
                continue;
            }
            met.push(i);
            let seen = self.seen[i] + 1;
            if let Some(n) = w.every_nth
                && (n == 0 || !seen.is_multiple_of(u64::from(n)))
            {
                continue;
            }
            return (met, Some(i));
        }
        (met, None)
    }

    /// Parse a rule file's text, JSON or TOML (by `path`'s extension, else by the text);
    /// errors name the line and the reason.
    pub fn parse(path: &str, text: &str) -> Result<RuleSet, RuleError> {
        // A byte-order mark (Notepad saves one) is not part of the text.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            return Err(RuleError::Syntax {
                path: path.to_owned(),
                line: 1,
                column: 1,
                reason: "the file is empty: a rule file is {\"rules\": [ ... ]} (or [[rules]] tables in TOML)".into(),
            });
        }
        let format = RuleFormat::of(path, text);
        let rule_lines = match format {
            RuleFormat::Json => json_rule_lines(text),
            RuleFormat::Toml => toml_rule_lines(text),
        };
        // The same text read as plain values, for what serde lets through (a list where a table
        // belongs: `answer = [503]` reads as status 503, an answer with no status) and for what
        // it words as a type (`"when": [1]`).
        let plain: Option<Value> = match format {
            RuleFormat::Json => serde_json::from_str(text).ok(),
            RuleFormat::Toml => toml::from_str(text).ok(),
        };
        let shape_error = |i: usize, rule: &Value| {
            shape_of(rule).err().map(|reason| RuleError::Invalid {
                path: path.to_owned(),
                line: rule_lines.get(i).copied().unwrap_or(1),
                index: i + 1,
                name: rule
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                reason,
            })
        };
        let first_shape_error = || {
            let rules = plain.as_ref()?.get("rules")?.as_array()?;
            rules
                .iter()
                .enumerate()
                .find_map(|(i, r)| shape_error(i, r))
        };
        let typed = match format {
            RuleFormat::Json => parse_json(path, text),
            RuleFormat::Toml => toml::from_str(text).map_err(|e| {
                let (line, column) = e
                    .span()
                    .map_or((1, 1), |span| line_and_column(text, span.start));
                // A control character or a line break typed inside a text, named where it is:
                // toml says "invalid basic string", or reads what follows a break as a key.
                let (line, column, reason) = toml_raw_control(text, line)
                    .unwrap_or_else(|| (line, column, plain_reason(&toml_reason(e.message()))));
                RuleError::Syntax {
                    path: path.to_owned(),
                    line,
                    column,
                    reason,
                }
            }),
        };
        let mut file: RuleFile = typed.map_err(|e| {
            first_shape_error()
                .or_else(|| other_format(path, text))
                .unwrap_or_else(|| not_yaml(path, e))
        })?;
        // Header values arrive without surrounding spaces: a rule's are taken the same way, and
        // a Retry-After is sent as `--retry-after` sends it, trimmed.
        for r in &mut file.rules {
            if let Some(ra) = &mut r.answer.retry_after {
                *ra = ra.trim().to_owned();
            }
            for value in [&mut r.when.event, &mut r.when.webhook_id]
                .into_iter()
                .flatten()
            {
                *value = value.trim().to_owned();
            }
        }
        for (i, r) in file.rules.iter().enumerate() {
            let invalid = |reason: String| RuleError::Invalid {
                path: path.to_owned(),
                line: rule_lines.get(i).copied().unwrap_or(1),
                index: i + 1,
                name: r.name.clone(),
                reason,
            };
            if let Some(e) = plain
                .as_ref()
                .and_then(|v| v.get("rules")?.get(i))
                .and_then(|rule| shape_error(i, rule))
            {
                return Err(e);
            }
            if r.name.trim().is_empty() {
                return Err(invalid(
                    "a rule needs a name: each call records the rule that answered it".into(),
                ));
            }
            if file.rules[..i].iter().any(|o| o.name == r.name) {
                return Err(invalid(format!(
                    "another rule before it is also named \"{}\": give each rule its own name, since each call records the rule that answered it",
                    r.name
                )));
            }
            if let Some(p) = &r.when.path
                && !p.starts_with('/')
            {
                return Err(invalid(format!(
                    "the path \"{p}\" never matches: a request's path begins with / (\"/{p}\")"
                )));
            }
            if let Some(p) = &r.when.path
                && let Some(cut) = p.find(['?', '#'])
            {
                let without = if p[cut..].starts_with('?') {
                    "without the query"
                } else {
                    "and a request never sends a fragment (#...)"
                };
                return Err(invalid(format!(
                    "the path \"{p}\" never matches: a path condition is matched against the path alone, {without} (write \"{}\")",
                    &p[..cut]
                )));
            }
            if r.when
                .webhook_id
                .as_deref()
                .is_some_and(|w| w.trim().is_empty())
            {
                return Err(invalid(
                    "webhook_id is empty, which no call carries: give the webhook's id, or leave it out to match any webhook".into(),
                ));
            }
            if let Some(m) = &r.when.message
                && let (Some(eq), Some(has)) = (&m.equals, &m.contains)
                && !eq.contains(has.as_str())
            {
                return Err(invalid(format!(
                    "the message condition on \"{}\" can never hold: a value equal to \"{eq}\" does not contain \"{has}\"",
                    m.field
                )));
            }
            r.answer.check().map_err(|e| invalid(e.to_string()))?;
            if r.when.every_nth == Some(0) {
                return Err(invalid("every_nth must be 1 or more".into()));
            }
            if r.times == Some(0) {
                return Err(invalid(
                    "times must be 1 or more (leave it out for a rule that never retires)".into(),
                ));
            }
            if let Some(e) = &r.when.event
                && crate::contract::EventKind::parse(e).is_none()
            {
                return Err(invalid(format!(
                    "the event \"{e}\" is not one the service sends: use incoming-message or status-report"
                )));
            }
            if let Some(a) = &r.when.attempt
                && a.equals.is_none()
                && a.at_most.is_none()
                && a.at_least.is_none()
            {
                return Err(invalid(
                    "the attempt condition needs \"equals\", \"at_most\" or \"at_least\" (leave \"attempt\" out to match any call)".into(),
                ));
            }
            if let Some(a) = &r.when.attempt
                && let Some(why) = a.never_holds()
            {
                return Err(invalid(format!(
                    "the attempt condition can never hold: {why}"
                )));
            }
            if let Some(m) = &r.when.message
                && m.equals.is_none()
                && m.contains.is_none()
            {
                return Err(invalid(format!(
                    "the message condition on \"{}\" needs \"equals\" or \"contains\" (to match a null, write \"equals\": \"null\")",
                    m.field
                )));
            }
            if let Some(m) = &r.when.message
                && m.field.split('.').any(|part| part.trim().is_empty())
            {
                return Err(invalid(format!(
                    "the message condition's field \"{}\" names no field of a message: give a name, dotted for a nested one (status.type)",
                    m.field
                )));
            }
        }
        Ok(RuleSet::new(file.rules))
    }

    pub fn load(path: &Path) -> Result<RuleSet, RuleError> {
        let text = read_rule_file(path)?;
        RuleSet::parse(&path.display().to_string(), &text)
    }

    /// [`RuleSet::load`], or, where there is no file at `path` and its name is a recipe's
    /// (`assets/rules/time-out-once.json`, `time-out-once`), the recipe built into Hookscope,
    /// whose name is returned with it: the recipes are named by their place in the source tree,
    /// which an installed binary has not.
    pub fn load_or_recipe(path: &Path) -> Result<(RuleSet, Option<&'static str>), RuleError> {
        match RuleSet::load(path) {
            Err(RuleError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound
                    && let Some((name, text)) = recipe_named(path) =>
            {
                Ok((RuleSet::parse(name, text)?, Some(name)))
            }
            // Named, with the recipe meant where the name is near one, and the recipes
            // otherwise: "no such file" alone left the user to find them in the README.
            Err(RuleError::Read {
                path: shown,
                source,
            }) if source.kind() == std::io::ErrorKind::NotFound => Err(RuleError::NoFile {
                path: shown,
                near: recipe_near(path),
            }),
            loaded => loaded.map(|r| (r, None)),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&RuleFile {
            rules: self.rules.clone(),
        })
        .unwrap_or_default()
    }

    /// The rules as a TOML rule file.
    pub fn to_toml(&self) -> String {
        to_toml(&RuleFile {
            rules: self.rules.clone(),
        })
    }

    /// The rules in `format`.
    pub fn to_text(&self, format: RuleFormat) -> String {
        match format {
            RuleFormat::Json => self.to_json() + "\n",
            RuleFormat::Toml => self.to_toml(),
        }
    }

    /// Write the rules to `path`, as TOML for a `.toml` file, JSON otherwise.
    pub fn save(&self, path: &Path) -> Result<(), RuleError> {
        let format = RuleFormat::of_path(&path.display().to_string()).unwrap_or(RuleFormat::Json);
        std::fs::write(path, self.to_text(format)).map_err(|source| RuleError::Write {
            path: path.display().to_string(),
            source,
        })
    }
}

/// What to write to `path` for a rule file whose text is `text` (the editor's): the text as it
/// is when the file's extension asks for its own format (its comments and layout kept), else
/// the same rules in the format the extension asks for.
pub fn text_for(path: &Path, text: &str) -> Result<String, RuleError> {
    let shown = path.display().to_string();
    match RuleFormat::of_path(&shown) {
        Some(wanted) if wanted != RuleFormat::of("", text) && !text.trim().is_empty() => {
            Ok(RuleSet::parse("the rules", text)?.to_text(wanted))
        }
        _ => Ok(text.to_owned()),
    }
}

/// A rule's name as its errors quote it: ` ("name")`, or nothing where it has none (`rule 1
/// (""): a rule must be an object` read as if it had an empty name).
fn named(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!(" (\"{name}\")")
    }
}

/// The first TOML date-time in `v` (`retry_after = 1979-05-27T07:32:00Z`, unquoted), with the
/// key it is under: the toml reader hands it over as a table, which its error then named.
fn toml_datetime(v: &Value, key: &str) -> Option<(String, String)> {
    const DATETIME: &str = "$__toml_private_datetime";
    match v {
        Value::Object(m) => match m.get(DATETIME) {
            Some(at) if m.len() == 1 => Some((key.to_owned(), value_text(at))),
            _ => m.iter().find_map(|(k, x)| toml_datetime(x, k)),
        },
        Value::Array(a) => a.iter().find_map(|x| toml_datetime(x, key)),
        _ => None,
    }
}

/// What a rule's parts must be: tables (objects), not lists, and an answer with its status.
fn shape_of(rule: &Value) -> Result<(), String> {
    let datetime = toml_datetime(rule, "");
    // A rule that is itself a date-time is not an object, as any other value.
    if datetime.as_ref().is_some_and(|(key, _)| key.is_empty()) {
        return Err("a rule must be an object (a table in TOML)".into());
    }
    if let Some((key, at)) = datetime {
        let advice = if key == "retry_after" {
            format!(
                "a Retry-After date is text, an HTTP date in quotes, such as \"{}\"",
                crate::text::example_http_date()
            )
        } else {
            "write the value in quotes, as text".to_owned()
        };
        return Err(format!(
            "\"{key}\" is a TOML date-time ({at}), which no rule field takes: {advice}"
        ));
    }
    let table = |v: Option<&Value>, what: &str| match v {
        None | Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(format!(
            "\"{what}\" must be an object (a table in TOML), such as {}",
            match what {
                "answer" => "{\"status\": 503}",
                "attempt" => "{\"at_most\": 2}",
                "message" => "{\"field\": \"to\", \"equals\": \"1111111\"}",
                _ => "{\"attempt\": {\"at_most\": 2}}",
            }
        )),
    };
    if !rule.is_object() {
        return Err("a rule must be an object (a table in TOML)".into());
    }
    table(rule.get("answer"), "answer")?;
    table(rule.get("when"), "when")?;
    if let Some(when) = rule.get("when") {
        table(when.get("attempt"), "attempt")?;
        table(when.get("message"), "message")?;
    }
    if rule
        .get("answer")
        .is_some_and(|a| a.get("status").is_none())
    {
        return Err("the answer needs a status, such as {\"status\": 503}".into());
    }
    Ok(())
}

/// A value to compare with: text, a number or true/false, kept as text.
fn scalar_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    crate::responder::scalar_text(
        d,
        "a value to compare with: text, a number, or true or false",
    )
}

fn webhook_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    crate::responder::text_or_whole_number(d, "a webhook id, such as 234 or \"234\"")
}

/// A reader's reason in the words of the rule file, not of the Rust types behind it.
fn plain_reason(reason: &str) -> String {
    const PLAIN: [(&str, &str); 21] = [
        (
            "expected u16",
            "expected a whole number (a status code from 200 to 599)",
        ),
        (
            "expected u32",
            "expected a whole number from 1 to 4294967295",
        ),
        // A JSON number too large for any whole-number field is read as a float first.
        (
            "invalid type: floating point",
            "a number too large, or not whole:",
        ),
        ("expected u64", "expected a whole number from 0"),
        ("a map", "an object (a table in TOML)"),
        (
            "expected struct AttemptCond",
            "expected an attempt condition such as {\"at_most\": 2} (equals, at_most, at_least)",
        ),
        (
            "expected struct FieldCond",
            "expected a message condition such as {\"field\": \"to\", \"equals\": \"1111111\"}",
        ),
        (
            "expected struct Condition",
            "expected a condition (an object of when's fields)",
        ),
        (
            "expected struct Answer",
            "expected an answer such as {\"status\": 503}",
        ),
        (
            "expected struct RuleFile",
            "expected a rule file: {\"rules\": [ ... ]}",
        ),
        (
            "expected struct Rule",
            "expected a rule: {\"name\", \"when\", \"answer\", \"times\"}",
        ),
        ("a sequence", "a list"),
        // What was found, in the file's words: "the number `1`", not "invalid type: integer".
        ("invalid type: sequence", "a list"),
        ("invalid type: map", "an object (a table in TOML)"),
        ("invalid type: string ", "the text "),
        ("invalid type: integer ", "the number "),
        ("invalid value: integer ", "the number "),
        ("invalid type: boolean ", "the value "),
        ("invalid type: null", "null"),
        (", expected a string", ", where text is expected"),
        // TOML reads a whole number past i64 as i128 before it is refused.
        ("` as i128", "`, too large"),
    ];
    crate::text::replace_each(reason, &PLAIN)
}

/// A rule file in the other format than its name says (TOML saved as `rules.json`): said so,
/// rather than the first thing the expected format cannot read.
fn other_format(path: &str, text: &str) -> Option<RuleError> {
    let by_name = RuleFormat::of_path(path)?;
    let (is, ext) = match by_name {
        RuleFormat::Json => {
            let v: Value = toml::from_str(text).ok()?;
            v.get("rules")?;
            ("TOML", "toml")
        }
        RuleFormat::Toml => {
            let v: Value = serde_json::from_str(text).ok()?;
            v.get("rules")?;
            ("JSON", "json")
        }
    };
    Some(RuleError::Syntax {
        path: path.to_owned(),
        line: 1,
        column: 1,
        reason: format!(
            "this is a {is} rule file, but its name says otherwise: rename it to end in .{ext}"
        ),
    })
}

/// A file named `.yaml` or `.yml` that does not read as either format: said to be YAML, which
/// Hookscope does not read (it had been read as TOML, with TOML's complaint alone).
fn not_yaml(path: &str, e: RuleError) -> RuleError {
    let yaml = Path::new(path)
        .extension()
        .and_then(|x| x.to_str())
        .is_some_and(|x| x.eq_ignore_ascii_case("yaml") || x.eq_ignore_ascii_case("yml"));
    match e {
        RuleError::Syntax {
            path,
            line,
            column,
            reason,
        } if yaml => RuleError::Syntax {
            path,
            line,
            column,
            reason: format!(
                "{reason} (read as TOML: Hookscope reads rule files in JSON, {{\"rules\": [ ... ]}}, or TOML, [[rules]] tables, not YAML)"
            ),
        },
        e => e,
    }
}

/// The two formats of a rule file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleFormat {
    Json,
    Toml,
}

impl RuleFormat {
    /// By the file name's extension, when it says.
    pub fn of_path(path: &str) -> Option<RuleFormat> {
        let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "json" => Some(RuleFormat::Json),
            "toml" => Some(RuleFormat::Toml),
            _ => None,
        }
    }

    /// By the file name's extension, else by the text: JSON begins with `{` (or is a list,
    /// `[` then `{`, `]` or `"`, refused as JSON with its reason); anything else is TOML, whose
    /// `[[rules]]` or `[section]` also begins with `[`.
    pub fn of(path: &str, text: &str) -> RuleFormat {
        if let Some(f) = RuleFormat::of_path(path) {
            return f;
        }
        let t = text.trim_start();
        if t.is_empty() || t.starts_with('{') {
            return RuleFormat::Json;
        }
        if let Some(rest) = t.strip_prefix('[') {
            let next = rest.trim_start().chars().next();
            if matches!(next, None | Some('{' | ']' | '"')) {
                return RuleFormat::Json;
            }
        }
        RuleFormat::Toml
    }
}

fn parse_json(path: &str, text: &str) -> Result<RuleFile, RuleError> {
    if text.trim_start().starts_with('[') {
        return Err(RuleError::Syntax {
            path: path.to_owned(),
            line: 1,
            column: 1,
            reason: "the file is a list; a rule file is an object: {\"rules\": [ ... ]}".into(),
        });
    }
    serde_json::from_str(text).map_err(|e| {
        // A slip of JSON's grammar in plain words; else what was read is of the wrong kind.
        let slip = crate::text::json_slip(&e, text, "the file", "the rule file");
        let mut reason = slip.reason.unwrap_or_else(|| plain_reason(&slip.said));
        // A whole number too large is read as a float first, and quoted as one (`1e+20`): as
        // typed, as TOML's errors quote it.
        if let Some(float) = slip
            .said
            .strip_prefix("invalid type: floating point `")
            .and_then(|rest| rest.split('`').next())
            && let Some(typed) = number_before(text, slip.line, slip.column)
        {
            reason = reason.replacen(&format!("`{float}`"), &format!("`{typed}`"), 1);
        }
        RuleError::Syntax {
            path: path.to_owned(),
            line: slip.line,
            column: slip.column,
            reason,
        }
    })
}

/// The number in `text` that ends at `line` and `column` (1-based, the column in bytes, as
/// serde_json counts them), as it was typed.
fn number_before(text: &str, line: usize, column: usize) -> Option<&str> {
    let row = text.lines().nth(line.checked_sub(1)?)?;
    let upto = row.get(..column)?;
    let start = upto
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let typed = &upto[start..];
    typed.bytes().any(|b| b.is_ascii_digit()).then_some(typed)
}

/// A TOML rule file with the same fields as the JSON one (an absent value is left out: TOML
/// has no null).
fn to_toml(file: &RuleFile) -> String {
    fn strip_nulls(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.retain(|_, v| !v.is_null());
                map.values_mut().for_each(strip_nulls);
            }
            Value::Array(items) => items.iter_mut().for_each(strip_nulls),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(file).unwrap_or(Value::Null);
    strip_nulls(&mut value);
    toml::to_string(&value).unwrap_or_default()
}

/// The TOML reader's message, on one line.
fn toml_reason(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A character TOML takes in a one-line text only as an escape, typed as it is, on the line of
/// an error (`line`) or ending the line before it (a text whose line break split it): its line,
/// column and what it is, with the escape to write. Tabs are allowed; comments are skipped.
fn toml_raw_control(text: &str, line: usize) -> Option<(usize, usize, String)> {
    let lines: Vec<&str> = text.split('\n').collect();
    // A line left inside a one-line text: an odd count of the quotes that open and close it.
    let open_text = |l: &str| {
        let code = l.split('#').next().unwrap_or("");
        !code.contains("\"\"\"")
            && !code.contains('\'')
            && code.replace("\\\"", "").matches('"').count() % 2 == 1
    };
    for n in [line, line.saturating_sub(1)] {
        let Some(l) = n.checked_sub(1).and_then(|i| lines.get(i)) else {
            continue;
        };
        let l = l.strip_suffix('\r').unwrap_or(l);
        if let Some((at, c)) = l.char_indices().find(|(_, c)| c.is_control() && *c != '\t') {
            let column = l[..at].chars().count() + 1;
            let what = match c {
                '\r' => "a carriage return".to_owned(),
                c => format!("the control character U+{:04X}", u32::from(c)),
            };
            return Some((
                n,
                column,
                format!(
                    "a text holds {what} as it is: TOML takes it only as an escape, \\u{:04X}",
                    u32::from(c)
                ),
            ));
        }
        if n + 1 == line && open_text(l) {
            return Some((
                n,
                l.chars().count() + 1,
                "a text in \"…\" holds a line break as it is: write it \\n, or use \"\"\"…\"\"\" for a text over several lines".to_owned(),
            ));
        }
    }
    None
}

/// The 1-based line and column of byte `at` in `text`.
fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// The line of each rule's `name = ` in a TOML rule file, in order (`[[rules]]` tables, or
/// inline tables with `name =` inside, several on a line), skipping multi-line strings.
#[cfg(test)]
fn toml_name_lines(text: &str) -> Vec<usize> {
    toml_scan(text).0
}

/// The line of each rule's `name = ` (as [`toml_rule_lines`] takes them), and the line of each
/// `[[rules]]` header, both outside multi-line strings (a body's text may hold a line that
/// reads as either).
fn toml_scan(text: &str) -> (Vec<usize>, Vec<usize>) {
    let mut lines = Vec::new();
    let mut headers = Vec::new();
    let mut in_string: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        if in_string.is_none() && is_rules_header(line) {
            headers.push(i + 1);
        }
        let mut rest = line;
        loop {
            if let Some(quote) = in_string {
                match rest.find(quote) {
                    Some(at) => {
                        rest = &rest[at + 3..];
                        in_string = None;
                    }
                    None => break,
                }
            }
            let opens = ["\"\"\"", "\'\'\'"]
                .into_iter()
                .filter_map(|q| rest.find(q).map(|at| (at, q)))
                .min();
            let (code, after) = match opens {
                Some((at, q)) => {
                    in_string = Some(q);
                    (&rest[..at], Some(&rest[at + 3..]))
                }
                None => (rest, None),
            };
            let mut scan = code;
            while let Some(at) = scan.find("name") {
                let before = scan[..at].trim_end();
                let after_key = scan[at + 4..].trim_start();
                let starts_key =
                    before.is_empty() || before.ends_with('{') || before.ends_with(',');
                if starts_key && after_key.starts_with('=') && !after_key.starts_with("==") {
                    lines.push(i + 1);
                }
                scan = &scan[at + 4..];
            }
            match after {
                Some(next) => rest = next,
                None => break,
            }
        }
    }
    (lines, headers)
}

/// Whether `line` is a `[[rules]]` table's header (spaces allowed inside the brackets).
fn is_rules_header(line: &str) -> bool {
    let Some(inner) = line.trim_start().strip_prefix("[[") else {
        return false;
    };
    inner
        .trim_start()
        .strip_prefix("rules")
        .is_some_and(|after| after.trim_start().starts_with("]]"))
}

/// The line of each rule of a TOML rule file, in order: its `name = `'s, or, in a file of
/// `[[rules]]` tables, its table's header when it has no name (a rule left without one had
/// taken the next rule's name line, and every rule after it the line of the one after).
fn toml_rule_lines(text: &str) -> Vec<usize> {
    let (names, headers) = toml_scan(text);
    if headers.is_empty() || names.len() == headers.len() {
        return names;
    }
    headers
        .iter()
        .enumerate()
        .map(|(k, &h)| {
            let end = headers.get(k + 1).copied().unwrap_or(usize::MAX);
            names
                .iter()
                .copied()
                .find(|&n| n > h && n < end)
                .unwrap_or(h)
        })
        .collect()
}

/// The line of each rule of a JSON rule file, in order: its own `"name"`'s, or where the rule
/// starts when it has none (a rule that is not an object, `5`, had taken the next rule's name
/// line, and every rule after it the line of the one after). Read as far as the text goes (a
/// file with a slip further on still has its first rules), in one pass.
fn json_rule_lines(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let (mut depth, mut line, mut i) = (0usize, 1usize, 0usize);
    // The last string at the top level was the key "rules"; inside its array; awaiting an
    // element's first byte.
    let (mut rules_key, mut in_rules, mut expect) = (false, false, false);
    // Each rule's first line, and its own "name" key's line once found.
    let mut rules: Vec<(usize, Option<usize>)> = Vec::new();
    while i < bytes.len() {
        let c = bytes[i];
        if expect && !c.is_ascii_whitespace() {
            expect = false;
            if c != b']' {
                rules.push((line, None));
            }
        }
        match c {
            b'\n' => line += 1,
            b'"' => {
                let (start, at_line) = (i + 1, line);
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    } else if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                let word = text.get(start..i.min(bytes.len()));
                if depth == 1 {
                    rules_key = word == Some("rules");
                }
                // A key of the rule itself (not of its "when" or "answer"), followed by a colon.
                let key = text
                    .get(i + 1..)
                    .is_some_and(|rest| rest.trim_start().starts_with(':'));
                if in_rules
                    && depth == 3
                    && key
                    && word == Some("name")
                    && let Some((_, name)) = rules.last_mut()
                {
                    name.get_or_insert(at_line);
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if c == b'[' && depth == 2 && rules_key {
                    (in_rules, expect) = (true, true);
                }
            }
            b']' | b'}' => {
                if in_rules && depth == 2 {
                    in_rules = false;
                }
                depth = depth.saturating_sub(1);
            }
            b',' if in_rules && depth == 2 => expect = true,
            _ => {}
        }
        i += 1;
    }
    rules
        .into_iter()
        .map(|(first, name)| name.unwrap_or(first))
        .collect()
}

/// The recipes shipped under `assets/rules/`, by file name.
pub const RECIPES: [(&str, &str); 3] = [
    (
        "fail-twice-then-succeed.json",
        include_str!("../assets/rules/fail-twice-then-succeed.json"),
    ),
    (
        "every-third-503-retry-after.json",
        include_str!("../assets/rules/every-third-503-retry-after.json"),
    ),
    (
        "time-out-once.json",
        include_str!("../assets/rules/time-out-once.json"),
    ),
];

/// The recipe a missing file's name is like: the same words in another case, or with
/// another extension (`Time-Out-Once`, `every-third-503-retry-after.toml`).
fn recipe_near(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?.to_lowercase();
    let stem = name
        .rsplit_once('.')
        .filter(|(_, ext)| matches!(*ext, "json" | "toml" | "yaml" | "yml" | "txt"))
        .map_or(name.as_str(), |(stem, _)| stem);
    RECIPES
        .into_iter()
        .map(|(recipe, _)| recipe)
        .find(|recipe| recipe.strip_suffix(".json") == Some(stem))
}

/// [`RuleError::NoFile`]'s message.
fn no_rule_file(path: &str, near: &Option<&'static str>) -> String {
    let stem = |r: &str| r.strip_suffix(".json").unwrap_or(r).to_owned();
    match near {
        Some(recipe) => format!(
            "there is no rule file {path}; did you mean Hookscope's own recipe {}? (give --rules {})",
            stem(recipe),
            stem(recipe)
        ),
        None => format!(
            "there is no rule file {path} (check the path; Hookscope's own recipes, given by name, are {})",
            RECIPES
                .iter()
                .map(|(r, _)| stem(r))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The recipe whose file name `path` ends with, with or without its `.json`.
fn recipe_named(path: &Path) -> Option<(&'static str, &'static str)> {
    let name = path.file_name()?.to_str()?;
    RECIPES
        .into_iter()
        .find(|(recipe, _)| *recipe == name || recipe.strip_suffix(".json") == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recipe named as in the README (`assets/rules/…`) loads where there is no such file
    /// (an installed binary, another directory), and by its bare name; a file that is there is
    /// read, and a missing file that names no recipe is still an error.
    #[test]
    fn a_recipe_loads_by_its_name_where_there_is_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("assets/rules/fail-twice-then-succeed.json");
        let (rules, recipe) = RuleSet::load_or_recipe(&missing).unwrap();
        assert_eq!(recipe, Some("fail-twice-then-succeed.json"));
        let shipped = RuleSet::parse("r", RECIPES[0].1).unwrap();
        assert_eq!(rules.rules, shipped.rules);
        let (_, recipe) = RuleSet::load_or_recipe(Path::new("time-out-once")).unwrap();
        assert_eq!(recipe, Some("time-out-once.json"));
        // A file of that name is the user's, and is read.
        let own = dir.path().join("time-out-once.json");
        std::fs::write(
            &own,
            r#"{"rules": [{"name": "mine", "answer": {"status": 418}}]}"#,
        )
        .unwrap();
        let (rules, recipe) = RuleSet::load_or_recipe(&own).unwrap();
        assert_eq!((recipe, rules.rules[0].name.as_str()), (None, "mine"));
        // A missing file names the recipes, and the one meant where the name is near one
        // (another case, another extension); it is not loaded in its place.
        let nope = RuleSet::load_or_recipe(&dir.path().join("nope.json")).unwrap_err();
        assert!(
            matches!(nope, RuleError::NoFile { near: None, .. }),
            "{nope}"
        );
        assert!(
            nope.to_string().ends_with(
                "nope.json (check the path; Hookscope's own recipes, given by name, are fail-twice-then-succeed, every-third-503-retry-after, time-out-once)"
            ),
            "{nope}"
        );
        for typed in [
            "Time-Out-Once",
            "every-third-503-retry-after.toml",
            "FAIL-TWICE-THEN-SUCCEED.JSON",
        ] {
            let e = RuleSet::load_or_recipe(Path::new(typed)).unwrap_err();
            let RuleError::NoFile {
                near: Some(near), ..
            } = &e
            else {
                panic!("{typed}: {e}")
            };
            let stem = near.strip_suffix(".json").unwrap();
            assert_eq!(
                stem,
                typed.to_lowercase().split('.').next().unwrap(),
                "{typed}"
            );
            assert_eq!(
                e.to_string(),
                format!(
                    "there is no rule file {typed}; did you mean Hookscope's own recipe {stem}? (give --rules {stem})"
                )
            );
        }
    }

    fn call(attempt: u32) -> CallFacts<'static> {
        CallFacts {
            event: Some("status-report"),
            webhook_id: Some("234"),
            path: "/hook",
            attempt: Some(attempt),
            body: b"[{\"to\":\"1111111\",\"status\":{\"type\":\"DELIVERED\"}}]",
        }
    }

    /// A control character or a line break typed inside a text of a TOML rule file is named
    /// where it is, with what to write (toml said "invalid basic string", or read the rest of
    /// a split text as a key on the next line).
    #[test]
    fn a_raw_control_character_in_a_toml_text_is_named() {
        let cases = [
            (
                "[[rules]]\nname = \"a\u{1b}b\"\n[rules.answer]\nstatus = 503\n",
                "r.toml: line 2, column 10: a text holds the control character U+001B as it is: TOML takes it only as an escape, \\u001B",
            ),
            (
                "[[rules]]\nname = \"a\rb\"\n[rules.answer]\nstatus = 503\n",
                "r.toml: line 2, column 10: a text holds a carriage return as it is",
            ),
            (
                "[[rules]]\nname = 'a\u{7f}b'\n[rules.answer]\nstatus = 503\n",
                "r.toml: line 2, column 10: a text holds the control character U+007F",
            ),
            (
                "[[rules]]\nname = \"first\nsecond\"\n[rules.answer]\nstatus = 503\n",
                "r.toml: line 2, column 14: a text in \"…\" holds a line break as it is: write it \\n",
            ),
        ];
        for (text, says) in cases {
            let e = RuleSet::parse("r.toml", text).unwrap_err().to_string();
            assert!(e.starts_with(says), "{text:?}: {e}");
        }
        // A tab is TOML's to take, and a text over several lines in triple quotes too.
        let fine = "[[rules]]\nname = \"a\tb\"\n[rules.answer]\nstatus = 503\n";
        assert!(RuleSet::parse("r.toml", fine).is_ok());
        let lines = "[[rules]]\nname = \"\"\"first\nsecond\"\"\"\n[rules.answer]\nstatus = 503\n";
        assert!(RuleSet::parse("r.toml", lines).is_ok());
    }

    #[test]
    fn json_syntax_errors_are_said_in_plain_words() {
        let ok = r#"{"rules": [{"name": "a", "answer": {"status": 503}}]}"#;
        assert!(RuleSet::parse("r.json", ok).is_ok());
        let cases = [
            (
                format!("{ok}\n}}"),
                "there is more after the end of the rule file",
            ),
            (
                r#"{"rules": [{"name": "a", "answer": {"status": 503},}]}"#.to_owned(),
                "a comma before a closing } or ]",
            ),
            (
                r#"{"rules": [{"name": "a", "answer": {"status": 503}}]"#.to_owned(),
                "the file ends inside an object: a } is missing",
            ),
            (
                r#"{rules: []}"#.to_owned(),
                "a name in an object must be in double quotes",
            ),
            (
                r#"{"rules": [{"name": "a" "answer": {"status": 503}}]}"#.to_owned(),
                "a , (before the next field) or a } (to close the object) was expected here",
            ),
            (
                r#"{"rules": [{"name": 'a'}]}"#.to_owned(),
                "a value was expected here",
            ),
            // A raw control character in a text, named for what it is, with its escape.
            (
                "{\"rules\": [{\"name\": \"a\nb\"}]}".to_owned(),
                "line 1, column 23: a text holds a line break as it is: JSON takes it only as an escape, \\n",
            ),
            (
                "{\"rules\": [{\"name\": \"a\tb\"}]}".to_owned(),
                "a text holds a tab as it is: JSON takes it only as an escape, \\t",
            ),
            (
                "{\"rules\": [{\"name\": \"a\u{1b}[31m\"}]}".to_owned(),
                "line 1, column 23: a text holds the control character U+001B as it is: JSON takes it only as an escape, \\u001b",
            ),
            (
                "{\"rules\": [\n{\"name\": \"a\r\"}]}".to_owned(),
                "line 2, column 12: a text holds a carriage return as it is: JSON takes it only as an escape, \\r",
            ),
        ];
        // A whole number too large for its field is quoted as typed, not as the float serde
        // read it as (`1e+20`); so is one not whole.
        let cases = cases.into_iter().chain([
            (
                r#"{"rules": [{"name": "a", "answer": {"status": 100000000000000000000}}]}"#.to_owned(),
                "a number too large, or not whole: `100000000000000000000`, expected a whole number (a status code from 200 to 599)",
            ),
            (
                "{\"rules\": [\n  {\"name\": \"a\", \"when\": {\"attempt\": {\"equals\": 2.50}},\n \"answer\": {\"status\": 503}}]}".to_owned(),
                "line 2, column 51: a number too large, or not whole: `2.50`, expected a whole number from 1 to 4294967295",
            ),
            (
                r#"{"rules": [{"name": "a", "answer": {"status": 1E+21}}]}"#.to_owned(),
                "`1E+21`",
            ),
        ]);
        for (text, says) in cases {
            let e = RuleSet::parse("r.json", &text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
            assert!(e.contains("line "), "{e}");
            for parser in ["trailing", "EOF", "expected value", "key must"] {
                assert!(!e.contains(parser), "{e}");
            }
        }
    }

    #[test]
    fn a_message_value_is_compared_as_the_file_gives_it() {
        let body =
            br#"[{"to":"+27123","creditCost":1.0,"numberOfParts":2,"flag":true,"subtype":null}]"#;
        let facts = CallFacts { body, ..call(1) };
        let matches = |cond: &str| {
            let text = format!(
                r#"{{"rules": [{{"name": "n", "when": {{"message": {cond}}}, "answer": {{"status": 503}}}}]}}"#
            );
            let mut r = RuleSet::parse("x", &text).unwrap_or_else(|e| panic!("{cond}: {e}"));
            r.decide(&facts).is_some()
        };
        // Numbers by value, given as numbers or as text.
        assert!(matches(r#"{"field": "creditCost", "equals": 1}"#));
        assert!(matches(r#"{"field": "creditCost", "equals": "1"}"#));
        assert!(matches(r#"{"field": "numberOfParts", "equals": 2.0}"#));
        assert!(!matches(r#"{"field": "numberOfParts", "equals": 3}"#));
        // Text only by its text: "+27123" is not the number 27123.
        assert!(!matches(r#"{"field": "to", "equals": 27123}"#));
        assert!(matches(r#"{"field": "to", "equals": "+27123"}"#));
        assert!(matches(r#"{"field": "flag", "equals": true}"#));
        assert!(matches(r#"{"field": "subtype", "equals": "null"}"#));
        // Whole numbers exactly: ids run past 2^53, where floats no longer tell them apart.
        let big = br#"[{"id":9007199254740992}]"#;
        let facts_big = CallFacts {
            body: big,
            ..call(1)
        };
        let mut r = RuleSet::parse(
            "x",
            r#"{"rules": [{"name": "n", "when": {"message": {"field": "id", "equals": 9007199254740993}}, "answer": {"status": 503}}]}"#,
        )
        .unwrap();
        assert!(r.decide(&facts_big).is_none(), "…993 is not …992");
        // A field no message can have, and a null written as null, are refused with a reason.
        for (cond, says) in [
            (r#"{"field": "a..b", "equals": "x"}"#, "names no field"),
            (r#"{"field": "", "equals": "x"}"#, "names no field"),
            (
                r#"{"field": "to", "equals": null}"#,
                "write \"equals\": \"null\"",
            ),
        ] {
            let text = format!(
                r#"{{"rules": [{{"name": "n", "when": {{"message": {cond}}}, "answer": {{"status": 503}}}}]}}"#
            );
            let e = RuleSet::parse("x", &text).unwrap_err().to_string();
            assert!(e.contains(says), "{cond}: {e}");
        }
        // The same in TOML.
        let toml = "[[rules]]\nname = \"n\"\nwhen.message = { field = \"numberOfParts\", equals = 2 }\nanswer = { status = 503 }\n";
        let mut r = RuleSet::parse("x.toml", toml).unwrap();
        assert!(r.decide(&facts).is_some());
    }

    fn recipe(name: &str) -> RuleSet {
        let (_, text) = RECIPES.iter().find(|(n, _)| *n == name).unwrap();
        RuleSet::parse(name, text).unwrap()
    }

    #[test]
    fn fail_twice_then_succeed() {
        let mut r = recipe("fail-twice-then-succeed.json");
        let codes: Vec<u16> = (1..=4)
            .map(|a| r.decide(&call(a)).map_or(0, |(_, ans)| ans.status))
            .collect();
        assert_eq!(codes, vec![503, 503, 200, 200]);
    }

    #[test]
    fn every_third_call() {
        let mut r = recipe("every-third-503-retry-after.json");
        let got: Vec<Option<u16>> = (0..6)
            .map(|_| r.decide(&call(1)).map(|(_, a)| a.status))
            .collect();
        assert_eq!(got, vec![None, None, Some(503), None, None, Some(503)]);
        // A preview says what the next call would get and takes no turn.
        let mut r = recipe("every-third-503-retry-after.json");
        r.decide(&call(1));
        r.decide(&call(1));
        for _ in 0..3 {
            assert_eq!(r.preview(&call(1)).map(|(_, a)| a.status), Some(503));
        }
        assert_eq!(r.decide(&call(1)).map(|(_, a)| a.status), Some(503));
        assert_eq!(r.preview(&call(1)), None);
        let reparsed = RuleSet::parse("x", &r.to_json()).unwrap();
        assert_eq!(reparsed.rules[0].answer.retry_after.as_deref(), Some("120"));
    }

    #[test]
    fn a_rule_retires_after_times() {
        let mut r = recipe("time-out-once.json");
        let first = r.decide(&call(1)).unwrap().1;
        assert!(first.delay_ms > 30_000);
        assert!(r.retired(0));
        assert_eq!(
            r.in_force(),
            r.rules.len() - 1,
            "a retired rule is no longer in force"
        );
        assert_eq!(
            r.decide(&call(1)),
            None,
            "retired: the fixed choice answers"
        );
        assert_eq!(r.used(0), 1);
    }

    #[test]
    fn conditions() {
        let rule = |when: Condition| {
            RuleSet::new(vec![Rule {
                name: "r".into(),
                when,
                answer: Answer::status(500),
                times: None,
            }])
        };
        let hit = |mut r: RuleSet, c: CallFacts<'_>| r.decide(&c).is_some();
        let to = |v: &str| Condition {
            message: Some(FieldCond {
                field: "to".into(),
                equals: Some(v.into()),
                contains: None,
            }),
            ..Condition::default()
        };
        assert!(hit(rule(to("1111111")), call(1)));
        assert!(!hit(rule(to("222")), call(1)));
        let status = Condition {
            message: Some(FieldCond {
                field: "status.type".into(),
                equals: None,
                contains: Some("DELIV".into()),
            }),
            ..Condition::default()
        };
        assert!(hit(rule(status), call(1)));
        // An object by the values inside it, not by its keys; and never "equal" to text.
        let on_status = |equals: Option<&str>, contains: Option<&str>| Condition {
            message: Some(FieldCond {
                field: "status".into(),
                equals: equals.map(Into::into),
                contains: contains.map(Into::into),
            }),
            ..Condition::default()
        };
        assert!(hit(rule(on_status(None, Some("DELIVERED"))), call(1)));
        assert!(!hit(rule(on_status(None, Some("type"))), call(1)));
        assert!(!hit(rule(on_status(Some("DELIVERED"), None)), call(1)));
        let ev = |e: &str| Condition {
            event: Some(e.into()),
            ..Condition::default()
        };
        assert!(hit(rule(ev("status-report")), call(1)));
        assert!(!hit(rule(ev("incoming-message")), call(1)));
        let wh = Condition {
            webhook_id: Some("999".into()),
            ..Condition::default()
        };
        assert!(!hit(rule(wh), call(1)));
        let path = Condition {
            path: Some("/hook".into()),
            ..Condition::default()
        };
        assert!(hit(rule(path), call(1)));
        let eq = Condition {
            attempt: Some(AttemptCond {
                equals: Some(2),
                ..AttemptCond::default()
            }),
            ..Condition::default()
        };
        assert!(!hit(rule(eq.clone()), call(1)));
        assert!(hit(rule(eq), call(2)));
        let least = Condition {
            attempt: Some(AttemptCond {
                at_least: Some(3),
                ..AttemptCond::default()
            }),
            ..Condition::default()
        };
        assert!(!hit(rule(least.clone()), call(2)));
        assert!(hit(rule(least), call(3)));
    }

    #[test]
    fn the_first_match_wins() {
        let mut r = RuleSet::new(vec![
            Rule {
                name: "a".into(),
                when: Condition::default(),
                answer: Answer::status(429),
                times: None,
            },
            Rule {
                name: "b".into(),
                when: Condition::default(),
                answer: Answer::status(500),
                times: None,
            },
        ]);
        assert_eq!(r.decide(&call(1)).map(|(i, _)| i), Some(0));
    }

    #[test]
    fn files_round_trip() {
        let r = recipe("fail-twice-then-succeed.json");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("rules.json");
        r.save(&p).unwrap();
        assert_eq!(RuleSet::load(&p).unwrap().rules, r.rules);
    }

    #[test]
    fn toml_files_read_as_their_json_and_round_trip() {
        let toml = r#"# Fail twice, then succeed.
[[rules]]
name = "fail the first 2 attempts"
when = { attempt = { at_most = 2 }, event = "status-report" }
answer = { status = 503, retry_after = 120 }

[[rules]]
name = "then succeed"
times = 3

[rules.answer]
status = 200
body = "ok"
"#;
        let json = r#"{"rules": [
            {"name": "fail the first 2 attempts",
             "when": {"attempt": {"at_most": 2}, "event": "status-report"},
             "answer": {"status": 503, "retry_after": "120"}},
            {"name": "then succeed", "times": 3, "answer": {"status": 200, "body": "ok"}}]}"#;
        let from_toml = RuleSet::parse("rules.toml", toml).unwrap();
        assert_eq!(
            from_toml.rules,
            RuleSet::parse("rules.json", json).unwrap().rules
        );
        // Without an extension (the editor, the saved settings), the text says which.
        assert_eq!(
            RuleSet::parse("the editor", toml).unwrap().rules,
            from_toml.rules
        );
        // Written as TOML and read back, for every recipe too.
        for r in [
            from_toml,
            recipe("fail-twice-then-succeed.json"),
            recipe("every-third-503-retry-after.json"),
            recipe("time-out-once.json"),
        ] {
            let text = r.to_toml();
            assert!(text.contains("[[rules]]"), "{text}");
            assert!(!text.contains("null"), "{text}");
            assert_eq!(
                RuleSet::parse("r.toml", &text).unwrap().rules,
                r.rules,
                "{text}"
            );
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("rules.toml");
            r.save(&p).unwrap();
            assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
            assert_eq!(RuleSet::load(&p).unwrap().rules, r.rules);
        }
    }

    #[test]
    fn the_editor_text_is_written_in_the_format_the_file_name_asks_for() {
        let json = recipe("fail-twice-then-succeed.json").to_json();
        let as_toml = text_for(Path::new("x.toml"), &json).unwrap();
        assert!(as_toml.contains("[[rules]]"));
        assert_eq!(
            RuleSet::parse("x.toml", &as_toml).unwrap().rules,
            recipe("fail-twice-then-succeed.json").rules
        );
        // Its own format, or a name that does not say: as it is, comments and all.
        let commented = "# mine\n[[rules]]\nname = \"x\"\nanswer = { status = 503 }\n";
        assert_eq!(text_for(Path::new("x.toml"), commented).unwrap(), commented);
        assert_eq!(
            text_for(Path::new("x.rules"), commented).unwrap(),
            commented
        );
        assert_eq!(text_for(Path::new("x.json"), &json).unwrap(), json);
        let back = text_for(Path::new("x.json"), commented).unwrap();
        assert!(back.trim_start().starts_with('{'), "{back}");
        // Rules with an error cannot be turned into the other format: said, not written.
        let e = text_for(Path::new("x.toml"), "{\"rules\": [}").unwrap_err();
        assert!(e.to_string().starts_with("the rules: line 1"), "{e}");
    }

    #[test]
    fn the_format_is_the_extension_else_the_text() {
        use RuleFormat::*;
        for (path, text, format) in [
            ("r.toml", "{", Toml),
            ("R.TOML", "", Toml),
            ("r.json", "[[rules]]", Json),
            ("editor", "{\"rules\": []}", Json),
            ("editor", "  [ {\"name\": 1} ]", Json),
            ("editor", "[]", Json),
            ("editor", "", Json),
            ("editor", "[[rules]]\nname = \"x\"", Toml),
            ("editor", "# comment\n[[rules]]", Toml),
            ("editor", "rules = []", Toml),
            ("r.txt", "[rules]", Toml),
        ] {
            assert_eq!(RuleFormat::of(path, text), format, "{path} {text:?}");
        }
    }

    #[test]
    fn toml_rules_are_found_by_the_line_of_their_name() {
        let text = "rules = [ {name = \"a\", answer = {status = 200}}, {name = \"b\", answer = {status = 200}},\n  {name = \"c\", answer = {status = 700}} ]\n";
        assert_eq!(toml_name_lines(text), vec![1, 1, 2]);
        let e = RuleSet::parse("r.toml", text).unwrap_err().to_string();
        assert!(e.starts_with("r.toml: line 2: rule 3 (\"c\")"), "{e}");
        // A name inside a multi-line string is not a rule's.
        let text = "[[rules]]\nname = \"a\"\nanswer = { status = 200, body = \"\"\"\nname = x\n\"\"\" }\n[[rules]]\nname = \"b\"\n";
        assert_eq!(toml_name_lines(text), vec![2, 7]);
    }

    #[test]
    fn a_bad_toml_file_names_the_line_and_the_reason() {
        let err = |text: &str| RuleSet::parse("r.toml", text).unwrap_err().to_string();
        // Not TOML at all.
        let e = err("[[rules]]\nname = \"x\"\nanswer = { status = 503\n");
        assert!(e.starts_with("r.toml: line 3, column"), "{e}");
        // A misspelt key.
        let e = err("[[rules]]\nname = \"x\"\nanswer = { status = 503 }\nwhne = {}\n");
        assert!(e.starts_with("r.toml: line 4, column 1:"), "{e}");
        assert!(e.contains("unknown field `whne`"), "{e}");
        // A rule that cannot be used names the line of its name.
        let e = err(
            "[[rules]]\nname = \"ok\"\nanswer = { status = 200 }\n\n[[rules]]\nname = \"bad\"\nanswer = { status = 700 }\n",
        );
        assert!(e.starts_with("r.toml: line 6: rule 2 (\"bad\")"), "{e}");
        // One with no name names its table's line, and the rules after it keep theirs (serde's
        // "missing field `name`" had pointed at line 1).
        let e = err(
            "[[rules]]\nname = \"ok\"\nanswer = { status = 200 }\n\n[[rules]]\nanswer = { status = 503 }\n\n[[ rules ]]\nname = \"late\"\nanswer = { status = 200 }\n",
        );
        assert_eq!(
            e,
            "r.toml: line 5: rule 2: a rule needs a name: each call records the rule that answered it"
        );
        assert_eq!(
            toml_rule_lines("[[rules]]\nanswer = {}\n[[rules]]\nname = \"b\"\n"),
            vec![1, 4]
        );
        // A header inside a multi-line text is not one.
        assert_eq!(
            toml_rule_lines(
                "[[rules]]\nanswer = { body = \"\"\"\n[[rules]]\n\"\"\" }\n[[rules]]\nname = \"b\"\n"
            ),
            vec![1, 6]
        );
        // A list of rules at the top is not a rule file in either format.
        let e = err("rules = 5\n");
        assert!(e.contains("line 1"), "{e}");
        // YAML is said to be what it is.
        let yaml = "rules:\n  - name: x\n    answer:\n      status: 503\n";
        let e = RuleSet::parse("r.yaml", yaml).unwrap_err().to_string();
        assert!(e.starts_with("r.yaml: line 1, column"), "{e}");
        assert!(e.ends_with("(read as TOML: Hookscope reads rule files in JSON, {\"rules\": [ ... ]}, or TOML, [[rules]] tables, not YAML)"), "{e}");
        let e = RuleSet::parse("r.txt", yaml).unwrap_err().to_string();
        assert!(!e.contains("YAML"), "{e}");
    }

    #[test]
    fn a_bad_file_names_the_line_and_the_reason() {
        let text = "{\"rules\": [\n  {\"name\": \"x\",\n   \"whne\": {},\n   \"answer\": {\"status\": 503}}\n]}";
        let e = RuleSet::parse("rules.json", text).unwrap_err().to_string();
        assert!(e.starts_with("rules.json: line 3, column"), "{e}");
        assert!(e.contains("unknown field `whne`"), "{e}");
        let text = "{\"rules\": [{\"name\": \"x\", \"answer\": {\"status\": 99}}]}";
        let e = RuleSet::parse("rules.json", text).unwrap_err().to_string();
        assert!(e.contains("line 1: rule 1 (\"x\")"), "{e}");
        assert!(e.contains("200-599"), "{e}");
        // A key the answer does not know is an error, not dropped in silence.
        let text = "{\"rules\": [\n {\"name\": \"n\", \"answer\": {\"status\": 503, \"retry-after\": \"120\"}}\n]}";
        let e = RuleSet::parse("rules.json", text).unwrap_err().to_string();
        assert!(e.starts_with("rules.json: line 2, column"), "{e}");
        assert!(e.contains("unknown field `retry-after`"), "{e}");
        // A check after parsing names the line where the rule is, past a value "name".
        let text = "{\"rules\": [\n {\"name\": \"a \\\"name\\\": b\",\n  \"when\": {\"message\": {\"field\": \"name\", \"equals\": \"x\"}},\n  \"answer\": {\"status\": 200}},\n {\"name\": \"late\",\n  \"when\": {\"every_nth\": 0}, \"answer\": {\"status\": 200}}\n]}";
        let e = RuleSet::parse("rules.json", text).unwrap_err().to_string();
        assert!(
            e.starts_with("rules.json: line 5: rule 2 (\"late\"): every_nth"),
            "{e}"
        );
        let text = "{\"rules\": [\n {\"name\": \"never\", \"answer\": {\"status\": 500}, \"times\": 0}\n]}";
        let e = RuleSet::parse("rules.json", text).unwrap_err().to_string();
        assert!(
            e.starts_with("rules.json: line 2: rule 1 (\"never\"): times must be 1 or more"),
            "{e}"
        );
        let e = RuleSet::parse("r.json", "{\"rules\": [")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1"), "{e}");
        assert!(matches!(
            RuleSet::load(Path::new("/nonexistent/r.json")),
            Err(RuleError::Read { .. })
        ));
    }

    /// A rule file past 64 MiB, or one without end (`/dev/zero`), is refused without being
    /// read whole: `--rules /dev/zero` had grown to gigabytes, saying nothing.
    #[test]
    fn a_rule_file_too_large_or_endless_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(MAX_RULE_FILE + 1).unwrap();
        let e = RuleSet::load(&big).unwrap_err();
        assert!(matches!(e, RuleError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
        if Path::new("/dev/zero").exists() {
            let e = RuleSet::load(Path::new("/dev/zero")).unwrap_err();
            assert!(matches!(e, RuleError::TooLarge { .. }), "{e}");
        }
        // At the limit it is read (and then parsed: no rules in it).
        file.set_len(MAX_RULE_FILE).unwrap();
        assert!(matches!(RuleSet::load(&big), Err(RuleError::Syntax { .. })));
        // Not text: where it stops being text.
        std::fs::write(&big, b"{\"rules\xff").unwrap();
        let e = RuleSet::load(&big).unwrap_err().to_string();
        assert!(e.contains("not UTF-8 text (byte 8 is not)"), "{e}");
    }

    fn one_rule(rule: &str) -> Result<RuleSet, String> {
        RuleSet::parse("r.json", &format!("{{\"rules\": [{rule}]}}")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_rule_that_could_never_match_is_refused_with_the_reason() {
        let e = one_rule(
            r#"{"name": "t", "when": {"event": "status-reprt"}, "answer": {"status": 503}}"#,
        )
        .unwrap_err();
        assert!(
            e.contains("\"status-reprt\" is not one the service sends"),
            "{e}"
        );
        for (attempt, why) in [
            (
                r#"{"at_most": 2, "at_least": 5}"#,
                "at_least 5 is more than at_most 2",
            ),
            (
                r#"{"equals": 7, "at_most": 3}"#,
                "equals 7 is over at_most 3",
            ),
            (
                r#"{"equals": 3, "at_least": 4}"#,
                "equals 3 is under at_least 4",
            ),
            (r#"{"equals": 0}"#, "numbered from 1"),
            (r#"{"at_most": 0}"#, "numbered from 1"),
        ] {
            let e = one_rule(&format!(
                r#"{{"name": "a", "when": {{"attempt": {attempt}}}, "answer": {{"status": 503}}}}"#
            ))
            .unwrap_err();
            assert!(e.contains("the attempt condition can never hold"), "{e}");
            assert!(e.contains(why), "{attempt}: {e}");
        }
        // What can hold is taken.
        one_rule(r#"{"name": "a", "when": {"attempt": {"equals": 3, "at_least": 2, "at_most": 3}, "event": "incoming-message"}, "answer": {"status": 503}}"#)
            .unwrap();
        // An empty attempt condition says nothing (it matched any call with an attempt header),
        // as a message condition without equals or contains would not.
        let e = one_rule(r#"{"name": "a", "when": {"attempt": {}}, "answer": {"status": 503}}"#)
            .unwrap_err();
        assert!(
            e.contains("the attempt condition needs \"equals\", \"at_most\" or \"at_least\""),
            "{e}"
        );
    }

    #[test]
    fn a_file_cut_short_at_a_line_start_names_column_1() {
        let text = "{\"rules\": [{\"name\": \"a\", \"answer\": {\"status\": 503}\n";
        let e = RuleSet::parse("truncated.json", text)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("truncated.json: line 2, column 1: "), "{e}");
    }

    #[test]
    fn retry_after_may_be_a_number_and_a_list_is_not_a_rule_file() {
        let r =
            one_rule(r#"{"name": "n", "answer": {"status": 503, "retry_after": 120}}"#).unwrap();
        assert_eq!(r.rules[0].answer.retry_after.as_deref(), Some("120"));
        for bad in ["-5", "1.5", "true"] {
            let e = one_rule(&format!(
                r#"{{"name": "n", "answer": {{"status": 503, "retry_after": {bad}}}}}"#
            ))
            .unwrap_err();
            assert!(e.contains("line 1"), "{e}");
            assert!(
                e.contains("expected seconds (a whole number such as 120) or an HTTP date"),
                "{e}"
            );
        }
        // An event with spaces around it is the event (a header value has none).
        let r = one_rule(
            r#"{"name": "n", "when": {"event": " status-report "}, "answer": {"status": 503}}"#,
        )
        .unwrap();
        assert_eq!(r.rules[0].when.event.as_deref(), Some("status-report"));
        let e = RuleSet::parse("r.json", "[]").unwrap_err().to_string();
        assert!(e.contains("a rule file is an object"), "{e}");
    }

    #[test]
    fn rules_that_could_not_be_told_apart_or_never_match_are_refused() {
        let two = |a: &str, b: &str| {
            RuleSet::parse("r.json", &format!("{{\"rules\": [{a},\n{b}]}}"))
                .map_err(|e| e.to_string())
        };
        let e = two(
            r#"{"name": "x", "answer": {"status": 503}}"#,
            r#"{"name": "x", "answer": {"status": 200}}"#,
        )
        .unwrap_err();
        assert!(
            e.contains("line 2: rule 2 (\"x\"): another rule before it is also named"),
            "{e}"
        );
        let e = one_rule(r#"{"name": " ", "answer": {"status": 503}}"#).unwrap_err();
        assert!(e.contains("a rule needs a name"), "{e}");
        // Left out, the same words and the rule's line (not serde's "missing field").
        let e = one_rule(r#"{"answer": {"status": 503}}"#).unwrap_err();
        assert!(e.contains("rule 1: a rule needs a name"), "{e}");
        let e = one_rule(r#"{"name": "n", "when": {"path": "hook"}, "answer": {"status": 503}}"#)
            .unwrap_err();
        assert!(e.contains("the path \"hook\" never matches"), "{e}");
        assert!(e.contains("(\"/hook\")"), "{e}");
        // The query is not part of the path a condition is matched against.
        let e = one_rule(
            r#"{"name": "n", "when": {"path": "/hook?secret=1"}, "answer": {"status": 503}}"#,
        )
        .unwrap_err();
        assert!(e.contains("without the query (write \"/hook\")"), "{e}");
        let e =
            one_rule(r#"{"name": "n", "when": {"webhook_id": " "}, "answer": {"status": 503}}"#)
                .unwrap_err();
        assert!(e.contains("webhook_id is empty"), "{e}");
        let e = one_rule(
            r#"{"name": "n", "when": {"message": {"field": "to", "equals": "1", "contains": "2"}}, "answer": {"status": 503}}"#,
        )
        .unwrap_err();
        assert!(e.contains("can never hold"), "{e}");
        // Both, when they agree, are fine.
        one_rule(
            r#"{"name": "n", "when": {"message": {"field": "to", "equals": "1111111", "contains": "111"}}, "answer": {"status": 503}}"#,
        )
        .unwrap();
    }

    #[test]
    fn a_path_matches_as_it_arrives_or_decoded() {
        let rules = r#"{"rules": [
            {"name": "accent", "when": {"path": "/crème"}, "answer": {"status": 501}},
            {"name": "space", "when": {"path": "/a b"}, "answer": {"status": 502}},
            {"name": "encoded", "when": {"path": "/x%2Fy"}, "answer": {"status": 503}}]}"#;
        let mut r = RuleSet::parse("r.json", rules).unwrap();
        let mut status = |path: &'static str| {
            r.decide(&CallFacts { path, ..call(1) })
                .map(|(_, a)| a.status)
        };
        assert_eq!(status("/cr%C3%A8me"), Some(501));
        assert_eq!(status("/crème"), Some(501));
        assert_eq!(status("/a%20b"), Some(502));
        // Written encoded, it matches as it arrives.
        assert_eq!(status("/x%2Fy"), Some(503));
        assert_eq!(status("/creme"), None);
    }

    #[test]
    fn an_empty_file_says_so() {
        for text in ["", "  \n"] {
            let e = RuleSet::parse("r.json", text).unwrap_err().to_string();
            assert!(e.contains("line 1, column 1: the file is empty"), "{e}");
        }
    }

    /// Each says what is wrong in the file's terms: a TOML date-time is not a table, a rule
    /// with no name is not quoted as named "", a fragment is not a query.
    #[test]
    fn a_refusal_names_what_the_file_holds() {
        let e = RuleSet::parse(
            "r.toml",
            "[[rules]]\nname = \"n\"\nanswer = { status = 503, retry_after = 1979-05-27T07:32:00Z }\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("\"retry_after\" is a TOML date-time (1979-05-27T07:32:00Z)"),
            "{e}"
        );
        assert!(e.contains("an HTTP date in quotes"), "{e}");
        assert!(!e.contains("table"), "{e}");
        let e = RuleSet::parse(
            "r.toml",
            "[[rules]]\nname = 1979-05-27T07:32:00Z\nanswer = { status = 503 }\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("\"name\" is a TOML date-time (1979-05-27T07:32:00Z), which no rule field takes: write the value in quotes, as text"),
            "{e}"
        );
        let e = RuleSet::parse("r.toml", "rules = [1979-05-27T07:32:00Z]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("rule 1: a rule must be an object"), "{e}");
        // Named at its own line, and the rules after it at theirs: `5` has no name, and had
        // been told at line 1, the rule after it at the line of the one after that.
        let text = "{\"rules\": [\n  {\"name\": \"a\", \"answer\": {\"status\": 200}},\n  5,\n  {\"name\": \"c\", \"answer\": {\"status\": 200}}\n]}";
        assert_eq!(json_rule_lines(text), vec![2, 3, 4]);
        let e = RuleSet::parse("r.json", text).unwrap_err().to_string();
        assert!(
            e.contains("line 3: rule 2: a rule must be an object"),
            "{e}"
        );
        // The rule's own name, not a "name" key of its "when"; a value "name" is no key; a
        // nameless rule ending on the line where the next one's name is keeps its own line.
        let spread = "{\"x\": \"rules\", \"rules\": [\n{\n \"when\": {\"name\": 1},\n \"a\": \"name\",\n \"name\": \"a\"\n}, [\n], {\"answer\": {}\n}, {\"name\": \"b\"}\n]}";
        assert_eq!(json_rule_lines(spread), vec![5, 6, 7, 8]);
        for rules in ["[5]", "[\"a\"]", "[null]", "[[]]"] {
            let e = RuleSet::parse("r.json", &format!("{{\"rules\": {rules}}}"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("rule 1: a rule must be an object"),
                "{rules}: {e}"
            );
        }
        let e = one_rule(r#"{"name": "f", "when": {"path": "/a#b"}, "answer": {"status": 503}}"#)
            .unwrap_err();
        assert!(
            e.contains("alone, and a request never sends a fragment (#...) (write \"/a\")"),
            "{e}"
        );
        let e = one_rule(r#"{"name": "q", "when": {"path": "/a?b"}, "answer": {"status": 503}}"#)
            .unwrap_err();
        assert!(e.contains("alone, without the query (write \"/a\")"), "{e}");
    }

    #[test]
    fn a_rule_body_over_32_mib_is_refused_as_body_file_is() {
        let big = "x".repeat(crate::responder::MAX_ANSWER_BODY + 1);
        let rule = format!(r#"{{"name": "huge", "answer": {{"status": 200, "body": "{big}"}}}}"#);
        let e = one_rule(&rule).unwrap_err();
        assert!(
            e.contains("rule 1 (\"huge\")"),
            "{}",
            &e[..200.min(e.len())]
        );
        assert!(
            e.contains("bytes is longer than 32 MiB (33554432 bytes), the most an answer takes"),
            "{}",
            &e[..200.min(e.len())]
        );
    }

    #[test]
    fn lists_where_tables_belong_and_answers_without_a_status_are_refused() {
        for (rule, says) in [
            (
                r#"{"name": "n", "answer": [503]}"#,
                "\"answer\" must be an object",
            ),
            (
                r#"{"name": "n", "answer": {}}"#,
                "the answer needs a status",
            ),
            (
                r#"{"name": "n", "when": {"attempt": [1, 2]}, "answer": {"status": 503}}"#,
                "\"attempt\" must be an object",
            ),
            // Serde would word these as a type ("integer `1`, expected a string").
            (
                r#"{"name": "n", "when": [1], "answer": {"status": 503}}"#,
                "\"when\" must be an object",
            ),
        ] {
            let e = one_rule(rule).unwrap_err();
            assert!(e.contains(says), "{e}");
            assert!(e.contains("rule 1 (\"n\")"), "{e}");
        }
        let e = RuleSet::parse("r.toml", "[[rules]]\nname = \"n\"\nanswer = [503]\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("r.toml: line 2: rule 1"), "{e}");
        assert!(e.contains("\"answer\" must be an object"), "{e}");
        // A list or an object where text belongs, in the file's words.
        for (rule, says) in [
            (
                r#"{"name": "n", "when": {"event": ["status-report"]}, "answer": {"status": 503}}"#,
                "column 43: a list, where text is expected",
            ),
            (
                r#"{"name": "n", "answer": {"status": 503, "body": {"error": "busy"}}}"#,
                "an object (a table in TOML), where text is expected",
            ),
        ] {
            let e = one_rule(rule).unwrap_err();
            assert!(e.contains(says), "{e}");
            assert!(!e.contains("sequence") && !e.contains("map,"), "{e}");
            assert!(!e.contains("invalid type"), "{e}");
        }
        let e = RuleSet::parse(
            "r.toml",
            "[[rules]]\nname = \"n\"\nanswer = { status = 200, delay_ms = 99999999999999999999 }\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`99999999999999999999`, too large"), "{e}");
        assert!(!e.contains("i128"), "{e}");
        // A file in the other format than its name says is told so.
        let toml = "[[rules]]\nname = \"n\"\nanswer = { status = 503 }\n";
        let e = RuleSet::parse("r.json", toml).unwrap_err().to_string();
        assert!(
            e.contains(
                "this is a TOML rule file, but its name says otherwise: rename it to end in .toml"
            ),
            "{e}"
        );
        let json = r#"{"rules": [{"name": "n", "answer": {"status": 503}}]}"#;
        let e = RuleSet::parse("r.toml", json).unwrap_err().to_string();
        assert!(e.contains("rename it to end in .json"), "{e}");
        // A Retry-After is sent trimmed, as --retry-after sends it.
        let r = one_rule(r#"{"name": "n", "answer": {"status": 503, "retry_after": " 120 "}}"#)
            .unwrap();
        assert_eq!(r.rules[0].answer.retry_after.as_deref(), Some("120"));
        // A byte-order mark before the text (Notepad) is no part of it.
        RuleSet::parse("r.json", &format!("\u{feff}{json}")).unwrap();
        // Fine ones still load, in both formats.
        one_rule(r#"{"name": "n", "answer": {"status": 503}}"#).unwrap();
        RuleSet::parse(
            "r.toml",
            "[[rules]]\nname = \"n\"\nanswer = { status = 503 }\n",
        )
        .unwrap();
    }

    #[test]
    fn reasons_are_in_the_rule_file_words_and_a_webhook_id_may_be_a_number() {
        let r =
            one_rule(r#"{"name": "n", "when": {"webhook_id": 234}, "answer": {"status": 410}}"#)
                .unwrap();
        assert_eq!(r.rules[0].when.webhook_id.as_deref(), Some("234"));
        for (rule, says) in [
            (
                r#"{"name": "n", "answer": {"status": "503"}}"#,
                "expected a whole number",
            ),
            (
                r#"{"name": "n", "when": {"attempt": 2}, "answer": {"status": 503}}"#,
                "\"attempt\" must be an object (a table in TOML), such as {\"at_most\": 2}",
            ),
            (
                r#"{"name": "n", "when": {"webhook_id": true}, "answer": {"status": 503}}"#,
                "expected a webhook id",
            ),
            (
                r#"{"name": "n", "answer": 503}"#,
                "\"answer\" must be an object (a table in TOML), such as {\"status\": 503}",
            ),
            (
                r#"{"name": "n", "answer": {"status": 99999}}"#,
                "the number `99999`, expected a whole number (a status code from 200 to 599)",
            ),
            (
                r#"{"name": "n", "when": "x", "answer": {"status": 503}}"#,
                "\"when\" must be an object",
            ),
        ] {
            let e = one_rule(rule).unwrap_err();
            assert!(e.contains(says), "{e}");
            assert!(!e.contains("struct") && !e.contains("u16"), "{e}");
        }
    }
}
