//! A project as its build describes it: a `compile_commands.json` (the
//! format CMake's `CMAKE_EXPORT_COMPILE_COMMANDS`, Meson, Bear and clangd
//! use), one entry per translation unit with its folder, file and command
//! line.
//!
//! Each unit becomes a [`Source`] compiled with its own flags in its own
//! folder, through clang's hand-over at the level passlab is given, like
//! every other `:load`. A database says what the source *means*, never
//! what to run or write: whoever wrote it (a build, a download, a
//! colleague) is not asked to be trusted with loading code into passlab or
//! writing files wherever they say, which clang does for many of its
//! flags (`-fpass-plugin=`, `-Xclang -load`, `-MF FILE`, `-Wp,-MD,FILE`,
//! `--serialize-diagnostics FILE`, `-ftime-trace=`, `--config FILE`, …).
//! clangd, reading the same databases, refuses to run what they name
//! unless allowed; passlab keeps, by an allow-list ([`rule`]), only:
//!
//! * include paths and included files: `-I`, `-isystem`, `-iquote`,
//!   `-idirafter`, `-isysroot`, `--sysroot`, `-iprefix`, `-iwithprefix…`,
//!   `-nostdinc…`, `-include FILE`, `-imacros FILE` (reading headers is
//!   what compiling the source does);
//! * macros: `-D`, `-U`, `-A`, `-undef`;
//! * the language and its standard: `-x` (it sets the unit's language),
//!   `-std=`, `-ansi`, `-trigraphs`;
//! * the target: `--target=`, `-target`, every `-m` option (`-march=`,
//!   `-mcpu=`, …) but `-mllvm`;
//! * the `-f` flags that change what the source means or how clang's front
//!   end turns it into IR, by name (a list: dialect, types and ABI,
//!   undefined behaviour, floating point, code model, debug info), with or
//!   without `no-`;
//! * debug info (`-g`, `-gdwarf-N`, …, not `-gsplit-dwarf`), warnings
//!   (`-W…` but `-Wp,`, `-Wl,`, `-Wa,`; `-w`, `-pedantic`), `-pthread`.
//!
//! Everything else is left out, and [`Unit::dropped`] says what: the
//! compiler's name, `-c`, `-o FILE`, the dependency-file flags (`-MD`,
//! `-MF FILE`, …), the optimization level (`-O2`: the hand-over's level is
//! passlab's, so that the pipelines run on the unit are the ones the user
//! names), `-flto` (link-time optimization is the loader's `link=lto`),
//! and every flag not on the list: plugins, profiles, optimization records,
//! traces, module caches, crash reports, sanitizers, `-save-temps`, `-B`,
//! `--config`, `-Wp,…` (it can hide `-MD,FILE`), and `-Xclang`,
//! `-Xpreprocessor`, `-mllvm` and every other option that takes the next
//! word, with that word (clang-19's driver options of that kind, from its
//! option table), so that no value is ever read as a flag of its own.
//!
//! Response files (`@FILE`, in `command` or `arguments`) are read here, as
//! clang reads them (GNU quoting; a nested `@FILE` is relative to the
//! unit's folder too), only from the project's folder, the database's
//! (an entry's `directory` is the database's word, and may be `/`),
//! symbolic links and `..` resolved. A response file
//! outside them, missing, not a regular file, or larger than 1 MiB refuses
//! that entry, which is skipped with why; what a response file holds goes
//! through the same allow-list.
//!
//! [`compile`] compiles units in parallel, each in a forked child as
//! every compile is.

use super::lang::Lang;
use super::source::Source;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// One translation unit of a project.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    /// Its file relative to the folder all the project's units are under
    /// (`src/lapi.c`): its module's name.
    pub name: String,
    /// The file, as the entry names it (relative to `directory` or
    /// absolute).
    pub file: PathBuf,
    /// The build's folder for this unit: clang runs there.
    pub directory: PathBuf,
    pub lang: Lang,
    /// The unit's own flags, passed to clang after passlab's.
    pub flags: Vec<String>,
    /// What was left out of its command line (see the module
    /// documentation).
    pub dropped: Vec<String>,
}

/// The units of a `compile_commands.json`, in its order.
#[derive(Clone, Debug, PartialEq)]
pub struct Project {
    pub path: PathBuf,
    /// The deepest folder all units' files are under.
    pub root: PathBuf,
    pub units: Vec<Unit>,
    /// Entries that are not C or C++ (assembly, …) or whose response
    /// files were refused: their file and why.
    pub skipped: Vec<(String, String)>,
}

/// What the allow-list does with a word where clang expects a flag (see
/// the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Kept: alone, or with its value joined (`-DX=1`, `-std=c99`).
    Kept,
    /// Kept with the next word, its value (`-I DIR`).
    KeptWithNext,
    /// The unit's language (`-x c++`, `--language=c`): the next word when
    /// `next`. passlab gives clang the language itself.
    Language { next: bool },
    /// Left out, with the next this many words: the values of an option
    /// that takes them (`-Xclang -load`, `-MF FILE`; 0 for none).
    Dropped(usize),
}

/// clang-19's driver options that take the next word as their value
/// (its option table's `Separate` and `JoinedOrSeparate` options), but for
/// those kept: each is dropped with that word, so that the value
/// (`-Xclang -load`, `-mllvm -stats`) is never read as a flag of its own.
const DROPPED_WITH_NEXT: &str = "-alias_list -allowable_client --analyzer-output -arch -arch_only \
    -arcmt-migrate-report-output -B -b --bootclasspath -bundle_loader \
    -ccc-arcmt-migrate -ccc-gcc-name -ccc-install-dir -ccc-objcmt-migrate \
    --CLASSPATH --classpath -client_name -compatibility_version --config \
    -current_version -darwin-target-variant -darwin-target-variant-triple \
    -dependency-dot -dependency-file -dsym-dir -dumpdir --dyld-prefix \
    -dylib_file -dylinker_install_name -e --encoding \
    -exported_symbols_list --extdirs -F -fdebug-compilation-dir \
    -fexperimental-openacc-macro-override -filelist \
    -fmodule-implementation-of -fmodules-user-build-path --for-linker \
    --force-link -force_load -framework -ftrapv-handler -G \
    -gen-cdb-fragment-path -hlsl-entry -iapinotes-modules -iframework \
    -iframeworkwithsysroot --imacros -image_base -imultilib --include \
    -include-pch --include-prefix --include-with-prefix \
    --include-with-prefix-after --include-with-prefix-before -init \
    -install_name -interface-stub-version= -ivfsoverlay -L -l \
    -lazy_framework -lazy_library --library-directory -MF --mhwdiv -MJ \
    -mllvm -mmlir -module-dependency-dir -MQ -MT -multiply_defined \
    -multiply_defined_unused --no-system-header-prefix -o \
    -object-file-name --output --output-class-directory -pagezero_size \
    --param --prefix --print-file-name --print-prog-name -read_only_relocs \
    -reexport_framework -reexport_library --resource -resource-dir -rpath \
    --rtlib -seg1addr -seg_addr_table -seg_addr_table_filename \
    -segs_read_only_addr -segs_read_write_addr --serialize-diagnostics \
    -serialize-diagnostics --specs -specs --stdlib -sub_library \
    -sub_umbrella --system-header-prefix -T -u -umbrella -undefined \
    -unexported_symbols_list -V -validator-version --vfsoverlay \
    -vfsoverlay -weak_framework -weak_library -weak_reference_mismatches \
    -working-directory -Xanalyzer -Xarch_device -Xarch_host -Xassembler \
    -Xclang -Xcuda-fatbinary -Xcuda-ptxas -Xlinker \
    -Xmicrosoft-visualc-tools-root -Xmicrosoft-visualc-tools-version \
    -Xmicrosoft-windows-sdk-root -Xmicrosoft-windows-sdk-version \
    -Xmicrosoft-windows-sys-root -Xopenmp-target -Xpreprocessor -z \
    -Zlinker-input";

