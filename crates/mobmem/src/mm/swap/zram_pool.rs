//! What the kernel's zram stores for given page contents, as its `mm_stat` counts it
//! (Linux 6.18 `drivers/block/zram/zram_drv.c`, `zram_write_page` and
//! `Documentation/admin-guide/blockdev/zram.rst`):
//!
//! - a page whose machine words all hold one value is *same-filled*: no compression,
//!   no pool memory; it counts in `same_pages` and `orig_data_size` only;
//! - any other page is compressed with the device's algorithm; a result of at least
//!   zsmalloc's huge class size is stored uncompressed (a *huge* page, `PAGE_SIZE`
//!   bytes); the stored length adds to `compr_data_size`.
//!
//! `compr_data_size` (the sum of the stored lengths) is what a comparison with the
//! kernel should use: `mem_used_total` adds zsmalloc's size-class rounding and zspage
//! fragmentation, which this model does not follow.
//!
//! Codecs: `lz4` is `lz4_flex`'s block compressor, the format of the kernel's
//! `LZ4_compress_fast` at acceleration 1; `lzo` is LZO1X-1 (the `lzo` feature). The
//! kernel's `lzo-rle` differs from LZO1X-1 only in how it encodes runs of zero bytes,
//! so `lzo` stands for it on pages without long zero runs (same-filled pages, all
//! zeros included, are not compressed at all).

use crate::mm::fs::codec::Codec;
use crate::{Error, Result};

pub const PAGE_BYTES: usize = 4096;

/// zsmalloc's huge class size (`zs_huge_class_size`): a compressed page at least this
/// long is stored whole. `zs_create_pool` sets it to the largest size class whose zspage
/// holds more than one object in more than one page, less the handle's size but one;
/// with 4 KiB pages, size classes every 16 bytes from 32, zspages of up to
/// `CONFIG_ZSMALLOC_CHAIN_SIZE` = 8 pages (the default) and 8-byte handles, that class
/// is 3632 bytes (9 objects in 8 pages), so 3625. Other chain sizes give other values.
pub const HUGE_CLASS_BYTES: usize = 3625;

/// The codec standing for zram's algorithm `name` (`comp_algorithm`), with a note when
/// it stands for it only approximately; an error when this build has none.
pub fn codec_for(name: &str) -> Result<(Codec, Option<&'static str>)> {
    let (codec, note) = match name {
        "lz4" => (Codec::Lz4, None),
        "lzo" => (Codec::Lzo, None),
        "lzo-rle" => (
            Codec::Lzo,
            Some("lzo-rle compressed as LZO1X-1: the same except for runs of zero bytes"),
        ),
        other => {
            return Err(Error::config(
                "zram algorithm",
                format!("no model of '{other}': use lz4, lzo or lzo-rle"),
            ))
        }
    };
    if !codec.is_available() {
        return Err(Error::config(
            "zram algorithm",
            format!("{name} needs LZO, which this build lacks (cargo feature `lzo`): use lz4"),
        ));
    }
    Ok((codec, note))
}

/// The counters of `mm_stat` this model computes, in bytes or pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ZramPoolStats {
    /// Pages stored.
    pub pages: u64,
    /// `orig_data_size`: pages stored, in bytes.
    pub orig_data_size: u64,
    /// `compr_data_size`: the stored lengths.
    pub compr_data_size: u64,
    /// `same_pages`.
    pub same_pages: u64,
    /// `huge_pages`.
    pub huge_pages: u64,
}

/// Whether every machine word of `page` holds the same value (`page_same_filled`).
pub fn same_filled(page: &[u8]) -> bool {
    let mut words = page.chunks_exact(8);
    let Some(first) = words.next() else {
        return true;
    };
    words.all(|w| w == first)
}

/// The bytes `page` takes in a zram pool compressing with `codec`: 0 when same-filled,
/// a whole page when it compresses to the huge class or more, else its compressed length.
pub fn stored_size(codec: Codec, page: &[u8]) -> Result<u64> {
    if page.len() != PAGE_BYTES {
        return Err(Error::config(
            "zram page",
            format!("{} bytes, expected {PAGE_BYTES}", page.len()),
        ));
    }
    if same_filled(page) {
        return Ok(0);
    }
    let len = codec.compress(page)?.len();
    Ok(if len >= HUGE_CLASS_BYTES {
        PAGE_BYTES as u64
    } else {
        len as u64
    })
}

