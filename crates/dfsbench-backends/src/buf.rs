//! Page-aligned I/O buffers, usable with O_DIRECT, and the read-only data every worker of a
//! job writes from.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use bytes::Bytes;

/// Alignment of every buffer: a page satisfies O_DIRECT on every Linux file system.
pub const ALIGN: usize = 4096;

/// A zero-initialised heap buffer aligned to [`ALIGN`].
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize) -> Self {
        if len == 0 {
            return AlignedBuf {
                ptr: NonNull::dangling(),
                len: 0,
            };
        }
        let layout = Layout::from_size_align(len, ALIGN).expect("buffer size overflows");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.len > 0 {
            let layout = Layout::from_size_align(self.len, ALIGN).expect("valid layout");
            // SAFETY: allocated in `new` with this very layout.
            unsafe { dealloc(self.ptr.as_ptr(), layout) }
        }
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes (or dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl AsRef<[u8]> for AlignedBuf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// Read-only data in one aligned allocation that every worker of a job shares: writes without
/// a fill send it again and again, so 256 workers cost one buffer, not 256. Cloning copies
/// nothing (object stores send slices of it as request bodies).
#[derive(Clone)]
pub struct SharedData(Bytes);

impl SharedData {
    /// `len` bytes set by `init` once.
    pub fn new(len: usize, init: impl FnOnce(&mut [u8])) -> Self {
        let mut buf = AlignedBuf::new(len);
        init(&mut buf);
        SharedData(Bytes::from_owner(buf))
    }

    /// The data as `Bytes`: slices of it share the allocation.
    pub fn bytes(&self) -> &Bytes {
        &self.0
    }
}

impl Deref for SharedData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and we hold the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_zeroed() {
        let b = AlignedBuf::new(10_000);
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.len(), 10_000);
        assert!(b.iter().all(|&x| x == 0));
        assert!(AlignedBuf::new(0).is_empty());
    }

    #[test]
    fn shared_data_stays_aligned_and_is_not_copied() {
        let d = SharedData::new(8192, |b| b.fill(7));
        assert_eq!(d.as_ptr() as usize % ALIGN, 0);
        let copy = d.clone();
        assert_eq!(copy.bytes().slice(..10).as_ptr(), d.as_ptr());
        assert!(copy.iter().all(|&x| x == 7));
    }
}
