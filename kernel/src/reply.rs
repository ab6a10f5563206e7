//! The contents of the messages the kernel sends, as the Jupyter messaging
//! protocol (5.3) spells them, built from the core's output.

use jupyter_protocol::{JupyterMessage, UnknownMessage};
use passlab::session::Bundle;
use serde_json::{json, Map, Value};

pub const PROTOCOL_VERSION: &str = "5.3";

/// A message of type `msg_type` answering or reporting on `parent`.
pub fn message(msg_type: &str, content: Value, parent: &JupyterMessage) -> JupyterMessage {
    JupyterMessage::new(
        UnknownMessage {
            msg_type: msg_type.to_string(),
            content,
        },
        Some(parent),
    )
}

/// A message that answers no request (the iopub welcome).
pub fn unprompted(msg_type: &str, content: Value) -> JupyterMessage {
    JupyterMessage::new(
        UnknownMessage {
            msg_type: msg_type.to_string(),
            content,
        },
        None,
    )
}

/// An iopub message: no routing identities (every subscriber gets it).
pub fn broadcast(msg_type: &str, content: Value, parent: &JupyterMessage) -> JupyterMessage {
    message(msg_type, content, parent).with_zmq_identities(Vec::new())
}

pub fn status(state: &str, parent: &JupyterMessage) -> JupyterMessage {
    broadcast("status", json!({ "execution_state": state }), parent)
}

pub fn kernel_info() -> Value {
    let version = env!("CARGO_PKG_VERSION");
    json!({
        "status": "ok",
        "protocol_version": PROTOCOL_VERSION,
        "implementation": "passlab",
        "implementation_version": version,
        "language_info": {
            "name": "passlab",
            "version": version,
            "mimetype": "text/x-passlab",
            "file_extension": ".plab",
            "pygments_lexer": "text",
            "codemirror_mode": "null"
        },
        "banner": format!(
            "passlab {version}: a workbench for compiler experiments on LLVM 19. :help lists the commands."
        ),
        "help_links": [],
        "debugger": false
    })
}

/// A bundle's data as Jupyter's MIME map.
pub fn data(bundle: &Bundle) -> Value {
    let mut map = Map::new();
    for (mime, value) in &bundle.data {
        map.insert(mime.clone(), Value::String(value.clone()));
    }
    Value::Object(map)
}

/// An error's `ename`, `evalue` and `traceback`.
pub fn error_fields(e: &passlab::Error) -> Value {
    let evalue = e.to_string();
    json!({
        "ename": format!("{:?}Error", e.kind()),
        "evalue": evalue,
        "traceback": evalue.lines().collect::<Vec<_>>(),
    })
}

/// `cursor_pos` counts Unicode characters (protocol 5.2+); the core counts
/// bytes.
pub fn byte_offset(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

pub fn char_offset(text: &str, bytes: usize) -> usize {
    text[..bytes.min(text.len())].chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_positions_convert_between_chars_and_bytes() {
        let s = ":run é,licm";
        assert_eq!(byte_offset(s, 6), 7);
        assert_eq!(char_offset(s, 7), 6);
        assert_eq!(byte_offset(s, 100), s.len());
    }

    #[test]
    fn errors_carry_kind_message_and_lines() {
        let e = passlab::Error::Invalid("two\nlines".into());
        let f = error_fields(&e);
        assert_eq!(f["ename"], "InvalidError");
        assert_eq!(f["traceback"], json!(["two", "lines"]));
    }
}
