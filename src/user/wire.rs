//! The messages between the session and the service that runs user passes
//! in evcxr's child process, over a Unix socket: length-prefixed fields,
//! one request and one reply at a time. Both ends are this file, compiled
//! into the session and (as a dependency of the cells) into the child.

use crate::config::ConfigValue;
use std::io::{self, Read, Write};

/// Changes whenever the messages change: a child built from another
/// version of passlab is refused instead of misread.
pub(crate) const VERSION: u32 = 2;

/// The byte a connection opens with: the session's own connection, served
/// in the service's process, where cells register passes.
pub(crate) const SESSION: u8 = b'S';
/// The byte a connection from a fork of the session opens with (a hunt's
/// worker, a reducer's candidate): served by a fork of the service, so
/// that several run at once and a crash costs only that fork.
pub(crate) const FORKED: u8 = b'F';

/// What the session asks: run one registered pass on a module.
#[derive(Debug, PartialEq)]
pub(crate) struct Request {
    pub pass: String,
    pub module_name: String,
    pub opt_level: u32,
    pub config: Vec<(String, ConfigValue)>,
    pub bitcode: Vec<u8>,
}

/// How a pass run ended.
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    /// The pass changed nothing.
    Unchanged,
    /// The module after the pass, as bitcode.
    Changed(Vec<u8>),
    /// The pass failed (an error, a panic, IR that does not verify); the
    /// message names the pass.
    Failed(String),
}

/// The reply: the outcome and what the pass printed.
#[derive(Debug, PartialEq)]
pub(crate) struct Reply {
    pub outcome: Outcome,
    pub printed: String,
}

fn put_u32(w: &mut impl Write, v: u32) -> io::Result<()> {
    w.write_all(&v.to_le_bytes())
}

fn put_bytes(w: &mut impl Write, b: &[u8]) -> io::Result<()> {
    let len = u32::try_from(b.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "message over 4 GiB"))?;
    put_u32(w, len)?;
    w.write_all(b)
}

fn put_str(w: &mut impl Write, s: &str) -> io::Result<()> {
    put_bytes(w, s.as_bytes())
}

fn get_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn get_bytes(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let len = get_u32(r)? as usize;
    let mut b = vec![0u8; len];
    r.read_exact(&mut b)?;
    Ok(b)
}

fn get_str(r: &mut impl Read) -> io::Result<String> {
    String::from_utf8(get_bytes(r)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "text is not UTF-8"))
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// The greeting the service sends on a new connection, after the
/// connection's first byte ([`SESSION`] or [`FORKED`]): the version and
/// the process id of what serves it (which the session needs to stop a
/// runaway pass).
pub(crate) fn write_hello(w: &mut impl Write, pid: u32) -> io::Result<()> {
    put_u32(w, VERSION)?;
    put_u32(w, pid)?;
    w.flush()
}

pub(crate) fn read_hello(r: &mut impl Read) -> io::Result<u32> {
    let version = get_u32(r)?;
    if version != VERSION {
        return Err(bad(&format!(
            "the Rust worker speaks version {version} of passlab's pass protocol, this session {VERSION}"
        )));
    }
    get_u32(r)
}

impl Request {
    pub(crate) fn write(&self, w: &mut impl Write) -> io::Result<()> {
        put_str(w, &self.pass)?;
        put_str(w, &self.module_name)?;
        put_u32(w, self.opt_level)?;
        put_u32(w, self.config.len() as u32)?;
        for (key, value) in &self.config {
            put_str(w, key)?;
            let (tag, text) = match value {
                ConfigValue::Bool(b) => (0, b.to_string()),
                ConfigValue::Int(i) => (1, i.to_string()),
                ConfigValue::Float(x) => (2, x.to_string()),
                ConfigValue::Str(s) => (3, s.clone()),
            };
            put_u32(w, tag)?;
            put_str(w, &text)?;
        }
        put_bytes(w, &self.bitcode)?;
        w.flush()
    }

    pub(crate) fn read(r: &mut impl Read) -> io::Result<Request> {
        let pass = get_str(r)?;
        let module_name = get_str(r)?;
        let opt_level = get_u32(r)?;
        let n = get_u32(r)?;
        let mut config = Vec::new();
        for _ in 0..n {
            let key = get_str(r)?;
            let tag = get_u32(r)?;
            let text = get_str(r)?;
            let value = match tag {
                0 => ConfigValue::Bool(text == "true"),
                1 => ConfigValue::Int(text.parse().map_err(|_| bad("integer config value"))?),
                2 => ConfigValue::Float(text.parse().map_err(|_| bad("float config value"))?),
                3 => ConfigValue::Str(text),
                _ => return Err(bad("config value type")),
            };
            config.push((key, value));
        }
        let bitcode = get_bytes(r)?;
        Ok(Request {
            pass,
            module_name,
            opt_level,
            config,
            bitcode,
        })
    }
}

impl Reply {
    pub(crate) fn write(&self, w: &mut impl Write) -> io::Result<()> {
        match &self.outcome {
            Outcome::Unchanged => put_u32(w, 0)?,
            Outcome::Changed(bitcode) => {
                put_u32(w, 1)?;
                put_bytes(w, bitcode)?;
            }
            Outcome::Failed(message) => {
                put_u32(w, 2)?;
                put_str(w, message)?;
            }
        }
        put_str(w, &self.printed)?;
        w.flush()
    }

    pub(crate) fn read(r: &mut impl Read) -> io::Result<Reply> {
        let outcome = match get_u32(r)? {
            0 => Outcome::Unchanged,
            1 => Outcome::Changed(get_bytes(r)?),
            2 => Outcome::Failed(get_str(r)?),
            _ => return Err(bad("reply status")),
        };
        let printed = get_str(r)?;
        Ok(Reply { outcome, printed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let req = Request {
            pass: "strength-reduce".into(),
            module_name: "m.c".into(),
            opt_level: 3,
            config: vec![
                ("a".into(), ConfigValue::Bool(true)),
                ("b".into(), ConfigValue::Int(-5)),
                ("c".into(), ConfigValue::Float(0.5)),
                ("d".into(), ConfigValue::Str("x y".into())),
            ],
            bitcode: vec![1, 2, 3],
        };
        let mut buf = Vec::new();
        req.write(&mut buf).unwrap();
        assert_eq!(Request::read(&mut buf.as_slice()).unwrap(), req);
        for outcome in [
            Outcome::Unchanged,
            Outcome::Changed(vec![9; 10]),
            Outcome::Failed("error in pass p: boom".into()),
        ] {
            let reply = Reply {
                outcome,
                printed: "hello\n".into(),
            };
            let mut buf = Vec::new();
            reply.write(&mut buf).unwrap();
            assert_eq!(Reply::read(&mut buf.as_slice()).unwrap(), reply);
        }
        let mut buf = Vec::new();
        write_hello(&mut buf, 42).unwrap();
        assert_eq!(read_hello(&mut buf.as_slice()).unwrap(), 42);
        // A truncated message is an error, not a hang or a panic.
        assert!(Request::read(&mut &buf[..3]).is_err());
    }
}
