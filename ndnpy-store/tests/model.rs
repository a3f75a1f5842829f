//! A model test of the remote readers: random sequences of operations
//! (`header`, `member_info`, `read`, `read_any`, `member_npy` and its
//! `read_range`/`read_any`, and `ObjectReader`'s positioned reads, seeks
//! and reads), in any order and members read again, over random archives
//! (stored and deflated members, small ones and ones of more than 4 MiB
//! that the writer deflates in pieces, several dtypes, C and Fortran
//! order), with faults injected into the store's answers (short bodies,
//! empty chunks, resets, failed requests, wrong ranges, a replaced
//! object). The model is the library's own `NpzReader` over the same bytes
//! in memory (and the bytes themselves for `ObjectReader`).
//!
//! Every operation must give the model's value, or, when a fault hit one
//! of its requests, an error that says so (`BadAnswer`, `Changed`, the
//! store's error): never another value, and never an error without a
//! fault. A failing case prints its seed and its operations; rerun one
//! seed with `NDNPY_MODEL_SEED=<seed>`, more with `NDNPY_MODEL_CASES=<n>`.

mod common;

use common::{Fault, Wrapped};
use ndarray::{ArrayD, Axis, IxDyn, Slice};
use ndnpy::{pickle::PyValue, AnyArray, Element, NpzReader, NpzWriter};
use ndnpy_store::blocking::{ObjectReader, RemoteNpz};
use ndnpy_store::{Config, Location, StoreError};
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt};
use std::cell::Cell;
use std::fmt::Debug;
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::sync::Arc;

/// splitmix64: small, seedable, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// The element types members are written with (and read back as).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    F64,
    F32,
    I32,
    U8,
    Bool,
    Str,
    Obj,
}

const KINDS: [Kind; 7] = [
    Kind::F64,
    Kind::F32,
    Kind::I32,
    Kind::U8,
    Kind::Bool,
    Kind::Str,
    Kind::Obj,
];

#[derive(Debug, Clone)]
struct Member {
    name: String,
    kind: Kind,
    compressed: bool,
    big: bool,
}

fn shape(rng: &mut Rng, elements: usize) -> Vec<usize> {
    match rng.below(3) {
        0 => vec![elements],
        1 => {
            let cols = 1 + rng.below(16) as usize;
            vec![elements / cols, cols]
        }
        _ => {
            let b = 1 + rng.below(4) as usize;
            let c = 1 + rng.below(8) as usize;
            vec![elements / (b * c), b, c]
        }
    }
}

/// Adds a random member of `kind`; a `big` one holds over 4 MiB of data
/// that deflate barely shrinks.
fn add_member(w: &mut NpzWriter<Cursor<Vec<u8>>>, rng: &mut Rng, m: &Member) {
    let elements = if m.big {
        600_000
    } else if rng.chance(50) {
        rng.below(3000) as usize
    } else {
        10_000 + rng.below(100_000) as usize
    };
    let dims = shape(rng, elements);
    let n: usize = dims.iter().product();
    let fortran = dims.len() > 1 && rng.chance(30);
    let mut seed = rng.next();
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    macro_rules! add {
        ($values:expr) => {{
            let values: Vec<_> = (0..n).map(|_| $values(next())).collect();
            let a = if fortran {
                let mut rev = dims.clone();
                rev.reverse();
                ArrayD::from_shape_vec(IxDyn(&rev), values)
                    .unwrap()
                    .reversed_axes()
            } else {
                ArrayD::from_shape_vec(IxDyn(&dims), values).unwrap()
            };
            w.add(&m.name, &a).unwrap();
        }};
    }
    match m.kind {
        Kind::F64 => add!(|x: u64| (x >> 11) as f64 / 7.0),
        Kind::F32 => add!(|x: u64| (x >> 40) as f32),
        Kind::I32 => add!(|x: u64| x as i32),
        Kind::U8 => add!(|x: u64| (x % 7) as u8),
        Kind::Bool => add!(|x: u64| x.is_multiple_of(3)),
        Kind::Str => add!(|x: u64| "é".repeat((x % 5) as usize) + &x.to_string()),
        Kind::Obj => add!(|x: u64| match x % 3 {
            0 => PyValue::Int((x >> 3) as i64),
            1 => PyValue::Str(format!("v{x}")),
            _ => PyValue::None,
        }),
    }
}

