//! What an instrument is told about a pass, and what a pass's name is:
//! [`PassInfo`] and [`base_name`]. A leaf of the core, below the
//! instruments and the passes, so that both can use it.

#![forbid(unsafe_code)]

/// What the infrastructure knows about a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassInfo {
    /// The name users type and the registry knows.
    pub name: String,
    /// A sequential runs the pass when `opt_level <= ` the context's level.
    pub opt_level: u32,
    /// Passes (by registry name) a sequential runs before this one.
    pub required: Vec<String>,
    /// One line saying what the pass does.
    pub description: String,
}

impl PassInfo {
    /// A pass named `name` at `opt_level`, requiring nothing.
    pub fn new(name: &str, opt_level: u32) -> PassInfo {
        PassInfo {
            name: name.into(),
            opt_level,
            required: vec![],
            description: String::new(),
        }
    }

    /// Adds required passes.
    pub fn requires<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> PassInfo {
        self.required.extend(names.into_iter().map(Into::into));
        self
    }

    /// Sets the description.
    pub fn describe(mut self, description: &str) -> PassInfo {
        self.description = description.into();
        self
    }
}

/// The pass name in pipeline text: `loop-unroll` in `loop-unroll<O3>`.
pub fn base_name(text: &str) -> &str {
    let end = text.find(['<', '(']).unwrap_or(text.len());
    text[..end].trim()
}
