//! What editors ask of the command language without running it: completion,
//! documentation of the word under the cursor, and whether an input is a
//! complete command. The REPL and the Jupyter kernel ask the same
//! questions, so they get the same answers.

use super::kinds::{self, Kind};
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

/// Characters that end the word being completed inside a pipeline or a
/// list.
const WORD_BREAKS: &[char] = &[' ', '\t', '\n', ',', '=', '(', '<', '|'];

/// The start of the word that ends at `pos` in `line`.
fn word_start(line: &str, pos: usize) -> usize {
    line[..pos].rfind(WORD_BREAKS).map_or(0, |i| i + 1)
}

/// What completion needs of a session, taken after each command (the
/// REPL's editor holds one while the session waits for a line): the names
/// a word may be besides those of the registry, LLVM and the command
/// table.
#[derive(Clone, Debug, Default)]
pub struct Names {
    pub modules: Vec<String>,
    /// The current module's functions.
    pub functions: Vec<String>,
    pub buffers: Vec<String>,
    /// Where relative paths are looked for, in order (the session's
    /// folder first, then `:load`'s search path).
    pub folders: Vec<std::path::PathBuf>,
}

impl Names {
    /// Completions for `line` with the cursor at byte `pos`: the start of
    /// the text being completed and the candidates, sorted. Each word
    /// completes from its own kind, as the command table declares it
    /// (`commands::Command::settings` and `words`): a `:` at the start of a
    /// line completes commands; a `key=` value its kind (processors after
    /// `cpu=`, strategies after `strategy=`, passes after `disabled=`…,
    /// after the last comma of a list); a word without `=` the command's
    /// setting keys (`opt` → `opt_level=`) and what its position takes
    /// (modules after `:use`, functions after `:asm`, paths after
    /// `:load`, passes inside a pipeline).
    pub fn complete(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let pos = pos.min(line.len());
        let pos = (0..=pos)
            .rev()
            .find(|&p| line.is_char_boundary(p))
            .unwrap_or(0);
        let line_start = line[..pos].rfind('\n').map_or(0, |i| i + 1);
        let current = &line[line_start..pos];
        let token_start = current.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let token = &current[token_start..];
        let before = &current[..token_start];
        let at = |offset: usize| line_start + token_start + offset;
        let (start, mut out) = if before.trim().is_empty() {
            // The command itself.
            let mut out: Vec<String> = if token.starts_with(':') || token.is_empty() {
                commands::COMMANDS
                    .iter()
                    .map(|c| format!(":{}", c.name))
                    .filter(|c| c.starts_with(token))
                    .collect()
            } else {
                Vec::new()
            };
            // A unique command is complete: the space after it follows,
            // ready for its first argument (`:lo` → `:load `).
            if let [only] = out.as_mut_slice() {
                only.push(' ');
            }
            (at(0), out)
        } else {
            match before
                .split_whitespace()
                .next()
                .and_then(|w| w.strip_prefix(':'))
                .and_then(|name| commands::find(name).ok())
            {
                Some(command) => self.argument(command, before, token, at(0)),
                None => (at(0), Vec::new()),
            }
        };
        out.sort();
        out.dedup();
        (start, out)
    }

    /// Completions of `token` (starting at byte `start` of the input), an
    /// argument of `command` after `before` (the command and the words
    /// before it).
    fn argument(
        &self,
        command: &commands::Command,
        before: &str,
        token: &str,
        start: usize,
    ) -> (usize, Vec<String>) {
        if let Some((key, value)) = super::args::setting(token) {
            return match command.setting(key) {
                Some(setting) => self.setting_value(setting.kind, value, start + key.len() + 1),
                None => (start, Vec::new()),
            };
        }
        // A word: the command's setting keys, and what its position takes.
        let position = before
            .split_whitespace()
            .skip(1)
            .filter(|w| super::args::setting(w).is_none())
            .count();
        let kinds: &[Kind] = match command.words {
            [] => &[],
            words => words[position.min(words.len() - 1)],
        };
        let first = before
            .split_whitespace()
            .skip(1)
            .find(|w| super::args::setting(w).is_none());
        let mut out = setting_keys(command, token);
        let mut from = 0;
        for &kind in kinds {
            // Words that follow one first word only (`:report remarks source`).
            if matches!(kind, Kind::After(word, _) if first != Some(word)) {
                continue;
            }
            if kind == Kind::Path {
                out.extend(kinds::paths(token, &self.folders));
                continue;
            }
            // Inside a pipeline or a list, the word after the last break.
            if kinds::is_list(kind) {
                from = word_start(token, token.len());
            }
            let typed = &token[from..];
            let candidates = if kind == Kind::Pipeline {
                // Inside an adaptor, the passes of its IR unit.
                kinds::pipeline_candidates(&open_adaptors(&token[..from]))
            } else {
                self.candidates(kind)
            };
            // Words of a fixed set match in any case (`irsha` → `IrSha1`),
            // as the commands take them; names exactly.
            let any_case = matches!(kind, Kind::OneOf(_));
            out.extend(candidates.into_iter().filter(|c| {
                c.starts_with(typed)
                    || (any_case
                        && c.len() >= typed.len()
                        && c.is_char_boundary(typed.len())
                        && c[..typed.len()].eq_ignore_ascii_case(typed))
            }));
        }
        // Candidates that complete a sub-word replace only that part.
        if from > 0 {
            let head = &token[..from];
            out = out
                .into_iter()
                .map(|c| c.strip_prefix(head).map(str::to_string).unwrap_or(c))
                .collect();
            // Keys and keywords that start with the whole token no longer
            // fit after the sub-word's start; keep only sub-word candidates.
            let typed = &token[from..];
            out.retain(|c| c.starts_with(typed));
        }
        (start + from, out)
    }

