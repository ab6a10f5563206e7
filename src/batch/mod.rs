//! Batch jobs: work described by a TOML spec, split into shards that run
//! anywhere (one after the other here, Slurm job arrays, Kubernetes Indexed
//! Jobs), each shard writing its records as JSON lines that it resumes
//! from when run again, and a merge that reads the shards of one or more
//! folders back and checks they belong together.
//!
//! Sweeps ([`crate::sweep`], above the session, which builds their
//! programs) and hunts ([`hunt`], here: they need no session) are batch
//! jobs: what a unit of work does, and what their records and reports say,
//! is the only code each keeps. This layer holds the rest, once:
//!
//! * reading a spec: [`SpecFile`] (unknown keys with the nearest names,
//!   relative paths from the spec's folder, lists of strings, bounded
//!   numbers, corpus patterns, one name per file);
//! * which shard this process is: [`choose_shard`] (`--shard I/N`, or the
//!   index from Slurm or Kubernetes);
//! * the job's folder, owned as [`crate::folder`] owns folders:
//!   [`Job::claim`];
//! * a shard's records, `KIND-I-of-N.jsonl`: [`Job::open_shard`] refuses a
//!   file the job did not write, cuts a killed shard's torn last line,
//!   writes the job's manifest as the first record (or checks it) and
//!   appends each record with one `write`;
//! * the merge's reading: [`read_shards`] (every record of every shard of
//!   one job, its manifest, a torn or foreign shard refused by name) and
//!   the report's folder ([`Job::report_folder`]).
#![forbid(unsafe_code)]

pub mod hunt;

