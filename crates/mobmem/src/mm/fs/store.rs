//! Writing files: split into 4 KiB pages, compress each with a real codec on its real
//! bytes, and keep it raw or compressed as a [`WritePolicy`] decides.
//!
//! What is recorded per page is its size in the file (`data_len`), its size on flash
//! (`stored_len`) and whether it is compressed. The compressed bytes themselves are
//! dropped unless asked for ([`store_file_with_bytes`]), so whole folders can be
//! analysed in little memory.
//!
//! Stored size counts file data only. JFFS2 also writes a node header per page
//! (`struct jffs2_raw_inode`, [`JFFS2_NODE_HEADER_BYTES`]); [`StorageSummary`] reports it
//! apart, so space can be compared with and without it.

use std::fmt;
use std::str::FromStr;

use rayon::prelude::*;

use super::{Codec, PAGE_SIZE};
use crate::{Error, Result};

/// Bytes of `struct jffs2_raw_inode`, the header of every JFFS2 data node (one per
/// page written). Nodes are also padded to 4 bytes; that padding is not counted.
pub const JFFS2_NODE_HEADER_BYTES: u64 = 68;
/// The paper's threshold: a 4 KiB page is stored raw unless compression saves at least
/// this many bytes.
pub const PAPER_MIN_SAVING: usize = 50;
/// `UBIFS_MIN_COMPRESS_DIFF` (`fs/ubifs/ubifs-media.h`).
pub const UBIFS_MIN_COMPRESS_DIFF: usize = 64;
/// `UBIFS_MIN_COMPR_LEN`: UBIFS does not try to compress shorter data.
pub const UBIFS_MIN_COMPR_LEN: usize = 128;
/// `COMPRESS_HEADER_SIZE`, `sizeof(struct compress_data)` in `fs/f2fs/f2fs.h`: length,
/// checksum and 4 reserved words in front of a compressed cluster.
pub const F2FS_COMPRESS_HEADER_BYTES: usize = 24;
/// F2FS's default cluster: `compress_log_size` 2, 4 pages.
pub const F2FS_DEFAULT_CLUSTER_PAGES: usize = 4;
/// F2FS accepts `compress_log_size` from 2 to 8.
pub const F2FS_MIN_CLUSTER_PAGES: usize = 4;
pub const F2FS_MAX_CLUSTER_PAGES: usize = 256;
/// btrfs's `ENTROPY_LVL_HIGH`, 80% of 8 bits (`fs/btrfs/compression.c`).
pub const BTRFS_ENTROPY_HIGH_BITS_PER_BYTE: f64 = 6.4;

/// Bytes handed to the policies at once: a multiple of every legal F2FS cluster, so
/// clusters never straddle two of them.
const REGION_BYTES: usize = F2FS_MAX_CLUSTER_PAGES * PAGE_SIZE;

/// How the file system decides to keep a page raw or compressed.
///
/// In configuration files: `{ kind = "threshold", min_saving = 50 }`; on a command line:
/// `threshold:50` (see [`FromStr`]). Omitted parameters take the defaults below.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum WritePolicy {
    /// Stock JFFS2: compressed whenever the compressed form is smaller at all
    /// (`fs/jffs2/compr_zlib.c`: `if (strm.total_out >= strm.total_in) return -1`).
    Stock,
    /// The paper (Song, Cha, section 3): "if the difference after compression is less
    /// than 50 bytes, do not compress". Saving fewer than `min_saving` bytes -> raw;
    /// saving exactly `min_saving` -> compressed.
    Threshold {
        #[serde(default = "default_min_saving")]
        min_saving: usize,
    },
    /// UBIFS (`fs/ubifs/compress.c`, `ubifs_compress`): data shorter than
    /// `UBIFS_MIN_COMPR_LEN` (128) is not compressed at all, and
    /// `if (in_len - *out_len < UBIFS_MIN_COMPRESS_DIFF)` (64) it is stored raw.
    Ubifs,
    /// F2FS compression (`fs/f2fs/compress.c`): pages are compressed together in
    /// clusters of `cluster_pages`; a cluster is kept compressed only if its compressed
    /// bytes plus the 24-byte header fit in one block fewer than the cluster
    /// (`if (cc->clen > PAGE_SIZE * (cc->cluster_size - 1) - COMPRESS_HEADER_SIZE)`
    /// -> raw). A compressed cluster takes whole blocks. A partial cluster at the end of
    /// a file is never compressed (`cluster_may_compress` wants a full cluster).
    F2fs {
        #[serde(default = "default_cluster_pages")]
        cluster_pages: usize,
    },
    /// A pre-check in the manner of btrfs's compression heuristic: if the page's
    /// Shannon entropy (bits per byte, over all its bytes) is above
    /// `max_bits_per_byte`, store it raw without compressing; otherwise as [`Stock`].
    /// btrfs samples 16 bytes in every 256, first accepts repeated patterns and small
    /// byte sets, and refuses a sample whose integer-log entropy estimate reaches
    /// `ENTROPY_LVL_HIGH` (80% of 8 bits); the default here is that level, 6.4 bits.
    ///
    /// [`Stock`]: WritePolicy::Stock
    Entropy {
        #[serde(default = "default_max_bits_per_byte")]
        max_bits_per_byte: f64,
    },
}

