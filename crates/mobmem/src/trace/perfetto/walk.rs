//! Protobuf messages read field by field from borrowed bytes: nothing is copied or
//! allocated, so a packet costs the bytes it holds, not the structures a full decode
//! would build of them (a vector per two-byte element).

use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};

/// A field's value, as its wire type gives it.
#[derive(Clone, Copy)]
pub(super) enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    /// A fixed-size or group field, skipped.
    Other,
}

/// The fields of a message in order, as (number, value); a fault ends the walk with an
/// error saying what it was.
#[derive(Clone)]
pub(super) struct Fields<'a> {
    buf: &'a [u8],
}

pub(super) fn fields(msg: &[u8]) -> Fields<'_> {
    Fields { buf: msg }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty() {
            return None;
        }
        let field = self.field();
        if field.is_err() {
            self.buf = &[];
        }
        Some(field)
    }
}

impl<'a> Fields<'a> {
    fn field(&mut self) -> Result<(u32, Value<'a>), String> {
        let (number, wire) = decode_key(&mut self.buf).map_err(|e| e.to_string())?;
        let value = match wire {
            WireType::Varint => {
                Value::Varint(decode_varint(&mut self.buf).map_err(|e| e.to_string())?)
            }
            WireType::LengthDelimited => {
                let len = decode_varint(&mut self.buf).map_err(|e| e.to_string())?;
                let len = usize::try_from(len)
                    .ok()
                    .filter(|&l| l <= self.buf.len())
                    .ok_or_else(|| {
                        format!(
                            "field {number} claims {len} bytes, {} are left",
                            self.buf.len()
                        )
                    })?;
                let (bytes, rest) = self.buf.split_at(len);
                self.buf = rest;
                Value::Bytes(bytes)
            }
            _ => {
                skip_field(wire, number, &mut self.buf, DecodeContext::default())
                    .map_err(|e| e.to_string())?;
                Value::Other
            }
        };
        Ok((number, value))
    }
}

/// The values of field `number` of a message already checked.
pub(super) fn values(msg: &[u8], number: u32) -> impl Iterator<Item = Value<'_>> + Clone {
    fields(msg)
        .map_while(Result::ok)
        .filter(move |&(n, _)| n == number)
        .map(|(_, v)| v)
}

/// The length-delimited values of field `number` (messages, strings, bytes).
pub(super) fn bytes(msg: &[u8], number: u32) -> impl Iterator<Item = &[u8]> + Clone {
    values(msg, number).filter_map(|v| match v {
        Value::Bytes(b) => Some(b),
        _ => None,
    })
}

/// The last value of a varint field (protobuf's rule for a field given twice).
pub(super) fn last_varint(msg: &[u8], number: u32) -> Option<u64> {
    values(msg, number)
        .filter_map(|v| match v {
            Value::Varint(v) => Some(v),
            _ => None,
        })
        .last()
}

/// The elements of a repeated varint field, packed or not.
pub(super) fn varints(msg: &[u8], number: u32) -> impl Iterator<Item = u64> + Clone + '_ {
    values(msg, number).flat_map(|v| {
        let (one, packed) = match v {
            Value::Varint(v) => (Some(v), &[][..]),
            Value::Bytes(b) => (None, b),
            Value::Other => (None, &[][..]),
        };
        one.into_iter().chain(Packed { buf: packed })
    })
}

/// The varints of a packed field.
#[derive(Clone)]
struct Packed<'a> {
    buf: &'a [u8],
}

impl Iterator for Packed<'_> {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.buf.is_empty() {
            return None;
        }
        decode_varint(&mut self.buf).ok()
    }
}

/// What a message's field must be.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Varint,
    Bytes,
    /// A repeated varint field: a varint, or packed.
    Varints,
}

/// Check that `msg` is protobuf and that each of its fields listed in `known` has the
/// wire type its kind takes; `inner` checks the bytes of a known length-delimited field
/// (a message within).
pub(super) fn check(
    msg: &[u8],
    what: &str,
    known: &[(u32, Kind)],
    mut inner: impl FnMut(u32, &[u8]) -> Result<(), String>,
) -> Result<(), String> {
    for field in fields(msg) {
        let (number, value) = field.map_err(|e| format!("{what}: {e}"))?;
        let Some(&(_, kind)) = known.iter().find(|(n, _)| *n == number) else {
            continue;
        };
        match (kind, value) {
            (Kind::Varint | Kind::Varints, Value::Varint(_)) => {}
            (Kind::Bytes, Value::Bytes(b)) => inner(number, b)?,
            (Kind::Varints, Value::Bytes(mut b)) => {
                while !b.is_empty() {
                    decode_varint(&mut b)
                        .map_err(|e| format!("{what}.{number}: packed varints: {e}"))?;
                }
            }
            _ => return Err(format!("{what}.{number}: the wrong wire type")),
        }
    }
    Ok(())
}
