//! Typed configuration options for a [`PassContext`](crate::PassContext),
//! declared by the passes that read them (TVM's
//! `TVM_REGISTER_PASS_CONFIG_OPTION`).
//!
//! The table of declared options lives here, at the bottom of the core, and
//! the modules above fill it: each submits its [`Declarations`] with
//! `inventory::submit!` beside the code that reads the options, as TVM's
//! macro does with a static initializer. The linker gathers the
//! submissions, so the table is complete before its first use, and nothing
//! here names a module above.

#![forbid(unsafe_code)]

use crate::error::nearest_names;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{OnceLock, RwLock};

/// One module's options, submitted once with `inventory::submit!`.
pub struct Declarations(pub fn() -> Vec<ConfigOption>);

inventory::collect!(Declarations);

fn table() -> &'static RwLock<BTreeMap<String, ConfigOption>> {
    static TABLE: OnceLock<RwLock<BTreeMap<String, ConfigOption>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut options = BTreeMap::new();
        for declarations in inventory::iter::<Declarations> {
            for option in (declarations.0)() {
                options.insert(option.key.clone(), option);
            }
        }
        RwLock::new(options)
    })
}

/// Declares an option at run time; re-declaring a key is an error.
pub fn declare(option: ConfigOption) -> Result<()> {
    let mut t = table().write().unwrap_or_else(|p| p.into_inner());
    if t.contains_key(&option.key) {
        return Err(Error::Invalid(format!(
            "config option '{}' is already declared",
            option.key
        )));
    }
    t.insert(option.key.clone(), option);
    Ok(())
}

/// The declared option `key`; an unknown key lists the valid ones.
pub fn option(key: &str) -> Result<ConfigOption> {
    let t = table().read().unwrap_or_else(|p| p.into_inner());
    t.get(key).cloned().ok_or_else(|| Error::UnknownConfig {
        key: key.to_string(),
        valid: t.keys().cloned().collect(),
        suggestions: nearest_names(key, t.keys().map(String::as_str)),
    })
}

/// All declared options, by key.
pub fn options() -> Vec<ConfigOption> {
    table()
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .values()
        .cloned()
        .collect()
}

/// The type of a configuration option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigType {
    Bool,
    Int,
    Float,
    Str,
}

impl fmt::Display for ConfigType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConfigType::Bool => "a bool (true or false)",
            ConfigType::Int => "an integer",
            ConfigType::Float => "a number",
            ConfigType::Str => "a string",
        })
    }
}

/// A configuration value.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl ConfigValue {
    /// The type of this value.
    pub fn ty(&self) -> ConfigType {
        match self {
            ConfigValue::Bool(_) => ConfigType::Bool,
            ConfigValue::Int(_) => ConfigType::Int,
            ConfigValue::Float(_) => ConfigType::Float,
            ConfigValue::Str(_) => ConfigType::Str,
        }
    }

    /// Parses text as a value of type `ty` (`true`/`false`/`1`/`0` for bools).
    pub fn parse(ty: ConfigType, text: &str) -> Option<ConfigValue> {
        match ty {
            ConfigType::Bool => match text {
                "true" | "1" | "on" | "yes" => Some(ConfigValue::Bool(true)),
                "false" | "0" | "off" | "no" => Some(ConfigValue::Bool(false)),
                _ => None,
            },
            ConfigType::Int => text.parse().ok().map(ConfigValue::Int),
            ConfigType::Float => text.parse().ok().map(ConfigValue::Float),
            ConfigType::Str => Some(ConfigValue::Str(text.to_string())),
        }
    }
}

impl fmt::Display for ConfigValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigValue::Bool(b) => write!(f, "{b}"),
            ConfigValue::Int(i) => write!(f, "{i}"),
            ConfigValue::Float(x) => write!(f, "{x}"),
            ConfigValue::Str(s) => write!(f, "{s}"),
        }
    }
}

impl From<bool> for ConfigValue {
    fn from(v: bool) -> Self {
        ConfigValue::Bool(v)
    }
}
impl From<i64> for ConfigValue {
    fn from(v: i64) -> Self {
        ConfigValue::Int(v)
    }
}
impl From<i32> for ConfigValue {
    fn from(v: i32) -> Self {
        ConfigValue::Int(v.into())
    }
}
impl From<f64> for ConfigValue {
    fn from(v: f64) -> Self {
        ConfigValue::Float(v)
    }
}
impl From<&str> for ConfigValue {
    fn from(v: &str) -> Self {
        ConfigValue::Str(v.to_string())
    }
}

/// Says why a string is not a value an option takes (the message names
/// the values that are).
pub type TextCheck = fn(&str) -> std::result::Result<(), String>;

