//! Where passlab writes, so that nothing a user owns is lost: folders
//! passlab makes carry a marker, files it writes elsewhere are noted in a
//! ledger, and its temporary folders are private.
//!
//! * [`OwnedDir`]: a folder a job writes into (`:hunt`, `:reduce --out`,
//!   `passlab sweep|hunt` and their merges' `report/`). Its marker,
//!   [`MARKER`], says what made it (the job's kind, what the user typed, a
//!   hash) and lists every file and folder the job wrote there. A folder
//!   that exists without a marker, or with another job's, is refused with
//!   what it holds and what to do; with `replace`, the other job's files —
//!   only those its marker lists — are removed, and a folder without a
//!   marker is written beside its files, never over them. Every write goes
//!   through [`OwnedDir::create`] (or [`OwnedDir::write`],
//!   [`OwnedDir::append`], [`OwnedDir::create_dir`]), which refuses a file
//!   that is there and not the job's.
//! * [`write_file`]: one file the user named (`:save`, `:export`, `:asm
//!   --out`, an HTML page, a chart). A file that exists is replaced only
//!   if passlab wrote it and nobody changed it since: the ledger
//!   (`$XDG_STATE_HOME/passlab/written.jsonl`) keeps the path, size,
//!   modification time and inode of each file written.
//! * [`private_temp_dir`]: a temporary folder with a random name, mode
//!   0700, made new (`mkdtemp`): never one that was there already.

use crate::{Error, Result};
use serde_json::{json, Value as Json};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The marker file of a folder passlab made.
pub const MARKER: &str = ".passlab-folder";

/// Who writes a folder: the kind of job (`:hunt`, `passlab sweep`), what
/// the user typed or the spec it runs, and a hash that is the same for the
/// same job (a spec's fingerprint; a command's inputs hashed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub kind: String,
    pub what: String,
    pub job: String,
}

impl Owner {
    pub fn new(kind: impl Into<String>, what: impl Into<String>, job: impl Into<String>) -> Owner {
        Owner {
            kind: kind.into(),
            what: what.into(),
            job: job.into(),
        }
    }

    fn header(&self) -> Json {
        json!({
            "made_by": "passlab",
            "version": env!("CARGO_PKG_VERSION"),
            "kind": self.kind,
            "what": self.what,
            "job": self.job,
        })
    }

    fn from_header(v: &Json) -> Option<Owner> {
        if v["made_by"] != "passlab" {
            return None;
        }
        Some(Owner {
            kind: v["kind"].as_str()?.to_string(),
            what: v["what"].as_str().unwrap_or("").to_string(),
            job: v["job"].as_str()?.to_string(),
        })
    }

    fn same_job(&self, other: &Owner) -> bool {
        self.kind == other.kind && self.job == other.job
    }
}

/// How a job takes its folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Alone: another holder is refused (a `:hunt` or `:reduce` in a
    /// session).
    Exclusive,
    /// With other processes of the same job (a sweep's or hunt's shards).
    Shared,
}

/// A folder a job writes into (see the module documentation). The lock
/// on its marker is held while this lives.
#[derive(Debug)]
pub struct OwnedDir {
    path: PathBuf,
    owner: Owner,
    marker: std::fs::File,
    /// What the marker lists (relative paths; folders end in `/`).
    listed: std::cell::RefCell<BTreeSet<String>>,
    /// Whether the claim made the folder, and its marker (what
    /// [`OwnedDir::abandon`] takes back).
    made_dir: bool,
    made_marker: bool,
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::io(path.display(), e)
}

/// The marker's name, or that of the file a process writes it from before
/// linking it (`make_marker`).
fn is_marker(name: &str) -> bool {
    name == MARKER
        || name
            .strip_prefix(MARKER)
            .is_some_and(|r| r.starts_with('.'))
}

/// Up to five names of what `dir` holds, for a message.
fn holding(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| {
                    let mut n = e.file_name().to_string_lossy().into_owned();
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        n.push('/');
                    }
                    n
                })
                .filter(|n| !is_marker(n))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let more = names.len().saturating_sub(5);
    names.truncate(5);
    let mut s = names.join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

