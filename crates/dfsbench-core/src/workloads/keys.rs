//! The keys of an options struct, read from its `Deserialize` impl, so the lists of which key
//! belongs to which workload are never written by hand.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// The field names of struct `T` (its serde names: the workload-file keys).
pub(crate) fn field_names<T: for<'de> Deserialize<'de> + 'static>() -> &'static [&'static str] {
    static CACHE: OnceLock<Mutex<HashMap<std::any::TypeId, &'static [&'static str]>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = std::any::TypeId::of::<T>();
    if let Some(names) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return names;
    }
    let mut names: &'static [&'static str] = &[];
    // The derived impl names its fields to `deserialize_struct`, then fails on our error.
    let _ = T::deserialize(Fields(&mut names));
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(id, names);
    names
}

/// Struct `T` from the entries of `table` whose keys are its fields. An error names the key
/// whose value is wrong: "`workers`: invalid type: string \"x\", expected usize".
pub(crate) fn from_keys<T: for<'de> Deserialize<'de> + 'static>(table: &toml::Table) -> Result<T, String> {
    let keys = field_names::<T>();
    let mine = |only: Option<&str>| -> toml::Table {
        table
            .iter()
            .filter(|(k, _)| keys.contains(&k.as_str()) && only.is_none_or(|o| o == k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    mine(None).try_into().map_err(|e: toml::de::Error| {
        let bad = keys.iter().find(|k| mine(Some(k)).try_into::<T>().is_err());
        match bad {
            Some(k) => format!("`{k}`: {}", e.message()),
            None => e.message().to_string(),
        }
    })
}

struct Fields<'a>(&'a mut &'static [&'static str]);

#[derive(Debug)]
struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field names read")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Stop
    }
}

impl<'de> Deserializer<'de> for Fields<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = fields;
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Two {
        alpha: Option<u32>,
        #[serde(rename = "beta_key")]
        beta: bool,
    }

    #[test]
    fn names_come_from_the_derive() {
        assert_eq!(field_names::<Two>(), &["alpha", "beta_key"]);
    }
}
