//! `passlab::pipeline::split` and `parse` on arbitrary text: no panic, every
//! error has a message, and what `split` returns is consistent with what
//! `parse` accepts.

/// Nothing to gather before the first input.
pub fn init() {}

/// One input, as libFuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let split = passlab::pipeline::split(text);
    match &split {
        Ok(parts) => {
            for p in parts {
                assert!(!p.is_empty(), "split gave an empty element for {text:?}");
                assert_eq!(*p, p.trim(), "split gave an untrimmed element for {text:?}");
            }
        }
        Err(e) => assert!(
            !e.to_string().trim().is_empty(),
            "split: empty error message"
        ),
    }
    match passlab::pipeline::parse(text) {
        Ok(pass) => {
            let parts = split.expect("parse accepted text that split refuses");
            // One element is that pass; several a sequential of them.
            if parts.len() > 1 {
                assert_eq!(pass.children().len(), parts.len(), "{text:?}");
            }
            let _ = pass.info();
        }
        Err(e) => assert!(
            !e.to_string().trim().is_empty(),
            "parse: empty error message for {text:?}"
        ),
    }
}
