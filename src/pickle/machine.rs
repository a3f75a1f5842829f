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
//! implemented here or in [`super::numpy`].

use super::globals::{self, Global};
use super::numpy::{self, PendingArray};
use super::value::{Date, DateTime, PyValue, TimeDelta};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::header::ReadOptions;
use crate::options::PickleEncoding;

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
            Node::Value(v, ..) => value_type_name(v),
        }
    }
}

/// Python's name for the type of a value, for error messages.
pub(crate) fn value_type_name(v: &PyValue) -> &'static str {
    match v {
        PyValue::None => "NoneType",
        PyValue::Bool(_) => "bool",
        PyValue::Int(_) | PyValue::BigInt(_) => "int",
        PyValue::Float(_) => "float",
        PyValue::Complex(..) => "complex",
        PyValue::Str(_) => "str",
        PyValue::Bytes(_) => "bytes",
        PyValue::ByteArray(_) => "bytearray",
        PyValue::List(_) => "list",
        PyValue::Tuple(_) => "tuple",
        PyValue::Dict(_) => "dict",
        PyValue::Set(_) => "set",
        PyValue::FrozenSet(_) => "frozenset",
        PyValue::Date(_) => "datetime.date",
        PyValue::DateTime(_) => "datetime.datetime",
        PyValue::TimeDelta(_) => "datetime.timedelta",
        PyValue::Decimal(_) => "decimal.Decimal",
        PyValue::Array(_) => "numpy.ndarray",
        PyValue::Scalar(_) => "numpy scalar",
        PyValue::DType(_) => "numpy.dtype",
        PyValue::Global { .. } => "type",
        PyValue::Opaque(_) => "object",
        PyValue::Timestamp(_) => "pandas.Timestamp",
        PyValue::Timedelta(_) => "pandas.Timedelta",
        PyValue::NaT => "pandas.NaT",
        PyValue::NA => "pandas.NA",
        PyValue::TimeZone(_) => "tzinfo",
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
}

