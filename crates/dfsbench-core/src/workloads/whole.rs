//! Whole-file writes and reads with the verify pattern, shared by the files, mix and iterate
//! workloads.

use dfsbench_backends::clock::Instant;

use dfsbench_backends::{AlignedBuf, Capability, Check, Client, FileOpts, OpError, SharedData, Source, ALIGN};

use crate::data::Content;
use crate::pattern::{FileKey, Mismatch, Pattern};

/// Bytes of a worker's whole-file buffer: `bs`, but no more than the largest file needs (plus
/// a byte, so a read of the whole file sees its end without another call), in whole pages.
pub(crate) fn chunk_for(bs: usize, largest: u64) -> usize {
    let need = (largest + 1).div_ceil(ALIGN as u64) * ALIGN as u64;
    bs.min(usize::try_from(need).unwrap_or(usize::MAX))
}

/// Write `size` bytes of `key` to `path`: `content` filled into `buf` chunk by chunk, or the
/// job's shared random data as it is.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn write_whole<C: Client>(
    client: &mut C,
    path: &str,
    size: u64,
    opts: FileOpts,
    buf: &mut AlignedBuf,
    content: Option<Content>,
    data: Option<&SharedData>,
    key: FileKey,
) -> Result<u64, OpError> {
    let mut fill = |b: &mut [u8], off: u64| content.expect("content").fill(key, off, b);
    let src = match content {
        Some(_) => Source::Fill(buf, &mut fill),
        None => Source::Repeat(data.expect("a job that writes data has its shared data")),
    };
    client.write_file(path, size, opts, src).await.map(|_| size)
}

/// A failed whole-file read: the error and, for wrong data, its offset.
pub(crate) type ReadFailure = (OpError, Option<u64>);

/// Read `path` whole, expecting `size` bytes (and the pattern of `key` when verifying).
/// Returns the bytes read and when the first arrived.
pub(crate) async fn read_whole<C: Client>(
    client: &mut C,
    path: &str,
    size: u64,
    opts: FileOpts,
    buf: &mut AlignedBuf,
    pattern: Option<Pattern>,
    key: FileKey,
) -> Result<(u64, Option<Instant>), ReadFailure> {
    let mut mismatch: Option<Mismatch> = None;
    let mut check = |b: &[u8], off: u64| {
        if mismatch.is_none() {
            mismatch = pattern.expect("verify").check(key, off, b).err();
        }
    };
    let check: Option<Check<'_>> = match pattern {
        Some(_) => Some(&mut check),
        None => None,
    };
    let read = client.read_file(path, opts, buf, check).await.map_err(|e| (e, None))?;
    if read.bytes != size {
        let e = OpError::new("size", format!("read {} bytes, expected {size}", read.bytes));
        return Err((e, None));
    }
    if let Some(m) = mismatch {
        let e = OpError::new(
            "verify",
            format!("wrong data at offset {}: found {}", m.offset, m.found),
        );
        return Err((e, Some(m.offset)));
    }
    Ok((read.bytes, read.first_byte))
}

/// What whole-file writes and reads need from the backend with these options.
pub(crate) fn whole_file_needs(direct: bool, fsync: bool) -> Vec<Capability> {
    let mut needs = Vec::new();
    if direct {
        needs.push(Capability::DirectIo);
    }
    if fsync {
        needs.push(Capability::Fsync);
    }
    needs
}
