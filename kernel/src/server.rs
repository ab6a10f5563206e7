//! The five sockets, on two threads. The session's thread reads the shell
//! socket and answers each request in turn, running cells itself (no hop
//! to another thread: a trivial command's round trip is the sockets'), so
//! requests run one at a time, in order. The main thread serves control
//! (interrupt, shutdown, kernel_info: answered at once, also while a cell
//! runs), the heartbeat, and iopub: an XPUB socket that greets each new
//! subscriber with `iopub_welcome`; every message for it goes through one
//! channel, so output always precedes the `idle` that ends its request,
//! and a long cell's output goes out while it runs; a request's reply
//! waits until its output is out (as ipykernel's does: a client reading
//! iopub after the reply finds it there at once). A message whose
//! signature does not verify is logged to standard error and dropped.

use crate::executor::Executor;
use crate::reply::{self, message, status};
use anyhow::Context;
use jupyter_protocol::{ConnectionInfo, JupyterMessage};
use jupyter_zmq_client::connection::RawMessage;
use jupyter_zmq_client::{
    create_kernel_control_connection, create_kernel_heartbeat_connection,
    create_kernel_iopub_xpub_connection, create_kernel_shell_connection,
    create_kernel_stdin_connection, KernelShellConnection, SubscriptionEvent,
};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::sync::oneshot;

/// Serves the kernel described by the connection file until shutdown.
pub fn run(connection_file: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(connection_file)
        .with_context(|| format!("cannot read {}", connection_file.display()))?;
    let info: ConnectionInfo = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a connection file", connection_file.display()))?;
    check_signing(&info)?;
    let (out, outgoing) = unbounded_channel::<JupyterMessage>();
    let (flush, flushes) = unbounded_channel::<Flush>();
    let (exit_tx, exit_rx) = unbounded_channel::<Exit>();
    let (bound_tx, bound) = oneshot::channel::<anyhow::Result<()>>();
    let (ready, ready_rx) = oneshot::channel::<()>();
    {
        let (info, out, exit_tx) = (info.clone(), out.clone(), exit_tx.clone());
        std::thread::Builder::new()
            .name("passlab-session".into())
            .spawn(move || session_thread(info, out, flush, exit_tx, bound_tx, ready_rx))
            .context("cannot start the session thread")?;
    }
    let iopub = Iopub { outgoing, flushes };
    runtime()?.block_on(serve(info, out, iopub, exit_tx, exit_rx, bound, ready))
}

/// Asks the iopub task to send what is queued for it, and is answered when
/// it has.
type Flush = oneshot::Sender<()>;

/// What the iopub task reads: the messages to publish, and the requests to
/// flush them.
struct Iopub {
    outgoing: tokio::sync::mpsc::UnboundedReceiver<JupyterMessage>,
    flushes: tokio::sync::mpsc::UnboundedReceiver<Flush>,
}

/// The session's thread: binds shell (saying how on `bound`) and, once the
/// other sockets are bound too (`ready`), serves it with the session. A
/// panic outside a request (the session catches those) ends the kernel
/// rather than leaving shell unanswered.
fn session_thread(
    info: ConnectionInfo,
    out: UnboundedSender<JupyterMessage>,
    flush: UnboundedSender<Flush>,
    exit: UnboundedSender<Exit>,
    bound: oneshot::Sender<anyhow::Result<()>>,
    ready: oneshot::Receiver<()>,
) {
    let end = exit.clone();
    let serve = async move {
        let shell = match create_kernel_shell_connection(&info, &session_id()).await {
            Ok(shell) => shell,
            Err(e) => {
                let e = anyhow::Error::from(e).context("cannot bind the shell socket");
                let _ = bound.send(Err(e));
                return;
            }
        };
        let _ = bound.send(Ok(()));
        if ready.await.is_err() {
            return; // the kernel could not start
        }
        serve_shell(shell, Executor::new(out.clone()), out, flush, exit).await
    };
    let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime().map(|rt| rt.block_on(serve))
    }));
    match served {
        Ok(Ok(())) => {}
        Ok(Err(e)) => log(&format!("the session thread cannot start: {e}")),
        Err(panic) => {
            let panic = passlab::panic_message(&panic);
            log(&format!("the session thread stopped: {panic}"));
            let _ = end.send(Exit);
        }
    }
}

