//! File systems the phone's fs slot can name, and their registry: a variant is a read
//! path ([`crate::mm::fs::paths`]) and how the phone's code pages are stored on flash.
//! A new variant on an existing read path is one entry of [`FS_VARIANTS`]; on a new
//! read path, that path's file and its entry in `READ_PATHS` besides.

use crate::core::registry::Registry;
use crate::mm::fs::read::ReadPath;

crate::registry_entry! {
    /// A registered file system of the phone.
    pub struct FsVariantInfo {
        /// How every file access is served.
        pub path: ReadPath,
        /// Code pages are stored compressed (by the phone's `fs.code_ratio`, decompressed
        /// with `fs.codec` on a read); media pages are stored raw whatever the variant, as
        /// already-compressed data does not shrink.
        pub compresses_code: bool,
    }
}

/// Every file system the phone can run.
pub static FS_VARIANTS: Registry<FsVariantInfo> = Registry::new(
    "file system",
    &[
        FsVariantInfo {
            name: "off",
            summary: "uncompressed: every page stored raw and read through the page cache",
            path: ReadPath::PAGE_CACHE,
            compresses_code: false,
        },
        FsVariantInfo {
            name: "stock",
            summary: "JFFS2-like: code compressed, every page read through the page cache",
            path: ReadPath::PAGE_CACHE,
            compresses_code: true,
        },
        FsVariantInfo {
            name: "selective",
            summary: "the selective page cache: code compressed, raw pages read around the page cache (Song, Cha, KIISE)",
            path: ReadPath::SELECTIVE,
            compresses_code: true,
        },
    ],
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::fs::READ_PATHS;

    #[test]
    fn every_read_path_is_some_variant_s_and_names_are_distinct() {
        for path in READ_PATHS {
            assert!(
                FS_VARIANTS.into_iter().any(|v| v.path.name() == path.name),
                "no file system reads through {}",
                path.name
            );
        }
        let mut names: Vec<_> = FS_VARIANTS.names().collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FS_VARIANTS.len());
    }
}
