//! Turning the arena into [`PyValue`]s: recursive, depth-limited, cycle
//! checked, and charged to the budget.

use super::*;

impl Machine<'_> {
    // -- values ---------------------------------------------------------------

    /// Turns node `id` into a value, charging what it creates to the budget.
    pub(crate) fn materialize(&mut self, id: Id) -> Result<PyValue> {
        if self.visiting.len() < self.arena.len() {
            self.visiting.resize(self.arena.len(), false);
        }
        self.materialize_at(id, 0)
    }

    /// [`Machine::materialize_at`] of an opaque object, out of line so that
    /// its locals do not enlarge every frame of the recursion.
    #[inline(never)]
    pub(super) fn materialize_opaque(&mut self, id: Id, depth: usize) -> Result<PyValue> {
        const NODE: u64 = std::mem::size_of::<PyValue>() as u64;
        let Node::Opaque(o) = &self.arena[id] else {
            unreachable!("called for opaque nodes")
        };
        let (callable, args, state) = (o.callable, o.args.clone(), o.state);
        let (items, entries, new_object) = (o.items.clone(), o.entries.clone(), o.new_object);
        self.charge(NODE * (args.len() + items.len() + 2 * entries.len() + 2) as u64)?;
        self.visiting[id] = true;
        let callable = self.materialize_at(callable, depth + 1)?;
        let kids = |m: &mut Self, ids: &[Id]| -> Result<Vec<PyValue>> {
            ids.iter()
                .map(|&k| m.materialize_at(k, depth + 1))
                .collect()
        };
        let args = kids(self, &args)?;
        let items = kids(self, &items)?;
        let state = match state {
            Some(s) => Some(self.materialize_at(s, depth + 1)?),
            None => None,
        };
        let mut pairs = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            pairs.push((
                self.materialize_at(k, depth + 1)?,
                self.materialize_at(v, depth + 1)?,
            ));
        }
        self.visiting[id] = false;
        Ok(PyValue::Opaque(Box::new(
            crate::array::pyvalue::foreign::Opaque {
                callable,
                args,
                new_object,
                state,
                items,
                entries: pairs,
            },
        )))
    }

    pub(super) fn materialize_at(&mut self, id: Id, depth: usize) -> Result<PyValue> {
        if depth >= MAX_DEPTH {
            return Err(Error::Limit(crate::error::LimitError::PickleLimit {
                what: "nesting depth of values",
                limit: MAX_DEPTH as u64,
            }));
        }
        if self.visiting[id] {
            return Err(self.malformed(format!(
                "recursive structure: a {} contains itself",
                self.arena[id].type_name()
            )));
        }
        const NODE: u64 = std::mem::size_of::<PyValue>() as u64;
        let children = |m: &Self| -> Option<Vec<Id>> {
            match &m.arena[id] {
                Node::List(v) | Node::Tuple(v) | Node::Set(v) | Node::FrozenSet(v) => {
                    Some(v.clone())
                }
                _ => None,
            }
        };
        if let Some(kids) = children(self) {
            self.charge(NODE * (kids.len() as u64 + 1))?;
            self.visiting[id] = true;
            let mut out = Vec::with_capacity(kids.len());
            for k in kids {
                out.push(self.materialize_at(k, depth + 1)?);
            }
            self.visiting[id] = false;
            let v = match &self.arena[id] {
                Node::List(_) => PyValue::List(out),
                Node::Tuple(_) => PyValue::Tuple(out),
                Node::Set(_) | Node::FrozenSet(_) => {
                    for m in &out {
                        check_hashable(self, m)?;
                    }
                    if matches!(self.arena[id], Node::Set(_)) {
                        PyValue::Set(out)
                    } else {
                        PyValue::FrozenSet(out)
                    }
                }
                _ => unreachable!("children() matched a container"),
            };
            return Ok(v);
        }
        if matches!(self.arena[id], Node::Opaque(_)) {
            return self.materialize_opaque(id, depth);
        }
        if let Node::Dict(pairs) = &self.arena[id] {
            let pairs = pairs.clone();
            self.charge(NODE * (2 * pairs.len() as u64 + 1))?;
            self.visiting[id] = true;
            let mut out = Vec::with_capacity(pairs.len());
            for (k, v) in pairs {
                let k = self.materialize_at(k, depth + 1)?;
                check_hashable(self, &k)?;
                let v = self.materialize_at(v, depth + 1)?;
                out.push((k, v));
            }
            self.visiting[id] = false;
            return Ok(PyValue::Dict(out));
        }
        let (v, cost) = match &self.arena[id] {
            Node::None => (PyValue::None, 0),
            Node::Bool(b) => (PyValue::Bool(*b), 0),
            Node::Int(n) => (PyValue::Int(*n), 0),
            Node::BigInt(s) => (PyValue::BigInt(s.clone()), s.len() as u64),
            Node::Float(x) => (PyValue::Float(*x), 0),
            Node::Str(s) => (PyValue::Str(s.clone()), s.len() as u64),
            Node::Py2Str(b) => match self.encoding {
                PickleEncoding::Latin1 => (
                    PyValue::Str(b.iter().map(|&c| c as char).collect()),
                    2 * b.len() as u64,
                ),
                PickleEncoding::Bytes => (PyValue::Bytes(b.clone()), b.len() as u64),
                PickleEncoding::Ascii => match b.iter().position(|c| !c.is_ascii()) {
                    None => (
                        PyValue::Str(String::from_utf8(b.clone()).expect("ASCII")),
                        b.len() as u64,
                    ),
                    Some(at) => {
                        return Err(Error::Pickle(crate::error::PickleError::Py2StrNotAscii {
                            byte: b[at],
                        }))
                    }
                },
            },
            Node::Bytes(b) => (PyValue::Bytes(b.clone()), b.len() as u64),
            Node::ByteArray(b) => (PyValue::ByteArray(b.clone()), b.len() as u64),
            Node::DType(d) => (PyValue::DType(d.clone()), 64),
            Node::PendingDType(code) => {
                let d = (self.classes.dtype_without_state)(self, code)?;
                (PyValue::DType(d), 64)
            }
            Node::Value(v, cost, vdepth) => {
                // Values built by a call (arrays above all) count their own
                // depth, so nesting arrays in arrays cannot pass the limit.
                if depth + vdepth >= MAX_DEPTH {
                    return Err(Error::Limit(crate::error::LimitError::PickleLimit {
                        what: "nesting depth of values",
                        limit: MAX_DEPTH as u64,
                    }));
                }
                (v.clone(), *cost)
            }
            Node::Global(g) => {
                let v = g.as_value();
                let cost = cost_of(&v);
                (v, cost)
            }
            Node::Ref(r) => (
                PyValue::Global {
                    module: r.0.clone(),
                    name: r.1.clone(),
                },
                (r.0.len() + r.1.len()) as u64,
            ),
            Node::StringDType { .. } => {
                return Err(Error::Pickle(
                    crate::error::PickleError::UnsupportedPickle {
                        what: "a StringDType dtype object as a value".into(),
                    },
                ))
            }
            Node::PendingArray(_) => {
                return Err(self.malformed("an ndarray whose state was never set (no BUILD)"))
            }
            Node::List(_)
            | Node::Tuple(_)
            | Node::Set(_)
            | Node::FrozenSet(_)
            | Node::Dict(_)
            | Node::Opaque(_) => {
                unreachable!("containers are handled above")
            }
        };
        self.charge(NODE + cost)?;
        Ok(v)
    }
}

