//! Every built-in device profile, by name: the one list a run, an experiment file or a
//! user picks devices from. A profile is data (its figures and their sources are at its
//! constant in [`super::device`], [`super::swap`] and [`super::platform`]); adding one is
//! its constant plus one entry here.
//!
//! In an experiment file a device may be given by name (`flash = "emmc"`) or as a table
//! of its figures (`[swap.devices.flash]`, see [`super::keys`]); both become the same
//! [`Device`].

use super::platform::Platform;
use super::swap::ZramSwap;
use super::{CostModel, Device, DRAM, EMMC, EMRAM, PCM, UFS21};
use crate::core::registry::Registry;
use crate::Result;

/// What a device is used as: which slot of a run it can fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceRole {
    /// Main memory (a tier of the buffer cache: DRAM or PCM).
    Memory,
    /// Non-volatile memory used as a swap device.
    Nvm,
    /// Flash storage: a swap area, or the storage behind the page cache.
    Flash,
}

impl DeviceRole {
    pub fn name(self) -> &'static str {
        match self {
            DeviceRole::Memory => "memory",
            DeviceRole::Nvm => "nvm",
            DeviceRole::Flash => "flash",
        }
    }
}

crate::registry_entry! {
    /// A built-in device, named as the device it builds is; its summary says where its
    /// figures come from.
    pub struct DeviceProfile {
        pub role: DeviceRole,
        pub device: fn() -> Device,
    }
}

/// Every built-in memory and storage device.
pub static DEVICES: Registry<DeviceProfile> = Registry::new(
    "device",
    &[
        DeviceProfile {
            name: "DRAM",
            summary:
                "DRAM of Table 1 of the app-state-aware buffer cache paper (Oh et al., KIISE 2015)",
            role: DeviceRole::Memory,
            device: || DRAM,
        },
        DeviceProfile {
            name: "PCM",
            summary:
                "PCM of Table 1 of the app-state-aware buffer cache paper (Oh et al., KIISE 2015)",
            role: DeviceRole::Memory,
            device: || PCM,
        },
        DeviceProfile {
            name: "emram",
            summary: "embedded STT-MRAM as a swap block device (assumed figures, docs/swap.md)",
            role: DeviceRole::Nvm,
            device: || EMRAM,
        },
        DeviceProfile {
            name: "ufs2.1",
            summary:
                "UFS 2.1 flash, queue-depth-1 random 4 KiB I/O (assumed figures, docs/swap.md)",
            role: DeviceRole::Flash,
            device: || UFS21,
        },
        DeviceProfile {
            name: "emmc",
            summary: "eMMC 4.5/5.0-class flash behind the page cache (assumed latencies)",
            role: DeviceRole::Flash,
            device: || EMMC,
        },
    ],
);

/// The built-in device called `name`; an unknown name lists the known ones.
pub fn find_device(name: &str) -> Result<&'static DeviceProfile> {
    DEVICES.find(name)
}

crate::registry_entry! {
    /// A built-in compressed-RAM swap profile.
    pub struct ZramProfile {
        pub zram: fn() -> ZramSwap,
    }
}

/// Every built-in zram profile.
pub static ZRAM_PROFILES: Registry<ZramProfile> = Registry::new(
    "zram profile",
    &[ZramProfile {
        name: "zram-lz4",
        summary: "LZ4 on a mobile big core, ratio 2.5, 10% incompressible (assumed figures, docs/swap.md)",
        zram: ZramSwap::default,
    }],
);

crate::registry_entry! {
    /// A built-in cost model of the buffer-cache simulator.
    pub struct CostProfile {
        pub model: fn() -> CostModel,
    }
}

/// Every built-in cost model.
pub static COST_MODELS: Registry<CostProfile> = Registry::new(
    "cost model",
    &[
        CostProfile {
            name: "paper-relative",
            summary: "the buffer-cache paper's relative costs: DRAM 1, PCM read 2 and write 50, eviction 1000",
            model: CostModel::paper_relative,
        },
        CostProfile {
            name: "table1-ns",
            summary: "Table 1's DRAM and PCM latencies in ns, eMMC storage behind them",
            model: CostModel::table1_ns,
        },
    ],
);

crate::registry_entry! {
    /// A built-in file-system platform.
    pub struct PlatformProfile {
        pub platform: fn() -> Platform,
    }
}

/// Every built-in platform of the compressed flash file system.
pub static PLATFORMS: Registry<PlatformProfile> = Registry::new(
    "platform",
    &[
        PlatformProfile {
            name: "pxa250",
            summary: "the selective page cache paper's board: PXA250, NOR flash, JFFS2 (docs/flashfs-read.md)",
            platform: Platform::pxa250,
        },
        PlatformProfile {
            name: "modern-phone",
            summary: "a current phone: big core, UFS, the kernel's page cache (docs/flashfs-read.md)",
            platform: Platform::modern_phone,
        },
    ],
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_is_found_by_its_own_name_and_is_valid() {
        for p in DEVICES {
            let device = (p.device)();
            assert_eq!(device.name, p.name, "the entry names the device it builds");
            assert_eq!(find_device(p.name).unwrap().name, p.name);
            device.validate().unwrap();
        }
        for p in ZRAM_PROFILES {
            let zram = (p.zram)();
            assert_eq!(zram.name, p.name);
            zram.validate().unwrap();
        }
        for p in COST_MODELS {
            let model = (p.model)();
            assert_eq!(model.name, p.name);
            model.validate().unwrap();
        }
        for p in PLATFORMS {
            assert_eq!((p.platform)().name, p.name);
        }
        let e = find_device("optane").err().unwrap().to_string();
        assert!(e.contains("ufs2.1") && e.contains("emram"), "{e}");
    }
}