    /// Completions of `value`, a setting's value of kind `kind` starting
    /// at byte `start` of the input: after the last comma of a list.
    fn setting_value(&self, kind: Kind, value: &str, start: usize) -> (usize, Vec<String>) {
        if kind == Kind::Path {
            return (start, kinds::paths(value, &self.folders));
        }
        let from = if kinds::is_list(kind) {
            value.rfind(',').map_or(0, |i| i + 1)
        } else {
            0
        };
        let typed = &value[from..];
        let out = self
            .candidates(kind)
            .into_iter()
            .filter(|c| c.starts_with(typed))
            .collect();
        (start + from, out)
    }

    fn candidates(&self, kind: Kind) -> Vec<String> {
        match kind {
            Kind::Module | Kind::Modules => self.modules.clone(),
            Kind::Function | Kind::Functions => self.functions.clone(),
            Kind::CallArg => self.buffers.clone(),
            other => kinds::candidates(other),
        }
    }
}

/// The adaptors still open at the end of pipeline text `head`, outermost
/// first (`function(loop-mssa(` → `function`, `loop-mssa`;
/// `function(licm),` → none), by base name (`repeat<2>(` → `repeat`).
fn open_adaptors(head: &str) -> Vec<&str> {
    let mut open: Vec<&str> = Vec::new();
    let (mut angle, mut start) = (0usize, 0usize);
    for (i, c) in head.char_indices() {
        match c {
            '<' => angle += 1,
            '>' => angle = angle.saturating_sub(1),
            _ if angle > 0 => {}
            '(' => {
                let name = head[start..i].trim();
                open.push(name.split('<').next().unwrap_or(name).trim());
                start = i + 1;
            }
            ')' => {
                open.pop();
                start = i + 1;
            }
            ',' => start = i + 1,
            _ => {}
        }
    }
    open
}

/// The setting keys of `command` that complete `token` (`key=`), and
/// the configuration keys for `config.`.
fn setting_keys(command: &commands::Command, token: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in command.settings {
        if s.key == "config." {
            out.extend(config_keys(token));
        } else if format!("{}=", s.key).starts_with(token) && !token.is_empty() {
            out.push(format!("{}=", s.key));
        }
    }
    out
}

/// `config.KEY=` for the registered options whose `config.KEY` starts with
/// `typed`.
fn config_keys(typed: &str) -> Vec<String> {
    if !typed.is_empty() && !"config.".starts_with(typed) && !typed.starts_with("config.") {
        return Vec::new();
    }
    registry::config_options()
        .into_iter()
        .map(|o| format!("config.{}=", o.key))
        .filter(|k| k.starts_with(typed))
        .collect()
}

impl Session {
    /// [`Names::complete`] over the names this session knows.
    pub fn complete(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        self.completions().complete(line, pos)
    }

    /// Documentation of the word at byte `pos` of `code`: a command (its
    /// `:help`), a pass, a config key, a module, function or buffer; for
    /// any other word of a command's line, that command's `:help`. `None`
    /// outside any command.
    pub fn inspect(&self, code: &str, pos: usize) -> Option<String> {
        let pos = pos.min(code.len());
        let pos = (0..=pos).rev().find(|&p| code.is_char_boundary(p))?;
        self.inspect_word(code, pos).or_else(|| {
            // Elsewhere on a command's line: that command's :help.
            let line_start = code[..pos].rfind('\n').map_or(0, |i| i + 1);
            let name = super::args::command_name(&code[line_start..])?;
            commands::find(name).ok().map(commands::command_help)
        })
    }

