//! Where passes write what they print (PrintIR), and where diagnostics such
//! as compiler warnings go. By default, standard output and standard error;
//! a front end captures them with [`capture`] and [`capture_warnings`] to
//! show them as the output of a command.

use std::cell::RefCell;

thread_local! {
    static CAPTURES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    static WARNINGS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Reports a diagnostic that is not an error (a compiler warning).
pub fn warn(text: &str) {
    let captured = WARNINGS.with(|w| match w.borrow_mut().last_mut() {
        Some(buf) => {
            buf.push_str(text);
            if !text.ends_with('\n') {
                buf.push('\n');
            }
            true
        }
        None => false,
    });
    if !captured {
        eprintln!("{}", text.trim_end_matches('\n'));
    }
}

/// Runs `f`, returning the warnings reported during it instead of printing
/// them.
pub fn capture_warnings<R>(f: impl FnOnce() -> R) -> (R, String) {
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            WARNINGS.with(|w| w.borrow_mut().pop());
        }
    }
    WARNINGS.with(|w| w.borrow_mut().push(String::new()));
    let pop = Pop;
    let r = f();
    let text = WARNINGS.with(|w| {
        w.borrow_mut()
            .last_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    });
    drop(pop);
    (r, text)
}

/// Writes text produced by a pass.
pub fn emit(text: &str) {
    let captured = CAPTURES.with(|c| {
        let mut c = c.borrow_mut();
        match c.last_mut() {
            Some(buf) => {
                buf.push_str(text);
                if !text.ends_with('\n') {
                    buf.push('\n');
                }
                true
            }
            None => false,
        }
    });
    if !captured {
        println!("{}", text.trim_end_matches('\n'));
    }
}

/// Runs `f`, returning what passes emitted during it instead of printing it.
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, String) {
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            CAPTURES.with(|c| c.borrow_mut().pop());
        }
    }
    CAPTURES.with(|c| c.borrow_mut().push(String::new()));
    let pop = Pop;
    let r = f();
    let text = CAPTURES.with(|c| {
        c.borrow_mut()
            .last_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    });
    drop(pop);
    (r, text)
}