/// Dropped with the next word, whatever follows their name:
/// `-Xarch_arm64 -O3`, `-Xopenmp-target=nvptx64 -march=sm_80`.
const DROPPED_JOINED_AND_NEXT: &[&str] = &["-Xarch_", "-Xoffload-linker", "-Xopenmp-target="];

/// Darwin's linker options that take several words.
const DROPPED_WITH_WORDS: &[(&str, usize)] = &[
    ("-sectalign", 3),
    ("-sectcreate", 3),
    ("-sectobjectsymbols", 2),
    ("-sectorder", 3),
    ("-segaddr", 2),
    ("-segcreate", 3),
    ("-segprot", 3),
];

/// Kept with their value, joined (`-Iinclude`) or the next word
/// (`-I include`): where headers are, macros, files included first.
const KEPT_WITH_VALUE: &[&str] = &[
    "-I",
    "-isystem",
    "-isystem-after",
    "-iquote",
    "-idirafter",
    "-isysroot",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-iwithsysroot",
    "-cxx-isystem",
    "-stdlib++-isystem",
    "-D",
    "-U",
    "-A",
    "-include",
    "-imacros",
];

/// Kept with the next word, or with their value after `=` when they end
/// with `=` here.
const KEPT_LONG: &[&str] = &[
    "--sysroot",
    "--sysroot=",
    "-target",
    "--target=",
    "--std",
    "--std=",
    "-std=",
    "--include-directory",
    "--include-directory=",
    "--include-directory-after",
    "--include-directory-after=",
    "--define-macro",
    "--define-macro=",
    "--undefine-macro",
    "--undefine-macro=",
    "--assert",
    "--assert=",
    "-mthread-model",
    "-meabi",
    "-fnew-alignment",
];

/// Kept on their own.
const KEPT_ALONE: &[&str] = &[
    "-ansi",
    "--ansi",
    "-trigraphs",
    "--trigraphs",
    "-undef",
    "-nostdinc",
    "-nostdinc++",
    "-nostdlibinc",
    "-nobuiltininc",
    "-pthread",
    "-w",
    "-pedantic",
    "--pedantic",
    "-pedantic-errors",
    "--pedantic-errors",
];

/// The debug-info flags kept: how much, in which format. Not
/// `-gsplit-dwarf` (it writes a `.dwo` file), `-gmodules`, nor
/// `-gen-reproducer` or `-gen-cdb-fragment-path` (they write files too).
const KEPT_G: &str = "-g -g0 -g1 -g2 -g3 -ggdb -ggdb0 -ggdb1 -ggdb2 -ggdb3 -glldb -gsce \
    -gdbx -gmlt -gdwarf -gdwarf-2 -gdwarf-3 -gdwarf-4 -gdwarf-5 -gdwarf32 -gdwarf64 \
    -gline-tables-only -gline-directives-only -gcolumn-info -gno-column-info \
    -gstrict-dwarf -gno-strict-dwarf -gfull -gused -ginline-line-tables \
    -gno-inline-line-tables -gsimple-template-names -gno-simple-template-names \
    -gtemplate-alias -gno-template-alias";

/// The `-f` flags kept, by name (after `-f` and an optional `no-`, before
/// any `=`): those that change what the source means or how clang's front
/// end turns it into IR. Not kept: what writes or reads files of the
/// build's (plugins, profiles, optimization records, time traces, module
/// caches, crash reports, coverage), diagnostics' form, sanitizers and
/// instrumentation (they need a runtime the JIT does not have), LTO (the
/// loader's `link=lto`), and how clang's own pipeline is tuned
/// (`-fno-unroll-loops`: the pipeline is the user's).
const KEPT_F: &str = "\
    asm asm-blocks blocks borland-extensions char8_t coroutines declspec \
    delayed-template-parsing digraphs dollars-in-identifiers gnu-keywords \
    gnu89-inline gnu-inline-asm ms-compatibility ms-compatibility-version \
    ms-extensions ms-volatile operator-names pascal-strings \
    relaxed-template-template-args trigraphs zvector lax-vector-conversions \
    access-control elide-constructors sized-deallocation aligned-allocation \
    aligned-new new-alignment gnuc-version clang-abi-compat openmp openmp-simd \
    openmp-version input-charset exec-charset template-depth constexpr-depth \
    constexpr-steps bracket-depth freestanding \
    signed-char unsigned-char signed-bitfields unsigned-bitfields short-enums \
    short-wchar pack-struct max-type-align pcc-struct-return reg-struct-return \
    common exceptions cxx-exceptions rtti rtti-data use-cxa-atexit \
    threadsafe-statics c++-static-destructors register-global-dtors-with-atexit \
    strict-flex-arrays \
    strict-aliasing strict-overflow wrapv trapv delete-null-pointer-checks \
    strict-enums strict-vtable-pointers strict-return finite-loops \
    assume-sane-operator-new assume-nothrow-exception-dtor builtin math-errno \
    fast-math finite-math-only honor-infinities honor-nans trapping-math \
    signed-zeros reciprocal-math associative-math approx-func rounding-math \
    unsafe-math-optimizations fp-contract fp-model fp-exception-behavior \
    fp-eval-method denormal-fp-math excess-precision complex-arithmetic \
    cx-limited-range cx-fortran-rules protect-parens strict-float-cast-overflow \
    PIC pic PIE pie plt semantic-interposition direct-access-external-data \
    visibility data-sections function-sections unique-section-names \
    zero-initialized-in-bss merge-all-constants keep-static-consts \
    keep-persistent-storage-variables omit-frame-pointer \
    asynchronous-unwind-tables unwind-tables stack-protector \
    stack-clash-protection cf-protection trivial-auto-var-init \
    zero-call-used-regs tls-model emulated-tls jump-tables inline \
    inline-functions inline-hint-functions ident \
    standalone-debug limit-debug-info debug-macro eliminate-unused-debug-types \
    macro-prefix-map file-prefix-map debug-prefix-map";

