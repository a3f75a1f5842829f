//! The pickle stack machine: opcodes of protocols 0 to 5 that carry data,
//! over an arena of nodes, with every resource bounded by the input size.
//!
//! Objects live in an arena (`Vec<Node>`) and the stack, the memo and
//! containers refer to them by index. That keeps Python's sharing semantics
//! (a list memoised and then appended to is the same list when fetched
//! again) without recursion in the machine itself: only turning the result
//! into [`PyValue`]s recurses, and that is depth-limited and detects cycles.
//!
//! Globals are resolved against the closed list in [`super::globals`] the
//! moment they are named; a call (`REDUCE`, `INST`, `OBJ`, `NEWOBJ`) can
//! only reach one of those, and each one is a pure constructor of data
//! implemented here or by the classes above the machine (NumPy's, pandas',
//! `StringDType`), which it reaches through the [`Classes`] its maker hands
//! it: they import the machine, the machine imports none of them.
//!
//! Files: this one holds the nodes, the machine's state, its input, stack
//! and memo; `opcodes.rs` runs the opcodes; `calls.rs` holds the closed
//! list's constructors of plain data; `values.rs` turns nodes into
//! [`PyValue`]s within the budget; `text.rs` parses protocol 0's text
//! arguments. They use the crate's dtype, error and option types and the
//! pickle folder's value types, nothing above.

mod calls;
mod opcodes;
mod text;
mod values;

use text::truncate;
pub(crate) use values::{value_node, ARRAY_COST};

use super::globals::{self, Global};
use crate::array::pyvalue::PyValue;
use crate::error::{Error, Result};
use crate::format::dtype::DType;
use crate::options::PickleEncoding;
use crate::options::ReadOptions;

/// Deepest nesting of values (lists in lists, arrays in lists ...). Python's
/// own recursion limit is about 1000; this keeps the recursive conversion,
/// `Drop` and `Display` far from the end of a 2 MiB thread stack.
pub const MAX_DEPTH: usize = 256;

/// Turning the arena into values may create at most this many bytes
/// (counting each value's size and its heap bytes) per input byte, plus
/// [`BUDGET_BASE`]. Sharing (`GET` of a big value many times) is what can
/// exceed it; NumPy's own pickles stay far below.
pub const BUDGET_PER_BYTE: u64 = 64;

/// Bytes of values any pickle may create regardless of its size.
pub const BUDGET_BASE: u64 = 1 << 20;

/// Longest integer (`LONG1`/`LONG4`) accepted, in bytes: about 4300 decimal
/// digits, Python's own default limit for converting an int to text.
const MAX_LONG_BYTES: usize = 1792;

type Id = usize;

/// `_reconstruct(ndarray, (0,), b'b')`, waiting for its state.
#[derive(Debug)]
pub(crate) struct PendingArray;

