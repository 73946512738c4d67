//! The configuration-file faces of a [`Device`]: each kind of device keeps the keys and
//! units its files have always had, converted to and from the one description on reading
//! and writing. Used as `#[serde(with = "...")]` on the fields that hold devices.
//!
//! Every face has `name`, `read_ns` and `write_ns`, and then:
//! - [`memory`] (`[devices.dram]`, `[devices.pcm]`): `read_nj_per_bit`,
//!   `write_nj_per_bit`, `static_w_per_gib`, and optionally `endurance_writes`;
//! - [`flash`] (`[devices.flash]` of swap): `read_nj`, `write_nj` (per page), and
//!   optionally `endurance_pe_cycles` and `capacity_gib` (without them, its wear and
//!   lifetime are not modelled);
//! - [`nvm`] (`[devices.nvm]` of swap): `read_nj` and `write_nj` only.
//!
//! Any other key is an error. A page is 2^15 bits, so per-bit figures convert exactly
//! both ways. Instead of a table, a device may be named: a built-in device
//! ([`super::registry::DEVICES`]) of the face's role, e.g. `flash = "emmc"`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::{Device, PAGE_BITS};

/// Every key any face has; a face takes some of the optional ones. Written in this
/// order, which is each face's own.
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    name: String,
    read_ns: f64,
    write_ns: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_nj: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    write_nj: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_nj_per_bit: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    write_nj_per_bit: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    static_w_per_gib: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    endurance_writes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    endurance_pe_cycles: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity_gib: Option<f64>,
}

/// Which face: the optional keys it requires and those it also accepts.
#[derive(Clone, Copy, PartialEq)]
enum Face {
    Memory,
    Flash,
    Nvm,
}

impl Face {
    fn required(self) -> &'static [&'static str] {
        match self {
            Face::Memory => &["read_nj_per_bit", "write_nj_per_bit", "static_w_per_gib"],
            Face::Flash => &["read_nj", "write_nj"],
            Face::Nvm => &["read_nj", "write_nj"],
        }
    }

    fn accepts(self, key: &str) -> bool {
        self.required().contains(&key)
            || (self == Face::Memory && key == "endurance_writes")
            || (self == Face::Flash && matches!(key, "endurance_pe_cycles" | "capacity_gib"))
    }
}

impl Keys {
    fn optional(&self) -> [(&'static str, Option<f64>); 8] {
        crate::fields!(
            self; read_nj, write_nj, read_nj_per_bit, write_nj_per_bit, static_w_per_gib,
            endurance_writes, endurance_pe_cycles, capacity_gib
        )
    }

    /// The keys of `device` as written in `face`.
    fn of(device: &Device, face: Face) -> Self {
        let keys = Keys {
            name: device.name.to_string(),
            read_ns: device.read_ns,
            write_ns: device.write_ns,
            ..Keys::default()
        };
        match face {
            Face::Memory => Keys {
                read_nj_per_bit: Some(device.read_nj / PAGE_BITS),
                write_nj_per_bit: Some(device.write_nj / PAGE_BITS),
                static_w_per_gib: Some(device.static_w_per_gib),
                endurance_writes: device.endurance_writes,
                ..keys
            },
            Face::Flash | Face::Nvm => {
                let wear = face == Face::Flash;
                Keys {
                    read_nj: Some(device.read_nj),
                    write_nj: Some(device.write_nj),
                    endurance_pe_cycles: device.endurance_writes.filter(|_| wear),
                    capacity_gib: device.capacity_gib.filter(|_| wear),
                    ..keys
                }
            }
        }
    }

    /// The device these keys describe in `face`; names the first key the face lacks or
    /// does not take.
    fn device(self, face: Face) -> Result<Device, String> {
        for (key, value) in self.optional() {
            if value.is_some() && !face.accepts(key) {
                return Err(format!("unknown field `{key}` for this device"));
            }
            if value.is_none() && face.required().contains(&key) {
                return Err(format!("missing field `{key}`"));
            }
        }
        let per_bit = |v: Option<f64>| v.map(|nj| nj * PAGE_BITS);
        Ok(Device {
            name: Cow::Owned(self.name),
            read_ns: self.read_ns,
            write_ns: self.write_ns,
            read_nj: self
                .read_nj
                .or(per_bit(self.read_nj_per_bit))
                .unwrap_or(0.0),
            write_nj: self
                .write_nj
                .or(per_bit(self.write_nj_per_bit))
                .unwrap_or(0.0),
            static_w_per_gib: self.static_w_per_gib.unwrap_or(0.0),
            endurance_writes: self.endurance_writes.or(self.endurance_pe_cycles),
            capacity_gib: self.capacity_gib,
        })
    }
}

impl Face {
    /// The role a built-in device must have to be given by name in this face.
    fn role(self) -> super::registry::DeviceRole {
        use super::registry::DeviceRole;
        match self {
            Face::Memory => DeviceRole::Memory,
            Face::Flash => DeviceRole::Flash,
            Face::Nvm => DeviceRole::Nvm,
        }
    }