use crate::folder::{Access, OwnedDir, Owner};
use crate::{Error, Result};
use serde_json::{json, Value as Json};
use spec_error as bad;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A batch job as this layer sees it: its kind (`sweep`, `hunt`: the
/// command, and the prefix of its records' files), its name, the folder of
/// its spec, the spec's fingerprint (shards of one job agree on it) and
/// what its merge must know without the spec (the manifest's fields).
#[derive(Clone, Debug)]
pub struct Job {
    pub kind: &'static str,
    pub name: String,
    pub dir: PathBuf,
    pub fingerprint: String,
    pub manifest: Json,
}

impl Job {
    /// Who writes the job's folder: `passlab KIND`, every shard of one spec.
    pub fn owner(&self) -> Owner {
        Owner::new(
            format!("passlab {}", self.kind),
            format!(
                "the {} {} (its spec in {})",
                self.kind,
                self.name,
                self.dir.display()
            ),
            self.fingerprint.clone(),
        )
    }

    /// Where shards write when no folder is given: `NAME.KIND` beside the
    /// spec.
    pub fn default_out(&self) -> PathBuf {
        self.dir.join(format!("{}.{}", self.name, self.kind))
    }

    /// The folder `out` for shards of this job (shared with its other
    /// shards); `replace` as [`OwnedDir::claim`] takes it.
    pub fn claim(&self, out: &Path, replace: bool) -> Result<OwnedDir> {
        OwnedDir::claim(out, &self.owner(), Access::Shared, replace, "--replace")
    }

    /// The file of shard `index` of `count`.
    pub fn shard_file(&self, (index, count): (usize, usize)) -> String {
        format!("{}-{index}-of-{count}.jsonl", self.kind)
    }

    /// Opens shard `index` of `count` in `out` for appending, and returns
    /// it with the records it already holds (the manifest left out). A new
    /// shard's first record is the job's manifest; an old one's must be
    /// this job's, with this shard count.
    pub fn open_shard(
        &self,
        out: &OwnedDir,
        (index, count): (usize, usize),
    ) -> Result<(Shard, Vec<Json>)> {
        let name = self.shard_file((index, count));
        // Opened first: a file of that name the job did not write is
        // refused before it is read (or its torn last line cut).
        let file = out.append(&name)?;
        let mut shard = Shard {
            file,
            path: out.join(&name),
        };
        let mut records = read_records(&shard.path, Torn::Cut)?;
        match records.first() {
            None => {
                let mut m = json!({
                    "kind": "manifest", self.kind: self.name, "spec": self.fingerprint,
                    "shard": index, "shards": count,
                    "passlab": env!("CARGO_PKG_VERSION"), "llvm": crate::llvm::version(),
                });
                if let (Json::Object(m), Json::Object(extra)) = (&mut m, &self.manifest) {
                    for (k, v) in extra {
                        m.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                shard.append(&m)?;
            }
            Some(m) if m["kind"] == "manifest" => {
                if m["spec"] != json!(self.fingerprint) || m["shards"] != json!(count) {
                    return Err(Error::folder(shard.path.display(), format!(
                        "holds another {}'s records (spec {}, {} shards; this one is {}, {count} shards): use another folder",
                        self.kind,
                        m["spec"].as_str().unwrap_or("?"),
                        m["shards"],
                        self.fingerprint
                    )));
                }
                records.remove(0);
            }
            Some(_) => {
                return Err(Error::spec(
                    shard.path.display(),
                    format!(
                        "its first record is not a {}'s manifest: use another folder",
                        self.kind
                    ),
                ))
            }
        }
        Ok((shard, records))
    }

    /// The folder the merge writes its report into: a folder of its own
    /// (made with its marker; the same job's report is written again
    /// there; anything else is refused unless `replace`, as
    /// [`OwnedDir::claim_report`] says).
    pub fn report_folder(&self, out: &Path, replace: bool) -> Result<OwnedDir> {
        let owner = Owner::new(
            format!("passlab {} merge", self.kind),
            format!("the report of the {} {}", self.kind, self.name),
            self.fingerprint.clone(),
        );
        OwnedDir::claim_report(out, &owner, replace)
    }
}

/// One shard's records file, open for appending.
pub struct Shard {
    file: std::fs::File,
    path: PathBuf,
}

impl Shard {
    /// Appends `record` as one line, in one `write` (a killed shard leaves
    /// at most a torn last line).
    pub fn append(&mut self, record: &Json) -> Result<()> {
        let mut line = record.to_string();
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(|e| Error::io(self.path.display(), e))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// What to do with a torn last line (no newline: a killed shard's, or one
/// being written).
#[derive(Clone, Copy, PartialEq)]
enum Torn {
    /// Cut it from the file (a shard opening its own file again).
    Cut,
    /// Leave it out (another shard's file, still being written).
    Skip,
    /// An error (the merge: the shard must run again).
    Refuse,
}

/// The records of `file` (none if there is no file), its torn last line
/// as `torn` says; a whole line that is not a record is an error naming
/// it.
fn read_records(file: &Path, torn: Torn) -> Result<Vec<Json>> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(file.display(), e)),
    };
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if whole < bytes.len() && torn != Torn::Skip {
        if torn == Torn::Refuse {
            return Err(Error::spec(
                file.display(),
                "its last record is torn (the shard was stopped while writing): run that shard again to finish it",
            ));
        }
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .map_err(|e| Error::io(file.display(), e))?;
        f.set_len(whole as u64)
            .map_err(|e| Error::io(file.display(), e))?;
    }
    bytes[..whole]
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| {
            serde_json::from_slice(l).map_err(|e| {
                Error::spec(
                    format!("{}:{}", file.display(), i + 1),
                    format!("not a record ({e}); run that shard again into another folder"),
                )
            })
        })
        .collect()
}

/// What [`read_shards`] found: the job's manifest (the first shard's), the
/// other records of every shard in order, and how many shard files.
#[derive(Clone, Debug)]
pub struct Shards {
    pub manifest: Json,
    pub records: Vec<Json>,
    pub files: usize,
}

/// Reads the shards of one `kind` of job in `dirs` (the files
/// `KIND-I-of-N.jsonl`, nothing else the folders hold), checking that
/// each starts with a manifest and that all ran the same spec. With
/// `finished`, a shard's torn last line is an error (the merge: that shard
/// must run again); without, it is left out (shards still running).
pub fn read_shards(kind: &str, dirs: &[PathBuf], finished: bool) -> Result<Shards> {
    if dirs.is_empty() {
        return Err(Error::Invalid(format!(
            "{kind} merge expects the folders its shards wrote into"
        )));
    }
    let mut manifest: Option<(Json, PathBuf)> = None;
    let mut records = Vec::new();
    let mut files = 0;
    for dir in dirs {
        if !dir.is_dir() {
            return Err(Error::folder(
                dir.display(),
                format!("is not a folder: {kind} merge takes the folders its shards wrote into"),
            ));
        }
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e))?;
        let mut shards: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| parse_shard_file(kind, n))
                    .is_some()
            })
            .collect();
        shards.sort();
        for f in shards {
            files += 1;
            let torn = if finished { Torn::Refuse } else { Torn::Skip };
            let mut these = read_records(&f, torn)?;
            let m = match these.first() {
                Some(m) if m["kind"] == "manifest" => these.remove(0),
                Some(_) => {
                    return Err(Error::spec(
                        f.display(),
                        format!("its first record is not a {kind}'s manifest"),
                    ))
                }
                // Opened and killed before its manifest: nothing in it.
                None => continue,
            };
            match &manifest {
                Some((first, from)) if first["spec"] != m["spec"] => {
                    return Err(Error::Invalid(format!(
                        "{} is from another {kind} than {} (spec {} and {})",
                        f.display(),
                        from.display(),
                        m["spec"].as_str().unwrap_or("?"),
                        first["spec"].as_str().unwrap_or("?")
                    )))
                }
                Some(_) => {}
                None => manifest = Some((m, f.clone())),
            }
            records.extend(these);
        }
    }
    let (manifest, _) = manifest.ok_or_else(|| {
        Error::Invalid(format!(
            "no {kind}'s records ({kind}-I-of-N.jsonl) in {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    Ok(Shards {
        manifest,
        records,
        files,
    })
}

impl Shards {
    /// The job of `kind` that wrote these shards, as its manifest names it
    /// (for the report's folder: its name and its spec's fingerprint).
    pub fn job(&self, kind: &'static str) -> Job {
        Job {
            kind,
            name: self.manifest[kind].as_str().unwrap_or("").to_string(),
            dir: PathBuf::from("."),
            fingerprint: self.manifest["spec"].as_str().unwrap_or("").to_string(),
            manifest: Json::Null,
        }
    }
}

/// `KIND-I-of-N.jsonl` as (I, N).
fn parse_shard_file(kind: &str, name: &str) -> Option<(usize, usize)> {
    let (i, n) = name
        .strip_prefix(kind)?
        .strip_prefix('-')?
        .strip_suffix(".jsonl")?
        .split_once("-of-")?;
    Some((i.parse().ok()?, n.parse().ok()?))
}

/// `I/N` (`--shard 0/4`) as (I, N).
pub fn parse_shard(text: &str) -> Result<(usize, usize)> {
    let (i, n) = text
        .split_once('/')
        .ok_or_else(|| Error::Invalid(format!("--shard expects I/N such as 0/4, got '{text}'")))?;
    let number = |w: &str| {
        w.trim()
            .parse::<usize>()
            .map_err(|_| Error::setting("--shard", format!("'{w}' is not a number")))
    };
    let (i, n) = (number(i)?, number(n)?);
    if n == 0 || i >= n {
        return Err(Error::setting(
            format!("--shard {i}/{n}"),
            format!(
                "the index must be below the count (0/{n} to {}/{n})",
                n.max(1) - 1
            ),
        ));
    }
    Ok((i, n))
}

/// This process's shard: `--shard I/N` if given; else the environment's
/// (Slurm's array task, or a Kubernetes Indexed Job's completion index,
/// the count from `count`, else Slurm's task count, else
/// `PASSLAB_SHARDS`); else the only one, 0/1.
pub fn choose_shard(flag: Option<&str>, count: Option<usize>) -> Result<(usize, usize)> {
    match flag {
        Some(s) => parse_shard(s),
        None => Ok(shard_from_env(count)?.unwrap_or((0, 1))),
    }
}

/// The shard from the environment (see [`choose_shard`]).
pub fn shard_from_env(count: Option<usize>) -> Result<Option<(usize, usize)>> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let index = var("SLURM_ARRAY_TASK_ID").or_else(|| var("JOB_COMPLETION_INDEX"));
    let Some(index) = index else {
        return Ok(None);
    };
    let index: usize = index.parse().map_err(|_| {
        Error::Invalid(format!(
            "the shard index '{index}' from the environment is not a number"
        ))
    })?;
    let count = match count {
        Some(c) => c,
        None => var("SLURM_ARRAY_TASK_COUNT")
            .or_else(|| var("PASSLAB_SHARDS"))
            .ok_or_else(|| {
                Error::Invalid(
                    "a shard index is set but no count: pass --shards N, or set PASSLAB_SHARDS (Kubernetes: the Job's completions)".into(),
                )
            })?
            .parse()
            .map_err(|_| Error::Invalid("the shard count from the environment is not a number".into()))?,
    };
    if count == 0 || index >= count {
        return Err(Error::Invalid(format!(
            "shard {index} of {count} does not exist"
        )));
    }
    Ok(Some((index, count)))
}