fn default_min_saving() -> usize {
    PAPER_MIN_SAVING
}

fn default_cluster_pages() -> usize {
    F2FS_DEFAULT_CLUSTER_PAGES
}

fn default_max_bits_per_byte() -> f64 {
    BTRFS_ENTROPY_HIGH_BITS_PER_BYTE
}

impl WritePolicy {
    /// The names accepted by [`FromStr`].
    pub const NAMES: [&'static str; 5] = ["stock", "threshold", "ubifs", "f2fs", "entropy"];

    /// The paper's selective compression: [`PAPER_MIN_SAVING`] bytes.
    pub fn paper() -> Self {
        WritePolicy::Threshold {
            min_saving: PAPER_MIN_SAVING,
        }
    }

    /// Every policy with its default parameters, in [`WritePolicy::NAMES`] order.
    pub fn defaults() -> Vec<WritePolicy> {
        vec![
            WritePolicy::Stock,
            WritePolicy::paper(),
            WritePolicy::Ubifs,
            WritePolicy::F2fs {
                cluster_pages: F2FS_DEFAULT_CLUSTER_PAGES,
            },
            WritePolicy::Entropy {
                max_bits_per_byte: BTRFS_ENTROPY_HIGH_BITS_PER_BYTE,
            },
        ]
    }

    pub fn name(&self) -> &'static str {
        match self {
            WritePolicy::Stock => "stock",
            WritePolicy::Threshold { .. } => "threshold",
            WritePolicy::Ubifs => "ubifs",
            WritePolicy::F2fs { .. } => "f2fs",
            WritePolicy::Entropy { .. } => "entropy",
        }
    }

    /// Pages per compression unit: 1, or the F2FS cluster.
    pub fn cluster_pages(&self) -> usize {
        match self {
            WritePolicy::F2fs { cluster_pages } => *cluster_pages,
            _ => 1,
        }
    }

    /// Refuse parameters the modelled file system would not accept.
    pub fn validate(&self) -> Result<()> {
        match self {
            WritePolicy::F2fs { cluster_pages } => {
                let legal = cluster_pages.is_power_of_two()
                    && (F2FS_MIN_CLUSTER_PAGES..=F2FS_MAX_CLUSTER_PAGES).contains(cluster_pages);
                if !legal {
                    return Err(Error::config(
                        "f2fs write policy",
                        format!(
                            "cluster_pages must be a power of two from \
                             {F2FS_MIN_CLUSTER_PAGES} to {F2FS_MAX_CLUSTER_PAGES} \
                             (compress_log_size 2..8), not {cluster_pages}"
                        ),
                    ));
                }
            }
            WritePolicy::Entropy { max_bits_per_byte } => {
                if !(0.0..=8.0).contains(max_bits_per_byte) {
                    return Err(Error::config(
                        "entropy write policy",
                        format!("max_bits_per_byte must be from 0 to 8, not {max_bits_per_byte}"),
                    ));
                }
            }
            WritePolicy::Stock | WritePolicy::Threshold { .. } | WritePolicy::Ubifs => {}
        }
        Ok(())
    }

