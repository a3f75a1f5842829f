//! `blocking::ObjectReader`: the bytes of the object wherever it is read,
//! few requests for both small random reads and long scans, and errors
//! that say what went wrong (never an early end of file).

mod common;

use common::{Fault, Wrapped};
use ndnpy_store::blocking::ObjectReader;
use ndnpy_store::{Config, Location, StoreError};
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt};
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A store with `data` at "o", and a location of it.
fn stored(data: &[u8]) -> (Arc<Wrapped>, Location) {
    let store = Wrapped::new(Arc::new(InMemory::new()));
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(store.inner.put(&"o".into(), data.to_vec().into()))
        .unwrap();
    store.take();
    let at = Location::new(store.clone() as Arc<dyn ObjectStore>, "o");
    (store, at)
}

fn store_error(e: &std::io::Error) -> &StoreError {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<StoreError>())
        .unwrap_or_else(|| panic!("not a store error: {e:?}"))
}

#[test]
fn open_is_one_get_of_64_kib() {
    let data = bytes(1 << 20, 1);
    let (store, at) = stored(&data);
    let r = ObjectReader::open(&at).unwrap();
    assert_eq!(r.len(), 1 << 20);
    assert!(!r.is_empty());
    assert_eq!(r.head(), &data[..64 << 10]);
    assert_eq!(store.take(), (1, 64 << 10));
    // A small object comes whole.
    let (store, at) = stored(b"tiny");
    let r = ObjectReader::open(&at).unwrap();
    assert_eq!((r.len(), r.head()), (4, &b"tiny"[..]));
    assert_eq!(store.take(), (1, 4));
}

#[test]
fn small_random_reads_fetch_64_kib_and_keep_it() {
    let data = bytes(4 << 20, 2);
    let (store, at) = stored(&data);
    let mut r = ObjectReader::open(&at).unwrap();
    store.take();
    let mut buf = [0u8; 22];
    // The head needs no request.
    r.read_exact_at(&mut buf, 100).unwrap();
    assert_eq!(buf, data[100..122]);
    assert_eq!(store.take().0, 0);
    // A zip's end record, then reads just before it: one GET.
    let end = data.len() as u64 - 22;
    r.read_exact_at(&mut buf, end).unwrap();
    assert_eq!(buf, data[end as usize..]);
    assert_eq!(store.take(), (1, 22));
    let mut buf = vec![0u8; 1000];
    r.read_exact_at(&mut buf, 2 << 20).unwrap();
    assert_eq!(buf, data[2 << 20..(2 << 20) + 1000]);
    assert_eq!(store.take(), (1, 64 << 10));
    // Inside what was fetched: no request.
    r.read_exact_at(&mut buf, (2 << 20) + 5000).unwrap();
    assert_eq!(buf, data[(2 << 20) + 5000..(2 << 20) + 6000]);
    assert_eq!(store.take().0, 0);
    // Past the end: an error, and no request.
    let err = r.read_exact_at(&mut buf, end).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    assert_eq!(store.take().0, 0);
}

#[test]
fn a_scan_streams_few_gets_of_each_byte_once() {
    let len = 40 << 20;
    let data = bytes(len, 3);
    let (store, at) = stored(&data);
    let seen = Arc::new(AtomicU64::new(0));
    let counter = seen.clone();
    let config = Config::default().progress(Arc::new(move |n| {
        counter.fetch_add(n, Ordering::SeqCst);
    }));
    let mut r = ObjectReader::open_with(&at, config).unwrap();
    let mut back = Vec::with_capacity(len);
    let mut buf = vec![0u8; 100_000];
    loop {
        let n = r.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        back.extend_from_slice(&buf[..n]);
    }
    assert!(back == data, "the scan read other bytes");
    // 64 KiB, then windows of 1, 2, 4, 8, 16 and the last 9 MiB.
    let (gets, fetched) = store.take();
    assert_eq!(fetched, len as u64);
    assert!(gets <= 7, "{gets} GETs");
    assert_eq!(seen.load(Ordering::SeqCst), len as u64);

    // Positioned reads that continue each other stream too.
    let mut chunk = vec![0u8; 3 << 20];
    for (i, at) in (0..len - chunk.len()).step_by(chunk.len()).enumerate() {
        r.read_exact_at(&mut chunk, at as u64).unwrap();
        assert!(chunk[..] == data[at..at + chunk.len()], "chunk {i}");
    }
    let (gets, fetched) = store.take();
    assert!(gets <= 8, "{gets} GETs");
    assert!(fetched <= len as u64 + (64 << 20), "{fetched}");
}

#[test]
fn seek_and_read_anywhere() {
    let data = bytes(300_000, 4);
    let (_store, at) = stored(&data);
    let mut r = ObjectReader::open(&at).unwrap();
    assert_eq!(r.seek(SeekFrom::End(-10)).unwrap(), 299_990);
    let mut rest = Vec::new();
    r.read_to_end(&mut rest).unwrap();
    assert_eq!(rest, data[299_990..]);
    assert_eq!(r.read(&mut [0u8; 8]).unwrap(), 0);
    assert_eq!(r.seek(SeekFrom::Current(-200_000)).unwrap(), 100_000);
    let mut buf = [0u8; 10];
    r.read_exact(&mut buf).unwrap();
    assert_eq!(buf, data[100_000..100_010]);
    // Positioned reads leave the cursor where it was.
    r.read_exact_at(&mut buf, 7).unwrap();
    assert_eq!(r.stream_position().unwrap(), 100_010);
    assert!(r.seek(SeekFrom::Current(-200_000)).is_err());
    // Past the end: reads give 0.
    r.seek(SeekFrom::Start(1 << 30)).unwrap();
    assert_eq!(r.read(&mut buf).unwrap(), 0);
    assert!(format!("{r:?}").contains("ObjectReader"));
}

