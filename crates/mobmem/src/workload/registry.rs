//! Every workload preset, in one list: what `mobmem gen` lists, shows and generates.
//!
//! A preset is either one config of the app model ([`WorkloadConfig`], the buffer-cache
//! traces in `presets.rs`), or the defaults of a model of its own (`app_cycling.rs`,
//! `gallery_usb.rs`). Adding one: its config or model in a file of this folder, then one
//! entry in [`PRESETS`].

use serde::de::DeserializeOwned;

use super::app_cycling::AppCyclingConfig;
use super::gallery_usb::GalleryUsbConfig;
use super::phone::PhoneWorkload;
use super::{presets, WorkloadConfig};
use crate::config_file::Echo;
use crate::core::registry::Registry;
use crate::trace::Trace;
use crate::{Error, Result};

/// A workload model's parameters, whatever the model: what `gen` does with them. Each
/// model implements it beside its generator.
pub trait Params: ToToml {
    /// Check every parameter; the error names the first one out of range.
    fn validate(&self) -> Result<()>;
    /// Multiply the trace's length by `factor` (finite and > 0).
    fn scale(&mut self, factor: f64);
    /// Leave the background load out; `false` when the model has none to leave out.
    fn drop_background(&mut self) -> bool {
        false
    }
    /// The trace for `seed`: the same parameters and seed give the same trace on every
    /// machine.
    fn generate(&self, seed: u64) -> Result<Trace>;
}

/// Parameters as TOML, to save, edit and read back: every serializable config has it.
pub trait ToToml {
    fn to_toml(&self) -> Result<String>;
}

impl<T: serde::Serialize> ToToml for T {
    fn to_toml(&self) -> Result<String> {
        super::config_to_toml(self)
    }
}

/// `count` times `factor`, rounded, at least 1: a model's length scaled.
pub(super) fn scaled_count(count: u32, factor: f64) -> u32 {
    ((count as f64 * factor).round() as u32).max(1)
}

/// What a preset is made of.
pub enum Model {
    /// One config of the app model. A config file of that model stands for a whole
    /// preset, so it is given alone (`gen --config FILE`).
    Apps(fn() -> WorkloadConfig),
    /// The defaults of a model of its own. A config file sets some of its parameters,
    /// the rest keep their defaults (`gen NAME --config FILE`).
    Own {
        defaults: fn() -> Box<dyn Params>,
        parse: fn(&str, &str) -> Result<Box<dyn Params>>,
    },
}

crate::registry_entry! {
    /// A registered preset; its summary says what it models and which paper's
    /// experiment it stands in for.
    pub struct Preset {
        /// The page describing its model and every parameter.
        pub doc: &'static str,
        pub model: Model,
    }
}

/// The entry of a model of its own whose defaults are `T::default()`.
const fn own<T: Params + Default + DeserializeOwned + 'static>() -> Model {
    Model::Own {
        defaults: boxed_default::<T>,
        parse: parse_boxed::<T>,
    }
}

fn boxed_default<T: Params + Default + 'static>() -> Box<dyn Params> {
    Box::new(T::default())
}

fn parse_boxed<T: Params + DeserializeOwned + 'static>(
    text: &str,
    origin: &str,
) -> Result<Box<dyn Params>> {
    Ok(Box::new(parse::<T>(text, origin, Echo::Quote)?))
}

/// Parse and validate parameters from TOML `text`; `origin` names it in errors, which
/// give the line and column (unknown keys are errors), or the key out of its range.
pub(super) fn parse<T: Params + DeserializeOwned>(
    text: &str,
    origin: &str,
    echo: Echo,
) -> Result<T> {
    let params: T = crate::config_file::from_toml(text, origin, echo)?;
    params
        .validate()
        .map_err(|e| Error::config(origin, e.to_string()))?;
    Ok(params)
}

/// Every preset: the buffer-cache paper's two traces, then the multi-swap and
/// page-protection workloads, then the composed phone's.
pub static PRESETS: Registry<Preset> = Registry::new(
    "workload preset",
    &[
        Preset {
            name: "chrome-push",
            summary: "Chrome browsing site after site, Hangouts and Gmail woken by pushes \
                      (trace 1 of Oh, Kang, Lee, Eom, KIISE 2015)",
            doc: "docs/workloads.md",
            model: Model::Apps(presets::chrome_push),
        },
        Preset {
            name: "app-switching",
            summary: "ten apps used in turn in short sessions, music playing in the \
                      background (trace 2 of Oh, Kang, Lee, Eom, KIISE 2015)",
            doc: "docs/workloads.md",
            model: Model::Apps(presets::app_switching),
        },
        Preset {
            name: "app-cycling",
            summary: "the multi-swap workload: 20 apps launched in rounds (Bahn, Kim, JIIBC 2023)",
            doc: "docs/swap.md",
            model: own::<AppCyclingConfig>(),
        },
        Preset {
            name: "gallery-usb",
            summary: "the page-protection workload: Gallery browsing + USB transfer, \
                      --no-background leaves the transfer out (FMP; Kim, SNU 2016)",
            doc: "docs/reclaim.md",
            model: own::<GalleryUsbConfig>(),
        },
        Preset {
            name: "phone",
            summary: "the composed phone's day: apps switched by popularity with launches, \
                      interactions, media reads, shared framework memory and background \
                      services; --no-background leaves the services out",
            doc: "docs/phone.md",
            model: own::<PhoneWorkload>(),
        },
    ],
);