    /// Whether data of `data_len` bytes that compresses to `compressed_len` bytes is
    /// kept compressed. For F2FS, `data_len` is a whole cluster's bytes. Data that
    /// does not shrink is never kept compressed, whatever the policy.
    pub fn keep_compressed(&self, data_len: usize, compressed_len: usize) -> bool {
        if compressed_len >= data_len {
            return false;
        }
        let saving = data_len - compressed_len;
        match self {
            WritePolicy::Stock | WritePolicy::Entropy { .. } => true,
            WritePolicy::Threshold { min_saving } => saving >= *min_saving,
            WritePolicy::Ubifs => {
                data_len >= UBIFS_MIN_COMPR_LEN && saving >= UBIFS_MIN_COMPRESS_DIFF
            }
            WritePolicy::F2fs { .. } => {
                blocks(compressed_len + F2FS_COMPRESS_HEADER_BYTES) < blocks(data_len)
            }
        }
    }

    /// Whether the policy compresses `unit` at all, before seeing the result.
    fn tries_compression(&self, unit: &[u8], entropy: Option<f64>) -> bool {
        match self {
            WritePolicy::Ubifs => unit.len() >= UBIFS_MIN_COMPR_LEN,
            WritePolicy::Entropy { max_bits_per_byte } => {
                entropy.unwrap_or_else(|| shannon_entropy(unit)) <= *max_bits_per_byte
            }
            WritePolicy::F2fs { cluster_pages } => {
                // Only a full cluster (its last page may be partial) is compressed.
                unit.len() > (cluster_pages - 1) * PAGE_SIZE
            }
            WritePolicy::Stock | WritePolicy::Threshold { .. } => true,
        }
    }
}

impl fmt::Display for WritePolicy {
    /// The [`FromStr`] form with every parameter spelled out: `threshold:50`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WritePolicy::Stock | WritePolicy::Ubifs => f.write_str(self.name()),
            WritePolicy::Threshold { min_saving } => write!(f, "threshold:{min_saving}"),
            WritePolicy::F2fs { cluster_pages } => write!(f, "f2fs:{cluster_pages}"),
            WritePolicy::Entropy { max_bits_per_byte } => {
                write!(f, "entropy:{max_bits_per_byte}")
            }
        }
    }
}

/// A policy's parameter: `default` when absent, else parsed; the error says it is not
/// `expected`.
fn parameter_or<T: FromStr>(
    parameter: Option<&str>,
    default: T,
    expected: &str,
) -> std::result::Result<T, String> {
    match parameter {
        None => Ok(default),
        Some(p) => p.parse().map_err(|_| format!("'{p}' is not {expected}")),
    }
}

impl FromStr for WritePolicy {
    type Err = Error;

    /// `stock`, `threshold[:MIN_SAVING]`, `ubifs`, `f2fs[:CLUSTER_PAGES]`,
    /// `entropy[:MAX_BITS_PER_BYTE]`.
    fn from_str(s: &str) -> Result<Self> {
        let text = s.trim().to_ascii_lowercase();
        let (name, parameter) = match text.split_once(':') {
            Some((name, parameter)) => (name, Some(parameter.trim())),
            None => (text.as_str(), None),
        };
        let bad = |message: String| Error::config(format!("write policy '{s}'"), message);
        let policy = match (name.trim(), parameter) {
            ("stock", None) => WritePolicy::Stock,
            ("ubifs", None) => WritePolicy::Ubifs,
            ("stock" | "ubifs", Some(_)) => {
                return Err(bad(format!("{name} takes no parameter")));
            }
            ("threshold", p) => WritePolicy::Threshold {
                min_saving: parameter_or(p, PAPER_MIN_SAVING, "a byte count").map_err(bad)?,
            },
            ("f2fs", p) => WritePolicy::F2fs {
                cluster_pages: parameter_or(p, F2FS_DEFAULT_CLUSTER_PAGES, "a page count")
                    .map_err(bad)?,
            },
            ("entropy", p) => WritePolicy::Entropy {
                max_bits_per_byte: parameter_or(
                    p,
                    BTRFS_ENTROPY_HIGH_BITS_PER_BYTE,
                    "a number of bits",
                )
                .map_err(bad)?,
            },
            (other, _) => {
                return Err(Error::Unknown {
                    what: "write policy",
                    name: other.to_string(),
                    known: WritePolicy::NAMES.iter().map(|n| n.to_string()).collect(),
                });
            }
        };
        policy.validate()?;
        Ok(policy)
    }
}

