//! The [`Pickler`]'s opcodes for each kind of value: Python scalars and
//! containers, NumPy dtypes, arrays and scalars, pandas values and time
//! zones, opaque objects.

use super::{
    alignment_of, check_missing, flags_of, fortran_only, resolution, unsupported, Pickler,
};
use crate::array::any::AnyArray;
use crate::array::pyvalue::PyValue;
use crate::error::{Error, Result};
use crate::format::dtype::{ByteOrder, DType, Kind};
use crate::pickle::machine::MAX_DEPTH;

impl Pickler {
    pub(super) fn global(&mut self, module: &str, name: &str) {
        self.out.push(b'c');
        self.out.extend_from_slice(module.as_bytes());
        self.out.push(b'\n');
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(b'\n');
    }

    pub(super) fn int(&mut self, n: i64) {
        if (0..=0xff).contains(&n) {
            self.out.extend_from_slice(&[b'K', n as u8]);
        } else if (0..=0xffff).contains(&n) {
            self.out.push(b'M');
            self.out.extend_from_slice(&(n as u16).to_le_bytes());
        } else if i32::try_from(n).is_ok() {
            self.out.push(b'J');
            self.out.extend_from_slice(&(n as i32).to_le_bytes());
        } else {
            let bytes = crate::pickle::bigint::decimal_to_le_twos_complement(&n.to_string())
                .expect("an i64's text is decimal");
            self.long(&bytes);
        }
    }

    pub(super) fn long(&mut self, bytes: &[u8]) {
        if bytes.len() < 256 {
            self.out.extend_from_slice(&[0x8a, bytes.len() as u8]);
        } else {
            self.out.push(0x8b);
            self.out
                .extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        }
        self.out.extend_from_slice(bytes);
    }

    pub(super) fn float(&mut self, x: f64) {
        self.out.push(b'G');
        self.out.extend_from_slice(&x.to_be_bytes());
    }

    pub(super) fn str(&mut self, s: &str) -> Result<()> {
        let n = u32::try_from(s.len()).map_err(|_| unsupported("a str of 4 GiB or more"))?;
        self.out.push(b'X');
        self.out.extend_from_slice(&n.to_le_bytes());
        self.out.extend_from_slice(s.as_bytes());
        Ok(())
    }

    pub(super) fn bytes(&mut self, b: &[u8]) -> Result<()> {
        if b.len() < 256 {
            self.out.extend_from_slice(&[b'C', b.len() as u8]);
        } else {
            let n = u32::try_from(b.len()).map_err(|_| unsupported("bytes of 4 GiB or more"))?;
            self.out.push(b'B');
            self.out.extend_from_slice(&n.to_le_bytes());
        }
        self.out.extend_from_slice(b);
        Ok(())
    }

    pub(super) fn tuple(&mut self, items: &[PyValue], depth: usize) -> Result<()> {
        match items.len() {
            0 => self.out.push(b')'),
            1..=3 => {
                for x in items {
                    self.value(x, depth + 1)?;
                }
                self.out.push(0x84 + items.len() as u8);
            }
            _ => {
                self.out.push(b'(');
                for x in items {
                    self.value(x, depth + 1)?;
                }
                self.out.push(b't');
            }
        }
        Ok(())
    }

