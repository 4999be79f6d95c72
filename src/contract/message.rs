//! The message object: the element of every webhook payload and the output of List Messages.

use serde::{Deserialize, Serialize};

/// One message as the service sends it. Unknown fields are ignored (the service adds fields over
/// time); ids stay strings because they can exceed 2^53. Read from an answer, only the id is
/// required: a field missing or null reads as empty (a client must not call the answer to a
/// send that was accepted, and charged, a failure for a field it does not use). The contract
/// checks of a webhook call do not go through this type ([`super::validate`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: String,
    #[serde(rename = "type", default, deserialize_with = "null_as_default")]
    pub kind: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub from: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub to: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub body: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub encoding: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub protocol_id: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub message_class: i64,
    /// May be null while the message is still being accepted.
    pub number_of_parts: Option<i64>,
    /// May be null while the message is still being accepted.
    pub credit_cost: Option<f64>,
    #[serde(default)]
    pub user_supplied_id: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub submission: Submission,
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: MessageStatus,
    #[serde(default)]
    pub related_sent_message_id: Option<String>,
}

/// A field that may be missing or null: its empty value then.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submission {
    pub id: String,
    /// ISO 8601 UTC timestamp, kept as the service wrote it.
    pub date: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageStatus {
    /// `type.subtype`, with `null` for a missing subtype.
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub subtype: Option<String>,
}

impl MessageStatus {
    pub fn new(kind: &str, subtype: Option<&str>) -> Self {
        MessageStatus {
            id: super::status_id(kind, subtype),
            kind: kind.to_owned(),
            subtype: subtype.map(str::to_owned),
        }
    }

    /// Whether `id` keeps the `type.subtype` rule.
    pub fn id_is_consistent(&self) -> bool {
        self.id == super::status_id(&self.kind, self.subtype.as_deref())
    }
}

impl Message {
    /// A typical message, used by samples, the demo and benchmarks.
    pub fn sample_status_report(id: &str) -> Message {
        Message {
            id: id.to_owned(),
            kind: "SENT".to_owned(),
            from: "+27001234567".to_owned(),
            to: "+27007654321".to_owned(),
            body: "Your parcel has been dispatched.".to_owned(),
            encoding: "TEXT".to_owned(),
            protocol_id: 0,
            message_class: 2,
            number_of_parts: Some(1),
            credit_cost: Some(1.0),
            user_supplied_id: Some("order-1042".to_owned()),
            submission: Submission {
                id: format!("sub-{id}"),
                date: "2026-11-21T14:02:11Z".to_owned(),
            },
            status: MessageStatus::new("DELIVERED", None),
            related_sent_message_id: None,
        }
    }

    pub fn sample_incoming(id: &str) -> Message {
        Message {
            id: id.to_owned(),
            kind: "RECEIVED".to_owned(),
            from: "+27007654321".to_owned(),
            to: "+27001234567".to_owned(),
            body: "YES, please deliver after 5pm".to_owned(),
            encoding: "TEXT".to_owned(),
            protocol_id: 0,
            message_class: 1,
            number_of_parts: Some(1),
            credit_cost: Some(0.0),
            user_supplied_id: None,
            submission: Submission {
                id: format!("sub-{id}"),
                date: "2026-11-21T14:05:40Z".to_owned(),
            },
            status: MessageStatus::new("DELIVERED", None),
            related_sent_message_id: Some("1000000000000000001".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_contract_shape_and_ignores_unknown_fields() {
        let json = r#"{"id":"12345678901234567890","type":"SENT","from":"+27001234567",
            "to":"+27007654321","body":"hi","encoding":"TEXT","protocolId":0,"messageClass":2,
            "numberOfParts":1,"creditCost":1.5,"userSuppliedId":"u1",
            "submission":{"id":"s1","date":"2026-01-01T00:00:00Z"},
            "status":{"id":"DELIVERED.null","type":"DELIVERED","subtype":null},
            "relatedSentMessageId":null,"somethingNew":{"x":1}}"#;
        let m: Message = serde_json::from_str(json).unwrap();
        assert_eq!(m.id, "12345678901234567890", "ids stay exact strings");
        assert_eq!(m.kind, "SENT");
        assert_eq!(m.credit_cost, Some(1.5));
        assert!(m.status.id_is_consistent());
        let back = serde_json::to_value(&m).unwrap();
        assert_eq!(back["protocolId"], 0);
        assert_eq!(back["status"]["id"], "DELIVERED.null");
        assert!(back.get("somethingNew").is_none());
    }

    /// An accepted send whose answer leaves out, or nulls, a field the client does not use is
    /// still read: only the id is needed.
    #[test]
    fn only_the_id_is_needed_to_read_an_answer() {
        let json = r#"[{"id":"7","type":"SENT","to":"+27001","protocolId":null,"messageClass":null,
            "from":null,"status":{"id":"ACCEPTED.null","type":"ACCEPTED","subtype":null}}]"#;
        let m: Vec<Message> = serde_json::from_str(json).unwrap();
        assert_eq!((m[0].id.as_str(), m[0].to.as_str()), ("7", "+27001"));
        assert_eq!((m[0].protocol_id, m[0].from.as_str()), (0, ""));
        assert_eq!(m[0].status.id, "ACCEPTED.null");
        assert!(
            serde_json::from_str::<Message>(r#"{"type":"SENT"}"#).is_err(),
            "no id"
        );
    }

    #[test]
    fn status_id_consistency() {
        assert!(MessageStatus::new("FAILED", Some("EXPIRED")).id_is_consistent());
        let wrong = MessageStatus {
            id: "DELIVERED".into(),
            kind: "DELIVERED".into(),
            subtype: None,
        };
        assert!(!wrong.id_is_consistent());
    }
}
