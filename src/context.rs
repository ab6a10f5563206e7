//! [`PassContext`]: the settings passes run under, entered in nested scopes.
//!
//! Contexts live on a thread-local stack. [`PassContext::enter`] pushes one
//! and returns a [`ContextGuard`] that pops it when dropped, also on error or
//! panic. [`PassContext::current`] is the innermost context, or a default
//! one. Unlike TVM, [`PassContext::inherit`] starts from the enclosing
//! context's settings, so a nested scope overrides only what it sets;
//! [`PassContext::new`] starts fresh, as TVM's contexts do.
//!
//! The gating rule lives here, in [`PassContext::pass_enabled`] (disabled
//! never runs, then required always, then by opt level), so that every
//! sequential applies the same one; `:explain` states it with reasons and
//! must stay in step. This layer knows instruments and config options, not
//! the pass kinds above it.

#![forbid(unsafe_code)]

use crate::config::{ConfigOption, ConfigValue};
use crate::instrument::Instrument;
use crate::{Error, Result};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::rc::Rc;

/// Settings for running passes: opt level, required and disabled passes,
/// typed configuration and instruments.
#[derive(Clone)]
pub struct PassContext {
    opt_level: u32,
    required: BTreeSet<String>,
    disabled: BTreeSet<String>,
    config: BTreeMap<String, ConfigValue>,
    instruments: Vec<Rc<dyn Instrument>>,
    /// How many of `instruments` come from the enclosing context; only the
    /// others are entered and exited by this one.
    inherited_instruments: usize,
}

thread_local! {
    static STACK: RefCell<Vec<PassContext>> = const { RefCell::new(Vec::new()) };
}

impl Default for PassContext {
    fn default() -> Self {
        PassContext::new()
    }
}

impl PassContext {
    /// The default opt level, as in TVM.
    pub const DEFAULT_OPT_LEVEL: u32 = 2;

    /// A fresh context with default settings (opt level 2, nothing required
    /// or disabled, no config, no instruments).
    pub fn new() -> PassContext {
        PassContext {
            opt_level: Self::DEFAULT_OPT_LEVEL,
            required: BTreeSet::new(),
            disabled: BTreeSet::new(),
            config: BTreeMap::new(),
            instruments: Vec::new(),
            inherited_instruments: 0,
        }
    }

    /// A context with an opt level and config values as given, not checked
    /// against the registry: how a user pass in evcxr's child sees the
    /// session's context (the session checked them when they were set).
    pub(crate) fn from_parts(
        opt_level: u32,
        config: impl IntoIterator<Item = (String, ConfigValue)>,
    ) -> PassContext {
        PassContext {
            opt_level,
            config: config.into_iter().collect(),
            ..PassContext::new()
        }
    }

    /// A context that starts from the current one's settings.
    pub fn inherit() -> PassContext {
        let mut ctx = PassContext::current();
        ctx.inherited_instruments = ctx.instruments.len();
        ctx
    }

    /// The innermost entered context, or a default one.
    pub fn current() -> PassContext {
        STACK
            .with(|s| s.borrow().last().cloned())
            .unwrap_or_default()
    }

    /// The entered contexts, outermost first.
    pub fn stack() -> Vec<PassContext> {
        STACK.with(|s| s.borrow().clone())
    }

    /// Sets the opt level.
    pub fn with_opt_level(mut self, level: u32) -> PassContext {
        self.opt_level = level;
        self
    }

