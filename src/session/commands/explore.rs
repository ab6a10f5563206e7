//! `:explore`: the pipeline explorer over a recorded run.

use super::*;

pub(super) fn explore(s: &mut Session, a: &Args, _: Option<&str>) -> Result<Output> {
    let usage =
        "expects [FUNCTION [N]] [run=PIPELINE] [pass=NAME|GLOB] [changed=yes|no] [--out FILE.html]";
    let mut words = a.words.clone();
    let out_file = take_out(&mut words, "explore", ", such as explore.html")?;
    let mut run = None;
    let mut search = crate::explore::PassSearch::default();
    for (k, v) in &a.settings {
        match k.as_str() {
            "run" => run = Some(v.clone()),
            "pass" => search.pattern = v.clone(),
            "changed" => search.changed_only = matches!(v.as_str(), "yes" | "true"),
            other => {
                return Err(Error::Command {
                    command: "explore".into(),
                    message: format!("unknown setting '{other}' ({usage})"),
                    suggestions: crate::nearest_names(other, setting_keys("explore")),
                })
            }
        }
    }
    let mut o = Output::default();
    if let Some(p) = run {
        let recorder = Rc::new(crate::instrument::Explore::new());
        o = passes::run_recording(s, &p, "explore", Some(recorder))
            .map_err(|e| passes::with_reproducer_hint(e, &p))?;
    }
    let rec = s.recording.as_ref().ok_or_else(|| {
        err(
            "explore",
            "no run recorded yet: :explore run=PIPELINE runs one on the current module, or \
             :instrument explore records every :run",
        )
    })?;
    let find = |f: &str| recorded_function(s, rec, f);
    let (function, number) = match words.as_slice() {
        [] => (None, None),
        [f] => (Some(find(f)?), None),
        [f, n] => {
            let n = n
                .parse::<usize>()
                .map_err(|_| err("explore", format!("'{n}' is not a pass number ({usage})")))?;
            (Some(find(f)?), Some(n))
        }
        _ => return Err(err("explore", usage)),
    };
    let plain = crate::explore::text_searched(rec, function, number, &search)
        .map_err(|e| err("explore", e.to_string()))?;
    let select = function.map(|f| (f, number));
    if let Some(path) = out_file {
        let (page, stats) =
            crate::explore::html(rec, select, &search, true, crate::explore::budget());
        crate::folder::write_file(std::path::Path::new(&path), &page, ":explore --out")?;
        o.push_text(stats.note(&path));
        return Ok(o);
    }
    let mut bundle = super::super::Bundle::text(plain);
    if s.html {
        let (page, _) = crate::explore::html(rec, select, &search, false, crate::explore::budget());
        bundle.data.push(("text/html".into(), page));
    }
    o.items.push(Item::Display(bundle));
    // In a notebook, a pass picked by number: the function's control-flow
    // graph before and after it, beside its diff.
    if let (true, Some(f), Some(n)) = (s.html, function, number) {
        match pass_graphs(rec, f, n) {
            Ok(Some(b)) => o.items.push(Item::Display(b)),
            Ok(None) => {}
            Err(e) => o.push_text(format!("(no control-flow graphs: {e})")),
        }
    }
    Ok(o)
}

/// Function `f`'s control-flow graphs before and after pass number `n`
/// (as `:explore` numbers them) side by side, when that pass changed it;
/// drawn from the recorded texts.
fn pass_graphs(rec: &crate::instrument::Recording, f: usize, n: usize) -> Result<Option<Bundle>> {
    let passes = rec.passes_on(f);
    let Some(&i) = n.checked_sub(1).and_then(|k| passes.get(k)) else {
        return Ok(None);
    };
    let log = &rec.functions[f];
    let Some(k) = log.versions.iter().position(|v| v.pass as usize == i) else {
        return Ok(None);
    };
    let pass = &rec.passes[i].name;
    let mut plain = String::new();
    let mut html = String::from(
        "<div class=\"plab-cfg-pair\" style=\"display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start\">",
    );
    for (when, text) in [("before", log.text_at(k)), ("after", log.text_at(k + 1))] {
        // A function the pass deleted (or made) has no text on one side.
        let Some(cfg) = crate::module::Cfg::from_text(&log.name, &text) else {
            continue;
        };
        let title = format!("cfg: {} {when} {pass} (pass {n})", log.name);
        let g = crate::graph::Graph::new(&cfg, &title, crate::graph::MAX_LINES)?;
        plain.push_str(&g.text);
        html.push_str(&format!(
            "<div style=\"max-width:100%;overflow:auto\">{}</div>",
            g.svg()?
        ));
    }
    html.push_str("</div>");
    Ok(Some(Bundle {
        data: vec![
            ("text/plain".into(), plain.trim_end().to_string()),
            ("text/html".into(), html),
        ],
    }))
}

/// The index of function `f` in the recording `rec`; one it lacks is an
/// error saying whose run it is, which may be another module's than the
/// current one.
fn recorded_function(s: &Session, rec: &crate::instrument::Recording, f: &str) -> Result<usize> {
    crate::explore::function_index(rec, f).map_err(|e| match e {
        Error::NotFound { suggestions, .. } => {
            let hint = match &s.current {
                Some(current) if *current != rec.module => format!(
                    "; the current module is '{current}': :explore {f} run=PIPELINE records a run on it, or :instrument explore records its next :run"
                ),
                _ => String::new(),
            };
            Error::Command {
                command: "explore".into(),
                message: format!(
                    "no function named '{f}' in the recorded run ({} on module '{}'){hint}",
                    rec.pipeline, rec.module
                ),
                suggestions,
            }
        }
        other => other,
    })
}