/// `-f` names kept with whatever follows them after a `-`
/// (`-fvisibility-inlines-hidden`, `-fstack-protector-strong`,
/// `-fno-builtin-memcpy`).
const KEPT_F_FAMILIES: &[&str] = &[
    "visibility-",
    "stack-protector-",
    "trivial-auto-var-init-",
    "no-builtin-",
];

/// What the allow-list does with `word` where clang expects a flag (not a
/// value, not `@FILE`): see the module documentation.
pub fn rule(word: &str) -> Rule {
    let among = |list: &str| list.split_whitespace().any(|n| n == word);
    if among(DROPPED_WITH_NEXT) {
        return Rule::Dropped(1);
    }
    if let Some((_, n)) = DROPPED_WITH_WORDS.iter().find(|(f, _)| *f == word) {
        return Rule::Dropped(*n);
    }
    if DROPPED_JOINED_AND_NEXT.iter().any(|f| word.starts_with(f)) {
        return Rule::Dropped(1);
    }
    if word == "-x" || word == "--language" {
        return Rule::Language { next: true };
    }
    if word.starts_with("-x") || word.starts_with("--language=") {
        return Rule::Language { next: false };
    }
    let long = KEPT_LONG.iter().find(|f| match f.strip_suffix('=') {
        Some(_) => word.starts_with(*f),
        None => word == **f,
    });
    if let Some(f) = long {
        return if f.ends_with('=') {
            Rule::Kept
        } else {
            Rule::KeptWithNext
        };
    }
    if KEPT_WITH_VALUE.contains(&word) {
        return Rule::KeptWithNext;
    }
    // Joined: any option clang would read with a longer name is dropped
    // above (`-include-pch`), so the longest name here is clang's too.
    if KEPT_WITH_VALUE.iter().any(|f| word.starts_with(f)) || KEPT_ALONE.contains(&word) {
        return Rule::Kept;
    }
    let kept = if let Some(w) = word.strip_prefix("-W") {
        // `-Wp,-MD,FILE` writes FILE; `-Wl,` and `-Wa,` are for tools
        // passlab does not run.
        !["p,", "l,", "a,"].iter().any(|t| w.starts_with(t))
    } else if word.starts_with("-m") {
        // Target options, but those that are not: `-mllvm=…`,
        // `-module-…`, `-multiply_defined…` (and `-mllvm`, `-mmlir` with
        // their value, above).
        !["-mllvm", "-mmlir", "-module", "-multi"]
            .iter()
            .any(|t| word.starts_with(t))
    } else if word.starts_with("-g") {
        among(KEPT_G)
    } else if let Some(f) = word.strip_prefix("-f") {
        let name = f.split('=').next().unwrap_or(f);
        let plain = name.strip_prefix("no-").unwrap_or(name);
        KEPT_F.split_whitespace().any(|n| n == plain)
            || KEPT_F_FAMILIES
                .iter()
                .any(|p| name.starts_with(p) || plain.starts_with(p))
    } else {
        false
    };
    if kept {
        Rule::Kept
    } else {
        Rule::Dropped(0)
    }
}

/// The most bytes passlab reads from one response file.
const RESPONSE_FILE_LIMIT: u64 = 1 << 20;
/// The most bytes of response files one database splices in, in all (a
/// file named many times counts each time).
const RESPONSE_FILES_LIMIT: u64 = 16 << 20;
/// How deep response files may name response files.
const RESPONSE_FILE_DEPTH: usize = 8;

/// A compilation database entry's directory, file and command line (its
/// `arguments`, or its `command` split as a shell would); `at` says what
/// is wrong with it.
fn entry_parts(
    e: &serde_json::Value,
    at: &dyn Fn(&str) -> Error,
) -> Result<(PathBuf, PathBuf, Vec<String>)> {
    let field = |key: &str| e.get(key).and_then(serde_json::Value::as_str);
    let directory =
        PathBuf::from(field("directory").ok_or_else(|| at("has no \"directory\" string"))?);
    let file = PathBuf::from(field("file").ok_or_else(|| at("has no \"file\" string"))?);
    let words: Vec<String> = match (e.get("arguments"), field("command")) {
        (Some(serde_json::Value::Array(a)), _) => a
            .iter()
            .map(|w| w.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| at("has an \"arguments\" item that is not a string"))?,
        (None, Some(c)) => {
            shlex::split(c).ok_or_else(|| at("has a \"command\" with an unclosed quote"))?
        }
        _ => return Err(at("has neither \"arguments\" (a list) nor \"command\"")),
    };
    Ok((directory, file, words))
}

/// A unit's language: its `-x` (`given`), else C++ for a C++ `compiler`,
/// else its `file`'s extension's; or why it is skipped (not C or C++).
fn unit_lang(
    given: Option<&str>,
    compiler: &str,
    file: &Path,
) -> std::result::Result<Lang, String> {
    let lang = match given {
        Some("c") => Some(Lang::C),
        Some("c++") => Some(Lang::Cpp),
        Some("none") | None if compiler.contains("++") => Some(Lang::Cpp),
        Some("none") | None => match Lang::from_extension(file) {
            Some(Lang::Llvm) | None => None,
            l => l,
        },
        Some(other) => {
            return Err(format!(
                "not C or C++ (-x {}; passlab compiles C and C++ units)",
                crate::error::clip(other, 40)
            ));
        }
    };
    lang.ok_or_else(|| "not C or C++ (passlab compiles C and C++ units)".to_string())
}

/// The first few `skipped` entries (file and why) as a note to a
/// database without units (empty if none were skipped).
fn skipped_note(skipped: &[(String, String)]) -> String {
    let why: Vec<String> = (skipped.iter().take(3))
        .map(|(f, why)| format!("{f}: {why}"))
        .collect();
    if why.is_empty() {
        String::new()
    } else {
        format!(" (skipped: {})", why.join("; "))
    }
}

