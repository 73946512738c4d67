//! Pieces shared by the format readers and writers.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Read into `buf` until it is full or the input ends; returns the bytes read. Unlike
/// `read_exact`, a short count tells the caller exactly where the input stopped.
pub(crate) fn read_up_to(input: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// A file written under a temporary name next to its target (`NAME.partial`) and renamed
/// into place only by [`PartialFile::commit`], so that a crash or an error never leaves a
/// half-written file under the target's name. [`PartialFile::keep`] leaves it under the
/// temporary name; dropped without either, the temporary file is removed. Written
/// through [`Write`], buffered.
pub struct PartialFile {
    target: PathBuf,
    temp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl PartialFile {
    pub fn create(target: &Path) -> Result<PartialFile> {
        let temp = partial_path(target);
        let file = File::create(&temp).map_err(|e| Error::io(&temp, e))?;
        Ok(PartialFile {
            target: target.to_path_buf(),
            temp,
            out: Some(BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// Where the data goes until the commit.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    pub fn target_path(&self) -> &Path {
        &self.target
    }

    /// The open file; only `commit` and `keep`, which consume `self`, close it.
    pub(crate) fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        self.out
            .as_mut()
            .ok_or_else(|| io::Error::other("the file was already closed"))
    }

    /// Turns an I/O error on the temporary file into an error naming it.
    pub(crate) fn io_error(&self, e: io::Error) -> Error {
        Error::io(&self.temp, e)
    }

    /// Flush and rename into place.
    pub fn commit(mut self) -> Result<()> {
        // Closed before the rename, which some systems refuse on an open file.
        self.close()?;
        std::fs::rename(&self.temp, &self.target).map_err(|e| Error::io(&self.target, e))?;
        // Renamed: there is nothing left for `drop` to clean up.
        self.temp = PathBuf::new();
        Ok(())
    }

    /// Flush and leave the data under the temporary name (an output cut short, kept to be
    /// looked at); returns that name.
    pub fn keep(mut self) -> Result<PathBuf> {
        self.close()?;
        // Kept: `drop` must not remove it.
        Ok(std::mem::take(&mut self.temp))
    }

    fn close(&mut self) -> Result<()> {
        if let Some(out) = self.out.take() {
            let file = out
                .into_inner()
                .map_err(|e| Error::io(&self.temp, e.into_error()))?;
            drop(file);
        }
        Ok(())
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if !self.temp.as_os_str().is_empty() {
            drop(self.out.take());
            // Best effort: the file may already be gone, and drop cannot report errors.
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// `trace.mmt` -> `trace.mmt.partial`, in the same directory so the rename is atomic.
fn partial_path(target: &Path) -> PathBuf {
    let mut name = target
        .file_name()
        .map(OsString::from)
        .unwrap_or_else(|| OsString::from("trace"));
    name.push(".partial");
    target.with_file_name(name)
}

impl Write for PartialFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer()?.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

/// A decimal integer of digits only (no sign, fraction or exponent); `None` on overflow.
pub(crate) fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |value, &b| {
        if b.is_ascii_digit() {
            value.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is in `dir`, by name and contents.
    fn files(dir: &Path) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&path).unwrap())
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn partial_file_commits_keeps_or_removes() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.txt");
        let pair = |name: &str, text: &str| (name.to_string(), text.to_string());

        let mut file = PartialFile::create(&target).unwrap();
        file.write_all(b"dropped").unwrap();
        drop(file);
        assert!(files(dir.path()).is_empty());

        let mut file = PartialFile::create(&target).unwrap();
        file.write_all(b"kept").unwrap();
        assert_eq!(file.keep().unwrap(), dir.path().join("out.txt.partial"));
        assert_eq!(files(dir.path()), vec![pair("out.txt.partial", "kept")]);

        let mut file = PartialFile::create(&target).unwrap();
        file.write_all(b"whole").unwrap();
        file.commit().unwrap();
        assert_eq!(files(dir.path()), vec![pair("out.txt", "whole")]);
    }
}
