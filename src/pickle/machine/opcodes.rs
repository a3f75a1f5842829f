//! The opcodes: one pass over the pickle, building nodes on the stack.

use super::text::{parse_py_float, py2_string_literal, raw_unicode_escape};
use super::*;

impl<'a> Machine<'a> {
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
                        return Err(Error::Pickle(
                            crate::error::PickleError::UnsupportedPickle {
                                what: format!("pickle protocol {proto}"),
                            },
                        ));
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
                        return Err(Error::Limit(crate::error::LimitError::PickleLimit {
                            what: "bytes of one integer",
                            limit: MAX_LONG_BYTES as u64,
                        }));
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
                            return Err(Error::Pickle(
                                crate::error::PickleError::UnsupportedPickle {
                                    what: "NEWOBJ_EX with keyword arguments".into(),
                                },
                            ))
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
                    return Err(Error::Pickle(
                        crate::error::PickleError::UnsupportedPickle {
                            what: "the copyreg extension registry (EXT1/EXT2/EXT4)".into(),
                        },
                    ))
                }
                b'P' | b'Q' => {
                    return Err(Error::Pickle(
                        crate::error::PickleError::UnsupportedPickle {
                            what: "persistent ids (PERSID/BINPERSID)".into(),
                        },
                    ))
                }
                0x97 | 0x98 => {
                    return Err(Error::Pickle(
                        crate::error::PickleError::UnsupportedPickle {
                            what: "out-of-band buffers (NEXT_BUFFER/READONLY_BUFFER)".into(),
                        },
                    ))
                }
                other => {
                    return Err(self.malformed(format!("unknown opcode 0x{other:02x}")));
                }
            }
        }
    }
}