impl Project {
    /// Reads a `compile_commands.json`, and the response files its
    /// entries name. Its errors name the file and the entry; an entry
    /// whose response file is refused is skipped, with why.
    pub fn read(path: &Path) -> Result<Project> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
        let bad = |what: String| Error::spec(path.display(), what);
        let entries: Vec<serde_json::Value> = serde_json::from_str(&text).map_err(|e| {
            bad(format!(
                "not a compilation database ({e}); it is a JSON list of {{\"directory\", \"file\", \"arguments\" or \"command\"}}"
            ))
        })?;
        let mut units: Vec<Unit> = Vec::new();
        let mut skipped = Vec::new();
        let mut responses = Responses::new(path);
        for (i, e) in entries.iter().enumerate() {
            let at = |what: &str| bad(format!("entry {} {what}", i + 1));
            let (directory, file, words) = entry_parts(e, &at)?;
            let Some((compiler, args)) = words.split_first() else {
                return Err(at("has an empty command line"));
            };
            let mut skip = |why: String| skipped.push((file.display().to_string(), why));
            let args = match responses.expand(args, &directory) {
                Ok(args) => args,
                Err(why) => {
                    skip(format!("entry {}: {why}", i + 1));
                    continue;
                }
            };
            let full = directory.join(&file);
            let split = split_flags(&args, &directory, &full);
            let lang = match unit_lang(split.lang.as_deref(), compiler, &file) {
                Ok(lang) => lang,
                Err(why) => {
                    skip(why);
                    continue;
                }
            };
            if units
                .iter()
                .any(|u| lexical(&u.directory.join(&u.file)) == lexical(&full))
            {
                // A file built twice (two targets): its first command.
                continue;
            }
            units.push(Unit {
                name: String::new(),
                file,
                directory,
                lang,
                flags: split.flags,
                dropped: split.dropped,
            });
        }
        if units.is_empty() {
            return Err(bad(format!(
                "has no C or C++ unit{}",
                skipped_note(&skipped)
            )));
        }
        let root = name_units(&mut units);
        Ok(Project {
            path: path.to_path_buf(),
            root,
            units,
            skipped,
        })
    }

    /// Keeps the units whose name matches one of `patterns` and none of
    /// the exclusions among them (`!test/*`); with exclusions only, every
    /// other unit. Patterns are globs over a unit's path in which `*`, `?`
    /// and `[…]` stay within one folder (`*.c` is `adler32.c`, not
    /// `test/example.c`) and a `**` folder crosses folders (`**/*.c`,
    /// `test/**`). An error if a pattern matches no unit, or if nothing is
    /// left.
    pub fn keep(&mut self, patterns: &[String]) -> Result<()> {
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..glob::MatchOptions::new()
        };
        let mut keep = Vec::new();
        let mut drop = Vec::new();
        for p in patterns {
            let (list, text) = match p.strip_prefix('!') {
                Some(rest) => (&mut drop, rest),
                None => (&mut keep, p.as_str()),
            };
            let g = glob::Pattern::new(text).map_err(|e| {
                Error::Invalid(format!(
                    "'{p}' is not a valid pattern: {e} (a glob such as src/*.c or **/*.c, or !GLOB to leave units out)"
                ))
            })?;
            if !self.units.iter().any(|u| g.matches_with(&u.name, options)) {
                return Err(Error::Invalid(format!(
                    "'{p}' matches no unit of {} (units: {}; '*' stays within a folder, '**/' crosses them)",
                    self.path.display(),
                    some_of(self.units.iter().map(|u| u.name.as_str()))
                )));
            }
            list.push(g);
        }
        let matches =
            |gs: &[glob::Pattern], name: &str| gs.iter().any(|g| g.matches_with(name, options));
        let before = self.units.len();
        self.units
            .retain(|u| (keep.is_empty() || matches(&keep, &u.name)) && !matches(&drop, &u.name));
        if self.units.is_empty() {
            return Err(Error::Invalid(format!(
                "only={} leaves none of the {before} units of {}",
                patterns.join(","),
                self.path.display()
            )));
        }
        Ok(())
    }

    /// The units as sources at `level`, `extra` flags after each unit's
    /// own.
    pub fn sources(&self, level: super::Level, extra: &[String]) -> Vec<Source> {
        self.units
            .iter()
            .map(|u| {
                Source::file_as(&u.file, u.lang)
                    .named(&u.name)
                    .in_dir(&u.directory)
                    .level(level)
                    .clang_args(u.flags.iter().chain(extra).cloned())
            })
            .collect()
    }

    /// A name for the project's linked module: its units' folder's name.
    pub fn root_name(&self) -> String {
        self.root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "program".into())
    }

    /// The flags left out of the units' command lines that say how to
    /// build (`-c`, `-o FILE`, `-O2`, …) or were left out of every unit,
    /// each once, in the order first met.
    pub fn dropped(&self) -> Vec<&str> {
        let everywhere = self.left_out_everywhere();
        let mut out: Vec<&str> = Vec::new();
        for d in self.units.iter().flat_map(|u| &u.dropped) {
            if !out.contains(&d.as_str()) && (routine(d) || everywhere.contains(d.as_str())) {
                out.push(d);
            }
        }
        out
    }

    /// The rest, unit by unit: each unit that had flags left out that
    /// [`Project::dropped`] does not list, and those flags.
    pub fn dropped_by_unit(&self) -> Vec<(&str, Vec<&str>)> {
        let everywhere = self.left_out_everywhere();
        (self.units.iter())
            .map(|u| {
                let mut own: Vec<&str> = Vec::new();
                for d in &u.dropped {
                    if !routine(d) && !everywhere.contains(d.as_str()) && !own.contains(&d.as_str())
                    {
                        own.push(d);
                    }
                }
                (u.name.as_str(), own)
            })
            .filter(|(_, own)| !own.is_empty())
            .collect()
    }

    /// What was left out of every unit's command.
    fn left_out_everywhere(&self) -> std::collections::HashSet<&str> {
        let mut units_with: std::collections::HashMap<&str, usize> = Default::default();
        for u in &self.units {
            let mut seen = std::collections::HashSet::new();
            for d in &u.dropped {
                if seen.insert(d.as_str()) {
                    *units_with.entry(d.as_str()).or_default() += 1;
                }
            }
        }
        (units_with.into_iter())
            .filter(|(_, n)| *n == self.units.len())
            .map(|(d, _)| d)
            .collect()
    }
}

/// The first few of `names`, and how many more.
fn some_of<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let n = names.len();
    let mut first: Vec<&str> = names.take(6).collect();
    let more = format!("and {} more", n.saturating_sub(6));
    if n > 6 {
        first.push(&more);
    }
    first.join(", ")
}

/// What [`Project::load`] made of a project's units.
pub struct Loaded {
    /// The units that compiled, in the database's order: each name, its
    /// bitcode and its name counters (see [`super::Module::from_compiled`]).
    pub units: Vec<(String, Vec<u8>, Vec<u8>)>,
    /// The units that did not: each name, and what clang said.
    pub failed: Vec<(String, String)>,
    /// The units clang warned about: each name, and its warnings.
    pub warned: Vec<(String, String)>,
}

