//! A fake's own settings: what one fake does beyond the faults every fake applies
//! ([`FakeConfig`](crate::config::FakeConfig)) — OpenBesluitvorming's limit, Open
//! Raadsinformatie's retired shapes, OpenTK's busy searches, Officiële Bekendmakingen's
//! overload signal.
//!
//! Where they live: each fake declares its own in its module, as a type with
//! [`OwnSettings`] whose `Default` is the healthy real platform
//! ([`ObvSettings`](crate::ObvSettings), [`ObSettings`](crate::ObSettings),
//! [`OriSettings`](crate::OriSettings), [`OpenTkSettings`](crate::OpenTkSettings); `()` for
//! a fake with none), and its registry line names that type (through the fake's
//! `FakePlatform::Own`, see `fake.rs`). From there they travel:
//! - with the fake's shared state: [`Settings`](crate::shared::Settings) holds the common
//!   configuration and the fake's own settings under one lock, the own ones with their
//!   type erased; the fake reads them typed through its
//!   [`Shared<S>`](crate::shared::Shared);
//! - through its handle, typed by the caller:
//!   [`FakeHandle::update_own`](crate::FakeHandle::update_own) and
//!   [`FakeHandle::own`](crate::FakeHandle::own);
//! - in text (`ori:retired=html`): [`OwnSettings::parse`] turns one `NAME=VALUE` into an
//!   [`OwnChange`], carried type-erased as an [`OwnSetting`] until it is applied.
//!
//! Invariants:
//! - A fake's own settings are made once, as `S::default()`, for the `S` its registry line
//!   names, and a [`Shared<S>`](crate::shared::Shared) is made only together with them:
//!   the fake's own reads cannot find another type.
//! - An [`OwnSetting`] changes only settings of the type it was parsed for.
//!
//! What this module does not do: know any fake or any setting's name (each fake does),
//! hold a running fake's settings (`shared.rs`), know the faults every fake applies
//! (`config.rs`, which sits above this module), or apply faults (`faults.rs`).

use std::any::{Any, type_name};
use std::fmt;
use std::sync::Arc;

use crate::setting_text::FaultParseError;

/// The settings one fake has of its own, declared in that fake's module.
///
/// `Default` is the healthy real platform. The textual form (`PLATFORM:NAME=VALUE`, as
/// `besluitbron-sim fakes --fault` and the control route take it) reaches them through
/// [`OwnSettings::NAMES`] and [`OwnSettings::parse`]; the common names
/// ([`FaultSetting::NAMES`](crate::FaultSetting::NAMES)) are never a fake's own.
pub trait OwnSettings: Clone + Default + fmt::Debug + Send + 'static {
    /// Every `NAME` the textual form takes for these settings, in the order the fake
    /// documents them; none unless the fake says so (its settings are then reached
    /// through [`FakeHandle::update_own`](crate::FakeHandle::update_own) only).
    const NAMES: &'static [&'static str] = &[];

    /// The change `NAME=VALUE` makes; `None` when `name` is not one of [`OwnSettings::NAMES`].
    fn parse(name: &str, value: &str) -> Option<Result<OwnChange<Self>, FaultParseError>> {
        let _ = (name, value);
        None
    }
}

/// A fake with nothing of its own.
impl OwnSettings for () {}

/// A parsed change to a fake's own settings `S` ([`OwnSettings::parse`]).
pub struct OwnChange<S>(Box<dyn Fn(&mut S) + Send + Sync>);

impl<S> OwnChange<S> {
    /// The change `change` makes (it may be applied more than once, always alike).
    pub fn new(change: impl Fn(&mut S) + Send + Sync + 'static) -> OwnChange<S> {
        OwnChange(Box::new(change))
    }
}

/// One of a fake's own settings, parsed from `NAME=VALUE` by that fake
/// ([`OwnSettings::parse`]), with the type of the settings it changes erased so that it
/// travels in a [`PlatformFault`](crate::PlatformFault) next to the common ones.
///
/// Two are equal when they are the same `NAME=VALUE` for the same settings type.
#[derive(Clone)]
pub struct OwnSetting {
    /// `NAME=VALUE` as it was parsed.
    text: String,
    /// The type of the settings it changes.
    settings_type: &'static str,
    change: Arc<ErasedChange>,
}