/// Shannon entropy of the byte values in `bytes`, in bits per byte (0 for no bytes).
pub fn shannon_entropy(bytes: &[u8]) -> f64 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[usize::from(b)] += 1;
    }
    let total = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / total;
            -p * p.log2()
        })
        .sum()
}

/// Whole 4 KiB blocks needed for `bytes`.
fn blocks(bytes: usize) -> usize {
    bytes.div_ceil(PAGE_SIZE)
}

/// One stored page of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct StoredPage {
    /// File bytes in this page (4096 except maybe the last page).
    pub data_len: u32,
    /// Bytes on flash: the compressed size if compressed, else `data_len`. The pages of
    /// a compressed F2FS cluster share its whole blocks: the first pages carry 4096
    /// each, the rest 0.
    pub stored_len: u32,
    pub compressed: bool,
}

impl StoredPage {
    pub fn new(compressed: bool, data_len: u32, stored_len: u32) -> Self {
        StoredPage {
            data_len,
            stored_len,
            compressed,
        }
    }
}

/// A file as stored on flash.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredFile {
    pub name: String,
    pub codec: Codec,
    pub pages: Vec<StoredPage>,
}

/// Space taken by stored files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct StorageSummary {
    pub pages: u64,
    pub raw_pages: u64,
    pub compressed_pages: u64,
    /// Bytes of file data.
    pub data_bytes: u64,
    /// Bytes on flash for that data, without node headers.
    pub stored_bytes: u64,
    /// JFFS2 node headers: [`JFFS2_NODE_HEADER_BYTES`] for each page that stores bytes.
    pub header_bytes: u64,
}

impl StorageSummary {
    /// Flash bytes with the node headers.
    pub fn stored_with_headers(&self) -> u64 {
        self.stored_bytes + self.header_bytes
    }

    /// Stored bytes over data bytes (1 when nothing is stored).
    pub fn stored_fraction(&self) -> f64 {
        if self.data_bytes == 0 {
            1.0
        } else {
            self.stored_bytes as f64 / self.data_bytes as f64
        }
    }

    pub fn add(&mut self, other: &StorageSummary) {
        self.pages += other.pages;
        self.raw_pages += other.raw_pages;
        self.compressed_pages += other.compressed_pages;
        self.data_bytes += other.data_bytes;
        self.stored_bytes += other.stored_bytes;
        self.header_bytes += other.header_bytes;
    }
}

impl StoredFile {
    pub fn data_bytes(&self) -> u64 {
        self.pages.iter().map(|p| u64::from(p.data_len)).sum()
    }

    /// Flash bytes of the data, without node headers.
    pub fn stored_bytes(&self) -> u64 {
        self.pages.iter().map(|p| u64::from(p.stored_len)).sum()
    }

    pub fn compressed_pages(&self) -> usize {
        self.pages.iter().filter(|p| p.compressed).count()
    }

    pub fn raw_pages(&self) -> usize {
        self.pages.len() - self.compressed_pages()
    }

    /// JFFS2 node headers, one per page that stores bytes.
    pub fn header_bytes(&self) -> u64 {
        let nodes = self.pages.iter().filter(|p| p.stored_len > 0).count() as u64;
        nodes * JFFS2_NODE_HEADER_BYTES
    }

    pub fn summary(&self) -> StorageSummary {
        let compressed = self.compressed_pages() as u64;
        StorageSummary {
            pages: self.pages.len() as u64,
            raw_pages: self.pages.len() as u64 - compressed,
            compressed_pages: compressed,
            data_bytes: self.data_bytes(),
            stored_bytes: self.stored_bytes(),
            header_bytes: self.header_bytes(),
        }
    }

    /// Check that this is how `data` is stored under `policy`, and that what would be
    /// on flash reads back as `data`: store again keeping the bytes, compare the page
    /// tables, decompress every compressed unit and compare with `data`.
    pub fn verify(&self, data: &[u8], policy: &WritePolicy) -> Result<()> {
        let context = || format!("verify '{}'", self.name);
        let again = store_file_with_bytes(&self.name, data, self.codec, policy)?;
        if again.file.pages != self.pages {
            let first = again
                .file
                .pages
                .iter()
                .zip(&self.pages)
                .position(|(a, b)| a != b)
                .unwrap_or(again.file.pages.len().min(self.pages.len()));
            return Err(Error::config(
                context(),
                format!("page table differs from a fresh store at page {first}"),
            ));
        }
        let read = again.read_back()?;
        if read != data {
            let first = read
                .iter()
                .zip(data)
                .position(|(a, b)| a != b)
                .unwrap_or(read.len().min(data.len()));
            return Err(Error::config(
                context(),
                format!(
                    "read back {} bytes that differ from the data from byte {first}",
                    read.len()
                ),
            ));
        }
        Ok(())
    }
}

