//! What editors ask of the command language without running it: completion,
//! documentation of the word under the cursor, and whether an input is a
//! complete command. The REPL and the Jupyter kernel ask the same
//! questions, so they get the same answers.

use super::{commands, Session};
use crate::registry::{self, PassKind};

/// Whether an input can run as it is (Jupyter's `is_complete`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completeness {
    Complete,
    /// More lines are expected: a `:module` still waiting for its source.
    Incomplete,
    /// It cannot run; the reason says why.
    Invalid(String),
}

/// Characters that end the word being completed.
const WORD_BREAKS: &[char] = &[' ', '\t', '\n', ',', '=', '(', '<', '|'];

/// The start of the word that ends at `pos` in `line`.
fn word_start(line: &str, pos: usize) -> usize {
    line[..pos].rfind(WORD_BREAKS).map_or(0, |i| i + 1)
}

/// Completions for `line` with the cursor at byte `pos`, given the names
/// the session knows (`Session::completions`): the start of the word being
/// completed and the candidates, sorted. A word starting with `:` at the
/// start of the line completes command names; the first argument of a
/// command completes its keywords (`:plot t` → `timing`); other words
/// complete pass, module, function, buffer and config names.
pub fn complete_with(names: &[String], line: &str, pos: usize) -> (usize, Vec<String>) {
    let pos = pos.min(line.len());
    let pos = (0..=pos)
        .rev()
        .find(|&p| line.is_char_boundary(p))
        .unwrap_or(0);
    let start = word_start(line, pos);
    let word = &line[start..pos];
    let line_start = line[..start].rfind('\n').map_or(0, |i| i + 1);
    let before = &line[line_start..start];
    let mut out: Vec<String> = if before.trim().is_empty() && word.starts_with(':') {
        commands::COMMANDS
            .iter()
            .map(|c| format!(":{}", c.name))
            .filter(|c| c.starts_with(word))
            .collect()
    } else {
        let keywords = argument_keywords(before);
        let from_keywords: Vec<String> = keywords
            .iter()
            .filter(|k| k.starts_with(word))
            .map(|k| k.to_string())
            .collect();
        if !from_keywords.is_empty() {
            from_keywords
        } else {
            names
                .iter()
                .filter(|n| n.starts_with(word))
                .cloned()
                .collect()
        }
    };
    out.sort();
    out.dedup();
    (start, out)
}

/// The keywords of the argument that starts where `before` ends: a
/// command's first argument (`:plot t` → `timing`), or the word after one
/// that takes more (`:report remarks c` → `compare`).
fn argument_keywords(before: &str) -> &'static [&'static str] {
    if !before.ends_with(char::is_whitespace) {
        return &[];
    }
    let mut words = before.split_whitespace();
    let Some(command) = words.next().and_then(|w| w.strip_prefix(':')) else {
        return &[];
    };
    match (words.next(), words.next()) {
        (None, _) => commands::keywords(command),
        (Some(first), None) => commands::second_keywords(command, first),
        _ => &[],
    }
}

impl Session {
    /// [`complete_with`] over the names this session knows.
    pub fn complete(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        complete_with(&self.completions(), line, pos)
    }

    /// Documentation of the word at byte `pos` of `code`: a command, a pass,
    /// a config key, a module, function or buffer. `None` when the word is
    /// none of these.
    pub fn inspect(&self, code: &str, pos: usize) -> Option<String> {
        let pos = pos.min(code.len());
        let pos = (0..=pos).rev().find(|&p| code.is_char_boundary(p))?;
        let start = word_start(code, pos);
        let end = code[pos..]
            .find(|c: char| WORD_BREAKS.contains(&c) || c == '\n' || c == ')' || c == '>')
            .map_or(code.len(), |i| pos + i);
        let word = code[start..end].trim();
        if word.is_empty() {
            return None;
        }
        if let Some(c) = commands::COMMANDS
            .iter()
            .find(|c| word.strip_prefix(':').unwrap_or(word) == c.name)
        {
            return Some(format!(":{} {}\n\n{}", c.name, c.usage, c.help));
        }
        let key = word.strip_prefix("config.").unwrap_or(word);
        if let Ok(option) = registry::config_option(key) {
            return Some(format!(
                "config.{} ({}; default {})\n\n{}",
                option.key,
                option.ty(),
                option.default,
                option.description
            ));
        }
        if let Some(p) = registry::passes()
            .into_iter()
            .find(|p| p.name == registry::base_name(word))
        {
            let kind = match &p.kind {
                PassKind::Rust => "a Rust pass".to_string(),
                PassKind::Llvm { unit, params } => format!(
                    "an LLVM {unit} pass{}",
                    params
                        .as_ref()
                        .map_or(String::new(), |p| format!(", parameters {p}"))
                ),
            };
            return Some(format!(
                "{} ({kind}, opt_level {})\n\n{}",
                p.name,
                p.opt_level,
                if p.description.is_empty() {
                    "no description"
                } else {
                    &p.description
                }
            ));
        }
        if let Some(m) = self.modules.get(word) {
            let s = m.stats();
            return Some(format!(
                "module {word}: {} functions, {} blocks, {} instructions",
                s.functions, s.blocks, s.instructions
            ));
        }
        if let Some(b) = self.buffers.get(word) {
            return Some(format!("buffer {word}: {}", b.summary()));
        }
        if let Ok(m) = self.module() {
            if let Ok(text) = m.print_function(word) {
                return Some(text);
            }
        }
        None
    }

