//! Reads every member of the archives given (`NpzReader::read_any`) and
//! prints the best and median of 5 passes, for `scripts/bench_inflate.py`
//! (run under `taskset -c 0` for one core):
//!
//! ```text
//! read_suite ARCHIVE...
//! ```

use ndnpy::NpzReader;
use std::time::Instant;

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let mut times = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut elements = 0usize;
        for path in &paths {
            let mut npz = NpzReader::open(path).expect("an archive");
            for name in npz.names() {
                elements += npz
                    .read_any(&name)
                    .expect("a member")
                    .shape()
                    .iter()
                    .product::<usize>();
            }
        }
        times.push(start.elapsed().as_secs_f64());
        assert!(elements > 0);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"best\": {:.6}, \"median\": {:.6}, \"max\": {:.6}}}",
        times[0], times[2], times[4]
    );
}
