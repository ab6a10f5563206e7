//! [`Buffer`]: typed arrays that JIT-compiled functions read and write.
//!
//! Buffers live in shared anonymous memory, so that what a function writes
//! from an isolated (forked) process is seen by the session.

use crate::{Error, Result};
use std::fmt;

/// The element type of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemType {
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

impl ElemType {
    /// The names users type: `i8` … `i64`, `f32`, `f64`.
    pub fn parse(s: &str) -> Result<ElemType> {
        Ok(match s {
            "i8" => ElemType::I8,
            "i16" => ElemType::I16,
            "i32" => ElemType::I32,
            "i64" => ElemType::I64,
            "f32" | "float" => ElemType::F32,
            "f64" | "double" => ElemType::F64,
            _ => {
                return Err(Error::Invalid(format!(
                    "unknown element type '{s}'; valid types are i8, i16, i32, i64, f32, f64"
                )))
            }
        })
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElemType::I8 => 1,
            ElemType::I16 => 2,
            ElemType::I32 | ElemType::F32 => 4,
            ElemType::I64 | ElemType::F64 => 8,
        }
    }

    /// The name users type (`i32`, `f64`).
    pub fn name(self) -> &'static str {
        match self {
            ElemType::I8 => "i8",
            ElemType::I16 => "i16",
            ElemType::I32 => "i32",
            ElemType::I64 => "i64",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The default byte limit of one buffer: a quarter of the machine's
/// memory (1 GiB when it cannot be read).
pub(crate) fn default_max_bytes() -> u64 {
    // SAFETY: sysconf only reads system configuration values.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    match (u64::try_from(pages), u64::try_from(page)) {
        (Ok(p), Ok(s)) if p > 0 && s > 0 => p.saturating_mul(s) / 4,
        _ => 1 << 30,
    }
}

/// Bytes as people read them: `6.0 GiB`, `512 KiB`, `12 bytes`.
fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = "bytes";
    for u in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    if unit == "bytes" {
        format!("{n} bytes")
    } else {
        format!("{value:.1} {unit}")
    }
}

/// How to fill a new buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fill {
    Zeros,
    Ones,
    /// 0, 1, 2, …
    Range,
    /// Values from a seeded generator: integers over their type's whole
    /// range (an `i8` any of its 256 values, as random bytes are), floats
    /// uniform in [0, 1) (NumPy's `random.rand`, `random.uniform`'s
    /// default).
    Random(u64),
}

/// A typed array in shared memory.
pub struct Buffer {
    ty: ElemType,
    len: usize,
    ptr: *mut u8,
    bytes: usize,
}