fn archive(rng: &mut Rng) -> (Vec<Member>, Vec<u8>) {
    let count = 1 + rng.below(5) as usize;
    let big_one = rng.chance(25);
    let mut members = Vec::new();
    let mut w = NpzWriter::new(Cursor::new(Vec::new()));
    for i in 0..count {
        let big = big_one && i == 0;
        let m = Member {
            name: format!("m{i}"),
            kind: if big {
                Kind::F64
            } else {
                KINDS[rng.below(KINDS.len() as u64) as usize]
            },
            compressed: rng.chance(50),
            big,
        };
        w = w.codec(if m.compressed {
            ndnpy::npz::Codec::deflate()
        } else {
            ndnpy::npz::Codec::Stored
        });
        add_member(&mut w, rng, &m);
        members.push(m);
    }
    (members, w.finish_into_inner().unwrap().into_inner())
}

/// The remote readers under test, over a store that injects faults.
struct Remote {
    npz: RemoteNpz,
    object: ObjectReader,
}

fn put(store: &Arc<Wrapped>, bytes: &[u8]) {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(store.inner.put(&"a.npz".into(), bytes.to_vec().into()))
        .unwrap();
}

impl Remote {
    fn open(store: Arc<Wrapped>, config: &Config) -> Result<Remote, StoreError> {
        let at = Location::new(store.clone() as Arc<dyn ObjectStore>, "a.npz");
        let npz = RemoteNpz::open_with(&at, config.clone())?;
        let object = ObjectReader::open_with(&at, config.clone())?;
        Ok(Remote { npz, object })
    }
}

/// Whether an error says what went wrong between us and the store.
fn is_clear(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::BadAnswer { .. } | StoreError::Changed { .. } | StoreError::Store(_)
    )
}

fn io_is_clear(e: &std::io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<StoreError>())
        .is_some_and(is_clear)
}

/// A case's state, for messages.
struct Case {
    seed: u64,
    log: Vec<String>,
    /// Values compared with the model, and errors under faults.
    values: Cell<usize>,
    errors: Cell<usize>,
}

impl Case {
    fn fail(&self, what: String) -> ! {
        panic!(
            "model case {} (NDNPY_MODEL_SEED={}): {what}\noperations:\n  {}",
            self.seed,
            self.seed,
            self.log.join("\n  ")
        );
    }

    /// `got` must be `want`, or a clear error when a fault was set.
    fn judge<V: PartialEq + Debug>(
        &self,
        got: Result<V, StoreError>,
        want: &V,
        faulty: bool,
    ) -> bool {
        match got {
            Ok(v) if &v == want => {
                self.values.set(self.values.get() + 1);
                true
            }
            Ok(v) => self.fail(format!(
                "another value: {:.300}\nwanted: {:.300}",
                format!("{v:?}"),
                format!("{want:?}")
            )),
            Err(e) if faulty && is_clear(&e) => {
                self.errors.set(self.errors.get() + 1);
                false
            }
            Err(e) if faulty => self.fail(format!("an unclear error under a fault: {e:?}")),
            Err(e) => self.fail(format!("an error without a fault: {e:?}")),
        }
    }
}

fn read_typed<T: Element + Send + PartialEq + Debug>(
    case: &Case,
    remote: &RemoteNpz,
    local: &mut NpzReader<Cursor<Vec<u8>>>,
    name: &str,
    faulty: bool,
) -> bool {
    let want = local.read::<T, IxDyn>(name).unwrap();
    case.judge(remote.read::<T, IxDyn>(name), &want, faulty)
}

fn range_typed<T: Element + Send + PartialEq + Debug>(
    case: &Case,
    npy: &ndnpy_store::blocking::RemoteNpy,
    local: &mut NpzReader<Cursor<Vec<u8>>>,
    name: &str,
    rows: std::ops::Range<usize>,
    faulty: bool,
) -> bool {
    let all = local.read::<T, IxDyn>(name).unwrap();
    let axis = if npy.header().fortran_order {
        all.ndim() - 1
    } else {
        0
    };
    let want = all
        .slice_axis(Axis(axis), Slice::from(rows.clone()))
        .to_owned();
    case.judge(npy.read_range::<T, IxDyn>(rows), &want, faulty)
}

macro_rules! by_kind {
    ($kind:expr, $f:ident($($arg:expr),*)) => {
        match $kind {
            Kind::F64 => $f::<f64>($($arg),*),
            Kind::F32 => $f::<f32>($($arg),*),
            Kind::I32 => $f::<i32>($($arg),*),
            Kind::U8 => $f::<u8>($($arg),*),
            Kind::Bool => $f::<bool>($($arg),*),
            Kind::Str => $f::<String>($($arg),*),
            Kind::Obj => $f::<PyValue>($($arg),*),
        }
    };
}

