//! Placeholder, being written.
use super::StoredFile;

/// Which read path the file system uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadPath {
    PageCache,
    Selective,
}

/// What a read cost.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ReadCost {
    pub time_ns: f64,
    pub energy_nj: f64,
}

/// Which pages of which files are in the page cache.
#[derive(Debug, Clone, Default)]
pub struct PageCacheState;

pub fn read_file(
    _file: &StoredFile,
    _path: ReadPath,
    _profile: &crate::devices::platform::Platform,
    _cache: &mut PageCacheState,
) -> ReadCost {
    ReadCost::default()
}
