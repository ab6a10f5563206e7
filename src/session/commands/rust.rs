//! Passes written in Rust: :rust, :dep, :register.

use super::*;
use crate::session::Bundle;
use crate::user::{self, EvalError, Registration, UserKind};

/// The error for a failed evaluation: rustc's diagnostics with the lines of
/// the user's own text, or what went wrong.
fn eval_error(s: &Session, command: &str, e: EvalError, code: &str) -> Error {
    match e {
        EvalError::Compile(diagnostics) => Error::RustCompile {
            diagnostics: user::render_diagnostics(&diagnostics, code, &s.origin.0, s.origin.1 + 1),
        },
        EvalError::Other(message) => err(command, message),
    }
}

/// What a cell gave back, as output items.
fn cell_output(out: user::CellOutput, started: Option<f64>) -> Output {
    let mut o = Output::default();
    if let Some(secs) = started {
        o.items.push(Item::Stream(format!(
            "started the Rust worker (evcxr, passlab as a dependency) in {secs:.1} s\n"
        )));
    }
    if !out.stdout.is_empty() {
        o.items.push(Item::Stream(out.stdout));
    }
    if !out.stderr.is_empty() {
        o.items.push(Item::Stderr(out.stderr));
    }
    for data in out.displays {
        let mut data: Vec<(String, String)> = data;
        // text/plain first, as every bundle has it.
        data.sort_by_key(|(mime, _)| mime != "text/plain");
        if !data.iter().any(|(m, _)| m == "text/plain") {
            data.insert(0, ("text/plain".into(), String::new()));
        }
        o.items.push(Item::Display(Bundle { data }));
    }
    o
}

fn eval(s: &Session, command: &str, code: &str) -> Result<Output> {
    let first = !user::started();
    let start = std::time::Instant::now();
    let out = user::eval(code).map_err(|e| eval_error(s, command, e, code))?;
    Ok(cell_output(
        out,
        first.then(|| start.elapsed().as_secs_f64()),
    ))
}

pub(super) fn rust(s: &mut Session, a: &Args, body: Option<&str>) -> Result<Output> {
    no_args(a)?;
    let code = body.unwrap_or("");
    if code.trim().is_empty() {
        return Err(err(
            "rust",
            "expects Rust code on the lines after it (ending with a line holding only '.', or the end of the cell)",
        ));
    }
    eval(s, "rust", code)
}

pub(super) fn dep(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    if a.rest.is_empty() {
        return Err(err(
            "dep",
            "expects a crate: NAME = \"VERSION\" (from crates.io) or NAME = { path = \"DIR\" }",
        ));
    }
    let code = format!(":dep {}", absolute_paths(&a.rest));
    let mut out = eval(s, "dep", &code)?;
    out.push_text(format!("added {} for the Rust cells", a.rest));
    Ok(out)
}

pub(super) fn register(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let usage = "expects function_pass|module_pass NAME = FUNCTION [opt_level=N] [required=P,...]";
    let [kind, name, eq, function] = a.words.as_slice() else {
        return Err(err("register", usage));
    };
    if eq != "=" {
        return Err(err("register", usage));
    }
    let kind = match kind.as_str() {
        "function_pass" => UserKind::Function,
        "module_pass" => UserKind::Module,
        other => {
            return Err(Error::Command {
                command: "register".into(),
                message: format!("'{other}' is not a kind of pass: function_pass or module_pass"),
                suggestions: crate::nearest_names(other, ["function_pass", "module_pass"]),
            })
        }
    };
    let description = user::doc_comment(function)
        .unwrap_or_else(|| format!("Rust {}: {function}", kind.word().replace('_', " ")));
    let info = crate::PassInfo::new(name, 0).describe(&description);
    let info = super::passes::pass_settings("register", info, &a.settings)?;
    let replaced = registry::passes()
        .iter()
        .any(|p| p.name == *name && p.origin.is_user());
    user::register(Registration {
        info: info.clone(),
        kind,
        function: function.clone(),
    })
    .map_err(|e| eval_error(s, "register", e, ""))?;
    text(format!(
        "{} {} '{name}' {} runs {function}",
        if replaced { "replaced" } else { "registered" },
        kind.word().replace('_', " "),
        super::passes::settings_summary(&info),
    ))
}

/// `path = "DIR"` in a dependency, made absolute from where the session
/// runs (evcxr builds in a folder of its own, where a relative path would
/// mean something else).
fn absolute_paths(spec: &str) -> String {
    let Ok(cwd) = std::env::current_dir() else {
        return spec.to_string();
    };
    let mut out = String::new();
    let mut rest = spec;
    while let Some(at) = rest.find("path") {
        let (before, after) = rest.split_at(at + 4);
        out.push_str(before);
        let trimmed = after.trim_start();
        let Some(value) = trimmed.strip_prefix('=').map(str::trim_start) else {
            rest = after;
            continue;
        };
        let Some(quoted) = value.strip_prefix('"') else {
            rest = after;
            continue;
        };
        let Some(end) = quoted.find('"') else {
            rest = after;
            continue;
        };
        let path = std::path::Path::new(&quoted[..end]);
        let path = if path.is_relative() {
            cwd.join(path)
        } else {
            path.to_path_buf()
        };
        out.push_str(&format!(" = {:?}", path.display().to_string()));
        rest = &quoted[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn dependency_paths_become_absolute() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            super::absolute_paths(r#"h = { path = "crates/h" }"#),
            format!(
                r#"h = {{ path = {:?} }}"#,
                cwd.join("crates/h").display().to_string()
            )
        );
        assert_eq!(super::absolute_paths(r#"regex = "1""#), r#"regex = "1""#);
        assert_eq!(
            super::absolute_paths(r#"h = { path = "/abs" }"#),
            r#"h = { path = "/abs" }"#
        );
    }
}
