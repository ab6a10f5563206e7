//! Iopub output of the request being executed. Printed text is gathered
//! into one `stream` message until something else is sent, the request
//! ends, or the text has waited 200 ms (ipykernel's flush interval), so a
//! cell's lines arrive together but a long command still shows what came
//! before it.

use crate::reply::broadcast;
use jupyter_protocol::JupyterMessage;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

const FLUSH_AFTER: Duration = Duration::from_millis(200);

#[derive(Clone)]
pub struct Outbox {
    state: Arc<Mutex<State>>,
}

struct State {
    iopub: UnboundedSender<JupyterMessage>,
    /// The request output belongs to; `None` outside a request or for a
    /// silent one (its output is not sent).
    parent: Option<JupyterMessage>,
    stdout: String,
    since: Instant,
}

impl State {
    fn flush(&mut self) {
        if self.stdout.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.stdout);
        if let Some(parent) = &self.parent {
            let msg = broadcast("stream", json!({"name": "stdout", "text": text}), parent);
            let _ = self.iopub.send(msg);
        }
    }
}

impl Outbox {
    /// An outbox sending on `iopub`, with a thread that flushes text that
    /// has waited too long.
    pub fn new(iopub: UnboundedSender<JupyterMessage>) -> Outbox {
        let state = Arc::new(Mutex::new(State {
            iopub,
            parent: None,
            stdout: String::new(),
            since: Instant::now(),
        }));
        let weak: Weak<Mutex<State>> = Arc::downgrade(&state);
        std::thread::Builder::new()
            .name("passlab-flush".into())
            .spawn(move || loop {
                std::thread::sleep(FLUSH_AFTER / 4);
                let Some(state) = weak.upgrade() else { return };
                let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
                if !s.stdout.is_empty() && s.since.elapsed() >= FLUSH_AFTER {
                    s.flush();
                }
            })
            .expect("cannot start the output thread");
        Outbox { state }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Output from now on belongs to `parent` (nothing is sent if `None`).
    pub fn begin(&self, parent: Option<JupyterMessage>) {
        let mut s = self.lock();
        s.flush();
        s.parent = parent;
    }

    /// Sends what is gathered; output after this is not sent.
    pub fn end(&self) {
        let mut s = self.lock();
        s.flush();
        s.parent = None;
    }

    /// Text for standard output.
    pub fn print(&self, text: &str) {
        let mut s = self.lock();
        if s.stdout.is_empty() {
            s.since = Instant::now();
        }
        s.stdout.push_str(text);
        if !text.ends_with('\n') {
            s.stdout.push('\n');
        }
    }

    /// Sends a message for the current request, after the text gathered
    /// so far.
    pub fn send(&self, msg_type: &str, content: Value) {
        let mut s = self.lock();
        s.flush();
        if let Some(parent) = &s.parent {
            let msg = broadcast(msg_type, content, parent);
            let _ = s.iopub.send(msg);
        }
    }
}