fn flock(file: &std::fs::File, how: i32) -> bool {
    // SAFETY: flock on a descriptor `file` owns; no pointers.
    unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(file), how) == 0 }
}

/// The header and the listed paths of a marker's text (a torn last line,
/// a writer killed halfway, is left out).
fn parse_marker(text: &str) -> (Option<Owner>, BTreeSet<String>) {
    let mut lines = text.split_inclusive('\n');
    let owner = lines
        .next()
        .and_then(|l| serde_json::from_str::<Json>(l.trim_end()).ok())
        .and_then(|v| Owner::from_header(&v));
    let listed = lines
        .filter(|l| l.ends_with('\n'))
        .filter_map(|l| serde_json::from_str::<Json>(l.trim_end()).ok())
        .filter_map(|v| v["wrote"].as_str().map(str::to_string))
        .collect();
    (owner, listed)
}

/// A relative path inside a folder: no `..`, not absolute, not the marker.
fn checked_relative(rel: &str) -> Result<&Path> {
    let p = Path::new(rel);
    let fine = !rel.is_empty()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
        && p.file_name().is_some_and(|n| n != MARKER);
    if fine {
        Ok(p)
    } else {
        Err(Error::Invalid(format!(
            "'{rel}' is not a path inside the folder"
        )))
    }
}

impl Drop for OwnedDir {
    /// Unlocks the marker explicitly: closing this descriptor alone would
    /// not, while a child forked meanwhile (a tuning trial, a test's
    /// worker) holds a copy of it — a lock belongs to the open file, which
    /// a fork shares, and an explicit unlock through any copy ends it.
    fn drop(&mut self) {
        flock(&self.marker, libc::LOCK_UN);
    }
}

impl OwnedDir {
    /// Takes `path` for `owner` (see the module documentation): made with
    /// its marker if missing or empty; taken again if its marker is the
    /// same job's; otherwise refused, unless `replace`. `flag` is how the
    /// user says replace, for messages (`replace=yes`, `--replace`).
    pub fn claim(
        path: &Path,
        owner: &Owner,
        access: Access,
        replace: bool,
        flag: &str,
    ) -> Result<OwnedDir> {
        let made_dir = Self::make_folder(path, owner)?;
        let marker_path = path.join(MARKER);
        let made_marker = !marker_path.exists();
        if made_marker {
            Self::first_marker(path, owner, replace, flag)?;
        }
        let exclusive = access == Access::Exclusive;
        let marker = Self::lock_marker(path, &marker_path, exclusive)?;
        let (found, listed) = Self::read_marker(&marker_path);
        let dir = OwnedDir {
            path: path.to_path_buf(),
            owner: owner.clone(),
            marker,
            listed: std::cell::RefCell::new(listed),
            made_dir,
            made_marker,
        };
        match found {
            Some(o) if o.same_job(owner) => Ok(dir),
            other => dir.take_over(other, exclusive, replace, flag),
        }
    }

    /// Makes folder `path` if it is missing (true if it made it); an
    /// error if `path` is a file.
    fn make_folder(path: &Path, owner: &Owner) -> Result<bool> {
        match std::fs::metadata(path) {
            Ok(m) if !m.is_dir() => Err(Error::folder(
                path.display(),
                format!(
                    "is a file, not a folder: give a folder for {}'s output",
                    owner.kind
                ),
            )),
            Ok(_) => Ok(false),
            Err(_) => {
                std::fs::create_dir_all(path).map_err(|e| io(path, e))?;
                Ok(true)
            }
        }
    }

    /// Makes the marker of folder `path`, which has none: refused if the
    /// folder holds files, unless `replace`.
    fn first_marker(path: &Path, owner: &Owner, replace: bool, flag: &str) -> Result<()> {
        // (The marker, and the file another process writes it from, are
        // not files of the user's: shards making the folder at once see
        // each other's.)
        let empty = std::fs::read_dir(path)
            .map_err(|e| io(path, e))?
            .filter_map(|e| e.ok())
            .all(|e| is_marker(&e.file_name().to_string_lossy()));
        if !empty && !replace {
            return Err(Error::folder(path.display(), format!(
                "holds files passlab did not write ({}): passlab writes only into folders it made, to lose nothing of yours; give {} a new folder (--out DIR), or {flag} to write beside those files (passlab then writes only files that are not there, and touches none of them)",
                holding(path),
                owner.kind
            )));
        }
        Self::make_marker(path, owner)
    }