/// A zram device's pool, filled page by page.
#[derive(Debug, Clone)]
pub struct ZramPool {
    codec: Codec,
    pub stats: ZramPoolStats,
}

impl ZramPool {
    pub fn new(codec: Codec) -> Self {
        ZramPool {
            codec,
            stats: ZramPoolStats::default(),
        }
    }

    /// Store one page of contents; returns the bytes it takes in the pool.
    pub fn store(&mut self, page: &[u8]) -> Result<u64> {
        let len = stored_size(self.codec, page)?;
        self.stats.pages += 1;
        self.stats.orig_data_size += PAGE_BYTES as u64;
        if len == 0 {
            self.stats.same_pages += 1;
        } else if len == PAGE_BYTES as u64 {
            self.stats.huge_pages += 1;
        }
        self.stats.compr_data_size += len;
        Ok(len)
    }
}

/// The fields of a zram device's `mm_stat` line (zram.rst): orig_data_size,
/// compr_data_size, mem_used_total, mem_limit, mem_used_max, same_pages,
/// pages_compacted, huge_pages (and more on recent kernels, not read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MmStat {
    pub orig_data_size: u64,
    pub compr_data_size: u64,
    pub mem_used_total: u64,
    pub same_pages: u64,
    pub huge_pages: u64,
}

impl MmStat {
    /// Read the text of `mm_stat`; an error naming the field that is missing or not a
    /// number.
    pub fn parse(text: &str) -> Result<MmStat> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        let field = |i: usize, name: &str| -> Result<u64> {
            let v = fields.get(i).ok_or_else(|| {
                Error::host(format!("zram mm_stat has no {name} (field {})", i + 1))
            })?;
            v.parse()
                .map_err(|_| Error::host(format!("zram mm_stat: {name} is '{v}', not a number")))
        };
        Ok(MmStat {
            orig_data_size: field(0, "orig_data_size")?,
            compr_data_size: field(1, "compr_data_size")?,
            mem_used_total: field(2, "mem_used_total")?,
            same_pages: field(5, "same_pages")?,
            huge_pages: field(7, "huge_pages")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_filled_pages_take_no_pool_and_others_their_compressed_length() {
        let mut pool = ZramPool::new(Codec::Lz4);
        assert_eq!(pool.store(&[0u8; PAGE_BYTES]).unwrap(), 0);
        let word: Vec<u8> = (0..PAGE_BYTES)
            .map(|i| [1, 2, 3, 4, 5, 6, 7, 8][i % 8])
            .collect();
        assert_eq!(pool.store(&word).unwrap(), 0);
        let text: Vec<u8> = (0..PAGE_BYTES).map(|i| b"abcdefghij"[i % 10]).collect();
        let len = pool.store(&text).unwrap();
        assert!(len > 0 && len < 200, "{len}");
        let mut noise = vec![0u8; PAGE_BYTES];
        let mut x = 1u64;
        for b in &mut noise {
            x = crate::core::mix64(x);
            *b = x as u8;
        }
        assert_eq!(pool.store(&noise).unwrap(), PAGE_BYTES as u64);
        assert_eq!(
            pool.stats,
            ZramPoolStats {
                pages: 4,
                orig_data_size: 4 * PAGE_BYTES as u64,
                compr_data_size: len + PAGE_BYTES as u64,
                same_pages: 2,
                huge_pages: 1,
            }
        );
        assert!(pool.store(&[0u8; 100]).is_err());
    }

    #[test]
    fn mm_stat_is_read_by_position_and_bad_text_is_an_error() {
        let s = MmStat::parse("  8192  1500  12288  0  12288  1  0  0  0\n").unwrap();
        assert_eq!(
            s,
            MmStat {
                orig_data_size: 8192,
                compr_data_size: 1500,
                mem_used_total: 12288,
                same_pages: 1,
                huge_pages: 0,
            }
        );
        assert!(MmStat::parse("1 2 3").is_err());
        assert!(MmStat::parse("1 x 3 4 5 6 7 8").is_err());
    }

    #[test]
    fn unknown_algorithms_are_refused() {
        assert!(codec_for("zstd").is_err());
        assert_eq!(codec_for("lz4").unwrap().0, Codec::Lz4);
    }
}
