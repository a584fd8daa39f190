//! Null tests: what the hardware under a run can do at most, measured before the jobs so a
//! result can be read against it. Local disk throughput (write + fsync, then read with the
//! page cache dropped for the file), the TCP connect time to a network target's endpoint,
//! where the target's nodes are known their connect time, ping and bandwidth each way
//! (`nodes`), and the round trip (a stat of a new name, which no client cache answers) and
//! bandwidth to the target itself (write of one blob, read with its cached pages dropped, and
//! read again from the client's cache), all bounded to a few seconds and inside the run's own
//! directory or a temporary file.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::Duration;

use dfsbench_backends::clock::Instant;

use rand::RngCore;

use dfsbench_backends::{AlignedBuf, Client, FileOpts, SharedData, Source, Storage};

use crate::executor::Executor;
use dfsbench_result::{Bandwidth, NodeBandwidth, NullTests, RoundTrips};
use nodes::KnownNodes;

mod icmp;
pub mod nodes;

/// Bytes of the local disk test file and of the blob written to the target.
const LOCAL_BYTES: usize = 16 << 20;
const BLOB_BYTES: u64 = 8 << 20;
const CHUNK: usize = 1 << 20;
/// The memory copy: each buffer 64 MiB, copied for this long.
const MEMORY_BYTES: usize = 64 << 20;
const MEMORY_TIME: Duration = Duration::from_millis(250);
/// Round trips measured.
const STATS: usize = 20;
/// The round trip to the target: the stat of a name it does not have.
pub(crate) const LOOKUP: &str = "lookup of a new name";
pub(crate) const CONNECTS: usize = 5;
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Run every null test that applies; what fails is reported in `errors`, never as a number.
pub(crate) fn run<S: Storage>(
    storage: &S,
    endpoint: Option<(String, u16)>,
    nodes: Option<&KnownNodes>,
    run_id: &str,
) -> NullTests {
    let mut out = NullTests::default();
    let tmp = std::env::temp_dir().join(format!("dfsbench-null-{run_id}"));
    match local_disk(&tmp) {
        Ok(b) => out.local_disk = Some(b),
        Err(e) => out.errors.push(format!("local disk in {}: {e}", tmp.display())),
    }
    let _ = std::fs::remove_file(&tmp);
    out.memory_copy = Some(memory_copy());
    if let Some((host, port)) = endpoint {
        match connect_times(&host, port) {
            Ok(c) => out.connect = Some(c),
            Err(e) => out.errors.push(format!("TCP connect to {host}:{port}: {e}")),
        }
    }
    if let Some(known) = nodes {
        out.nodes = nodes::measure(known, &mut out.errors);
    }
    match Executor::for_backend(storage.capabilities()).block_on(target_tests(storage)) {
        Ok((rtt, bw)) => {
            out.round_trip = Some(rtt);
            out.bandwidth = Some(bw);
        }
        Err(e) => out.errors.push(format!("target: {e}")),
    }
    out
}

fn per_sec(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64().max(1e-9)
}

/// Copy a buffer larger than the CPU's caches into another until a quarter of a second has
/// passed (after one unmeasured copy that maps the pages).
fn memory_copy() -> NodeBandwidth {
    let mut src = vec![0u8; MEMORY_BYTES];
    rand::thread_rng().fill_bytes(&mut src);
    let mut dst = vec![0u8; MEMORY_BYTES];
    dst.copy_from_slice(&src);
    let (start, mut copies) = (Instant::now(), 0u64);
    while copies == 0 || start.elapsed() < MEMORY_TIME {
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&mut dst);
        copies += 1;
    }
    let bytes = copies * MEMORY_BYTES as u64;
    NodeBandwidth {
        bytes,
        bytes_per_sec: per_sec(bytes, start.elapsed()),
    }
}