/// A runtime on the calling thread.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// The ZeroMQ identity of this kernel's sockets.
fn session_id() -> String {
    format!("passlab-kernel-{}", std::process::id())
}

/// Messages are signed with HMAC-SHA256 and the connection file's key. An
/// empty key turns signing off, which lets anyone who reaches the ports run
/// code: accepted only when the file says so (`"signature_scheme": ""` or
/// `"none"`), not by a key left out by mistake.
fn check_signing(info: &ConnectionInfo) -> anyhow::Result<()> {
    let off = matches!(info.signature_scheme.as_str(), "" | "none");
    match (info.key.is_empty(), off) {
        (true, true) => Ok(()),
        (true, false) => anyhow::bail!(
            "the connection file's key is empty while its signature scheme is '{}': refusing to run unsigned (set \"signature_scheme\": \"none\" to run without signing, or give a key)",
            info.signature_scheme
        ),
        (false, _) if info.signature_scheme == "hmac-sha256" => Ok(()),
        (false, _) => anyhow::bail!(
            "signature scheme '{}' is not supported (hmac-sha256 is)",
            info.signature_scheme
        ),
    }
}

/// After a cell fails, execute requests that arrive within this time of
/// its error reply are aborted too, as ipykernel aborts what reaches it
/// while it is aborting: JupyterLab's "Run All" does not send every cell's
/// request before the first reply (measured here: requests made up to 8 ms
/// after passlab's error reply, a few milliseconds apart), so the cells
/// behind the failed one arrive after it and must not run. A person who
/// reads the error and runs a cell again takes far longer; the idle status
/// of the failed request goes out when the window ends, so a client that
/// waits for it (nbclient) is not aborted.
const ABORT_WINDOW: Duration = Duration::from_millis(50);

/// The requests of one "Run All" are made by the client a few milliseconds
/// apart (JupyterLab: 2 to 4 ms, measured here idle and under load), but a
/// loaded server can pass them on tens of milliseconds late, past the
/// window. So an execute request whose header date (the client's clock) is
/// within this gap of the failed or last aborted request's is part of the
/// same batch and is aborted whenever it arrives; the first one made later
/// ends the batch. Only the client's dates are compared, so the client's
/// clock need not agree with the kernel's. It is shorter than the window:
/// a client that waits for the failed cell's idle status (nbclient) makes
/// its next request at least the window after the failed one's.
const BATCH_GAP_MS: i64 = 40;

/// Whether a request made at `next` (the client's clock) follows one made
/// at `prev` in the same batch: within the gap after it, or made at most a
/// second before it (requests of one batch may arrive out of order).
fn same_batch(gap_ms: i64) -> bool {
    (-1000..BATCH_GAP_MS).contains(&gap_ms)
}

/// What ends the kernel: a shutdown request (on shell or control) or `:quit`.
struct Exit;

