//! The serializer that walks the model for [`super::find`]: each `Serialize` call moves along the path
//! (a field, an index, `Some`, a tuple element, a variant), and a `Loc` or a block records a place.

use super::{Finder, Holder, Next, Shape, Step};
use serde::ser::{self, Serialize};
use std::fmt;

/// Never returned by the walk itself; serde requires an error type.
#[derive(Debug)]
pub struct Stop(String);

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Stop(msg.to_string())
    }
}

macro_rules! nothing {
    ($($name:ident: $t:ty),*) => {$(
        fn $name(self, _: $t) -> Result<(), Stop> {
            self.next = Next::Value;
            Ok(())
        }
    )*};
}

impl<'a, 'w> ser::Serializer for &'a mut Finder<'w> {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Seq<'a, 'w>;
    type SerializeTuple = Seq<'a, 'w>;
    type SerializeTupleStruct = Seq<'a, 'w>;
    type SerializeTupleVariant = Seq<'a, 'w>;
    type SerializeMap = Seq<'a, 'w>;
    type SerializeStruct = Seq<'a, 'w>;
    type SerializeStructVariant = Seq<'a, 'w>;

    nothing!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u64: u64,
        serialize_f32: f32, serialize_f64: f64, serialize_char: char, serialize_bytes: &[u8],
        serialize_unit_struct: &'static str);

    fn serialize_u32(self, v: u32) -> Result<(), Stop> {
        if self.next == Next::Loc {
            let holder = if self.path.last() == Some(&Step::SpannedLoc) {
                Holder::Spanned
            } else {
                Holder::Bare
            };
            self.record(v, holder);
        }
        self.next = Next::Value;
        Ok(())
    }
    fn serialize_str(self, _: &str) -> Result<(), Stop> {
        self.next = Next::Value;
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Stop> {
        self.next = Next::Value;
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Stop> {
        self.inside(Step::Some, value)
    }
    fn serialize_unit(self) -> Result<(), Stop> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Stop> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        if name == "Loc" {
            self.next = Next::Loc;
            return value.serialize(self);
        }
        self.inside(Step::Elem(0), value)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        ty: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        let step = Step::Variant {
            ty,
            variant,
            shape: Shape::Newtype,
        };
        self.inside(step, value)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'a, 'w>, Stop> {
        Ok(Seq::new(self, Kind::List))
    }
    fn serialize_tuple(self, _: usize) -> Result<Seq<'a, 'w>, Stop> {
        Ok(Seq::new(self, Kind::Tuple))
    }
    fn serialize_tuple_struct(self, name: &'static str, _: usize) -> Result<Seq<'a, 'w>, Stop> {
        let kind = match name {
            "Spanned" => Kind::Spanned,
            "Block" => Kind::Block,
            _ => Kind::Tuple,
        };
        Ok(Seq::new(self, kind))
    }
    fn serialize_tuple_variant(
        self,
        ty: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Seq<'a, 'w>, Stop> {
        self.path.push(Step::Variant {
            ty,
            variant,
            shape: Shape::Tuple,
        });
        Ok(Seq::new(self, Kind::Variant))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Seq<'a, 'w>, Stop> {
        Ok(Seq::new(self, Kind::Map))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Seq<'a, 'w>, Stop> {
        Ok(Seq::new(self, Kind::Struct))
    }
    fn serialize_struct_variant(
        self,
        ty: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Seq<'a, 'w>, Stop> {
        self.path.push(Step::Variant {
            ty,
            variant,
            shape: Shape::Struct,
        });
        Ok(Seq::new(self, Kind::Variant))
    }
}

/// What a compound value is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    List,
    Tuple,
    Spanned,
    Block,
    Map,
    Struct,
    /// A tuple or struct variant (its step is on the path until the end).
    Variant,
}

/// A compound value being walked: its elements, counted.
pub struct Seq<'a, 'w> {
    finder: &'a mut Finder<'w>,
    kind: Kind,
    index: usize,
    /// A block's locations, until its body comes.
    locs: Option<serde_json::Value>,
}

impl<'a, 'w> Seq<'a, 'w> {
    fn new(finder: &'a mut Finder<'w>, kind: Kind) -> Self {
        Seq {
            finder,
            kind,
            index: 0,
            locs: None,
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        let i = self.index;
        self.index += 1;
        match self.kind {
            Kind::List => self.finder.inside(Step::Index(i), value),
            Kind::Spanned if i == 1 => self.finder.inside(Step::SpannedLoc, value),
            Kind::Block if i == 0 => {
                self.locs = serde_json::to_value(value).ok();
                Ok(())
            }
            Kind::Block => {
                if let (Some(locs), Ok(body)) = (self.locs.take(), serde_json::to_string(value)) {
                    self.finder.block(locs, body);
                }
                Ok(())
            }
            Kind::Map => self.finder.inside(Step::Opaque, value),
            _ => self.finder.inside(Step::Elem(i), value),
        }
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Stop> {
        // `App::dynamic` lists every location written as a Rust expression: it is not their place.
        if self.finder.path.is_empty() && key == "dynamic" {
            return Ok(());
        }
        self.finder.inside(Step::Field(key), value)
    }

    fn end(self) -> Result<(), Stop> {
        if self.kind == Kind::Variant {
            self.finder.path.pop();
        }
        Ok(())
    }
}

impl ser::SerializeSeq for Seq<'_, '_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }
    fn end(self) -> Result<(), Stop> {
        Seq::end(self)
    }
}

impl ser::SerializeTuple for Seq<'_, '_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }
    fn end(self) -> Result<(), Stop> {
        Seq::end(self)
    }
}

impl ser::SerializeTupleStruct for Seq<'_, '_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }
    fn end(self) -> Result<(), Stop> {
        Seq::end(self)
    }
}

impl ser::SerializeTupleVariant for Seq<'_, '_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }
    fn end(self) -> Result<(), Stop> {
        Seq::end(self)
    }
}

impl ser::SerializeMap for Seq<'_, '_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, _: &T) -> Result<(), Stop> {
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }
    fn end(self) -> Result<(), Stop> {
        Seq::end(self)
    }
}

impl ser::SerializeStruct for Seq<'_, '_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Stop> {
        Seq::end(self)
    }
}

impl ser::SerializeStructVariant for Seq<'_, '_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Stop> {
        Seq::end(self)
    }
}