/// A declared option: its key, type, default, who reads it, and which
/// values it takes.
#[derive(Clone, Debug)]
pub struct ConfigOption {
    pub key: String,
    pub default: ConfigValue,
    pub description: String,
    /// For numbers: the smallest and largest value allowed.
    pub range: Option<(f64, f64)>,
    /// For strings: says why a value is not allowed (the message names the
    /// values that are).
    pub check_text: Option<TextCheck>,
}

impl ConfigOption {
    /// Declares `key` with a default value, which also fixes its type.
    pub fn new(key: &str, default: impl Into<ConfigValue>, description: &str) -> ConfigOption {
        ConfigOption {
            key: key.into(),
            default: default.into(),
            description: description.into(),
            range: None,
            check_text: None,
        }
    }

    /// Allows only numbers from `min` to `max` (both included).
    pub fn with_range(mut self, min: f64, max: f64) -> ConfigOption {
        self.range = Some((min, max));
        self
    }

    /// Allows only strings that `check` accepts.
    pub fn with_check(
        mut self,
        check: fn(&str) -> std::result::Result<(), String>,
    ) -> ConfigOption {
        self.check_text = Some(check);
        self
    }

    /// The option's type.
    pub fn ty(&self) -> ConfigType {
        self.default.ty()
    }

    /// What the option takes, as an error message says it: `an integer
    /// from 1 to 86400000`.
    pub fn expected(&self) -> String {
        let ty = self.ty().to_string();
        match (self.range, self.ty()) {
            (Some((min, max)), ConfigType::Int) => {
                format!("{ty} from {} to {}", min as i64, max as i64)
            }
            (Some((min, max)), _) => format!("{ty} from {min} to {max}"),
            _ => ty,
        }
    }

    /// Checks that `value` has this option's type (an integer is accepted
    /// for a number) and is one it allows.
    pub fn check(&self, value: ConfigValue) -> Result<ConfigValue> {
        let value = match (self.ty(), value) {
            (ConfigType::Float, ConfigValue::Int(i)) => ConfigValue::Float(i as f64),
            (ty, v) if v.ty() == ty => v,
            (_, v) => {
                return Err(Error::ConfigType {
                    key: self.key.clone(),
                    expected: self.expected(),
                    got: v.to_string(),
                })
            }
        };
        let number = match value {
            ConfigValue::Int(i) => Some(i as f64),
            ConfigValue::Float(x) => Some(x),
            _ => None,
        };
        if let (Some((min, max)), Some(n)) = (self.range, number) {
            if !(min..=max).contains(&n) {
                return Err(Error::ConfigType {
                    key: self.key.clone(),
                    expected: self.expected(),
                    got: value.to_string(),
                });
            }
        }
        if let (Some(check), ConfigValue::Str(s)) = (self.check_text, &value) {
            check(s).map_err(|why| Error::ConfigType {
                key: self.key.clone(),
                expected: why,
                got: s.clone(),
            })?;
        }
        Ok(value)
    }

    /// Parses `text` as this option's type and checks it.
    pub fn parse(&self, text: &str) -> Result<ConfigValue> {
        let value = ConfigValue::parse(self.ty(), text).ok_or_else(|| Error::ConfigType {
            key: self.key.clone(),
            expected: self.expected(),
            got: text.to_string(),
        })?;
        self.check(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two modules declaring one key would leave one declaration unseen.
    #[test]
    fn no_key_is_submitted_twice() {
        let mut keys: Vec<String> = inventory::iter::<Declarations>
            .into_iter()
            .flat_map(|d| (d.0)())
            .map(|o| o.key)
            .collect();
        let all = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), all);
        assert!(option("passlab.verify_each").is_ok());
        assert!(option("jit.timeout_ms").is_ok());
    }

    #[test]
    fn values_outside_the_range_are_refused_with_the_range() {
        let o = ConfigOption::new("jit.timeout_ms", 10_000i64, "").with_range(1.0, 86_400_000.0);
        assert_eq!(o.parse("5000").unwrap(), ConfigValue::Int(5000));
        assert_eq!(
            o.parse("-5").unwrap_err().to_string(),
            "config option 'jit.timeout_ms' expects an integer from 1 to 86400000, got '-5'"
        );
        assert!(o
            .parse("x")
            .unwrap_err()
            .to_string()
            .contains("an integer from 1 to 86400000"));
        let cpu = ConfigOption::new("target.cpu", "", "").with_check(|s| {
            if s == "host" || s.is_empty() {
                Ok(())
            } else {
                Err("host or a processor name".into())
            }
        });
        assert!(cpu.parse("host").is_ok());
        assert_eq!(
            cpu.parse("pentium9").unwrap_err().to_string(),
            "config option 'target.cpu' expects host or a processor name, got 'pentium9'"
        );
    }
}