/// One unit written to flash, with its bytes: a page, or a compressed F2FS cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredExtent {
    /// Index of its first page in the file.
    pub first_page: usize,
    pub page_count: usize,
    /// File bytes it holds.
    pub data_len: usize,
    pub compressed: bool,
    /// What is on flash: the codec's output if compressed, else the data.
    pub bytes: Vec<u8>,
}

/// A stored file with the bytes that would be on flash.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFileBytes {
    pub file: StoredFile,
    pub extents: Vec<StoredExtent>,
}

impl StoredFileBytes {
    /// The file's data as a reader would get it: every extent in order, decompressed.
    pub fn read_back(&self) -> Result<Vec<u8>> {
        let context = || format!("read back '{}'", self.file.name);
        let mut data = Vec::with_capacity(self.file.data_bytes() as usize);
        let mut next_page = 0;
        for extent in &self.extents {
            if extent.first_page != next_page {
                return Err(Error::config(
                    context(),
                    format!(
                        "extent starts at page {}, expected {next_page}",
                        extent.first_page
                    ),
                ));
            }
            if extent.compressed {
                data.extend(self.file.codec.decompress(&extent.bytes, extent.data_len)?);
            } else if extent.bytes.len() == extent.data_len {
                data.extend_from_slice(&extent.bytes);
            } else {
                return Err(Error::config(
                    context(),
                    format!("raw extent at page {next_page} has the wrong length"),
                ));
            }
            next_page += extent.page_count;
        }
        if next_page != self.file.pages.len() {
            return Err(Error::config(
                context(),
                format!(
                    "extents cover {next_page} of {} pages",
                    self.file.pages.len()
                ),
            ));
        }
        Ok(data)
    }
}

/// Store `data` as file `name`: 4 KiB pages (the last one partial), each compressed
/// with `codec` and kept raw or compressed as `policy` decides. An empty file has no
/// pages.
pub fn store_file(
    name: &str,
    data: &[u8],
    codec: Codec,
    policy: &WritePolicy,
) -> Result<StoredFile> {
    let mut stored = store_file_policies(name, data, codec, std::slice::from_ref(policy))?;
    stored
        .pop()
        .ok_or_else(|| Error::config("store", "no policy"))
}

/// Store `data` under each of `policies` at once, compressing each page only once for
/// all per-page policies. One [`StoredFile`] per policy, in order.
pub fn store_file_policies(
    name: &str,
    data: &[u8],
    codec: Codec,
    policies: &[WritePolicy],
) -> Result<Vec<StoredFile>> {
    let mut writer = FileWriter::new(name, codec, policies)?;
    writer.write(data)?;
    writer.finish()
}

/// [`store_file`] keeping what would be on flash, to read it back.
pub fn store_file_with_bytes(
    name: &str,
    data: &[u8],
    codec: Codec,
    policy: &WritePolicy,
) -> Result<StoredFileBytes> {
    let mut writer = FileWriter::new(name, codec, std::slice::from_ref(policy))?;
    writer.keep_bytes = true;
    writer.write(data)?;
    let (mut files, mut extents) = writer.finish_parts()?;
    match (files.pop(), extents.pop()) {
        (Some(file), Some(extents)) => Ok(StoredFileBytes { file, extents }),
        _ => Err(Error::config("store", "no policy")),
    }
}

/// Stores one file under several policies as its bytes arrive, so a file need not be
/// in memory at once: [`FileWriter::write`] any number of times, then
/// [`FileWriter::finish`].
pub struct FileWriter {
    name: String,
    codec: Codec,
    policies: Vec<WritePolicy>,
    pages: Vec<Vec<StoredPage>>,
    extents: Vec<Vec<StoredExtent>>,
    keep_bytes: bool,
    /// Bytes waiting for a whole region.
    pending: Vec<u8>,
    /// Pages already handed to the policies.
    pages_done: usize,
}

