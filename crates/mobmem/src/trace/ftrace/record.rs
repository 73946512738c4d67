//! One event of a capture with the fields the importer uses, whichever form it came in: a
//! line of ftrace text, read here from its payload, or an event of a Perfetto protobuf
//! trace, built by [`crate::trace::perfetto`]. The importer applies both alike
//! ([`FtraceImporter::apply`](super::FtraceImporter)), so the two imports of one capture
//! give the same trace. The Perfetto import keeps its events, waiting for the time sort,
//! as records whose names are handles into one buffer: hence a record generic over the
//! type of its names.

use std::convert::Infallible;

use super::payload::{
    adj, begin_marker, filemap_key, filemap_page_range, filemap_pages, kernel_hex, new_task,
    number, text_between, value, NewTask,
};
use super::PAGE_SIZE;

/// An event's fields, by the event's kind; `T` is the type of the names it holds (`&str`
/// where it is applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Record<T> {
    /// `mm_filemap_add_to_page_cache` (`added`) or `mm_filemap_delete_from_page_cache`:
    /// `count` pages of file `owner` from page `first`.
    PageCache {
        added: bool,
        owner: u64,
        first: u64,
        count: u64,
    },
    /// `mm_filemap_get_pages`: one batch of a `read()`, pages `first..=last`.
    GetPages {
        owner: u64,
        first: u64,
        last: u64,
    },
    /// `mm_filemap_map_pages`.
    MapPages {
        owner: u64,
        first: u64,
        last: u64,
    },
    /// `mm_filemap_fault`.
    Fault {
        owner: u64,
        index: u64,
    },
    /// `page_fault_user`: the faulting address's page, and whether it was a write.
    UserFault {
        page: u64,
        write: bool,
    },
    OomScoreAdj {
        pid: u32,
        adj: i16,
        comm: Option<T>,
    },
    NewTask(NewTask<T>),
    Fork {
        child: u32,
        child_comm: Option<T>,
    },
    Exit {
        pid: u32,
        /// Whether the whole thread group ended (`group_dead`), where the event says.
        group_dead: Option<bool>,
    },
    Rename {
        pid: u32,
        newcomm: T,
    },
    /// `sched_process_exec`: the process of `pid` runs a new program, `name` its file's
    /// base name (what the kernel sets as its comm).
    Exec {
        pid: u32,
        name: T,
    },
    /// A trace marker written from user space (`tracing_mark_write`, `print`): its
    /// atrace `B|PID|NAME` slice begin, if it is one.
    Marker(Option<(u32, T)>),
    /// A reclaim event (`mm_vmscan_*`), with the pages it reclaimed where it says.
    Reclaim {
        reclaimed: u64,
    },
    /// An event the trace model does not use.
    Other,
}

impl<T> Record<T> {
    /// The same record with each of its names turned into a `U` by `f`; `f`'s first error.
    pub(crate) fn try_map_names<U, E>(
        self,
        mut f: impl FnMut(T) -> std::result::Result<U, E>,
    ) -> std::result::Result<Record<U>, E> {
        Ok(match self {
            Record::PageCache {
                added,
                owner,
                first,
                count,
            } => Record::PageCache {
                added,
                owner,
                first,
                count,
            },
            Record::GetPages { owner, first, last } => Record::GetPages { owner, first, last },
            Record::MapPages { owner, first, last } => Record::MapPages { owner, first, last },
            Record::Fault { owner, index } => Record::Fault { owner, index },
            Record::UserFault { page, write } => Record::UserFault { page, write },
            Record::OomScoreAdj { pid, adj, comm } => Record::OomScoreAdj {
                pid,
                adj,
                comm: comm.map(&mut f).transpose()?,
            },
            Record::NewTask(task) => Record::NewTask(NewTask {
                pid: task.pid,
                thread: task.thread,
                adj: task.adj,
                comm: task.comm.map(&mut f).transpose()?,
            }),
            Record::Fork { child, child_comm } => Record::Fork {
                child,
                child_comm: child_comm.map(&mut f).transpose()?,
            },
            Record::Exit { pid, group_dead } => Record::Exit { pid, group_dead },
            Record::Rename { pid, newcomm } => Record::Rename {
                pid,
                newcomm: f(newcomm)?,
            },
            Record::Exec { pid, name } => Record::Exec {
                pid,
                name: f(name)?,
            },
            Record::Marker(begin) => Record::Marker(match begin {
                Some((pid, slice)) => Some((pid, f(slice)?)),
                None => None,
            }),
            Record::Reclaim { reclaimed } => Record::Reclaim { reclaimed },
            Record::Other => Record::Other,
        })
    }