    /// Adds passes that run in a sequential whatever their opt level.
    pub fn with_required<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        names: I,
    ) -> PassContext {
        self.required.extend(names.into_iter().map(Into::into));
        self
    }

    /// Adds passes that never run in a sequential, even when required. Inside
    /// an LLVM pipeline, LLVM's optional passes of these names are skipped.
    pub fn with_disabled<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        names: I,
    ) -> PassContext {
        self.disabled.extend(names.into_iter().map(Into::into));
        self
    }

    /// Sets a declared config option; an unknown key lists the valid ones, a
    /// value of the wrong type names the expected type.
    pub fn with_config(mut self, key: &str, value: impl Into<ConfigValue>) -> Result<PassContext> {
        let value = config_option(key)?.check(value.into())?;
        self.config.insert(key.to_string(), value);
        Ok(self)
    }

    /// Sets a config option from text, parsed as the option's type.
    pub fn with_config_text(mut self, key: &str, text: &str) -> Result<PassContext> {
        let value = config_option(key)?.parse(text)?;
        self.config.insert(key.to_string(), value);
        Ok(self)
    }

    /// The same settings with no instruments (a search's trials are not
    /// what the session's instruments record).
    pub(crate) fn without_instruments(mut self) -> PassContext {
        self.instruments.clear();
        self.inherited_instruments = 0;
        self
    }

    /// Adds an instrument (after those already registered).
    pub fn with_instrument(mut self, instrument: Rc<dyn Instrument>) -> PassContext {
        self.instruments.push(instrument);
        self
    }

    /// The opt level.
    pub fn opt_level(&self) -> u32 {
        self.opt_level
    }

    /// The required passes.
    pub fn required(&self) -> &BTreeSet<String> {
        &self.required
    }

    /// The disabled passes.
    pub fn disabled(&self) -> &BTreeSet<String> {
        &self.disabled
    }

    /// The options set in this context (not the defaults).
    pub fn config_set(&self) -> &BTreeMap<String, ConfigValue> {
        &self.config
    }

    /// The instruments, in the order they are called.
    pub fn instruments(&self) -> &[Rc<dyn Instrument>] {
        &self.instruments
    }

    /// The value of a declared option: the one set here, or its default.
    pub fn config(&self, key: &str) -> Result<ConfigValue> {
        let option = config_option(key)?;
        Ok(self.config.get(key).cloned().unwrap_or(option.default))
    }

    /// A bool option's value.
    pub fn config_bool(&self, key: &str) -> Result<bool> {
        match self.config(key)? {
            ConfigValue::Bool(b) => Ok(b),
            other => Err(type_error(key, "a bool", other)),
        }
    }

    /// An integer option's value.
    pub fn config_int(&self, key: &str) -> Result<i64> {
        match self.config(key)? {
            ConfigValue::Int(i) => Ok(i),
            other => Err(type_error(key, "an integer", other)),
        }
    }

    /// Whether a sequential runs a pass with this name and opt level here:
    /// disabled never; otherwise required always; otherwise when
    /// `opt_level <= self.opt_level()`.
    pub fn pass_enabled(&self, name: &str, opt_level: u32) -> bool {
        if self.disabled.contains(name) {
            false
        } else if self.required.contains(name) {
            true
        } else {
            opt_level <= self.opt_level
        }
    }

    /// Enters this context: its own instruments' `enter_pass_ctx` hooks run in
    /// order; if one fails, those already entered are exited, the context is
    /// not pushed and the error is returned.
    pub fn enter(self) -> Result<ContextGuard> {
        let own = &self.instruments[self.inherited_instruments..];
        for (k, instrument) in own.iter().enumerate() {
            if let Err(e) = instrument.enter_pass_ctx() {
                for entered in &own[..k] {
                    let _ = entered.exit_pass_ctx();
                }
                return Err(e);
            }
        }
        let depth = STACK.with(|s| {
            let mut s = s.borrow_mut();
            s.push(self);
            s.len()
        });
        Ok(ContextGuard {
            depth,
            exited: false,
        })
    }

    /// Replaces the instruments of the innermost entered context (TVM's
    /// `override_instruments`): its own instruments get `exit_pass_ctx`,
    /// then the new ones `enter_pass_ctx`, in order. If an exit or an enter
    /// fails, the instruments entered so far are exited, the context is left
    /// with no instruments, and the error is returned. Instruments inherited
    /// from an enclosing context are not exited (they belong to it) but are
    /// no longer called in this one.
    pub fn override_instruments(instruments: Vec<Rc<dyn Instrument>>) -> Result<()> {
        let old = STACK
            .with(|s| {
                s.borrow()
                    .last()
                    .map(|c| c.instruments[c.inherited_instruments..].to_vec())
            })
            .ok_or_else(|| {
                Error::Invalid("override_instruments needs an entered context".into())
            })?;
        let set = |list: Vec<Rc<dyn Instrument>>| {
            STACK.with(|s| {
                if let Some(c) = s.borrow_mut().last_mut() {
                    c.instruments = list;
                    c.inherited_instruments = 0;
                }
            })
        };
        for instrument in &old {
            if let Err(e) = instrument.exit_pass_ctx() {
                set(Vec::new());
                return Err(e);
            }
        }
        for (k, instrument) in instruments.iter().enumerate() {
            if let Err(e) = instrument.enter_pass_ctx() {
                for entered in &instruments[..k] {
                    let _ = entered.exit_pass_ctx();
                }
                set(Vec::new());
                return Err(e);
            }
        }
        set(instruments);
        Ok(())
    }

    /// This context's settings as one `:with` would make them from the
    /// default context (its opt level when not the default, required and
    /// disabled passes, every config value set; not its instruments): what
    /// a reproducer carries. Empty for the default context.
    pub fn as_with(&self) -> String {
        let mut parts = Vec::new();
        if self.opt_level != PassContext::new().opt_level {
            parts.push(format!("opt_level={}", self.opt_level));
        }
        parts.extend(self.settings());
        parts.join(" ")
    }

    /// Its required and disabled passes and config values, as `:with`
    /// words.
    fn settings(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if !self.required.is_empty() {
            parts.push(format!("required={}", join(&self.required)));
        }
        if !self.disabled.is_empty() {
            parts.push(format!("disabled={}", join(&self.disabled)));
        }
        for (k, v) in &self.config {
            parts.push(format!("config.{k}={v}"));
        }
        parts
    }

    /// A one-line summary, e.g. `opt_level=3 required=mem2reg disabled=licm`.
    pub fn summary(&self) -> String {
        let mut parts = vec![format!("opt_level={}", self.opt_level)];
        parts.extend(self.settings());
        if !self.instruments.is_empty() {
            let names: Vec<_> = self.instruments.iter().map(|i| i.name()).collect();
            parts.push(format!("instruments={}", names.join(",")));
        }
        parts.join(" ")
    }
}

