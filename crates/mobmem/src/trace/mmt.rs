//! Placeholder, being written.
use super::{Event, EventSource, Tables};
use std::io::Read;
use std::path::Path;

pub struct Reader;

impl Reader {
    pub fn new(path: &Path, _input: Box<dyn Read + Send>) -> crate::Result<Self> {
        Err(crate::Error::config(
            path.display().to_string(),
            "format not implemented yet",
        ))
    }
}

impl EventSource for Reader {
    fn read_batch(&mut self, _buf: &mut Vec<Event>, _max: usize) -> crate::Result<bool> {
        Ok(false)
    }
    fn tables(&mut self) -> crate::Result<Tables> {
        Ok(Tables::default())
    }
}

pub fn write(path: &Path, _trace: &super::Trace) -> crate::Result<()> {
    Err(crate::Error::config(
        path.display().to_string(),
        "writer not implemented yet",
    ))
}
