//! Where passes write what they print (PrintIR). By default, standard
//! output; a front end captures it with [`capture`] to show it as the
//! output of a command.

use std::cell::RefCell;

thread_local! {
    static CAPTURES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
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