    /// Opens folder `path`'s marker and locks it, `exclusive` or shared;
    /// an error if another process holds it.
    fn lock_marker(path: &Path, marker_path: &Path, exclusive: bool) -> Result<std::fs::File> {
        let marker = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .open(marker_path)
            .map_err(|e| io(marker_path, e))?;
        let how = if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        };
        if !flock(&marker, how | libc::LOCK_NB) {
            return Err(Error::folder(path.display(), format!(
                "is in use by another passlab process ({}): wait for it to end, or give this one another folder (--out DIR)",
                Self::read_marker(marker_path).0.map_or_else(|| "a job".to_string(), |o| o.what)
            )));
        }
        Ok(marker)
    }

    /// The folder, which another job made (`other`; `None`: a marker
    /// passlab cannot read), made this job's: that job's files removed and
    /// the marker rewritten, if `replace`; else refused.
    fn take_over(
        self,
        other: Option<Owner>,
        exclusive: bool,
        replace: bool,
        flag: &str,
    ) -> Result<OwnedDir> {
        let path = &self.path;
        let what = other.as_ref().map_or_else(
            || "a marker passlab cannot read".to_string(),
            |o| format!("{} ({})", o.kind, o.what),
        );
        if !replace {
            return Err(Error::folder(path.display(), format!(
                "was made by another job: {what}; give {} a new folder (--out DIR), or {flag} to remove that job's files there (only those it wrote: anything else in the folder stays)",
                self.owner.kind
            )));
        }
        // Replacing needs the folder alone.
        if !exclusive && !flock(&self.marker, libc::LOCK_EX | libc::LOCK_NB) {
            return Err(Error::folder(path.display(), format!(
                "is in use by another passlab process ({what}): wait for it to end, or give this one another folder (--out DIR)"
            )));
        }
        self.remove_own()?;
        self.marker
            .set_len(0)
            .map_err(|e| io(&path.join(MARKER), e))?;
        self.append_line(&self.owner.header())?;
        if !exclusive {
            flock(&self.marker, libc::LOCK_SH);
        }
        Ok(self)
    }

    /// Writes the marker, whole or not at all (a hard link to a file
    /// written first: two shards making the folder at once agree on one).
    fn make_marker(path: &Path, owner: &Owner) -> Result<()> {
        let tmp = path.join(format!(
            "{MARKER}.{}.{}",
            std::process::id(),
            crate::rng::Rng::new(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64)
            )
            .next_u64()
        ));
        let mut line = owner.header().to_string();
        line.push('\n');
        std::fs::write(&tmp, line).map_err(|e| io(&tmp, e))?;
        let linked = std::fs::hard_link(&tmp, path.join(MARKER));
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(io(&path.join(MARKER), e)),
        }
    }

    fn read_marker(path: &Path) -> (Option<Owner>, BTreeSet<String>) {
        std::fs::read_to_string(path)
            .map(|t| parse_marker(&t))
            .unwrap_or_default()
    }

    fn append_line(&self, v: &Json) -> Result<()> {
        let mut line = v.to_string();
        line.push('\n');
        (&self.marker)
            .write_all(line.as_bytes())
            .map_err(|e| io(&self.path.join(MARKER), e))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Who it is written for.
    pub fn owner(&self) -> &Owner {
        &self.owner
    }

    /// `rel` inside the folder.
    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.path.join(rel)
    }

    /// Whether the job wrote `rel` (listed in the marker; read again, as
    /// other shards write too).
    pub fn owns(&self, rel: &str) -> bool {
        if self.listed.borrow().contains(rel) {
            return true;
        }
        let (_, listed) = Self::read_marker(&self.path.join(MARKER));
        let yes = listed.contains(rel);
        *self.listed.borrow_mut() = listed;
        yes
    }

    /// Notes `rel` (a file, or a folder ending in `/`) as the job's.
    fn list(&self, rel: &str) -> Result<()> {
        if self.owns(rel) {
            return Ok(());
        }
        self.append_line(&json!({ "wrote": rel }))?;
        self.listed.borrow_mut().insert(rel.to_string());
        Ok(())
    }

    /// Refuses `rel` if it is there and not the job's.
    fn check_writable(&self, rel: &str) -> Result<PathBuf> {
        let p = self.path.join(checked_relative(rel)?);
        if p.symlink_metadata().is_ok() && !self.owns(rel) {
            return Err(Error::folder(p.display(), format!(
                "was there before and passlab did not write it: it is left as it is (give {} a new folder with --out DIR)",
                self.owner.kind
            )));
        }
        Ok(p)
    }

    /// Makes the folder `rel` (and those above it) inside this one.
    pub fn create_dir(&self, rel: &str) -> Result<PathBuf> {
        let rel_path = checked_relative(rel)?;
        let mut at = String::new();
        for c in rel_path.components() {
            if !at.is_empty() {
                at.push('/');
            }
            at.push_str(&c.as_os_str().to_string_lossy());
            let p = self.path.join(&at);
            let key = format!("{at}/");
            match p.symlink_metadata() {
                Ok(m) if m.is_dir() && !m.file_type().is_symlink() => {
                    // A folder of the user's may hold the job's files
                    // beside theirs; it is not listed, so never removed.
                }
                Ok(_) => {
                    return Err(Error::folder(p.display(), format!(
                        "is there and is not a folder: it is left as it is (give {} a new folder with --out DIR)",
                        self.owner.kind
                    )))
                }
                Err(_) => {
                    std::fs::create_dir(&p).map_err(|e| io(&p, e))?;
                    self.list(&key)?;
                }
            }
        }
        Ok(self.path.join(rel_path))
    }

    /// Creates (or truncates, if the job wrote it) the file `rel`.
    pub fn create(&self, rel: &str) -> Result<std::fs::File> {
        let p = self.prepare(rel)?;
        std::fs::File::create(&p).map_err(|e| io(&p, e))
    }

    /// Opens the file `rel` for appending (made if missing).
    pub fn append(&self, rel: &str) -> Result<std::fs::File> {
        let p = self.prepare(rel)?;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .map_err(|e| io(&p, e))
    }

    /// The path of the file `rel`, which the job may write: its folders
    /// made, and the file listed as the job's.
    fn prepare(&self, rel: &str) -> Result<PathBuf> {
        let p = self.check_writable(rel)?;
        if let Some(parent) = Path::new(rel)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
        {
            self.create_dir(&parent.to_string_lossy())?;
        }
        self.list(rel)?;
        Ok(p)
    }

    /// Writes the file `rel` whole.
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> Result<PathBuf> {
        let mut f = self.create(rel)?;
        let p = self.path.join(rel);
        f.write_all(bytes.as_ref()).map_err(|e| io(&p, e))?;
        Ok(p)
    }

    /// Writes the file `rel` whole or not at all: beside it first, then
    /// renamed over it (other shards may be reading it).
    pub fn write_whole(&self, rel: &str, bytes: impl AsRef<[u8]>) -> Result<PathBuf> {
        let p = self.check_writable(rel)?;
        self.list(rel)?;
        let dir = p.parent().unwrap_or(&self.path);
        let mut tmp = tempfile::Builder::new()
            .prefix(".passlab-")
            .tempfile_in(dir)
            .map_err(|e| io(&p, e))?;
        tmp.write_all(bytes.as_ref()).map_err(|e| io(&p, e))?;
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
        tmp.persist(&p).map_err(|e| io(&p, e.error))?;
        Ok(p)
    }

    /// A merge's `report/` folder: taken for `owner` alone (the command
    /// line's `--replace` to take another's), emptied of what an earlier
    /// run of the same merge wrote, so that it is written whole again.
    pub fn claim_report(path: &Path, owner: &Owner, replace: bool) -> Result<OwnedDir> {
        let dir = OwnedDir::claim(path, owner, Access::Exclusive, replace, "--replace")?;
        dir.remove_own()?;
        Ok(dir)
    }

    /// Takes the claim back when the job wrote nothing after all (a `:run
    /// --out` whose run did not crash): the marker the claim made goes, and
    /// the folder too if the claim made it. A folder the job had already
    /// (an earlier run's files) stays as it is. True when nothing is left.
    pub fn abandon(self) -> Result<bool> {
        if !self.made_marker || !self.listed.borrow().is_empty() {
            return Ok(false);
        }
        let marker = self.path.join(MARKER);
        std::fs::remove_file(&marker).map_err(|e| io(&marker, e))?;
        if self.made_dir {
            // Only if empty: whatever someone put there meanwhile stays.
            let _ = std::fs::remove_dir(&self.path);
        }
        Ok(true)
    }

    /// Removes what the job wrote (files, then the folders it made if they
    /// are empty), and nothing else.
    pub fn remove_own(&self) -> Result<()> {
        let (_, listed) = Self::read_marker(&self.path.join(MARKER));
        let mut listed: Vec<String> = listed.into_iter().collect();
        // Deepest first: files before the folders that hold them.
        listed.sort_by_key(|r| {
            std::cmp::Reverse(r.matches('/').count() + usize::from(!r.ends_with('/')))
        });
        for rel in &listed {
            let Ok(p) = checked_relative(rel.trim_end_matches('/')).map(|r| self.path.join(r))
            else {
                continue;
            };
            if rel.ends_with('/') {
                // Only if empty: a file of the user's in it keeps it.
                let _ = std::fs::remove_dir(&p);
            } else if p.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
                std::fs::remove_file(&p).map_err(|e| io(&p, e))?;
            }
        }
        self.marker
            .set_len(0)
            .map_err(|e| io(&self.path.join(MARKER), e))?;
        self.append_line(&self.owner.header())?;
        self.listed.borrow_mut().clear();
        Ok(())
    }
}

