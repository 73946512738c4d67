//! The configuration-file faces of a [`Device`]: each kind of device keeps the keys and
//! units its files have always had, converted to and from the one description on reading
//! and writing. Used as `#[serde(with = "...")]` on the fields that hold devices.
//!
//! - [`memory`] (`[devices.dram]`, `[devices.pcm]`): energies in nJ per bit, static
//!   power, endurance in writes.
//! - [`flash`] (`[devices.flash]` of swap): energies per page, P/E cycles and capacity.
//! - [`nvm`] (`[devices.nvm]` of swap): latencies and energies per page only.
//!
//! A page is 2^15 bits, so per-bit figures convert exactly both ways.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Device, PAGE_BITS};

/// DRAM and PCM: energies per bit.
pub mod memory {
    use super::*;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Keys {
        name: String,
        read_ns: f64,
        write_ns: f64,
        read_nj_per_bit: f64,
        write_nj_per_bit: f64,
        static_w_per_gib: f64,
        endurance_writes: Option<f64>,
    }

    pub fn serialize<S: Serializer>(d: &Device, s: S) -> Result<S::Ok, S::Error> {
        Keys {
            name: d.name.to_string(),
            read_ns: d.read_ns,
            write_ns: d.write_ns,
            read_nj_per_bit: d.read_nj / PAGE_BITS,
            write_nj_per_bit: d.write_nj / PAGE_BITS,
            static_w_per_gib: d.static_w_per_gib,
            endurance_writes: d.endurance_writes,
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Device, D::Error> {
        let k = Keys::deserialize(d)?;
        Ok(Device {
            name: Cow::Owned(k.name),
            read_ns: k.read_ns,
            write_ns: k.write_ns,
            read_nj: k.read_nj_per_bit * PAGE_BITS,
            write_nj: k.write_nj_per_bit * PAGE_BITS,
            static_w_per_gib: k.static_w_per_gib,
            endurance_writes: k.endurance_writes,
            capacity_gib: None,
        })
    }
}

/// Swap flash: energies per page, endurance in P/E cycles over the whole capacity.
pub mod flash {
    use super::*;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Keys {
        name: String,
        read_ns: f64,
        write_ns: f64,
        read_nj: f64,
        write_nj: f64,
        endurance_pe_cycles: f64,
        capacity_gib: f64,
    }

    pub fn serialize<S: Serializer>(d: &Device, s: S) -> Result<S::Ok, S::Error> {
        Keys {
            name: d.name.to_string(),
            read_ns: d.read_ns,
            write_ns: d.write_ns,
            read_nj: d.read_nj,
            write_nj: d.write_nj,
            endurance_pe_cycles: d.endurance_writes.unwrap_or(0.0),
            capacity_gib: d.capacity_gib.unwrap_or(0.0),
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Device, D::Error> {
        let k = Keys::deserialize(d)?;
        Ok(Device {
            endurance_writes: Some(k.endurance_pe_cycles),
            capacity_gib: Some(k.capacity_gib),
            ..super::nvm::device(k.name, [k.read_ns, k.write_ns, k.read_nj, k.write_nj])
        })
    }
}

/// Swap NVM: latencies and energies per page.
pub mod nvm {
    use super::*;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Keys {
        name: String,
        read_ns: f64,
        write_ns: f64,
        read_nj: f64,
        write_nj: f64,
    }

    /// A device with only latencies and energies: read ns, write ns, read nJ, write nJ.
    pub(super) fn device(name: String, [read_ns, write_ns, read_nj, write_nj]: [f64; 4]) -> Device {
        Device {
            name: Cow::Owned(name),
            read_ns,
            write_ns,
            read_nj,
            write_nj,
            static_w_per_gib: 0.0,
            endurance_writes: None,
            capacity_gib: None,
        }
    }

    pub fn serialize<S: Serializer>(d: &Device, s: S) -> Result<S::Ok, S::Error> {
        Keys {
            name: d.name.to_string(),
            read_ns: d.read_ns,
            write_ns: d.write_ns,
            read_nj: d.read_nj,
            write_nj: d.write_nj,
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Device, D::Error> {
        let k = Keys::deserialize(d)?;
        Ok(device(
            k.name,
            [k.read_ns, k.write_ns, k.read_nj, k.write_nj],
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::devices::swap::SwapDevices;
    use crate::devices::{Devices, DRAM, PCM};

    #[test]
    fn memory_keys_are_per_bit_and_round_trip() {
        let text = "[dram]\nname = \"DRAM\"\nread_ns = 50.0\nwrite_ns = 50.0\n\
read_nj_per_bit = 0.1\nwrite_nj_per_bit = 0.1\nstatic_w_per_gib = 1.0\n\n\
[pcm]\nname = \"PCM\"\nread_ns = 100.0\nwrite_ns = 1000.0\nread_nj_per_bit = 0.1\n\
write_nj_per_bit = 1.0\nstatic_w_per_gib = 0.01\nendurance_writes = 1e8\n";
        let devices: Devices = toml::from_str(text).unwrap();
        assert_eq!(devices, Devices::default());
        assert_eq!((devices.dram, devices.pcm), (DRAM, PCM));
        let back: Devices = toml::from_str(&toml::to_string(&Devices::default()).unwrap()).unwrap();
        assert_eq!(back, Devices::default());
        assert!(toml::from_str::<Devices>(&text.replace("read_nj_per_bit", "read_nj")).is_err());
    }

    #[test]
    fn swap_keys_keep_each_kind_s_fields() {
        let defaults = SwapDevices::default();
        let text = toml::to_string(&defaults).unwrap();
        assert!(text.contains("endurance_pe_cycles = 3000.0"), "{text}");
        assert_eq!(toml::from_str::<SwapDevices>(&text).unwrap(), defaults);
        // The NVM takes no endurance; flash needs its capacity.
        let nvm_endurance = "[nvm]\nname = \"n\"\nread_ns = 1.0\nwrite_ns = 1.0\nread_nj = 1.0\n\
write_nj = 1.0\nendurance_pe_cycles = 5.0\n";
        assert!(toml::from_str::<SwapDevices>(nvm_endurance).is_err());
        let flash_no_capacity = "[flash]\nname = \"f\"\nread_ns = 1.0\nwrite_ns = 1.0\n\
read_nj = 1.0\nwrite_nj = 1.0\nendurance_pe_cycles = 5.0\n";
        assert!(toml::from_str::<SwapDevices>(flash_no_capacity).is_err());
        let flash = format!("{flash_no_capacity}capacity_gib = 2.0\n");
        let parsed: SwapDevices = toml::from_str(&flash).unwrap();
        assert_eq!(
            parsed.flash.endurance_bytes(),
            2.0 * (1u64 << 30) as f64 * 5.0
        );
        assert_eq!(parsed.nvm, defaults.nvm);
    }
}
