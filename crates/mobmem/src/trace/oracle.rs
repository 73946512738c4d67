//! Placeholder, being written.
use std::io::Read;
use std::path::Path;
use super::{Event, EventSource, Tables};

pub struct Reader;

impl Reader {
    pub fn new(_path: &Path, _input: Box<dyn Read + Send>) -> Self { Reader }
}

impl EventSource for Reader {
    fn read_batch(&mut self, _buf: &mut Vec<Event>, _max: usize) -> crate::Result<bool> { Ok(false) }
    fn tables(&mut self) -> crate::Result<Tables> { Ok(Tables::default()) }
}