impl Preset {
    /// The preset's parameters.
    pub fn params(&self) -> Box<dyn Params> {
        match self.model {
            Model::Apps(config) => Box::new(config()),
            Model::Own { defaults, .. } => defaults(),
        }
    }

    /// Its parameters from the config file `path`. Only a preset with a model of its
    /// own takes one: a config of the app model stands for a preset itself
    /// ([`super::load_config`]).
    pub fn load(&self, path: &std::path::Path) -> Result<Box<dyn Params>> {
        match self.model {
            Model::Own { parse, .. } => {
                let text = crate::config_file::read(path)?;
                parse(&text, &path.display().to_string())
            }
            Model::Apps(_) => Err(Error::config(
                format!("preset {}", self.name),
                format!(
                    "is one config of the app model, which a --config file replaces whole: \
                     give --config FILE alone (see --show {}); presets that take --config \
                     beside their name: {}",
                    self.name,
                    own_models().collect::<Vec<_>>().join(", ")
                ),
            )),
        }
    }

    /// Its parameters as commented TOML: to save, edit and pass back with `--config`.
    pub fn show(&self) -> Result<String> {
        let usage = match self.model {
            Model::Apps(_) => "mobmem gen --config FILE --out TRACE".to_string(),
            Model::Own { .. } => format!("mobmem gen {} --config FILE --out TRACE", self.name),
        };
        Ok(format!(
            "# The {} workload ({}). Edit, then:\n#   {usage}\n{}",
            self.name,
            self.doc,
            self.params().to_toml()?
        ))
    }
}

/// Names of the presets with a model of their own.
fn own_models() -> impl Iterator<Item = &'static str> {
    PRESETS
        .into_iter()
        .filter(|p| matches!(p.model, Model::Own { .. }))
        .map(|p| p.name)
}

/// The preset called `name`; an unknown name lists the known ones.
pub fn find_preset(name: &str) -> Result<&'static Preset> {
    PRESETS.find(name)
}

/// How `gen` changes the parameters before generating.
#[derive(Debug, Clone, Default)]
pub struct GenOptions {
    pub seed: u64,
    /// Multiply the trace's length.
    pub scale: Option<f64>,
    /// Leave the background load out (for the models that have one to leave out).
    pub no_background: bool,
}

/// The trace of `params` changed by `options`.
pub fn generate_with(params: &mut dyn Params, options: &GenOptions) -> Result<Trace> {
    if options.no_background && !params.drop_background() {
        let with: Vec<_> = PRESETS
            .into_iter()
            .filter(|p| p.params().drop_background())
            .map(|p| p.name)
            .collect();
        return Err(Error::config(
            "generate",
            format!("--no-background applies to {} only", with.join(", ")),
        ));
    }
    if let Some(scale) = options.scale {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::config(
                "generate",
                format!("scale {scale} must be > 0"),
            ));
        }
        params.scale(scale);
    }
    params.generate(options.seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_shows_parameters_that_read_back() {
        for preset in PRESETS {
            let shown = preset.show().unwrap();
            assert!(shown.starts_with(&format!("# The {} workload", preset.name)));
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("p.toml");
            std::fs::write(&path, shown).unwrap();
            let back: Box<dyn Params> = match preset.model {
                Model::Apps(_) => {
                    Box::new(crate::workload::load_config(&path, Echo::Quote).unwrap())
                }
                Model::Own { .. } => preset.load(&path).unwrap(),
            };
            assert_eq!(back.to_toml().unwrap(), preset.params().to_toml().unwrap());
        }
        assert_eq!(
            own_models().collect::<Vec<_>>(),
            ["app-cycling", "gallery-usb", "phone"]
        );
    }

    #[test]
    fn options_are_checked() {
        let mut params = find_preset("app-cycling").unwrap().params();
        let err = |options: GenOptions, params: &mut dyn Params| {
            generate_with(params, &options).unwrap_err().to_string()
        };
        let no_background = GenOptions {
            no_background: true,
            ..Default::default()
        };
        assert!(err(no_background, params.as_mut()).contains("gallery-usb"));
        let zero = GenOptions {
            scale: Some(0.0),
            ..Default::default()
        };
        assert!(err(zero, params.as_mut()).contains("scale 0 must be > 0"));
        let e = find_preset("chrome-push")
            .unwrap()
            .load(std::path::Path::new("no-such-file.toml"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("--config") && e.contains("app-cycling"), "{e}");
    }
}