    /// Whether `input` is ready to run: every line a known command (or a
    /// comment), and a `:module`'s source present and finished — ending
    /// with a blank line or a line holding only `.`, as a console user
    /// ends a pasted source.
    pub fn is_complete(&self, input: &str) -> Completeness {
        let mut lines = input.lines();
        while let Some(line) = lines.next() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let Some(name) = super::args::command_name(t) else {
                return Completeness::Invalid(format!(
                    "commands start with ':' (try :help); got '{}'",
                    t.chars().take(40).collect::<String>()
                ));
            };
            if let Err(e) = commands::find(name) {
                return Completeness::Invalid(e.to_string());
            }
            if commands::find(name).is_ok_and(|c| c.body) {
                let mut has_source = false;
                let mut terminated = false;
                for l in lines.by_ref() {
                    if l.trim() == "." {
                        terminated = true;
                        break;
                    }
                    has_source |= !l.trim().is_empty();
                }
                if !has_source {
                    return Completeness::Incomplete;
                }
                if !terminated {
                    // The rest of the input is the source: finished when the
                    // user ends it with a blank line.
                    return if input.ends_with("\n\n") {
                        Completeness::Complete
                    } else {
                        Completeness::Incomplete
                    };
                }
            }
        }
        Completeness::Complete
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        [
            "instcombine",
            "instsimplify",
            "licm",
            "sum",
            "config.llvm.loop_unrolling",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    #[test]
    fn commands_then_keywords_then_names() {
        assert_eq!(
            complete_with(&names(), ":ru", 3),
            (0, vec![":run".to_string(), ":rust".to_string()])
        );
        assert_eq!(
            complete_with(&names(), ":run", 4),
            (0, vec![":run".to_string()])
        );
        let (start, m) = complete_with(&names(), ":run mem2reg,inst", 17);
        assert_eq!(start, 13);
        assert_eq!(m, vec!["instcombine", "instsimplify"]);
        assert_eq!(
            complete_with(&names(), ":plot t", 7).1,
            vec!["timing", "tune"]
        );
        assert_eq!(complete_with(&names(), ":plot ti", 8).1, vec!["timing"]);
        // The word after one that takes more.
        assert_eq!(
            complete_with(&names(), ":report remarks co", 18).1,
            vec!["compare"]
        );
        // The second line of a cell.
        assert_eq!(
            complete_with(&names(), ":stats\n:expla", 13),
            (7, vec![":explain".to_string()])
        );
        assert_eq!(
            complete_with(&names(), ":instrument print-c", 19).1,
            vec!["print-changed"]
        );
        // Past the first argument, names again.
        assert_eq!(complete_with(&names(), ":diff sum su", 12).1, vec!["sum"]);
        // A cursor inside a multi-byte character counts from before it.
        assert_eq!(complete_with(&names(), ":run é", 6).0, 5);
    }

    #[test]
    fn completeness_of_cells() {
        let s = Session::new();
        assert_eq!(s.is_complete(":stats"), Completeness::Complete);
        assert_eq!(s.is_complete(""), Completeness::Complete);
        assert_eq!(
            s.is_complete(":module m --lang c"),
            Completeness::Incomplete
        );
        assert_eq!(
            s.is_complete(":module m --lang c\nint f(void) {"),
            Completeness::Incomplete
        );
        assert_eq!(
            s.is_complete(":module m --lang c\nint f(void) { return 1; }\n."),
            Completeness::Complete
        );
        assert_eq!(
            s.is_complete(":module m --lang c\nint f(void) { return 1; }\n\n"),
            Completeness::Complete
        );
        assert!(matches!(s.is_complete("int x;"), Completeness::Invalid(_)));
        // After a terminated source, more commands.
        assert_eq!(
            s.is_complete(":module m --lang c\nint f(void) { return 1; }\n.\n:stats"),
            Completeness::Complete
        );
        assert!(matches!(
            s.is_complete(":module m --lang c\nint x;\n.\nint y;"),
            Completeness::Invalid(_)
        ));
        assert!(matches!(s.is_complete(":rnu"), Completeness::Invalid(m) if m.contains("'run'")));
    }

    #[test]
    fn inspect_commands_passes_and_config() {
        let s = Session::new();
        assert!(s
            .inspect(":run licm", 2)
            .unwrap()
            .starts_with(":run [PIPELINE]"));
        let licm = s.inspect(":run licm", 7).unwrap();
        assert!(licm.starts_with("licm (an LLVM loop pass"), "{licm}");
        let c = s.inspect(":with config.jit.timeout_ms=5", 15).unwrap();
        assert!(c.starts_with("config.jit.timeout_ms (an integer"), "{c}");
        assert_eq!(s.inspect(":run nosuchpass", 8), None);
    }
}