impl<'a> Machine<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Self {
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
        }
    }

    /// A machine reading as `options` say (encoding, opaque objects).
    pub(crate) fn with_options(input: &'a [u8], options: &ReadOptions) -> Self {
        let mut m = Self::new(input);
        m.encoding = options.get_pickle_encoding();
        m.opaque = options.get_opaque_objects();
        m
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
        Error::MalformedPickle {
            pos: self.op_pos,
            reason: reason.into(),
        }
    }

    /// Charges `cost` bytes of new values against the budget.
    pub(crate) fn charge(&mut self, cost: u64) -> Result<()> {
        if cost > self.budget {
            return Err(Error::PickleLimit {
                what: "memory for the values it builds (64 bytes per input byte plus 1 MiB)",
                limit: Self::budget_for(self.input.len()),
            });
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

    // -- running ----------------------------------------------------------

    /// Runs the pickle to its `STOP` and returns the id of the result.
    pub(crate) fn run(&mut self) -> Result<Id> {
        loop {
            self.op_pos = self.pos;
            let op = self.byte()?;
            match op {
                b'.' => {
                    let id = self.pop()?;
                    if !self.marks.is_empty() {
                        return Err(self.malformed("STOP inside an unclosed MARK"));
                    }
                    return Ok(id);
                }
                0x80 => {
                    let proto = self.byte()?;
                    if proto > 5 {
                        return Err(Error::UnsupportedPickle {
                            what: format!("pickle protocol {proto}"),
                        });
                    }
                }
                0x95 => {
                    // FRAME: a length hint for buffered readers; the bytes
                    // that follow are ordinary opcodes.
                    let n = self.u64()?;
                    self.len_checked(n)?;
                }
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    if self.marks.last() == Some(&self.stack.len()) {
                        self.marks.pop();
                    } else {
                        self.pop()?;
                    }
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'2' => {
                    let id = self.top()?;
                    self.stack.push(id);
                }
                b'N' => {
                    self.push(Node::None);
                }
                0x88 => {
                    self.push(Node::Bool(true));
                }
                0x89 => {
                    self.push(Node::Bool(false));
                }
                b'J' => {
                    let v = self.u32()? as i32;
                    self.push(Node::Int(v as i64));
                }
                b'K' => {
                    let v = self.byte()?;
                    self.push(Node::Int(v as i64));
                }
                b'M' => {
                    let v = self.u16()?;
                    self.push(Node::Int(v as i64));
                }
                b'I' => {
                    let text = self.line_str()?;
                    let node = match text {
                        "00" => Node::Bool(false),
                        "01" => Node::Bool(true),
                        _ => self.int_from_text(text)?,
                    };
                    self.push(node);
                }
                b'L' => {
                    let text = self.line_str()?;
                    let text = text.strip_suffix('L').unwrap_or(text);
                    let node = self.int_from_text(text)?;
                    self.push(node);
                }
                0x8a => {
                    let n = self.byte()? as usize;
                    let bytes = self.take(n)?;
                    let node = self.long_from_bytes(bytes)?;
                    self.push(node);
                }
                0x8b => {
                    let n = self.u32()? as i32;
                    if n < 0 {
                        return Err(self.malformed("LONG4 with a negative length"));
                    }
                    if n as usize > MAX_LONG_BYTES {
                        return Err(Error::PickleLimit {
                            what: "bytes of one integer",
                            limit: MAX_LONG_BYTES as u64,
                        });
                    }
                    let n = self.len_checked(n as u64)?;
                    let bytes = self.take(n)?;
                    let node = self.long_from_bytes(bytes)?;
                    self.push(node);
                }
                b'G' => {
                    let b = self.take(8)?;
                    let v = f64::from_be_bytes(b.try_into().expect("8 bytes"));
                    self.push(Node::Float(v));
                }
                b'F' => {
                    let text = self.line_str()?;
                    let v = parse_py_float(text)
                        .ok_or_else(|| self.malformed(format!("bad float text {text:?}")))?;
                    self.push(Node::Float(v));
                }
                // Text strings.
                b'X' => {
                    let n = self.u32()? as u64;
                    self.unicode(n)?;
                }
                0x8c => {
                    let n = self.byte()? as u64;
                    self.unicode(n)?;
                }
                0x8d => {
                    let n = self.u64()?;
                    self.unicode(n)?;
                }
                b'V' => {
                    let line = self.line()?;
                    let s = raw_unicode_escape(line)
                        .ok_or_else(|| self.malformed("bad raw-unicode-escape text"))?;
                    self.push(Node::Str(s));
                }
                // Byte strings.
                b'B' => {
                    let n = self.u32()? as u64;
                    self.bytes(n, Node::Bytes)?;
                }
                b'C' => {
                    let n = self.byte()? as u64;
                    self.bytes(n, Node::Bytes)?;
                }
                0x8e => {
                    let n = self.u64()?;
                    self.bytes(n, Node::Bytes)?;
                }
                0x96 => {
                    let n = self.u64()?;
                    self.bytes(n, Node::ByteArray)?;
                }
                // Python 2 strings.
                b'T' => {
                    let n = self.u32()? as i32;
                    if n < 0 {
                        return Err(self.malformed("BINSTRING with a negative length"));
                    }
                    self.bytes(n as u64, Node::Py2Str)?;
                }
                b'U' => {
                    let n = self.byte()? as u64;
                    self.bytes(n, Node::Py2Str)?;
                }
                b'S' => {
                    let line = self.line()?;
                    let bytes = py2_string_literal(line)
                        .ok_or_else(|| self.malformed("bad STRING literal"))?;
                    self.push(Node::Py2Str(bytes));
                }
                // Containers.
                b')' => {
                    self.push(Node::Tuple(Vec::new()));
                }
                0x85..=0x87 => {
                    let n = (op - 0x84) as usize;
                    let mut items = Vec::with_capacity(n);
                    for _ in 0..n {
                        items.push(self.pop()?);
                    }
                    items.reverse();
                    self.push(Node::Tuple(items));
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.push(Node::Tuple(items));
                }
                b']' => {
                    self.push(Node::List(Vec::new()));
                }
                b'l' => {
                    let items = self.pop_mark()?;
                    self.push(Node::List(items));
                }
                b'}' => {
                    self.push(Node::Dict(Vec::new()));
                }
                b'd' => {
                    let items = self.pop_mark()?;
                    let pairs = self.pairs(items)?;
                    self.push(Node::Dict(pairs));
                }
                0x8f => {
                    self.push(Node::Set(Vec::new()));
                }
                0x91 => {
                    let items = self.pop_mark()?;
                    self.push(Node::FrozenSet(items));
                }
                b'a' => {
                    let item = self.pop()?;
                    let list = self.top()?;
                    self.extend(list, vec![item], "APPEND")?;
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    let list = self.top()?;
                    self.extend(list, items, "APPENDS")?;
                }
                0x90 => {
                    let items = self.pop_mark()?;
                    let set = self.top()?;
                    match &mut self.arena[set] {
                        Node::Set(members) => members.extend(items),
                        other => {
                            let t = other.type_name();
                            return Err(self.malformed(format!("ADDITEMS to a {t}")));
                        }
                    }
                }
                b's' => {
                    let value = self.pop()?;
                    let key = self.pop()?;
                    let dict = self.top()?;
                    self.set_items(dict, vec![(key, value)])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    let pairs = self.pairs(items)?;
                    let dict = self.top()?;
                    self.set_items(dict, pairs)?;
                }
                // Memo.
                b'p' => {
                    let text = self.line_str()?;
                    let key = text
                        .parse::<u64>()
                        .map_err(|_| self.malformed(format!("bad PUT index {text:?}")))?;
                    self.memo_put(key)?;
                }
                b'q' => {
                    let key = self.byte()? as u64;
                    self.memo_put(key)?;
                }
                b'r' => {
                    let key = self.u32()? as u64;
                    self.memo_put(key)?;
                }
                0x94 => {
                    let key = self.memo.len() as u64;
                    self.memo_put(key)?;
                }
                b'g' => {
                    let text = self.line_str()?;
                    let key = text
                        .parse::<u64>()
                        .map_err(|_| self.malformed(format!("bad GET index {text:?}")))?;
                    self.memo_get(key)?;
                }
                b'h' => {
                    let key = self.byte()? as u64;
                    self.memo_get(key)?;
                }
                b'j' => {
                    let key = self.u32()? as u64;
                    self.memo_get(key)?;
                }
                // Globals and calls.
                b'c' => {
                    let module = self.line_str()?;
                    let name = self.line_str()?;
                    let node = global_node(module, name);
                    self.push(node);
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    let (Node::Str(module), Node::Str(name)) =
                        (&self.arena[module], &self.arena[name])
                    else {
                        return Err(self.malformed("STACK_GLOBAL needs two str"));
                    };
                    let node = global_node(module, name);
                    self.push(node);
                }
                b'i' => {
                    let module = self.line_str()?;
                    let name = self.line_str()?;
                    let node = global_node(module, name);
                    let args = self.pop_mark()?;
                    let callable = self.push_node(node);
                    let result = self.call_node(callable, args, false)?;
                    self.push(result);
                }
                b'o' => {
                    let mut items = self.pop_mark()?;
                    if items.is_empty() {
                        return Err(self.malformed("OBJ without a class"));
                    }
                    let args = items.split_off(1);
                    let result = self.call_node(items[0], args, false)?;
                    self.push(result);
                }
                b'R' | 0x81 => {
                    let args = self.pop()?;
                    let callable = self.pop()?;
                    let Node::Tuple(args) = &self.arena[args] else {
                        let t = self.arena[args].type_name();
                        return Err(
                            self.malformed(format!("call arguments are a {t}, not a tuple"))
                        );
                    };
                    // NEWOBJ is `cls.__new__(cls, *args)`: the same as a call
                    // for the immutable types here, an empty object for the
                    // mutable ones (their `__init__` would fill them).
                    let empty = matches!(
                        self.arena[callable],
                        Node::Global(Global::Set | Global::ByteArray)
                    );
                    let args = if op == 0x81 && empty {
                        Vec::new()
                    } else {
                        args.clone()
                    };
                    let result = self.call_node(callable, args, op == 0x81)?;
                    self.push(result);
                }
                0x92 => {
                    let kwargs = self.pop()?;
                    let args = self.pop()?;
                    let callable = self.pop()?;
                    match &self.arena[kwargs] {
                        Node::Dict(d) if d.is_empty() => {}
                        _ => {
                            return Err(Error::UnsupportedPickle {
                                what: "NEWOBJ_EX with keyword arguments".into(),
                            })
                        }
                    }
                    let Node::Tuple(args) = &self.arena[args] else {
                        return Err(self.malformed("NEWOBJ_EX arguments are not a tuple"));
                    };
                    let args = args.clone();
                    let result = self.call_node(callable, args, true)?;
                    self.push(result);
                }
                b'b' => {
                    let state = self.pop()?;
                    let target = self.top()?;
                    self.build(target, state)?;
                }
                0x82..=0x84 => {
                    return Err(Error::UnsupportedPickle {
                        what: "the copyreg extension registry (EXT1/EXT2/EXT4)".into(),
                    })
                }
                b'P' | b'Q' => {
                    return Err(Error::UnsupportedPickle {
                        what: "persistent ids (PERSID/BINPERSID)".into(),
                    })
                }
                0x97 | 0x98 => {
                    return Err(Error::UnsupportedPickle {
                        what: "out-of-band buffers (NEXT_BUFFER/READONLY_BUFFER)".into(),
                    })
                }
                other => {
                    return Err(self.malformed(format!("unknown opcode 0x{other:02x}")));
                }
            }
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
            return Err(Error::PickleLimit {
                what: "digits of one integer",
                limit: (MAX_LONG_BYTES * 3) as u64,
            });
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
        let s = std::str::from_utf8(bytes).map_err(|_| Error::UnsupportedPickle {
            what: "a str that is not valid UTF-8 (a lone surrogate?)".into(),
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
                Err(Error::UnsupportedPickle { what }) if self.opaque => {
                    Error::UnsupportedPickle { what }
                }
                other => return other,
            },
            Node::Ref(r) => globals::refused(&r.0, &r.1),
            other => self.malformed(format!("a {} is not callable", other.type_name())),
        };
        if !self.opaque || matches!(refusal, Error::MalformedPickle { .. }) {
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

    // -- calls --------------------------------------------------------------

    /// Applies one of the whitelisted globals to `args`.
    fn call(&mut self, g: Global, args: Vec<Id>) -> Result<Node> {
        match g {
            Global::Reconstruct => numpy::reconstruct(self, &args),
            Global::FromBuffer => numpy::frombuffer(self, &args),
            Global::Scalar => numpy::scalar(self, &args),
            Global::DType => numpy::dtype_new(self, &args),
            Global::NdArray => Err(self
                .malformed("numpy.ndarray is only accepted as the first argument of _reconstruct")),
            Global::Encode => self.codecs_encode(&args),
            Global::Pandas(p) => super::pandas::call(self, p, &args),
            Global::StringDType => super::stringdtype::dtype_new(self, &args),
            Global::Set | Global::FrozenSet => {
                let items = match args.as_slice() {
                    [] => Vec::new(),
                    [x] => self.iterable(*x)?,
                    _ => return Err(self.malformed("set() takes at most one argument")),
                };
                let mut members = Vec::with_capacity(items.len());
                for id in items {
                    let v = self.materialize(id)?;
                    check_hashable(self, &v)?;
                    members.push(v);
                }
                let v = if g == Global::Set {
                    PyValue::Set(members)
                } else {
                    PyValue::FrozenSet(members)
                };
                Ok(value_node(v))
            }
            Global::ByteArray => {
                let bytes = match args.as_slice() {
                    [] => Vec::new(),
                    [x] => match &self.arena[*x] {
                        Node::Bytes(b) | Node::ByteArray(b) => b.clone(),
                        _ => return Err(self.malformed("bytearray() of something not bytes")),
                    },
                    [s, enc] => {
                        let text = self.str_arg(*s, "bytearray")?;
                        let enc = self.str_arg(*enc, "bytearray")?;
                        self.encode_latin1(&text, &enc)?
                    }
                    _ => return Err(self.malformed("bytearray() takes at most two arguments")),
                };
                let cost = bytes.len() as u64;
                self.charge(cost)?;
                Ok(Node::ByteArray(bytes))
            }
            Global::Bytes => match args.as_slice() {
                [] => Ok(Node::Bytes(Vec::new())),
                [x] => match &self.arena[*x] {
                    Node::Bytes(b) | Node::ByteArray(b) => {
                        let b = b.clone();
                        self.charge(b.len() as u64)?;
                        Ok(Node::Bytes(b))
                    }
                    _ => Err(self.malformed("bytes() of something not bytes")),
                },
                _ => Err(self.malformed("bytes() from a pickle takes at most one argument")),
            },
            Global::Complex => {
                let part = |m: &Self, id: Id| -> Result<f64> {
                    match &m.arena[id] {
                        Node::Float(x) => Ok(*x),
                        Node::Int(n) => Ok(*n as f64),
                        Node::Bool(b) => Ok(*b as u8 as f64),
                        other => Err(m.malformed(format!("complex() of a {}", other.type_name()))),
                    }
                };
                let (re, im) = match args.as_slice() {
                    [] => (0.0, 0.0),
                    [r] => (part(self, *r)?, 0.0),
                    [r, i] => (part(self, *r)?, part(self, *i)?),
                    _ => return Err(self.malformed("complex() takes at most two arguments")),
                };
                Ok(value_node(PyValue::Complex(re, im)))
            }
            Global::Date => {
                let [state] = args.as_slice() else {
                    return Err(self.malformed("date() from a pickle takes one bytes argument"));
                };
                let b = self.state_bytes(*state, 4, "date")?;
                let date = self.date_from(&b)?;
                Ok(value_node(PyValue::Date(date)))
            }
            Global::DateTime => {
                let (state, tz) = match args.as_slice() {
                    [s] => (*s, None),
                    [s, tz] => (*s, Some(*tz)),
                    _ => return Err(self.malformed("datetime() from a pickle takes a bytes state")),
                };
                if let Some(tz) = tz {
                    if !matches!(self.arena[tz], Node::None) {
                        return Err(Error::UnsupportedPickle {
                            what: "a datetime with a tzinfo (only naive datetimes are read)".into(),
                        });
                    }
                }
                let b = self.state_bytes(state, 10, "datetime")?;
                let fold = b[2] >> 7;
                let date = self.date_from(&[b[0], b[1], b[2] & 0x7f, b[3]])?;
                let (hour, minute, second) = (b[4], b[5], b[6]);
                let microsecond = ((b[7] as u32) << 16) | ((b[8] as u32) << 8) | b[9] as u32;
                if hour > 23 || minute > 59 || second > 59 || microsecond > 999_999 {
                    return Err(self.malformed("datetime state out of range"));
                }
                Ok(value_node(PyValue::DateTime(DateTime {
                    date,
                    hour,
                    minute,
                    second,
                    microsecond,
                    fold,
                })))
            }
            Global::TimeDelta => {
                let mut parts = [0i128; 3];
                if args.len() > 3 {
                    return Err(self.malformed("timedelta() takes at most three arguments"));
                }
                for (slot, id) in parts.iter_mut().zip(&args) {
                    *slot = match &self.arena[*id] {
                        Node::Int(n) => *n as i128,
                        Node::Bool(b) => *b as i128,
                        _ => {
                            return Err(self.malformed("timedelta() arguments must be ints"));
                        }
                    };
                }
                let total = parts[0] * 86_400_000_000 + parts[1] * 1_000_000 + parts[2];
                let days = total.div_euclid(86_400_000_000);
                let rest = total.rem_euclid(86_400_000_000);
                if days.abs() > 999_999_999 {
                    return Err(self.malformed("timedelta out of range"));
                }
                Ok(value_node(PyValue::TimeDelta(TimeDelta {
                    days: days as i32,
                    seconds: (rest / 1_000_000) as u32,
                    microseconds: (rest % 1_000_000) as u32,
                })))
            }
            Global::Decimal => {
                let [s] = args.as_slice() else {
                    return Err(self.malformed("Decimal() from a pickle takes one str"));
                };
                let text = self.str_arg(*s, "Decimal")?;
                if !is_decimal_text(&text) {
                    return Err(self.malformed(format!("{:?} is not a Decimal", truncate(&text))));
                }
                Ok(value_node(PyValue::Decimal(text)))
            }
        }
    }

    /// `_codecs.encode(str, 'latin1')`: how protocols 0 to 2 spell bytes.
    fn codecs_encode(&mut self, args: &[Id]) -> Result<Node> {
        let (s, enc) = match args {
            [s] => (*s, None),
            [s, e] => (*s, Some(*e)),
            _ => return Err(self.malformed("_codecs.encode takes one or two arguments")),
        };
        let text = self.str_arg(s, "_codecs.encode")?;
        let enc = match enc {
            Some(e) => self.str_arg(e, "_codecs.encode")?,
            None => "utf-8".to_owned(),
        };
        let bytes = self.encode_latin1(&text, &enc)?;
        Ok(Node::Bytes(bytes))
    }

    fn encode_latin1(&self, text: &str, encoding: &str) -> Result<Vec<u8>> {
        match encoding.to_ascii_lowercase().replace('_', "-").as_str() {
            "latin1" | "latin-1" | "iso-8859-1" | "iso8859-1" | "l1" => text
                .chars()
                .map(|c| u8::try_from(c as u32).ok())
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| self.malformed("text not encodable as latin-1")),
            "utf-8" | "utf8" => Ok(text.as_bytes().to_vec()),
            other => Err(Error::UnsupportedPickle {
                what: format!("_codecs.encode to {:?}", truncate(other)),
            }),
        }
    }

    /// A `str` argument (a Python 2 `str` is decoded as latin-1).
    fn str_arg(&self, id: Id, what: &str) -> Result<String> {
        match &self.arena[id] {
            Node::Str(s) => Ok(s.clone()),
            Node::Py2Str(b) => Ok(b.iter().map(|&c| c as char).collect()),
            other => Err(self.malformed(format!("{what}() of a {}, not a str", other.type_name()))),
        }
    }

    /// The bytes state of a `date`/`datetime` (bytes, or a latin-1 str as
    /// Python 2 and protocol-0 pickles spell it).
    fn state_bytes(&self, id: Id, len: usize, what: &str) -> Result<Vec<u8>> {
        let bytes = match &self.arena[id] {
            Node::Bytes(b) | Node::Py2Str(b) => b.clone(),
            Node::Str(s) => self.encode_latin1(s, "latin1")?,
            other => {
                return Err(self.malformed(format!(
                    "{what}() state is a {}, not bytes",
                    other.type_name()
                )))
            }
        };
        if bytes.len() != len {
            return Err(self.malformed(format!(
                "{what}() state has {} bytes, not {len}",
                bytes.len()
            )));
        }
        Ok(bytes)
    }

    fn date_from(&self, b: &[u8]) -> Result<Date> {
        let year = u16::from_be_bytes([b[0], b[1]]);
        let (month, day) = (b[2], b[3]);
        let leap =
            year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
        let days_in_month = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => 0,
        };
        if !(1..=9999).contains(&year) || day == 0 || day > days_in_month {
            return Err(self.malformed(format!("invalid date {year}-{month}-{day}")));
        }
        Ok(Date { year, month, day })
    }

    /// The items of a list, tuple, set or frozenset argument.
    pub(crate) fn iterable(&self, id: Id) -> Result<Vec<Id>> {
        match &self.arena[id] {
            Node::List(v) | Node::Tuple(v) | Node::Set(v) | Node::FrozenSet(v) => Ok(v.clone()),
            other => Err(self.malformed(format!(
                "expected a list or tuple, found a {}",
                other.type_name()
            ))),
        }
    }

    // -- BUILD --------------------------------------------------------------

    fn build(&mut self, target: Id, state: Id) -> Result<()> {
        let node = std::mem::replace(&mut self.arena[target], Node::None);
        let built = match node {
            Node::PendingDType(code) => numpy::dtype_setstate(self, &code, state).map(Node::DType),
            Node::PendingArray(p) => numpy::array_setstate(self, p, state),
            Node::Opaque(mut o) => {
                o.state = Some(state);
                Ok(Node::Opaque(o))
            }
            other => {
                let t = other.type_name();
                self.arena[target] = other;
                return Err(Error::UnsupportedPickle {
                    what: format!("BUILD (setting the state) of a {t}"),
                });
            }
        };
        self.arena[target] = built?;
        Ok(())
    }

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
    fn materialize_opaque(&mut self, id: Id, depth: usize) -> Result<PyValue> {
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
        Ok(PyValue::Opaque(Box::new(super::foreign::Opaque {
            callable,
            args,
            new_object,
            state,
            items,
            entries: pairs,
        })))
    }

    fn materialize_at(&mut self, id: Id, depth: usize) -> Result<PyValue> {
        if depth >= MAX_DEPTH {
            return Err(Error::PickleLimit {
                what: "nesting depth of values",
                limit: MAX_DEPTH as u64,
            });
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
                    Some(at) => return Err(Error::Py2StrNotAscii { byte: b[at] }),
                },
            },
            Node::Bytes(b) => (PyValue::Bytes(b.clone()), b.len() as u64),
            Node::ByteArray(b) => (PyValue::ByteArray(b.clone()), b.len() as u64),
            Node::DType(d) => (PyValue::DType(d.clone()), 64),
            Node::PendingDType(code) => {
                let d = numpy::dtype_without_state(self, code)?;
                (PyValue::DType(d), 64)
            }
            Node::Value(v, cost, vdepth) => {
                // Values built by a call (arrays above all) count their own
                // depth, so nesting arrays in arrays cannot pass the limit.
                if depth + vdepth >= MAX_DEPTH {
                    return Err(Error::PickleLimit {
                        what: "nesting depth of values",
                        limit: MAX_DEPTH as u64,
                    });
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
                return Err(Error::UnsupportedPickle {
                    what: "a StringDType dtype object as a value".into(),
                })
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
            crate::any::AnyArray::Object(x) => many(&mut x.iter()),
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
            crate::any::AnyArray::Object(x) => {
                x.iter().map(|e| NODE + cost_of(e)).sum::<u64>() + ARRAY_COST
            }
            other => {
                other.dtype().itemsize().unwrap_or(0) as u64
                    * other.shape().iter().product::<usize>() as u64
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
        PyValue::Timestamp(t) => 16 + t.unit.len() as u64,
        PyValue::Timedelta(t) => t.unit.len() as u64,
        PyValue::DType(_) => 64,
        _ => 0,
    }
}

/// Python refuses unhashable dict keys and set members (`TypeError`).
fn check_hashable(m: &Machine<'_>, v: &PyValue) -> Result<()> {
    match v {
        PyValue::List(_)
        | PyValue::Dict(_)
        | PyValue::Set(_)
        | PyValue::ByteArray(_)
        | PyValue::Array(_) => Err(m.malformed(format!(
            "unhashable type '{}' as a dict key or set member",
            value_type_name(v)
        ))),
        PyValue::Tuple(items) => items.iter().try_for_each(|x| check_hashable(m, x)),
        _ => Ok(()),
    }
}

fn truncate(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_owned(),
    }
}

/// Python's `float()` of protocol 0's `F` text (repr of a float).
fn parse_py_float(text: &str) -> Option<f64> {
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "nan" | "+nan" | "-nan" => return Some(f64::NAN),
        "inf" | "+inf" | "infinity" | "+infinity" => return Some(f64::INFINITY),
        "-inf" | "-infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    if t.bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        t.parse().ok()
    } else {
        None
    }
}

/// Decodes protocol 0's `UNICODE` argument (`raw-unicode-escape`: UTF-8
/// text, where `\uXXXX` and `\UXXXXXXXX` stand for code points).
fn raw_unicode_escape(line: &[u8]) -> Option<String> {
    // Python writes the raw-unicode-escape codec: bytes are latin-1, and
    // only `\u`/`\U` escapes are special.
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        if c == b'\\' && i + 1 < line.len() && matches!(line[i + 1], b'u' | b'U') {
            let n = if line[i + 1] == b'u' { 4 } else { 8 };
            let hex = line.get(i + 2..i + 2 + n)?;
            let hex = std::str::from_utf8(hex).ok()?;
            let code = u32::from_str_radix(hex, 16).ok()?;
            out.push(char::from_u32(code)?);
            i += 2 + n;
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    Some(out)
}

/// Decodes protocol 0's `STRING` argument: a quoted Python 2 string literal
/// (`'abc'`, `"a'b"`, with `\x..`, `\n`, octal and the other escapes).
fn py2_string_literal(line: &[u8]) -> Option<Vec<u8>> {
    let q = *line.first()?;
    if !(q == b'\'' || q == b'"') || line.len() < 2 || *line.last()? != q {
        return None;
    }
    let body = &line[1..line.len() - 1];
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let e = *body.get(i + 1)?;
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'\\' => out.push(b'\\'),
            b'\'' => out.push(b'\''),
            b'"' => out.push(b'"'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'\n' => {}
            b'x' => {
                let hex = std::str::from_utf8(body.get(i..i + 2)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b'0'..=b'7' => {
                let mut v = (e - b'0') as u32;
                let mut k = 0;
                while k < 2 && i < body.len() && (b'0'..=b'7').contains(&body[i]) {
                    v = v * 8 + (body[i] - b'0') as u32;
                    i += 1;
                    k += 1;
                }
                out.push(v as u8);
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// `Decimal(str)` accepts: sign, digits with an optional point and
/// exponent, or `Infinity`/`Inf`/`NaN`/`sNaN` (with payload digits).
fn is_decimal_text(s: &str) -> bool {
    let t = s.trim();
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    let lower = t.to_ascii_lowercase();
    if lower == "infinity" || lower == "inf" {
        return true;
    }
    for p in ["snan", "nan"] {
        if let Some(payload) = lower.strip_prefix(p) {
            return payload.bytes().all(|b| b.is_ascii_digit());
        }
    }
    let (mantissa, exp) = match lower.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (lower.as_str(), None),
    };
    let mut digits = 0;
    let mut dots = 0;
    for b in mantissa.bytes() {
        match b {
            b'0'..=b'9' | b'_' => digits += 1,
            b'.' => dots += 1,
            _ => return false,
        }
    }
    if digits == 0 || dots > 1 {
        return false;
    }
    match exp {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['+', '-']).unwrap_or(e);
            !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
        }
    }
}
