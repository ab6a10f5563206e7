//! Where passes write what they print (PrintIR), and where diagnostics such
//! as compiler warnings go. By default, standard output and standard error;
//! a front end captures them with [`capture`] and [`capture_warnings`] to
//! show them as the output of a command.

#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::thread::LocalKey;

/// A stack of capture buffers; text goes to the innermost one.
type Captures = RefCell<Vec<String>>;

thread_local! {
    static PRINTED: Captures = const { RefCell::new(Vec::new()) };
    static WARNINGS: Captures = const { RefCell::new(Vec::new()) };
}

/// Appends `text` (as a line) to the innermost capture of `stack`; returns
/// false when nothing captures it.
fn append(stack: &'static LocalKey<Captures>, text: &str) -> bool {
    stack.with(|c| match c.borrow_mut().last_mut() {
        Some(buf) => {
            buf.push_str(text);
            if !text.ends_with('\n') {
                buf.push('\n');
            }
            true
        }
        None => false,
    })
}

/// Runs `f` with a new capture on `stack`; returns what was captured.
fn captured<R>(stack: &'static LocalKey<Captures>, f: impl FnOnce() -> R) -> (R, String) {
    struct Pop(&'static LocalKey<Captures>);
    impl Drop for Pop {
        fn drop(&mut self) {
            self.0.with(|c| c.borrow_mut().pop());
        }
    }
    stack.with(|c| c.borrow_mut().push(String::new()));
    let pop = Pop(stack);
    let r = f();
    let text = stack.with(|c| {
        c.borrow_mut()
            .last_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    });
    drop(pop);
    (r, text)
}

/// Writes text produced by a pass.
pub fn emit(text: &str) {
    if !append(&PRINTED, text) {
        println!("{}", text.trim_end_matches('\n'));
    }
}

/// Runs `f`, returning what passes emitted during it instead of printing it.
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, String) {
    captured(&PRINTED, f)
}

/// Reports a diagnostic that is not an error (a compiler warning).
pub fn warn(text: &str) {
    if !append(&WARNINGS, text) {
        eprintln!("{}", text.trim_end_matches('\n'));
    }
}

/// Runs `f`, returning the warnings reported during it instead of printing
/// them.
pub fn capture_warnings<R>(f: impl FnOnce() -> R) -> (R, String) {
    captured(&WARNINGS, f)
}
