//! The global allocator: mimalloc, asked for plain blocks whenever a plain block is aligned
//! enough.
//!
//! `mimalloc::MiMalloc` asks for every block through `mi_malloc_aligned`, even with the
//! 1-, 4- or 8-byte alignment of nearly every Rust type. That call has a fast path only
//! while the size's page has a free block at hand; otherwise it takes the aligned path,
//! which, for a size that is not a power of two, over-allocates by the alignment (`size +
//! align - 1`). An 80-byte box then comes from the 88- or 96-byte size class, on pages of
//! their own, and the 80-byte page it should have refilled stays empty, so every later one
//! takes the slow path too: more memory touched, and more page faults. Blocks of every
//! size class are at least 8-byte aligned, so alignments up to 8 need nothing more than
//! `mi_malloc`.

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// Every block of every mimalloc size class starts at a multiple of a word.
const PLAIN_ALIGN: usize = 8;

/// mimalloc, calling the plain entry points for alignments of up to a word.
pub struct Allocator;

// SAFETY: each method forwards to the mimalloc call that keeps GlobalAlloc's contract for
// its layout: the plain calls return word-aligned blocks of at least the size asked for,
// the aligned ones honour any alignment; every block, however it was made, is freed and
// grown by the same allocator (`mi_free` and `mi_realloc` accept both kinds).
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: mimalloc's allocation calls have no preconditions beyond a sane size.
        unsafe { new_block(layout, mi::mi_malloc, mi::mi_malloc_aligned) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe { new_block(layout, mi::mi_zalloc, mi::mi_zalloc_aligned) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (GlobalAlloc's contract).
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout` (GlobalAlloc's contract).
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

/// A new block for `layout`: from `plain` when a word's alignment is enough, else from
/// `aligned`.
///
/// # Safety
/// The two must be mimalloc's allocation calls of one kind (plain or zeroed).
#[inline(always)]
unsafe fn new_block(
    layout: Layout,
    plain: unsafe extern "C" fn(usize) -> *mut c_void,
    aligned: unsafe extern "C" fn(usize, usize) -> *mut c_void,
) -> *mut u8 {
    // SAFETY: the caller passes mimalloc's calls, which have no preconditions beyond a
    // sane size.
    unsafe {
        if layout.align() <= PLAIN_ALIGN {
            plain(layout.size()).cast()
        } else {
            aligned(layout.size(), layout.align()).cast()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocates `count` blocks of `layout`, checks each, and frees them; returns the
    /// usable sizes mimalloc gave.
    fn usable_sizes(layout: Layout, count: usize) -> Vec<usize> {
        let blocks: Vec<*mut u8> = (0..count)
            // SAFETY: a non-zero size.
            .map(|_| unsafe { Allocator.alloc(layout) })
            .collect();
        let sizes = blocks
            .iter()
            .map(|&p| {
                assert!(!p.is_null());
                assert_eq!(p as usize % layout.align(), 0, "{layout:?}");
                // SAFETY: a live block from mimalloc.
                unsafe { mi::mi_usable_size(p.cast::<c_void>()) }
            })
            .collect();
        for p in blocks {
            // SAFETY: allocated above with `layout`, freed once.
            unsafe { Allocator.dealloc(p, layout) };
        }
        sizes
    }

    /// The case `MiMalloc` got wrong: once the first page of 80-byte blocks was used up,
    /// every later 80-byte box came from a larger size class.
    #[test]
    fn word_aligned_blocks_keep_their_size_class() {
        let layout = Layout::from_size_align(80, 8).unwrap();
        let sizes = usable_sizes(layout, 20_000);
        assert!(sizes.iter().all(|&s| s == 80), "{:?}", sizes.iter().max());
    }

    #[test]
    fn larger_alignments_are_honoured() {
        for align in [16, 32, 64, 4096] {
            for size in [1, 24, 80, 1000, 70_000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                let sizes = usable_sizes(layout, 64);
                assert!(sizes.iter().all(|&s| s >= size), "{layout:?}");
            }
        }
    }

    #[test]
    fn zeroed_and_grown_blocks_keep_their_bytes() {
        for align in [1, 8, 16, 64] {
            let layout = Layout::from_size_align(40, align).unwrap();
            // SAFETY: non-zero sizes; the block is written within its size, grown once
            // (keeping its first 40 bytes) and freed once with its current layout.
            unsafe {
                let p = Allocator.alloc_zeroed(layout);
                assert!(std::slice::from_raw_parts(p, 40).iter().all(|&b| b == 0));
                p.write_bytes(7, 40);
                let q = Allocator.realloc(p, layout, 5000);
                assert_eq!(q as usize % align, 0);
                assert!(std::slice::from_raw_parts(q, 40).iter().all(|&b| b == 7));
                Allocator.dealloc(q, Layout::from_size_align(5000, align).unwrap());
            }
        }
    }
}
