//! One kind of list for every mechanism kind: the placement policies, the reclaim
//! policies, the swap architectures, the workload presets and the reproductions are each
//! a [`Registry`] of entries looked up by name. Adding one is its file plus one entry.

use crate::{Error, Result};

/// An entry of a registry: a name to look it up by and a one-line summary.
pub trait Named {
    fn name(&self) -> &'static str;
    /// One line: what it does and where it comes from.
    fn summary(&self) -> &'static str;
}

/// Declare the entry type of a registry: a struct whose `name` and `summary` fields come
/// first, followed by the fields given, with [`Named`] and a short `Debug` (the name)
/// implemented for it.
///
/// ```ignore
/// registry_entry! {
///     /// A built-in cost model.
///     pub struct CostProfile {
///         pub model: fn() -> CostModel,
///     }
/// }
/// ```
#[macro_export]
macro_rules! registry_entry {
    (
        $(#[$attr:meta])*
        $vis:vis struct $type:ident {
            $($(#[$field_attr:meta])* $field_vis:vis $field:ident: $field_type:ty),* $(,)?
        }
    ) => {
        $(#[$attr])*
        $vis struct $type {
            /// The name users give, and the registry finds it by.
            pub name: &'static str,
            /// One line: what it does and where it comes from.
            pub summary: &'static str,
            $($(#[$field_attr])* $field_vis $field: $field_type,)*
        }

        impl $crate::core::registry::Named for $type {
            fn name(&self) -> &'static str {
                self.name
            }
            fn summary(&self) -> &'static str {
                self.summary
            }
        }

        impl std::fmt::Debug for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($type))
                    .field("name", &self.name)
                    .finish()
            }
        }
    };
}

/// A fixed list of entries of one kind, in the order they are listed to users. It reads
/// as a slice (`iter`, `len`, indexing) and is iterated by value in `for` loops.
pub struct Registry<T: 'static> {
    /// What an entry is, for errors ("policy", "swap architecture").
    what: &'static str,
    entries: &'static [T],
}

impl<T> Registry<T> {
    pub const fn new(what: &'static str, entries: &'static [T]) -> Self {
        Registry { what, entries }
    }
}

impl<T: Named> Registry<T> {
    /// The entry called `name`; an unknown name is an error listing the known ones.
    pub fn find(&self, name: &str) -> Result<&'static T> {
        self.entries
            .iter()
            .find(|e| e.name() == name)
            .ok_or_else(|| self.unknown(name, &[]))
    }

    /// The entries' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        self.entries.iter().map(Named::name)
    }

    /// The error for an unknown `name`: it lists the known names, then `also` (names a
    /// caller accepts besides the entries, such as `all`).
    pub fn unknown(&self, name: &str, also: &[&str]) -> Error {
        Error::Unknown {
            what: self.what,
            name: name.to_string(),
            known: self
                .names()
                .map(str::to_string)
                .chain(also.iter().map(|n| n.to_string()))
                .collect(),
        }
    }
}

impl<T> Clone for Registry<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Registry<T> {}

impl<T> std::ops::Deref for Registry<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.entries
    }
}

impl<T> IntoIterator for Registry<T> {
    type Item = &'static T;
    type IntoIter = std::slice::Iter<'static, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

impl<T> std::fmt::Debug for Registry<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Registry of {} {} entries",
            self.entries.len(),
            self.what
        )
    }
}

/// Of a fixed set of choices (an enum's variants), the one whose name is `name`; an
/// unknown name is an error listing the names. For choices that are values, not
/// registry entries (codecs, read paths).
pub fn choose<T: Copy>(
    what: &'static str,
    all: &[T],
    name_of: impl Fn(T) -> &'static str,
    name: &str,
) -> Result<T> {
    all.iter()
        .copied()
        .find(|&choice| name_of(choice) == name)
        .ok_or_else(|| Error::Unknown {
            what,
            name: name.to_string(),
            known: all.iter().map(|&c| name_of(c).to_string()).collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::registry_entry! {
        struct Entry {}
    }

    static ENTRIES: Registry<Entry> = Registry::new(
        "thing",
        &[
            Entry {
                name: "a",
                summary: "the first",
            },
            Entry {
                name: "b",
                summary: "the second",
            },
        ],
    );

    #[test]
    fn finds_by_name_and_lists_the_known_names() {
        assert_eq!(ENTRIES.find("b").unwrap().summary(), "the second");
        assert_eq!(ENTRIES.names().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(ENTRIES.len(), 2);
        assert_eq!(ENTRIES.into_iter().count(), 2);
        assert_eq!(
            ENTRIES.find("c").unwrap_err().to_string(),
            "unknown thing 'c' (known: a, b)"
        );
        assert_eq!(
            ENTRIES.unknown("c", &["all"]).to_string(),
            "unknown thing 'c' (known: a, b, all)"
        );
        assert_eq!(format!("{:?}", ENTRIES[0]), "Entry { name: \"a\" }");
    }

    #[test]
    fn chooses_among_values_by_name() {
        let name = |n: u8| ["zero", "one"][n as usize];
        assert_eq!(choose("digit", &[0, 1], name, "one").unwrap(), 1);
        assert_eq!(
            choose("digit", &[0, 1], name, "two")
                .unwrap_err()
                .to_string(),
            "unknown digit 'two' (known: zero, one)"
        );
    }
}