/// The main thread's sockets: control, heartbeat and iopub (see the module
/// documentation); returns on `Exit`.
async fn serve(
    info: ConnectionInfo,
    out: UnboundedSender<JupyterMessage>,
    mut channels: Iopub,
    exit_tx: UnboundedSender<Exit>,
    mut exit_rx: tokio::sync::mpsc::UnboundedReceiver<Exit>,
    bound: oneshot::Receiver<anyhow::Result<()>>,
    ready: oneshot::Sender<()>,
) -> anyhow::Result<()> {
    let session_id = session_id();
    let mut control = create_kernel_control_connection(&info, &session_id).await?;
    let _stdin = create_kernel_stdin_connection(&info, &session_id).await?;
    let mut iopub = create_kernel_iopub_xpub_connection(&info, &session_id).await?;
    let mut heartbeat = create_kernel_heartbeat_connection(&info).await?;
    bound
        .await
        .map_err(|_| anyhow::anyhow!("the session thread stopped while starting"))??;
    let _ = ready.send(());

    let iopub_task = tokio::spawn(async move {
        let mut flushing = true;
        loop {
            tokio::select! {
                event = iopub.recv_subscription() => match event {
                    Ok(SubscriptionEvent::Subscribe(topic)) => {
                        let welcome = reply::unprompted("iopub_welcome", json!({"subscription": topic}));
                        if let Err(e) = iopub.send(welcome).await {
                            log(&format!("iopub: cannot send welcome: {e}"));
                        }
                    }
                    Ok(SubscriptionEvent::Unsubscribe(_)) => {}
                    Err(e) => log(&format!("iopub: {e}")),
                },
                msg = channels.outgoing.recv() => match msg {
                    Some(msg) => {
                        if let Err(e) = iopub.send(msg).await {
                            log(&format!("iopub: cannot send: {e}"));
                        }
                    }
                    None => break,
                },
                // (the session thread's requests: what it queued before
                // asking is in the channel now, in order)
                done = channels.flushes.recv(), if flushing => match done {
                    Some(done) => {
                        while let Ok(msg) = channels.outgoing.try_recv() {
                            if let Err(e) = iopub.send(msg).await {
                                log(&format!("iopub: cannot send: {e}"));
                            }
                        }
                        let _ = done.send(());
                    }
                    None => flushing = false,
                },
            }
        }
    });

    tokio::spawn(async move {
        loop {
            if let Err(e) = heartbeat.single_heartbeat().await {
                log(&format!("heartbeat: {e}"));
            }
        }
    });

    let control_out = out.clone();
    let control_exit = exit_tx.clone();
    tokio::spawn(async move {
        loop {
            let req = match receive(&mut control).await {
                Ok(req) => req,
                Err(e) => {
                    log(&format!("control: dropped a message: {e}"));
                    continue;
                }
            };
            let _ = control_out.send(status("busy", &req));
            let (content, exit) = match req.message_type() {
                "kernel_info_request" => (reply::kernel_info(), false),
                "interrupt_request" => {
                    passlab::interrupt::request();
                    (json!({"status": "ok"}), false)
                }
                "shutdown_request" => (shutdown_reply(&req), true),
                other => {
                    log(&format!("control: no handler for {other}"));
                    let _ = control_out.send(status("idle", &req));
                    continue;
                }
            };
            let reply_type = req.message_type().replace("_request", "_reply");
            if let Err(e) = control.send(message(&reply_type, content, &req)).await {
                log(&format!("control: cannot reply: {e}"));
            }
            let _ = control_out.send(status("idle", &req));
            if exit {
                let _ = control_exit.send(Exit);
            }
        }
    });

    exit_rx.recv().await;
    // Stop a call that may be running, let iopub send what is queued, and
    // leave: the session's thread ends with the process.
    passlab::interrupt::request();
    tokio::time::sleep(Duration::from_millis(50)).await;
    iopub_task.abort();
    Ok(())
}

/// Waits until the iopub task has sent what this thread queued for it: a
/// request's output goes out before its reply. (Bounded: a stuck iopub
/// socket delays a reply by a second, it does not withhold it.)
async fn flushed(flush: &UnboundedSender<Flush>) {
    let (done, sent) = oneshot::channel();
    if flush.send(done).is_ok() {
        let _ = tokio::time::timeout(Duration::from_secs(1), sent).await;
    }
}