/// A new temporary folder (`PREFIX` and random letters, under the system's
/// temporary folder), mode 0700, made by this call: never one that was
/// there already. Removed when the value is dropped.
pub fn private_temp_dir(prefix: &str) -> Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .prefix(prefix)
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir().display(), e))
}

/// The ledger of files passlab wrote outside its own folders.
fn ledger_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(base.join("passlab").join("written.jsonl"))
}

/// What identifies a file as it was written: inode, size, modification
/// time in nanoseconds.
fn identity(path: &Path) -> Option<(u64, u64, i128)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((
        m.ino(),
        m.size(),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    ))
}

/// Whether the ledger says passlab wrote `path` as it is now.
fn wrote(path: &Path) -> bool {
    let (Some(ledger), Some(id)) = (ledger_path(), identity(path)) else {
        return false;
    };
    let Ok(abs) = std::path::absolute(path) else {
        return false;
    };
    let Ok(text) = std::fs::read_to_string(ledger) else {
        return false;
    };
    let want = abs.to_string_lossy();
    text.lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .find(|v| v["path"].as_str() == Some(&want))
        .is_some_and(|v| {
            v["ino"].as_u64() == Some(id.0)
                && v["size"].as_u64() == Some(id.1)
                && v["mtime_ns"].as_str() == Some(&id.2.to_string())
        })
}

