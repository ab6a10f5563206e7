//! Config values from text: `ConfigOption::parse` for every registered
//! option and `ConfigValue::parse` for every type. No panic; an error has
//! a message; a value that parses prints as text that parses back to the
//! same value (what `:context` shows can be typed again).
use passlab::{registry, ConfigType, ConfigValue};
use std::sync::OnceLock;

fn same(a: &ConfigValue, b: &ConfigValue) -> bool {
    match (a, b) {
        (ConfigValue::Float(x), ConfigValue::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

/// Nothing to gather before the first input.
pub fn init() {}

/// One input, as libFuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    static OPTIONS: OnceLock<Vec<passlab::ConfigOption>> = OnceLock::new();
    // The JIT declares its options when first used (a session does it).
    let options = OPTIONS.get_or_init(registry::config_options);
    for ty in [
        ConfigType::Bool,
        ConfigType::Int,
        ConfigType::Float,
        ConfigType::Str,
    ] {
        if let Some(v) = ConfigValue::parse(ty, text) {
            assert_eq!(v.ty(), ty);
            let again = ConfigValue::parse(ty, &v.to_string());
            assert!(
                again.as_ref().is_some_and(|a| same(a, &v)),
                "{ty:?} {text:?} parses as {v:?}, which prints as {:?}, which parses as {again:?}",
                v.to_string()
            );
        }
    }
    for option in options {
        match option.parse(text) {
            Ok(v) => {
                assert_eq!(v.ty(), option.ty(), "{}", option.key);
                let again = option.parse(&v.to_string());
                assert!(
                    again.as_ref().is_ok_and(|a| same(a, &v)),
                    "config.{} {text:?} parses as {v:?}, which prints as {:?}, which gives {again:?}",
                    option.key,
                    v.to_string()
                );
            }
            Err(e) => assert!(
                !e.to_string().trim().is_empty(),
                "config.{}: empty error message",
                option.key
            ),
        }
        let _ = option.expected();
    }
}
