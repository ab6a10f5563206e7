//! Where a module's IR comes from: IR text, bitcode, C or C++ source, as a
//! file or a string.

use super::clang;
use super::lang::Lang;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// One input of [`Module::load`](crate::Module::load).
#[derive(Clone, Debug)]
pub struct Source {
    lang: Lang,
    name: String,
    body: Body,
    clang_args: Vec<String>,
    level: clang::Level,
    dir: Option<PathBuf>,
    lto: bool,
}

#[derive(Clone, Debug)]
enum Body {
    File(PathBuf),
    Text(Vec<u8>),
}

impl Source {
    /// A file whose extension says its language (`.ll .bc .c .cpp .cc .cxx`).
    pub fn file(path: impl AsRef<Path>) -> Result<Source> {
        let path = path.as_ref();
        let lang = Lang::from_extension(path).ok_or_else(|| {
            Error::Invalid(format!(
                "{}: cannot tell the language from the extension; use .ll, .bc, .c, .cpp, .cc or .cxx",
                path.display()
            ))
        })?;
        Ok(Source::file_as(path, lang))
    }

    /// The same source under another name (in messages and as the module's
    /// identifier): a file found on a search path keeps the name it was
    /// asked for by.
    pub fn named(mut self, name: &str) -> Source {
        self.name = name.to_string();
        self
    }

    /// A file in the given language, whatever its extension.
    pub fn file_as(path: impl AsRef<Path>, lang: Lang) -> Source {
        let path = path.as_ref();
        Source {
            lang,
            name: path.display().to_string(),
            body: Body::File(path.into()),
            clang_args: vec![],
            level: clang::Level::default(),
            dir: None,
            lto: false,
        }
    }

    /// Source text held in memory; `name` appears in messages.
    pub fn text(lang: Lang, text: &str, name: &str) -> Source {
        Source::bytes(lang, text.as_bytes(), name)
    }

    /// Bytes held in memory (IR text, bitcode, or C/C++ source).
    pub fn bytes(lang: Lang, bytes: &[u8], name: &str) -> Source {
        Source {
            lang,
            name: name.into(),
            body: Body::Text(bytes.to_vec()),
            clang_args: vec![],
            level: clang::Level::default(),
            dir: None,
            lto: false,
        }
    }

    /// Extra arguments for clang (`-I…`, `-D…`); ignored for LLVM sources.
    pub fn clang_args<I, S>(mut self, args: I) -> Source
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.clang_args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Which of clang's hand-overs a C or C++ source becomes (default
    /// `O2`, the level of a context's default `opt_level`); ignored for
    /// LLVM sources.
    pub fn level(mut self, level: clang::Level) -> Source {
        self.level = level;
        self
    }

    /// The folder clang runs in for this source (a project's unit: its
    /// build's folder, where its relative paths start); ignored for LLVM
    /// sources.
    pub fn in_dir(mut self, dir: impl AsRef<Path>) -> Source {
        self.dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Compiled as `clang -flto -c` compiles it (C and C++): with `-flto`,
    /// then `lto-pre-link<level>` in the compile's child, and the bitcode
    /// written with its module summary, for
    /// [`Module::link_for_lto`](crate::Module::link_for_lto).
    pub fn for_lto(mut self) -> Source {
        self.lto = true;
        self.clang_args.insert(0, "-flto".into());
        self
    }

    /// The name used in messages and as the module identifier.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The language of this source.
    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// LLVM IR (text or bitcode) of an LLVM source; `None` for C and C++,
    /// which [`compile`](Source::compile) turns into a module.
    pub(crate) fn ir(&self) -> Result<Option<Vec<u8>>> {
        match (&self.body, self.lang) {
            (Body::File(p), Lang::Llvm) => {
                let bytes = read_input(p)?;
                // (an empty .ll is an empty module, as for opt-19; an
                // empty .bc is no bitcode at all)
                if p.extension().is_some_and(|e| e == "bc") && !super::is_bitcode(&bytes) {
                    let message = format!(
                        "not LLVM bitcode ({} bytes, without bitcode's magic number 'BC' 0xC0DE)",
                        bytes.len()
                    );
                    return Err(Error::spec(p.display(), message));
                }
                Ok(Some(bytes))
            }
            (Body::Text(t), Lang::Llvm) => Ok(Some(t.clone())),
            _ => Ok(None),
        }
    }

    /// Compiles a C or C++ source into bitcode and its name counters (see
    /// [`clang::compile`]).
    pub(crate) fn compile(&self) -> Result<(Vec<u8>, Vec<u8>)> {
        let input = match &self.body {
            Body::File(p) => {
                let full = match &self.dir {
                    Some(d) => d.join(p),
                    None => p.clone(),
                };
                if !full.exists() {
                    return Err(Error::io(full.display(), "no such file"));
                }
                clang::Input::File(p)
            }
            Body::Text(t) => clang::Input::Text(t),
        };
        clang::compile(
            self.lang,
            input,
            self.level,
            &self.clang_args,
            &self.name,
            self.dir.as_deref(),
            self.lto,
        )
    }
}

/// The most passlab reads of one IR or bitcode file (sqlite3's whole
/// program is tens of megabytes of IR text).
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Reads an input file the user named: a regular file of at most
/// [`MAX_INPUT_BYTES`], or an error saying what it is instead. A FIFO
/// would block the session with no end, and `/dev/zero` fill its memory.
pub(crate) fn read_input(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path.display(), e))?;
    if !meta.is_file() {
        return Err(Error::io(
            path.display(),
            "not a regular file (a device, a pipe or a folder); passlab reads IR and bitcode from files",
        ));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(Error::io(
            path.display(),
            format!(
                "{} bytes, over the {MAX_INPUT_BYTES} passlab reads",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::new();
    // (bounded again while reading: the file may grow after the check)
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| Error::io(path.display(), e))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Error::io(
            path.display(),
            "grew past the size passlab reads while it was read",
        ));
    }
    Ok(bytes)
}
