//! A compressed flash file system in the manner of JFFS2, and its read paths
//! (Song, Cha, "A Selective Usage of Page Cache towards Low-Power
//! Systems", KIISE).
//!
//! Files are stored as 4 KiB pages, each compressed with a real codec on its real bytes
//! and kept raw or compressed as a write policy decides ([`store`]). Reading a file costs
//! flash reads, decompression, RAM copies and page-cache page allocations, priced by a
//! platform profile ([`crate::devices::platform`]), along one of the read paths
//! ([`read`], [`paths`]): every page through the page cache, or raw pages straight to
//! the user buffer. The page cache is the memory's ([`memory`]): file pages have ids in
//! the machine's page table, take its frames and are evicted by its reclaim.
//! [`analyze`] stores real files under several policies at once; [`bench`](mod@bench)
//! measures the codecs on this machine.

pub mod analyze;
pub mod bench;
pub mod codec;
pub mod memory;
pub mod paths;
pub mod read;
pub mod store;
pub mod variants;

pub use analyze::{analyze_paths, Analysis, FileAnalysis};
pub use bench::{bench_codecs, CodecSpeed};
pub use codec::Codec;
pub use memory::{FileIds, FsMemory, MachineCache};
pub use paths::READ_PATHS;
pub use read::{
    read_file, read_file_by_page, read_twice, read_twice_in, FilePage, FileSystem, PageCache,
    ReadCost, ReadPath,
};
pub use store::{
    store_file, store_file_policies, store_file_with_bytes, StorageSummary, StoredFile,
    StoredFileBytes, StoredPage, WritePolicy,
};
pub use variants::{FsVariantInfo, FS_VARIANTS};

/// Bytes in a file-system page.
pub const PAGE_SIZE: usize = 4096;
