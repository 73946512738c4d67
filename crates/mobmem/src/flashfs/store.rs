//! Placeholder, being written.
use super::Codec;
use crate::Result;

/// How the file system decides to keep a page raw or compressed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum WritePolicy {
    Stock,
}

/// One stored page of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct StoredPage {
    /// File bytes in this page (4096 except maybe the last page).
    pub data_len: u32,
    /// Bytes on flash: the compressed size if compressed, else `data_len`.
    pub stored_len: u32,
    pub compressed: bool,
}

/// A file as stored on flash.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredFile {
    pub name: String,
    pub codec: Codec,
    pub pages: Vec<StoredPage>,
}

pub fn store_file(
    _name: &str,
    _data: &[u8],
    _codec: Codec,
    _policy: &WritePolicy,
) -> Result<StoredFile> {
    Err(crate::Error::config("store", "not implemented yet"))
}
