//! Reads archives `np.savez_compressed` wrote, for
//! `scripts/bench_numpy_archives.py`: one measurement per run, printed as
//! a JSON line (wall seconds; the script takes peak memory and page
//! faults from the process's resource usage).
//!
//! ```text
//! numpy_archives arrays ARCHIVE          every member, NpzReader::arrays()
//! numpy_archives sequential ARCHIVE      every member, read_any one after another, no plan
//! numpy_archives range ARCHIVE NAME START COUNT [REPEATS]
//!                                        read_range of COUNT rows: the first call (index
//!                                        built) and the median of REPEATS more
//! numpy_archives whole ARCHIVE NAME      read_any of one member
//! ```

use ndarray::IxDyn;
use ndnpy::{AnyArray, NpzReader};
use std::time::Instant;

fn elements(a: &AnyArray) -> usize {
    a.shape().iter().product()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("");
    let path = args.get(1).expect("an archive");
    let start = Instant::now();
    match mode {
        "arrays" => {
            let mut npz = NpzReader::open(path).expect("an archive");
            let mut n = 0;
            for (_, a) in npz.arrays() {
                n += elements(&a.expect("a member"));
            }
            assert!(n > 0);
            println!("{{\"wall\": {:.6}}}", start.elapsed().as_secs_f64());
        }
        "sequential" => {
            let mut npz = NpzReader::open(path).expect("an archive");
            let mut n = 0;
            for name in npz.names() {
                n += elements(&npz.read_any(&name).expect("a member"));
            }
            assert!(n > 0);
            println!("{{\"wall\": {:.6}}}", start.elapsed().as_secs_f64());
        }
        "whole" => {
            let mut npz = NpzReader::open(path).expect("an archive");
            let a = npz.read_any(&args[2]).expect("a member");
            assert!(elements(&a) > 0);
            println!("{{\"wall\": {:.6}}}", start.elapsed().as_secs_f64());
        }
        "range" => {
            let name = &args[2];
            let first: usize = args[3].parse().expect("a row");
            let count: usize = args[4].parse().expect("a count");
            let repeats: usize = args.get(5).map_or(5, |r| r.parse().expect("a count"));
            let mut npz = NpzReader::open(path).expect("an archive");
            let opened = start.elapsed().as_secs_f64();
            let t = Instant::now();
            let a = npz
                .read_range::<f64, IxDyn>(name, first..first + count)
                .expect("rows");
            let cold = t.elapsed().as_secs_f64();
            assert_eq!(a.shape()[0], count);
            let mut times = Vec::new();
            for k in 0..repeats {
                // Another stretch of rows each time, within a few MiB.
                let at = first + (k * 7919) % (count * 8);
                let t = Instant::now();
                let a = npz
                    .read_range::<f64, IxDyn>(name, at..at + count)
                    .expect("rows");
                times.push(t.elapsed().as_secs_f64());
                assert_eq!(a.shape()[0], count);
            }
            times.sort_by(f64::total_cmp);
            println!(
                "{{\"open\": {opened:.6}, \"first\": {cold:.6}, \"indexed\": {:.6}, \"indexed_min\": {:.6}, \"indexed_max\": {:.6}}}",
                times[times.len() / 2],
                times[0],
                times[times.len() - 1]
            );
        }
        _ => panic!("usage: numpy_archives arrays|sequential|whole|range ARCHIVE ..."),
    }
}