    /// The same record with each of its names turned into a `U` by `f`.
    pub(crate) fn map_names<U>(self, mut f: impl FnMut(T) -> U) -> Record<U> {
        let Ok(record) = self.try_map_names(|name| Ok::<U, Infallible>(f(name)));
        record
    }
}

/// The record of the text event `name` with payload `payload`; `Err` says what was
/// expected. `perfetto`: the text was written by Perfetto (see
/// [`ImportOptions::perfetto`](super::ImportOptions::perfetto)).
pub(super) fn parse<'a>(
    name: &str,
    payload: &'a str,
    perfetto: bool,
) -> std::result::Result<Record<&'a str>, String> {
    Ok(match name {
        "mm_filemap_add_to_page_cache" | "mm_filemap_delete_from_page_cache" => {
            let (owner, first, count) = filemap_pages(payload, perfetto)?;
            Record::PageCache {
                added: name == "mm_filemap_add_to_page_cache",
                owner,
                first,
                count,
            }
        }
        "mm_filemap_get_pages" => {
            let (owner, first, last) = filemap_page_range(payload, perfetto)?;
            Record::GetPages { owner, first, last }
        }
        "mm_filemap_map_pages" => {
            let (owner, first, last) = filemap_page_range(payload, perfetto)?;
            Record::MapPages { owner, first, last }
        }
        "mm_filemap_fault" => {
            let (owner, index) = filemap_key(payload, perfetto)?;
            Record::Fault { owner, index }
        }
        "page_fault_user" => {
            let address = value(payload, "address").ok_or("expected address=0x...")?;
            let address = kernel_hex(address, perfetto)
                .ok_or_else(|| format!("address={address}, expected an address"))?;
            let code = value(payload, "error_code").ok_or("expected error_code=0x...")?;
            let code = kernel_hex(code, perfetto)
                .ok_or_else(|| format!("error_code={code}, expected a number"))?;
            Record::UserFault {
                page: address / PAGE_SIZE,
                write: code & 2 != 0,
            }
        }
        "oom_score_adj_update" => Record::OomScoreAdj {
            pid: number(value(payload, "pid"), "pid=PID")?,
            adj: adj(value(payload, "oom_score_adj"))?,
            comm: text_between(payload, "comm=", " oom_score_adj="),
        },
        "task_newtask" => Record::NewTask(new_task(payload, perfetto)?),
        "sched_process_fork" => Record::Fork {
            child: number(value(payload, "child_pid"), "child_pid=PID")?,
            child_comm: text_between(payload, "child_comm=", " child_pid="),
        },
        "sched_process_exit" => Record::Exit {
            pid: number(value(payload, "pid"), "pid=PID")?,
            group_dead: match value(payload, "group_dead") {
                Some("true") | Some("1") => Some(true),
                Some("false") | Some("0") => Some(false),
                Some(other) => return Err(format!("group_dead={other}, expected true or false")),
                None => None,
            },
        },
        "task_rename" => Record::Rename {
            pid: number(value(payload, "pid"), "pid=PID")?,
            newcomm: text_between(payload, "newcomm=", " oom_score_adj=")
                .ok_or("expected newcomm=NAME")?,
        },
        "sched_process_exec" => {
            let filename =
                text_between(payload, "filename=", " pid=").ok_or("expected filename=PATH")?;
            Record::Exec {
                pid: number(value(payload, "pid"), "pid=PID")?,
                name: base_name(filename),
            }
        }
        "tracing_mark_write" | "print" => Record::Marker(begin_marker(payload)),
        _ if name.starts_with("mm_vmscan_") => Record::Reclaim {
            reclaimed: if name == "mm_vmscan_lru_shrink_inactive" {
                value(payload, "nr_reclaimed")
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            } else {
                0
            },
        },
        _ => Record::Other,
    })
}

/// The last component of a path: the comm `exec` gives a task.
pub(crate) fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}