    /// What `inspect` says of the word at `pos` itself, if it is a
    /// command, a pass, a config key, a module, a function or a buffer.
    fn inspect_word(&self, code: &str, pos: usize) -> Option<String> {
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
            return Some(commands::command_help(c));
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
                "module {word}: {}, {}, {}",
                crate::table::count(s.functions, "function"),
                crate::table::count(s.blocks, "block"),
                crate::table::count(s.instructions, "instruction")
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

    fn names() -> Names {
        let dir = std::env::temp_dir().join(format!("passlab-complete-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("zlib")).unwrap();
        std::fs::write(dir.join("zlib/adler32.c"), "").unwrap();
        std::fs::write(dir.join("zlib/.hidden.c"), "").unwrap();
        Names {
            modules: vec!["sum".into(), "lower".into()],
            functions: vec!["sum".into(), "sum_squares".into()],
            buffers: vec!["buf".into()],
            folders: vec![dir],
        }
    }

    fn complete(line: &str) -> Vec<String> {
        names().complete(line, line.len()).1
    }

    #[test]
    fn commands_then_keywords_then_names() {
        let n = names();
        assert_eq!(
            n.complete(":ru", 3),
            (0, vec![":run".to_string(), ":rust".to_string()])
        );
        // A unique command comes with the space after it.
        assert_eq!(n.complete(":run", 4), (0, vec![":run ".to_string()]));
        assert_eq!(complete(":lo"), vec![":load "]);
        let (start, m) = n.complete(":run mem2reg,inst", 17);
        assert_eq!(start, 13);
        assert!(
            m.contains(&"instcombine".to_string()) && m.contains(&"instsimplify".to_string()),
            "{m:?}"
        );
        assert!(m.iter().all(|c| c.starts_with("inst")), "{m:?}");
        // Its words, and its settings (declared on its row).
        assert_eq!(complete(":plot t"), vec!["timing", "top=", "tune"]);
        assert_eq!(complete(":plot ti"), vec!["timing"]);
        // The word after one that takes more.
        assert_eq!(complete(":report remarks co"), vec!["compare"]);
        // The second line of a cell.
        assert_eq!(
            n.complete(":stats\n:expla", 13),
            (7, vec![":explain ".to_string()])
        );
        assert_eq!(
            complete(":instrument print-c"),
            vec!["print-changed", "print-changed="]
        );
        // A fixed set's words in any case (the spaces are taken so);
        // names exactly.
        assert_eq!(complete(":features irsha"), vec!["IrSha1"]);
        assert_eq!(
            complete(":features instc"),
            vec!["InstCount", "InstCountNorm"]
        );
        assert!(complete(":diff SU").is_empty());
        // Past the first argument of :diff, modules again, then functions.
        assert_eq!(complete(":diff sum su"), vec!["sum"]);
        assert_eq!(complete(":diff sum lower su"), vec!["sum", "sum_squares"]);
        // A cursor inside a multi-byte character counts from before it.
        assert_eq!(n.complete(":run é", 6).0, 5);
    }

    /// Each kind completes from its own domain, never from another's.
    #[test]
    fn each_argument_completes_from_its_kind() {
        // Processors after cpu=, not passes.
        let cpus = complete(":with cpu=sky");
        assert!(cpus.contains(&"skylake".to_string()), "{cpus:?}");
        assert!(cpus.iter().all(|c| c.starts_with("sky")), "{cpus:?}");
        assert_eq!(complete(":with cpu=ho"), vec!["host"]);
        // Features with their signs, after the last comma.
        let n = names();
        let (start, f) = n.complete(":with features=+sse2,+avx51", 27);
        assert_eq!(start, 21);
        assert!(f.contains(&"+avx512f".to_string()), "{f:?}");
        // Setting keys.
        assert_eq!(complete(":with opt"), vec!["opt_level="]);
        assert_eq!(complete(":with opt_level="), vec!["0", "1", "2", "3"]);
        assert_eq!(
            complete(":with config.jit.time"),
            vec!["config.jit.timeout_ms="]
        );
        assert_eq!(complete(":asm sum syn"), vec!["syntax="]);
        assert_eq!(complete(":asm sum syntax=i"), vec!["intel"]);
        // Strategies, goals, pools.
        assert_eq!(complete(":tune strategy=l"), vec!["local"]);
        assert_eq!(
            n.complete(":tune strategy=random,g", 24),
            (22, vec!["greedy".to_string()])
        );
        assert_eq!(complete(":tune goal=s"), vec!["size"]);
        assert!(complete(":tune pool=si").contains(&"size".to_string()));
        // Passes where passes are expected.
        assert_eq!(complete(":with disabled=lic"), vec!["licm"]);
        let (start, m) = n.complete(":with disabled=gvn,lic", 22);
        assert_eq!((start, m), (19, vec!["licm".to_string()]));
        assert_eq!(
            complete(":instrument print-changed=instcomb"),
            vec!["instcombine"]
        );
        // Inside an adaptor, the passes of its IR unit, as LLVM's
        // pipeline grammar nests them.
        let top = complete(":run li");
        assert!(top.contains(&"licm".to_string()), "{top:?}");
        let in_loop = complete(":run loop-mssa(li");
        assert!(in_loop.contains(&"licm".to_string()), "{in_loop:?}");
        assert!(
            !in_loop.contains(&"libcalls-shrinkwrap".to_string()),
            "{in_loop:?}"
        );
        let in_function = complete(":run function(loop-mssa(licm),li");
        assert!(
            in_function.contains(&"libcalls-shrinkwrap".to_string()),
            "{in_function:?}"
        );
        assert!(
            !in_function.contains(&"licm".to_string()),
            "{in_function:?}"
        );
        let (start, in_loop) = n.complete(":run function(loop-mssa(lo", 26);
        assert_eq!(start, 24);
        assert!(in_loop.contains(&"loop-rotate".to_string()), "{in_loop:?}");
        assert!(
            !in_loop.contains(&"loop-distribute".to_string()),
            "{in_loop:?}"
        );
        assert!(complete(":run cgscc(inl").contains(&"inline".to_string()));
        assert!(!complete(":run cgscc(inst").contains(&"instcombine".to_string()));
        assert!(complete(":run module(function(inst").contains(&"instcombine".to_string()));
        assert!(complete(":run function(repeat<2>(lo").contains(&"loop-mssa".to_string()));
        assert!(!complete(":run function(fold").contains(&"fold-int".to_string()));
        // Modules after :use, not passes.
        assert_eq!(complete(":use lo"), vec!["lower"]);
        // Functions of the current module after :asm and :call; buffers
        // as call arguments.
        assert_eq!(complete(":asm su"), vec!["sum", "sum_squares"]);
        assert_eq!(complete(":call sum b"), vec!["buf"]);
        // Paths after :load, relative to the session's folders; hidden
        // files only when asked for.
        assert_eq!(complete(":load zlib/ad"), vec!["zlib/adler32.c"]);
        assert_eq!(complete(":load zl"), vec!["zlib/"]);
        assert_eq!(complete(":load zlib/"), vec!["zlib/adler32.c"]);
        assert_eq!(complete(":load zlib/.h"), vec!["zlib/.hidden.c"]);
        // Words of one command's setting.
        assert_eq!(complete(":hunt oracle=j"), vec!["jit-o0"]);
        assert_eq!(complete(":instrument remarks kinds=mi"), vec!["missed"]);
        assert!(complete(":instrument remarks=size").contains(&"size-info".to_string()));
        // :help completes commands.
        assert_eq!(complete(":help tu"), vec!["tune"]);
        // Words declared on the command's row: :report remarks' second
        // word only after remarks; run= its word; pass= pass names.
        assert_eq!(complete(":report remarks so"), vec!["source"]);
        assert!(complete(":report timing so").is_empty());
        assert_eq!(complete(":report timing run=a"), vec!["all"]);
        assert_eq!(complete(":plot timing run=a"), vec!["all"]);
        assert_eq!(complete(":explore pass=lic"), vec!["licm"]);
        // Numbers complete nothing, but their keys do.
        assert!(complete(":tune trials=1").is_empty());
        assert_eq!(complete(":tune tri"), vec!["trials="]);
        assert_eq!(complete(":time sum min"), vec!["min_repeat_ms="]);
        assert_eq!(complete(":hunt csmith_"), vec!["csmith_args="]);
        // An unknown command or setting completes nothing.
        assert!(complete(":nosuch x").is_empty());
        assert!(complete(":with nosuch=a").is_empty());
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
        // Elsewhere on the line, the :help of its command, details too.
        assert!(s
            .inspect(":run nosuchpass", 8)
            .unwrap()
            .starts_with(":run [PIPELINE]"));
        let tune = s.inspect(":tune strategy=local trials=5", 9).unwrap();
        assert!(
            tune.starts_with(":tune ") && tune.contains("the default pool"),
            "{tune}"
        );
        assert_eq!(s.inspect("int x;", 2), None);
    }
}