/// Notes in the ledger that passlab wrote `path` (best effort: a ledger
/// that cannot be written only means the file will not be replaced
/// later). A ledger over 1 MB keeps only the entries whose files are
/// still as written.
pub fn note_written(path: &Path) {
    let (Some(ledger), Some(id), Ok(abs)) =
        (ledger_path(), identity(path), std::path::absolute(path))
    else {
        return;
    };
    let Some(dir) = ledger.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(&ledger)
    else {
        return;
    };
    flock(&f, libc::LOCK_EX);
    if f.metadata().is_ok_and(|m| m.len() > 1 << 20) {
        if let Ok(text) = std::fs::read_to_string(&ledger) {
            let kept: Vec<&str> = text
                .lines()
                .filter(|l| {
                    serde_json::from_str::<Json>(l).ok().is_some_and(|v| {
                        let p = PathBuf::from(v["path"].as_str().unwrap_or(""));
                        identity(&p).is_some_and(|id| {
                            v["ino"].as_u64() == Some(id.0)
                                && v["size"].as_u64() == Some(id.1)
                                && v["mtime_ns"].as_str() == Some(&id.2.to_string())
                        })
                    })
                })
                .collect();
            let _ = f.set_len(0);
            for l in kept {
                let _ = writeln!(f, "{l}");
            }
        }
    }
    let line = json!({
        "path": abs.to_string_lossy(),
        "ino": id.0,
        "size": id.1,
        "mtime_ns": id.2.to_string(),
    });
    let _ = writeln!(f, "{line}");
    flock(&f, libc::LOCK_UN);
}

