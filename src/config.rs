//! Typed configuration options for a [`PassContext`](crate::PassContext),
//! declared by the passes that read them (TVM's
//! `TVM_REGISTER_PASS_CONFIG_OPTION`).

use crate::{Error, Result};
use std::fmt;

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

/// A declared option: its key, type, default and who reads it.
#[derive(Clone, Debug)]
pub struct ConfigOption {
    pub key: String,
    pub default: ConfigValue,
    pub description: String,
}

impl ConfigOption {
    /// Declares `key` with a default value, which also fixes its type.
    pub fn new(key: &str, default: impl Into<ConfigValue>, description: &str) -> ConfigOption {
        ConfigOption {
            key: key.into(),
            default: default.into(),
            description: description.into(),
        }
    }

    /// The option's type.
    pub fn ty(&self) -> ConfigType {
        self.default.ty()
    }

    /// Checks that `value` has this option's type (an integer is accepted
    /// for a number).
    pub fn check(&self, value: ConfigValue) -> Result<ConfigValue> {
        match (self.ty(), value) {
            (ConfigType::Float, ConfigValue::Int(i)) => Ok(ConfigValue::Float(i as f64)),
            (ty, v) if v.ty() == ty => Ok(v),
            (ty, v) => Err(Error::ConfigType {
                key: self.key.clone(),
                expected: ty.to_string(),
                got: v.to_string(),
            }),
        }
    }

    /// Parses `text` as this option's type.
    pub fn parse(&self, text: &str) -> Result<ConfigValue> {
        ConfigValue::parse(self.ty(), text).ok_or_else(|| Error::ConfigType {
            key: self.key.clone(),
            expected: self.ty().to_string(),
            got: text.to_string(),
        })
    }
}
