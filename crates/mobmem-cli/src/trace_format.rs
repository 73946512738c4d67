//! The two flags that say how to read a trace file, shared by every command that reads
//! one: `--format` and, for a text trace of any layout, `--columns`.

use clap::Args;

use mobmem::trace::Format;

#[derive(Args, Clone, Debug, Default)]
pub struct TraceFormat {
    /// Trace format: mmt, csv (mobmem's CSV; any CSV with --columns), txt (fields
    /// separated by blanks, with --columns), lis, oracle-general, vscsi, twr, twr-ns, or
    /// a layout by name:
    /// mobile-block (Pixel 6a block I/O), msr (MSR Cambridge), blkparse (its default
    /// text), libcachesim-csv, libcachesim-txt. Default: from the file name.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Which column holds what, for a CSV or text trace of any layout, in libCacheSim's
    /// words where it has them: `obj-id-col=2, obj-size-col=3, time-col=1,
    /// has-header=true` (an object a line) or `offset-col=4, length-col=5, op-col=3,
    /// device-col=2` (a block range a line); on a preset, keys that change it. Every key
    /// is in docs/trace-formats.md.
    #[arg(long, value_name = "SPEC")]
    pub columns: Option<String>,
}

impl TraceFormat {
    /// The format to read with; `None` to tell it from the file name.
    pub fn get(&self) -> anyhow::Result<Option<Format>> {
        Ok(Format::with_columns(
            self.format.clone(),
            self.columns.as_deref(),
        )?)
    }
}
