//! Ctrl-C, SIGTERM and SIGHUP: the run in progress (or a study's point) stops and writes what
//! it has.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Set by Ctrl-C (or SIGTERM, SIGHUP): workers finish their operation in flight and the run
/// writes what it has. In a run of several processes, rank 0 passes it on to every rank.
pub static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// A second signal this soon after the first is the same one delivered twice, not a second
/// Ctrl-C: `timeout -s INT` signals the process and then its whole process group, and a
/// terminal's Ctrl-C can coincide with rank 0's own relay.
const SAME_SIGNAL: Duration = Duration::from_secs(1);

/// When the first stop signal arrived.
static FIRST_SIGNAL: Mutex<Option<Instant>> = Mutex::new(None);

/// Ctrl-C sets [`INTERRUPT`]; a second one, a second or more later, quits at once. Only rank
/// 0 says so: the other ranks of a run stop with it.
pub fn on_interrupt() {
    let speaks = is_first_rank();
    let _ = ctrlc::set_handler(move || {
        let mut first = FIRST_SIGNAL.lock().unwrap_or_else(|e| e.into_inner());
        match *first {
            None => {
                *first = Some(Instant::now());
                INTERRUPT.store(true, Ordering::SeqCst);
                if speaks {
                    eprintln!(
                        "\ndfsbench: interrupted: finishing operations in flight and writing results (Ctrl-C again quits at once)"
                    );
                }
            }
            Some(at) if at.elapsed() < SAME_SIGNAL => {}
            Some(_) => {
                if speaks {
                    eprintln!("\ndfsbench: interrupted twice, quitting without results");
                }
                std::process::exit(130);
            }
        }
    });
    // A --procs child starts with these blocked, so that a signal before this point waits.
    dfsbench_core::cluster::procs::unblock_stop_signals();
}

/// True unless this process is a rank other than 0 of a run of several processes.
fn is_first_rank() -> bool {
    std::env::var_os(dfsbench_core::cluster::procs::ENV).is_none()
        && ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
            .iter()
            .all(|v| std::env::var(v).map_or(true, |r| r == "0"))
}
