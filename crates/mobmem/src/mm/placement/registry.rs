//! The one list of every policy mobmem knows. Adding a policy: write its file under
//! `policies/`, then add one entry here (see `docs/adding-a-policy.md`).

use std::sync::Arc;

use super::policies;
use super::{CachePolicy, Capacity};
use crate::core::registry::Registry;
use crate::trace::PageId;
use crate::{Error, Result};

/// What memory a policy manages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// One memory of `capacity` pages; the classic buffer-cache setting.
    SingleTier,
    /// DRAM + PCM; the policy decides which tier each page lives in.
    Hybrid,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::SingleTier => "single-tier",
            Family::Hybrid => "hybrid",
        }
    }

    /// Whether a policy of this family can make `metric` ([`super::metrics::Metrics`]'s
    /// names) other than zero: a single tier has no PCM and migrates nothing.
    pub fn has_metric(self, metric: &str) -> bool {
        match self {
            Family::Hybrid => true,
            Family::SingleTier => !metric.starts_with("pcm_") && !metric.starts_with("migrations_"),
        }
    }
}

/// What a policy is built from.
#[derive(Debug, Clone, Default)]
pub struct BuildContext {
    /// The memory's capacity, in the unit of the run (pages, or bytes): policies size
    /// their queues from it.
    pub capacity: Capacity,
    /// Distinct pages of the trace, when known: lets policies size their state once.
    pub page_count_hint: usize,
    /// The whole sequence of accessed pages, for offline policies (Belady's OPT).
    pub future: Option<Arc<[PageId]>>,
    /// The trace's object id of each page, by the trace's page id: a policy that hashes
    /// pages (w-tinylfu's sketch) hashes these, as libCacheSim hashes the object ids it
    /// reads, instead of the page ids (`sim --hash-object-ids`).
    pub object_ids: Option<Arc<[u64]>>,
}

crate::registry_entry! {
    /// A registered policy.
    pub struct PolicyInfo {
        pub family: Family,
        /// Needs the future ([`BuildContext::future`]); the trace is then read into memory.
        pub offline: bool,
        /// Places pages by whether their app is in the foreground: on a trace that marks
        /// no access as foreground it cannot do what it is for.
        pub reads_foreground: bool,
        pub build: fn(&BuildContext) -> Result<Box<dyn CachePolicy>>,
    }
}

impl PolicyInfo {
    /// The metrics of a run that this policy's family can make other than zero, in the
    /// order of [`Metrics`](super::metrics::Metrics)' listing: what `sim` shows.
    pub fn shown_values(&self, metrics: &super::metrics::Metrics) -> Vec<(&'static str, f64)> {
        use crate::core::stats::Stats;
        let mut values = metrics.values();
        values.retain(|(name, _)| self.family.has_metric(name));
        values
    }
}

