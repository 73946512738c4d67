use super::*;

fn shipped(name: &str) -> PhoneConfig {
    let path = format!(
        "{}/../../experiments/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    PhoneConfig::parse(&text, &path).unwrap()
}

#[test]
#[ignore]
fn print_runs() {
    for name in ["phone-2012", "phone"] {
        let c = shipped(name);
        let t0 = std::time::Instant::now();
        let trace = workload(&c, 1).unwrap();
        eprintln!(
            "{name}: {} events, {} pages, gen {:?}",
            trace.trace.events.len(),
            trace.trace.tables.pages.len(),
            t0.elapsed()
        );
        for choice in [c.baselines(), c.mechanisms()] {
            let t0 = std::time::Instant::now();
            let m = run(&c, &choice, &trace, 1).unwrap();
            eprintln!("{choice:?} {:?}\n  launch {:.0} cold {} rt95 {:.1} E {:.0} fgE {:.0} reads {} bypass {} so {} si {} cow {} fw {} nvmw {} pcmw {} ksm {:.0}/{:.0} pool {:.0} kills {} refused {}", t0.elapsed(), m.launch_mean_ms, m.cold_launches, m.rt_p95_ms, m.energy_mj, m.fg_energy_mj, m.file_reads, m.file_bypass_reads, m.swap_outs, m.swap_ins, m.cow_faults, m.flash_writes, m.nvm_writes, m.pcm_writes, m.ksm_saved_mib, m.ksm_saved_peak_mib, m.zram_pool_peak_mib, m.kills, m.swap_refused);
        }
    }
}