impl Project {
    /// Compiles every unit at `level` (`extra` flags after each unit's
    /// own; `lto`: as `clang -flto -c` does, [`Source::for_lto`]), as many
    /// at a time as the machine has cores, `progress` hearing each one
    /// finish (done, total, unit). An interrupt requested before it
    /// returns (from another thread, a signal handler or `progress`) ends
    /// it with [`Error::Interrupted`]; no unit compiling ends it with
    /// [`Error::Invalid`] and what clang said about each.
    pub fn load(
        &self,
        level: super::Level,
        extra: &[String],
        lto: bool,
        progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<Loaded> {
        let mut sources = self.sources(level, extra);
        if lto {
            sources = sources.into_iter().map(Source::for_lto).collect();
        }
        let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
        let compiled = compile(&sources, jobs, progress);
        // Asked here, not only by each unit's child: a request that comes
        // after the last child was waited for (a fast machine compiles the
        // units in a fraction of a second), or from the progress sink
        // itself, would otherwise go unseen, and the command would load
        // the project, the request left for the next command to clear.
        if crate::interrupt::requested() {
            let done = compiled.iter().filter(|(r, _)| r.is_ok()).count();
            return Err(Error::Interrupted {
                pass: format!(
                    "the load of {} ({done} of {} units compiled)",
                    self.path.display(),
                    sources.len()
                ),
            });
        }
        let mut units = Vec::new();
        let mut failed = Vec::new();
        let mut warned = Vec::new();
        for (src, (result, warnings)) in sources.iter().zip(compiled) {
            let name = src.name().to_string();
            if !warnings.is_empty() {
                warned.push((name.clone(), warnings));
            }
            match result {
                Ok((bitcode, counters)) => units.push((name, bitcode, counters)),
                Err(e @ Error::Interrupted { .. }) => return Err(e),
                Err(e) => failed.push((name, e.to_string())),
            }
        }
        if units.is_empty() {
            let why: Vec<String> = failed.iter().map(|(n, e)| format!("{n}: {e}")).collect();
            return Err(Error::Invalid(format!(
                "no unit of {} compiled:\n{}",
                self.path.display(),
                why.join("\n")
            )));
        }
        Ok(Loaded {
            units,
            failed,
            warned,
        })
    }
}

/// A unit's command line, filtered: see the module documentation.
struct Split {
    /// Its flags for clang.
    flags: Vec<String>,
    /// What was left out, each as [`shown`] lists it.
    dropped: Vec<String>,
    /// The last `-x`'s language, if any.
    lang: Option<String>,
}

/// A unit's flags for clang (its command line after the compiler's name,
/// response files spliced in), what was dropped, its `-x`.
fn split_flags(args: &[String], dir: &Path, full: &Path) -> Split {
    let full = lexical(full);
    let mut out = Split {
        flags: Vec::new(),
        dropped: Vec::new(),
        lang: None,
    };
    let mut words = args.iter();
    // After `--`, every word is an input.
    let mut inputs_only = false;
    while let Some(w) = words.next() {
        if inputs_only || !w.starts_with('-') || w == "-" {
            // The unit's own file is passlab's to name; any other input
            // (a second file, standard input) is not this unit.
            if w.starts_with('-') || lexical(&dir.join(w)) != full {
                out.dropped.push(w.clone());
            }
            continue;
        }
        if w == "--" {
            inputs_only = true;
            out.dropped.push(w.clone());
            continue;
        }
        match rule(w) {
            Rule::Kept => out.flags.push(w.clone()),
            Rule::KeptWithNext => match words.next() {
                Some(v) => out.flags.extend([w.clone(), v.clone()]),
                None => out.dropped.push(format!("{w} (without its value)")),
            },
            Rule::Language { next } => {
                let lang = if next {
                    words.next().cloned()
                } else {
                    let v = w
                        .strip_prefix("--language=")
                        .or_else(|| w.strip_prefix("-x"));
                    v.map(str::to_string)
                };
                out.lang = lang.or(out.lang);
            }
            Rule::Dropped(n) => {
                let values: Vec<&String> = words.by_ref().take(n).collect();
                out.dropped.push(shown(w, &values));
            }
        }
    }
    out
}

/// The output files a build names per unit, listed as `FILE` so that one
/// mention says it for every unit.
const OUTPUT_FLAGS: &[&str] = &["-o", "-MF", "-MT", "-MQ", "-MJ"];

/// How a dropped flag and its values are listed.
fn shown(flag: &str, values: &[&String]) -> String {
    let output = |f: &&&str| flag == **f || (values.is_empty() && flag.starts_with(**f));
    if let Some(f) = OUTPUT_FLAGS.iter().find(output) {
        return format!("{f} FILE");
    }
    if let Some(rest) = flag.strip_prefix("-Wp,") {
        // `-Wp,-MD,FILE`, as the Linux kernel's build writes it per unit.
        let mut parts: Vec<&str> = rest.split(',').collect();
        for i in 1..parts.len() {
            if ["-MD", "-MMD", "-MF", "-MT", "-MQ"].contains(&parts[i - 1]) {
                parts[i] = "FILE";
            }
        }
        return format!("-Wp,{}", parts.join(","));
    }
    let mut out = flag.to_string();
    for v in values {
        out.push(' ');
        out.push_str(v);
    }
    out
}

/// Whether a dropped flag (as [`shown`] lists it) is one every build's
/// command has, about building rather than what the source means.
fn routine(shown: &str) -> bool {
    let level = shown.starts_with("-O") && (shown.len() <= 3 || shown == "-Ofast");
    level
        || shown.starts_with("-flto")
        || shown.starts_with("-fno-lto")
        || OUTPUT_FLAGS.iter().any(|f| shown == format!("{f} FILE"))
        || [
            "-c",
            "-S",
            "-E",
            "-M",
            "-MM",
            "-MD",
            "-MMD",
            "-MP",
            "-MG",
            "-emit-llvm",
            "-pipe",
            "--",
        ]
        .contains(&shown)
}

/// A database's response files, read as it is (see the module
/// documentation).
struct Responses {
    /// The database's folder, symbolic links resolved (none if it cannot
    /// be).
    folder: Option<PathBuf>,
    /// How many bytes of response files were spliced in so far.
    spliced: u64,
}

impl Responses {
    fn new(database: &Path) -> Responses {
        let folder = database
            .canonicalize()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf));
        Responses { folder, spliced: 0 }
    }

    /// `args` with each `@FILE` replaced by its words, for a unit whose
    /// folder is `dir`; or why not.
    fn expand(&mut self, args: &[String], dir: &Path) -> std::result::Result<Vec<String>, String> {
        if !args.iter().any(|a| a.starts_with('@')) {
            return Ok(args.to_vec());
        }
        // The database's folder only: an entry's `directory` is the
        // database's word too, and `"directory": "/"` would open every
        // file of the machine to being read as flags (and echoed in what
        // the load says it dropped).
        let folders: Vec<PathBuf> = self.folder.iter().cloned().collect();
        let mut out = Vec::new();
        self.splice(args, dir, &folders, 0, &mut out)?;
        Ok(out)
    }

    fn splice(
        &mut self,
        words: &[String],
        dir: &Path,
        folders: &[PathBuf],
        depth: usize,
        out: &mut Vec<String>,
    ) -> std::result::Result<(), String> {
        for w in words {
            if !w.starts_with('@') {
                out.push(w.clone());
                continue;
            }
            if depth == RESPONSE_FILE_DEPTH {
                return Err(format!(
                    "response files name response files more than {RESPONSE_FILE_DEPTH} deep, at '{}'",
                    crate::error::clip(w, 200)
                ));
            }
            let text = self.read(w, dir, folders)?;
            self.splice(&gnu_words(&text), dir, folders, depth + 1, out)?;
        }
        Ok(())
    }

    /// The text of the response file `word` names (`@FILE`), relative to
    /// `dir` as clang reads it, if it is in one of `folders`.
    fn read(
        &mut self,
        word: &str,
        dir: &Path,
        folders: &[PathBuf],
    ) -> std::result::Result<String, String> {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let named = format!("response file '{}'", crate::error::clip(word, 200));
        let name = &word[1..];
        if name.is_empty() {
            return Err(format!("{named} names no file"));
        }
        let path = dir.join(name);
        let lower = |e: std::io::Error| e.to_string().to_lowercase();
        let real = path
            .canonicalize()
            .map_err(|e| format!("{named}: {}: {}", path.display(), lower(e)))?;
        if !folders.iter().any(|f| real.starts_with(f)) {
            let folders: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
            return Err(format!(
                "{named} is {}, outside the project's folders ({}); passlab reads response files only there",
                real.display(),
                folders.join(", ")
            ));
        }
        // Not blocking: a FIFO or a device opens at once, and is then
        // refused as not a regular file.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&real)
            .map_err(|e| format!("{named}: {}: {}", real.display(), lower(e)))?;
        let meta = file
            .metadata()
            .map_err(|e| format!("{named}: {}: {}", real.display(), lower(e)))?;
        if !meta.is_file() {
            return Err(format!("{named}: {} is not a regular file", real.display()));
        }
        let too_big = |size: u64| {
            format!(
                "{named}: {} is {size} bytes, more than the {RESPONSE_FILE_LIMIT} passlab reads from a response file",
                real.display()
            )
        };
        if meta.len() > RESPONSE_FILE_LIMIT {
            return Err(too_big(meta.len()));
        }
        let mut bytes = Vec::new();
        file.take(RESPONSE_FILE_LIMIT + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{named}: {}: {}", real.display(), lower(e)))?;
        if bytes.len() as u64 > RESPONSE_FILE_LIMIT {
            return Err(too_big(bytes.len() as u64));
        }
        self.spliced += bytes.len() as u64;
        if self.spliced > RESPONSE_FILES_LIMIT {
            return Err(format!(
                "{named}: the database's response files come to more than {RESPONSE_FILES_LIMIT} bytes in all"
            ));
        }
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        String::from_utf8(bytes.to_vec())
            .map_err(|_| format!("{named}: {} is not UTF-8 text", real.display()))
    }
}

