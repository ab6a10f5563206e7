//! The `Session`, on the thread that reads the shell socket (see
//! `server`): it runs cells and answers the requests that need the
//! session's state (completion, inspection, is_complete, history),
//! publishing output on iopub as it comes.

use crate::outbox::Outbox;
use crate::reply;
use jupyter_protocol::JupyterMessage;
use passlab::session::{Bundle, Completeness, Item, Session};
use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedSender;

/// A reply's content, and whether the kernel should exit after sending it
/// (`:quit`).
pub struct Done {
    pub content: Value,
    pub exit: bool,
}

/// The reply to a request whose handling panicked.
fn internal_error(req: &JupyterMessage, panic: &Box<dyn std::any::Any + Send>) -> Done {
    let message = passlab::panic_message(panic);
    let evalue = format!(
        "internal error in {}: {message} (a bug in passlab: the session goes on)",
        req.message_type()
    );
    Done {
        content: json!({"status": "error", "ename": "InternalError", "evalue": evalue,
            "traceback": [evalue]}),
        exit: false,
    }
}

pub struct Executor {
    session: Session,
    count: u32,
    history: Vec<(u32, String)>,
    /// The text of each stored cell's result, by execution count.
    outputs: std::collections::HashMap<u32, String>,
    outbox: Outbox,
}

impl Executor {
    /// A new session whose output goes to `iopub`.
    pub fn new(iopub: UnboundedSender<JupyterMessage>) -> Executor {
        let mut session = Session::new();
        let outbox = Outbox::new(iopub);
        let progress = outbox.clone();
        // One display per long command, updated in place.
        let mut shown: Option<String> = None;
        let mut displays = 0u32;
        session.set_progress(move |p| {
            let (text, html) = if p.stage.is_empty() {
                (
                    format!("done: {} steps", p.total),
                    format!("<progress value='{0}' max='{0}'></progress> done", p.total),
                )
            } else {
                (
                    format!("[{}/{}] {}", p.done, p.total, p.stage),
                    format!(
                        "<progress value='{}' max='{}'></progress> {}",
                        p.done,
                        p.total,
                        p.stage.replace('&', "&amp;").replace('<', "&lt;")
                    ),
                )
            };
            let data = json!({"text/plain": text, "text/html": html});
            match &shown {
                None => {
                    displays += 1;
                    let id = format!("passlab-progress-{}-{displays}", std::process::id());
                    progress.send(
                        "display_data",
                        json!({"data": data, "metadata": {}, "transient": {"display_id": id}}),
                    );
                    shown = Some(id);
                }
                Some(id) => progress.send(
                    "update_display_data",
                    json!({"data": data, "metadata": {}, "transient": {"display_id": id}}),
                ),
            }
            if p.stage.is_empty() {
                shown = None;
            }
        });
        Executor {
            session,
            count: 0,
            history: Vec::new(),
            outputs: Default::default(),
            outbox,
        }
    }