/// What the machine hands to the classes of the closed list built above it
/// (`numpy.rs`, `pandas.rs`, `stringdtype.rs`, wired in `classes.rs`): whoever
/// makes a machine passes them, so that the machine imports none of the files
/// that import it.
pub(crate) struct Classes {
    /// Calls a global of the closed list that the machine does not build
    /// itself (NumPy's, pandas', `StringDType`'s).
    pub(crate) call: fn(&mut Machine<'_>, Global, &[Id]) -> Result<Node>,
    /// `BUILD` of a `numpy.dtype` awaiting its state.
    pub(crate) dtype_setstate: fn(&mut Machine<'_>, &str, Id) -> Result<DType>,
    /// `BUILD` of an ndarray awaiting its state.
    pub(crate) array_setstate: fn(&mut Machine<'_>, PendingArray, Id) -> Result<Node>,
    /// A `numpy.dtype` never given a state, as a value.
    pub(crate) dtype_without_state: fn(&Machine<'_>, &str) -> Result<DType>,
}

/// A node of the arena: what Python would hold, minus anything callable.
#[derive(Debug)]
pub(crate) enum Node {
    None,
    Bool(bool),
    Int(i64),
    BigInt(String),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    /// A Python 2 `str` (`STRING`, `BINSTRING`, `SHORT_BINSTRING`): bytes
    /// that Python 3 decodes (NumPy's advice for old files: latin-1).
    Py2Str(Vec<u8>),
    ByteArray(Vec<u8>),
    List(Vec<Id>),
    Tuple(Vec<Id>),
    Dict(Vec<(Id, Id)>),
    Set(Vec<Id>),
    FrozenSet(Vec<Id>),
    Global(Global),
    /// A global outside the closed list (module, name): data until
    /// something calls it, which is refused (or, under
    /// `ReadOptions::opaque_objects`, makes an [`Node::Opaque`]).
    Ref(Box<(String, String)>),
    /// An object of another class, kept as inert data (opaque mode).
    Opaque(Box<OpaqueNode>),
    /// `StringDType(coerce=.., na_object=..)` (NumPy 2), as the dtype of
    /// an array's state.
    StringDType {
        coerce: bool,
        na: Option<Id>,
    },
    /// `numpy.dtype(code, align, copy)` before its `BUILD`.
    PendingDType(String),
    DType(DType),
    /// `_reconstruct(ndarray, (0,), b'b')` before its `BUILD`.
    PendingArray(PendingArray),
    /// A finished value (a call's result), with its cost in the budget and
    /// its nesting depth.
    Value(PyValue, u64, usize),
}

impl Node {
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Node::None => "NoneType",
            Node::Bool(_) => "bool",
            Node::Int(_) | Node::BigInt(_) => "int",
            Node::Float(_) => "float",
            Node::Str(_) => "str",
            Node::Bytes(_) => "bytes",
            Node::Py2Str(_) => "str (Python 2)",
            Node::ByteArray(_) => "bytearray",
            Node::List(_) => "list",
            Node::Tuple(_) => "tuple",
            Node::Dict(_) => "dict",
            Node::Set(_) => "set",
            Node::FrozenSet(_) => "frozenset",
            Node::Global(_) | Node::Ref(_) => "global",
            Node::Opaque(_) => "object",
            Node::StringDType { .. } => "numpy.dtypes.StringDType",
            Node::PendingDType(_) | Node::DType(_) => "numpy.dtype",
            Node::PendingArray(_) => "numpy.ndarray",
            Node::Value(v, ..) => crate::array::pyvalue::convert::value_type_name(v),
        }
    }
}

/// An object kept as inert data: what was called and what was given to it.
#[derive(Debug)]
pub(crate) struct OpaqueNode {
    callable: Id,
    args: Vec<Id>,
    new_object: bool,
    state: Option<Id>,
    items: Vec<Id>,
    entries: Vec<(Id, Id)>,
}

/// The machine's state while it runs one pickle.
pub(crate) struct Machine<'a> {
    input: &'a [u8],
    pos: usize,
    /// Start of the opcode being run, for error messages.
    op_pos: usize,
    pub(crate) arena: Vec<Node>,
    stack: Vec<Id>,
    marks: Vec<usize>,
    memo: std::collections::HashMap<u64, Id>,
    /// Bytes of values still allowed to be created.
    budget: u64,
    /// Nodes on the path of the conversion running now (cycle detection).
    visiting: Vec<bool>,
    /// How Python 2 `str` values become values.
    encoding: PickleEncoding,
    /// Whether calls outside the closed list make opaque objects.
    opaque: bool,
    /// The classes above the machine, for calls and `BUILD`s of theirs.
    classes: &'static Classes,
}

impl<'a> Machine<'a> {
    pub(crate) fn new(input: &'a [u8], classes: &'static Classes) -> Self {
        let budget = (input.len() as u64)
            .saturating_mul(BUDGET_PER_BYTE)
            .saturating_add(BUDGET_BASE);
        Machine {
            input,
            pos: 0,
            op_pos: 0,
            arena: Vec::new(),
            stack: Vec::new(),
            marks: Vec::new(),
            memo: std::collections::HashMap::new(),
            budget,
            visiting: Vec::new(),
            encoding: PickleEncoding::Ascii,
            opaque: false,
            classes,
        }
    }

    /// A machine reading as `options` say (encoding, opaque objects).
    pub(crate) fn with_options(
        input: &'a [u8],
        options: &ReadOptions,
        classes: &'static Classes,
    ) -> Self {
        let mut m = Self::new(input, classes);
        m.encoding = options.get_pickle_encoding();
        m.opaque = options.get_opaque_objects();
        m
    }

    /// The machine with `factor` times the usual budget, for a caller that
    /// knows its pickle holds many small values: a dask stack's `info`
    /// lists one chunk length per shard, 2 bytes each in the pickle and
    /// about 140 as values, which the usual 64 per byte refuses from about
    /// 80 000 shards on. Still in proportion to the bytes present.
    pub(crate) fn with_budget_factor(mut self, factor: u64) -> Self {
        self.budget = self.budget.saturating_mul(factor);
        self
    }

    /// Total budget of a pickle of `len` bytes.
    pub(crate) fn budget_for(len: usize) -> u64 {
        (len as u64)
            .saturating_mul(BUDGET_PER_BYTE)
            .saturating_add(BUDGET_BASE)
    }

    /// Offset of the opcode being run.
    pub(crate) fn op_pos(&self) -> usize {
        self.op_pos
    }

