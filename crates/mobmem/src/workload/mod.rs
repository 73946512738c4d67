//! Placeholder until the generator lands: a tiny deterministic workload.
use crate::trace::{Event, Interner, PageKey, Trace};
use crate::Result;

#[derive(Debug, Clone)]
pub struct WorkloadConfig {
    pub accesses: u64,
}

impl WorkloadConfig {
    pub fn scaled(mut self, scale: f64) -> Self {
        self.accesses = (self.accesses as f64 * scale) as u64;
        self
    }
}

pub fn preset_names() -> &'static [&'static str] {
    &["chrome-push", "app-switching"]
}

pub fn preset(_name: &str) -> Result<WorkloadConfig> {
    Ok(WorkloadConfig { accesses: 20_000 })
}

pub fn generate(config: &WorkloadConfig, seed: u64) -> Result<Trace> {
    let mut interner = Interner::new();
    let fg = interner.start_process(100, "fg").unwrap();
    let bg = interner.start_process(200, "bg").unwrap();
    let mut events = vec![Event::importance(0, fg, 0), Event::importance(0, bg, 900)];
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    for i in 0..config.accesses {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (x >> 33) as u64;
        let proc = if r % 4 == 0 { bg } else { fg };
        let page = interner
            .page(PageKey::file(proc as u64, (r % 1000) * (r % 7) / 3))
            .unwrap();
        events.push(Event::access(i, proc, page, r % 5 == 0, false));
    }
    Ok(Trace {
        events,
        tables: interner.into_tables(),
    })
}
