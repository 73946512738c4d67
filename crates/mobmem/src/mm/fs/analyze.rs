//! What real files would take on flash under each write policy.
//!
//! Files are read in 1 MiB pieces and stored under every policy at once, so a page is
//! compressed once for all per-page policies and no file is held in memory whole.
//! Files are analysed in parallel; results keep the input order.

use std::fs;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::store::FileWriter;
use super::{Codec, StorageSummary, StoredFile, WritePolicy};
use crate::{Error, Result};

/// A write policy with the label it is reported under.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LabelledPolicy {
    pub label: String,
    pub policy: WritePolicy,
}

/// One file under every policy.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FileAnalysis {
    pub path: PathBuf,
    /// One per policy, in [`Analysis::policies`] order.
    pub summaries: Vec<StorageSummary>,
    /// The page tables behind `summaries`, for the read-path model; left out of JSON.
    #[serde(skip)]
    pub stored: Vec<StoredFile>,
}

/// Real files stored with one codec under several write policies.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Analysis {
    pub codec: Codec,
    pub policies: Vec<LabelledPolicy>,
    /// In the order [`collect_files`] finds them.
    pub files: Vec<FileAnalysis>,
    /// One per policy: the sum over all files.
    pub totals: Vec<StorageSummary>,
}

/// Store every regular file under `paths` (folders recursively) with `codec` under each
/// of `policies`.
pub fn analyze_paths(
    paths: &[PathBuf],
    codec: Codec,
    policies: &[(String, WritePolicy)],
) -> Result<Analysis> {
    if policies.is_empty() {
        return Err(Error::config("analyze", "no write policy to compare"));
    }
    let rules: Vec<WritePolicy> = policies.iter().map(|(_, p)| p.clone()).collect();
    for rule in &rules {
        rule.validate()?;
    }
    // Fail on a missing codec before reading anything.
    codec.compress(&[])?;
    let files = collect_files(paths)?;
    let files: Vec<FileAnalysis> = files
        .par_iter()
        .map(|path| analyze_file(path, codec, &rules))
        .collect::<Result<_>>()?;
    let mut totals = vec![StorageSummary::default(); rules.len()];
    for file in &files {
        for (total, summary) in totals.iter_mut().zip(&file.summaries) {
            total.add(summary);
        }
    }
    Ok(Analysis {
        codec,
        policies: policies
            .iter()
            .map(|(label, policy)| LabelledPolicy {
                label: label.clone(),
                policy: policy.clone(),
            })
            .collect(),
        files,
        totals,
    })
}

/// The regular files under `paths`: a file as given, a folder's files recursively in
/// name order. Symbolic links are followed when given, skipped inside folders (no
/// cycles); other non-regular files are skipped.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if paths.is_empty() {
        return Err(Error::config("analyze", "no file or folder given"));
    }
    let mut files = Vec::new();
    for path in paths {
        let meta = fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            walk(path, &mut files)?;
        } else if meta.is_file() {
            files.push(path.clone());
        }
    }
    Ok(files)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries = fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::io(dir, e))?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if kind.is_dir() {
            walk(&path, files)?;
        } else if kind.is_file() {
            files.push(path);
        }
    }
    Ok(())
}

fn analyze_file(path: &Path, codec: Codec, policies: &[WritePolicy]) -> Result<FileAnalysis> {
    let mut file = crate::input::open(path)?;
    let mut writer = FileWriter::new(&path.display().to_string(), codec, policies)?;
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => writer.write(&buffer[..n])?,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    let stored = writer.finish()?;
    Ok(FileAnalysis {
        path: path.to_path_buf(),
        summaries: stored.iter().map(StoredFile::summary).collect(),
        stored,
    })
}