    /// `]` then `( items e` in batches of 1000, as Python does.
    pub(super) fn list<'a>(
        &mut self,
        items: impl IntoIterator<Item = &'a PyValue>,
        depth: usize,
    ) -> Result<()> {
        self.list_with(items, |p, x| p.value(x, depth + 1))
    }

    /// [`Pickler::list`] of items that `item` pickles.
    pub(super) fn list_with<'a, T: 'a>(
        &mut self,
        items: impl IntoIterator<Item = &'a T>,
        mut item: impl FnMut(&mut Self, &'a T) -> Result<()>,
    ) -> Result<()> {
        self.out.push(b']');
        let mut in_batch = 0;
        for x in items {
            if in_batch == 0 {
                self.out.push(b'(');
            }
            item(self, x)?;
            in_batch += 1;
            if in_batch == 1000 {
                self.out.push(b'e');
                in_batch = 0;
            }
        }
        if in_batch > 0 {
            self.out.push(b'e');
        }
        Ok(())
    }

    /// `callable(*args)` for a global taking the already-written arguments
    /// as one tuple.
    pub(super) fn reduce_tuple1(&mut self) {
        self.out.extend_from_slice(&[0x85, b'R']);
    }

    pub(super) fn value(&mut self, v: &PyValue, depth: usize) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(Error::Limit(crate::error::LimitError::PickleLimit {
                what: "nesting depth of values",
                limit: MAX_DEPTH as u64,
            }));
        }
        match v {
            PyValue::None => self.out.push(b'N'),
            PyValue::Bool(b) => self.out.push(if *b { 0x88 } else { 0x89 }),
            PyValue::Int(n) => self.int(*n),
            PyValue::BigInt(s) => {
                let bytes = crate::pickle::bigint::decimal_to_le_twos_complement(s)
                    .ok_or_else(|| unsupported(format!("BigInt {s:?} is not decimal text")))?;
                self.long(&bytes);
            }
            PyValue::Float(x) => self.float(*x),
            PyValue::Complex(re, im) => {
                self.global("builtins", "complex");
                self.float(*re);
                self.float(*im);
                self.out.extend_from_slice(&[0x86, b'R']);
            }
            PyValue::Str(s) => self.str(s)?,
            PyValue::Bytes(b) => self.bytes(b)?,
            PyValue::ByteArray(b) => {
                self.global("builtins", "bytearray");
                self.bytes(b)?;
                self.reduce_tuple1();
            }
            PyValue::List(items) => self.list(items, depth)?,
            PyValue::Tuple(items) => self.tuple(items, depth)?,
            PyValue::Dict(pairs) => {
                self.out.push(b'}');
                if !pairs.is_empty() {
                    self.out.push(b'(');
                    for (k, v) in pairs {
                        self.value(k, depth + 1)?;
                        self.value(v, depth + 1)?;
                    }
                    self.out.push(b'u');
                }
            }
            PyValue::Set(items) | PyValue::FrozenSet(items) => {
                let name = if matches!(v, PyValue::Set(_)) {
                    "set"
                } else {
                    "frozenset"
                };
                self.global("builtins", name);
                self.list(items, depth)?;
                self.reduce_tuple1();
            }
            PyValue::Date(d) => {
                self.global("datetime", "date");
                let y = d.year.to_be_bytes();
                self.bytes(&[y[0], y[1], d.month, d.day])?;
                self.reduce_tuple1();
            }
            PyValue::DateTime(t) => {
                self.global("datetime", "datetime");
                let y = t.date.year.to_be_bytes();
                let us = t.microsecond.to_be_bytes();
                let month = t.date.month | if t.fold != 0 { 0x80 } else { 0 };
                self.bytes(&[
                    y[0], y[1], month, t.date.day, t.hour, t.minute, t.second, us[1], us[2], us[3],
                ])?;
                self.reduce_tuple1();
            }
            PyValue::TimeDelta(t) => {
                self.global("datetime", "timedelta");
                self.int(t.days as i64);
                self.int(t.seconds as i64);
                self.int(t.microseconds as i64);
                self.out.extend_from_slice(&[0x87, b'R']);
            }
            PyValue::Decimal(s) => {
                self.global("decimal", "Decimal");
                self.str(s)?;
                self.reduce_tuple1();
            }
            PyValue::Scalar(s) => {
                self.global("numpy.core.multiarray", "scalar");
                self.dtype(&s.dtype)?;
                self.bytes(&s.data)?;
                self.out.extend_from_slice(&[0x86, b'R']);
            }
            PyValue::DType(d) => self.dtype(d)?,
            PyValue::Array(a) => self.array(a, depth)?,
            PyValue::Global { module, name } => self.checked_global(module, name)?,
            PyValue::Opaque(o) => self.opaque(o, depth)?,
            PyValue::Timestamp(t) => {
                self.global("pandas._libs.tslibs.timestamps", "_unpickle_timestamp");
                self.out.push(b'(');
                self.int(t.value);
                self.out.push(b'N');
                match &t.tz {
                    Some(z) => self.time_zone(z)?,
                    None => self.out.push(b'N'),
                }
                self.int(resolution(&t.unit)?);
                self.out.extend_from_slice(b"tR");
            }
            PyValue::Timedelta(t) => {
                self.global("pandas._libs.tslibs.timedeltas", "_timedelta_unpickle");
                self.int(t.value);
                self.int(resolution(&t.unit)?);
                self.out.extend_from_slice(&[0x86, b'R']);
            }
            PyValue::NaT => {
                self.global("pandas._libs.tslibs.nattype", "_nat_unpickle");
                self.out.push(b'N');
                self.reduce_tuple1();
            }
            PyValue::NA => self.global("pandas._libs.missing", "NA"),
            PyValue::TimeZone(z) => self.time_zone(z)?,
        }
        Ok(())
    }

    /// A global named by a value: a name that does not fit on the line of
    /// the `GLOBAL` opcode is refused rather than written as another name.
    /// A dotted name (`Outer.Inner`, read from a protocol 4 pickle) is
    /// written as `getattr(module.Outer, 'Inner')`, as Python's pickler
    /// does below protocol 4, whose `GLOBAL` takes no dots.
    pub(super) fn checked_global(&mut self, module: &str, name: &str) -> Result<()> {
        let bad = |s: &str| s.is_empty() || s.contains(['\n', '\r', '\0']);
        if bad(module) || name.split('.').any(bad) {
            return Err(unsupported(format!(
                "the global {module:?} {name:?} cannot be written"
            )));
        }
        let mut parts = name.split('.');
        let first = parts.next().expect("split gives one part");
        let rest: Vec<&str> = parts.collect();
        for _ in &rest {
            self.global("builtins", "getattr");
        }
        self.global(module, first);
        for attr in rest {
            self.str(attr)?;
            self.out.extend_from_slice(&[0x86, b'R']);
        }
        Ok(())
    }

    /// An opaque object as the pickle that made it: the call (or
    /// `NEWOBJ`), its items and entries, then its state.
    pub(super) fn opaque(
        &mut self,
        o: &crate::array::pyvalue::foreign::Opaque,
        depth: usize,
    ) -> Result<()> {
        self.value(&o.callable, depth + 1)?;
        self.tuple(&o.args, depth)?;
        self.out.push(if o.new_object { 0x81 } else { b'R' });
        if !o.items.is_empty() {
            self.out.push(b'(');
            for x in &o.items {
                self.value(x, depth + 1)?;
            }
            self.out.push(b'e');
        }
        if !o.entries.is_empty() {
            self.out.push(b'(');
            for (k, v) in &o.entries {
                self.value(k, depth + 1)?;
                self.value(v, depth + 1)?;
            }
            self.out.push(b'u');
        }
        if let Some(state) = &o.state {
            self.value(state, depth + 1)?;
            self.out.push(b'b');
        }
        Ok(())
    }

    /// A time zone as Python pickles it.
    pub(super) fn time_zone(&mut self, z: &crate::array::pyvalue::foreign::TimeZone) -> Result<()> {
        match z {
            crate::array::pyvalue::foreign::TimeZone::Fixed { offset, name } => {
                self.global("datetime", "timezone");
                self.value(&PyValue::TimeDelta(*offset), 1)?;
                match name {
                    Some(n) => {
                        self.str(n)?;
                        self.out.extend_from_slice(&[0x86, b'R']);
                    }
                    None => self.reduce_tuple1(),
                }
            }
            crate::array::pyvalue::foreign::TimeZone::Zone(key) => {
                self.global("builtins", "getattr");
                self.global("zoneinfo", "ZoneInfo");
                self.str("_unpickle")?;
                self.out.extend_from_slice(&[0x86, b'R']);
                self.str(key)?;
                self.int(1);
                self.out.extend_from_slice(&[0x86, b'R']);
            }
        }
        Ok(())
    }

    /// `numpy.dtype(code, False, True)` and its state, for scalar dtypes.
    pub(super) fn dtype(&mut self, d: &DType) -> Result<()> {
        let DType::Scalar(s) = d else {
            return Err(unsupported(format!(
                "writing the dtype {d} inside an object array (only scalar dtypes)"
            )));
        };
        let type_str = s.type_str();
        let body = &type_str[1..];
        let (code, elsize, align, flags) = match s.kind {
            Kind::Object => ("O8".to_string(), -1, -1, 63),
            Kind::Unicode => (body.to_string(), s.size as i64, 4, 8),
            Kind::Bytes | Kind::Void => (body.to_string(), s.size as i64, 1, 0),
            Kind::Datetime | Kind::Timedelta => (body[..2].to_string(), -1, -1, 0),
            _ => (body.to_string(), -1, -1, 0),
        };
        self.global("numpy", "dtype");
        self.str(&code)?;
        self.out.extend_from_slice(&[0x89, 0x88, 0x87, b'R']);
        let mark = match s.order {
            ByteOrder::NotApplicable => "|",
            ByteOrder::Little => "<",
            ByteOrder::Big => ">",
        };
        self.out.push(b'(');
        let datetime = matches!(s.kind, Kind::Datetime | Kind::Timedelta);
        self.int(if datetime { 4 } else { 3 });
        self.str(mark)?;
        self.out.extend_from_slice(b"NNN");
        self.int(elsize);
        self.int(align);
        self.int(flags);
        if datetime {
            let unit = s.unit.as_deref().unwrap_or("generic");
            let split = unit
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(unit.len());
            let (num, name) = unit.split_at(split);
            let num: i64 = if num.is_empty() {
                1
            } else {
                num.parse().unwrap_or(1)
            };
            // Metadata: (None, (unit, num, den, events)).
            self.out.extend_from_slice(b"N(");
            self.bytes(name.as_bytes())?;
            self.int(num);
            self.int(1);
            self.int(1);
            self.out.extend_from_slice(&[b't', 0x86]);
        }
        self.out.extend_from_slice(b"tb");
        Ok(())
    }

    /// `numpy.dtype(...)` and its state for any dtype: records (`V<size>`
    /// with names, fields and offsets) and sub-arrays (`V<size>` with
    /// `(base, shape)`) as NumPy pickles them, scalars by [`Pickler::dtype`].
    pub(super) fn any_dtype(&mut self, d: &DType) -> Result<()> {
        let size = d
            .itemsize()
            .ok_or_else(|| unsupported(format!("the dtype {d} is too large")))?;
        let (names, subarray) = match d {
            DType::Scalar(_) => return self.dtype(d),
            DType::Record(fields) => (Some(fields), None),
            DType::SubArray(inner, shape) => (None, Some((inner, shape))),
        };
        self.global("numpy", "dtype");
        self.str(&format!("V{size}"))?;
        self.out.extend_from_slice(&[0x89, 0x88, 0x87, b'R']);
        self.out.push(b'(');
        self.int(3);
        self.str("|")?;
        match subarray {
            Some((inner, shape)) => {
                self.out.push(b'(');
                self.any_dtype(inner)?;
                self.shape(shape);
                self.out.push(b't');
            }
            None => self.out.push(b'N'),
        }
        match names {
            Some(fields) => {
                self.out.push(b'(');
                for f in fields.iter().filter(|f| !f.name.is_empty()) {
                    self.str(&f.name)?;
                }
                self.out.push(b't');
                // name (and title) → (dtype, offset[, title])
                self.out.extend_from_slice(b"}(");
                let mut offset = 0;
                for f in fields {
                    if !f.name.is_empty() {
                        let keys = std::iter::once(&f.name).chain(f.title.as_ref());
                        for key in keys {
                            self.str(key)?;
                            self.out.push(b'(');
                            self.any_dtype(&f.dtype)?;
                            self.int(offset as i64);
                            if let Some(title) = &f.title {
                                self.str(title)?;
                            }
                            self.out.push(b't');
                        }
                    }
                    offset += f.dtype.itemsize().unwrap_or(0);
                }
                self.out.push(b'u');
            }
            None => self.out.extend_from_slice(b"NN"),
        }
        self.int(size as i64);
        self.int(alignment_of(d) as i64);
        self.int(flags_of(d));
        self.out.extend_from_slice(b"tb");
        Ok(())
    }

    /// `_reconstruct(ndarray, (0,), b'b')`, then the start of the state
    /// tuple `BUILD` gives it: a mark and the state's version, 1.
    pub(super) fn reconstruct(&mut self) -> Result<()> {
        self.global("numpy.core.multiarray", "_reconstruct");
        self.global("numpy", "ndarray");
        self.int(0);
        self.out.push(0x85);
        self.bytes(b"b")?;
        self.out.extend_from_slice(&[0x87, b'R']);
        self.out.push(b'(');
        self.int(1);
        Ok(())
    }

    /// `_reconstruct(ndarray, (0,), b'b')` and its `BUILD` state.
    pub(super) fn array(&mut self, a: &AnyArray, depth: usize) -> Result<()> {
        self.reconstruct()?;
        match a {
            AnyArray::StringDType(x) => {
                self.shape(x.values.shape());
                self.string_dtype(x)?;
                self.out
                    .push(if fortran_only(&x.values) { 0x88 } else { 0x89 });
                self.string_dtype_items(x)?;
            }
            AnyArray::Object(x) => {
                self.shape(x.shape());
                self.dtype(&DType::parse("|O").expect("valid"))?;
                self.out.push(if fortran_only(x) { 0x88 } else { 0x89 });
                self.list(x.iter(), depth)?;
            }
            AnyArray::Record(r) if r.dtype().has_object() => {
                self.shape(r.shape());
                self.any_dtype(r.dtype())?;
                self.out.push(0x89);
                self.record_rows(r, depth)?;
            }
            other => {
                let npy = crate::array::encode::plain_npy_bytes(other)?;
                let (header, offset) = crate::format::header::parse_slice(
                    &npy,
                    &crate::options::ReadOptions::default(),
                )?;
                self.shape(&header.shape);
                self.any_dtype(&header.dtype)?;
                self.out
                    .push(if header.fortran_order { 0x88 } else { 0x89 });
                self.bytes(&npy[offset..])?;
            }
        }
        self.out.extend_from_slice(b"tb");
        Ok(())
    }

    /// `_convert_to_stringdtype_kwargs(coerce[, na_object])`.
    pub(super) fn string_dtype(
        &mut self,
        a: &crate::array::stringdtype::StringDTypeArray,
    ) -> Result<()> {
        self.global("numpy._core._internal", "_convert_to_stringdtype_kwargs");
        self.out.push(if a.coerce { 0x88 } else { 0x89 });
        match &a.na_object {
            Some(na) => {
                self.value(na, 1)?;
                self.out.extend_from_slice(&[0x86, b'R']);
            }
            None => self.reduce_tuple1(),
        }
        Ok(())
    }

    /// The elements of a `StringDType` array in C order, the NA object
    /// for missing ones.
    pub(super) fn string_dtype_items(
        &mut self,
        a: &crate::array::stringdtype::StringDTypeArray,
    ) -> Result<()> {
        check_missing(a)?;
        let na = a.na_object.clone().unwrap_or(PyValue::None);
        self.list_with(a.values.iter(), |p, v| match v {
            Some(s) => p.str(s),
            None => p.value(&na, 1),
        })
    }

    /// The list of one tuple of field values per record, as NumPy pickles
    /// records with object fields.
    pub(super) fn record_rows(
        &mut self,
        r: &crate::array::record::RecordArray,
        depth: usize,
    ) -> Result<()> {
        let rows = crate::pickle::records::record_rows(r)?;
        self.list_with(rows.iter(), |p, row| {
            p.out.push(b'(');
            for v in row {
                p.value(v, depth + 2)?;
            }
            p.out.push(b't');
            Ok(())
        })
    }

    pub(super) fn shape(&mut self, shape: &[usize]) {
        self.out.push(b'(');
        for &d in shape {
            self.int(d as i64);
        }
        self.out.push(b't');
    }
}