fn fault(rng: &mut Rng, bytes: &[u8]) -> Fault {
    let at = 1 + rng.below(3) as usize;
    match rng.below(7) {
        0 => Fault::Short(at, rng.below(70_000) as usize),
        1 => Fault::EmptyChunks(at),
        2 => Fault::Error(at),
        3 => Fault::Reset(at, rng.below(200_000) as usize),
        4 => Fault::WrongRange(at),
        5 => {
            // Another archive of the same length: a reader that ignored
            // the version would read its bytes at the same offsets.
            let mut other = bytes.to_vec();
            for b in other
                .iter_mut()
                .skip(rng.below(bytes.len() as u64) as usize)
            {
                *b = b.wrapping_add(1);
            }
            Fault::Replace(at, other.into())
        }
        _ => Fault::None,
    }
}

/// A fault as the log shows it (not the replacement's bytes).
fn shown(f: &Fault) -> String {
    match f {
        Fault::Replace(at, _) => format!("Replace({at})"),
        other => format!("{other:?}"),
    }
}

fn harmful(f: &Fault) -> bool {
    !matches!(f, Fault::None | Fault::EmptyChunks(_))
}

/// Runs one case; returns (values compared, errors under faults, GETs).
fn run_case(seed: u64) -> (usize, usize, usize) {
    let mut rng = Rng(seed);
    let (members, bytes) = archive(&mut rng);
    let mut case = Case {
        seed,
        log: vec![format!(
            "archive of {} bytes: {:?}",
            bytes.len(),
            members
                .iter()
                .map(|m| format!(
                    "{} {:?}{}{}",
                    m.name,
                    m.kind,
                    if m.compressed { " deflated" } else { "" },
                    if m.big { " big" } else { "" }
                ))
                .collect::<Vec<_>>()
        )],
        values: Cell::new(0),
        errors: Cell::new(0),
    };
    let mut local = NpzReader::new(Cursor::new(bytes.clone())).unwrap();
    let store = Wrapped::new(Arc::new(InMemory::new()));
    put(&store, &bytes);
    let config = Config::default().chunk_size(1 << 16).concurrency(3);

    // Opening under a fault: the archive, or a clear error (then again).
    // Not a replacement: the first answer says which version is read.
    let f = match fault(&mut rng, &bytes) {
        Fault::Replace(..) => Fault::None,
        f => f,
    };
    let fs = shown(&f);
    case.log.push(format!("open under {fs}"));
    store.take();
    store.with_fault(f.clone());
    let mut remote = match Remote::open(store.clone(), &config) {
        Ok(r) => Some(r),
        Err(e) if harmful(&f) && is_clear(&e) => None,
        Err(e) => case.fail(format!("open: {e:?}")),
    };
    store.with_fault(Fault::None);
    let mut last = 0usize;
    let mut gets = 0;
    let ops = 20 + rng.below(20);
    for _ in 0..ops {
        let r = match remote.take() {
            Some(r) => r,
            None => {
                // After a replacement the object is put back (another
                // version, same bytes) and opened again.
                put(&store, &bytes);
                case.log.push("reopen".into());
                Remote::open(store.clone(), &config).unwrap()
            }
        };
        assert_eq!(r.npz.names(), local.names());
        let f = if rng.chance(40) {
            fault(&mut rng, &bytes)
        } else {
            Fault::None
        };
        let faulty = harmful(&f);
        let fs = shown(&f);
        let replaced = matches!(f, Fault::Replace(..));
        let mut r = r;
        // Members read again often.
        let m = if rng.chance(40) {
            &members[last]
        } else {
            last = rng.below(members.len() as u64) as usize;
            &members[last]
        };
        let name = m.name.as_str();
        let op = rng.below(8);
        store.take();
        store.with_fault(f.clone());
        match op {
            0 => {
                case.log.push(format!("header {name} under {fs}"));
                let want = local.header(name).unwrap();
                case.judge(r.npz.header(name), &want, faulty);
            }
            1 => {
                case.log.push(format!("member_info {name} under {fs}"));
                let want = local.member_info(name).unwrap();
                case.judge(r.npz.member_info(name), &want, faulty);
            }
            2 => {
                case.log.push(format!("read {name} under {fs}"));
                by_kind!(m.kind, read_typed(&case, &r.npz, &mut local, name, faulty));
            }
            3 => {
                case.log.push(format!("read_any {name} under {fs}"));
                let want: AnyArray = local.read_any(name).unwrap();
                case.judge(r.npz.read_any(name), &want, faulty);
            }
            4 => {
                let npy = r.npz.member_npy(name);
                let info = local.member_info(name).unwrap();
                let stored = info.compression == ndnpy::npz::Compression::Stored;
                case.log.push(format!(
                    "member_npy {name} ({}) under {fs}",
                    if stored { "stored" } else { "deflated" }
                ));
                match npy {
                    Ok(npy) if stored => {
                        let want = local.header(name).unwrap();
                        assert_eq!(npy.header(), &want);
                        let len = npy.len();
                        let start = rng.below(len as u64 + 1) as usize;
                        let end = start + rng.below((len - start) as u64 + 1) as usize;
                        let object = m.kind == Kind::Obj;
                        if object || rng.chance(30) {
                            case.log.push("  read_any".into());
                            let want: AnyArray = local.read_any(name).unwrap();
                            case.judge(npy.read_any(), &want, faulty);
                        } else {
                            case.log.push(format!("  read_range {start}..{end}"));
                            by_kind!(
                                m.kind,
                                range_typed(&case, &npy, &mut local, name, start..end, faulty)
                            );
                        }
                    }
                    Ok(_) => case.fail(format!("member_npy of deflated {name}")),
                    Err(StoreError::Range(_)) if !stored => {}
                    Err(e) if faulty && is_clear(&e) => {}
                    Err(e) => case.fail(format!("member_npy {name}: {e:?}")),
                }
            }
            5 => {
                // A positioned read anywhere, past the end sometimes.
                let len = bytes.len() as u64;
                let at = rng.below(len + 10);
                let n = if rng.chance(20) {
                    rng.below(3 << 20)
                } else {
                    rng.below(300)
                } as usize;
                case.log
                    .push(format!("read_exact_at {n} at {at} under {fs}"));
                let mut buf = vec![0u8; n];
                match r.object.read_exact_at(&mut buf, at) {
                    Ok(()) => {
                        let end = at as usize + n;
                        if end > bytes.len() || buf[..] != bytes[at as usize..end] {
                            case.fail("read_exact_at: other bytes".into());
                        }
                        case.values.set(case.values.get() + 1);
                    }
                    Err(e) if at + n as u64 > len => {
                        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
                    }
                    Err(e) if faulty && io_is_clear(&e) => case.errors.set(case.errors.get() + 1),
                    Err(e) => case.fail(format!("read_exact_at: {e:?}")),
                }
            }
            6 => {
                // A seek, then reads of random sizes (a scan, when long).
                let len = bytes.len() as u64;
                let to = rng.below(len + 1);
                let reads = 1 + rng.below(40);
                let size = 1 + rng.below(200_000) as usize;
                case.log
                    .push(format!("seek {to}, {reads} reads of {size} under {fs}"));
                r.object.seek(SeekFrom::Start(to)).unwrap();
                let mut pos = to as usize;
                let mut buf = vec![0u8; size];
                for _ in 0..reads {
                    match r.object.read(&mut buf) {
                        Ok(0) if pos == bytes.len() => break,
                        Ok(0) => case.fail(format!("read gave 0 at {pos}")),
                        Ok(n) => {
                            if buf[..n] != bytes[pos..pos + n] {
                                case.fail(format!("read: other bytes at {pos}"));
                            }
                            case.values.set(case.values.get() + 1);
                            pos += n;
                        }
                        Err(e) if faulty && io_is_clear(&e) => {
                            case.errors.set(case.errors.get() + 1);
                            // The cursor stays where the read started.
                            r.object.seek(SeekFrom::Start(pos as u64)).unwrap();
                            break;
                        }
                        Err(e) => case.fail(format!("read at {pos}: {e:?}")),
                    }
                }
            }
            _ => {
                // The same member twice in a row, both ways.
                case.log.push(format!("read_any twice {name} under {fs}"));
                let want: AnyArray = local.read_any(name).unwrap();
                case.judge(r.npz.read_any(name), &want, faulty);
                store.with_fault(Fault::None);
                case.judge(r.npz.read_any(name), &want, replaced);
            }
        }
        gets += store.take().0;
        store.with_fault(Fault::None);
        // A replaced object stays replaced: open it again.
        remote = if replaced { None } else { Some(r) };
    }
    (case.values.get(), case.errors.get(), gets)
}

#[test]
fn remote_readers_agree_with_the_model() {
    if let Ok(seed) = std::env::var("NDNPY_MODEL_SEED") {
        run_case(seed.parse().expect("a seed"));
        return;
    }
    let cases: u64 = std::env::var("NDNPY_MODEL_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let (mut values, mut errors, mut gets) = (0, 0, 0);
    for i in 0..cases {
        let (v, e, g) = run_case(0x6E64_6E70_7900_0000 + i);
        values += v;
        errors += e;
        gets += g;
    }
    println!("{cases} cases: {values} values as the model's, {errors} clear errors under faults, {gets} GETs");
    // Not vacuous: requests were made, faults hit some of them (fewer
    // since the object reader keeps the bytes it streamed: reads that
    // step back need no GET for a fault to hit; 38 errors in 50 cases).
    assert!(
        values > cases as usize * 10 && errors > cases as usize / 2 && gets > cases as usize * 10
    );
}