    /// Answers one shell request. The session catches a panic in a
    /// command; this catches one anywhere else here (rendering, a reply),
    /// so that the session keeps serving.
    pub fn answer(&mut self, req: &JupyterMessage) -> Done {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            passlab::panic_point(&format!("kernel::{}", req.message_type()));
            self.handle(req)
        }))
        .unwrap_or_else(|panic| internal_error(req, &panic))
    }

    fn handle(&mut self, req: &JupyterMessage) -> Done {
        let content = serde_json::to_value(&req.content).unwrap_or(Value::Null);
        let text = |k: &str| {
            content
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let number = |k: &str| content.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
        let content = match req.message_type() {
            "execute_request" => return self.execute(req, &content),
            "complete_request" => self.complete(&text("code"), number("cursor_pos")),
            "inspect_request" => {
                let code = text("code");
                let pos = reply::byte_offset(&code, number("cursor_pos"));
                match self.session.inspect(&code, pos) {
                    Some(doc) => json!({"status": "ok", "found": true,
                        "data": {"text/plain": doc}, "metadata": {}}),
                    None => json!({"status": "ok", "found": false, "data": {}, "metadata": {}}),
                }
            }
            "is_complete_request" => match self.session.is_complete(&text("code")) {
                Completeness::Complete => json!({"status": "complete"}),
                Completeness::Incomplete => json!({"status": "incomplete", "indent": ""}),
                Completeness::Invalid(_) => json!({"status": "invalid"}),
            },
            "history_request" => self.history(&content),
            other => json!({"status": "error", "ename": "UnknownRequest",
                "evalue": format!("no handler for {other}"), "traceback": []}),
        };
        Done {
            content,
            exit: false,
        }
    }

    fn complete(&self, code: &str, cursor: usize) -> Value {
        let pos = reply::byte_offset(code, cursor);
        let (start, matches) = self.session.complete(code, pos);
        json!({
            "status": "ok",
            "matches": matches,
            "cursor_start": reply::char_offset(code, start),
            "cursor_end": reply::char_offset(code, pos),
            "metadata": {}
        })
    }

    fn history(&self, content: &Value) -> Value {
        let n = content.get("n").and_then(Value::as_u64).unwrap_or(10) as usize;
        let entries: Vec<&(u32, String)> = match content
            .get("hist_access_type")
            .and_then(Value::as_str)
            .unwrap_or("tail")
        {
            "range" => {
                let start = content.get("start").and_then(Value::as_i64).unwrap_or(0);
                let stop = content
                    .get("stop")
                    .and_then(Value::as_i64)
                    .unwrap_or(i64::MAX);
                self.history
                    .iter()
                    .filter(|(c, _)| (*c as i64) >= start && (*c as i64) < stop)
                    .collect()
            }
            "search" => {
                let pattern = content
                    .get("pattern")
                    .and_then(Value::as_str)
                    .unwrap_or("*");
                let unique = content
                    .get("unique")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let mut seen = std::collections::HashSet::new();
                let mut found: Vec<&(u32, String)> = self
                    .history
                    .iter()
                    .rev()
                    .filter(|(_, code)| glob(pattern, code))
                    .filter(|(_, code)| !unique || seen.insert(code.as_str()))
                    .take(n.max(1))
                    .collect();
                found.reverse();
                found
            }
            _ => {
                let skip = self.history.len().saturating_sub(n);
                self.history.iter().skip(skip).collect()
            }
        };
        let with_output = content
            .get("output")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let history: Vec<Value> = entries
            .iter()
            .map(|(c, code)| {
                if with_output {
                    json!([1, c, [code, self.outputs.get(c)]])
                } else {
                    json!([1, c, code])
                }
            })
            .collect();
        json!({"status": "ok", "history": history})
    }

    fn execute(&mut self, req: &JupyterMessage, content: &Value) -> Done {
        let code = content.get("code").and_then(Value::as_str).unwrap_or("");
        let silent = content
            .get("silent")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let store = !silent
            && content
                .get("store_history")
                .and_then(Value::as_bool)
                .unwrap_or(true);
        if store {
            self.count += 1;
            self.history.push((self.count, code.to_string()));
        }
        let count = self.count;
        let out = self.outbox.clone();
        out.begin((!silent).then(|| req.clone()));
        out.send(
            "execute_input",
            json!({"code": code, "execution_count": count}),
        );
        // The last command's last text or table is the cell's result
        // (execute_result); every other one is shown as it comes, a line of
        // text as printed output, a table as display_data.
        let mut held: Option<Bundle> = None;
        let display = |b: &Bundle| {
            if b.data.len() == 1 {
                out.print(b.plain());
            } else {
                out.send(
                    "display_data",
                    json!({"data": reply::data(b), "metadata": {}, "transient": {}}),
                );
            }
        };
        let result = self.session.execute_each(code, |output, last| {
            for item in output.items {
                if let Some(b) = held.take() {
                    display(&b);
                }
                match item {
                    Item::Stream(text) => out.print(&text),
                    Item::Stderr(text) => {
                        out.send("stream", json!({"name": "stderr", "text": text}))
                    }
                    Item::Display(b) if b.is_chart() => display(&b),
                    Item::Display(b) => held = Some(b),
                }
            }
            if !last {
                if let Some(b) = held.take() {
                    display(&b);
                }
            }
        });
        let exit = self.session.quit_requested();
        let done = match result {
            Ok(()) => {
                if let Some(b) = held {
                    self.outputs.insert(count, b.plain().to_string());
                    out.send(
                        "execute_result",
                        json!({"execution_count": count, "data": reply::data(&b), "metadata": {}}),
                    );
                }
                let payload = if exit {
                    json!([{"source": "ask_exit", "keepkernel": false}])
                } else {
                    json!([])
                };
                Done {
                    content: json!({"status": "ok", "execution_count": count,
                        "user_expressions": {}, "payload": payload}),
                    exit,
                }
            }
            Err(e) => {
                if let Some(b) = held {
                    display(&b);
                }
                let fields = reply::error_fields(&e);
                out.send("error", fields.clone());
                let mut content = fields;
                content["status"] = json!("error");
                content["execution_count"] = json!(count);
                content["user_expressions"] = json!({});
                content["payload"] = json!([]);
                Done {
                    content,
                    exit: false,
                }
            }
        };
        out.end();
        done
    }
}

/// Whether `text` matches the glob `pattern` as a whole (`*` any run, `?`
/// one character), as IPython's history search does.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn glob_matches_whole_inputs() {
        assert!(glob(":run*", ":run licm"));
        assert!(glob("*licm*", ":run mem2reg,licm,gvn"));
        assert!(glob(":r?n x", ":run x"));
        assert!(!glob(":run", ":run licm"));
        assert!(!glob("a*b", "acbd"));
    }
}