/// A finished value as a node, with the bytes each copy of it costs.
pub(crate) fn value_node(v: PyValue) -> Node {
    let cost = cost_of(&v);
    let depth = depth_of(&v);
    Node::Value(v, cost, depth)
}

/// How deep `v` nests (a scalar is 0, `[1]` is 1, an array of lists 2 ...).
/// Values built by the machine respect [`MAX_DEPTH`], so this recursion is
/// bounded.
pub(crate) fn depth_of(v: &PyValue) -> usize {
    let many =
        |items: &mut dyn Iterator<Item = &PyValue>| items.map(depth_of).max().unwrap_or(0) + 1;
    match v {
        PyValue::List(x) | PyValue::Tuple(x) | PyValue::Set(x) | PyValue::FrozenSet(x) => {
            many(&mut x.iter())
        }
        PyValue::Dict(pairs) => many(&mut pairs.iter().flat_map(|(k, v)| [k, v])),
        PyValue::Opaque(o) => many(
            &mut std::iter::once(&o.callable)
                .chain(&o.args)
                .chain(&o.items)
                .chain(o.entries.iter().flat_map(|(k, v)| [k, v]))
                .chain(&o.state),
        ),
        PyValue::Array(a) => match &**a {
            crate::array::any::AnyArray::Object(x) => many(&mut x.iter()),
            _ => 1,
        },
        _ => 0,
    }
}

