//! Answer rules for QA: ordered rules, each a condition and an answer; the first match wins and
//! the fixed choice is the fallback. A rule can retire after N uses. Rule files are JSON.
//!
//! ```json
//! {"rules": [
//!   {"name": "fail the first 2 attempts", "when": {"attempt": {"at_most": 2}},
//!    "answer": {"status": 503}},
//!   {"name": "then succeed", "answer": {"status": 200}}
//! ]}
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
            let text = match cur {
                Value::String(s) => s.clone(),
                Value::Null => "null".to_owned(),
                other => other.to_string(),
            };
            self.equals.as_ref().is_none_or(|e| &text == e)
                && self
                    .contains
                    .as_ref()
                    .is_none_or(|c| text.contains(c.as_str()))
        })
    }
}

/// Every part that is set must match.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// The event header value: `status-report` or `incoming-message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("cannot read the rule file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: line {line}, column {column}: {reason}")]
    Syntax {
        path: String,
        line: usize,
        column: usize,
        reason: String,
    },
    #[error("{path}: line {line}: rule {index} (\"{name}\"): {reason}")]
    Invalid {
        path: String,
        /// Where the rule's name is given.
        line: usize,
        index: usize,
        name: String,
        reason: String,
    },
    #[error("cannot write the rule file {path}: {source}")]
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

    pub fn retired(&self, i: usize) -> bool {
        self.rules
            .get(i)
            .and_then(|r| r.times)
            .is_some_and(|t| self.used(i) >= u64::from(t))
    }

    /// The first rule that matches, counting the call against it; `None` leaves the call to the
    /// fixed choice.
    pub fn decide(&mut self, call: &CallFacts<'_>) -> Option<(usize, Answer)> {
        let needs_body = self.rules.iter().any(|r| r.when.message.is_some());
        let messages: Vec<Value> = if needs_body {
            match serde_json::from_slice::<Value>(call.body) {
                Ok(Value::Array(items)) => items,
                _ => Vec::new(),
            }
        } else {
            Vec::new()
        };
        for i in 0..self.rules.len() {
            if self.retired(i) {
                continue;
            }
            let w = &self.rules[i].when;
            let base = w.event.as_deref().is_none_or(|e| call.event == Some(e))
                && w.webhook_id
                    .as_deref()
                    .is_none_or(|id| call.webhook_id == Some(id))
                && w.path.as_deref().is_none_or(|p| call.path == p)
                && w.attempt.as_ref().is_none_or(|a| a.matches(call.attempt))
                && w.message.as_ref().is_none_or(|m| m.matches(&messages));
            if !base {
                continue;
            }
            self.seen[i] += 1;
            if let Some(n) = w.every_nth
                && (n == 0 || !self.seen[i].is_multiple_of(u64::from(n)))
            {
                continue;
            }
            self.used[i] += 1;
            return Some((i, self.rules[i].answer.clone()));
        }
        None
    }

    /// Parse a rule file's text; errors name the line and the reason.
    pub fn parse(path: &str, text: &str) -> Result<RuleSet, RuleError> {
        if text.trim_start().starts_with('[') {
            return Err(RuleError::Syntax {
                path: path.to_owned(),
                line: 1,
                column: 1,
                reason: "the file is a list; a rule file is an object: {\"rules\": [ ... ]}".into(),
            });
        }
        let mut file: RuleFile = serde_json::from_str(text).map_err(|e| RuleError::Syntax {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            reason: e
                .to_string()
                .split(" at line")
                .next()
                .unwrap_or("")
                .to_owned(),
        })?;
        // Header values arrive without surrounding spaces: a rule's are taken the same way.
        for r in &mut file.rules {
            for value in [&mut r.when.event, &mut r.when.webhook_id]
                .into_iter()
                .flatten()
            {
                *value = value.trim().to_owned();
            }
        }
        let name_lines = name_lines(text);
        for (i, r) in file.rules.iter().enumerate() {
            let invalid = |reason: String| RuleError::Invalid {
                path: path.to_owned(),
                line: name_lines.get(i).copied().unwrap_or(1),
                index: i + 1,
                name: r.name.clone(),
                reason,
            };
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
                    "the message condition on \"{}\" needs \"equals\" or \"contains\"",
                    m.field
                )));
            }
        }
        Ok(RuleSet::new(file.rules))
    }

    pub fn load(path: &Path) -> Result<RuleSet, RuleError> {
        let text = std::fs::read_to_string(path).map_err(|source| RuleError::Read {
            path: path.display().to_string(),
            source,
        })?;
        RuleSet::parse(&path.display().to_string(), &text)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&RuleFile {
            rules: self.rules.clone(),
        })
        .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> Result<(), RuleError> {
        std::fs::write(path, self.to_json() + "\n").map_err(|source| RuleError::Write {
            path: path.display().to_string(),
            source,
        })
    }
}

/// The line of each `"name":` key in a rule file's text, in order: rule i's is the i-th (every
/// rule has a name, and nothing else in a rule is keyed "name"; a value "name" is followed by
/// no colon, and a quote inside a string is escaped).
fn name_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("\"name\"").map(|i| i + from) {
        from = at + 6;
        let escaped = text[..at].ends_with('\\');
        if !escaped && text[from..].trim_start().starts_with(':') {
            lines.push(text[..at].matches('\n').count() + 1);
        }
    }
    lines
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

#[cfg(test)]
mod tests {
    use super::*;

    fn call(attempt: u32) -> CallFacts<'static> {
        CallFacts {
            event: Some("status-report"),
            webhook_id: Some("234"),
            path: "/hook",
            attempt: Some(attempt),
            body: b"[{\"to\":\"1111111\",\"status\":{\"type\":\"DELIVERED\"}}]",
        }
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
}
