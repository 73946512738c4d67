//! Placeholder, being written.
use super::{Event, EventSource, Tables};
use std::io::Read;
use std::path::Path;

pub struct Reader;

impl Reader {
    pub fn new(_path: &Path, _input: Box<dyn Read + Send>) -> Self {
        Reader
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