/// The words of a response file as clang-19 reads one on Linux (LLVM's
/// `TokenizeGNUCommandLine`): separated by spaces, tabs and line ends; a
/// backslash takes the next character as it is; single and double quotes
/// group, a backslash in them escaping too; `""` alone is no word; a
/// quote left open runs to the end.
fn gnu_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    let space = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n');
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some() => word.extend(chars.next()),
            '"' | '\'' => {
                while let Some(q) = chars.next() {
                    match q {
                        _ if q == c => break,
                        '\\' if chars.peek().is_some() => word.extend(chars.next()),
                        q => word.push(q),
                    }
                }
            }
            c if space(c) => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Names each unit by its file relative to the deepest folder all units'
/// files are under.
fn name_units(units: &mut [Unit]) -> PathBuf {
    let fulls: Vec<PathBuf> = units
        .iter()
        .map(|u| lexical(&u.directory.join(&u.file)))
        .collect();
    let mut root: PathBuf = fulls[0].parent().map(Path::to_path_buf).unwrap_or_default();
    while !fulls.iter().all(|f| f.starts_with(&root)) {
        if !root.pop() {
            break;
        }
    }
    for (u, f) in units.iter_mut().zip(&fulls) {
        u.name = f.strip_prefix(&root).unwrap_or(f).display().to_string();
    }
    root
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// What one unit's compile gave: its bitcode and name counters, and
/// clang's warnings (as it prints them; empty if none).
pub type Compiled = (Result<(Vec<u8>, Vec<u8>)>, String);

/// Compiles C and C++ `sources` with up to `jobs` at once (each in a
/// forked child), in any order; the results in `sources`' order, each
/// with its warnings (captured, not printed). `progress` hears, on this
/// thread, how many have finished and which finished last. After an
/// interrupt no unit starts: those in flight end with
/// [`Error::Interrupted`] (their children are killed), and so do those
/// never started.
pub fn compile(
    sources: &[Source],
    jobs: usize,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Vec<Compiled> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Compiled)>();
    let mut results: Vec<Option<Compiled>> = (0..sources.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, sources.len().max(1)) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || loop {
                // Not a fork per remaining unit only to kill it: the
                // interrupt is for the whole load.
                if crate::interrupt::requested() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(src) = sources.get(i) else { break };
                let compiled = crate::console::capture_warnings(|| src.compile());
                if tx.send((i, compiled)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut done = 0;
        for (i, r) in rx {
            done += 1;
            progress(done, sources.len(), sources[i].name());
            results[i] = Some(r);
        }
    });
    results
        .into_iter()
        .zip(sources)
        .map(|(r, src)| {
            r.unwrap_or_else(|| {
                // Only an interrupt leaves a unit unstarted; anything else
                // is a worker that died (a bug), said as such.
                let e = if crate::interrupt::requested() {
                    Error::Interrupted {
                        pass: format!("the load, before {} compiled", src.name()),
                    }
                } else {
                    Error::Invalid(format!("the compile of {} did not finish", src.name()))
                };
                (Err(e), String::new())
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join("compile_commands.json");
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn a_units_command_keeps_its_meaning_and_drops_its_building() {
        let dir = std::env::temp_dir().join(format!("plab-project-{}", std::process::id()));
        let p = write(
            &dir,
            r#"[
 {"directory": "/b", "file": "/s/src/a.c",
  "arguments": ["cc", "-I/s/include", "-DX=1", "-O3", "-std=c99", "-MD", "-MF", "a.d", "-o", "a.o", "-c", "/s/src/a.c"]},
 {"directory": "/b", "file": "../s/lib/b.cpp",
  "command": "/usr/bin/c++ -I'/s/my include' -flto=thin -g -c ../s/lib/b.cpp -o b.o"},
 {"directory": "/b", "file": "/s/src/x.S", "command": "cc -c /s/src/x.S"}
]"#,
        );
        let project = Project::read(&p).unwrap();
        assert_eq!(project.units.len(), 2);
        let (a, b) = (&project.units[0], &project.units[1]);
        assert_eq!((a.name.as_str(), a.lang), ("src/a.c", Lang::C));
        assert_eq!(a.flags, ["-I/s/include", "-DX=1", "-std=c99"]);
        assert_eq!(a.dropped, ["-O3", "-MD", "-MF FILE", "-o FILE", "-c"]);
        assert_eq!((b.name.as_str(), b.lang), ("lib/b.cpp", Lang::Cpp));
        assert_eq!(b.flags, ["-I/s/my include", "-g"]);
        assert_eq!(project.skipped.len(), 1);
        assert_eq!(project.dropped()[..2], ["-O3", "-MD"]);
        let mut only = project.clone();
        only.keep(&["lib/*".to_string()]).unwrap();
        assert_eq!(only.units.len(), 1);
        let e = only.keep(&["nothing*".to_string()]).unwrap_err();
        assert!(e.to_string().contains("'nothing*' matches no unit"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bad_database_says_which_entry() {
        let dir = std::env::temp_dir().join(format!("plab-project-bad-{}", std::process::id()));
        for (text, says) in [
            ("{", "not a compilation database"),
            ("[{\"file\": \"a.c\"}]", "entry 1 has no \"directory\""),
            (
                "[{\"directory\": \"/\", \"file\": \"a.c\", \"command\": \"cc 'a.c\"}]",
                "unclosed quote",
            ),
            (
                "[{\"directory\": \"/\", \"file\": \"a.c\", \"arguments\": [1]}]",
                "not a string",
            ),
            ("[]", "has no C or C++ unit"),
        ] {
            let p = write(&dir, text);
            let e = Project::read(&p).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_allow_list_keeps_what_the_source_means() {
        use Rule::*;
        for (word, want) in [
            ("-I", KeptWithNext),
            ("-Iinclude", Kept),
            ("-isystem", KeptWithNext),
            ("-isystem-after", KeptWithNext),
            ("-iquote", KeptWithNext),
            ("-idirafter/x", Kept),
            ("--sysroot=/s", Kept),
            ("--sysroot", KeptWithNext),
            ("-include", KeptWithNext),
            ("-imacrosm.h", Kept),
            ("-DX=1", Kept),
            ("-D", KeptWithNext),
            ("-UX", Kept),
            ("-std=c99", Kept),
            ("--std=c++17", Kept),
            ("-ansi", Kept),
            ("-x", Language { next: true }),
            ("-xc++", Language { next: false }),
            ("--language=c", Language { next: false }),
            ("--target=x86_64-linux-gnu", Kept),
            ("-target", KeptWithNext),
            ("-march=native", Kept),
            ("-mno-red-zone", Kept),
            ("-fPIC", Kept),
            ("-fno-strict-aliasing", Kept),
            ("-fwrapv", Kept),
            ("-fno-builtin", Kept),
            ("-fno-builtin-memcpy", Kept),
            ("-fvisibility=hidden", Kept),
            ("-fvisibility-inlines-hidden", Kept),
            ("-fno-common", Kept),
            ("-funsigned-char", Kept),
            ("-fno-exceptions", Kept),
            ("-fno-rtti", Kept),
            ("-fms-extensions", Kept),
            ("-fblocks", Kept),
            ("-fopenmp", Kept),
            ("-fstack-protector-strong", Kept),
            ("-g", Kept),
            ("-gdwarf-4", Kept),
            ("-Wall", Kept),
            ("-Wno-unused-parameter", Kept),
            ("-Werror=format", Kept),
            ("-w", Kept),
            ("-pedantic", Kept),
            ("-pthread", Kept),
            // How to build.
            ("-c", Dropped(0)),
            ("-o", Dropped(1)),
            ("-O2", Dropped(0)),
            ("-Ofast", Dropped(0)),
            ("-flto=thin", Dropped(0)),
            ("-MD", Dropped(0)),
            ("-MF", Dropped(1)),
            // What runs code or writes files, whatever its spelling.
            ("-fpass-plugin=/x/evil.so", Dropped(0)),
            ("-fplugin=/x/evil.so", Dropped(0)),
            ("-Xclang", Dropped(1)),
            ("-mllvm", Dropped(1)),
            ("-mllvm=-stats", Dropped(0)),
            ("-Xpreprocessor", Dropped(1)),
            ("-Xarch_arm64", Dropped(1)),
            ("-Wp,-MD,/x/deps", Dropped(0)),
            ("-Wl,-rpath,/x", Dropped(0)),
            ("-Wa,--noexecstack", Dropped(0)),
            ("--serialize-diagnostics", Dropped(1)),
            ("-serialize-diagnostics", Dropped(1)),
            ("-fsave-optimization-record", Dropped(0)),
            ("-foptimization-record-file=/x/r", Dropped(0)),
            ("-ftime-trace=/x/t", Dropped(0)),
            ("-save-temps", Dropped(0)),
            ("-save-temps=obj", Dropped(0)),
            ("-B", Dropped(1)),
            ("-B/x", Dropped(0)),
            ("-fprofile-instr-generate=/x/p", Dropped(0)),
            ("-fprofile-generate", Dropped(0)),
            ("-fprofile-use=/x/p", Dropped(0)),
            ("-fprofile-sample-use=/x/p", Dropped(0)),
            ("-fcoverage-mapping", Dropped(0)),
            ("--coverage", Dropped(0)),
            ("-ftest-coverage", Dropped(0)),
            ("-gsplit-dwarf", Dropped(0)),
            ("-gmodules", Dropped(0)),
            ("-gen-reproducer", Dropped(0)),
            ("-gen-cdb-fragment-path", Dropped(1)),
            ("-fmodules", Dropped(0)),
            ("-fmodules-cache-path=/x", Dropped(0)),
            ("-fcrash-diagnostics-dir=/x", Dropped(0)),
            ("--config", Dropped(1)),
            ("--config=/x/c.cfg", Dropped(0)),
            ("-include-pch", Dropped(1)),
            ("--include-with-prefix", Dropped(1)),
            ("-ivfsoverlay", Dropped(1)),
            ("-working-directory", Dropped(1)),
            ("-module-dependency-dir", Dropped(1)),
            ("-fstack-usage", Dropped(0)),
            ("-fproc-stat-report=/x", Dropped(0)),
            ("-fsanitize=address", Dropped(0)),
            ("-fcolor-diagnostics", Dropped(0)),
            ("-fsyntax-only", Dropped(0)),
            ("-emit-llvm", Dropped(0)),
            ("-v", Dropped(0)),
            ("-sectcreate", Dropped(3)),
        ] {
            assert_eq!(rule(word), want, "{word}");
        }
    }

    #[test]
    fn a_units_command_loses_what_runs_or_writes() {
        let words: Vec<String> = [
            "-DX",
            "-Xclang",
            "-load",
            "-Xclang",
            "/x/evil.so",
            "-I",
            "inc",
            "-mllvm",
            "-stats-file=/x/s",
            "-Wp,-MD,/x/a.d",
            "-fpass-plugin=/x/evil.so",
            "-D",
            "-fplugin=/x/evil.so",
            "-x",
            "c++",
            "--serialize-diagnostics",
            "/x/d",
            "a.c",
            "other.c",
            "-I",
        ]
        .iter()
        .map(|w| w.to_string())
        .collect();
        let split = split_flags(&words, Path::new("/b"), Path::new("/b/a.c"));
        // `-D`'s value is a macro's name, whatever it looks like.
        assert_eq!(
            split.flags,
            ["-DX", "-I", "inc", "-D", "-fplugin=/x/evil.so"]
        );
        assert_eq!(
            split.dropped,
            [
                "-Xclang -load",
                "-Xclang /x/evil.so",
                "-mllvm -stats-file=/x/s",
                "-Wp,-MD,FILE",
                "-fpass-plugin=/x/evil.so",
                "--serialize-diagnostics /x/d",
                "other.c",
                "-I (without its value)",
            ]
        );
        assert_eq!(split.lang.as_deref(), Some("c++"));
    }

    #[test]
    fn response_files_read_as_clang_reads_them() {
        assert_eq!(
            gnu_words(
                "-DTOP=1 @r2 \"-DQ=a b\" '-DS=c\\\\d' -DE=x\\ y \"\" -DL\n\t-D\"in\"side 'open"
            ),
            ["-DTOP=1", "@r2", "-DQ=a b", "-DS=c\\d", "-DE=x y", "-DL", "-Dinside", "open"]
        );
        let dir = std::env::temp_dir().join(format!("plab-project-rsp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (build, outside) = (dir.join("build"), dir.join("outside"));
        std::fs::create_dir_all(build.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let put = |p: PathBuf, text: &str| std::fs::write(p, text).unwrap();
        put(
            build.join("a.rsp"),
            "-DA=1 '-DB=two words' @sub/nested.rsp -fplugin=/x/e.so -o a.o",
        );
        put(
            build.join("sub/nested.rsp"),
            "-Iinc -Xclang -load -Xclang /x/e.so",
        );
        put(outside.join("far.rsp"), "-DFAR");
        put(build.join("big.rsp"), &"-w ".repeat(400_000));
        put(build.join("loop.rsp"), "@loop.rsp");
        std::os::unix::fs::symlink(outside.join("far.rsp"), build.join("link.rsp")).unwrap();
        let entry = |n: &str, rsp: &str| {
            format!(
                r#"{{"directory": "{}", "file": "{n}.c", "arguments": ["cc", "{rsp}", "-c", "{n}.c"]}}"#,
                build.display()
            )
        };
        let p = write(
            &build,
            &format!(
                "[{}]",
                [
                    entry("a", "@a.rsp"),
                    entry("b", &format!("@{}", outside.join("far.rsp").display())),
                    entry("c", "@../outside/far.rsp"),
                    entry("d", "@link.rsp"),
                    entry("e", "@missing.rsp"),
                    entry("f", "@big.rsp"),
                    entry("g", "@loop.rsp"),
                    entry("h", "@sub"),
                ]
                .join(",")
            ),
        );
        let project = Project::read(&p).unwrap();
        assert_eq!(project.units.len(), 1);
        let a = &project.units[0];
        assert_eq!(a.flags, ["-DA=1", "-DB=two words", "-Iinc"]);
        assert_eq!(
            a.dropped,
            [
                "-Xclang -load",
                "-Xclang /x/e.so",
                "-fplugin=/x/e.so",
                "-o FILE",
                "-c"
            ]
        );
        let why = |file: &str| {
            let (_, why) = project.skipped.iter().find(|(f, _)| f == file).unwrap();
            why.clone()
        };
        for (file, says) in [
            ("b.c", "entry 2: response file '@/"),
            ("b.c", "outside the project's folders"),
            ("c.c", "entry 3: response file '@../outside/far.rsp' is "),
            ("c.c", "outside the project's folders"),
            ("d.c", "entry 4: response file '@link.rsp' is "),
            ("d.c", "far.rsp, outside"),
            ("e.c", "entry 5: response file '@missing.rsp': "),
            ("e.c", "no such file"),
            ("f.c", "entry 6: response file '@big.rsp': "),
            ("f.c", "more than the 1048576 passlab reads"),
            (
                "g.c",
                "entry 7: response files name response files more than 8 deep",
            ),
            ("h.c", "entry 8: response file '@sub': "),
            ("h.c", "is not a regular file"),
        ] {
            assert!(why(file).contains(says), "{file}: {}", why(file));
        }
        // Only refused entries: the database says why it has no unit.
        let p = write(&build, &format!("[{}]", entry("c", "@../outside/far.rsp")));
        let e = Project::read(&p).unwrap_err().to_string();
        assert!(
            e.contains("has no C or C++ unit (skipped: c.c: entry 1: response file"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn what_every_unit_loses_is_said_once_the_rest_by_unit() {
        let dir = std::env::temp_dir().join(format!("plab-project-by-unit-{}", std::process::id()));
        let p = write(
            &dir,
            r#"[
 {"directory": "/b", "file": "a.c", "command": "cc -O2 -fcolor-diagnostics -c a.c -o a.o"},
 {"directory": "/b", "file": "b.c", "command": "cc -O2 -fcolor-diagnostics -fpass-plugin=/x/e.so -c b.c -o b.o"},
 {"directory": "/b", "file": "c.c", "command": "cc -fcolor-diagnostics c.c"}
]"#,
        );
        let project = Project::read(&p).unwrap();
        assert_eq!(
            project.dropped(),
            ["-O2", "-fcolor-diagnostics", "-c", "-o FILE"]
        );
        assert_eq!(
            project.dropped_by_unit(),
            [("b.c", vec!["-fpass-plugin=/x/e.so"])]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