/// An [`OwnChange`] with its settings' type erased: applies the change to settings of that
/// type, and answers `false` (nothing changed) for any other.
type ErasedChange = dyn Fn(&mut dyn Any) -> bool + Send + Sync;

impl OwnSetting {
    /// Applies the change to `own`, a running fake's own settings, whose type is named
    /// `own_type`.
    ///
    /// Panics when `own` is not of the type this setting was parsed for: a
    /// [`PlatformFault`](crate::PlatformFault) applied to a fake of another platform is a
    /// bug of the caller.
    pub(crate) fn apply_to(&self, own: &mut dyn Any, own_type: &str) {
        assert!(
            (self.change)(own),
            "`{}` is a setting of `{}`, not of `{}`",
            self.text,
            self.settings_type,
            own_type
        );
    }

    /// Parses `name=value` as one of the own settings `S`; `None` when `S` has no setting
    /// called `name`.
    pub(crate) fn parse<S: OwnSettings>(name: &str, value: &str) -> Option<Result<OwnSetting, FaultParseError>> {
        let change = match S::parse(name, value)? {
            Ok(change) => change,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(OwnSetting {
            text: format!("{name}={value}"),
            settings_type: type_name::<S>(),
            change: Arc::new(move |own: &mut dyn Any| match own.downcast_mut::<S>() {
                Some(own) => {
                    (change.0)(own);
                    true
                }
                None => false,
            }),
        }))
    }
}

impl fmt::Debug for OwnSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OwnSetting").field(&self.text).finish()
    }
}

impl PartialEq for OwnSetting {
    fn eq(&self, other: &OwnSetting) -> bool {
        self.text == other.text && self.settings_type == other.settings_type
    }
}

impl Eq for OwnSetting {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FakeConfig, FakeSetting, FaultSetting};
    use crate::shared::Shared;

    #[derive(Clone, Debug, Default, PartialEq)]
    struct Dial {
        level: u32,
    }

    impl OwnSettings for Dial {
        const NAMES: &'static [&'static str] = &["level"];

        fn parse(name: &str, value: &str) -> Option<Result<OwnChange<Dial>, FaultParseError>> {
            match name {
                "level" => Some(crate::setting_text::every(name, value).map(|n| {
                    let level = n.unwrap_or(0);
                    OwnChange::new(move |d: &mut Dial| d.level = level)
                })),
                _ => None,
            }
        }
    }

    #[test]
    fn an_own_setting_applies_to_its_own_type_under_the_common_lock() {
        let shared = Shared::<Dial>::new(FakeConfig::default());
        let level = OwnSetting::parse::<Dial>("level", "3").unwrap().unwrap();
        assert_eq!(level, OwnSetting::parse::<Dial>("level", "3").unwrap().unwrap());
        assert_ne!(level, OwnSetting::parse::<Dial>("level", "4").unwrap().unwrap());
        assert!(OwnSetting::parse::<Dial>("volume", "3").is_none());
        assert!(OwnSetting::parse::<Dial>("level", "high").unwrap().is_err());
        shared.apply([
            &FakeSetting::Own(level),
            &FakeSetting::Common(FaultSetting::Garbage(true)),
        ]);
        let (common, own) = shared.snapshot();
        assert_eq!(own, Dial { level: 3 });
        assert!(common.garbage);
        assert_eq!(shared.own(), Dial { level: 3 });
    }

    #[test]
    #[should_panic(expected = "is a setting of")]
    fn another_fakes_own_setting_is_refused_loudly() {
        let shared = Shared::<()>::new(FakeConfig::default());
        let level = OwnSetting::parse::<Dial>("level", "3").unwrap().unwrap();
        shared.apply([&FakeSetting::Own(level)]);
    }
}