#[test]
fn errors_name_what_went_wrong() {
    let data = bytes(2 << 20, 5);
    let (store, at) = stored(&data);
    let mut r = ObjectReader::open(&at).unwrap();
    let mut buf = vec![0u8; 200_000];

    store.with_fault(Fault::Short(2, 1000));
    let err = r.read_exact_at(&mut buf, 1 << 20).unwrap_err();
    assert!(
        matches!(store_error(&err), StoreError::BadAnswer { .. }),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("o: asked for bytes"), "{err}");
    // The next read asks again.
    store.with_fault(Fault::None);
    r.read_exact_at(&mut buf, 1 << 20).unwrap();
    assert!(buf[..] == data[1 << 20..(1 << 20) + 200_000]);

    store.take();
    store.with_fault(Fault::Reset(1, 5000));
    let err = r.read_exact_at(&mut buf, 100_000).unwrap_err();
    assert!(
        matches!(
            store_error(&err),
            StoreError::Store(_) | StoreError::BadAnswer { .. }
        ),
        "{err:?}"
    );

    store.take();
    store.with_fault(Fault::EmptyChunks(1));
    r.read_exact_at(&mut buf, 1_500_000).unwrap();
    assert!(buf[..] == data[1_500_000..1_700_000]);

    store.take();
    store.with_fault(Fault::Replace(1, bytes(2 << 20, 6).into()));
    let err = r.read_exact_at(&mut buf, 700_000).unwrap_err();
    assert!(
        matches!(store_error(&err), StoreError::Changed { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("changed while it was being read"));
}

#[test]
fn a_reader_is_send_and_works_on_another_thread() {
    fn send<T: Send>(_: &T) {}
    let data = bytes(100_000, 7);
    let (_store, at) = stored(&data);
    let mut r = ObjectReader::open(&at).unwrap();
    send(&r);
    let back = std::thread::spawn(move || {
        let mut all = Vec::new();
        r.read_to_end(&mut all).unwrap();
        all
    })
    .join()
    .unwrap();
    assert_eq!(back, data);
}

#[test]
fn local_files_read_whole_and_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let data = bytes(5 << 20, 8);
    std::fs::write(dir.path().join("f.bin"), &data).unwrap();
    let local =
        Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let store = Wrapped::new(local);
    let at = Location::new(store.clone() as Arc<dyn ObjectStore>, "f.bin");
    let mut r = ObjectReader::open(&at).unwrap();
    let mut all = Vec::new();
    r.read_to_end(&mut all).unwrap();
    assert!(all == data);
    let mut buf = vec![0u8; 3 << 20];
    r.read_exact_at(&mut buf, 12345).unwrap();
    assert!(buf[..] == data[12345..12345 + (3 << 20)]);

    // The file cut short under the readers: an error, not fewer bytes,
    // for a reader that has to fetch; the bytes a reader kept (streamed
    // and read, the last 16 MiB) are the first version's.
    let mut fresh = ObjectReader::open(&at).unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("f.bin"))
        .unwrap();
    file.set_len(4 << 20).unwrap();
    drop(file);
    r.read_exact_at(&mut buf, 2 << 20).unwrap();
    assert!(buf[..] == data[2 << 20..5 << 20]);
    let err = fresh.read_exact_at(&mut buf, 2 << 20).unwrap_err();
    assert!(
        matches!(
            store_error(&err),
            StoreError::Changed { .. } | StoreError::BadAnswer { .. }
        ),
        "{err:?}"
    );
}

#[test]
fn reads_that_skip_a_little_stay_on_the_stream() {
    // Reads of 100 KB with gaps of 16 B (data descriptors between zip
    // members, say): a scan, not a request per read.
    let data = bytes(8 << 20, 9);
    let (store, at) = stored(&data);
    let mut r = ObjectReader::open(&at).unwrap();
    store.take();
    let mut buf = vec![0u8; 100_000];
    let mut pos = 70_000u64;
    while pos + buf.len() as u64 <= data.len() as u64 {
        r.read_exact_at(&mut buf, pos).unwrap();
        assert!(buf[..] == data[pos as usize..pos as usize + buf.len()]);
        pos += buf.len() as u64 + 16;
    }
    // The first read's bytes, then windows of 1, 2, 4 and 8 MiB.
    let (gets, _) = store.take();
    assert!(gets <= 5, "{gets} GETs");
}

#[test]
fn interleaved_scans_each_keep_their_stream() {
    // Two members of one archive compared chunk by chunk (`ndnpy diff`),
    // with a small read elsewhere now and then: each scan streams.
    let data = bytes(24 << 20, 10);
    let (store, at) = stored(&data);
    let mut r = ObjectReader::open(&at).unwrap();
    store.take();
    let mut buf = vec![0u8; 32 << 10];
    let mut small = [0u8; 30];
    let (mut a, mut b) = (100_000u64, 12_000_000u64);
    for i in 0..256 {
        for pos in [&mut a, &mut b] {
            r.read_exact_at(&mut buf, *pos).unwrap();
            assert!(buf[..] == data[*pos as usize..*pos as usize + buf.len()]);
            *pos += buf.len() as u64;
        }
        if i % 64 == 0 {
            let at = 23_000_000 - i * 1000;
            r.read_exact_at(&mut small, at).unwrap();
            assert!(small[..] == data[at as usize..at as usize + 30]);
        }
    }
    // Per scan of 8 MiB: its first 64 KiB, then windows of 1, 2, 4 and
    // 8 MiB; and one GET per small read.
    let (gets, _) = store.take();
    assert!(gets <= 2 * 5 + 4, "{gets} GETs");
}
