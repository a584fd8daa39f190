//! The mmap engine (fio's `ioengine=mmap`): the file mapped shared, each read or write a
//! copy between the block's buffer and the map, one at a time.
//!
//! As fio's engine: a file being written is first extended to its length (`ftruncate`), the
//! map is advised sequential or random, and with `direct` each block is written back and
//! dropped from the page cache after its copy ("not really direct", fio says). A read past
//! the file's end moves what the file holds, as pread does; a write past the map's end (a
//! file longer than the job said) extends the file and maps it again.

use std::os::fd::RawFd;

use crate::storage::{BlockOp, OpResult};
use crate::OpError;

/// A file's shared mapping.
pub(crate) struct Mapped {
    ptr: *mut u8,
    len: usize,
    random: bool,
    direct: bool,
    /// The page size, for `direct`'s writeback of whole pages.
    page: usize,
}

fn check(ret: libc::c_int) -> OpResult<()> {
    super::check(ret).map(|_| ())
}

impl Mapped {
    /// Map `fd`'s file, extended to `len` bytes first when it is shorter.
    pub(crate) fn new(fd: RawFd, len: u64, random: bool, direct: bool) -> OpResult<Mapped> {
        let mut m = Mapped {
            ptr: std::ptr::null_mut(),
            len: 0,
            random,
            direct,
            // SAFETY: sysconf has no preconditions.
            page: unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize,
        };
        m.map(fd, len)?;
        Ok(m)
    }

    /// (Re)map the file at `want` bytes or more (what it holds, when longer).
    fn map(&mut self, fd: RawFd, want: u64) -> OpResult<()> {
        let have = super::end_of(fd)?;
        if have < want {
            // SAFETY: ftruncate on an open descriptor; it only grows the file here.
            check(unsafe { libc::ftruncate(fd, want as libc::off_t) })?;
        }
        let len = usize::try_from(have.max(want))
            .map_err(|_| OpError::new("EFBIG", "the file is larger than the address space"))?;
        self.unmap();
        if len == 0 {
            return Ok(());
        }
        // SAFETY: a fresh shared mapping of an open descriptor; the kernel picks the address.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(OpError::last_os_error());
        }
        let advice = if self.random {
            libc::MADV_RANDOM
        } else {
            libc::MADV_SEQUENTIAL
        };
        // SAFETY: advice on the mapping just made; a refusal changes no result.
        unsafe { libc::madvise(ptr, len, advice) };
        (self.ptr, self.len) = (ptr.cast(), len);
        Ok(())
    }

    fn unmap(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: ptr and len are the mapping made in `map`, not used after this.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
            (self.ptr, self.len) = (std::ptr::null_mut(), 0);
        }
    }

    /// Copy `buf` to or from the file at `offset`; returns the bytes moved.
    pub(crate) fn io(&mut self, fd: RawFd, op: BlockOp, buf: &mut [u8], offset: u64) -> OpResult<usize> {
        let end = offset.saturating_add(buf.len() as u64);
        if end > self.len as u64 {
            match op {
                BlockOp::Write => self.map(fd, end)?,
                // The file may have grown under another worker's writes.
                BlockOp::Read => self.map(fd, 0)?,
            }
        }
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(self.len);
        let n = buf.len().min(self.len - start);
        if n == 0 {
            return Ok(0);
        }
        // SAFETY: [start, start + n) lies inside the mapping, which covers the file: no page
        // past the file's end is touched (that would be SIGBUS).
        unsafe {
            let at = self.ptr.add(start);
            match op {
                BlockOp::Read => std::ptr::copy_nonoverlapping(at, buf.as_mut_ptr(), n),
                BlockOp::Write => std::ptr::copy_nonoverlapping(buf.as_ptr(), at, n),
            }
        }
        if self.direct {
            self.drop_pages(start, n)?;
        }
        Ok(n)
    }

    /// Write back and drop the pages of [start, start + n): fio's `direct` for mmap.
    fn drop_pages(&self, start: usize, n: usize) -> OpResult<()> {
        let page = self.page;
        let first = start / page * page;
        let len = (start + n).div_ceil(page) * page - first;
        let len = len.min(self.len - first);
        // SAFETY: the range lies inside the mapping.
        unsafe {
            check(libc::msync(self.ptr.add(first).cast(), len, libc::MS_SYNC))?;
            check(libc::madvise(self.ptr.add(first).cast(), len, libc::MADV_DONTNEED))
        }
    }

    /// Write the whole map back (fio's sync for mmap: msync).
    pub(crate) fn sync(&self) -> OpResult<()> {
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: the whole mapping.
        check(unsafe { libc::msync(self.ptr.cast(), self.len, libc::MS_SYNC) })
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        self.unmap();
    }
}
