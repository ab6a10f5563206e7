//! The Jupyter kernel's decoding of a received message: ZeroMQ frames
//! (identities, `<IDS|MSG>`, signature, header, parent header, metadata,
//! content, buffers) through `RawMessage::from_multipart` (signature
//! checked with a key, or none) and `kernel/src/decode.rs`. No panic
//! whatever the frames; an error has a message; a decoded message keeps
//! its type and its buffers.
use arbitrary::Arbitrary;
use bytes::Bytes;
use jupyter_protocol::JupyterMessageContent;
use jupyter_zmq_client::connection::RawMessage;
use ring::hmac;
use serde_json::{json, Value};

#[path = "../../kernel/src/decode.rs"]
mod decode;

const KEY: &[u8] = b"fuzz-key";
const DELIMITER: &[u8] = b"<IDS|MSG>";
const MSG_TYPES: &[&str] = &[
    "execute_request",
    "complete_request",
    "inspect_request",
    "is_complete_request",
    "history_request",
    "kernel_info_request",
    "comm_info_request",
    "shutdown_request",
    "interrupt_request",
    "input_reply",
    "",
];

/// A header's field: well-formed, or anything.
#[derive(Arbitrary, Debug)]
enum Field {
    Good,
    Missing,
    Null,
    Number(i64),
    Text(String),
}

#[derive(Arbitrary, Debug)]
struct HeaderSpec {
    msg_id: Field,
    username: Field,
    session: Field,
    date: Field,
    msg_type: Field,
    msg_type_index: u8,
    version: Field,
}

#[derive(Arbitrary, Debug)]
enum Part {
    Header(HeaderSpec),
    EmptyObject,
    Json(JsonValue),
    Bytes(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum JsonValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    List(Vec<JsonValue>),
    Object(Vec<(String, JsonValue)>),
}

#[derive(Arbitrary, Debug)]
enum Signature {
    /// The right HMAC (or empty without a key).
    Right,
    Wrong(Vec<u8>),
    Missing,
}

#[derive(Arbitrary, Debug)]
enum Input {
    Message {
        identities: Vec<Vec<u8>>,
        delimiter: bool,
        signed: bool,
        signature: Signature,
        parts: Vec<Part>,
    },
    Frames {
        signed: bool,
        frames: Vec<Vec<u8>>,
    },
}

fn field(f: &Field, good: Value) -> Option<Value> {
    match f {
        Field::Good => Some(good),
        Field::Missing => None,
        Field::Null => Some(Value::Null),
        Field::Number(n) => Some(json!(n)),
        Field::Text(t) => Some(json!(t)),
    }
}

fn json_of(v: &JsonValue, depth: usize) -> Value {
    match v {
        JsonValue::Null => Value::Null,
        JsonValue::Bool(b) => json!(b),
        JsonValue::Int(i) => json!(i),
        JsonValue::Float(x) => json!(x),
        JsonValue::Text(t) => json!(t),
        JsonValue::List(l) if depth < 8 => {
            Value::Array(l.iter().map(|v| json_of(v, depth + 1)).collect())
        }
        JsonValue::Object(o) if depth < 8 => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), json_of(v, depth + 1)))
                .collect(),
        ),
        _ => Value::Null,
    }
}

fn part_bytes(p: &Part) -> Vec<u8> {
    match p {
        Part::Header(h) => {
            let mut o = serde_json::Map::new();
            let ty = MSG_TYPES[h.msg_type_index as usize % MSG_TYPES.len()];
            for (k, f, good) in [
                (
                    "msg_id",
                    &h.msg_id,
                    json!("6d1c5c1e-0b1a-4d7e-9d62-1c1f0d7d2f01"),
                ),
                ("username", &h.username, json!("fuzz")),
                ("session", &h.session, json!("f0e1d2c3")),
                ("date", &h.date, json!("2024-05-01T12:00:00.000000Z")),
                ("msg_type", &h.msg_type, json!(ty)),
                ("version", &h.version, json!("5.4")),
            ] {
                if let Some(v) = field(f, good) {
                    o.insert(k.into(), v);
                }
            }
            serde_json::to_vec(&Value::Object(o)).unwrap()
        }
        Part::EmptyObject => b"{}".to_vec(),
        Part::Json(v) => serde_json::to_vec(&json_of(v, 0)).unwrap(),
        Part::Bytes(b) => b.clone(),
    }
}

/// Nothing to gather before the first input.
pub fn init() {}

/// One input, as libFuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(arbitrary::Unstructured::new(data)) else {
        return;
    };
    let key = hmac::Key::new(hmac::HMAC_SHA256, KEY);
    let (frames, mac): (Vec<Bytes>, Option<hmac::Key>) = match &input {
        Input::Message {
            identities,
            delimiter,
            signed,
            signature,
            parts,
        } => {
            let mut frames: Vec<Bytes> = identities
                .iter()
                .take(4)
                .map(|i| Bytes::from(i.clone()))
                .collect();
            if *delimiter {
                frames.push(Bytes::from_static(DELIMITER));
            }
            let jparts: Vec<Vec<u8>> = parts.iter().take(8).map(part_bytes).collect();
            match signature {
                Signature::Right => {
                    let sig = if *signed {
                        let mut ctx = hmac::Context::with_key(&key);
                        for p in jparts.iter().take(4) {
                            ctx.update(p);
                        }
                        ctx.sign()
                            .as_ref()
                            .iter()
                            .map(|b| format!("{b:02x}"))
                            .collect::<String>()
                    } else {
                        String::new()
                    };
                    frames.push(Bytes::from(sig));
                }
                Signature::Wrong(s) => frames.push(Bytes::from(s.clone())),
                Signature::Missing => {}
            }
            frames.extend(jparts.into_iter().map(Bytes::from));
            (frames, signed.then_some(key))
        }
        Input::Frames { signed, frames } => (
            frames
                .iter()
                .take(16)
                .map(|f| Bytes::from(f.clone()))
                .collect(),
            signed.then_some(key),
        ),
    };
    let n_frames = frames.len();
    // What server.rs does with what the socket received.
    let Ok(multipart) = zeromq::ZmqMessage::try_from(frames) else {
        assert_eq!(n_frames, 0);
        return;
    };
    let raw = match RawMessage::from_multipart(multipart, &mac) {
        Ok(raw) => raw,
        Err(e) => {
            assert!(
                !e.to_string().trim().is_empty(),
                "from_multipart: empty error message"
            );
            return;
        }
    };
    let n_parts = raw.jparts.len();
    match decode::decode(raw) {
        Ok(m) => {
            match &m.content {
                JupyterMessageContent::UnknownMessage(u) => {
                    assert_eq!(u.msg_type, m.header.msg_type)
                }
                other => panic!("decoded as {other:?}"),
            }
            assert_eq!(m.buffers.len(), n_parts - 4);
        }
        Err(e) => assert!(!e.trim().is_empty(), "decode: empty error message"),
    }
}