/// What one policy made of one unit (a page or a cluster).
struct UnitOutcome {
    pages: Vec<StoredPage>,
    extents: Vec<StoredExtent>,
}

impl FileWriter {
    pub fn new(name: &str, codec: Codec, policies: &[WritePolicy]) -> Result<Self> {
        if policies.is_empty() {
            return Err(Error::config(format!("store '{name}'"), "no write policy"));
        }
        for policy in policies {
            policy.validate()?;
        }
        Ok(FileWriter {
            name: name.to_string(),
            codec,
            policies: policies.to_vec(),
            pages: vec![Vec::new(); policies.len()],
            extents: vec![Vec::new(); policies.len()],
            keep_bytes: false,
            pending: Vec::new(),
            pages_done: 0,
        })
    }

    /// Append `data` to the file.
    pub fn write(&mut self, mut data: &[u8]) -> Result<()> {
        if !self.pending.is_empty() {
            let take = (REGION_BYTES - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() < REGION_BYTES {
                return Ok(());
            }
            let region = std::mem::take(&mut self.pending);
            self.store_region(&region)?;
        }
        let whole = data.len() / REGION_BYTES * REGION_BYTES;
        if whole > 0 {
            self.store_region(&data[..whole])?;
        }
        self.pending.extend_from_slice(&data[whole..]);
        Ok(())
    }

    /// The file as stored under each policy, in the order given to [`FileWriter::new`].
    pub fn finish(self) -> Result<Vec<StoredFile>> {
        Ok(self.finish_parts()?.0)
    }

    fn finish_parts(mut self) -> Result<(Vec<StoredFile>, Vec<Vec<StoredExtent>>)> {
        let tail = std::mem::take(&mut self.pending);
        self.store_region(&tail)?;
        let files = self
            .pages
            .into_iter()
            .map(|pages| StoredFile {
                name: self.name.clone(),
                codec: self.codec,
                pages,
            })
            .collect();
        Ok((files, self.extents))
    }

    /// Store a region that starts on a region boundary of the file and is whole
    /// regions long, or is the file's end.
    fn store_region(&mut self, region: &[u8]) -> Result<()> {
        if region.is_empty() {
            return Ok(());
        }
        let first_page = self.pages_done;
        let per_page: Vec<usize> = (0..self.policies.len())
            .filter(|&i| self.policies[i].cluster_pages() == 1)
            .collect();
        if !per_page.is_empty() {
            let outcomes: Vec<Vec<UnitOutcome>> = region
                .par_chunks(PAGE_SIZE)
                .enumerate()
                .map(|(i, page)| self.store_page(first_page + i, page, &per_page))
                .collect::<Result<_>>()?;
            for page_outcomes in outcomes {
                for (&policy, outcome) in per_page.iter().zip(page_outcomes) {
                    self.record(policy, outcome);
                }
            }
        }
        for policy in 0..self.policies.len() {
            let cluster_pages = self.policies[policy].cluster_pages();
            if cluster_pages == 1 {
                continue;
            }
            let outcomes: Vec<UnitOutcome> = region
                .par_chunks(cluster_pages * PAGE_SIZE)
                .enumerate()
                .map(|(i, cluster)| {
                    self.store_cluster(policy, first_page + i * cluster_pages, cluster)
                })
                .collect::<Result<_>>()?;
            for outcome in outcomes {
                self.record(policy, outcome);
            }
        }
        self.pages_done += region.len().div_ceil(PAGE_SIZE);
        Ok(())
    }

    fn record(&mut self, policy: usize, outcome: UnitOutcome) {
        self.pages[policy].extend(outcome.pages);
        self.extents[policy].extend(outcome.extents);
    }

    /// One page under every per-page policy, compressing it at most once.
    fn store_page(
        &self,
        index: usize,
        page: &[u8],
        policies: &[usize],
    ) -> Result<Vec<UnitOutcome>> {
        let needs_entropy = policies
            .iter()
            .any(|&p| matches!(self.policies[p], WritePolicy::Entropy { .. }));
        let entropy = needs_entropy.then(|| shannon_entropy(page));
        let mut compressed: Option<Vec<u8>> = None;
        let mut outcomes = Vec::with_capacity(policies.len());
        for &p in policies {
            let policy = &self.policies[p];
            let mut keep = false;
            if policy.tries_compression(page, entropy) {
                if compressed.is_none() {
                    compressed = Some(self.codec.compress(page)?);
                }
                let compressed_len = compressed.as_ref().map_or(usize::MAX, Vec::len);
                keep = policy.keep_compressed(page.len(), compressed_len);
            }
            let stored = match (&compressed, keep) {
                (Some(bytes), true) => bytes.as_slice(),
                _ => page,
            };
            outcomes.push(UnitOutcome {
                pages: vec![StoredPage {
                    data_len: page.len() as u32,
                    stored_len: stored.len() as u32,
                    compressed: keep,
                }],
                extents: self.extent(index, 1, page.len(), keep, stored),
            });
        }
        Ok(outcomes)
    }

    /// One F2FS cluster: compressed as a whole, kept compressed if that saves a block.
    fn store_cluster(
        &self,
        policy: usize,
        first_page: usize,
        cluster: &[u8],
    ) -> Result<UnitOutcome> {
        let rule = &self.policies[policy];
        if rule.tries_compression(cluster, None) {
            let compressed = self.codec.compress(cluster)?;
            if rule.keep_compressed(cluster.len(), compressed.len()) {
                let page_count = cluster.len().div_ceil(PAGE_SIZE);
                let used = blocks(compressed.len() + F2FS_COMPRESS_HEADER_BYTES);
                let pages = cluster
                    .chunks(PAGE_SIZE)
                    .enumerate()
                    .map(|(i, page)| StoredPage {
                        data_len: page.len() as u32,
                        stored_len: if i < used { PAGE_SIZE as u32 } else { 0 },
                        compressed: true,
                    })
                    .collect();
                return Ok(UnitOutcome {
                    pages,
                    extents: self.extent(first_page, page_count, cluster.len(), true, &compressed),
                });
            }
        }
        let mut outcome = UnitOutcome {
            pages: Vec::new(),
            extents: Vec::new(),
        };
        for (i, page) in cluster.chunks(PAGE_SIZE).enumerate() {
            outcome.pages.push(StoredPage {
                data_len: page.len() as u32,
                stored_len: page.len() as u32,
                compressed: false,
            });
            outcome
                .extents
                .extend(self.extent(first_page + i, 1, page.len(), false, page));
        }
        Ok(outcome)
    }

    fn extent(
        &self,
        first_page: usize,
        page_count: usize,
        data_len: usize,
        compressed: bool,
        bytes: &[u8],
    ) -> Vec<StoredExtent> {
        if !self.keep_bytes {
            return Vec::new();
        }
        vec![StoredExtent {
            first_page,
            page_count,
            data_len,
            compressed,
            bytes: bytes.to_vec(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_boundary_is_the_papers_wording() {
        // "if the difference after compression is less than 50 bytes, do not compress"
        let paper = WritePolicy::paper();
        assert!(!paper.keep_compressed(4096, 4096 - 49));
        assert!(paper.keep_compressed(4096, 4096 - 50));
        assert!(paper.keep_compressed(4096, 4096 - 51));
    }

    #[test]
    fn stock_keeps_any_saving_and_nothing_else() {
        assert!(WritePolicy::Stock.keep_compressed(4096, 4095));
        assert!(!WritePolicy::Stock.keep_compressed(4096, 4096));
        assert!(!WritePolicy::Stock.keep_compressed(4096, 4200));
        // A zero threshold still refuses data that does not shrink.
        let zero = WritePolicy::Threshold { min_saving: 0 };
        assert!(!zero.keep_compressed(4096, 4096));
        assert!(zero.keep_compressed(4096, 4095));
    }

    #[test]
    fn ubifs_wants_64_bytes_and_128_byte_input() {
        assert!(!WritePolicy::Ubifs.keep_compressed(4096, 4096 - 63));
        assert!(WritePolicy::Ubifs.keep_compressed(4096, 4096 - 64));
        assert!(!WritePolicy::Ubifs.keep_compressed(127, 10));
        assert!(WritePolicy::Ubifs.keep_compressed(128, 64));
        assert!(!WritePolicy::Ubifs.tries_compression(&[0; 127], None));
        assert!(WritePolicy::Ubifs.tries_compression(&[0; 128], None));
    }

    #[test]
    fn f2fs_wants_a_whole_block_with_the_header() {
        let f2fs = WritePolicy::F2fs { cluster_pages: 4 };
        // 3 blocks hold 12288 bytes: 24 of header and at most 12264 of data.
        assert!(f2fs.keep_compressed(16384, 12264));
        assert!(!f2fs.keep_compressed(16384, 12265));
        // A cluster whose last page is partial still needs one block fewer than 4.
        assert!(f2fs.keep_compressed(12289, 12264));
        assert!(!f2fs.keep_compressed(12289, 12265));
        // Three pages and a byte make a full cluster; three pages do not.
        assert!(f2fs.tries_compression(&[0; 12289], None));
        assert!(!f2fs.tries_compression(&[0; 12288], None));
    }

    #[test]
    fn entropy_of_known_distributions() {
        assert_eq!(shannon_entropy(&[]), 0.0);
        assert_eq!(shannon_entropy(&[7; 4096]), 0.0);
        let two: Vec<u8> = (0..4096).map(|i| (i % 2) as u8).collect();
        assert!((shannon_entropy(&two) - 1.0).abs() < 1e-12);
        let all: Vec<u8> = (0..4096).map(|i| (i % 256) as u8).collect();
        assert!((shannon_entropy(&all) - 8.0).abs() < 1e-12);
    }

    #[test]
    fn policies_parse_and_print() {
        for policy in WritePolicy::defaults() {
            let text = policy.to_string();
            assert_eq!(text.parse::<WritePolicy>().unwrap(), policy, "{text}");
        }
        assert_eq!(
            "threshold".parse::<WritePolicy>().unwrap(),
            WritePolicy::paper()
        );
        assert_eq!(
            "Threshold:80".parse::<WritePolicy>().unwrap(),
            WritePolicy::Threshold { min_saving: 80 }
        );
        assert_eq!(
            "f2fs:16".parse::<WritePolicy>().unwrap(),
            WritePolicy::F2fs { cluster_pages: 16 }
        );
        for bad in [
            "f2fs:3",
            "f2fs:2",
            "f2fs:512",
            "entropy:9",
            "entropy:x",
            "stock:1",
            "threshold:-1",
        ] {
            assert!(
                matches!(bad.parse::<WritePolicy>(), Err(Error::Config { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            "lzma".parse::<WritePolicy>(),
            Err(Error::Unknown {
                what: "write policy",
                ..
            })
        ));
    }

    #[test]
    fn policies_read_from_toml_with_defaults() {
        #[derive(serde::Deserialize)]
        struct Config {
            policies: Vec<WritePolicy>,
        }
        let config: Config = toml::from_str(
            r#"policies = [
                { kind = "stock" },
                { kind = "threshold" },
                { kind = "threshold", min_saving = 100 },
                { kind = "ubifs" },
                { kind = "f2fs", cluster_pages = 8 },
                { kind = "entropy" },
            ]"#,
        )
        .unwrap();
        assert_eq!(
            config.policies,
            [
                WritePolicy::Stock,
                WritePolicy::paper(),
                WritePolicy::Threshold { min_saving: 100 },
                WritePolicy::Ubifs,
                WritePolicy::F2fs { cluster_pages: 8 },
                WritePolicy::Entropy {
                    max_bits_per_byte: BTRFS_ENTROPY_HIGH_BITS_PER_BYTE
                },
            ]
        );
        let typo: std::result::Result<Config, _> =
            toml::from_str(r#"policies = [{ kind = "threshold", min_savings = 1 }]"#);
        assert!(typo.is_err());
    }

    #[test]
    fn writing_in_pieces_matches_writing_at_once() {
        let data: Vec<u8> = (0..(REGION_BYTES * 2 + 5000))
            .map(|i| ((i / 7) % 251) as u8 ^ (i % 3) as u8)
            .collect();
        let policies = WritePolicy::defaults();
        let at_once = store_file_policies("f", &data, Codec::Lz4, &policies).unwrap();
        let mut writer = FileWriter::new("f", Codec::Lz4, &policies).unwrap();
        for piece in data.chunks(123_457) {
            writer.write(piece).unwrap();
        }
        assert_eq!(writer.finish().unwrap(), at_once);
    }
}