    /// The built-in device called `name`, if it may fill this face.
    fn named(self, name: &str) -> Result<Device, String> {
        let profile = super::registry::find_device(name).map_err(|e| e.to_string())?;
        if profile.role != self.role() {
            return Err(format!(
                "device {name} is a {} device, not a {} one",
                profile.role.name(),
                self.role().name()
            ));
        }
        Ok((profile.device)())
    }
}

/// Reads a device in one face: a built-in device's name, or a table of its keys.
struct FaceVisitor(Face);

impl<'de> serde::de::Visitor<'de> for FaceVisitor {
    type Value = Device;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a built-in device's name or a table of a device's figures")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Device, E> {
        self.0.named(name).map_err(E::custom)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Device, A::Error> {
        use serde::de::Error;
        let keys = Keys::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        keys.device(self.0).map_err(A::Error::custom)
    }
}

/// A module for `#[serde(with = ...)]` reading and writing a device in one face.
macro_rules! face {
    ($(#[$doc:meta])* $module:ident, $face:expr) => {
        $(#[$doc])*
        pub mod $module {
            use serde::{Deserializer, Serialize, Serializer};

            use super::{Device, Face, FaceVisitor, Keys};

            pub fn serialize<S: Serializer>(device: &Device, s: S) -> Result<S::Ok, S::Error> {
                Keys::of(device, $face).serialize(s)
            }

            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Device, D::Error> {
                d.deserialize_any(FaceVisitor($face))
            }
        }
    };
}

face!(
    /// DRAM and PCM: energies per bit, static power, endurance in writes.
    memory,
    Face::Memory
);
face!(
    /// Swap flash: energies per page, endurance in P/E cycles over the whole capacity.
    flash,
    Face::Flash
);
face!(
    /// Swap NVM: latencies and energies per page.
    nvm,
    Face::Nvm
);

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
        let written = toml::to_string(&Devices::default()).unwrap();
        assert_eq!(written, text.replace("= 1e8", "= 100000000.0"));
        assert!(toml::from_str::<Devices>(&text.replace("read_nj_per_bit", "read_nj")).is_err());
        assert!(toml::from_str::<Devices>(&text.replace("name = \"PCM\"\n", "")).is_err());
    }

    #[test]
    fn swap_keys_keep_each_kind_s_fields() {
        let defaults = SwapDevices::default();
        let text = toml::to_string(&defaults).unwrap();
        assert!(text.contains("endurance_pe_cycles = 3000.0"), "{text}");
        assert_eq!(toml::from_str::<SwapDevices>(&text).unwrap(), defaults);
        // The NVM takes no endurance; flash may leave its wear out (eMMC as swap).
        let nvm_endurance = "[nvm]\nname = \"n\"\nread_ns = 1.0\nwrite_ns = 1.0\nread_nj = 1.0\n\
write_nj = 1.0\nendurance_pe_cycles = 5.0\n";
        let message = toml::from_str::<SwapDevices>(nvm_endurance)
            .unwrap_err()
            .to_string();
        assert!(message.contains("endurance_pe_cycles"), "{message}");
        let flash_no_capacity = "[flash]\nname = \"f\"\nread_ns = 1.0\nwrite_ns = 1.0\n\
read_nj = 1.0\nwrite_nj = 1.0\nendurance_pe_cycles = 5.0\n";
        let no_capacity = toml::from_str::<SwapDevices>(flash_no_capacity).unwrap();
        assert_eq!(
            no_capacity.flash.endurance_bytes(),
            0.0,
            "no capacity, no wear"
        );
        let emmc = SwapDevices {
            flash: crate::devices::EMMC,
            ..SwapDevices::default()
        };
        let text = toml::to_string(&emmc).unwrap();
        assert_eq!(
            toml::from_str::<SwapDevices>(&text).unwrap(),
            emmc,
            "{text}"
        );
        let flash = format!("{flash_no_capacity}capacity_gib = 2.0\n");
        let parsed: SwapDevices = toml::from_str(&flash).unwrap();
        assert_eq!(
            parsed.flash.endurance_bytes(),
            2.0 * (1u64 << 30) as f64 * 5.0
        );
        assert_eq!(parsed.nvm, defaults.nvm);
    }

    #[test]
    fn a_device_may_be_named_by_its_profile() {
        let named: SwapDevices = toml::from_str("flash = \"emmc\"\nnvm = \"emram\"\n").unwrap();
        assert_eq!(named.flash, crate::devices::EMMC);
        assert_eq!(named.nvm, crate::devices::EMRAM);
        let e = toml::from_str::<SwapDevices>("flash = \"optane\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown device") || e.contains("ufs2.1"), "{e}");
        let e = toml::from_str::<SwapDevices>("nvm = \"emmc\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("flash device, not a nvm one"), "{e}");
        let e = toml::from_str::<Devices>("dram = \"ufs2.1\"\npcm = \"PCM\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a memory one"), "{e}");
    }
}
