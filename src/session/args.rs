//! [`Args`]: a command line split into the command, its words and its
//! `key=value` settings.

use crate::{Error, Result};

/// A parsed command line: `:with opt_level=3 disabled=licm` has command
/// `with`, no words, and two settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Args {
    pub command: String,
    /// Arguments that are not `key=value`, in order.
    pub words: Vec<String>,
    /// `key=value` arguments, in order.
    pub settings: Vec<(String, String)>,
    /// Everything after the command name, as typed.
    pub rest: String,
}

/// `line` without its trailing comment: a word starting with `#` begins a
/// comment that runs to the end of the line (`:plot tune   # best so far`),
/// as in the shell. A `#` inside a word (`a#b`) is text.
pub fn strip_comment(line: &str) -> &str {
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        if c == '#' && previous.is_whitespace() {
            return line[..i].trim_end();
        }
        previous = c;
    }
    line
}

/// The command name of a line starting with `:`.
pub(crate) fn command_name(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix(':')?;
    Some(rest.split_whitespace().next().unwrap_or(""))
}

impl Args {
    /// Splits `line` (which must start with `:`) at white space; a word
    /// with `=` whose key is not inside `<…>` or `(…)` is a setting; a word
    /// starting with `#` begins a comment ([`strip_comment`]).
    pub fn parse(line: &str) -> Result<Args> {
        let line = strip_comment(line.trim());
        let Some(body) = line.strip_prefix(':') else {
            return Err(Error::Invalid(format!(
                "commands start with ':' (try :help); got '{}'",
                line.chars().take(40).collect::<String>()
            )));
        };
        let mut parts = body.splitn(2, char::is_whitespace);
        let command = parts.next().unwrap_or("").to_string();
        let rest = parts.next().unwrap_or("").trim().to_string();
        let mut words = Vec::new();
        let mut settings = Vec::new();
        for word in rest.split_whitespace() {
            match setting(word) {
                Some((k, v)) => settings.push((k.to_string(), v.to_string())),
                None => words.push(word.to_string()),
            }
        }
        Ok(Args {
            command,
            words,
            settings,
            rest,
        })
    }
}

/// `key=value` when the `=` is outside brackets (so `loop-unroll<O3>` and
/// `function(licm)` stay words).
pub(crate) fn setting(word: &str) -> Option<(&str, &str)> {
    let eq = word.find('=')?;
    let key = &word[..eq];
    if key.is_empty() || key.contains(['<', '(', ',']) {
        return None;
    }
    Some((key, &word[eq + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_settings() {
        let a = Args::parse(":with opt_level=3 disabled=licm,gvn").unwrap();
        assert_eq!(a.command, "with");
        assert!(a.words.is_empty());
        assert_eq!(a.settings[0], ("opt_level".into(), "3".into()));
        assert_eq!(a.settings[1], ("disabled".into(), "licm,gvn".into()));
        let a = Args::parse(":run function(licm),loop-unroll<O3>").unwrap();
        assert_eq!(a.words, ["function(licm),loop-unroll<O3>"]);
        assert!(Args::parse("run").is_err());
        assert_eq!(command_name("  :module m --lang c"), Some("module"));
    }

    #[test]
    fn a_word_starting_with_a_hash_begins_a_comment() {
        let a = Args::parse(":plot tune                      # best so far, one line").unwrap();
        assert_eq!(
            (a.command.as_str(), a.words.as_slice()),
            ("plot", &["tune".to_string()][..])
        );
        assert_eq!(a.rest, "tune");
        let a = Args::parse(":tune save adler-best  # a :pass").unwrap();
        assert_eq!(a.words, ["save", "adler-best"]);
        let a = Args::parse(":stats\t# tab before").unwrap();
        assert!(a.words.is_empty() && a.rest.is_empty());
        // Inside a word it is text.
        let a = Args::parse(":load a#b.c k=v#w").unwrap();
        assert_eq!(a.words, ["a#b.c"]);
        assert_eq!(a.settings, [("k".to_string(), "v#w".to_string())]);
        assert_eq!(strip_comment("# all of it"), "");
    }
}