    pub(crate) fn malformed(&self, reason: impl Into<String>) -> Error {
        Error::Pickle(crate::error::PickleError::MalformedPickle {
            pos: self.op_pos,
            reason: reason.into(),
        })
    }

    /// Charges `cost` bytes of new values against the budget.
    pub(crate) fn charge(&mut self, cost: u64) -> Result<()> {
        if cost > self.budget {
            return Err(Error::Limit(crate::error::LimitError::PickleLimit {
                what: "memory for the values it builds (64 bytes per input byte plus 1 MiB)",
                limit: Self::budget_for(self.input.len()),
            }));
        }
        self.budget -= cost;
        Ok(())
    }

    // -- input ------------------------------------------------------------

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let rest = &self.input[self.pos..];
        if rest.len() < n {
            return Err(self.malformed(format!(
                "truncated: the opcode needs {n} more bytes, {} remain",
                rest.len()
            )));
        }
        self.pos += n;
        Ok(&rest[..n])
    }

    fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// A length field: checked against the bytes left before anything is
    /// allocated, so a short pickle claiming 4 GiB fails here.
    fn len_checked(&self, n: u64) -> Result<usize> {
        let left = (self.input.len() - self.pos) as u64;
        if n > left {
            return Err(self.malformed(format!(
                "truncated: a length of {n} bytes is claimed, {left} remain"
            )));
        }
        Ok(n as usize)
    }

