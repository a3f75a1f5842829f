//! pandas' reconstructors, and the time zones their values carry, as
//! entries of the closed list of globals: what `df.to_numpy()` and
//! `series.to_numpy()` hand to `np.save` (`Timestamp`, `Timedelta`, `NaT`,
//! `NA`). Each is recognised by name and turned into plain data
//! ([`PyValue::Timestamp`] and friends); pandas is never imported.
//!
//! | global | what pandas pickles with it | read as |
//! |---|---|---|
//! | `pandas._libs.tslibs.timestamps _unpickle_timestamp` | `Timestamp`: `(value, freq, tz, reso)` (pandas 2+) or `(value, freq, tz)` (1.x, nanoseconds) | [`PyValue::Timestamp`] |
//! | `pandas._libs.tslibs.timedeltas _timedelta_unpickle` | `Timedelta`: `(value, reso)` | [`PyValue::Timedelta`] |
//! | `pandas._libs.tslibs.nattype _nat_unpickle` | `NaT` | [`PyValue::NaT`] |
//! | `pandas NA`, `pandas._libs.missing NA` | `NA`, a bare reference | [`PyValue::NA`] |
//! | `datetime timezone` | fixed-offset zones, UTC among them: `(timedelta[, name])` | [`TimeZone::Fixed`] |
//! | `builtins getattr` of `zoneinfo ZoneInfo` and `'_unpickle'` | named zones: `(key, 1)` | [`TimeZone::Zone`] |

use super::globals::{Global, PandasGlobal};
use super::machine::{value_node, Machine, Node};
use crate::array::pyvalue::foreign::{TimeZone, Timedelta, Timestamp, RESOLUTIONS};
use crate::array::pyvalue::PyValue;
use crate::error::{Error, Result};

fn refuse(what: String) -> Error {
    Error::Pickle(crate::error::PickleError::UnsupportedPickle { what })
}

/// A resolution code as pandas pickles it, as a unit.
fn unit_of(m: &Machine<'_>, id: usize) -> Result<String> {
    let code = int(m, id, "a resolution")?;
    RESOLUTIONS
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, u)| (*u).to_owned())
        .ok_or_else(|| m.malformed(format!("unknown pandas resolution {code}")))
}

fn int(m: &Machine<'_>, id: usize, what: &str) -> Result<i64> {
    match &m.arena[id] {
        Node::Int(n) => Ok(*n),
        other => Err(m.malformed(format!("{what} is a {}, not an int", other.type_name()))),
    }
}

/// Calls pandas global `p` with `args`.
pub(crate) fn call(m: &mut Machine<'_>, p: PandasGlobal, args: &[usize]) -> Result<Node> {
    match p {
        PandasGlobal::UnpickleTimestamp => {
            let (value, freq, tz, unit) = match args {
                [v, f, tz, r] => (*v, *f, *tz, unit_of(m, *r)?),
                [v, f, tz] => (*v, *f, *tz, "ns".to_owned()),
                _ => return Err(m.malformed("_unpickle_timestamp takes three or four arguments")),
            };
            let value = int(m, value, "a Timestamp's value")?;
            if !matches!(m.arena[freq], Node::None) {
                return Err(refuse("a Timestamp with a freq (pandas < 2)".into()));
            }
            let tz = match &m.arena[tz] {
                Node::None => None,
                Node::Value(PyValue::TimeZone(z), cost, _) => {
                    // Each Timestamp holds its own copy of the zone.
                    let (z, cost) = (z.clone(), *cost);
                    m.charge(cost)?;
                    Some(z)
                }
                other => {
                    return Err(refuse(format!(
                        "a Timestamp whose tz is a {} (only datetime.timezone and zoneinfo zones are read)",
                        other.type_name()
                    )))
                }
            };
            Ok(value_node(PyValue::Timestamp(Timestamp {
                value,
                unit,
                tz,
            })))
        }
        PandasGlobal::UnpickleTimedelta => {
            let [value, reso] = args else {
                return Err(m.malformed("_timedelta_unpickle takes two arguments"));
            };
            let value = int(m, *value, "a Timedelta's value")?;
            let unit = unit_of(m, *reso)?;
            Ok(value_node(PyValue::Timedelta(Timedelta { value, unit })))
        }
        PandasGlobal::UnpickleNaT => Ok(value_node(PyValue::NaT)),
        PandasGlobal::NA => Err(m.malformed("pandas.NA is not callable")),
        PandasGlobal::TimeZone => {
            let (offset, name) = match args {
                [o] => (*o, None),
                [o, n] => (*o, Some(*n)),
                _ => return Err(m.malformed("timezone() takes one or two arguments")),
            };
            let Node::Value(PyValue::TimeDelta(offset), ..) = &m.arena[offset] else {
                return Err(m.malformed("timezone() of something not a timedelta"));
            };
            let offset = *offset;
            // Python: strictly between -24 hours and 24 hours.
            let micros = (offset.days as i64 * 86_400 + offset.seconds as i64) * 1_000_000
                + offset.microseconds as i64;
            if micros.abs() >= 86_400_000_000 {
                return Err(m.malformed("a timezone offset of 24 hours or more"));
            }
            let name = match name.map(|n| &m.arena[n]) {
                None => None,
                Some(Node::Str(s)) => Some(s.clone()),
                Some(_) => return Err(m.malformed("a timezone's name is not a str")),
            };
            Ok(value_node(PyValue::TimeZone(TimeZone::Fixed {
                offset,
                name,
            })))
        }
        PandasGlobal::GetAttr => {
            let [owner, attr] = args else {
                return Err(refuse("getattr() with other than two arguments".into()));
            };
            let Node::Str(attr) = &m.arena[*attr] else {
                return Err(refuse("getattr() of a name that is not a str".into()));
            };
            // An attribute of a name is a longer name (how pickles below
            // protocol 4 spell `Outer.Inner`): still data until called.
            let (module, name) = match &m.arena[*owner] {
                Node::Global(Global::Pandas(PandasGlobal::ZoneInfo)) if attr == "_unpickle" => {
                    return Ok(Node::Global(Global::Pandas(PandasGlobal::ZoneInfoUnpickle)))
                }
                Node::Global(g) => match g.as_value() {
                    PyValue::Global { module, name } => (module, name),
                    _ => return Err(refuse(format!("getattr() of {}", g.name()))),
                },
                Node::Ref(r) => (r.0.clone(), r.1.clone()),
                other => {
                    return Err(refuse(format!(
                        "getattr() of a {} (only of names)",
                        other.type_name()
                    )))
                }
            };
            let attr = attr.clone();
            m.charge((module.len() + name.len() + attr.len()) as u64)?;
            Ok(Node::Ref(Box::new((module, format!("{name}.{attr}")))))
        }
        PandasGlobal::ZoneInfo | PandasGlobal::ZoneInfoUnpickle => {
            let key = match args {
                [k] | [k, _] => *k,
                _ => return Err(m.malformed("ZoneInfo takes a key")),
            };
            let Node::Str(key) = &m.arena[key] else {
                return Err(m.malformed("a ZoneInfo key is not a str"));
            };
            let key = key.clone();
            m.charge(key.len() as u64)?;
            Ok(value_node(PyValue::TimeZone(TimeZone::Zone(key))))
        }
    }
}