/// A spec file read: its path, folder (where relative paths start), text
/// and TOML table, with helpers that name the file in every error.
pub struct SpecFile {
    pub path: PathBuf,
    pub dir: PathBuf,
    pub text: String,
    pub table: toml::Table,
}

impl SpecFile {
    /// Reads `path`, refusing a key not in `keys` (with the nearest names).
    pub fn read(path: &Path, keys: &[&str]) -> Result<SpecFile> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| bad(path, e.to_string().trim().to_string()))?;
        for k in table.keys() {
            if !keys.contains(&k.as_str()) {
                return Err(bad(
                    path,
                    format!(
                        "unknown key '{k}'{}",
                        crate::error::suggest(&crate::nearest_names(k, keys.iter().copied()))
                    ),
                ));
            }
        }
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        Ok(SpecFile {
            path: path.to_path_buf(),
            dir,
            text,
            table,
        })
    }

    /// An error about this spec.
    pub fn bad(&self, message: impl Into<String>) -> Error {
        bad(&self.path, message)
    }

    /// The job's name: `name = "…"`, else the file's stem.
    pub fn name(&self) -> Result<String> {
        match self.table.get("name") {
            None => Ok(self
                .path
                .file_stem()
                .map_or("job".into(), |s| s.to_string_lossy().into_owned())),
            Some(v) => v
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| self.bad("'name' must be a string")),
        }
    }

    /// `key` as a list of strings (a string alone is a list of one).
    pub fn strings(&self, key: &str) -> Result<Option<Vec<String>>> {
        strings_in(&self.path, &self.table, key)
    }

    /// `key` as a whole number from `lo` to `hi`.
    pub fn int(&self, key: &str, lo: i64, hi: i64) -> Result<Option<i64>> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::Integer(n)) if (lo..=hi).contains(n) => Ok(Some(*n)),
            Some(v) => Err(self.bad(format!(
                "'{key}' must be a whole number from {lo} to {hi}, found {}",
                match v {
                    toml::Value::Integer(n) => n.to_string(),
                    v => format!("a {}", v.type_str()),
                }
            ))),
        }
    }

    /// `key` as true or false.
    pub fn bool(&self, key: &str) -> Result<Option<bool>> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(self.bad(format!(
                "'{key}' must be true or false, found a {}",
                v.type_str()
            ))),
        }
    }

    /// The files `pattern` (relative to the spec's folder) matches,
    /// sorted; none is an error.
    pub fn files(&self, pattern: &str) -> Result<Vec<PathBuf>> {
        let full = self.dir.join(pattern);
        let mut files: Vec<PathBuf> = glob::glob(&full.to_string_lossy())
            .map_err(|e| self.bad(format!("corpus pattern '{pattern}': {e}")))?
            .filter_map(|r| r.ok())
            .filter(|p| p.is_file())
            .collect();
        if files.is_empty() {
            return Err(self.bad(format!("corpus pattern '{pattern}' matches no file")));
        }
        files.sort();
        Ok(files)
    }
}

