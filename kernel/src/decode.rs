//! Decoding a received message: the JSON parts of a `RawMessage` (whose
//! signature `RawMessage::from_multipart` has verified) as a
//! `JupyterMessage`. The content is kept as the client sent it (the kernel
//! reads the fields it needs), so a request that leaves out optional fields
//! is still answered. A malformed message is an error, never a panic: the
//! fuzz target `kernel_message` (fuzz/) includes this file.

use jupyter_protocol::{Header, JupyterMessage, JupyterMessageContent, UnknownMessage};
use jupyter_zmq_client::connection::RawMessage;
use serde_json::Value;

/// The message `raw` holds: header, parent header (none when it is not a
/// header, e.g. `{}`), metadata, content, then buffers.
pub fn decode(raw: RawMessage) -> Result<JupyterMessage, String> {
    let RawMessage {
        zmq_identities,
        jparts,
    } = raw;
    if jparts.len() < 4 {
        return Err(format!(
            "a message needs 4 parts after the signature (header, parent header, metadata, content), got {}",
            jparts.len()
        ));
    }
    let json = |i: usize, what: &str| -> Result<Value, String> {
        serde_json::from_slice(&jparts[i]).map_err(|e| format!("malformed JSON in the {what}: {e}"))
    };
    let header: Header =
        serde_json::from_value(json(0, "header")?).map_err(|e| format!("bad header: {e}"))?;
    let parent_header = serde_json::from_value(json(1, "parent header")?).ok();
    let metadata = json(2, "metadata")?;
    let content = json(3, "content")?;
    Ok(JupyterMessage {
        zmq_identities,
        parent_header,
        metadata,
        content: JupyterMessageContent::UnknownMessage(UnknownMessage {
            msg_type: header.msg_type.clone(),
            content,
        }),
        header,
        buffers: jparts[4..].to_vec(),
        channel: None,
    })
}