impl Buffer {
    /// A buffer of `len` elements of `ty`, filled as asked; refused when
    /// it would take more bytes than the context's
    /// `config.jit.max_buffer_bytes` allows.
    ///
    /// ```
    /// use passlab::jit::{Buffer, ElemType, Fill};
    /// assert_eq!(Buffer::new(ElemType::I32, 4, Fill::Range).unwrap().len(), 4);
    /// let e = Buffer::new(ElemType::I16, 1 << 63, Fill::Zeros).err().unwrap();
    /// assert!(e.to_string().contains("config.jit.max_buffer_bytes"), "{e}");
    /// ```
    pub fn new(ty: ElemType, len: usize, fill: Fill) -> Result<Buffer> {
        let max = crate::PassContext::current()
            .config_int(super::MAX_BUFFER_KEY)
            .ok()
            .and_then(|m| u64::try_from(m).ok())
            .unwrap_or_else(default_max_bytes);
        let bytes = ty
            .size()
            .checked_mul(len)
            .filter(|&b| b as u64 <= max)
            .ok_or_else(|| {
                let wanted = (ty.size() as u128) * (len as u128);
                Error::Invalid(format!(
                    "a buffer of {len} {ty} would take {wanted} bytes, more than the limit of {max} bytes ({}; config.jit.max_buffer_bytes): lengths of {ty} from 0 to {} fit",
                    human_bytes(max),
                    max / ty.size() as u64
                ))
            })?
            .max(1);
        // SAFETY: an anonymous shared mapping of `bytes` (≥ 1) bytes, asked of
        // the kernel with no address hint; the result is checked against
        // MAP_FAILED below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(Error::Invalid(format!(
                "cannot allocate a buffer of {len} {ty} ({bytes} bytes): {}",
                std::io::Error::last_os_error()
            )));
        }
        let mut b = Buffer {
            ty,
            len,
            ptr: ptr as *mut u8,
            bytes,
        };
        b.fill(fill);
        Ok(b)
    }

    /// Refills every element.
    pub fn fill(&mut self, fill: Fill) {
        let mut rng = crate::rng::Rng::new(match fill {
            Fill::Random(seed) => seed,
            _ => 0,
        });
        for i in 0..self.len {
            let v: f64 = match fill {
                Fill::Zeros => 0.0,
                Fill::Ones => 1.0,
                Fill::Range => i as f64,
                Fill::Random(_) => {
                    let z = rng.next_u64();
                    match self.ty {
                        ElemType::F32 | ElemType::F64 => (z >> 11) as f64 / (1u64 << 53) as f64,
                        _ => {
                            self.set_bits(i, z);
                            continue;
                        }
                    }
                }
            };
            self.set(i, v);
        }
    }

    /// Integer element `i` set to the low bits of `z` (every value of its
    /// type equally likely when `z` is uniform).
    fn set_bits(&mut self, i: usize, z: u64) {
        // SAFETY: `set_bits` is called by `fill` with `i < self.len`, and
        // the mapping holds `self.len` elements of `self.ty`, aligned
        // (mmap's pages).
        unsafe {
            match self.ty {
                ElemType::I8 => *self.ptr.add(i) = z as u8,
                ElemType::I16 => *(self.ptr as *mut u16).add(i) = z as u16,
                ElemType::I32 => *(self.ptr as *mut u32).add(i) = z as u32,
                ElemType::I64 => *(self.ptr as *mut u64).add(i) = z,
                ElemType::F32 | ElemType::F64 => {}
            }
        }
    }

    fn set(&mut self, i: usize, v: f64) {
        // SAFETY: `set` is called by `fill` with `i < self.len`, and the
        // mapping holds `self.len` elements of `self.ty`, aligned (mmap's
        // pages).
        unsafe {
            match self.ty {
                ElemType::I8 => *(self.ptr as *mut i8).add(i) = v as i8,
                ElemType::I16 => *(self.ptr as *mut i16).add(i) = v as i16,
                ElemType::I32 => *(self.ptr as *mut i32).add(i) = v as i32,
                ElemType::I64 => *(self.ptr as *mut i64).add(i) = v as i64,
                ElemType::F32 => *(self.ptr as *mut f32).add(i) = v as f32,
                ElemType::F64 => *(self.ptr as *mut f64).add(i) = v,
            }
        }
    }

    /// Element `i` as a float (for summaries and comparisons).
    pub fn get(&self, i: usize) -> f64 {
        assert!(i < self.len, "index {i} out of bounds ({})", self.len);
        // SAFETY: `i < self.len` (asserted above), within the mapping of
        // `self.len` elements of `self.ty`, page-aligned.
        unsafe {
            match self.ty {
                ElemType::I8 => *(self.ptr as *const i8).add(i) as f64,
                ElemType::I16 => *(self.ptr as *const i16).add(i) as f64,
                ElemType::I32 => *(self.ptr as *const i32).add(i) as f64,
                ElemType::I64 => *(self.ptr as *const i64).add(i) as f64,
                ElemType::F32 => *(self.ptr as *const f32).add(i) as f64,
                ElemType::F64 => *(self.ptr as *const f64).add(i),
            }
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn elem_type(&self) -> ElemType {
        self.ty
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping holds `ty.size() * len` bytes and lives as long
        // as `self`; JIT code writes it only in children, which have their own
        // view during a call.
        unsafe { std::slice::from_raw_parts(self.ptr, self.ty.size() * self.len) }
    }

    /// FNV-1a over the bytes: equal contents, equal checksums.
    pub fn checksum(&self) -> u64 {
        fnv1a(self.bytes().iter().copied())
    }

    /// Length, type, first values, min, max, sum and checksum.
    pub fn summary(&self) -> String {
        let shown: Vec<String> = (0..self.len.min(6)).map(|i| fmt_num(self.get(i))).collect();
        let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
        for i in 0..self.len {
            let v = self.get(i);
            min = min.min(v);
            max = max.max(v);
            sum += v;
        }
        format!(
            "{}[{}] = [{}{}] min {} max {} sum {} checksum {:016x}",
            self.ty,
            self.len,
            shown.join(", "),
            if self.len > 6 { ", …" } else { "" },
            fmt_num(min),
            fmt_num(max),
            fmt_num(sum),
            self.checksum()
        )
    }

    /// Puts back contents saved with [`bytes`](Buffer::bytes) (same length).
    /// Takes `&self`: the memory is written by JIT code through raw
    /// pointers anyway, never through Rust references into it.
    pub fn load(&self, bytes: &[u8]) -> Result<()> {
        let n = self.ty.size() * self.len;
        if bytes.len() != n {
            return Err(Error::Invalid(format!(
                "buffer holds {n} bytes, got {}",
                bytes.len()
            )));
        }
        // SAFETY: `bytes` has exactly `n` bytes (checked above), the mapping
        // holds `n`, and the two cannot overlap (one is ours, mmap'd).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr, n) };
        Ok(())
    }

    /// The address of the first element, for array interfaces (numpy's
    /// `__array_interface__`) that view the memory without copying it; it
    /// stays valid as long as the buffer lives.
    pub fn address(&self) -> usize {
        self.ptr as usize
    }

    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.6}")
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `new` made; no reference into it
        // outlives `self`.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.bytes);
        }
    }
}

/// FNV-1a of `bytes`: buffer checksums, and hashes that must be the same
/// in every process (a sweep's records).
pub(crate) fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_and_summaries() {
        let b = Buffer::new(ElemType::I32, 10, Fill::Range).unwrap();
        assert_eq!(b.get(9), 9.0);
        assert!(b
            .summary()
            .starts_with("i32[10] = [0, 1, 2, 3, 4, 5, …] min 0 max 9 sum 45"));
        let r1 = Buffer::new(ElemType::F64, 100, Fill::Random(7)).unwrap();
        let r2 = Buffer::new(ElemType::F64, 100, Fill::Random(7)).unwrap();
        assert_eq!(r1.checksum(), r2.checksum());
        assert!((0..100).all(|i| (0.0..1.0).contains(&r1.get(i))));
        let ones = Buffer::new(ElemType::I8, 3, Fill::Ones).unwrap();
        assert_ne!(
            ones.checksum(),
            Buffer::new(ElemType::I8, 3, Fill::Zeros)
                .unwrap()
                .checksum()
        );
        assert!(ElemType::parse("i33")
            .unwrap_err()
            .to_string()
            .contains("valid types"));
    }
}