/// An error about the spec at `path`.
pub fn spec_error(path: &Path, message: impl Into<String>) -> Error {
    Error::spec(path.display(), message)
}

/// `key` of `t` as a list of strings: a string or an array of strings.
pub fn strings_in(path: &Path, t: &toml::Table, key: &str) -> Result<Option<Vec<String>>> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(vec![s.clone()])),
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    bad(
                        path,
                        format!("'{key}' must hold strings, found a {}", v.type_str()),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(v) => Err(bad(
            path,
            format!(
                "'{key}' must be a string or a list of strings, found a {}",
                v.type_str()
            ),
        )),
    }
}

/// A file's name in a job, whatever way the spec's path and the file's
/// are spelled (`tiny.toml`, `./tiny.toml`, `$PWD/tiny.toml`; a glob's
/// match or a table's path): inside the spec's folder `dir`, the path from
/// there, both made canonical; elsewhere, the file's name.
pub fn program_name(dir: &Path, file: &Path) -> String {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    match canonical(file).strip_prefix(canonical(dir)) {
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => file.file_name().map_or_else(
            || file.to_string_lossy().into_owned(),
            |n| n.to_string_lossy().into_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("passlab-batch-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn job(fingerprint: &str) -> Job {
        Job {
            kind: "test",
            name: "t".into(),
            dir: ".".into(),
            fingerprint: fingerprint.into(),
            manifest: json!({"programs": ["a", "b"]}),
        }
    }

    #[test]
    fn a_shard_resumes_refuses_another_job_and_merges() {
        let root = temp("shard");
        let out = root.join("out");
        let j = job("f1");
        let dir = j.claim(&out, false).unwrap();
        let (mut s, old) = j.open_shard(&dir, (0, 2)).unwrap();
        assert!(old.is_empty());
        s.append(&json!({"n": 1})).unwrap();
        s.append(&json!({"n": 2})).unwrap();
        drop(s);
        // A killed shard's torn line: cut when the shard opens again.
        let f = out.join("test-0-of-2.jsonl");
        let mut text = std::fs::read_to_string(&f).unwrap();
        assert!(text.starts_with("{\"kind\":\"manifest\""), "{text}");
        std::fs::write(&f, format!("{text}{{\"n\":")).unwrap();
        let merged = read_shards("test", std::slice::from_ref(&out), true);
        assert!(
            merged.unwrap_err().to_string().contains("torn"),
            "the merge refuses a torn shard"
        );
        let (_, old) = j.open_shard(&dir, (0, 2)).unwrap();
        assert_eq!(old, [json!({"n": 1}), json!({"n": 2})]);
        text = std::fs::read_to_string(&f).unwrap();
        assert!(text.ends_with("{\"n\":2}\n"), "{text}");
        // A file of a shard's name that the job did not write, or one
        // holding another spec's records: refused.
        std::fs::copy(&f, out.join("test-0-of-3.jsonl")).unwrap();
        let e = j.open_shard(&dir, (0, 3)).map(|_| ()).unwrap_err();
        assert!(e.to_string().contains("passlab did not write it"), "{e}");
        std::fs::remove_file(out.join("test-0-of-3.jsonl")).unwrap();
        std::io::Write::write_all(
            &mut dir.append("test-1-of-2.jsonl").unwrap(),
            b"{\"kind\":\"manifest\",\"spec\":\"f0\",\"shards\":2}\n",
        )
        .unwrap();
        let e = j.open_shard(&dir, (1, 2)).map(|_| ()).unwrap_err();
        assert!(
            e.to_string().contains("another test's records (spec f0"),
            "{e}"
        );
        // A merge while that shard is still being written leaves its torn
        // line out; a finished merge refuses the foreign shard.
        std::fs::remove_file(out.join("test-1-of-2.jsonl")).unwrap();
        std::fs::write(&f, format!("{text}{{\"n\":")).unwrap();
        let so_far = read_shards("test", std::slice::from_ref(&out), false).unwrap();
        assert_eq!(so_far.records.len(), 2);
        j.open_shard(&dir, (0, 2)).unwrap();
        // The merge: the manifest and every record; another job's shard in
        // a second folder is refused by name.
        let m = read_shards("test", std::slice::from_ref(&out), true).unwrap();
        assert_eq!(m.files, 1);
        assert_eq!(m.records.len(), 2);
        assert_eq!(m.manifest["programs"], json!(["a", "b"]));
        assert_eq!(m.manifest["test"], "t");
        let other = root.join("other");
        let k = job("f2");
        let d2 = k.claim(&other, false).unwrap();
        k.open_shard(&d2, (1, 2)).unwrap();
        let e = read_shards("test", &[out.clone(), other.clone()], true).unwrap_err();
        assert!(e.to_string().contains("from another test"), "{e}");
        let e = read_shards("test", std::slice::from_ref(&f), true).unwrap_err();
        assert!(e.to_string().contains("is not a folder"), "{e}");
        let e = read_shards("hunt", &[out], true).unwrap_err();
        assert!(e.to_string().contains("no hunt's records"), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn shards_are_named_and_parsed() {
        assert_eq!(parse_shard("1/4").unwrap(), (1, 4));
        assert_eq!(parse_shard(" 0 / 1 ").unwrap(), (0, 1));
        for (bad, says) in [
            ("4/4", "below the count"),
            ("1", "expects I/N"),
            ("a/2", "'a' is not a number"),
            ("0/0", "below the count"),
        ] {
            let e = parse_shard(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert_eq!(parse_shard_file("hunt", "hunt-2-of-3.jsonl"), Some((2, 3)));
        assert_eq!(parse_shard_file("hunt", "hunt-x-of-3.jsonl"), None);
        assert_eq!(parse_shard_file("hunt", "sweep-0-of-1.jsonl"), None);
        assert_eq!(job("f").shard_file((2, 3)), "test-2-of-3.jsonl");
    }

    #[test]
    fn a_spec_names_its_file_in_every_error() {
        let root = temp("spec");
        let path = root.join("s.toml");
        std::fs::write(&path, "nmae = 1\n").unwrap();
        let e = SpecFile::read(&path, &["name", "corpus"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("s.toml: unknown key 'nmae'") && e.contains("name"),
            "{e}"
        );
        std::fs::write(&path, "corpus = [\"*.c\", 3]\nseed = -1\nreduce = 1\n").unwrap();
        let s = SpecFile::read(&path, &["corpus", "seed", "reduce"]).unwrap();
        assert_eq!(s.name().unwrap(), "s");
        assert!(s
            .strings("corpus")
            .unwrap_err()
            .to_string()
            .contains("must hold strings"));
        assert!(s
            .int("seed", 0, 9)
            .unwrap_err()
            .to_string()
            .contains("from 0 to 9, found -1"));
        assert!(s
            .bool("reduce")
            .unwrap_err()
            .to_string()
            .contains("true or false"));
        assert!(s
            .files("*.c")
            .unwrap_err()
            .to_string()
            .contains("matches no file"));
        std::fs::write(root.join("a.c"), "").unwrap();
        assert_eq!(s.files("*.c").unwrap(), [root.join("a.c")]);
        assert_eq!(program_name(&root, &root.join("a.c")), "a.c");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_file_has_one_name_however_the_paths_are_spelled() {
        let dir = std::env::temp_dir().join(format!("passlab-batch-name-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("zlib")).unwrap();
        std::fs::write(dir.join("zlib/a.c"), "int a;").unwrap();
        let spelled = [
            (dir.clone(), dir.join("zlib/a.c")),
            (dir.join("."), dir.join("zlib/a.c")),
            (dir.clone(), dir.join("./zlib/../zlib/a.c")),
            (dir.join("zlib/.."), dir.join("zlib/a.c")),
        ];
        for (d, f) in &spelled {
            assert_eq!(
                program_name(d, f),
                "zlib/a.c",
                "{} {}",
                d.display(),
                f.display()
            );
        }
        // Relative to the working folder, as `passlab sweep tiny.toml`
        // (folder ".") meets a glob's match without "./" (cargo runs tests
        // in the package's folder).
        let local = format!("target/passlab-batch-name-{}", std::process::id());
        std::fs::create_dir_all(format!("{local}/zlib")).unwrap();
        std::fs::write(format!("{local}/zlib/a.c"), "int a;").unwrap();
        let cwd = std::env::current_dir().unwrap();
        let want = format!("{local}/zlib/a.c");
        for (d, f) in [
            (Path::new(".").to_path_buf(), PathBuf::from(&want)),
            (
                Path::new(".").to_path_buf(),
                PathBuf::from(format!("./{want}")),
            ),
            (cwd.clone(), cwd.join(&want)),
        ] {
            assert_eq!(
                program_name(&d, &f),
                want,
                "{} {}",
                d.display(),
                f.display()
            );
        }
        std::fs::remove_dir_all(&local).unwrap();
        // Outside the spec's folder: the file's name.
        assert_eq!(
            program_name(&dir.join("zlib"), &std::env::temp_dir()),
            std::env::temp_dir().file_name().unwrap().to_string_lossy()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
