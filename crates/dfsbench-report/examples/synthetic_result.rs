//! Write a synthetic, schema-valid result of a long run with many workers (see
//! `dfsbench_report::synthetic`), for bench/report-speed.sh:
//!
//! ```sh
//! cargo run --release -p dfsbench-report --example synthetic_result -- OUT.json [SECONDS] [WORKERS]
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: synthetic_result OUT.json [SECONDS (3600)] [WORKERS (256)]");
        return ExitCode::from(2);
    };
    let num = |i: usize, default: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let result = dfsbench_report::synthetic::long_run(num(1, 3600), num(2, 256));
    let text = serde_json::to_string(&result).expect("a result is JSON");
    if let Err(e) = std::fs::write(out, text) {
        eprintln!("cannot write {out}: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