/// Whether `path` may be written by `what` (a command, for messages): it
/// is not there, or passlab wrote it and it has not changed since.
pub fn check_replaceable(path: &Path, what: &str) -> Result<()> {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.is_dir() {
            return Err(Error::folder(
                path.display(),
                format!("is a folder: {what} writes a file (give a file name)"),
            ));
        }
        if !wrote(path) {
            return Err(Error::folder(path.display(), format!(
                "is there already and passlab did not write it (or it changed since): {what} leaves it as it is; give another file name, or remove it first"
            )));
        }
    }
    Ok(())
}

/// Writes `bytes` to the file `path` the user named: a new file, or one
/// passlab wrote before and nobody changed since (see the module
/// documentation). `what` names the command for messages.
pub fn write_file(path: &Path, bytes: impl AsRef<[u8]>, what: &str) -> Result<()> {
    check_replaceable(path, what)?;
    // Written beside, then renamed over: a failure halfway leaves the old
    // file (or none).
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .tempfile_in(&dir)
        .map_err(|e| io(path, e))?;
    tmp.write_all(bytes.as_ref()).map_err(|e| io(path, e))?;
    // Readable as a file the user made would be (tempfile makes it 0600).
    use std::os::unix::fs::PermissionsExt;
    let _ = tmp
        .as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644));
    tmp.persist(path).map_err(|e| io(path, e.error))?;
    note_written(path);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> tempfile::TempDir {
        private_temp_dir("passlab-folder-test-").unwrap()
    }

    fn owner(job: &str) -> Owner {
        Owner::new(":hunt", format!(":hunt {job}"), job)
    }

    #[test]
    fn a_new_folder_is_made_with_its_marker_and_taken_again_by_the_same_job() {
        let t = tmp();
        let d = t.path().join("out");
        {
            let o =
                OwnedDir::claim(&d, &owner("a"), Access::Exclusive, false, "replace=yes").unwrap();
            o.write("x.txt", "1").unwrap();
            o.write("sub/y.txt", "2").unwrap();
            assert!(o.owns("x.txt") && o.owns("sub/") && o.owns("sub/y.txt"));
        }
        let o = OwnedDir::claim(&d, &owner("a"), Access::Exclusive, false, "replace=yes").unwrap();
        assert!(o.owns("sub/y.txt"));
        o.write("x.txt", "again").unwrap();
        o.remove_own().unwrap();
        assert!(!d.join("x.txt").exists() && !d.join("sub").exists());
        assert!(d.join(MARKER).exists());
    }

    /// Four shards of a sweep start at once into one new folder: each
    /// sees the file another writes its marker from, and none is refused
    /// for it (a test command's run was).
    #[test]
    fn a_marker_being_written_by_another_shard_is_not_a_users_file() {
        let t = tmp();
        let d = t.path().join("out");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("{MARKER}.29533.1604572648262913603")), "").unwrap();
        OwnedDir::claim(&d, &owner("a"), Access::Shared, false, "--replace").unwrap();
        std::fs::write(d.join("mine.txt"), "").unwrap();
        let t2 = tmp();
        let d2 = t2.path().join("out");
        std::fs::create_dir_all(&d2).unwrap();
        std::fs::write(d2.join("mine.txt"), "").unwrap();
        std::fs::write(d2.join(format!("{MARKER}.1.2")), "").unwrap();
        let e = OwnedDir::claim(&d2, &owner("a"), Access::Shared, false, "--replace")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("did not write (mine.txt)"), "{e}");
    }

    #[test]
    fn a_folder_of_the_users_is_refused_and_with_replace_written_beside() {
        let t = tmp();
        let d = t.path().join("mine");
        std::fs::create_dir_all(d.join("findings")).unwrap();
        std::fs::write(d.join("findings/important.txt"), "keep").unwrap();
        std::fs::write(d.join("x.txt"), "mine").unwrap();
        let e = OwnedDir::claim(&d, &owner("a"), Access::Exclusive, false, "replace=yes")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("did not write") && e.contains("findings/") && e.contains("replace=yes"),
            "{e}"
        );
        let o = OwnedDir::claim(&d, &owner("a"), Access::Exclusive, true, "replace=yes").unwrap();
        let e = o.write("x.txt", "over").unwrap_err().to_string();
        assert!(e.contains("was there before"), "{e}");
        o.write("findings/new.txt", "new").unwrap();
        o.remove_own().unwrap();
        assert_eq!(std::fs::read_to_string(d.join("x.txt")).unwrap(), "mine");
        assert_eq!(
            std::fs::read_to_string(d.join("findings/important.txt")).unwrap(),
            "keep"
        );
        assert!(!d.join("findings/new.txt").exists());
    }

    #[test]
    fn another_jobs_folder_is_refused_and_replace_removes_only_its_files() {
        let t = tmp();
        let d = t.path().join("out");
        {
            let o =
                OwnedDir::claim(&d, &owner("a"), Access::Exclusive, false, "replace=yes").unwrap();
            o.write("findings/f/README.md", "a's").unwrap();
        }
        std::fs::write(d.join("findings/notes.txt"), "the user's").unwrap();
        let e = OwnedDir::claim(&d, &owner("b"), Access::Exclusive, false, "replace=yes")
            .unwrap_err()
            .to_string();
        assert!(e.contains("another job") && e.contains(":hunt a"), "{e}");
        let o = OwnedDir::claim(&d, &owner("b"), Access::Exclusive, true, "replace=yes").unwrap();
        assert!(!d.join("findings/f").exists());
        assert_eq!(
            std::fs::read_to_string(d.join("findings/notes.txt")).unwrap(),
            "the user's"
        );
        assert!(!o.owns("findings/"));
    }

    #[test]
    fn an_exclusive_holder_keeps_others_out_and_shared_holders_share() {
        let t = tmp();
        let d = t.path().join("out");
        let a = OwnedDir::claim(&d, &owner("a"), Access::Exclusive, false, "replace=yes").unwrap();
        let e = OwnedDir::claim(&d, &owner("a"), Access::Exclusive, false, "replace=yes")
            .unwrap_err()
            .to_string();
        assert!(e.contains("in use"), "{e}");
        drop(a);
        let s1 = OwnedDir::claim(&d, &owner("a"), Access::Shared, false, "replace=yes").unwrap();
        let s2 = OwnedDir::claim(&d, &owner("a"), Access::Shared, false, "replace=yes").unwrap();
        s1.append("shard-0.jsonl").unwrap();
        s2.append("shard-1.jsonl").unwrap();
        assert!(s1.owns("shard-1.jsonl"));
    }

    #[test]
    fn paths_outside_the_folder_are_refused() {
        let t = tmp();
        let o = OwnedDir::claim(
            &t.path().join("o"),
            &owner("a"),
            Access::Exclusive,
            false,
            "x",
        )
        .unwrap();
        for bad in ["../x", "/etc/passwd", "", MARKER, "a/../../b"] {
            assert!(o.write(bad, "x").is_err(), "{bad}");
        }
    }

    #[test]
    fn temporary_folders_are_private_and_new() {
        use std::os::unix::fs::PermissionsExt;
        let a = private_temp_dir("passlab-t-").unwrap();
        let b = private_temp_dir("passlab-t-").unwrap();
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