fn local_disk(path: &Path) -> std::io::Result<Bandwidth> {
    let mut chunk = vec![0u8; CHUNK];
    rand::thread_rng().fill_bytes(&mut chunk);
    let start = Instant::now();
    let mut f = std::fs::File::create(path)?;
    for _ in 0..LOCAL_BYTES / CHUNK {
        f.write_all(&chunk)?;
    }
    f.sync_all()?;
    let write = start.elapsed();
    // Drop the file's cached pages so the read comes from the device (tmpfs keeps them).
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    drop(f);
    let start = Instant::now();
    let mut f = std::fs::File::open(path)?;
    let mut total = 0;
    loop {
        let n = f.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        total += n;
    }
    let read = start.elapsed();
    Ok(Bandwidth {
        bytes: LOCAL_BYTES as u64,
        write_bytes_per_sec: per_sec(LOCAL_BYTES as u64, write),
        read_bytes_per_sec: per_sec(total as u64, read),
        cached_read_bytes_per_sec: None,
    })
}

pub(crate) fn connect_times(host: &str, port: u16) -> std::io::Result<RoundTrips> {
    let addr = (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other("the name resolves to no address"))?;
    let mut times = Vec::with_capacity(CONNECTS);
    for _ in 0..CONNECTS {
        let start = Instant::now();
        let s = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)?;
        times.push(start.elapsed());
        drop(s);
    }
    Ok(round_trips("tcp connect", &mut times))
}

/// Stat round trips and one blob written and read, in `null-tests/` of the run directory.
async fn target_tests<S: Storage>(storage: &S) -> Result<(RoundTrips, Bandwidth), String> {
    let mut c = storage.client(0, 1).map_err(|e| format!("cannot open a client: {e}"))?;
    let dir = "null-tests";
    let blob = "null-tests/blob";
    if storage.capabilities().directories {
        c.mkdir(dir).await.map_err(|e| format!("mkdir {dir}: {e}"))?;
    }
    let data = SharedData::new(CHUNK, |b| rand::thread_rng().fill_bytes(b));
    let mut buf = AlignedBuf::new(CHUNK);
    let opts = FileOpts::default();
    let start = Instant::now();
    c.write_file(blob, BLOB_BYTES, opts, Source::Repeat(&data))
        .await
        .map_err(|e| format!("write {blob}: {e}"))?;
    let write = start.elapsed();
    // First what the storage delivers, then the same read from whatever the client cached:
    // read phases are judged against both.
    if storage.capabilities().page_cache {
        c.invalidate(blob)
            .await
            .map_err(|e| format!("invalidate {blob}: {e}"))?;
    }
    let start = Instant::now();
    let read = c
        .read_file(blob, opts, &mut buf, None)
        .await
        .map_err(|e| format!("read {blob}: {e}"))?;
    let read_time = start.elapsed();
    let start = Instant::now();
    let cached = c
        .read_file(blob, opts, &mut buf, None)
        .await
        .map_err(|e| format!("read {blob} again: {e}"))?;
    let cached_time = start.elapsed();
    // A name looked up for the first time: a client's attribute cache (FUSE's, after the
    // blob's own stat) cannot answer it, the servers must.
    let mut times = Vec::with_capacity(STATS);
    for i in 0..STATS {
        let name = format!("{dir}/absent-{i}");
        let start = Instant::now();
        match c.stat(&name).await {
            Ok(_) => {}
            Err(e) if e.kind == "ENOENT" => {}
            Err(e) => return Err(format!("stat {name}: {e}")),
        }
        times.push(start.elapsed());
    }
    c.delete(blob).await.map_err(|e| format!("delete {blob}: {e}"))?;
    if storage.capabilities().directories {
        c.rmdir(dir).await.map_err(|e| format!("rmdir {dir}: {e}"))?;
    }
    Ok((
        round_trips(LOOKUP, &mut times),
        Bandwidth {
            bytes: BLOB_BYTES,
            write_bytes_per_sec: per_sec(BLOB_BYTES, write),
            read_bytes_per_sec: per_sec(read.bytes, read_time),
            cached_read_bytes_per_sec: Some(per_sec(cached.bytes, cached_time)),
        },
    ))
}

/// The spread of measured round trips of `op`.
pub(crate) fn round_trips(op: &str, times: &mut [Duration]) -> RoundTrips {
    times.sort();
    let ns = |d: Duration| d.as_nanos() as u64;
    RoundTrips {
        op: op.into(),
        count: times.len(),
        min_ns: ns(times[0]),
        median_ns: ns(times[times.len() / 2]),
        max_ns: ns(times[times.len() - 1]),
    }
}