/// Every policy, single-tier first.
pub static REGISTRY: Registry<PolicyInfo> = Registry::new(
    "policy",
    &[
    PolicyInfo {
        name: "lru",
        family: Family::SingleTier,
        summary: "least recently used",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::lru::Lru::new(ctx.page_count_hint)))
        },
    },
    PolicyInfo {
        name: "fifo",
        family: Family::SingleTier,
        summary: "first in, first out",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::fifo::Fifo::new(ctx.page_count_hint)))
        },
    },
    PolicyInfo {
        name: "clock",
        family: Family::SingleTier,
        summary: "CLOCK (second chance; Corbato 1968)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::clock::Clock::new(ctx.page_count_hint)))
        },
    },
    PolicyInfo {
        name: "sieve",
        family: Family::SingleTier,
        summary: "SIEVE: FIFO with a visited bit and a sweeping hand (Zhang et al., NSDI 2024)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::sieve::Sieve::new(ctx.page_count_hint)))
        },
    },
    PolicyInfo {
        name: "s3fifo",
        family: Family::SingleTier,
        summary: "S3-FIFO: small (10%), main and ghost FIFO queues (Yang et al., SOSP 2023)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::s3fifo::S3Fifo::new(
                ctx.capacity.dram,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "lfu",
        family: Family::SingleTier,
        summary: "least frequently used while resident, ties to the least recently used",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::lfu::Lfu::new(ctx.page_count_hint)))
        },
    },
    PolicyInfo {
        name: "lecar",
        family: Family::SingleTier,
        summary: "LRU and LFU experts weighted by regret, as libCacheSim's LeCaR (Vietri et al., HotStorage 2018)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::lecar::LeCaR::new(
                ctx.capacity.dram as u64,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "cacheus",
        family: Family::SingleTier,
        summary: "scan-resistant LRU and churn-resistant LFU experts weighted by regret, with an adaptive learning rate, as libCacheSim's Cacheus (Rodriguez et al., FAST 2021)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::cacheus::Cacheus::new(
                ctx.capacity.dram as u64,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "fifo-merge",
        family: Family::SingleTier,
        summary: "FIFO that evicts the least used half of the next 100 pages, as libCacheSim's FIFO-Merge",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::fifo_merge::FifoMerge::new(
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "lhd",
        family: Family::SingleTier,
        summary: "LHD: evict the least expected hits per space and time, learnt from hit and eviction ages (Beckmann et al., NSDI 2018), as libCacheSim's LHD",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::lhd::Lhd::new(
                ctx.capacity.dram as u64,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "hyperbolic",
        family: Family::SingleTier,
        summary: "of 64 pages drawn at random, evict the fewest hits per request since insertion (Blankstein et al., ATC 2017), as libCacheSim's Hyperbolic",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            let hint = ctx.page_count_hint;
            Ok(Box::new(match &ctx.object_ids {
                None => policies::hyperbolic::Hyperbolic::new(hint),
                Some(ids) => policies::hyperbolic::Hyperbolic::with_keys(hint, ids.clone()),
            }))
        },
    },
    PolicyInfo {
        name: "cr-lfu",
        family: Family::SingleTier,
        summary: "least frequently used while resident, ties to the most recently used (CACHEUS's churn-resistant LFU)",
        offline: false,
        reads_foreground: false,
        build: |ctx| Ok(Box::new(policies::cr_lfu::new(ctx.page_count_hint))),
    },
    PolicyInfo {
        name: "mru",
        family: Family::SingleTier,
        summary: "most recently used, for loops larger than memory (Chou and DeWitt, VLDB 1985)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::mru::Mru::new(ctx.page_count_hint)))
        },
    },
    PolicyInfo {
        name: "clock-2",
        family: Family::SingleTier,
        summary: "CLOCK with a 2-bit counter a page, as libCacheSim's Clock n-bit-counter=2",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::clock_counter::ClockCounter::new(
                2,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "lfuda",
        family: Family::SingleTier,
        summary: "LFU with dynamic aging, as libCacheSim's LFUDA (Arlitt et al., 2000)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::lfuda::Lfuda::new(ctx.page_count_hint)))
        },
    },
    PolicyInfo {
        name: "gdsf",
        family: Family::SingleTier,
        summary: "greedy-dual-size-frequency: uses over size plus age (Cherkasova, HP Labs 1998)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::gdsf::Gdsf::new(ctx.page_count_hint)))
        },
    },
    PolicyInfo {
        name: "qdlp",
        family: Family::SingleTier,
        summary: "QD-LP: 10% FIFO probation, 2-bit CLOCK main, 90% ghost (Yang et al., HotOS 2023)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::qdlp::Qdlp::new(
                ctx.capacity.dram,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "lru-2",
        family: Family::SingleTier,
        summary: "LRU-K with K = 2: evict the oldest second-last reference, pages seen once first (O'Neil et al., SIGMOD 1993)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::lru_k::Lru2::new(
                ctx.capacity.dram,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "mq",
        family: Family::SingleTier,
        summary: "multi-queue: 8 LRU queues by log2 of the access count, a page demoted after 75 idle accesses, history of half the capacity (Zhou et al., USENIX ATC 2001)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::mq::Mq::new(
                ctx.capacity.dram,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "slru-4",
        family: Family::SingleTier,
        summary: "segmented LRU, four equal segments (S4LRU; Huang et al., SOSP 2013)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::slru::Slru::new(
                ctx.capacity.dram,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "2q",
        family: Family::SingleTier,
        summary: "full 2Q, Kin 25%, Kout 50% (Johnson and Shasha, VLDB 1994)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::two_q::TwoQ::new(
                ctx.capacity.dram,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "arc",
        family: Family::SingleTier,
        summary: "adaptive replacement cache (Megiddo and Modha, FAST 2003)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::arc::Arc::new(
                ctx.capacity.dram,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "lirs",
        family: Family::SingleTier,
        summary: "LIRS as in libCacheSim, HIR share 1% (Jiang and Zhang, SIGMETRICS 2002)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::lirs::Lirs::new(
                ctx.capacity.dram,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "w-tinylfu",
        family: Family::SingleTier,
        summary: "W-TinyLFU as in libCacheSim: 1% window, 20/80 SLRU (Einziger, Friedman, Manes, TOS 2017)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            let (capacity, hint) = (ctx.capacity.dram, ctx.page_count_hint);
            Ok(Box::new(match &ctx.object_ids {
                None => policies::w_tinylfu::WTinyLfu::new(capacity, hint),
                Some(ids) => policies::w_tinylfu::WTinyLfu::with_sketch_keys(capacity, hint, ids.clone()),
            }))
        },
    },
    PolicyInfo {
        name: "opt",
        family: Family::SingleTier,
        summary: "Belady's optimal offline policy (Belady 1966): the lower bound on misses",
        offline: true,
        reads_foreground: false,
        build: |ctx| {
            let future = ctx
                .future
                .clone()
                .ok_or_else(|| Error::config("policy opt", "needs the whole trace in memory"))?;
            Ok(Box::new(policies::opt::Opt::new(future)))
        },
    },
    PolicyInfo {
        name: "hybrid-lru",
        family: Family::Hybrid,
        summary: "app-blind LRU over DRAM+PCM: one recency order, DRAM holds the most recent pages",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::tiered::Tiered::new(
                policies::lru::Lru::new(ctx.page_count_hint),
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "hybrid-2q",
        family: Family::Hybrid,
        summary:
            "app-blind 2Q over DRAM+PCM: 2Q decides residency, DRAM holds the most recent pages",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::tiered::Tiered::new(
                policies::two_q::TwoQ::new(ctx.capacity.total(), ctx.page_count_hint),
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "clock-dwf",
        family: Family::Hybrid,
        summary: "CLOCK-DWF: write-hot pages in DRAM (Lee, Bahn, Noh, IEEE TC 2014)",
        offline: false,
        reads_foreground: false,
        build: |ctx| {
            Ok(Box::new(policies::clock_dwf::ClockDwf::new(
                ctx.capacity,
                ctx.page_count_hint,
            )))
        },
    },
    PolicyInfo {
        name: "app-aware",
        family: Family::Hybrid,
        summary:
            "app-state-aware placement: foreground pages in DRAM (Oh, Kang, Lee, Eom, KIISE 2015)",
        offline: false,
        reads_foreground: true,
        build: |ctx| {
            Ok(Box::new(policies::app_aware::AppAware::new(
                ctx.page_count_hint,
            )))
        },
    },
    ],
);

/// Look a policy up by name.
pub fn find_policy(name: &str) -> Result<&'static PolicyInfo> {
    REGISTRY.find(name)
}

impl PolicyInfo {
    /// Build the policy, checking the capacity fits its family.
    pub fn build(&self, ctx: &BuildContext) -> Result<Box<dyn CachePolicy>> {
        let context = format!("policy {}", self.name);
        match self.family {
            Family::SingleTier if ctx.capacity.pcm != 0 => {
                let hybrid: Vec<&str> = (REGISTRY.iter())
                    .filter(|p| p.family == Family::Hybrid)
                    .map(|p| p.name)
                    .collect();
                return Err(Error::config(
                    context,
                    format!(
                        "is single-tier and takes no PCM; use a hybrid policy ({})",
                        hybrid.join(", ")
                    ),
                ));
            }
            Family::Hybrid if ctx.capacity.dram == 0 || ctx.capacity.pcm == 0 => {
                return Err(Error::config(
                    context,
                    "is a hybrid policy and needs at least one DRAM and one PCM page",
                ))
            }
            _ => {}
        }
        if ctx.capacity.total() == 0 {
            return Err(Error::config(
                context,
                "needs a capacity of at least one page",
            ));
        }
        (self.build)(ctx)
    }
}