/// What an array costs beyond its data.
pub(crate) const ARRAY_COST: u64 = 128;

/// Bytes a copy of `v` creates: its heap data (the `PyValue` itself is
/// charged by the copy).
pub(crate) fn cost_of(v: &PyValue) -> u64 {
    const NODE: u64 = std::mem::size_of::<PyValue>() as u64;
    let many = |items: &[PyValue]| items.iter().map(|x| NODE + cost_of(x)).sum::<u64>();
    match v {
        PyValue::BigInt(s) | PyValue::Str(s) | PyValue::Decimal(s) => s.len() as u64,
        PyValue::Bytes(b) | PyValue::ByteArray(b) => b.len() as u64,
        PyValue::List(x) | PyValue::Tuple(x) | PyValue::Set(x) | PyValue::FrozenSet(x) => many(x),
        PyValue::Dict(pairs) => pairs
            .iter()
            .map(|(k, v)| 2 * NODE + cost_of(k) + cost_of(v))
            .sum(),
        // Shared in memory (`Arc`), but charged at its logical size on
        // every reference, so that whoever walks the result (to print it,
        // say) meets at most the budget, never a billion-laughs expansion.
        PyValue::Array(a) => match &**a {
            crate::array::any::AnyArray::Object(x) => {
                x.iter().map(|e| NODE + cost_of(e)).sum::<u64>() + ARRAY_COST
            }
            crate::array::any::AnyArray::StringDType(x) => {
                x.values
                    .iter()
                    .map(|e| NODE + e.as_ref().map_or(0, |s| s.len() as u64))
                    .sum::<u64>()
                    + x.na_object.as_ref().map_or(0, |na| NODE + cost_of(na))
                    + ARRAY_COST
            }
            crate::array::any::AnyArray::Record(r) if r.has_objects() => {
                r.as_bytes().len() as u64
                    + r.object_columns()
                        .map(|column| column.iter().map(|e| NODE + cost_of(e)).sum::<u64>())
                        .sum::<u64>()
                    + ARRAY_COST
            }
            // At least a byte a value: a walker visits values of no
            // bytes too (`|V0`, `[]`), one by one.
            other => {
                (other.dtype().itemsize().unwrap_or(0).max(1) as u64)
                    .saturating_mul(other.shape().iter().product::<usize>() as u64)
                    + ARRAY_COST
            }
        },
        PyValue::Scalar(s) => s.data.len() as u64 + 64,
        PyValue::Global { module, name } => (module.len() + name.len()) as u64,
        PyValue::Opaque(o) => {
            let one = |x: &PyValue| NODE + cost_of(x);
            one(&o.callable)
                + o.args.iter().map(one).sum::<u64>()
                + o.items.iter().map(one).sum::<u64>()
                + o.entries.iter().map(|(k, v)| one(k) + one(v)).sum::<u64>()
                + o.state.as_ref().map_or(0, one)
        }
        PyValue::Timestamp(t) => 16 + t.unit.len() as u64 + t.tz.as_ref().map_or(0, zone_cost),
        PyValue::TimeZone(z) => zone_cost(z),
        PyValue::Timedelta(t) => t.unit.len() as u64,
        PyValue::DType(_) => 64,
        _ => 0,
    }
}

/// The heap bytes of a time zone (its key or name).
fn zone_cost(z: &crate::array::pyvalue::foreign::TimeZone) -> u64 {
    match z {
        crate::array::pyvalue::foreign::TimeZone::Fixed { name, .. } => {
            name.as_ref().map_or(0, |n| n.len() as u64)
        }
        crate::array::pyvalue::foreign::TimeZone::Zone(key) => key.len() as u64,
    }
}

/// Python refuses unhashable dict keys and set members (`TypeError`).
pub(super) fn check_hashable(m: &Machine<'_>, v: &PyValue) -> Result<()> {
    match v {
        PyValue::List(_)
        | PyValue::Dict(_)
        | PyValue::Set(_)
        | PyValue::ByteArray(_)
        | PyValue::Array(_) => Err(m.malformed(format!(
            "unhashable type '{}' as a dict key or set member",
            crate::array::pyvalue::convert::value_type_name(v)
        ))),
        PyValue::Tuple(items) => items.iter().try_for_each(|x| check_hashable(m, x)),
        _ => Ok(()),
    }
}
