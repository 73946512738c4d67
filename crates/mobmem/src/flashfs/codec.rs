//! Placeholder, being written.
use crate::Result;

/// A compression codec of the file system.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Codec {
    Zlib,
    Lzo,
    Lz4,
    Zstd,
}

impl Codec {
    pub fn compress(self, _page: &[u8]) -> Result<Vec<u8>> {
        Err(crate::Error::config("codec", "not implemented yet"))
    }
}