impl fmt::Debug for PassContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PassContext({})", self.summary())
    }
}

fn join(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(",")
}

fn type_error(key: &str, expected: &str, got: ConfigValue) -> Error {
    Error::ConfigType {
        key: key.into(),
        expected: expected.into(),
        got: got.to_string(),
    }
}

fn config_option(key: &str) -> Result<ConfigOption> {
    crate::config::option(key)
}

/// Pops its context when dropped (or when [`ContextGuard::exit`] is called),
/// running the context's own instruments' `exit_pass_ctx` hooks.
#[must_use = "the context is left as soon as the guard is dropped"]
pub struct ContextGuard {
    depth: usize,
    exited: bool,
}

impl ContextGuard {
    /// Leaves the context, returning the first error of an `exit_pass_ctx`
    /// hook; as in TVM, the instruments after a failing one are not exited.
    pub fn exit(mut self) -> Result<()> {
        self.exited = true;
        Self::pop(self.depth)
    }

    fn pop(depth: usize) -> Result<()> {
        let popped = STACK.with(|s| {
            let mut s = s.borrow_mut();
            let mut popped = None;
            while s.len() >= depth {
                popped = s.pop();
            }
            popped
        });
        if let Some(ctx) = popped {
            for instrument in &ctx.instruments[ctx.inherited_instruments..] {
                instrument.exit_pass_ctx()?;
            }
        }
        Ok(())
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        if !self.exited {
            let _ = Self::pop(self.depth);
        }
    }
}
