//! Opening input files without hanging on special files.
//!
//! Opening a FIFO for reading waits for a writer, possibly forever. Inputs are therefore
//! opened without blocking; a regular file is read as usual, a FIFO or a character device
//! as a stream (the readers bound what they take from it), and a folder or a socket is an
//! error naming what it is. A FIFO that no program writes to reads as empty.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};

use crate::{Error, Result};

/// Opens `path` for reading (see the module's notes); `-` is standard input.
pub fn open(path: &Path) -> Result<File> {
    // A socket cannot be opened at all (ENXIO, "no such device or address"): say what
    // it is before trying.
    if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        return Err(not_a_file(path, "a socket"));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(if path == Path::new("-") {
            Path::new("/dev/stdin")
        } else {
            path
        })
        .map_err(|e| Error::io(path, e))?;
    let kind = file.metadata().map_err(|e| Error::io(path, e))?.file_type();
    let refused = if kind.is_dir() {
        Some("a folder")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_block_device() {
        Some("a block device")
    } else {
        None
    };
    if let Some(what) = refused {
        return Err(not_a_file(path, what));
    }
    if kind.is_fifo() || kind.is_char_device() {
        // Opened: from here on reads wait for data as usual.
        let flags = fcntl_getfl(&file).map_err(|e| Error::io(path, e.into()))?;
        fcntl_setfl(&file, flags - OFlags::NONBLOCK).map_err(|e| Error::io(path, e.into()))?;
    }
    Ok(file)
}

fn not_a_file(path: &Path, what: &str) -> Error {
    Error::io(
        path,
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {what}, not a file to read"),
        ),
    )
}

/// Reads all of `path` (opened by [`open`]), refusing one longer than `limit` bytes
/// once that many are read: a FIFO or a device then ends in an error, not a hang or an
/// unbounded buffer. `what` names the file in that error ("a media file").
pub fn read_all(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    open(path)?
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(Error::io(
            path,
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("is longer than {limit} bytes, the most {what} may be"),
            ),
        ));
    }
    Ok(bytes)
}

/// [`read_all`] as UTF-8 text.
pub fn read_text(path: &Path, limit: u64, what: &str) -> Result<String> {
    String::from_utf8(read_all(path, limit, what)?).map_err(|e| {
        Error::io(
            path,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("is not UTF-8 text: {e}"),
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn sockets_and_block_devices_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let e = open(&socket).unwrap_err().to_string();
        assert!(e.contains("is a socket"), "{e}");
        // Any block device of the machine (none in some containers).
        let block = std::fs::read_dir("/dev")
            .unwrap()
            .flatten()
            .find(|e| e.file_type().is_ok_and(|t| t.is_block_device()));
        if let Some(device) = block {
            let e = open(&device.path()).unwrap_err().to_string();
            assert!(e.contains("is a block device"), "{e}");
        }
    }

    #[test]
    fn whole_reads_stop_at_their_limit_and_on_special_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"12345").unwrap();
        assert_eq!(read_all(&file, 5, "a test file").unwrap(), b"12345");
        let e = read_all(&file, 4, "a test file").unwrap_err().to_string();
        assert!(
            e.contains("longer than 4 bytes") && e.contains(&file.display().to_string()),
            "{e}"
        );
        // An endless device ends at the limit, with the error.
        let e = read_all(Path::new("/dev/zero"), 1 << 16, "a test file")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/zero") && e.contains("longer than 65536 bytes"),
            "{e}"
        );
        let e = read_all(dir.path(), 10, "a test file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a folder"), "{e}");
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert!(read_text(&file, 10, "a test file").is_err());
    }

    #[test]
    fn a_fifo_without_a_writer_reads_as_empty_at_once_and_a_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let mut bytes = Vec::new();
        open(&fifo).unwrap().read_to_end(&mut bytes).unwrap();
        assert!(bytes.is_empty());
        let e = open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
        let file = dir.path().join("f");
        std::fs::write(&file, "text").unwrap();
        let mut text = String::new();
        open(&file).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(text, "text");
    }
}
