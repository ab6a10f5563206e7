//! `:cfg`: a function's control-flow graph, laid out by Graphviz.

use super::*;

const USAGE: &str =
    "expects FUNCTION [after=PIPELINE] [lines=N] [--out FILE.svg|FILE.png|FILE.dot]";

pub(super) fn cfg(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let mut words = a.words.clone();
    let out = take_out(&mut words, "cfg", ", such as cfg.svg")?;
    let [function] = words.as_slice() else {
        return Err(err("cfg", format!("{USAGE}, got '{}'", a.rest)));
    };
    let mut after = None;
    let mut lines = crate::graph::MAX_LINES;
    for (k, v) in &a.settings {
        match k.as_str() {
            "after" if !v.trim().is_empty() => after = Some(v.as_str()),
            "after" => {
                return Err(err(
                    "cfg",
                    "after= expects a pass or pipeline, such as after=simplifycfg",
                ))
            }
            // The table's kind checked the range (3 to 10000).
            "lines" => lines = super::whole("cfg", "lines", v)?,
            other => {
                return Err(Error::Command {
                    command: "cfg".into(),
                    message: format!("unknown setting '{other}' ({USAGE})"),
                    suggestions: crate::nearest_names(other, ["after", "lines"]),
                })
            }
        }
    }
    let name = current(s, "cfg")?;
    let g = crate::graph::of_function(s.module_named("cfg", &name)?, function, after, lines)?;
    match out {
        Some(path) => {
            g.write(&path)?;
            text(format!("{}written to {path}", g.text))
        }
        None => {
            let mut o = Output::default();
            o.items.push(Item::Display(Bundle {
                data: vec![
                    ("text/plain".into(), g.text.trim_end().to_string()),
                    ("image/svg+xml".into(), g.svg()?),
                ],
            }));
            Ok(o)
        }
    }
}
