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

/// A file written under a temporary name next to its target and renamed into place only
/// by [`PartialFile::commit`], so that a crash or an error never leaves a half-written
/// file under the target's name. Dropped without a commit, the temporary file is removed.
pub(crate) struct PartialFile {
    target: PathBuf,
    temp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl PartialFile {
    pub(crate) fn create(target: &Path) -> Result<PartialFile> {
        let temp = partial_path(target);
        let file = File::create(&temp).map_err(|e| Error::io(&temp, e))?;
        Ok(PartialFile {
            target: target.to_path_buf(),
            temp,
            out: Some(BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// Where the data goes until the commit.
    pub(crate) fn temp_path(&self) -> &Path {
        &self.temp
    }

    pub(crate) fn target_path(&self) -> &Path {
        &self.target
    }

    /// The open file; only `commit`, which consumes `self`, closes it.
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
    pub(crate) fn commit(mut self) -> Result<()> {
        if let Some(out) = self.out.take() {
            // Closed before the rename, which some systems refuse on an open file.
            let file = out
                .into_inner()
                .map_err(|e| Error::io(&self.temp, e.into_error()))?;
            drop(file);
        }
        std::fs::rename(&self.temp, &self.target).map_err(|e| Error::io(&self.target, e))?;
        // Renamed: there is nothing left for `drop` to clean up.
        self.temp = PathBuf::new();
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
