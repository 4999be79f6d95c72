//! The service API's resources (service-api.md): webhooks, submissions, error bodies. Unknown
//! response fields are ignored; ids of messages stay strings.

use crate::contract::TriggerScope;
use serde::{Deserialize, Serialize};

/// A webhook as the API answers it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    pub id: u64,
    pub name: String,
    pub url: String,
    pub trigger_scope: TriggerScope,
    pub active: bool,
    #[serde(default)]
    pub contact_email_address: Option<String>,
    /// As the service answers it; `None` when it does not say (or says null).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_web_app: Option<bool>,
    /// service-api.md's Webhook response does not list it: `None` when the service does not
    /// say, never a guess (an update would write the guess back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoke_option: Option<InvokeOption>,
}

/// One message per call, or up to 10.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InvokeOption {
    #[default]
    One,
    Many,
}

/// The body of create and update.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEntry {
    pub name: String,
    pub url: String,
    pub trigger_scope: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_email_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_web_app: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoke_option: Option<InvokeOption>,
}

#[cfg(test)]
impl Webhook {
    /// An active SENT webhook `id` called `name`, calling the default receiver: for tests.
    pub(crate) fn sample(id: u64, name: &str) -> Webhook {
        Webhook {
            id,
            name: name.to_owned(),
            url: "http://127.0.0.1:8787/hook".into(),
            trigger_scope: TriggerScope::Sent,
            active: true,
            contact_email_address: None,
            on_web_app: None,
            invoke_option: None,
        }
    }
}

impl WebhookEntry {
    pub fn new(name: &str, url: &str, scope: TriggerScope) -> Self {
        WebhookEntry {
            name: name.to_owned(),
            url: url.to_owned(),
            trigger_scope: scope.as_str().to_owned(),
            active: None,
            contact_email_address: None,
            on_web_app: None,
            invoke_option: None,
        }
    }

    /// The entry that recreates `w` (for enable, disable and edits). What the service did not
    /// say is left out, so the service keeps to its own defaults (see
    /// [`WebhookEntry::unknown_invoke_option`]).
    pub fn from_webhook(w: &Webhook) -> Self {
        WebhookEntry {
            name: w.name.clone(),
            url: w.url.clone(),
            trigger_scope: w.trigger_scope.as_str().to_owned(),
            active: Some(w.active),
            contact_email_address: w.contact_email_address.clone(),
            on_web_app: w.on_web_app,
            invoke_option: w.invoke_option,
        }
    }

    /// An update sent without an invoke option takes the service's default (ONE), whatever the
    /// webhook had: the warning to give when that is not known to be what it had.
    pub fn unknown_invoke_option(&self, id: u64) -> Option<String> {
        self.invoke_option.is_none().then(|| {
            format!(
                "the service does not say whether webhook {id} sends one message per call or up to 10, so the update sends neither and the service's default (ONE) applies; give --invoke MANY to keep up to 10 per call"
            )
        })
    }
}

/// A recipient in the object form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recipient {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One submission. The client sends the object forms of `to` and `from`, which the service
/// accepts either way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubmissionEntry {
    pub to: Vec<Recipient>,
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_supplied_id: Option<String>,
}

impl SubmissionEntry {
    pub fn to_number(number: &str, body: &str) -> Self {
        SubmissionEntry {
            to: vec![Recipient {
                kind: "INTERNATIONAL".into(),
                address: Some(number.to_owned()),
                name: None,
            }],
            body: body.to_owned(),
            user_supplied_id: None,
        }
    }
}

/// The documented error body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The base of error `type` URIs the emulator writes.
pub const ERROR_TYPE_BASE: &str = "https://docs.example/json/v1/errors/";

impl ErrorBody {
    pub fn new(kind: &str, title: &str, status: u16, detail: impl Into<String>) -> Self {
        ErrorBody {
            kind: format!("{ERROR_TYPE_BASE}#{kind}"),
            title: title.to_owned(),
            status,
            detail: Some(detail.into()),
        }
    }

    /// The fragment naming the kind: `not-found`, `bad-request`, `insufficient-credits`...
    pub fn fragment(&self) -> &str {
        self.kind.rsplit_once('#').map_or("", |(_, f)| f)
    }
}