/// Shell requests, answered one at a time, in order, on the session's
/// thread: cells run here.
async fn serve_shell(
    mut shell: KernelShellConnection,
    mut executor: Executor,
    out: UnboundedSender<JupyterMessage>,
    flush: UnboundedSender<Flush>,
    shell_exit: UnboundedSender<Exit>,
) {
    // After a cell fails with stop_on_error, the executes already
    // queued behind it (a notebook's "run all") are answered "aborted"
    // without running, as ipykernel does: they are read off the socket
    // at once and kept here, marked.
    let mut queued: VecDeque<(JupyterMessage, bool)> = VecDeque::new();
    // The client's date (milliseconds) of the failed or last aborted execute request
    // while a batch is being aborted (`BATCH_GAP_MS`).
    let mut batch: Option<i64> = None;
    loop {
        let (req, in_window) = match queued.pop_front() {
            Some(q) => q,
            None => match receive(&mut shell).await {
                Ok(req) => (req, false),
                Err(e) => {
                    log(&format!("shell: dropped a message: {e}"));
                    continue;
                }
            },
        };
        let date = req.header.date.timestamp_millis();
        let execute = req.message_type() == "execute_request";
        let aborting = execute
            && (in_window || batch.is_some_and(|prev| same_batch(date.saturating_sub(prev))));
        if execute {
            batch = aborting.then_some(date);
        }
        let mut failed = false;
        let _ = out.send(status("busy", &req));
        let mut exit = false;
        let content = match req.message_type() {
            "execute_request" if aborting => Some(json!({"status": "aborted",
                    "execution_count": null, "user_expressions": {}, "payload": []})),
            "kernel_info_request" => Some(reply::kernel_info()),
            "comm_info_request" => Some(json!({"status": "ok", "comms": {}})),
            "shutdown_request" => {
                exit = true;
                Some(shutdown_reply(&req))
            }
            "execute_request"
            | "complete_request"
            | "inspect_request"
            | "is_complete_request"
            | "history_request" => {
                let done = executor.answer(&req);
                exit = done.exit;
                let stop = serde_json::to_value(&req.content)
                    .ok()
                    .and_then(|c| c.get("stop_on_error").and_then(Value::as_bool))
                    .unwrap_or(true);
                failed = stop
                    && req.message_type() == "execute_request"
                    && done.content["status"] == "error";
                Some(done.content)
            }
            other => {
                log(&format!("shell: no handler for {other}"));
                None
            }
        };
        if let Some(content) = content {
            let reply_type = req.message_type().replace("_request", "_reply");
            flushed(&flush).await;
            if let Err(e) = shell.send(message(&reply_type, content, &req)).await {
                log(&format!("shell: cannot reply: {e}"));
            }
        }
        // What is queued behind the failed cell, and what arrives within
        // the window after its reply, is marked to be aborted (execute
        // requests only; others are answered as usual).
        if failed {
            batch = Some(date);
            let until = tokio::time::Instant::now() + ABORT_WINDOW;
            loop {
                match tokio::time::timeout_at(until, receive(&mut shell)).await {
                    Ok(Ok(next)) => queued.push_back((next, true)),
                    Ok(Err(e)) => log(&format!("shell: dropped a message: {e}")),
                    Err(_) => break,
                }
            }
        }
        let _ = out.send(status("idle", &req));
        if exit {
            let _ = shell_exit.send(Exit);
        }
    }
}

fn shutdown_reply(req: &JupyterMessage) -> Value {
    let restart = serde_json::to_value(&req.content)
        .ok()
        .and_then(|c| c.get("restart").and_then(Value::as_bool))
        .unwrap_or(false);
    json!({"status": "ok", "restart": restart})
}

/// Receives one message, its signature verified and its parts decoded
/// (`decode.rs`, which the fuzz target `kernel_message` runs).
async fn receive<S: zeromq::SocketRecv>(
    conn: &mut jupyter_zmq_client::Connection<S>,
) -> Result<JupyterMessage, String> {
    let multipart = conn.socket.recv().await.map_err(|e| e.to_string())?;
    let raw = RawMessage::from_multipart(multipart, &conn.mac).map_err(|e| e.to_string())?;
    crate::decode::decode(raw)
}

fn log(text: &str) {
    eprintln!("passlab-kernel: {text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_requests_made_within_the_gap() {
        // JupyterLab's Run All: 2 to 4 ms apart; jupyter_client's test: 20.
        assert!(same_batch(2) && same_batch(20) && same_batch(0));
        // Out of order within a batch.
        assert!(same_batch(-5));
        // A person, or nbclient after the idle status (the window later).
        assert!(!same_batch(BATCH_GAP_MS) && !same_batch(50) && !same_batch(400));
        // A clock far behind is not taken for a batch.
        assert!(!same_batch(-5000));
        assert!(BATCH_GAP_MS < ABORT_WINDOW.as_millis() as i64);
    }

    fn info(key: &str, scheme: &str) -> ConnectionInfo {
        serde_json::from_value(json!({
            "ip": "127.0.0.1", "transport": "tcp", "shell_port": 1, "iopub_port": 2,
            "stdin_port": 3, "control_port": 4, "hb_port": 5,
            "key": key, "signature_scheme": scheme, "kernel_name": "passlab"
        }))
        .unwrap()
    }

    #[test]
    fn an_empty_key_is_refused_unless_signing_is_off() {
        assert!(check_signing(&info("secret", "hmac-sha256")).is_ok());
        let e = check_signing(&info("", "hmac-sha256")).unwrap_err();
        assert!(e.to_string().contains("refusing to run unsigned"), "{e}");
        assert!(check_signing(&info("", "none")).is_ok());
        assert!(check_signing(&info("", "")).is_ok());
        assert!(check_signing(&info("secret", "hmac-md5")).is_err());
    }
}