    /// A text line ending in `\n` (protocol 0 arguments), without the `\n`.
    fn line(&mut self) -> Result<&'a [u8]> {
        let rest = &self.input[self.pos..];
        match rest.iter().position(|&b| b == b'\n') {
            Some(i) => {
                self.pos += i + 1;
                Ok(&rest[..i])
            }
            None => Err(self.malformed("truncated: a text argument has no end of line")),
        }
    }

    fn line_str(&mut self) -> Result<&'a str> {
        let line = self.line()?;
        std::str::from_utf8(line).map_err(|_| self.malformed("a text argument is not UTF-8"))
    }

    // -- stack ------------------------------------------------------------

    pub(crate) fn push(&mut self, node: Node) -> Id {
        self.arena.push(node);
        let id = self.arena.len() - 1;
        self.stack.push(id);
        id
    }

    fn pop(&mut self) -> Result<Id> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.malformed("stack underflow"));
        }
        Ok(self.stack.pop().expect("checked above"))
    }

    fn top(&self) -> Result<Id> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.malformed("stack underflow"));
        }
        Ok(*self.stack.last().expect("checked above"))
    }

    /// Pops everything down to the last mark, and the mark.
    fn pop_mark(&mut self) -> Result<Vec<Id>> {
        let Some(mark) = self.marks.pop() else {
            return Err(self.malformed("no MARK on the stack"));
        };
        Ok(self.stack.split_off(mark))
    }

    fn memo_put(&mut self, key: u64) -> Result<()> {
        let id = self.top()?;
        self.memo.insert(key, id);
        Ok(())
    }

    fn memo_get(&mut self, key: u64) -> Result<()> {
        match self.memo.get(&key) {
            Some(&id) => {
                self.stack.push(id);
                Ok(())
            }
            None => Err(self.malformed(format!("memo slot {key} is empty"))),
        }
    }

    fn int_from_text(&self, text: &str) -> Result<Node> {
        let t = text.trim();
        if let Ok(v) = t.parse::<i64>() {
            return Ok(Node::Int(v));
        }
        let (neg, digits) = match t.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.malformed(format!("bad integer text {:?}", truncate(text))));
        }
        if digits.len() > MAX_LONG_BYTES * 3 {
            return Err(Error::Limit(crate::error::LimitError::PickleLimit {
                what: "digits of one integer",
                limit: (MAX_LONG_BYTES * 3) as u64,
            }));
        }
        let digits = digits.trim_start_matches('0');
        Ok(if digits.is_empty() {
            Node::Int(0)
        } else if neg {
            Node::BigInt(format!("-{digits}"))
        } else {
            Node::BigInt(digits.to_owned())
        })
    }

    fn long_from_bytes(&self, bytes: &[u8]) -> Result<Node> {
        if bytes.len() <= 8 {
            let neg = bytes.last().is_some_and(|&b| b & 0x80 != 0);
            let mut buf = [if neg { 0xff } else { 0 }; 8];
            buf[..bytes.len()].copy_from_slice(bytes);
            return Ok(Node::Int(i64::from_le_bytes(buf)));
        }
        let text = super::bigint::le_twos_complement_to_decimal(bytes);
        Ok(match text.parse::<i64>() {
            Ok(v) => Node::Int(v),
            Err(_) => Node::BigInt(text),
        })
    }

    fn unicode(&mut self, n: u64) -> Result<()> {
        let n = self.len_checked(n)?;
        let bytes = self.take(n)?;
        let s = std::str::from_utf8(bytes).map_err(|_| {
            Error::Pickle(crate::error::PickleError::UnsupportedPickle {
                what: "a str that is not valid UTF-8 (a lone surrogate?)".into(),
            })
        })?;
        self.push(Node::Str(s.to_owned()));
        Ok(())
    }

    fn bytes(&mut self, n: u64, make: fn(Vec<u8>) -> Node) -> Result<()> {
        let n = self.len_checked(n)?;
        let bytes = self.take(n)?;
        self.push(make(bytes.to_vec()));
        Ok(())
    }

    fn pairs(&self, items: Vec<Id>) -> Result<Vec<(Id, Id)>> {
        if !items.len().is_multiple_of(2) {
            return Err(self.malformed("odd number of items for a dict"));
        }
        Ok(items.chunks_exact(2).map(|c| (c[0], c[1])).collect())
    }

    fn extend(&mut self, list: Id, items: Vec<Id>, op: &str) -> Result<()> {
        match &mut self.arena[list] {
            Node::List(v) => {
                v.extend(items);
                Ok(())
            }
            Node::Opaque(o) => {
                o.items.extend(items);
                Ok(())
            }
            other => {
                let t = other.type_name();
                Err(self.malformed(format!("{op} to a {t}")))
            }
        }
    }

    fn set_items(&mut self, dict: Id, pairs: Vec<(Id, Id)>) -> Result<()> {
        match &mut self.arena[dict] {
            Node::Dict(v) => {
                v.extend(pairs);
                Ok(())
            }
            Node::Opaque(o) => {
                o.entries.extend(pairs);
                Ok(())
            }
            other => {
                let t = other.type_name();
                Err(self.malformed(format!("SETITEM on a {t}")))
            }
        }
    }

    /// Calls node `callable` with `args`: a global of the closed list runs
    /// its constructor of data; anything else is refused or, in opaque
    /// mode, becomes an [`OpaqueNode`] (as does a closed-list call whose
    /// arguments the reader does not take, such as a `datetime` with a
    /// `tzinfo`).
    fn call_node(&mut self, callable: Id, args: Vec<Id>, new_object: bool) -> Result<Node> {
        let refusal = match &self.arena[callable] {
            Node::Global(g) => match self.call(*g, args.clone()) {
                Err(Error::Pickle(crate::error::PickleError::UnsupportedPickle { what }))
                    if self.opaque =>
                {
                    Error::Pickle(crate::error::PickleError::UnsupportedPickle { what })
                }
                other => return other,
            },
            Node::Ref(r) => globals::refused(&r.0, &r.1),
            other => self.malformed(format!("a {} is not callable", other.type_name())),
        };
        if !self.opaque
            || matches!(
                refusal,
                Error::Pickle(crate::error::PickleError::MalformedPickle { .. })
            )
        {
            return Err(refusal);
        }
        self.charge(NODE_COST * (args.len() as u64 + 4))?;
        Ok(Node::Opaque(Box::new(OpaqueNode {
            callable,
            args,
            new_object,
            state: None,
            items: Vec::new(),
            entries: Vec::new(),
        })))
    }

    /// Pushes a node to the arena (not the stack), returning its id.
    fn push_node(&mut self, node: Node) -> Id {
        self.arena.push(node);
        self.arena.len() - 1
    }

    // -- BUILD --------------------------------------------------------------

    fn build(&mut self, target: Id, state: Id) -> Result<()> {
        let node = std::mem::replace(&mut self.arena[target], Node::None);
        let built = match node {
            Node::PendingDType(code) => {
                (self.classes.dtype_setstate)(self, &code, state).map(Node::DType)
            }
            Node::PendingArray(p) => (self.classes.array_setstate)(self, p, state),
            Node::Opaque(mut o) => {
                o.state = Some(state);
                Ok(Node::Opaque(o))
            }
            other => {
                let t = other.type_name();
                self.arena[target] = other;
                return Err(Error::Pickle(
                    crate::error::PickleError::UnsupportedPickle {
                        what: format!("BUILD (setting the state) of a {t}"),
                    },
                ));
            }
        };
        self.arena[target] = built?;
        Ok(())
    }
}

/// What each node of an opaque object is charged, like a value.
const NODE_COST: u64 = std::mem::size_of::<PyValue>() as u64;

/// The node for the global `module name`: the closed list's entry, or a
/// reference that is data until called.
fn global_node(module: &str, name: &str) -> Node {
    match globals::lookup(module, name) {
        Some(g) => Node::Global(g),
        None => {
            let (module, name) = globals::fix_py2_name(module, name);
            Node::Ref(Box::new((module.to_owned(), name.to_owned())))
        }
    }
}
