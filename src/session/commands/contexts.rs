//! Pass contexts: :with, :end, :context.

use super::*;

pub(super) fn with(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    if let Some(w) = a.words.first() {
        return Err(err(
            "with",
            format!(
                "expects KEY=VALUE settings, got '{w}' (opt_level, disabled, required, config.KEY)"
            ),
        ));
    }
    let summary = enter(s, &a.settings, &a.rest)?;
    text(format!("context {}: {summary}", s.scopes.len()))
}

/// Enters a context with `:with`'s `settings` (written `spec`); returns
/// its summary.
fn enter(s: &mut Session, settings: &[(String, String)], spec: &str) -> Result<String> {
    let ctx = context_from("with", settings)?;
    let summary = ctx.summary();
    let guard = ctx.enter()?;
    s.scopes.push(Scope {
        spec: spec.to_string(),
        guard,
    });
    Ok(summary)
}

/// Enters again a context that was left, from its spec (the session's
/// roll-back after a failed `:end`).
pub(crate) fn enter_again(s: &mut Session, spec: &str) -> Result<()> {
    let a = Args::parse(&format!(":with {spec}"))?;
    enter(s, &a.settings, spec).map(drop)
}

/// The current context with `:with`-style settings applied (opt_level,
/// disabled, required, config.KEY); `command` names the command in errors.
pub(super) fn context_from(command: &str, settings: &[(String, String)]) -> Result<PassContext> {
    let mut ctx = PassContext::inherit();
    for (key, value) in settings {
        ctx = match key.as_str() {
            "opt_level" => ctx.with_opt_level(
                value
                    .parse()
                    .map_err(|_| err(command, format!("opt_level expects 0-3, got '{value}'")))?,
            ),
            "disabled" => ctx.with_disabled(comma_list(value)),
            "required" => ctx.with_required(comma_list(value)),
            // Short for the code generation settings.
            "codegen" => ctx.with_config_text(crate::jit::CODEGEN_OPT_LEVEL_KEY, value)?,
            "cpu" => ctx.with_config_text(crate::pass::llvm_keys::TARGET_CPU, value)?,
            "features" => ctx.with_config_text(crate::pass::llvm_keys::TARGET_FEATURES, value)?,
            k => match k.strip_prefix("config.") {
                Some(option) => ctx.with_config_text(option, value)?,
                None => {
                    return Err(Error::Command {
                        command: command.into(),
                        message: format!("unknown setting '{k}'"),
                        suggestions: crate::nearest_names(
                            k,
                            [
                                "opt_level",
                                "disabled",
                                "required",
                                "codegen",
                                "cpu",
                                "features",
                                "config.",
                            ],
                        ),
                    })
                }
            },
        };
    }
    if ctx.opt_level() > 3 {
        return Err(err(
            command,
            format!("opt_level expects 0-3, got {}", ctx.opt_level()),
        ));
    }
    Ok(ctx)
}

pub(super) fn end(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let scope = s
        .scopes
        .pop()
        .ok_or_else(|| err("end", "no :with context to leave"))?;
    scope.guard.exit()?;
    text(format!(
        "left context {}: {}",
        s.scopes.len() + 1,
        scope.spec
    ))
}

pub(super) fn context(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let mut t = Table::new(
        "pass contexts, outermost first",
        &["#>", ":with", "in effect"],
    );
    t.push(["0".into(), "(default)".into(), PassContext::new().summary()]);
    for (i, (scope, ctx)) in s.scopes.iter().zip(PassContext::stack()).enumerate() {
        t.push([(i + 1).to_string(), scope.spec.clone(), ctx.summary()]);
    }
    table(&t)
}
